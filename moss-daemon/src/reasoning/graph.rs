//! The versioned graph: nodes keyed by `id`, edges by `(from, rel, to)`. Every change is a new
//! version (a deletion a tombstone) numbered from the store's sequence; a branch's effective
//! graph is the latest version of each key within its sources.

use std::collections::{BTreeMap, HashMap, HashSet};

use moss_client::ErrorCode;
use moss_client::reasoning::*;
use rusqlite::types::Value as Sql;
use rusqlite::{Connection, OptionalExtension, Row, params, params_from_iter};
use serde_json::{Value, json};

use super::docs::{keep_page, page_of};
use super::refs::{self, ALL, Naming};
use super::{Reasoning, cursor, limit, now_ms, object_json, parse_json};
use crate::budget::{self, Fit, blank_budget, cut_text};
use crate::error::{Error, Result};
use crate::store::WriteCtx;

/// Longest node id, type or relation.
pub const MAX_KEY_CHARS: usize = 256;
/// Most operations in one `graph_apply`.
pub const MAX_OPS: usize = 1000;
/// Node id prefixes only the task projection writes.
pub const RESERVED_PREFIXES: [&str; 2] = ["task:", "step:"];

const NODE_COLUMNS: &str =
    "seq, ts_ms, id, type, title, text, status, tags_json, meta_json, deleted";
const EDGE_COLUMNS: &str = "seq, ts_ms, src, rel, dst, meta_json, deleted";

fn node_from_row(r: &Row) -> rusqlite::Result<GraphNode> {
    let tags: Option<String> = r.get(7)?;
    Ok(GraphNode {
        last_seq: r.get(0)?,
        last_ts_ms: r.get(1)?,
        id: r.get(2)?,
        node_type: r.get::<_, Option<String>>(3)?.unwrap_or_default(),
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

fn edge_from_row(r: &Row) -> rusqlite::Result<GraphEdge> {
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

/// A node id: non-empty, at most 256 characters, no control characters, no `|`.
pub fn key(field: &str, value: &str) -> Result<String> {
    let v = value.trim();
    if v.is_empty() {
        return Err(Error::invalid_field(
            field,
            format!("{field} must not be empty"),
        ));
    }
    if v.chars().count() > MAX_KEY_CHARS {
        return Err(Error::invalid_field(
            field,
            format!("{field} is longer than {MAX_KEY_CHARS} characters"),
        ));
    }
    if v.chars().any(|c| c.is_control() || c == '|') {
        return Err(Error::invalid_field(
            field,
            format!("{field} {v:?} holds a control character or `|` (reserved)"),
        ));
    }
    Ok(v.to_string())
}

/// A node id an agent may write: a [`key`] outside the reserved `task:` / `step:` prefixes.
pub fn user_key(field: &str, value: &str) -> Result<String> {
    let v = key(field, value)?;
    if RESERVED_PREFIXES.iter().any(|p| v.starts_with(p)) {
        return Err(Error::invalid_field(
            field,
            format!(
                "{field} {v:?} uses a reserved prefix (task:, step:): the task projection owns those nodes"
            ),
        ));
    }
    Ok(v)
}

/// Tags: trimmed, lowercased, deduplicated, sorted.
pub fn tags(field: &str, value: Option<&[String]>) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for (i, t) in value.unwrap_or_default().iter().enumerate() {
        let t = t.trim().to_lowercase();
        if t.is_empty() {
            continue;
        }
        key(&format!("{field}[{i}]"), &t)?;
        out.push(t);
    }
    out.sort();
    out.dedup();
    if out.len() > crate::tags::MAX_TAGS {
        return Err(Error::invalid_field(
            field,
            format!(
                "{field} has {} tags; at most {} are allowed",
                out.len(),
                crate::tags::MAX_TAGS
            ),
        ));
    }
    Ok(out)
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
fn live<T>(v: Option<T>, deleted: fn(&T) -> bool) -> Option<T> {
    v.filter(|x| !deleted(x))
}

/// The effective version of node `id` in a view (tombstones included).
pub fn node_at(
    conn: &Connection,
    ws: &str,
    sources: &[(String, i64)],
    doc: &str,
    id: &str,
) -> Result<Option<GraphNode>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {NODE_COLUMNS} FROM graph_nodes WHERE workspace = ?1 AND branch = ?2 AND doc = ?3
           AND id = ?4 AND seq <= ?5 ORDER BY seq DESC LIMIT 1"
    ))?;
    for (b, c) in sources {
        if let Some(n) = stmt
            .query_row(params![ws, b, doc, id, c], node_from_row)
            .optional()?
        {
            return Ok(Some(n));
        }
    }
    Ok(None)
}

/// The effective version of an edge in a view (tombstones included).
pub fn edge_at(
    conn: &Connection,
    ws: &str,
    sources: &[(String, i64)],
    doc: &str,
    k: &EdgeKey,
) -> Result<Option<GraphEdge>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {EDGE_COLUMNS} FROM graph_edges WHERE workspace = ?1 AND branch = ?2 AND doc = ?3
           AND src = ?4 AND rel = ?5 AND dst = ?6 AND seq <= ?7 ORDER BY seq DESC LIMIT 1"
    ))?;
    for (b, c) in sources {
        if let Some(e) = stmt
            .query_row(params![ws, b, doc, k.from, k.rel, k.to, c], edge_from_row)
            .optional()?
        {
            return Ok(Some(e));
        }
    }
    Ok(None)
}

/// Every node's effective version in a view, tombstones included.
pub fn all_nodes(
    conn: &Connection,
    ws: &str,
    sources: &[(String, i64)],
    doc: &str,
) -> Result<HashMap<String, GraphNode>> {
    let mut out: HashMap<String, GraphNode> = HashMap::new();
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {NODE_COLUMNS} FROM graph_nodes v WHERE workspace = ?1 AND branch = ?2 AND doc = ?3
           AND seq <= ?4 AND NOT EXISTS (SELECT 1 FROM graph_nodes n WHERE n.workspace = ?1
             AND n.branch = ?2 AND n.doc = ?3 AND n.id = v.id AND n.seq > v.seq AND n.seq <= ?4)"
    ))?;
    for (b, c) in sources {
        for n in stmt.query_map(params![ws, b, doc, c], node_from_row)? {
            let n = n?;
            out.entry(n.id.clone()).or_insert(n);
        }
    }
    Ok(out)
}

/// Every edge's effective version in a view, tombstones included.
pub fn all_edges(
    conn: &Connection,
    ws: &str,
    sources: &[(String, i64)],
    doc: &str,
) -> Result<HashMap<(String, String, String), GraphEdge>> {
    let mut out = HashMap::new();
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {EDGE_COLUMNS} FROM graph_edges v WHERE workspace = ?1 AND branch = ?2 AND doc = ?3
           AND seq <= ?4 AND NOT EXISTS (SELECT 1 FROM graph_edges n WHERE n.workspace = ?1
             AND n.branch = ?2 AND n.doc = ?3 AND n.src = v.src AND n.rel = v.rel AND n.dst = v.dst
             AND n.seq > v.seq AND n.seq <= ?4)"
    ))?;
    for (b, c) in sources {
        for e in stmt.query_map(params![ws, b, doc, c], edge_from_row)? {
            let e = e?;
            out.entry((e.from.clone(), e.rel.clone(), e.to.clone()))
                .or_insert(e);
        }
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
    ctx.prepare_cached(
        "INSERT INTO graph_nodes(seq, workspace, branch, doc, id, ts_ms, type, title, text, status,
           tags_json, meta_json, deleted) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        seq,
        ws,
        branch,
        doc,
        n.id,
        ts_ms,
        n.node_type,
        n.title,
        n.text,
        n.status,
        tags,
        n.meta.as_ref().map(Value::to_string),
        n.deleted
    ])?;
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
    ctx.prepare_cached(
        "INSERT INTO graph_edges(seq, workspace, branch, doc, src, rel, dst, ts_ms, meta_json, deleted)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        seq,
        ws,
        branch,
        doc,
        e.from,
        e.rel,
        e.to,
        ts_ms,
        e.meta.as_ref().map(Value::to_string),
        e.deleted
    ])?;
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
    if let Some(cur) = node_at(ctx, ws, sources, doc, &n.id)?
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
    if let Some(cur) = edge_at(ctx, ws, sources, doc, &k)?
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
            n.text = crate::bounds::optional_text(
                &f("text"),
                text.as_deref(),
                super::MAX_CONTENT_CHARS,
            )?;
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

/// The filters of a node query, as SQL on `graph_nodes v` and its parameters.
fn node_filters(
    req: &GraphQueryRequest,
    types_only: Option<&[&str]>,
) -> Result<(String, Vec<Sql>)> {
    let mut sql = String::from(" AND v.deleted = 0");
    let mut p: Vec<Sql> = Vec::new();
    let list = |sql: &mut String, p: &mut Vec<Sql>, col: &str, values: &[String]| {
        sql.push_str(&format!(
            " AND {col} IN ({})",
            vec!["?"; values.len()].join(",")
        ));
        p.extend(values.iter().map(|v| Sql::Text(v.clone())));
    };
    if let Some(ids) = req.ids.as_deref().filter(|v| !v.is_empty()) {
        list(&mut sql, &mut p, "v.id", ids);
    }
    let types: Option<Vec<String>> =
        match (req.types.as_deref().filter(|v| !v.is_empty()), types_only) {
            (Some(t), _) => Some(t.to_vec()),
            (None, Some(t)) => Some(t.iter().map(|s| s.to_string()).collect()),
            (None, None) => None,
        };
    if let Some(types) = types {
        list(&mut sql, &mut p, "v.type", &types);
    }
    if let Some(s) = req.status.as_deref().filter(|s| !s.is_empty()) {
        sql.push_str(" AND v.status = ?");
        p.push(Sql::Text(s.to_string()));
    }
    if let Some(any) = req.tags_any.as_deref().filter(|v| !v.is_empty()) {
        let any = tags("tags_any", Some(any))?;
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM json_each(v.tags_json) WHERE value IN ({}))",
            vec!["?"; any.len()].join(",")
        ));
        p.extend(any.into_iter().map(Sql::Text));
    }
    for t in tags("tags_all", req.tags_all.as_deref())? {
        sql.push_str(" AND EXISTS (SELECT 1 FROM json_each(v.tags_json) WHERE value = ?)");
        p.push(Sql::Text(t));
    }
    if let Some(text) = req.text.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        sql.push_str(
            " AND (instr(lower(v.id), ?) > 0 OR instr(lower(coalesce(v.title, '')), ?) > 0
                  OR instr(lower(coalesce(v.text, '')), ?) > 0)",
        );
        let t = text.to_lowercase();
        p.extend([Sql::Text(t.clone()), Sql::Text(t.clone()), Sql::Text(t)]);
    }
    Ok((sql, p))
}

/// Whether a nearer source holds a version of node `id` (which then shadows this one).
fn node_shadowed(
    conn: &Connection,
    ws: &str,
    nearer: &[(String, i64)],
    doc: &str,
    id: &str,
) -> Result<bool> {
    let mut stmt = conn.prepare_cached(
        "SELECT 1 FROM graph_nodes WHERE workspace = ?1 AND branch = ?2 AND doc = ?3 AND id = ?4
           AND seq <= ?5 LIMIT 1",
    )?;
    for (b, c) in nearer {
        if stmt.exists(params![ws, b, doc, id, c])? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn edge_shadowed(
    conn: &Connection,
    ws: &str,
    nearer: &[(String, i64)],
    doc: &str,
    e: &GraphEdge,
) -> Result<bool> {
    let mut stmt = conn.prepare_cached(
        "SELECT 1 FROM graph_edges WHERE workspace = ?1 AND branch = ?2 AND doc = ?3 AND src = ?4
           AND rel = ?5 AND dst = ?6 AND seq <= ?7 LIMIT 1",
    )?;
    for (b, c) in nearer {
        if stmt.exists(params![ws, b, doc, e.from, e.rel, e.to, c])? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The newest `limit + 1` live nodes of a view matching `filters`, below `cursor`: per source,
/// an indexed scan of its latest versions (newest first), minus those a nearer source shadows.
pub fn query_nodes(
    conn: &Connection,
    ws: &str,
    sources: &[(String, i64)],
    doc: &str,
    filters: &(String, Vec<Sql>),
    cursor: Option<i64>,
    limit: i64,
) -> Result<Vec<GraphNode>> {
    let want = limit as usize + 1;
    let mut out: Vec<GraphNode> = Vec::new();
    let sql = format!(
        "SELECT {NODE_COLUMNS} FROM graph_nodes v WHERE v.workspace = ? AND v.branch = ? AND v.doc = ?
           AND v.seq <= ? AND NOT EXISTS (SELECT 1 FROM graph_nodes n WHERE n.workspace = v.workspace
             AND n.branch = v.branch AND n.doc = v.doc AND n.id = v.id AND n.seq > v.seq AND n.seq <= ?)
           {} ORDER BY v.seq DESC LIMIT ?",
        filters.0
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let upper = cursor.map_or(ALL, |c| c - 1);
    for (i, (b, c)) in sources.iter().enumerate() {
        let mut hi = (*c).min(upper);
        let mut found = 0usize;
        let chunk = (want * 2).max(16);
        loop {
            let mut p: Vec<Sql> = vec![
                Sql::Text(ws.into()),
                Sql::Text(b.clone()),
                Sql::Text(doc.into()),
                Sql::Integer(hi),
                Sql::Integer(*c),
            ];
            p.extend(filters.1.iter().cloned());
            p.push(Sql::Integer(chunk as i64));
            let rows: Vec<GraphNode> = stmt
                .query_map(params_from_iter(p), node_from_row)?
                .collect::<rusqlite::Result<_>>()?;
            let n = rows.len();
            for node in rows {
                hi = node.last_seq - 1;
                if i > 0 && node_shadowed(conn, ws, &sources[..i], doc, &node.id)? {
                    continue;
                }
                out.push(node);
                found += 1;
                if found >= want {
                    break;
                }
            }
            if n < chunk || found >= want {
                break;
            }
        }
    }
    out.sort_by_key(|x| std::cmp::Reverse(x.last_seq));
    out.truncate(want);
    Ok(out)
}

/// Live edges of a view between the given nodes, newest first, at most `limit`.
fn edges_between(
    conn: &Connection,
    ws: &str,
    sources: &[(String, i64)],
    doc: &str,
    ids: &[String],
    limit: usize,
) -> Result<Vec<GraphEdge>> {
    if ids.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let marks = vec!["?"; ids.len()].join(",");
    // No ORDER BY and `+v.seq`: SQLite then walks the endpoint indexes (a few rows per id)
    // instead of every edge of the document newest first; the few matches are sorted here.
    let sql = format!(
        "SELECT {EDGE_COLUMNS} FROM graph_edges v WHERE v.workspace = ? AND v.branch = ? AND v.doc = ?
           AND +v.seq <= ? AND v.src IN ({marks}) AND v.dst IN ({marks}) AND NOT EXISTS (
             SELECT 1 FROM graph_edges n WHERE n.workspace = v.workspace AND n.branch = v.branch
               AND n.doc = v.doc AND n.src = v.src AND n.rel = v.rel AND n.dst = v.dst
               AND n.seq > v.seq AND n.seq <= ?) AND v.deleted = 0"
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut out = Vec::new();
    for (i, (b, c)) in sources.iter().enumerate() {
        let mut p: Vec<Sql> = vec![
            Sql::Text(ws.into()),
            Sql::Text(b.clone()),
            Sql::Text(doc.into()),
            Sql::Integer(*c),
        ];
        p.extend(ids.iter().map(|s| Sql::Text(s.clone())));
        p.extend(ids.iter().map(|s| Sql::Text(s.clone())));
        p.push(Sql::Integer(*c));
        for e in stmt.query_map(params_from_iter(p), edge_from_row)? {
            let e = e?;
            if i > 0 && edge_shadowed(conn, ws, &sources[..i], doc, &e)? {
                continue;
            }
            out.push(e);
        }
    }
    out.sort_by_key(|x| std::cmp::Reverse(x.last_seq));
    out.truncate(limit);
    Ok(out)
}

impl Fit for GraphQueryResponse {
    /// Edges go before nodes: the first units are nodes, the last ones edges.
    fn units(&self) -> usize {
        self.nodes.len() + self.edges.len()
    }
    fn keep(&mut self, n: usize) {
        if n >= self.nodes.len() {
            self.edges.truncate(n - self.nodes.len());
        } else {
            self.edges.clear();
            keep_page(&mut self.nodes, &mut self.pagination, n, |n| n.last_seq);
        }
    }
    fn cut(&mut self, chars: usize) -> bool {
        self.nodes.first_mut().is_some_and(|n| cut_node(n, chars))
    }
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated;
        self.budget = budget;
    }
}

pub fn cut_node(n: &mut GraphNode, chars: usize) -> bool {
    let done = match n.text.as_mut() {
        Some(t) if !t.is_empty() => cut_text(t, chars),
        _ => n.meta.take().is_some(),
    };
    n.text_truncated |= done;
    done
}

impl Fit for GraphValidateResponse {
    fn units(&self) -> usize {
        self.errors.len()
    }
    fn keep(&mut self, n: usize) {
        self.errors.truncate(n);
    }
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated || self.truncated;
        self.budget = budget;
    }
    /// `ok` and `error_count` tell the verdict; the errors listed are examples.
    fn paged(&self) -> bool {
        false
    }
}

fn change_seq(c: &GraphChange) -> i64 {
    match c {
        GraphChange::Node { to, .. } => to.last_seq,
        GraphChange::Edge { to, .. } => to.last_seq,
    }
}

impl Fit for GraphDiffResponse {
    fn units(&self) -> usize {
        self.changes.len()
    }
    fn keep(&mut self, n: usize) {
        keep_page(&mut self.changes, &mut self.pagination, n, change_seq);
    }
    fn cut(&mut self, chars: usize) -> bool {
        match self.changes.first_mut() {
            Some(GraphChange::Node { to, .. }) => cut_node(to, chars),
            _ => false,
        }
    }
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated;
        self.budget = budget;
    }
}

impl Fit for GraphConflictsResponse {
    fn units(&self) -> usize {
        self.conflicts.len()
    }
    fn keep(&mut self, n: usize) {
        keep_page(&mut self.conflicts, &mut self.pagination, n, |c| c.seq);
    }
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated;
        self.budget = budget;
    }
}

/// 64-bit FNV-1a: a stable hash for deterministic conflict ids.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0u8]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// A key changed on the merged branch since it was created.
enum Changed {
    Node(GraphNode),
    Edge(GraphEdge),
}

impl Changed {
    fn seq(&self) -> i64 {
        match self {
            Changed::Node(n) => n.last_seq,
            Changed::Edge(e) => e.last_seq,
        }
    }
}

fn edge_key_string(e: &GraphEdge) -> String {
    format!("{}|{}|{}", e.from, e.rel, e.to)
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
                let at = refs::address(
                    ctx,
                    &ws,
                    req.target.as_deref(),
                    req.branch.as_deref(),
                    req.doc.as_deref(),
                    |r| &r.graph_doc,
                    &Naming {
                        tool: "branchmind_graph_apply",
                        fields: &[("doc", "graph")],
                    },
                )?;
                refs::existing_branch(ctx, &ws, "branch", &at.branch)?;
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

    /// `branchmind_graph_query`.
    pub async fn graph_query(&self, req: GraphQueryRequest) -> Result<GraphQueryResponse> {
        let ws = refs::workspace(&req.workspace)?;
        let caps = self.caps(req.max_chars, req.max_bytes, req.max_lines)?;
        let limit = limit("limit", req.limit, 50, 200)?;
        let cursor = cursor(req.cursor)?;
        let edges_limit = match req.edges_limit {
            None => 200,
            Some(v) if (0..=1000).contains(&v) => v,
            Some(v) => {
                return Err(Error::invalid_field(
                    "edges_limit",
                    format!("edges_limit must be between 0 and 1000, got {v}"),
                ));
            }
        };
        let include_edges = req.include_edges.unwrap_or(true);
        let filters = node_filters(&req, None)?;
        let resp = self
            .store
            .readers
            .run(move |conn| {
                let (at, sources) = Reasoning::graph_address(
                    conn,
                    &ws,
                    req.target.as_deref(),
                    req.branch.as_deref(),
                    req.doc.as_deref(),
                    &Naming {
                        tool: "branchmind_graph_query",
                        fields: &[("doc", "graph")],
                    },
                )?;
                let rows = query_nodes(conn, &ws, &sources, &at.doc, &filters, cursor, limit)?;
                let (nodes, pagination) = page_of(rows, cursor, limit, |n| n.last_seq);
                let edges = if include_edges {
                    let ids: Vec<String> = nodes.iter().map(|n| n.id.clone()).collect();
                    edges_between(conn, &ws, &sources, &at.doc, &ids, edges_limit as usize)?
                } else {
                    Vec::new()
                };
                Ok(GraphQueryResponse {
                    branch: at.branch,
                    doc: at.doc,
                    pagination,
                    nodes,
                    edges,
                    truncated: false,
                    budget: blank_budget(),
                })
            })
            .await?;
        budget::fit(resp, &caps)
    }

    /// `branchmind_graph_validate`: every live edge's endpoints must be live nodes.
    pub async fn graph_validate(&self, req: GraphValidateRequest) -> Result<GraphValidateResponse> {
        let ws = refs::workspace(&req.workspace)?;
        let caps = self.caps(req.max_chars, req.max_bytes, req.max_lines)?;
        let max_errors = limit("max_errors", req.max_errors, 50, 1000)?;
        let resp = self
            .store
            .readers
            .run(move |conn| {
                let (at, sources) = Reasoning::graph_address(
                    conn,
                    &ws,
                    req.target.as_deref(),
                    req.branch.as_deref(),
                    req.doc.as_deref(),
                    &Naming {
                        tool: "branchmind_graph_validate",
                        fields: &[("doc", "graph")],
                    },
                )?;
                let nodes = all_nodes(conn, &ws, &sources, &at.doc)?;
                let live_nodes: HashSet<&str> = nodes
                    .values()
                    .filter(|n| !n.deleted)
                    .map(|n| n.id.as_str())
                    .collect();
                let mut edges: Vec<GraphEdge> = all_edges(conn, &ws, &sources, &at.doc)?
                    .into_values()
                    .filter(|e| !e.deleted)
                    .collect();
                edges.sort_by_key(|x| std::cmp::Reverse(x.last_seq));
                let mut errors = Vec::new();
                let mut error_count = 0i64;
                for e in &edges {
                    for end in [&e.from, &e.to] {
                        if !live_nodes.contains(end.as_str()) {
                            error_count += 1;
                            if (errors.len() as i64) < max_errors {
                                let state = if nodes.contains_key(end.as_str()) {
                                    "deleted"
                                } else {
                                    "missing"
                                };
                                errors.push(GraphError {
                                    code: "dangling_edge".into(),
                                    message: format!(
                                        "edge {} -{}-> {}: node {end:?} is {state}",
                                        e.from, e.rel, e.to
                                    ),
                                    from: e.from.clone(),
                                    rel: e.rel.clone(),
                                    to: e.to.clone(),
                                    missing: end.clone(),
                                });
                            }
                        }
                    }
                }
                Ok(GraphValidateResponse {
                    branch: at.branch,
                    doc: at.doc,
                    ok: error_count == 0,
                    stats: GraphStats {
                        nodes: live_nodes.len() as i64,
                        edges: edges.len() as i64,
                    },
                    truncated: error_count > errors.len() as i64,
                    errors,
                    error_count,
                    budget: blank_budget(),
                })
            })
            .await?;
        budget::fit(resp, &caps)
    }

    /// `branchmind_graph_diff`: states in `to`'s graph that differ from `from`'s, tombstones
    /// included, newest first.
    pub async fn graph_diff(&self, req: GraphDiffRequest) -> Result<GraphDiffResponse> {
        let ws = refs::workspace(&req.workspace)?;
        let caps = self.caps(req.max_chars, req.max_bytes, req.max_lines)?;
        let limit = limit("limit", req.limit, 50, 200)?;
        let cursor = cursor(req.cursor)?;
        let from = refs::name("from", &req.from)?;
        let to = refs::name("to", &req.to)?;
        let doc_arg = req.doc.clone();
        let resp = self
            .store
            .readers
            .run(move |conn| {
                let fs = refs::sources(conn, &ws, "from", &from)?;
                let ts = refs::sources(conn, &ws, "to", &to)?;
                let doc = refs::graph_doc_between(
                    conn,
                    &ws,
                    doc_arg.as_deref(),
                    &[&to, &from],
                    "branchmind_graph_diff",
                    json!({ "from": from, "to": to }),
                )?;
                let upper = cursor.unwrap_or(ALL);
                let from_nodes = all_nodes(conn, &ws, &fs, &doc)?;
                let from_edges = all_edges(conn, &ws, &fs, &doc)?;
                let mut changes: Vec<GraphChange> = Vec::new();
                for (id, n) in all_nodes(conn, &ws, &ts, &doc)? {
                    if n.last_seq >= upper {
                        continue;
                    }
                    let differs = match from_nodes.get(&id) {
                        Some(f) => !same_node(f, &n),
                        None => !n.deleted,
                    };
                    if differs {
                        changes.push(GraphChange::Node { id, to: n });
                    }
                }
                for (k, e) in all_edges(conn, &ws, &ts, &doc)? {
                    if e.last_seq >= upper {
                        continue;
                    }
                    let differs = match from_edges.get(&k) {
                        Some(f) => !same_edge(f, &e),
                        None => !e.deleted,
                    };
                    if differs {
                        changes.push(GraphChange::Edge {
                            key: EdgeKey {
                                from: k.0,
                                rel: k.1,
                                to: k.2,
                            },
                            to: e,
                        });
                    }
                }
                changes.sort_by_key(|c| std::cmp::Reverse(change_seq(c)));
                let (changes, pagination) = page_of(changes, cursor, limit, change_seq);
                Ok(GraphDiffResponse {
                    from,
                    to,
                    doc,
                    pagination,
                    changes,
                    truncated: false,
                    budget: blank_budget(),
                })
            })
            .await?;
        budget::fit(resp, &caps)
    }

    /// `branchmind_graph_merge`: 3-way merge of the keys `from` changed since it branched, into
    /// its base.
    pub async fn graph_merge(&self, req: MergeRequest) -> Result<GraphMergeResponse> {
        let ws = refs::workspace(&req.workspace)?;
        let limit = limit("limit", req.limit, 200, 1000)?;
        let cursor = cursor(req.cursor)?;
        let from = refs::name("from", &req.from)?;
        let into = refs::name("into", &req.into)?;
        let doc_arg = req.doc.clone();
        let dry_run = req.dry_run.unwrap_or(false);
        self.store
            .writer
            .run(move |ctx| {
                let fb = refs::existing_branch(ctx, &ws, "from", &from)?;
                refs::existing_branch(ctx, &ws, "into", &into)?;
                if fb.base_branch.as_deref() != Some(into.as_str()) {
                    return Err(Error::new(
                        ErrorCode::MergeIntoNonBase,
                        format!(
                            "a graph merges only into its base branch: {from:?} was created from {}, not {into:?}",
                            fb.base_branch.as_deref().map_or("nothing (it is a root branch)".to_string(), |b| format!("{b:?}"))
                        ),
                    )
                    .with_details(json!({ "field": "into", "from": from, "into": into, "base_branch": fb.base_branch })));
                }
                let doc = refs::graph_doc_between(
                    ctx,
                    &ws,
                    doc_arg.as_deref(),
                    &[&into],
                    "branchmind_graph_merge",
                    json!({ "from": from, "into": into }),
                )?;
                let from_sources = refs::sources(ctx, &ws, "from", &from)?;
                let base_sources = from_sources[1..].to_vec();
                let into_sources = refs::sources(ctx, &ws, "into", &into)?;
                let own = [(from.clone(), ALL)];
                let upper = cursor.map_or(ALL, |c| c - 1);
                // The keys `from` itself changed, newest first.
                let mut changed: Vec<Changed> = Vec::new();
                {
                    let mut stmt = ctx.prepare_cached(&format!(
                        "SELECT {NODE_COLUMNS} FROM graph_nodes v WHERE workspace = ?1 AND branch = ?2
                           AND doc = ?3 AND seq <= ?4 AND NOT EXISTS (SELECT 1 FROM graph_nodes n
                             WHERE n.workspace = ?1 AND n.branch = ?2 AND n.doc = ?3 AND n.id = v.id
                               AND n.seq > v.seq)
                         ORDER BY seq DESC LIMIT ?5"
                    ))?;
                    for n in stmt.query_map(params![ws, from, doc, upper, limit + 1], node_from_row)? {
                        changed.push(Changed::Node(n?));
                    }
                    let mut stmt = ctx.prepare_cached(&format!(
                        "SELECT {EDGE_COLUMNS} FROM graph_edges v WHERE workspace = ?1 AND branch = ?2
                           AND doc = ?3 AND seq <= ?4 AND NOT EXISTS (SELECT 1 FROM graph_edges n
                             WHERE n.workspace = ?1 AND n.branch = ?2 AND n.doc = ?3 AND n.src = v.src
                               AND n.rel = v.rel AND n.dst = v.dst AND n.seq > v.seq)
                         ORDER BY seq DESC LIMIT ?5"
                    ))?;
                    for e in stmt.query_map(params![ws, from, doc, upper, limit + 1], edge_from_row)? {
                        changed.push(Changed::Edge(e?));
                    }
                }
                let _ = own;
                changed.sort_by_key(|c| std::cmp::Reverse(c.seq()));
                let has_more = changed.len() as i64 > limit;
                changed.truncate(limit as usize);
                let next_cursor = if has_more { changed.last().map(Changed::seq) } else { None };
                let count = changed.len() as i64;
                let (mut merged, mut skipped, mut created) = (0i64, 0i64, 0i64);
                let mut conflict_ids = Vec::new();
                for c in changed.into_iter().rev() {
                    // (kind, key, theirs, base, ours) as JSON, and whether ours equals base / theirs.
                    let (kind, key, theirs_seq, theirs, base, ours, same_ours_theirs, same_ours_base) = match &c {
                        Changed::Node(t) => {
                            let base = node_at(ctx, &ws, &base_sources, &doc, &t.id)?;
                            let ours = node_at(ctx, &ws, &into_sources, &doc, &t.id)?;
                            let eq = |a: &Option<GraphNode>, b: &Option<GraphNode>| match (live(a.clone(), |n| n.deleted), live(b.clone(), |n| n.deleted)) {
                                (None, None) => true,
                                (Some(x), Some(y)) => same_node(&x, &y),
                                _ => false,
                            };
                            let theirs = Some(t.clone());
                            (
                                "node",
                                t.id.clone(),
                                t.last_seq,
                                serde_json::to_value(t).ok(),
                                base.as_ref().and_then(|b| serde_json::to_value(b).ok()),
                                ours.as_ref().and_then(|o| serde_json::to_value(o).ok()),
                                eq(&ours, &theirs),
                                eq(&ours, &base),
                            )
                        }
                        Changed::Edge(t) => {
                            let k = EdgeKey { from: t.from.clone(), rel: t.rel.clone(), to: t.to.clone() };
                            let base = edge_at(ctx, &ws, &base_sources, &doc, &k)?;
                            let ours = edge_at(ctx, &ws, &into_sources, &doc, &k)?;
                            let eq = |a: &Option<GraphEdge>, b: &Option<GraphEdge>| match (live(a.clone(), |e| e.deleted), live(b.clone(), |e| e.deleted)) {
                                (None, None) => true,
                                (Some(x), Some(y)) => same_edge(&x, &y),
                                _ => false,
                            };
                            let theirs = Some(t.clone());
                            (
                                "edge",
                                edge_key_string(t),
                                t.last_seq,
                                serde_json::to_value(t).ok(),
                                base.as_ref().and_then(|b| serde_json::to_value(b).ok()),
                                ours.as_ref().and_then(|o| serde_json::to_value(o).ok()),
                                eq(&ours, &theirs),
                                eq(&ours, &base),
                            )
                        }
                    };
                    if same_ours_theirs {
                        skipped += 1;
                        continue;
                    }
                    if same_ours_base {
                        merged += 1;
                        if !dry_run {
                            match &c {
                                Changed::Node(t) => {
                                    write_node(ctx, &ws, &into, &doc, t)?;
                                }
                                Changed::Edge(t) => {
                                    write_edge(ctx, &ws, &into, &doc, t)?;
                                }
                            }
                        }
                        continue;
                    }
                    let conflict_id = format!(
                        "CONFLICT-{:016x}",
                        fnv1a(&[&ws, &from, &into, &doc, kind, &key, &theirs_seq.to_string()])
                    );
                    let known: bool = ctx
                        .prepare_cached("SELECT 1 FROM graph_conflicts WHERE conflict_id = ?1")?
                        .exists([&conflict_id])?;
                    if known {
                        skipped += 1;
                    } else {
                        created += 1;
                        if !dry_run {
                            ctx.prepare_cached(
                                "INSERT INTO graph_conflicts(conflict_id, seq, workspace, from_branch,
                                   into_branch, doc, kind, key, base_json, theirs_json, ours_json,
                                   status, created_at_ms)
                                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'open', ?12)",
                            )?
                            .execute(params![
                                conflict_id,
                                ctx.next_seq(),
                                ws,
                                from,
                                into,
                                doc,
                                kind,
                                key,
                                base.map(|v| v.to_string()),
                                theirs.map(|v| v.to_string()),
                                ours.map(|v| v.to_string()),
                                now_ms()
                            ])?;
                        }
                    }
                    conflict_ids.push(conflict_id);
                }
                Ok(GraphMergeResponse {
                    from,
                    into,
                    doc,
                    merged,
                    skipped,
                    conflicts_created: created,
                    conflict_ids,
                    dry_run,
                    pagination: SeqPagination {
                        cursor,
                        next_cursor,
                        has_more,
                        limit,
                        count,
                    },
                })
            })
            .await
    }

    /// `branchmind_graph_conflicts`.
    pub async fn graph_conflicts(
        &self,
        req: GraphConflictsRequest,
    ) -> Result<GraphConflictsResponse> {
        let ws = refs::workspace(&req.workspace)?;
        let caps = self.caps(req.max_chars, req.max_bytes, req.max_lines)?;
        let limit = limit("limit", req.limit, 50, 200)?;
        let cursor = cursor(req.cursor)?;
        let into = refs::name("into", &req.into)?;
        let doc_arg = req.doc.clone();
        let status = match req.status.as_deref() {
            None | Some("") => None,
            Some(s @ ("open" | "resolved")) => Some(s.to_string()),
            Some(other) => {
                return Err(Error::invalid_field(
                    "status",
                    format!("status must be \"open\" or \"resolved\", got {other:?}"),
                ));
            }
        };
        let resp = self
            .store
            .readers
            .run(move |conn| {
                refs::existing_branch(conn, &ws, "into", &into)?;
                let doc = refs::graph_doc_between(
                    conn,
                    &ws,
                    doc_arg.as_deref(),
                    &[&into],
                    "branchmind_graph_conflicts",
                    json!({ "into": into }),
                )?;
                let mut stmt = conn.prepare_cached(
                    "SELECT conflict_id, kind, key, status, created_at_ms, seq FROM graph_conflicts
                     WHERE workspace = ?1 AND into_branch = ?2 AND doc = ?3 AND seq < ?4
                       AND (?5 IS NULL OR status = ?5)
                     ORDER BY seq DESC LIMIT ?6",
                )?;
                let conflicts: Vec<ConflictSummary> = stmt
                    .query_map(
                        params![ws, into, doc, cursor.unwrap_or(ALL), status, limit + 1],
                        |r| {
                            Ok(ConflictSummary {
                                conflict_id: r.get(0)?,
                                kind: r.get(1)?,
                                key: r.get(2)?,
                                status: r.get(3)?,
                                created_at_ms: r.get(4)?,
                                seq: r.get(5)?,
                            })
                        },
                    )?
                    .collect::<rusqlite::Result<_>>()?;
                let (conflicts, pagination) = page_of(conflicts, cursor, limit, |c| c.seq);
                Ok(GraphConflictsResponse {
                    into,
                    doc,
                    pagination,
                    conflicts,
                    truncated: false,
                    budget: blank_budget(),
                })
            })
            .await?;
        budget::fit(resp, &caps)
    }

    /// `branchmind_graph_conflict_show`.
    pub async fn graph_conflict_show(
        &self,
        req: ConflictShowRequest,
    ) -> Result<ConflictShowResponse> {
        let ws = refs::workspace(&req.workspace)?;
        let id = req.conflict_id.trim().to_string();
        self.store
            .readers
            .run(move |conn| {
                Ok(ConflictShowResponse {
                    conflict: load_conflict(conn, &ws, &id)?,
                })
            })
            .await
    }

    /// `branchmind_graph_conflict_resolve`.
    pub async fn graph_conflict_resolve(
        &self,
        req: ConflictResolveRequest,
    ) -> Result<ConflictResolveResponse> {
        let ws = refs::workspace(&req.workspace)?;
        let id = req.conflict_id.trim().to_string();
        let resolution = req.resolution;
        self.store
            .writer
            .run(move |ctx| {
                let c = load_conflict(ctx, &ws, &id)?;
                if c.status == "resolved" {
                    return Ok(ConflictResolveResponse {
                        conflict_id: id,
                        status: c.status,
                        applied: false,
                        last_seq: None,
                    });
                }
                let mut last_seq = None;
                let (label, applied) = match resolution {
                    Resolution::UseInto => ("use_into", false),
                    Resolution::UseFrom => {
                        if let Some(theirs) = c.theirs.clone() {
                            let seq = if c.kind == "node" {
                                let n: GraphNode = serde_json::from_value(theirs).map_err(|e| Error::internal("reading a conflict", e))?;
                                write_node(ctx, &ws, &c.into, &c.doc, &n)?.last_seq
                            } else {
                                let e: GraphEdge = serde_json::from_value(theirs).map_err(|e| Error::internal("reading a conflict", e))?;
                                write_edge(ctx, &ws, &c.into, &c.doc, &e)?.last_seq
                            };
                            last_seq = Some(seq);
                        }
                        ("use_from", last_seq.is_some())
                    }
                };
                ctx.prepare_cached(
                    "UPDATE graph_conflicts SET status = 'resolved', resolution = ?2, resolved_at_ms = ?3
                     WHERE conflict_id = ?1",
                )?
                .execute(params![id, label, now_ms()])?;
                Ok(ConflictResolveResponse {
                    conflict_id: id,
                    status: "resolved".into(),
                    applied,
                    last_seq,
                })
            })
            .await
    }
}

fn load_conflict(conn: &Connection, ws: &str, id: &str) -> Result<Conflict> {
    conn.prepare_cached(
        "SELECT conflict_id, kind, key, from_branch, into_branch, doc, status, base_json,
           theirs_json, ours_json, created_at_ms, resolved_at_ms, resolution
         FROM graph_conflicts WHERE workspace = ?1 AND conflict_id = ?2",
    )?
    .query_row(params![ws, id], |r| {
        Ok(Conflict {
            conflict_id: r.get(0)?,
            kind: r.get(1)?,
            key: r.get(2)?,
            from: r.get(3)?,
            into: r.get(4)?,
            doc: r.get(5)?,
            status: r.get(6)?,
            base: parse_json(r.get(7)?),
            theirs: parse_json(r.get(8)?),
            ours: parse_json(r.get(9)?),
            created_at_ms: r.get(10)?,
            resolved_at_ms: r.get(11)?,
            resolution: r.get(12)?,
        })
    })
    .optional()?
    .ok_or_else(|| {
        super::suggest(
            Error::not_found(format!("no conflict {id:?} in workspace {ws:?}"))
                .with_details(json!({ "field": "conflict_id", "conflict_id": id })),
            "branchmind_graph_conflicts",
            json!({ "workspace": ws, "into": "<the merge destination>" }),
        )
    })
}

/// Counts of live nodes by type, for the card types.
pub fn count_by_type(nodes: &HashMap<String, GraphNode>, types: &[&str]) -> BTreeMap<String, i64> {
    let mut by: BTreeMap<String, i64> = BTreeMap::new();
    for n in nodes
        .values()
        .filter(|n| !n.deleted && types.contains(&n.node_type.as_str()))
    {
        *by.entry(n.node_type.clone()).or_default() += 1;
    }
    by
}

/// The card-type filter of [`query_nodes`], for think_context.
pub fn card_filters(types: &[&str]) -> (String, Vec<Sql>) {
    node_filters(&GraphQueryRequest::default(), Some(types)).expect("no user input")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_tags_and_reserved_prefixes() {
        assert!(key("id", "h1").is_ok());
        assert!(key("id", "a|b").is_err());
        assert!(key("id", "").is_err());
        assert!(user_key("id", "task:TASK-001").is_err());
        assert!(key("id", "task:TASK-001").is_ok());
        assert_eq!(
            tags(
                "tags",
                Some(&["B".into(), " a ".into(), "b".into(), "".into()])
            )
            .unwrap(),
            vec!["a", "b"]
        );
    }

    #[test]
    fn conflict_ids_are_stable() {
        assert_eq!(fnv1a(&["a", "b"]), fnv1a(&["a", "b"]));
        assert_ne!(fnv1a(&["ab", ""]), fnv1a(&["a", "b"]));
    }
}
