//! Versions: how a node or edge version is read and written, the effective state of a key in a
//! view (its newest version in the nearest source that has one), writes that skip a state the
//! view already holds, and `branchmind_graph_apply`.

use std::collections::HashMap;

use moss_client::reasoning::*;
use serde_json::Value;

use super::{MAX_OPS, key, tags, user_key};
use crate::error::{Error, Result};
use crate::reasoning::refs::{self, Naming};
use crate::reasoning::{MAX_CONTENT_CHARS, Reasoning, now_ms, object_json, parse_json};
use crate::store::WriteCtx;
use crate::store::engine::{Db, DbError, Row};

pub(super) const NODE_COLUMNS: &str =
    "seq, ts_ms, id, type, title, text, status, tags_json, meta_json, deleted";
pub(super) const EDGE_COLUMNS: &str = "seq, ts_ms, src, rel, dst, meta_json, deleted";

pub(super) fn node_from_row(r: &Row) -> std::result::Result<GraphNode, DbError> {
    let tags: Option<String> = r.get(7)?;
    Ok(GraphNode {
        last_seq: r.get(0)?,
        last_ts_ms: r.get(1)?,
        id: r.get(2)?,
        node_type: r.get::<Option<String>>(3)?.unwrap_or_default(),
        title: r.get(4)?,
        text: r.get(5)?,
        status: r.get(6)?,
        tags: tags
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default(),
        meta: parse_json(r.get(8)?),
        deleted: r.get(9)?,
        text_truncated: false,
    })
}

pub(super) fn edge_from_row(r: &Row) -> std::result::Result<GraphEdge, DbError> {
    Ok(GraphEdge {
        last_seq: r.get(0)?,
        last_ts_ms: r.get(1)?,
        from: r.get(2)?,
        rel: r.get(3)?,
        to: r.get(4)?,
        meta: parse_json(r.get(5)?),
        deleted: r.get(6)?,
    })
}

/// Whether two node states are the same apart from their version.
pub fn same_node(a: &GraphNode, b: &GraphNode) -> bool {
    a.deleted == b.deleted
        && (a.deleted
            || (a.node_type == b.node_type
                && a.title == b.title
                && a.text == b.text
                && a.status == b.status
                && a.tags == b.tags
                && a.meta == b.meta))
}

pub fn same_edge(a: &GraphEdge, b: &GraphEdge) -> bool {
    a.deleted == b.deleted && (a.deleted || a.meta == b.meta)
}

/// The live state (absent and deleted are the same: no node).
pub(super) fn live<T>(v: Option<T>, deleted: fn(&T) -> bool) -> Option<T> {
    v.filter(|x| !deleted(x))
}

/// The effective version of node `id` in a view (tombstones included).
pub fn node_at(
    db: Db<'_>,
    ws: &str,
    sources: &[(String, i64)],
    doc: &str,
    id: &str,
) -> Result<Option<GraphNode>> {
    let sql = format!(
        "SELECT {NODE_COLUMNS} FROM graph_nodes WHERE workspace = ?1 AND branch = ?2 AND doc = ?3
           AND id = ?4 AND seq <= ?5 ORDER BY seq DESC LIMIT 1"
    );
    for (b, c) in sources {
        if let Some(n) = db.query_opt(&sql, crate::db_params![ws, b, doc, id, *c], node_from_row)? {
            return Ok(Some(n));
        }
    }
    Ok(None)
}

/// The effective version of an edge in a view (tombstones included).
pub fn edge_at(
    db: Db<'_>,
    ws: &str,
    sources: &[(String, i64)],
    doc: &str,
    k: &EdgeKey,
) -> Result<Option<GraphEdge>> {
    let sql = format!(
        "SELECT {EDGE_COLUMNS} FROM graph_edges WHERE workspace = ?1 AND branch = ?2 AND doc = ?3
           AND src = ?4 AND rel = ?5 AND dst = ?6 AND seq <= ?7 ORDER BY seq DESC LIMIT 1"
    );
    for (b, c) in sources {
        if let Some(e) = db.query_opt(
            &sql,
            crate::db_params![ws, b, doc, &k.from, &k.rel, &k.to, *c],
            edge_from_row,
        )? {
            return Ok(Some(e));
        }
    }
    Ok(None)
}

/// Every node's effective version in a view, tombstones included.
pub fn all_nodes(
    db: Db<'_>,
    ws: &str,
    sources: &[(String, i64)],
    doc: &str,
) -> Result<HashMap<String, GraphNode>> {
    let mut out: HashMap<String, GraphNode> = HashMap::new();
    let sql = format!(
        "SELECT {NODE_COLUMNS} FROM graph_nodes v WHERE workspace = ?1 AND branch = ?2 AND doc = ?3
           AND seq <= ?4 AND NOT EXISTS (SELECT 1 FROM graph_nodes n WHERE n.workspace = ?1
             AND n.branch = ?2 AND n.doc = ?3 AND n.id = v.id AND n.seq > v.seq AND n.seq <= ?4)"
    );
    for (b, c) in sources {
        db.query_each(&sql, crate::db_params![ws, b, doc, *c], |r| {
            let n = node_from_row(r)?;
            out.entry(n.id.clone()).or_insert(n);
            Ok(true)
        })?;
    }
    Ok(out)
}

/// Every edge's effective version in a view, tombstones included.
pub fn all_edges(
    db: Db<'_>,
    ws: &str,
    sources: &[(String, i64)],
    doc: &str,
) -> Result<HashMap<(String, String, String), GraphEdge>> {
    let mut out = HashMap::new();
    let sql = format!(
        "SELECT {EDGE_COLUMNS} FROM graph_edges v WHERE workspace = ?1 AND branch = ?2 AND doc = ?3
           AND seq <= ?4 AND NOT EXISTS (SELECT 1 FROM graph_edges n WHERE n.workspace = ?1
             AND n.branch = ?2 AND n.doc = ?3 AND n.src = v.src AND n.rel = v.rel AND n.dst = v.dst
             AND n.seq > v.seq AND n.seq <= ?4)"
    );
    for (b, c) in sources {
        db.query_each(&sql, crate::db_params![ws, b, doc, *c], |r| {
            let e = edge_from_row(r)?;
            out.entry((e.from.clone(), e.rel.clone(), e.to.clone()))
                .or_insert(e);
            Ok(true)
        })?;
    }
    Ok(out)
}

/// Writes a node version; returns it with its sequence.
pub fn write_node(
    ctx: &WriteCtx,
    ws: &str,
    branch: &str,
    doc: &str,
    n: &GraphNode,
) -> Result<GraphNode> {
    let seq = ctx.next_seq();
    let ts_ms = now_ms();
    let tags =
        (!n.tags.is_empty()).then(|| serde_json::to_string(&n.tags).expect("tags serialize"));
    let meta = n.meta.as_ref().map(Value::to_string);
    ctx.db().execute(
        "INSERT INTO graph_nodes(seq, workspace, branch, doc, id, ts_ms, type, title, text, status,
           tags_json, meta_json, deleted) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        crate::db_params![
            seq,
            ws,
            branch,
            doc,
            &n.id,
            ts_ms,
            &n.node_type,
            n.title.as_ref(),
            n.text.as_ref(),
            n.status.as_ref(),
            tags.as_ref(),
            meta.as_ref(),
            n.deleted
        ],
    )?;
    Ok(GraphNode {
        last_seq: seq,
        last_ts_ms: ts_ms,
        ..n.clone()
    })
}

/// Writes an edge version.
pub fn write_edge(
    ctx: &WriteCtx,
    ws: &str,
    branch: &str,
    doc: &str,
    e: &GraphEdge,
) -> Result<GraphEdge> {
    let seq = ctx.next_seq();
    let ts_ms = now_ms();
    let meta = e.meta.as_ref().map(Value::to_string);
    ctx.db().execute(
        "INSERT INTO graph_edges(seq, workspace, branch, doc, src, rel, dst, ts_ms, meta_json, deleted)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        crate::db_params![
            seq,
            ws,
            branch,
            doc,
            &e.from,
            &e.rel,
            &e.to,
            ts_ms,
            meta.as_ref(),
            e.deleted
        ],
    )?;
    Ok(GraphEdge {
        last_seq: seq,
        last_ts_ms: ts_ms,
        ..e.clone()
    })
}

/// A node state to write (version fields are filled in by [`write_node`]).
pub fn node(id: String, node_type: String) -> GraphNode {
    GraphNode {
        id,
        node_type,
        title: None,
        text: None,
        status: None,
        tags: Vec::new(),
        meta: None,
        deleted: false,
        last_seq: 0,
        last_ts_ms: 0,
        text_truncated: false,
    }
}

pub fn edge(from: String, rel: String, to: String, meta: Option<Value>) -> GraphEdge {
    GraphEdge {
        from,
        rel,
        to,
        meta,
        deleted: false,
        last_seq: 0,
        last_ts_ms: 0,
    }
}

/// Writes `n` unless the view already holds the same state; returns whether it wrote.
pub fn upsert_node_if_changed(
    ctx: &WriteCtx,
    ws: &str,
    sources: &[(String, i64)],
    branch: &str,
    doc: &str,
    n: &GraphNode,
) -> Result<Option<GraphNode>> {
    if let Some(cur) = node_at(ctx.db(), ws, sources, doc, &n.id)?
        && same_node(&cur, n)
    {
        return Ok(None);
    }
    write_node(ctx, ws, branch, doc, n).map(Some)
}

pub fn upsert_edge_if_changed(
    ctx: &WriteCtx,
    ws: &str,
    sources: &[(String, i64)],
    branch: &str,
    doc: &str,
    e: &GraphEdge,
) -> Result<Option<GraphEdge>> {
    let k = EdgeKey {
        from: e.from.clone(),
        rel: e.rel.clone(),
        to: e.to.clone(),
    };
    if let Some(cur) = edge_at(ctx.db(), ws, sources, doc, &k)?
        && same_edge(&cur, e)
    {
        return Ok(None);
    }
    write_edge(ctx, ws, branch, doc, e).map(Some)
}

/// A graph operation, checked.
enum Op {
    Node(GraphNode),
    Edge(GraphEdge),
}

fn check_op(i: usize, op: &GraphOp) -> Result<Op> {
    let f = |name: &str| format!("ops[{i}].{name}");
    Ok(match op {
        GraphOp::NodeUpsert {
            id,
            node_type,
            title,
            text,
            status,
            tags: t,
            meta,
        } => {
            let mut n = node(user_key(&f("id"), id)?, key(&f("type"), node_type)?);
            n.title = crate::bounds::optional_text(
                &f("title"),
                title.as_deref(),
                crate::bounds::MAX_TITLE_CHARS,
            )?;
            n.text = crate::bounds::optional_text(&f("text"), text.as_deref(), MAX_CONTENT_CHARS)?;
            n.status = status
                .as_deref()
                .map(|s| key(&f("status"), s))
                .transpose()?;
            n.tags = tags(&f("tags"), t.as_deref())?;
            n.meta = object_json(&f("meta"), meta.as_ref())?.and(meta.clone());
            Op::Node(n)
        }
        GraphOp::NodeDelete { id } => {
            let mut n = node(user_key(&f("id"), id)?, String::new());
            n.deleted = true;
            Op::Node(n)
        }
        GraphOp::EdgeUpsert {
            from,
            rel,
            to,
            meta,
        } => Op::Edge(edge(
            key(&f("from"), from)?,
            key(&f("rel"), rel)?,
            key(&f("to"), to)?,
            object_json(&f("meta"), meta.as_ref())?.and(meta.clone()),
        )),
        GraphOp::EdgeDelete { from, rel, to } => {
            let mut e = edge(
                key(&f("from"), from)?,
                key(&f("rel"), rel)?,
                key(&f("to"), to)?,
                None,
            );
            e.deleted = true;
            Op::Edge(e)
        }
    })
}

impl Reasoning {
    /// `branchmind_graph_apply`.
    pub async fn graph_apply(&self, req: GraphApplyRequest) -> Result<GraphApplyResponse> {
        let ws = refs::workspace(&req.workspace)?;
        if req.ops.is_empty() || req.ops.len() > MAX_OPS {
            return Err(Error::invalid_field(
                "ops",
                format!(
                    "ops must hold 1 to {MAX_OPS} operations, got {}",
                    req.ops.len()
                ),
            ));
        }
        let ops: Vec<Op> = req
            .ops
            .iter()
            .enumerate()
            .map(|(i, op)| check_op(i, op))
            .collect::<Result<_>>()?;
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                let at = refs::address_of(
                    db,
                    &ws,
                    &req,
                    |r| &r.graph_doc,
                    &Naming::graph("branchmind_graph_apply"),
                )?;
                refs::existing_branch(db, &ws, "branch", &at.branch)?;
                let mut applied = GraphApplied::default();
                let (mut last_seq, mut last_ts_ms) = (0, 0);
                for op in &ops {
                    match op {
                        Op::Node(n) => {
                            let w = write_node(ctx, &ws, &at.branch, &at.doc, n)?;
                            (last_seq, last_ts_ms) = (w.last_seq, w.last_ts_ms);
                            if n.deleted {
                                applied.nodes_deleted += 1;
                            } else {
                                applied.nodes_upserted += 1;
                            }
                        }
                        Op::Edge(e) => {
                            let w = write_edge(ctx, &ws, &at.branch, &at.doc, e)?;
                            (last_seq, last_ts_ms) = (w.last_seq, w.last_ts_ms);
                            if e.deleted {
                                applied.edges_deleted += 1;
                            } else {
                                applied.edges_upserted += 1;
                            }
                        }
                    }
                }
                Ok(GraphApplyResponse {
                    branch: at.branch,
                    doc: at.doc,
                    applied,
                    last_seq,
                    last_ts_ms,
                })
            })
            .await
    }
}

/// Most versions of one node a page of [`Reasoning::graph_node_versions`] holds.
pub const MAX_NODE_VERSIONS: i64 = 100;

/// Which node's versions to read, and where: the view a graph query names (target, or branch
/// and doc), the node id, and a page (`cursor`: versions with a sequence below it).
#[derive(Debug, Clone, Default)]
pub struct NodeVersionsRequest {
    pub workspace: String,
    pub target: Option<String>,
    pub branch: Option<String>,
    pub doc: Option<String>,
    pub id: String,
    pub limit: Option<i64>,
    pub cursor: Option<i64>,
}

impl refs::DocRef for NodeVersionsRequest {
    fn target(&self) -> Option<&str> {
        self.target.as_deref()
    }
    fn branch(&self) -> Option<&str> {
        self.branch.as_deref()
    }
    fn doc(&self) -> Option<&str> {
        self.doc.as_deref()
    }
}

/// One version of a node: the branch that wrote it and the state it wrote (a deletion is a
/// tombstone: `deleted`, no type or title).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeVersion {
    pub branch: String,
    pub node: GraphNode,
}

/// A page of a node's versions in a view, newest first.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeVersions {
    pub branch: String,
    pub doc: String,
    pub id: String,
    pub versions: Vec<NodeVersion>,
    /// The version just before the page's oldest, when there is one: what that oldest one
    /// changed is told against it.
    pub older: Option<NodeVersion>,
    pub pagination: SeqPagination,
}

/// The fields in which two states of a node differ, in a fixed order.
pub fn node_changes(before: &GraphNode, after: &GraphNode) -> Vec<&'static str> {
    let mut out = Vec::new();
    if before.deleted != after.deleted {
        out.push("deleted");
    }
    if after.deleted {
        return out;
    }
    for (field, differs) in [
        ("type", before.node_type != after.node_type),
        ("status", before.status != after.status),
        ("title", before.title != after.title),
        ("text", before.text != after.text),
        ("tags", before.tags != after.tags),
        ("meta", before.meta != after.meta),
    ] {
        if differs {
            out.push(field);
        }
    }
    out
}

/// The newest `want` versions of node `id` in a view below `upper` (every source's own
/// versions up to its cutoff: what the view saw the node become), newest first.
pub fn node_versions(
    db: Db<'_>,
    ws: &str,
    sources: &[(String, i64)],
    doc: &str,
    id: &str,
    upper: i64,
    want: i64,
) -> Result<Vec<NodeVersion>> {
    let sql = format!(
        "SELECT {NODE_COLUMNS} FROM graph_nodes WHERE workspace = ?1 AND branch = ?2 AND doc = ?3
           AND id = ?4 AND seq <= ?5 ORDER BY seq DESC LIMIT ?6"
    );
    let mut out: Vec<NodeVersion> = Vec::new();
    for (b, c) in sources {
        db.query_each(
            &sql,
            crate::db_params![ws, b, doc, id, (*c).min(upper), want],
            |r| {
                out.push(NodeVersion {
                    branch: b.clone(),
                    node: node_from_row(r)?,
                });
                Ok(true)
            },
        )?;
    }
    out.sort_by_key(|v| std::cmp::Reverse(v.node.last_seq));
    out.truncate(want as usize);
    Ok(out)
}

impl Reasoning {
    /// Every version of one node in a view (target, or branch and doc), newest first, a page
    /// at a time: the node's history as that branch sees it, its bases' versions up to where
    /// it forked included. A node with no version there is NOT_FOUND.
    pub async fn graph_node_versions(&self, req: NodeVersionsRequest) -> Result<NodeVersions> {
        let ws = refs::workspace(&req.workspace)?;
        let id = key("id", &req.id)?;
        let limit = crate::page::limit("limit", req.limit, 20, MAX_NODE_VERSIONS)?;
        let cursor = crate::page::cursor(req.cursor)?;
        self.store
            .readers
            .run_db(move |db| {
                let (at, sources) = Reasoning::graph_address(
                    db,
                    &ws,
                    &req,
                    &Naming::graph("branchmind_graph_query"),
                )?;
                let upper = cursor.map_or(refs::ALL, |c| c - 1);
                // One more than the page: the version before its oldest.
                let mut rows = node_versions(db, &ws, &sources, &at.doc, &id, upper, limit + 1)?;
                if rows.is_empty() && cursor.is_none() {
                    return Err(Error::not_found(format!(
                        "node {id:?} has no version in {}/{} of workspace {ws:?}; \
                         branchmind_graph_query lists the nodes there",
                        at.branch, at.doc
                    )));
                }
                let older = (rows.len() as i64 > limit).then(|| rows.remove(limit as usize));
                rows.truncate(limit as usize);
                let has_more = older.is_some();
                let pagination = SeqPagination {
                    cursor,
                    next_cursor: if has_more {
                        rows.last().map(|v| v.node.last_seq)
                    } else {
                        None
                    },
                    has_more,
                    limit,
                    count: rows.len() as i64,
                };
                Ok(NodeVersions {
                    branch: at.branch,
                    doc: at.doc,
                    id,
                    versions: rows,
                    older,
                    pagination,
                })
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_names_the_fields_that_differ_and_a_tombstone_only_its_deletion() {
        let mut a = node("n".into(), "hypothesis".into());
        a.title = Some("Queue it".into());
        let mut b = a.clone();
        b.status = Some("done".into());
        b.text = Some("because".into());
        b.last_seq = 9;
        assert_eq!(node_changes(&a, &b), ["status", "text"]);
        assert!(node_changes(&a, &a).is_empty());
        let mut gone = node("n".into(), String::new());
        gone.deleted = true;
        assert_eq!(node_changes(&b, &gone), ["deleted"]);
        assert_eq!(node_changes(&gone, &a), ["deleted", "type", "title"]);
    }
}
