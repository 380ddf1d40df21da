//! The 3-way merge of a branch's graph into its base, and its conflicts. For each key `from`
//! itself changed, it compares `from`'s state, `into`'s state at `from.base_seq` and `into`'s
//! state now; a key both sides changed differently becomes a conflict row whose id hashes
//! `(workspace, from, into, doc, key, from's version)`, so rerunning finds it again.

use moss_client::ErrorCode;
use moss_client::reasoning::*;
use serde_json::json;

use super::versions::{
    EDGE_COLUMNS, NODE_COLUMNS, edge_at, edge_from_row, live, node_at, node_from_row, same_edge,
    same_node, write_edge, write_node,
};
use crate::budget::Fit;
use crate::budget::blank_budget;
use crate::error::{Error, Result};
use crate::read::Read;
use crate::reasoning::docs::{keep_page, page_of};
use crate::reasoning::refs::{self, ALL};
use crate::reasoning::{Reasoning, cursor, limit, now_ms, parse_json, suggest};
use crate::store::engine::Db;

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
                let db = ctx.db();
                let fb = refs::existing_branch(db, &ws, "from", &from)?;
                refs::existing_branch(db, &ws, "into", &into)?;
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
                    db,
                    &ws,
                    doc_arg.as_deref(),
                    &[&into],
                    "branchmind_graph_merge",
                    json!({ "from": from, "into": into }),
                )?;
                let from_sources = refs::sources(db, &ws, "from", &from)?;
                let base_sources = from_sources[1..].to_vec();
                let into_sources = refs::sources(db, &ws, "into", &into)?;
                let own = [(from.clone(), ALL)];
                let upper = cursor.map_or(ALL, |c| c - 1);
                // The keys `from` itself changed, newest first.
                let mut changed: Vec<Changed> = Vec::new();
                {
                    let p = crate::db_params![&ws, &from, &doc, upper, limit + 1];
                    db.query_each(
                        &format!(
                            "SELECT {NODE_COLUMNS} FROM graph_nodes v WHERE workspace = ?1 AND branch = ?2
                           AND doc = ?3 AND seq <= ?4 AND NOT EXISTS (SELECT 1 FROM graph_nodes n
                             WHERE n.workspace = ?1 AND n.branch = ?2 AND n.doc = ?3 AND n.id = v.id
                               AND n.seq > v.seq)
                         ORDER BY seq DESC LIMIT ?5"
                        ),
                        p,
                        |r| {
                            changed.push(Changed::Node(node_from_row(r)?));
                            Ok(true)
                        },
                    )?;
                    db.query_each(
                        &format!(
                            "SELECT {EDGE_COLUMNS} FROM graph_edges v WHERE workspace = ?1 AND branch = ?2
                           AND doc = ?3 AND seq <= ?4 AND NOT EXISTS (SELECT 1 FROM graph_edges n
                             WHERE n.workspace = ?1 AND n.branch = ?2 AND n.doc = ?3 AND n.src = v.src
                               AND n.rel = v.rel AND n.dst = v.dst AND n.seq > v.seq)
                         ORDER BY seq DESC LIMIT ?5"
                        ),
                        p,
                        |r| {
                            changed.push(Changed::Edge(edge_from_row(r)?));
                            Ok(true)
                        },
                    )?;
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
                            let base = node_at(db, &ws, &base_sources, &doc, &t.id)?;
                            let ours = node_at(db, &ws, &into_sources, &doc, &t.id)?;
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
                            let base = edge_at(db, &ws, &base_sources, &doc, &k)?;
                            let ours = edge_at(db, &ws, &into_sources, &doc, &k)?;
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
                    let known: bool = db
                        .query_opt(
                            "SELECT 1 FROM graph_conflicts WHERE conflict_id = ?1",
                            crate::db_params![&conflict_id],
                            |_| Ok(()),
                        )?
                        .is_some();
                    if known {
                        skipped += 1;
                    } else {
                        created += 1;
                        if !dry_run {
                            let seq = ctx.next_seq();
                            let (base, theirs, ours) = (
                                base.map(|v| v.to_string()),
                                theirs.map(|v| v.to_string()),
                                ours.map(|v| v.to_string()),
                            );
                            db.execute(
                                "INSERT INTO graph_conflicts(conflict_id, seq, workspace, from_branch,
                                   into_branch, doc, kind, key, base_json, theirs_json, ours_json,
                                   status, created_at_ms)
                                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'open', ?12)",
                                crate::db_params![
                                    &conflict_id,
                                    seq,
                                    &ws,
                                    &from,
                                    &into,
                                    &doc,
                                    kind,
                                    &key,
                                    base.as_ref(),
                                    theirs.as_ref(),
                                    ours.as_ref(),
                                    now_ms()
                                ],
                            )?;
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
        let read = Read::new(self.config.output_max_chars, &req)?;
        let (limit, cursor) = read.page(req.limit, req.cursor, 50, 200)?;
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
        read.run_db(&self.store, move |db, ws| {
            refs::existing_branch(db, &ws, "into", &into)?;
            let doc = refs::graph_doc_between(
                db,
                &ws,
                doc_arg.as_deref(),
                &[&into],
                "branchmind_graph_conflicts",
                json!({ "into": into }),
            )?;
            let conflicts: Vec<ConflictSummary> = db.query_map(
                "SELECT conflict_id, kind, key, status, created_at_ms, seq FROM graph_conflicts
                 WHERE workspace = ?1 AND into_branch = ?2 AND doc = ?3 AND seq < ?4
                   AND (CAST(?5 AS TEXT) IS NULL OR status = ?5)
                 ORDER BY seq DESC LIMIT ?6",
                crate::db_params![
                    &ws,
                    &into,
                    &doc,
                    cursor.unwrap_or(ALL),
                    status.as_ref(),
                    limit + 1
                ],
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
            )?;
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
        .await
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
            .run_db(move |db| {
                Ok(ConflictShowResponse {
                    conflict: load_conflict(db, &ws, &id)?,
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
                let c = load_conflict(ctx.db(), &ws, &id)?;
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
                ctx.db().execute(
                    "UPDATE graph_conflicts SET status = 'resolved', resolution = ?2, resolved_at_ms = ?3
                     WHERE conflict_id = ?1",
                    crate::db_params![&id, label, now_ms()],
                )?;
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

fn load_conflict(db: Db<'_>, ws: &str, id: &str) -> Result<Conflict> {
    db.query_opt(
        "SELECT conflict_id, kind, key, from_branch, into_branch, doc, status, base_json,
           theirs_json, ours_json, created_at_ms, resolved_at_ms, resolution
         FROM graph_conflicts WHERE workspace = ?1 AND conflict_id = ?2",
        crate::db_params![ws, id],
        |r| {
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
        },
    )?
    .ok_or_else(|| {
        suggest(
            Error::not_found(format!("no conflict {id:?} in workspace {ws:?}"))
                .with_details(json!({ "field": "conflict_id", "conflict_id": id })),
            "branchmind_graph_conflicts",
            json!({ "workspace": ws, "into": "<the merge destination>" }),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflict_ids_are_stable() {
        assert_eq!(fnv1a(&["a", "b"]), fnv1a(&["a", "b"]));
        assert_ne!(fnv1a(&["ab", ""]), fnv1a(&["a", "b"]));
    }
}
