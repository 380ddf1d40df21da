//! The associative memory's pages: the memories newest first (all, or of one context), the
//! contexts with their counts, the slots with the memory holding each, a recall box that shows
//! each factor of the score, a forget that shows exactly what it removes before it does, and
//! the sources with their last run and error. Every list is a bounded page.

use axum::extract::{Form, Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;
use moss_client::memory::{
    MemoryForgetRequest, MemoryRecallRequest, MemorySourcesRequest, SourceStatus,
};
use serde::Deserialize;

use super::pages::{crumbs, seg, when};
use super::{Viewer, page, problem};
use crate::app::AppState;
use crate::memory::interface;
use crate::ui::session::Sessions;

/// Memories per page of the list.
const PAGE: i64 = 50;
/// Contexts, and slots, per page.
const NAMES: i64 = 50;
/// Source runs listed.
const SOURCES: usize = 50;

#[derive(Deserialize, Default)]
pub struct RecallQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    context: String,
    #[serde(default)]
    slot: String,
    /// The list's context filter (browsing, not a recall).
    #[serde(default)]
    ctx: String,
    /// The list's page: memories written before this sequence.
    #[serde(default)]
    cursor: Option<i64>,
    /// The contexts' page: contexts after this one.
    #[serde(default)]
    contexts_after: String,
    /// The slots' page: slots after this one.
    #[serde(default)]
    slots_after: String,
}

/// A count, `1000+` past its cap.
fn count(c: &interface::Counted) -> String {
    if c.more {
        format!("{}+", c.count)
    } else {
        c.count.to_string()
    }
}

/// `/ui/w/{ws}/memories`: a recall with `explain`, or the memories newest first (all, or of one
/// context); the workspace's contexts with their counts, its slots with their holders, and the
/// sources with their last run and error.
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
    let norm = match crate::memory::workspace(Some(&ws)) {
        Ok(w) => w,
        Err(e) => return problem(e),
    };
    let filter = given(&q.ctx);
    let (list_ctx, cursor) = (filter.clone(), q.cursor);
    let (contexts_after, slots_after) = (given(&q.contexts_after), given(&q.slots_after));
    let skip_list = asked;
    let read = app
        .store
        .readers
        .run_db(move |db| {
            let list = if skip_list {
                None
            } else {
                Some(interface::list(
                    db,
                    &norm,
                    list_ctx.as_deref(),
                    cursor,
                    PAGE,
                )?)
            };
            let contexts = interface::contexts(db, &norm, contexts_after.as_deref(), NAMES)?;
            let slots = interface::slots(db, &norm, slots_after.as_deref(), NAMES)?;
            Ok((list, contexts, slots))
        })
        .await;
    let (list, contexts, slots) = match read {
        Ok(r) => r,
        Err(e) => return problem(e),
    };
    let runs = app.memories.source_runs(&ws, SOURCES);
    // The sources of every workspace that have not run for this one yet.
    let never: Vec<SourceStatus> = app
        .memories
        .sources(MemorySourcesRequest {
            workspace: Some(ws.clone()),
            root: None,
        })
        .await
        .map(|s| s.sources)
        .unwrap_or_default()
        .into_iter()
        .filter(|s| s.last_run_at.is_none())
        .collect();
    let base = format!("/ui/w/{}/memories", seg(&ws));
    // This page's address with one of its browsing parameters changed.
    let here =
        |ctx: Option<&str>, cursor: Option<i64>, cafter: Option<&str>, safter: Option<&str>| {
            let mut parts = Vec::new();
            if let Some(c) = ctx {
                parts.push(format!("ctx={}", seg(c)));
            }
            if let Some(c) = cursor {
                parts.push(format!("cursor={c}"));
            }
            if let Some(a) = cafter {
                parts.push(format!("contexts_after={}", seg(a)));
            }
            if let Some(a) = safter {
                parts.push(format!("slots_after={}", seg(a)));
            }
            if parts.is_empty() {
                base.clone()
            } else {
                format!("{base}?{}", parts.join("&"))
            }
        };
    let forget = |id: &str| format!("/ui/w/{}/memories/forget?id={}", seg(&ws), seg(id));
    let ctx = filter.as_deref();
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
                table.recall {
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
            }
            @if let Some(list) = &list {
                @if let Some(c) = ctx {
                    h2 { "In context " code { (c) } }
                    p { a href=(here(None, None, None, None)) { "All memories" } }
                } @else {
                    h2 { "Newest" }
                }
                @if list.items.is_empty() { p { "No memory here." } }
                table.memories {
                    thead { tr { th { "memory" } th { "contexts" } th { "slot" } th { "weight" } th { "updated" } th {} } }
                    tbody {
                        @for m in &list.items {
                            tr {
                                td { (m.content) }
                                td { (m.contexts.join(", ")) }
                                td { (m.slot.clone().unwrap_or_default()) }
                                td.num { (format!("{:.2}", m.weight)) }
                                td { (when(m.updated_at)) }
                                td { a href=(forget(&m.id)) { "Forget…" } }
                            }
                        }
                    }
                }
                p.pages {
                    @if cursor.is_some() { a href=(here(ctx, None, None, None)) { "Newest" } " " }
                    @if let Some(next) = list.next_cursor { a href=(here(ctx, Some(next), None, None)) { "Older" } }
                }
            }
            h2 { "Contexts" }
            @if contexts.items.is_empty() { p { "No context has a memory." } }
            @else {
                table.contexts {
                    thead { tr { th { "context" } th { "memories" } } }
                    tbody {
                        @for c in &contexts.items {
                            tr.here[ctx.is_some_and(|x| crate::memory::norm_context(x) == c.name)] {
                                td { a href=(here(Some(&c.name), None, None, None)) { (c.name) } }
                                td.num { (count(c)) }
                            }
                        }
                    }
                }
            }
            p.pages {
                @if given(&q.contexts_after).is_some() { a href=(here(ctx, None, None, None)) { "First contexts" } " " }
                @if let Some(next) = &contexts.next_after { a href=(here(ctx, None, Some(next), None)) { "More contexts" } }
            }
            h2 { "Slots" }
            @if slots.items.is_empty() { p { "No memory occupies a slot." } }
            @else {
                table.slots {
                    thead { tr { th { "slot" } th { "memories" } th { "held by" } th { "weight" } th { "updated" } } }
                    tbody {
                        @for s in &slots.items {
                            tr {
                                td { a href={ (base) "?slot=" (seg(&s.slot.name)) } { (s.slot.name) } }
                                td.num { (count(&s.slot)) }
                                td { (s.holder.content) }
                                td.num { (format!("{:.2}", s.holder.weight)) }
                                td { (when(s.holder.updated_at)) }
                            }
                        }
                    }
                }
            }
            p.pages {
                @if given(&q.slots_after).is_some() { a href=(here(ctx, None, None, None)) { "First slots" } " " }
                @if let Some(next) = &slots.next_after { a href=(here(ctx, None, None, Some(next))) { "More slots" } }
            }
            h2 { "Sources" }
            @if runs.is_empty() && never.is_empty() { p { "No Lua source is installed or has run for this workspace." } }
            @else {
                table.sources {
                    thead { tr { th { "source" } th { "project" } th { "status" } th { "last run" } th { "took" } th { "memories" } th { "error" } } }
                    tbody {
                        @for s in runs.iter().chain(never.iter()) {
                            tr {
                                td { (s.name) }
                                td { (s.root.clone().unwrap_or_default()) }
                                td { (s.status) }
                                td { (s.last_run_at.map(when).unwrap_or_else(|| "never".into())) }
                                td.num { (s.duration_ms.map(|d| format!("{d} ms")).unwrap_or_default()) }
                                td.num { (s.items) }
                                td.error { (s.error.clone().unwrap_or_default()) }
                            }
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
