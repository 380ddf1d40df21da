//! The reasoning graph as an SVG drawn on the server: nodes in layers (a node sits one layer
//! right of the deepest node with an edge into it), coloured by type, faded when done or
//! closed; edges labelled by relation. A page holds at most [`PAGE`] nodes, newest first;
//! older ones are on the next page.

use std::collections::HashMap;

use axum::extract::{Form, Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::{Markup, html};
use moss_client::reasoning::{
    BranchListRequest, ConflictResolveRequest, GraphConflictsRequest, GraphEdge, GraphNode,
    GraphQueryRequest, Resolution,
};
use serde::Deserialize;

use super::pages::{crumbs, seg, when_ms};
use super::{Viewer, page, problem};
use crate::app::AppState;

/// Nodes per page.
const PAGE: i64 = 100;
const NODE_W: i64 = 180;
const NODE_H: i64 = 44;
const GAP_X: i64 = 70;
const GAP_Y: i64 = 18;

#[derive(Deserialize, Default)]
pub struct GraphQuery {
    #[serde(default)]
    target: Option<String>,
    #[serde(default)]
    branch: Option<String>,
    #[serde(default)]
    doc: Option<String>,
    #[serde(default)]
    cursor: Option<i64>,
}

/// The fill of a node type.
fn colour(node_type: &str) -> &'static str {
    match node_type {
        "hypothesis" => "#e8f0fb",
        "decision" => "#e3f4e8",
        "question" => "#fff4d6",
        "evidence" | "test" => "#f0eafa",
        "task" | "plan" => "#e6f1f0",
        "step" => "#f4f6f5",
        _ => "#ffffff",
    }
}

/// Each node's layer: one more than the deepest node with an edge into it (edges from nodes
/// not on the page count for nothing). A cycle stops growing after as many rounds as nodes.
pub fn layers(nodes: &[GraphNode], edges: &[GraphEdge]) -> HashMap<String, usize> {
    let mut layer: HashMap<String, usize> = nodes.iter().map(|n| (n.id.clone(), 0)).collect();
    for _ in 0..nodes.len() {
        let mut changed = false;
        for e in edges.iter().filter(|e| !e.deleted) {
            let (Some(&from), Some(&to)) = (layer.get(&e.from), layer.get(&e.to)) else {
                continue;
            };
            if to < from + 1 && from + 1 < nodes.len() {
                layer.insert(e.to.clone(), from + 1);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    layer
}

/// Shortens `s` to `n` characters with an ellipsis.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "…"
    }
}

/// The SVG of `nodes` and the `edges` between them; each node links to `href(node)` (its
/// versions).
pub fn svg(
    nodes: &[GraphNode],
    edges: &[GraphEdge],
    href: impl Fn(&GraphNode) -> String,
) -> Markup {
    let layer = layers(nodes, edges);
    let mut rows: HashMap<usize, i64> = HashMap::new();
    let mut at: HashMap<&str, (i64, i64)> = HashMap::new();
    for n in nodes {
        let l = layer.get(&n.id).copied().unwrap_or(0);
        let row = rows.entry(l).or_insert(0);
        at.insert(
            n.id.as_str(),
            (
                20 + l as i64 * (NODE_W + GAP_X),
                20 + *row * (NODE_H + GAP_Y),
            ),
        );
        *row += 1;
    }
    let width = 40 + (layer.values().max().copied().unwrap_or(0) as i64 + 1) * (NODE_W + GAP_X);
    let height = 40 + rows.values().max().copied().unwrap_or(1) * (NODE_H + GAP_Y);
    html! {
        svg.graph xmlns="http://www.w3.org/2000/svg" width=(width) height=(height) viewBox={ "0 0 " (width) " " (height) } role="img" aria-label="reasoning graph" {
            @for e in edges.iter().filter(|e| !e.deleted) {
                @if let (Some(&(x1, y1)), Some(&(x2, y2))) = (at.get(e.from.as_str()), at.get(e.to.as_str())) {
                    g.edge {
                        line x1=(x1 + NODE_W) y1=(y1 + NODE_H / 2) x2=(x2) y2=(y2 + NODE_H / 2) stroke="#8a9690" stroke-width="1.2" {}
                        text x=((x1 + NODE_W + x2) / 2) y=((y1 + y2) / 2 + NODE_H / 2 - 4) font-size="10" fill="#5b6661" text-anchor="middle" { (e.rel) }
                    }
                }
            }
            @for n in nodes {
                @if let Some(&(x, y)) = at.get(n.id.as_str()) {
                    a href=(href(n)) {
                    g.node data-id=(n.id) data-type=(n.node_type) {
                        title { (n.id) ": " (n.title.clone().unwrap_or_default()) }
                        rect x=(x) y=(y) width=(NODE_W) height=(NODE_H) rx="6" fill=(colour(&n.node_type))
                            stroke=(if n.deleted { "#c9cfcb" } else { "#5b6661" })
                            opacity=(if matches!(n.status.as_deref(), Some("done" | "closed" | "rejected")) { "0.6" } else { "1" }) {}
                        text x=(x + 8) y=(y + 16) font-size="10" fill="#5b6661" { (n.node_type) @if let Some(s) = &n.status { " · " (s) } }
                        text x=(x + 8) y=(y + 33) font-size="12" fill="#1d2321" { (clip(&n.title.clone().unwrap_or_else(|| n.id.clone()), 24)) }
                    }
                    }
                }
            }
        }
    }
}

/// `/ui/w/{ws}/graph?target=…` (or `branch` and `doc`): a page of the graph, the workspace's
/// branches, and the open conflicts of merges into this branch with the forms that resolve them.
pub async fn graph(
    Viewer(session): Viewer,
    State(app): State<AppState>,
    Path(ws): Path<String>,
    Query(q): Query<GraphQuery>,
) -> Response {
    let given = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
    let (target, branch, doc) = (given(&q.target), given(&q.branch), given(&q.doc));
    let (branch, doc) = if target.is_none() && branch.is_none() && doc.is_none() {
        (Some("main".to_string()), Some("graph".to_string()))
    } else {
        (branch, doc)
    };
    let req = GraphQueryRequest {
        workspace: ws.clone(),
        target: target.clone(),
        branch: branch.clone(),
        doc: doc.clone(),
        limit: Some(PAGE),
        cursor: q.cursor,
        edges_limit: Some(1000),
        ..Default::default()
    };
    let g = match app.reasoning.graph_query(req).await {
        Ok(g) => g,
        Err(e) => return problem(e),
    };
    let branches = app
        .reasoning
        .branch_list(BranchListRequest {
            workspace: ws.clone(),
            limit: Some(50),
            ..Default::default()
        })
        .await
        .map(|b| b.branches)
        .unwrap_or_default();
    let conflicts = app
        .reasoning
        .graph_conflicts(GraphConflictsRequest {
            workspace: ws.clone(),
            into: g.branch.clone(),
            doc: Some(g.doc.clone()),
            status: Some("open".into()),
            limit: Some(50),
            ..Default::default()
        })
        .await
        .map(|c| c.conflicts)
        .unwrap_or_default();
    let here = {
        let mut s = String::from("?");
        if let Some(t) = &target {
            s.push_str(&format!("target={}&", seg(t)));
        }
        if let Some(b) = &branch {
            s.push_str(&format!("branch={}&", seg(b)));
        }
        if let Some(d) = &doc {
            s.push_str(&format!("doc={}&", seg(d)));
        }
        s
    };
    let versions = |n: &GraphNode| format!("/ui/w/{}/graph/node{here}id={}", seg(&ws), seg(&n.id));
    page(
        StatusCode::OK,
        &format!("{ws}: graph"),
        html! {
            (crumbs(&ws, "graph"))
            h1 { "Graph " code { (g.branch) " / " (g.doc) } }
            form.filters method="get" {
                label { "target " input name="target" value=(target.clone().unwrap_or_default()) placeholder="TASK-001"; }
                label { "branch " input name="branch" value=(branch.clone().unwrap_or_default()); }
                label { "doc " input name="doc" value=(doc.clone().unwrap_or_default()); }
                button type="submit" { "Show" }
            }
            p.meta { (g.nodes.len()) " nodes, " (g.edges.len()) " edges on this page" @if g.pagination.has_more { " (older nodes on the next page)" } }
            @if g.nodes.is_empty() { p { "No node." } } @else {
                div.graph { (svg(&g.nodes, &g.edges, versions)) }
                details.nodes {
                    summary { "The nodes on this page, each with its versions" }
                    ul.nodes {
                        @for n in &g.nodes {
                            li {
                                a href=(versions(n)) { (n.title.clone().unwrap_or_else(|| n.id.clone())) }
                                " " span.meta { code { (n.id) } " · " (n.node_type) @if let Some(st) = &n.status { " · " (st) } }
                            }
                        }
                    }
                }
            }
            @if let Some(next) = g.pagination.next_cursor {
                p.pages { a href={ (here) "cursor=" (next) } { "Older nodes" } }
            }
            h2 { "Open conflicts merging into " (g.branch) }
            @if conflicts.is_empty() { p { "None." } }
            @for c in &conflicts {
                form.conflict method="post" action={ "/ui/w/" (seg(&ws)) "/graph/resolve" } {
                    code { (c.conflict_id) } " " (c.kind) " " code { (c.key) } " "
                    input type="hidden" name="csrf" value=(session.csrf);
                    input type="hidden" name="conflict_id" value=(c.conflict_id);
                    input type="hidden" name="branch" value=(g.branch);
                    button type="submit" name="resolution" value="use_from" { "Take the merged branch's" }
                    " "
                    button type="submit" name="resolution" value="use_into" { "Keep this branch's" }
                }
            }
            h2 { "Branches" }
            ul {
                @for b in &branches {
                    li {
                        a href={ "/ui/w/" (seg(&ws)) "/graph?branch=" (seg(&b.name)) "&doc=graph" } { (b.name) }
                        @if let Some(base) = &b.base_branch { " " span.meta { "from " (base) } }
                        @if b.current { " " span.badge { "checked out" } }
                    }
                }
            }
        },
    )
}

/// Versions of a node a page shows.
const VERSIONS: i64 = 20;
/// Lines of one text diff shown; the rest is counted.
const DIFF_LINES: usize = 200;

#[derive(Deserialize, Default)]
pub struct NodeQuery {
    #[serde(default)]
    id: String,
    #[serde(default)]
    target: Option<String>,
    #[serde(default)]
    branch: Option<String>,
    #[serde(default)]
    doc: Option<String>,
    #[serde(default)]
    cursor: Option<i64>,
}

/// A value of a node field as the versions table shows it.
fn field_value(n: &GraphNode, field: &str) -> String {
    match field {
        "type" => n.node_type.clone(),
        "status" => n.status.clone().unwrap_or_default(),
        "title" => n.title.clone().unwrap_or_default(),
        "tags" => n.tags.join(", "),
        "meta" => n.meta.as_ref().map(|m| m.to_string()).unwrap_or_default(),
        "deleted" => if n.deleted { "deleted" } else { "live" }.to_string(),
        _ => String::new(),
    }
}

/// What `after` changed from `before`: each field's old and new value, the text as a unified
/// diff (at most [`DIFF_LINES`] lines).
fn changes(before: Option<&GraphNode>, after: &GraphNode, first: bool) -> Markup {
    let Some(before) = before else {
        return html! { @if first { span.badge { "created" } } };
    };
    let fields = crate::reasoning::graph::versions::node_changes(before, after);
    html! {
        @if fields.is_empty() { span.meta { "no change" } }
        @for f in &fields {
            @if *f == "text" {
                @let diff = crate::capsule::history::unified_diff(
                    before.text.as_deref().unwrap_or_default(),
                    after.text.as_deref().unwrap_or_default(),
                );
                @let lines = diff.lines().count();
                div.change {
                    strong { "text" }
                    (super::pages::diff_block(&diff.lines().take(DIFF_LINES).collect::<Vec<_>>().join("\n")))
                    @if lines > DIFF_LINES { span.meta { (lines - DIFF_LINES) " more lines" } }
                }
            } @else {
                div.change {
                    strong { (f) } " "
                    del { (clip(&field_value(before, f), 120)) } " → " ins { (clip(&field_value(after, f), 120)) }
                }
            }
        }
    }
}

/// `/ui/w/{ws}/graph/node?id=…` (with the graph's `target`, or `branch` and `doc`): every
/// version of one node in that view, newest first, a page at a time, each with what it changed.
pub async fn node(
    _v: Viewer,
    State(app): State<AppState>,
    Path(ws): Path<String>,
    Query(q): Query<NodeQuery>,
) -> Response {
    let given = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());
    let (target, branch, doc) = (given(&q.target), given(&q.branch), given(&q.doc));
    let (branch, doc) = if target.is_none() && branch.is_none() && doc.is_none() {
        (Some("main".to_string()), Some("graph".to_string()))
    } else {
        (branch, doc)
    };
    let req = crate::reasoning::graph::versions::NodeVersionsRequest {
        workspace: ws.clone(),
        target: target.clone(),
        branch: branch.clone(),
        doc: doc.clone(),
        id: q.id.clone(),
        limit: Some(VERSIONS),
        cursor: q.cursor,
    };
    let h = match app.reasoning.graph_node_versions(req).await {
        Ok(h) => h,
        Err(e) => return problem(e),
    };
    let view = {
        let mut s = String::new();
        if let Some(t) = &target {
            s.push_str(&format!("target={}&", seg(t)));
        }
        if let Some(b) = &branch {
            s.push_str(&format!("branch={}&", seg(b)));
        }
        if let Some(d) = &doc {
            s.push_str(&format!("doc={}&", seg(d)));
        }
        s
    };
    let back = format!("/ui/w/{}/graph?{}", seg(&ws), view.trim_end_matches('&'));
    let title = h
        .versions
        .iter()
        .find(|v| !v.node.deleted)
        .and_then(|v| v.node.title.clone())
        .unwrap_or_else(|| h.id.clone());
    let last = h.versions.len().saturating_sub(1);
    page(
        StatusCode::OK,
        &format!("{ws}: node {}", h.id),
        html! {
            (crumbs(&ws, "graph"))
            h1 { "Versions of " code { (h.id) } " " (title) }
            p.meta { "In " code { (h.branch) " / " (h.doc) } ", newest first; a branch's view includes its bases' versions up to where it forked. " a href=(back) { "Back to the graph" } }
            table.versions {
                thead { tr { th { "seq" } th { "written" } th { "branch" } th { "type" } th { "status" } th { "title and text" } th { "what changed" } } }
                tbody {
                    @for (i, v) in h.versions.iter().enumerate() {
                        @let before = if i < last { h.versions.get(i + 1) } else { h.older.as_ref() };
                        tr.deleted[v.node.deleted] data-seq=(v.node.last_seq) {
                            td.num { (v.node.last_seq) }
                            td { (when_ms(v.node.last_ts_ms)) }
                            td { (v.branch) }
                            td { (v.node.node_type) }
                            td { (v.node.status.clone().unwrap_or_default()) }
                            td {
                                @if v.node.deleted { em { "deleted" } } @else {
                                    strong { (v.node.title.clone().unwrap_or_default()) }
                                    @if let Some(t) = &v.node.text { p.snippet { (clip(t, 300)) } }
                                }
                            }
                            td { (changes(before.map(|b| &b.node), &v.node, !h.pagination.has_more && i == last)) }
                        }
                    }
                }
            }
            @if let Some(next) = h.pagination.next_cursor {
                p.pages { a href={ "/ui/w/" (seg(&ws)) "/graph/node?" (view) "id=" (seg(&h.id)) "&cursor=" (next) } { "Older versions" } }
            }
        },
    )
}

#[derive(Deserialize)]
pub struct ResolveForm {
    #[serde(default)]
    csrf: String,
    conflict_id: String,
    resolution: Resolution,
    /// The branch whose page the form was on, to come back to.
    #[serde(default)]
    branch: String,
}

/// `POST /ui/w/{ws}/graph/resolve`: branchmind_graph_conflict_resolve.
pub async fn resolve(
    Viewer(session): Viewer,
    State(app): State<AppState>,
    Path(ws): Path<String>,
    Form(form): Form<ResolveForm>,
) -> Response {
    if !crate::ui::session::Sessions::csrf_ok(&session, &form.csrf) {
        return super::pages::refused();
    }
    let req = ConflictResolveRequest {
        workspace: ws.clone(),
        conflict_id: form.conflict_id,
        resolution: form.resolution,
    };
    match app.reasoning.graph_conflict_resolve(req).await {
        Ok(_) => super::redirect(&format!(
            "/ui/w/{}/graph?branch={}&doc=graph",
            seg(&ws),
            seg(&form.branch)
        )),
        Err(e) => problem(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str) -> GraphNode {
        serde_json::from_value(serde_json::json!({
            "id": id, "type": "hypothesis", "tags": [], "deleted": false,
            "last_seq": 1, "last_ts_ms": 1
        }))
        .unwrap()
    }

    fn edge(from: &str, to: &str) -> GraphEdge {
        serde_json::from_value(serde_json::json!({
            "from": from, "rel": "supports", "to": to, "deleted": false,
            "last_seq": 1, "last_ts_ms": 1
        }))
        .unwrap()
    }

    #[test]
    fn a_node_sits_right_of_its_deepest_parent_and_a_cycle_ends() {
        let nodes = [node("a"), node("b"), node("c")];
        let l = layers(&nodes, &[edge("a", "b"), edge("b", "c"), edge("a", "c")]);
        assert_eq!((l["a"], l["b"], l["c"]), (0, 1, 2));
        let l = layers(&nodes, &[edge("a", "b"), edge("b", "a")]);
        assert!(l["a"] < 3 && l["b"] < 3, "{l:?}");
        let drawn = svg(&nodes, &[edge("a", "b")], |n| format!("/v?id={}", n.id)).into_string();
        assert_eq!(drawn.matches("<g class=\"node\"").count(), 3, "{drawn}");
        assert!(
            drawn.contains("<a href=\"/v?id=b\"><g class=\"node\" data-id=\"b\""),
            "{drawn}"
        );
    }
}
