//! The associative memory's pages: the newest memories, a recall box that shows each factor
//! of the score, a forget that shows exactly what it removes before it does, and the sources.

use axum::extract::{Form, Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;
use moss_client::memory::{MemoryForgetRequest, MemoryRecallRequest, MemorySourcesRequest};
use serde::Deserialize;

use super::pages::{crumbs, seg, when};
use super::{Viewer, page, problem};
use crate::app::AppState;
use crate::ui::session::Sessions;

/// Memories listed when no recall is asked.
const NEWEST: i64 = 50;

#[derive(Deserialize, Default)]
pub struct RecallQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    context: String,
    #[serde(default)]
    slot: String,
}

/// `/ui/w/{ws}/memories`: the newest memories, or a recall with `explain`.
pub async fn memories(
    _v: Viewer,
    State(app): State<AppState>,
    Path(ws): Path<String>,
    Query(q): Query<RecallQuery>,
) -> Response {
    let given = |s: &str| Some(s.trim().to_string()).filter(|s| !s.is_empty());
    let asked = given(&q.q).is_some() || given(&q.context).is_some() || given(&q.slot).is_some();
    let recalled = if asked {
        let req = MemoryRecallRequest {
            query: given(&q.q),
            context: given(&q.context),
            slot: given(&q.slot),
            workspace: Some(ws.clone()),
            explain: Some(true),
            limit: Some(20),
            ..Default::default()
        };
        match crate::moss::memory_recall(&app, req).await {
            Ok(r) => Some(r),
            Err(e) => return problem(e),
        }
    } else {
        None
    };
    let w = ws.clone();
    let newest = if asked {
        Vec::new()
    } else {
        match app
            .store
            .readers
            .run(move |conn| crate::memory::interface::recent(conn, &w, NEWEST))
            .await
        {
            Ok(n) => n,
            Err(e) => return problem(e),
        }
    };
    let sources = app
        .memories
        .sources(MemorySourcesRequest {
            workspace: Some(ws.clone()),
            root: None,
        })
        .await
        .map(|s| s.sources)
        .unwrap_or_default();
    let forget = |id: &str| format!("/ui/w/{}/memories/forget?id={}", seg(&ws), seg(id));
    page(
        StatusCode::OK,
        &format!("{ws}: memories"),
        html! {
            (crumbs(&ws, "memories"))
            h1 { "Memories of " (ws) }
            form.filters method="get" {
                label { "recall " input name="q" value=(q.q) placeholder="words"; }
                label { "context " input name="context" value=(q.context) placeholder="a path or TASK-001"; }
                label { "slot " input name="slot" value=(q.slot); }
                button type="submit" { "Recall" }
            }
            @if let Some(r) = &recalled {
                @if let Some(hint) = &r.hint { p.hint { (hint) } }
                @if let Some(reason) = &r.reason { p.hint { (reason) } }
                table {
                    thead { tr { th { "memory" } th { "contexts" } th { "slot" } th { "score" } th { "relevance" } th { "weight" } th { "recency" } th { "specificity" } th {} } }
                    tbody {
                        @for m in &r.items {
                            tr {
                                td { (m.memory.content) }
                                td { (m.memory.contexts.join(", ")) }
                                td { (m.memory.slot.clone().unwrap_or_default()) }
                                td.num { (format!("{:.3}", m.score)) }
                                @if let Some(x) = &m.explain {
                                    td.num { (format!("{:.3}", x.relevance)) }
                                    td.num { (format!("{:.3}", x.weight)) }
                                    td.num { (format!("{:.3}", x.recency)) }
                                    td.num { (format!("{:.3}", x.specificity)) }
                                } @else { td {} td {} td {} td {} }
                                td { a href=(forget(&m.memory.id)) { "Forget…" } }
                            }
                        }
                    }
                }
            } @else {
                h2 { "Newest" }
                @if newest.is_empty() { p { "No memory in this workspace." } }
                table {
                    thead { tr { th { "memory" } th { "slot" } th { "updated" } th {} } }
                    tbody {
                        @for (_, m) in &newest {
                            tr {
                                td { (m.text.clone().unwrap_or_default()) }
                                td { (m.open.arguments.get("slot").and_then(|s| s.as_str()).unwrap_or_default()) }
                                td { (m.updated_at.clone().unwrap_or_default()) }
                                td { a href=(forget(&m.id)) { "Forget…" } }
                            }
                        }
                    }
                }
            }
            h2 { "Sources" }
            @if sources.is_empty() { p { "No Lua source has run for this workspace." } }
            table {
                @if !sources.is_empty() {
                    thead { tr { th { "source" } th { "status" } th { "last run" } th { "memories" } th { "error" } } }
                }
                tbody {
                    @for s in &sources {
                        tr {
                            td { (s.name) }
                            td { (s.status) }
                            td { (s.last_run_at.map(when).unwrap_or_default()) }
                            td.num { (s.items) }
                            td.error { (s.error.clone().unwrap_or_default()) }
                        }
                    }
                }
            }
        },
    )
}

#[derive(Deserialize)]
pub struct ForgetQuery {
    #[serde(default)]
    id: String,
}

/// The forget a page offers: one memory of the workspace, by id.
fn forget_req(ws: &str, id: &str, dry_run: bool) -> MemoryForgetRequest {
    MemoryForgetRequest {
        id: Some(id.to_string()),
        workspace: Some(ws.to_string()),
        dry_run: Some(dry_run),
        ..Default::default()
    }
}

/// `/ui/w/{ws}/memories/forget?id=…`: what the forget would remove (a dry run), and the form
/// that does it.
pub async fn forget_preview(
    Viewer(session): Viewer,
    State(app): State<AppState>,
    Path(ws): Path<String>,
    Query(q): Query<ForgetQuery>,
) -> Response {
    let preview = match app.memories.forget(forget_req(&ws, &q.id, true)).await {
        Ok(p) => p,
        Err(e) => return problem(e),
    };
    page(
        StatusCode::OK,
        "Forget",
        html! {
            (crumbs(&ws, "memories"))
            h1 { "Forget" }
            @if preview.removed.is_empty() {
                p { "Nothing matches: no memory " code { (q.id) } " in " (ws) "." }
            } @else {
                p { "This removes exactly:" }
                ul.preview { @for m in &preview.removed { li {
                    (m.content) " " span.meta { (m.contexts.join(", ")) @if let Some(s) = &m.slot { " · slot " (s) } }
                } } }
                form method="post" action={ "/ui/w/" (seg(&ws)) "/memories/forget" } {
                    input type="hidden" name="csrf" value=(session.csrf);
                    input type="hidden" name="id" value=(q.id);
                    button.danger type="submit" { "Forget " (preview.count) " memory" }
                    " " a href={ "/ui/w/" (seg(&ws)) "/memories" } { "Cancel" }
                }
            }
        },
    )
}

#[derive(Deserialize)]
pub struct ForgetForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    id: String,
}

/// `POST /ui/w/{ws}/memories/forget`: memory_forget of the one memory previewed.
pub async fn forget(
    Viewer(session): Viewer,
    State(app): State<AppState>,
    Path(ws): Path<String>,
    Form(form): Form<ForgetForm>,
) -> Response {
    if !Sessions::csrf_ok(&session, &form.csrf) {
        return super::pages::refused();
    }
    match app.memories.forget(forget_req(&ws, &form.id, false)).await {
        Ok(done) => page(
            StatusCode::OK,
            "Forgotten",
            html! {
                (crumbs(&ws, "memories"))
                h1 { "Forgotten" }
                p { (done.count) " memory removed." }
                p { a href={ "/ui/w/" (seg(&ws)) "/memories" } { "Back to the memories" } }
            },
        ),
        Err(e) => problem(e),
    }
}
