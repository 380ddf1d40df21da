//! The pages: workspaces, search across families, capsules. Each reads through the same domain
//! functions as the tools, and every list is a page of a bounded size.

use axum::extract::{Form, Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, PreEscaped, html};
use moss_client::capsule::{
    DeleteRequest, DiffRef, DiffRequest, FetchRequest, LineageNode, LineageRequest, ListRequest,
    RestoreRequest, RunIds, SectionState, VersionsRequest,
};
use serde::Deserialize;

use super::{Viewer, page, problem, redirect};
use crate::app::AppState;
use crate::ui::session::Sessions;

/// Capsules per page of the list.
const PAGE: i64 = 50;

/// Unix seconds as `2026-11-26 05:33 UTC`.
pub fn when(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_default()
}

/// Unix milliseconds as [`when`] does seconds.
pub fn when_ms(ms: i64) -> String {
    when(ms.div_euclid(1000))
}

/// The breadcrumbs and the workspace's tabs, `here` marked.
pub fn crumbs(ws: &str, here: &str) -> Markup {
    html! {
        nav.crumbs {
            a href="/ui/" { "Workspaces" } " / " strong { (ws) } " · "
            @for (tab, label) in [("capsules", "Capsules"), ("tasks", "Tasks"), ("graph", "Graph"), ("memories", "Memories"), ("timeline", "Timeline")] {
                @if tab == here { span.tab.here { (label) } } @else {
                    a.tab href={ "/ui/w/" (seg(ws)) "/" (tab) } { (label) }
                }
                " "
            }
        }
    }
}

/// Undoes the HTML escapes a snippet's text may carry, so that escaping it once more shows it
/// as written.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

/// A search snippet: its text escaped, its `<b>…</b>` matches as `<mark>`.
fn snippet(s: &str) -> Markup {
    html! {
        @for (i, part) in s.split("<b>").enumerate() {
            @if i == 0 {
                (unescape(part))
            } @else {
                @match part.split_once("</b>") {
                    Some((hit, rest)) => { mark { (unescape(hit)) } (unescape(rest)) }
                    None => (unescape(part)),
                }
            }
        }
    }
}

/// A path segment, percent-encoded.
pub fn seg(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `/ui/`: every workspace with its counts per family.
pub async fn home(_v: Viewer, State(app): State<AppState>) -> Response {
    let ws = match crate::moss::workspaces(&app, Default::default()).await {
        Ok(ws) => ws,
        Err(e) => return problem(e),
    };
    page(
        StatusCode::OK,
        "Workspaces",
        html! {
            h1 { "Workspaces" }
            @if ws.items.is_empty() {
                p { "Nothing is remembered yet. Agents fill Moss through its tools; see the README." }
            } @else {
                table {
                    thead { tr { th { "workspace" } th { "capsules" } th { "reasoning" } th { "tasks" } th { "memories" } th { "last activity" } } }
                    tbody {
                        @for w in &ws.items {
                            tr {
                                td { a href={ "/ui/w/" (seg(&w.workspace)) "/capsules" } { (w.workspace) } }
                                td.num { (w.counts.capsules) }
                                td.num { (w.counts.reasoning) }
                                td.num { (w.counts.tasks) }
                                td.num { (w.counts.memories) }
                                td { (w.last_activity.clone().unwrap_or_default()) }
                            }
                        }
                    }
                }
            }
        },
    )
}

#[derive(Deserialize)]
pub struct SearchQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    workspace: Option<String>,
    #[serde(default)]
    cursor: Option<String>,
}

/// `/ui/search?q=…`: one ranked list over every family (moss_search, plain words).
pub async fn search(
    _v: Viewer,
    State(app): State<AppState>,
    Query(q): Query<SearchQuery>,
) -> Response {
    let query = q.q.trim().to_string();
    if query.is_empty() {
        return redirect("/ui/");
    }
    let workspace = q.workspace.filter(|w| !w.trim().is_empty());
    let req = moss_client::moss::SearchRequest {
        query: query.clone(),
        workspace: workspace.clone(),
        cursor: q.cursor,
        limit: Some(20),
        safe_query: Some(true),
        ..Default::default()
    };
    let found = match crate::moss::search::search(&app, req).await {
        Ok(f) => f,
        Err(e) => return problem(e),
    };
    page(
        StatusCode::OK,
        &format!("Search: {query}"),
        html! {
            h1 { "Search: " (query) }
            @if let Some(w) = &workspace { p { "in workspace " strong { (w) } } }
            @if let Some(hint) = &found.hint { p.hint { (hint) } }
            @if found.items.is_empty() {
                p { "No match in any family." }
            }
            ol.hits {
                @for h in &found.items {
                    li {
                        span.family { (h.family) " · " (h.kind) }
                        " "
                        @if h.family == "capsule" {
                            a href={ "/ui/w/" (seg(&h.workspace)) "/capsules/" (seg(&h.id)) } { (h.title) }
                        } @else {
                            strong { (h.title) }
                        }
                        " "
                        span.meta { (h.workspace) " · " (h.id) " · score " (format!("{:.3}", h.score)) }
                        p.snippet { (snippet(&h.snippet)) }
                    }
                }
            }
            @if let Some(next) = &found.pagination.next_cursor {
                p {
                    a href={ "/ui/search?q=" (seg(&query))
                        @if let Some(w) = &workspace { "&workspace=" (seg(w)) }
                        "&cursor=" (seg(next)) } { "More results" }
                }
            }
        },
    )
}

#[derive(Deserialize, Default)]
pub struct ListQuery {
    #[serde(default)]
    run_id: Option<String>,
    #[serde(default)]
    phase: Option<String>,
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    task: Option<String>,
    #[serde(default)]
    deleted: Option<String>,
    #[serde(default)]
    offset: Option<i64>,
}

/// `/ui/w/{ws}/capsules`: a workspace's capsules, newest first, with filters.
pub async fn capsules(
    _v: Viewer,
    State(app): State<AppState>,
    Path(ws): Path<String>,
    Query(q): Query<ListQuery>,
) -> Response {
    let given = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
    let include_deleted = q.deleted.as_deref() == Some("on");
    let offset = q.offset.unwrap_or(0).max(0);
    let req = ListRequest {
        workspace: Some(ws.clone()),
        limit: Some(PAGE),
        offset: Some(offset),
        include_deleted: Some(include_deleted),
        run_id: given(&q.run_id).map(|r| RunIds::from(r.as_str())),
        phase: given(&q.phase),
        role: given(&q.role),
        task: given(&q.task),
    };
    let list = match crate::moss::capsule_list(&app, req).await {
        Ok(l) => l,
        Err(e) => return problem(e),
    };
    let filters = |offset: i64| {
        let mut s = format!("?offset={offset}");
        for (k, v) in [
            ("run_id", &q.run_id),
            ("phase", &q.phase),
            ("role", &q.role),
            ("task", &q.task),
        ] {
            if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
                s.push_str(&format!("&{k}={}", seg(v)));
            }
        }
        if include_deleted {
            s.push_str("&deleted=on");
        }
        s
    };
    page(
        StatusCode::OK,
        &format!("{ws}: capsules"),
        html! {
            (crumbs(&ws, "capsules"))
            h1 { "Capsules of " (ws) }
            form.filters method="get" {
                label { "run " input name="run_id" value=(q.run_id.clone().unwrap_or_default()); }
                label { "phase " input name="phase" value=(q.phase.clone().unwrap_or_default()); }
                label { "role " input name="role" value=(q.role.clone().unwrap_or_default()); }
                label { "task " input name="task" value=(q.task.clone().unwrap_or_default()); }
                label { input type="checkbox" name="deleted" checked[include_deleted]; " deleted too" }
                button type="submit" { "Filter" }
            }
            @if let Some(hint) = &list.hint { p.hint { (hint) } }
            table {
                thead { tr { th { "name" } th { "title" } th { "run" } th { "phase" } th { "role" } th { "task" } th { "chars" } th { "updated" } } }
                tbody {
                    @for c in &list.items {
                        tr.deleted[c.deleted_at.is_some()] {
                            td { a href={ "/ui/w/" (seg(&ws)) "/capsules/" (seg(&c.id)) } { (c.name.clone().unwrap_or_else(|| c.id.clone())) } }
                            td { (c.title.clone().unwrap_or_default()) }
                            td { (c.run_id.clone().unwrap_or_default()) }
                            td { (c.phase.clone().unwrap_or_default()) }
                            td { (c.role.clone().unwrap_or_default()) }
                            td { (c.task.clone().unwrap_or_default()) }
                            td.num { (c.capsule_chars) }
                            td { (when(c.updated_at)) @if c.deleted_at.is_some() { " (deleted)" } }
                        }
                    }
                }
            }
            p.pages {
                @if offset > 0 { a href={ (filters((offset - PAGE).max(0))) } { "Newer" } " " }
                @if list.pagination.has_more { a href={ (filters(offset + PAGE)) } { "Older" } }
            }
        },
    )
}

/// `/ui/w/{ws}/capsules/{id}`: a capsule, its markdown rendered inert, its versions, and the
/// forms that delete or restore it.
pub async fn capsule(
    Viewer(session): Viewer,
    State(app): State<AppState>,
    Path((ws, id)): Path<(String, String)>,
) -> Response {
    let fetched = app
        .capsules
        .fetch(FetchRequest {
            id: Some(id.clone()),
            include_deleted: Some(true),
            include_text: Some(true),
            ..Default::default()
        })
        .await;
    let c = match fetched {
        Ok(c) => c,
        Err(e) => return problem(e),
    };
    let versions = app
        .capsules
        .versions(VersionsRequest {
            id: Some(id.clone()),
            include_deleted: Some(true),
            ..Default::default()
        })
        .await
        .map(|v| v.versions)
        .unwrap_or_default();
    let lineage = app
        .capsules
        .lineage(LineageRequest {
            id: Some(id.clone()),
            ..Default::default()
        })
        .await
        .ok();
    let node = |n: &LineageNode| {
        let label = n
            .capsule
            .as_ref()
            .and_then(|c| c.name.clone().or(c.title.clone()))
            .or(n.reference.name.clone())
            .or(n.reference.id.clone())
            .unwrap_or_default();
        html! {
            @match &n.capsule {
                Some(c) => a href={ "/ui/w/" (seg(&c.workspace)) "/capsules/" (seg(&c.id)) } { (label) },
                None => span.meta { (label) " (not found)" },
            }
            " " span.meta { "depth " (n.depth) }
        }
    };
    let text = c.capsule_text.clone().unwrap_or_default();
    let title = c
        .title
        .clone()
        .or(c.name.clone())
        .unwrap_or_else(|| c.id.clone());
    let action = |what: &str| format!("/ui/w/{}/capsules/{}/{what}", seg(&ws), seg(&c.id));
    page(
        StatusCode::OK,
        &title,
        html! {
            (crumbs(&ws, "capsules"))
            h1 { (title) @if c.deleted_at.is_some() { " " span.badge { "deleted" } } }
            dl.facts {
                dt { "id" } dd { code { (c.id) } }
                @if let Some(n) = &c.name { dt { "name" } dd { (n) } }
                dt { "revision" } dd { (c.revision) }
                dt { "updated" } dd { (when(c.updated_at)) }
                @if let Some(v) = &c.run_id { dt { "run" } dd { (v) } }
                @if let Some(v) = &c.phase { dt { "phase" } dd { (v) } }
                @if let Some(v) = &c.role { dt { "role" } dd { (v) } }
                @if let Some(v) = &c.task { dt { "task" } dd { (v) } }
                @if let Some(v) = &c.source { dt { "source" } dd { (v) } }
                @if let Some(tags) = &c.tags { dt { "tags" } dd { (tags.join(", ")) } }
                dt { "size" } dd { (c.capsule_chars) " chars, ~" (c.tokens_estimate) " tokens" }
            }
            article.capsule { (PreEscaped(super::markdown::to_html(&text))) }
            @if let Some(l) = &lineage {
                @if !l.based_on.is_empty() || !l.derived.is_empty() {
                    h2 { "Lineage" }
                    @if !l.based_on.is_empty() { p { "Based on:" } ul { @for n in &l.based_on { li { (node(n)) } } } }
                    @if !l.derived.is_empty() { p { "Derived from it:" } ul { @for n in &l.derived { li { (node(n)) } } } }
                }
            }
            @if let Some(ev) = &c.evidence {
                @if !ev.is_empty() {
                    h2 { "Evidence" }
                    ul { @for e in ev { li { span.badge { (e.kind) } " " code { (e.reference) } " " span.meta { (e.chars) " chars" } } } }
                }
            }
            h2 { "Versions" }
            @if versions.is_empty() { p { "No earlier revision is kept." } }
            @else {
                table {
                    thead { tr { th { "revision" } th { "title" } th { "chars" } th { "saved" } th {} } }
                    tbody { @for v in &versions { tr {
                        td.num { (v.revision) } td { (v.title.clone().unwrap_or_default()) }
                        td.num { (v.capsule_chars) } td { (when(v.updated_at)) }
                        td { a href={ "/ui/w/" (seg(&ws)) "/capsules/" (seg(&c.id)) "/diff?version=" (v.version) } { "diff with now" } }
                    } } }
                }
            }
            h2 { "Tidy" }
            @if c.deleted_at.is_none() {
                form method="post" action=(action("delete")) {
                    input type="hidden" name="csrf" value=(session.csrf);
                    button.danger type="submit" { "Soft-delete this capsule" }
                    " It stays restorable until purged."
                }
            } @else {
                form method="post" action=(action("restore")) {
                    input type="hidden" name="csrf" value=(session.csrf);
                    button type="submit" { "Restore this capsule" }
                }
            }
        },
    )
}

/// A unified diff, its added lines marked `add` and its removed ones `del`.
pub fn diff_block(text: &str) -> Markup {
    html! {
        pre.diff { @for line in text.lines() {
            @if line.starts_with('+') { span.add { (line) } } @else if line.starts_with('-') { span.del { (line) } } @else { (line) }
            "\n"
        } }
    }
}

#[derive(Deserialize)]
pub struct DiffQuery {
    version: i64,
}

/// `/ui/w/{ws}/capsules/{id}/diff?version=N`: capsule_diff of version N against now, section by
/// section, with a unified diff of each modified one.
pub async fn diff(
    _v: Viewer,
    State(app): State<AppState>,
    Path((ws, id)): Path<(String, String)>,
    Query(q): Query<DiffQuery>,
) -> Response {
    let side = |version: Option<i64>| DiffRef {
        id: Some(id.clone()),
        version,
        ..Default::default()
    };
    let d = match app
        .capsules
        .diff(DiffRequest {
            a: side(Some(q.version)),
            b: side(None),
            include_diff: Some(true),
        })
        .await
    {
        Ok(d) => d,
        Err(e) => return problem(e),
    };
    let state = |s: &SectionState| match s {
        SectionState::Unchanged => "unchanged",
        SectionState::Modified => "modified",
        SectionState::Added => "added",
        SectionState::RemovedContent => "removed",
    };
    page(
        StatusCode::OK,
        "Diff",
        html! {
            (crumbs(&ws, "capsules"))
            h1 { "Revision " (d.a_revision) " → " (d.b_revision) }
            p { a href={ "/ui/w/" (seg(&ws)) "/capsules/" (seg(&id)) } { "Back to the capsule" } }
            @for name in &d.order {
                @let st = d.sections.get(name);
                h2 { (name) " " span.badge { (st.map(state).unwrap_or("")) } }
                @if let Some(text) = d.diffs.as_ref().and_then(|m| m.get(name)) {
                    (diff_block(text))
                }
            }
        },
    )
}

#[derive(Deserialize)]
pub struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

/// The answer to a form without the session's CSRF token: 403, nothing changed.
pub fn refused() -> Response {
    page(
        StatusCode::FORBIDDEN,
        "Refused",
        html! {
            h1 { "Refused" }
            p.error { "The form did not carry this session's token; nothing was changed. Reload the page and try again." }
        },
    )
}

/// A form's change is allowed when it carries the session's CSRF token.
fn forged(session: &super::Session, form: &CsrfForm) -> Option<Response> {
    (!Sessions::csrf_ok(session, &form.csrf)).then(refused)
}

/// `POST …/delete`: capsule_delete.
pub async fn delete(
    Viewer(session): Viewer,
    State(app): State<AppState>,
    Path((ws, id)): Path<(String, String)>,
    Form(form): Form<CsrfForm>,
) -> Response {
    if let Some(refused) = forged(&session, &form) {
        return refused;
    }
    let req = DeleteRequest {
        id: Some(id.clone()),
        ..Default::default()
    };
    match app.capsules.delete(req).await {
        Ok(_) => redirect(&format!("/ui/w/{}/capsules/{}", seg(&ws), seg(&id))),
        Err(e) => problem(e),
    }
}

/// `POST …/restore`: capsule_restore.
pub async fn restore(
    Viewer(session): Viewer,
    State(app): State<AppState>,
    Path((ws, id)): Path<(String, String)>,
    Form(form): Form<CsrfForm>,
) -> Response {
    if let Some(refused) = forged(&session, &form) {
        return refused;
    }
    let req = RestoreRequest {
        id: Some(id.clone()),
        ..Default::default()
    };
    match app.capsules.restore(req).await {
        Ok(r) => redirect(&format!("/ui/w/{}/capsules/{}", seg(&ws), seg(&r.id))),
        Err(e) => problem(e),
    }
}
