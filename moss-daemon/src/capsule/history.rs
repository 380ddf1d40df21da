//! A capsule's history: `capsule_restore` (undelete), `capsule_lineage` (what it was based on,
//! what was based on it) and `capsule_clone` (a copy that records its source as lineage).

use std::collections::{HashSet, VecDeque};

use moss_client::ErrorCode;
use moss_client::capsule::{
    Capsule, CapsuleHandle, CapsuleRef, CloneRequest, LineageNode, LineageRequest, LineageResponse,
    RestoreMode, RestoreRequest, RestoreResponse,
};
use rusqlite::{Connection, params};
use serde_json::json;

use super::fields::Address;
use super::query::{self, SUMMARY_COLS};
use super::{
    Capsules, NewCapsule, RowWrite, Times, Wanted, based_on_json, name_holder, not_found,
    run_id_value, write_row,
};
use crate::error::{Error, Result};
use crate::store::now;
use crate::{bounds, names, tags};

/// Lineage walks: default and most steps, and most nodes each way.
pub const LINEAGE_DEPTH: i64 = 3;
pub const LINEAGE_DEPTH_MAX: i64 = 10;
pub const LINEAGE_NODES_MAX: usize = 100;

/// The capsule a ref leads to now: by id, or the active capsule of the name, else the most
/// recently changed deleted one. `None` for a malformed ref or nothing there.
fn lookup(conn: &Connection, r: &CapsuleRef) -> Result<Option<Capsule>> {
    match Address::resolve(r.id.as_deref(), r.workspace.as_deref(), r.name.as_deref()) {
        Ok(addr) => query::find(conn, &addr, true, false),
        Err(_) => Ok(None),
    }
}

/// Whether `r` points at `c`: its id, or its workspace and name.
fn points_at(r: &CapsuleRef, c: &Capsule) -> bool {
    if let Some(id) = r.id.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        return id == c.id;
    }
    match (&r.name, &c.name_norm) {
        (Some(name), Some(norm)) => {
            names::normalize(name) == *norm
                && names::normalize(r.workspace.as_deref().unwrap_or("default")) == c.workspace_norm
        }
        _ => false,
    }
}

/// The ref a child is named by in a lineage answer: its name when it has one, else its id.
fn ref_of(c: &Capsule) -> CapsuleRef {
    match &c.name {
        Some(n) => CapsuleRef::by_name(c.workspace.clone(), n.clone()),
        None => CapsuleRef::by_id(c.id.clone()),
    }
}

impl Capsules {
    /// `capsule_restore`: a soft-deleted capsule made active again, in one writer job.
    pub async fn restore(&self, req: RestoreRequest) -> Result<RestoreResponse> {
        let addr = Address::resolve(
            req.id.as_deref(),
            req.workspace.as_deref(),
            req.name.as_deref(),
        )?;
        let mode = req.mode.unwrap_or_default();
        self.store
            .writer
            .run(move |conn| {
                let Some(c) = query::find(conn, &addr, true, false)? else {
                    return Err(addr.not_found());
                };
                if c.deleted_at.is_none() {
                    return Err(Error::invalid_field(
                        if matches!(addr, Address::Id(_)) {
                            "id"
                        } else {
                            "name"
                        },
                        format!(
                            "capsule {} is not deleted; only a soft-deleted capsule can be \
                             restored",
                            addr.describe()
                        ),
                    ));
                }
                let mut name = c.name.clone();
                let mut replaced_id = None;
                if let (Some(raw), Some(norm)) = (&c.name, &c.name_norm)
                    && let Some(holder) = query::active_by_name(conn, &c.workspace_norm, norm)?
                {
                    match mode {
                        RestoreMode::Error => {
                            return Err(Error::new(
                                ErrorCode::NameAlreadyExists,
                                format!(
                                    "the active capsule {} (id {}) holds the name {raw:?} now; \
                                     restore with mode \"replace\" to delete it first, or \
                                     \"rename\" to restore under a free name",
                                    c.workspace, holder.id
                                ),
                            )
                            .with_details(json!({
                                "workspace": c.workspace, "name": raw, "id": holder.id
                            })));
                        }
                        RestoreMode::Replace => {
                            let t = now();
                            conn.prepare_cached(
                                "UPDATE capsules SET deleted_at = ?1, updated_at = ?1, seq = ?2,
                                   revision = revision + 1 WHERE id = ?3",
                            )?
                            .execute(params![
                                t,
                                conn.next_seq(),
                                holder.id
                            ])?;
                            replaced_id = Some(holder.id);
                        }
                        RestoreMode::Rename => {
                            let free = (1..)
                                .map(|k| format!("{raw}-{k}"))
                                .find_map(|candidate| {
                                    let norm = names::normalize(&candidate);
                                    match query::active_by_name(conn, &c.workspace_norm, &norm) {
                                        Ok(None) => Some(Ok((candidate, norm))),
                                        Ok(Some(_)) => None,
                                        Err(e) => Some(Err(e)),
                                    }
                                })
                                .expect("some suffix is free")?;
                            conn.prepare_cached(
                                "UPDATE capsules SET name_raw = ?1, name_norm = ?2 WHERE id = ?3",
                            )?
                            .execute(params![free.0, free.1, c.id])?;
                            name = Some(free.0);
                        }
                    }
                }
                conn.prepare_cached(
                    "UPDATE capsules SET deleted_at = NULL, updated_at = ?1, seq = ?2,
                       revision = revision + 1 WHERE id = ?3",
                )?
                .execute(params![now(), conn.next_seq(), c.id])?;
                conn.capsules_changed();
                Ok(RestoreResponse {
                    fetch_key: query::fetch_key(&c.id, &c.workspace, name.as_deref()),
                    id: c.id,
                    name,
                    replaced_id,
                    revision: c.revision + 1,
                })
            })
            .await
    }

    /// `capsule_lineage`: the capsules this one was based on and those based on it, breadth
    /// first, bounded by `depth` and [`LINEAGE_NODES_MAX`] each way.
    pub async fn lineage(&self, req: LineageRequest) -> Result<LineageResponse> {
        let addr = Address::resolve(
            req.id.as_deref(),
            req.workspace.as_deref(),
            req.name.as_deref(),
        )?;
        let depth = req.depth.unwrap_or(LINEAGE_DEPTH);
        if !(1..=LINEAGE_DEPTH_MAX).contains(&depth) {
            return Err(Error::invalid_field(
                "depth",
                format!("depth must be 1 to {LINEAGE_DEPTH_MAX}, got {depth}"),
            ));
        }
        self.store
            .readers
            .run(move |conn| {
                let Some(root) = query::find(conn, &addr, true, false)? else {
                    return Err(not_found(conn, &addr, Wanted::Read));
                };
                let mut truncated = false;
                let based_on = walk_up(conn, &root, depth, &mut truncated)?;
                let derived = walk_down(conn, &root, depth, &mut truncated)?;
                Ok(LineageResponse {
                    capsule: root,
                    based_on,
                    derived,
                    truncated,
                })
            })
            .await
    }

    /// `capsule_clone`: a new capsule with the source's text and metadata (or the overrides),
    /// a fresh id and times, and `based_on: [source]`.
    pub async fn clone_capsule(&self, req: CloneRequest) -> Result<CapsuleHandle> {
        let source_addr = Address::resolve(
            req.source.id.as_deref(),
            req.source.workspace.as_deref(),
            req.source.name.as_deref(),
        )
        .map_err(|mut e| {
            e.0.message = format!("source: {}", e.0.message);
            e
        })?;
        let set = req.set.unwrap_or_default();
        if let (Some(a), Some(b)) = (&req.target.run_id, &set.run_id)
            && a.trim() != b.trim()
        {
            return Err(Error::invalid_field(
                "set.run_id",
                "target.run_id and set.run_id differ; give the run id once",
            ));
        }
        let name = names::name(req.target.name.as_deref())?;
        let title = bounds::title(req.target.title.as_deref())?;
        let tags = match &set.tags {
            Some(t) => Some(tags::clean(Some(t))?),
            None => None,
        };
        let run_id = match req.target.run_id.as_ref().or(set.run_id.as_ref()) {
            Some(r) => Some(run_id_value(Some(r))?),
            None => None,
        };
        let phase = match &set.phase {
            Some(p) => Some(bounds::handle("phase", Some(p))?),
            None => None,
        };
        let role = match &set.role {
            Some(r) => Some(bounds::handle("role", Some(r))?),
            None => None,
        };
        let based_on = based_on_json(Some(std::slice::from_ref(&req.source)))?;
        let target_ws = req.target.workspace.clone();
        self.store
            .writer
            .run(move |conn| {
                let Some(src) = query::find(conn, &source_addr, false, true)? else {
                    return Err(not_found(conn, &source_addr, Wanted::ReadActive));
                };
                let text = src.capsule_text.clone().unwrap_or_default();
                let workspace = match target_ws.as_deref() {
                    Some(w) if !w.trim().is_empty() => names::workspace(Some(w))?,
                    _ => names::Workspace {
                        raw: src.workspace.clone(),
                        norm: src.workspace_norm.clone(),
                    },
                };
                let c = NewCapsule {
                    title: title
                        .or_else(|| name.as_ref().map(|(raw, _)| raw.clone()))
                        .or(src.title.clone()),
                    chars: text.chars().count() as i64,
                    tokens: super::fields::tokens_estimate(&text),
                    text,
                    tags_json: match tags {
                        Some(t) => tags::to_json(t.as_deref()),
                        None => tags::to_json(src.tags.as_deref()),
                    },
                    source: src.source.clone(),
                    run_id: run_id.unwrap_or(src.run_id.clone()),
                    phase: phase.unwrap_or(src.phase.clone()),
                    role: role.unwrap_or(src.role.clone()),
                    based_on_json: based_on,
                    workspace,
                    name,
                };
                if let Some(holder) = name_holder(conn, &c)? {
                    return Err(super::name_taken(&c, holder.id));
                }
                let t = now();
                let id = ulid::Ulid::generate().to_string();
                let times = Times {
                    created_at: t,
                    updated_at: t,
                    deleted_at: None,
                };
                write_row(conn, RowWrite::Insert, &id, &c, &times, conn.next_seq())?;
                conn.capsules_changed();
                Ok(CapsuleHandle {
                    fetch_key: query::fetch_key(
                        &id,
                        &c.workspace.raw,
                        c.name.as_ref().map(|(r, _)| r.as_str()),
                    ),
                    id,
                    revision: 1,
                    updated_at: t,
                })
            })
            .await
    }
}

/// Breadth first up the `based_on` refs.
fn walk_up(
    conn: &Connection,
    root: &Capsule,
    depth: i64,
    truncated: &mut bool,
) -> Result<Vec<LineageNode>> {
    let mut out: Vec<LineageNode> = Vec::new();
    let mut seen: HashSet<String> = HashSet::from([root.id.clone()]);
    let mut queue: VecDeque<(Option<usize>, i64, Vec<CapsuleRef>)> = VecDeque::new();
    queue.push_back((None, 1, root.based_on.clone().unwrap_or_default()));
    while let Some((via, d, refs)) = queue.pop_front() {
        for r in refs {
            if out.len() >= LINEAGE_NODES_MAX {
                *truncated = true;
                return Ok(out);
            }
            let capsule = lookup(conn, &r)?;
            if let Some(c) = &capsule
                && !seen.insert(c.id.clone())
            {
                continue;
            }
            let parents = capsule.as_ref().and_then(|c| c.based_on.clone());
            out.push(LineageNode {
                depth: d,
                reference: r,
                capsule,
                via,
            });
            if let Some(p) = parents.filter(|p| !p.is_empty()) {
                if d < depth {
                    queue.push_back((Some(out.len() - 1), d + 1, p));
                } else {
                    *truncated = true;
                }
            }
        }
    }
    Ok(out)
}

/// Breadth first down: capsules whose `based_on` points at the node.
fn walk_down(
    conn: &Connection,
    root: &Capsule,
    depth: i64,
    truncated: &mut bool,
) -> Result<Vec<LineageNode>> {
    // Every capsule with a lineage, read once through the partial index.
    let with_lineage: Vec<Capsule> = conn
        .prepare_cached(&format!(
            "SELECT {SUMMARY_COLS} FROM capsules INDEXED BY idx_capsules_based_on
             WHERE based_on_json IS NOT NULL"
        ))?
        .query_map([], query::capsule_from_row)?
        .collect::<rusqlite::Result<_>>()?;
    let mut out: Vec<LineageNode> = Vec::new();
    let mut seen: HashSet<String> = HashSet::from([root.id.clone()]);
    let mut queue: VecDeque<(Option<usize>, i64, Capsule)> = VecDeque::new();
    queue.push_back((None, 1, root.clone()));
    while let Some((via, d, parent)) = queue.pop_front() {
        for child in &with_lineage {
            let names_parent = child
                .based_on
                .as_deref()
                .unwrap_or_default()
                .iter()
                .any(|r| points_at(r, &parent));
            if !names_parent || !seen.insert(child.id.clone()) {
                continue;
            }
            if out.len() >= LINEAGE_NODES_MAX {
                *truncated = true;
                return Ok(out);
            }
            out.push(LineageNode {
                depth: d,
                reference: ref_of(child),
                capsule: Some(child.clone()),
                via,
            });
            if d < depth {
                queue.push_back((Some(out.len() - 1), d + 1, child.clone()));
            } else if with_lineage.iter().any(|g| {
                g.based_on
                    .as_deref()
                    .unwrap_or_default()
                    .iter()
                    .any(|r| points_at(r, child))
            }) {
                *truncated = true;
            }
        }
    }
    Ok(out)
}
