//! The plans and tasks pages: a workspace's list, and a task with its radar, its steps as a
//! tree with their checkpoints, its trace as a timeline and its notes.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;
use moss_client::reasoning::ShowRequest;
use moss_client::tasks::{TasksContextRequest, TasksRadarRequest};
use serde::Deserialize;

use super::pages::{seg, when_ms};
use super::{Viewer, page, problem};
use crate::app::AppState;

/// Plans and tasks per page.
const PAGE: i64 = 50;
/// Trace events and notes shown on a task's page (the newest).
const RECENT: i64 = 30;

#[derive(Deserialize, Default)]
pub struct ListQuery {
    #[serde(default)]
    cursor: Option<i64>,
}

/// `/ui/w/{ws}/tasks`: the workspace's plans and tasks, newest first.
pub async fn list(
    _v: Viewer,
    State(app): State<AppState>,
    Path(ws): Path<String>,
    Query(q): Query<ListQuery>,
) -> Response {
    let req = TasksContextRequest {
        workspace: ws.clone(),
        cursor: q.cursor,
        limit: Some(PAGE),
        ..Default::default()
    };
    let ctx = match crate::moss::tasks_context(&app, req).await {
        Ok(c) => c,
        Err(e) => return problem(e),
    };
    page(
        StatusCode::OK,
        &format!("{ws}: tasks"),
        html! {
            (super::pages::crumbs(&ws, "tasks"))
            h1 { "Plans and tasks of " (ws) }
            @if let Some(f) = &ctx.focus { p { "Focus: " a href={ "/ui/w/" (seg(&ws)) "/tasks/" (seg(f)) } { (f) } } }
            @if let Some(hint) = &ctx.hint { p.hint { (hint) } }
            table {
                thead { tr { th { "id" } th { "title" } th { "parent" } th { "status" } th { "steps done" } th { "updated" } } }
                tbody {
                    @for t in &ctx.items {
                        tr {
                            td { a href={ "/ui/w/" (seg(&ws)) "/tasks/" (seg(&t.id)) } { (t.id) } }
                            td { (t.title) }
                            td { (t.parent.clone().unwrap_or_default()) }
                            td { (t.status) }
                            td.num { (t.steps_done) " / " (t.steps_total) }
                            td { (when_ms(t.updated_at_ms)) }
                        }
                    }
                }
            }
            @if let Some(next) = ctx.pagination.next_cursor {
                p.pages { a href={ "?cursor=" (next) } { "Older" } }
            }
        },
    )
}

/// `/ui/w/{ws}/tasks/{id}`: one plan or task.
pub async fn task(
    _v: Viewer,
    State(app): State<AppState>,
    Path((ws, id)): Path<(String, String)>,
) -> Response {
    let radar = match app
        .tasks
        .radar(TasksRadarRequest {
            workspace: ws.clone(),
            task: Some(id.clone()),
            ..Default::default()
        })
        .await
    {
        Ok(r) => r,
        Err(e) => return problem(e),
    };
    let (ws_norm, task_id) = (radar.workspace.clone(), radar.target.id.clone());
    let steps = match app
        .store
        .readers
        .run_db(move |db| crate::tasks::interface::steps(db, &ws_norm, &task_id))
        .await
    {
        Ok(s) => s,
        Err(e) => return problem(e),
    };
    let doc = |kind: &str| ShowRequest {
        workspace: ws.clone(),
        target: Some(radar.target.id.clone()),
        doc_kind: Some(kind.into()),
        limit: Some(RECENT),
        ..Default::default()
    };
    let trace = app
        .reasoning
        .show(doc("trace"))
        .await
        .map(|r| r.entries)
        .unwrap_or_default();
    let notes = app
        .reasoning
        .show(doc("notes"))
        .await
        .map(|r| r.entries)
        .unwrap_or_default();
    let t = &radar.target;
    page(
        StatusCode::OK,
        &format!("{} {}", t.id, t.title),
        html! {
            (super::pages::crumbs(&ws, "tasks"))
            h1 { (t.id) " · " (t.title) " " span.badge { (t.status) } }
            @if let Some(d) = &t.description { p { (d) } }
            p {
                a href={ "/ui/w/" (seg(&ws)) "/graph?target=" (seg(&t.id)) } { "Its reasoning graph" }
                @if let Some(parent) = &t.parent {
                    " · part of " a href={ "/ui/w/" (seg(&ws)) "/tasks/" (seg(parent)) } { (parent) }
                }
            }
            h2 { "Radar" }
            dl.facts {
                dt { "now" } dd { (radar.radar.now) }
                dt { "why" } dd { (radar.radar.why) }
                dt { "verify" } dd { @for v in &radar.radar.verify { div { (v) } } }
                dt { "next" } dd { @for v in &radar.radar.next { div { (v) } } }
                dt { "blockers" } dd { @if radar.radar.blockers.is_empty() { "none" } @for b in &radar.radar.blockers { div { (b) } } }
                dt { "steps" } dd { (radar.steps.done) " done, " (radar.steps.open) " open of " (radar.steps.total) }
                dt { "memories" } dd { (radar.memories) " on its id" }
            }
            @if !radar.handoffs.is_empty() {
                h2 { "Handoffs" }
                ul { @for h in &radar.handoffs { li {
                    a href={ "/ui/w/" (seg(&ws)) "/capsules/" (seg(&h.id)) } { (h.name.clone().unwrap_or_else(|| h.id.clone())) }
                    " revision " (h.revision)
                } } }
            }
            h2 { "Steps" }
            @if steps.is_empty() { p { "No steps yet." } }
            ul.steps {
                @for s in &steps {
                    li.step data-depth=(s.path.matches('.').count().min(6)) {
                        span.check { @if s.status == "done" { "☑" } @else { "☐" } }
                        " " code { (s.path) } " " (s.title)
                        " " span.meta {
                            "criteria " @if s.criteria_confirmed { "confirmed" } @else { "open" }
                            ", tests " @if s.tests_confirmed { "confirmed" } @else { "open" }
                        }
                        @if !s.blockers.is_empty() { div.error { "blocked: " (s.blockers.join("; ")) } }
                    }
                }
            }
            h2 { "Trace" }
            @if trace.is_empty() { p { "No events yet." } }
            ol.timeline {
                @for e in &trace {
                    li {
                        span.meta { (when_ms(e.ts_ms)) " · " (e.event_type.clone().unwrap_or_else(|| e.kind.clone())) }
                        " " (e.title.clone().or(e.content.clone()).unwrap_or_default())
                    }
                }
            }
            h2 { "Notes" }
            @if notes.is_empty() { p { "No notes yet." } }
            @for n in &notes {
                div.note {
                    div.meta { (when_ms(n.ts_ms)) @if let Some(t) = &n.title { " · " (t) } }
                    p { (n.content.clone().unwrap_or_default()) }
                }
            }
        },
    )
}
