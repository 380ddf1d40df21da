//! Reads of a view: node queries (an indexed scan of each source's latest versions, minus what
//! a nearer source shadows), the edges between the nodes found, validation, the diff of two
//! branches' graphs, and how their answers fit a budget.

use std::collections::{BTreeMap, HashMap, HashSet};

use moss_client::reasoning::*;
use serde_json::json;

use super::tags;
use super::versions::{
    EDGE_COLUMNS, NODE_COLUMNS, all_edges, all_nodes, edge_from_row, node_from_row, same_edge,
    same_node,
};
use crate::budget::blank_budget;
use crate::budget::{Fit, cut_text};
use crate::error::{Error, Result};
use crate::read::Read;
use crate::reasoning::docs::{keep_page, page_of};
use crate::reasoning::refs::{self, ALL, Naming};
use crate::reasoning::{Reasoning, limit};
use crate::store::engine::{Db, Engine, Value as Sql};

/// The filters of a node query, as SQL on `graph_nodes v` (in `engine`'s dialect) and its
/// parameters.
fn node_filters(
    req: &GraphQueryRequest,
    types_only: Option<&[&str]>,
    engine: Engine,
) -> Result<(String, Vec<Sql>)> {
    // The node's tags, one row each, as `value`.
    let tags_of = match engine {
        Engine::Sqlite => "json_each(v.tags_json)",
        Engine::Postgres => "jsonb_array_elements_text(v.tags_json::jsonb) AS t(value)",
    };
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
            " AND EXISTS (SELECT 1 FROM {tags_of} WHERE value IN ({}))",
            vec!["?"; any.len()].join(",")
        ));
        p.extend(any.into_iter().map(Sql::Text));
    }
    for t in tags("tags_all", req.tags_all.as_deref())? {
        sql.push_str(&format!(
            " AND EXISTS (SELECT 1 FROM {tags_of} WHERE value = ?)"
        ));
        p.push(Sql::Text(t));
    }
    if let Some(text) = req.text.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        sql.push_str(match engine {
            Engine::Sqlite => {
                " AND (instr(lower(v.id), ?) > 0 OR instr(lower(coalesce(v.title, '')), ?) > 0
                  OR instr(lower(coalesce(v.text, '')), ?) > 0)"
            }
            Engine::Postgres => {
                " AND (strpos(lower(v.id), ?) > 0 OR strpos(lower(coalesce(v.title, '')), ?) > 0
                  OR strpos(lower(coalesce(v.text, '')), ?) > 0)"
            }
        });
        let t = text.to_lowercase();
        p.extend([Sql::Text(t.clone()), Sql::Text(t.clone()), Sql::Text(t)]);
    }
    Ok((sql, p))
}

/// Whether a nearer source holds a version of node `id` (which then shadows this one).
fn node_shadowed(
    db: Db<'_>,
    ws: &str,
    nearer: &[(String, i64)],
    doc: &str,
    id: &str,
) -> Result<bool> {
    for (b, c) in nearer {
        if db
            .query_opt(
                "SELECT 1 FROM graph_nodes WHERE workspace = ?1 AND branch = ?2 AND doc = ?3 AND id = ?4
           AND seq <= ?5 LIMIT 1",
                crate::db_params![ws, b, doc, id, *c],
                |_| Ok(()),
            )?
            .is_some()
        {
            return Ok(true);
        }
    }
    Ok(false)
}

fn edge_shadowed(
    db: Db<'_>,
    ws: &str,
    nearer: &[(String, i64)],
    doc: &str,
    e: &GraphEdge,
) -> Result<bool> {
    for (b, c) in nearer {
        if db
            .query_opt(
                "SELECT 1 FROM graph_edges WHERE workspace = ?1 AND branch = ?2 AND doc = ?3 AND src = ?4
           AND rel = ?5 AND dst = ?6 AND seq <= ?7 LIMIT 1",
                crate::db_params![ws, b, doc, &e.from, &e.rel, &e.to, *c],
                |_| Ok(()),
            )?
            .is_some()
        {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The newest `limit + 1` live nodes of a view matching `filters`, below `cursor`: per source,
/// an indexed scan of its latest versions (newest first), minus those a nearer source shadows.
pub fn query_nodes(
    db: Db<'_>,
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
                Sql::Int(hi),
                Sql::Int(*c),
            ];
            p.extend(filters.1.iter().cloned());
            p.push(Sql::Int(chunk as i64));
            let rows: Vec<GraphNode> = db.query_map(&sql, &Sql::params(&p), node_from_row)?;
            let n = rows.len();
            for node in rows {
                hi = node.last_seq - 1;
                if i > 0 && node_shadowed(db, ws, &sources[..i], doc, &node.id)? {
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
    db: Db<'_>,
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
    let mut out = Vec::new();
    for (i, (b, c)) in sources.iter().enumerate() {
        let mut p: Vec<Sql> = vec![
            Sql::Text(ws.into()),
            Sql::Text(b.clone()),
            Sql::Text(doc.into()),
            Sql::Int(*c),
        ];
        p.extend(ids.iter().map(|s| Sql::Text(s.clone())));
        p.extend(ids.iter().map(|s| Sql::Text(s.clone())));
        p.push(Sql::Int(*c));
        for e in db.query_map(&sql, &Sql::params(&p), edge_from_row)? {
            if i > 0 && edge_shadowed(db, ws, &sources[..i], doc, &e)? {
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

impl Reasoning {
    /// `branchmind_graph_query`.
    pub async fn graph_query(&self, req: GraphQueryRequest) -> Result<GraphQueryResponse> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        let (limit, cursor) = read.page(req.limit, req.cursor, 50, 200)?;
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
        let filters = node_filters(&req, None, self.store.engine())?;
        read.run_db(&self.store, move |db, ws| {
            let (at, sources) =
                Reasoning::graph_address(db, &ws, &req, &Naming::graph("branchmind_graph_query"))?;
            let rows = query_nodes(db, &ws, &sources, &at.doc, &filters, cursor, limit)?;
            let (nodes, pagination) = page_of(rows, cursor, limit, |n| n.last_seq);
            let edges = if include_edges {
                let ids: Vec<String> = nodes.iter().map(|n| n.id.clone()).collect();
                edges_between(db, &ws, &sources, &at.doc, &ids, edges_limit as usize)?
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
        .await
    }

    /// `branchmind_graph_validate`: every live edge's endpoints must be live nodes.
    pub async fn graph_validate(&self, req: GraphValidateRequest) -> Result<GraphValidateResponse> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        let max_errors = limit("max_errors", req.max_errors, 50, 1000)?;
        read.run_db(&self.store, move |db, ws| {
            let (at, sources) = Reasoning::graph_address(
                db,
                &ws,
                &req,
                &Naming::graph("branchmind_graph_validate"),
            )?;
            let nodes = all_nodes(db, &ws, &sources, &at.doc)?;
            let live_nodes: HashSet<&str> = nodes
                .values()
                .filter(|n| !n.deleted)
                .map(|n| n.id.as_str())
                .collect();
            let mut edges: Vec<GraphEdge> = all_edges(db, &ws, &sources, &at.doc)?
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
        .await
    }

    /// `branchmind_graph_diff`: states in `to`'s graph that differ from `from`'s, tombstones
    /// included, newest first.
    pub async fn graph_diff(&self, req: GraphDiffRequest) -> Result<GraphDiffResponse> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        let (limit, cursor) = read.page(req.limit, req.cursor, 50, 200)?;
        let from = refs::name("from", &req.from)?;
        let to = refs::name("to", &req.to)?;
        let doc_arg = req.doc.clone();
        read.run_db(&self.store, move |db, ws| {
            let fs = refs::sources(db, &ws, "from", &from)?;
            let ts = refs::sources(db, &ws, "to", &to)?;
            let doc = refs::graph_doc_between(
                db,
                &ws,
                doc_arg.as_deref(),
                &[&to, &from],
                "branchmind_graph_diff",
                json!({ "from": from, "to": to }),
            )?;
            let upper = cursor.unwrap_or(ALL);
            let from_nodes = all_nodes(db, &ws, &fs, &doc)?;
            let from_edges = all_edges(db, &ws, &fs, &doc)?;
            let mut changes: Vec<GraphChange> = Vec::new();
            for (id, n) in all_nodes(db, &ws, &ts, &doc)? {
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
            for (k, e) in all_edges(db, &ws, &ts, &doc)? {
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
        .await
    }
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

/// The card-type filter of [`query_nodes`] on `engine`, for think_context.
pub fn card_filters(types: &[&str], engine: Engine) -> (String, Vec<Sql>) {
    node_filters(&GraphQueryRequest::default(), Some(types), engine).expect("no user input")
}
