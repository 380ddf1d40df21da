//! A capsule's history: `capsule_restore` (undelete), `capsule_lineage` (what it was based on,
//! what was based on it), `capsule_clone` (a copy that records its source as lineage),
//! versions (`capsule_versions`, `capsule_fetch` with `version`) and `capsule_diff`.

use std::collections::{HashSet, VecDeque};

use moss_client::ErrorCode;
use moss_client::capsule::{
    Capsule, CapsuleHandle, CapsuleRef, CapsuleVersion, CloneRequest, DiffRef, DiffRequest,
    DiffResponse, DiffSummary, LineageNode, LineageRequest, LineageResponse, RestoreMode,
    RestoreRequest, RestoreResponse, SectionState, VersionsRequest, VersionsResponse,
};
use serde_json::json;

use super::fields::Address;
use super::query::{self, SUMMARY_COLS};
use super::{
    Capsules, NewCapsule, RowWrite, Times, Wanted, based_on_json, name_holder, not_found,
    run_id_value, write_row,
};
use crate::error::{Error, Result};
use crate::store::engine::{Db, DbError, Engine, Row};
use crate::store::now;
use crate::{bounds, names, tags};

/// Lineage walks: default and most steps, and most nodes each way.
pub const LINEAGE_DEPTH: i64 = 3;
pub const LINEAGE_DEPTH_MAX: i64 = 10;
pub const LINEAGE_NODES_MAX: usize = 100;

/// The capsule a ref leads to now: by id, or the active capsule of the name, else the most
/// recently changed deleted one. `None` for a malformed ref or nothing there.
fn lookup(db: Db<'_>, r: &CapsuleRef) -> Result<Option<Capsule>> {
    match Address::resolve(r.id.as_deref(), r.workspace.as_deref(), r.name.as_deref()) {
        Ok(addr) => query::find(db, &addr, true, false),
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
            .run(move |ctx| {
                let db = ctx.db();
                let Some(c) = query::find(db, &addr, true, false)? else {
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
                    && let Some(holder) = query::active_by_name(db, &c.workspace_norm, norm)?
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
                            db.execute(
                                "UPDATE capsules SET deleted_at = ?1, updated_at = ?1, seq = ?2,
                                   revision = revision + 1 WHERE id = ?3",
                                crate::db_params![t, ctx.next_seq(), &holder.id],
                            )?;
                            replaced_id = Some(holder.id);
                        }
                        RestoreMode::Rename => {
                            let free = super::import::free_name(db, &c.workspace_norm, raw)?;
                            db.execute(
                                "UPDATE capsules SET name_raw = ?1, name_norm = ?2 WHERE id = ?3",
                                crate::db_params![&free.0, &free.1, &c.id],
                            )?;
                            name = Some(free.0);
                        }
                    }
                }
                db.execute(
                    "UPDATE capsules SET deleted_at = NULL, updated_at = ?1, seq = ?2,
                       revision = revision + 1 WHERE id = ?3",
                    crate::db_params![now(), ctx.next_seq(), &c.id],
                )?;
                ctx.changed(&super::SEARCH_SOURCE);
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
            .run_db(move |db| {
                let Some(root) = query::find(db, &addr, true, false)? else {
                    return Err(not_found(db, &addr, Wanted::Read));
                };
                let mut truncated = false;
                let based_on = walk_up(db, &root, depth, &mut truncated)?;
                let derived = walk_down(db, &root, depth, &mut truncated)?;
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
        let task = match &set.task {
            Some(t) => Some(super::handoff::task_value(Some(t))?),
            None => None,
        };
        let based_on = based_on_json(Some(std::slice::from_ref(&req.source)))?;
        let target_ws = req.target.workspace.clone();
        let tokenizer = self.config.tokenizer;
        let pre = self.count_ahead(&source_addr, |text, _| Ok(text)).await;
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                let Some(src) = query::find(db, &source_addr, false, true)? else {
                    return Err(not_found(db, &source_addr, Wanted::ReadActive));
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
                    tokens: tokenizer.count_with(&text, pre.as_ref()),
                    text,
                    tags_json: match tags {
                        Some(t) => tags::to_json(t.as_deref()),
                        None => tags::to_json(src.tags.as_deref()),
                    },
                    source: src.source.clone(),
                    run_id: run_id.unwrap_or(src.run_id.clone()),
                    phase: phase.unwrap_or(src.phase.clone()),
                    role: role.unwrap_or(src.role.clone()),
                    // A task is of one workspace: a copy elsewhere keeps it only when set.
                    task: task.unwrap_or_else(|| {
                        src.task
                            .clone()
                            .filter(|_| workspace.norm == src.workspace_norm)
                    }),
                    based_on_json: based_on,
                    // The copy keeps the source's evidence: it is the same work.
                    evidence_json: super::evidence::stored(db, &src.id)?,
                    workspace,
                    name,
                };
                if let Some(holder) = name_holder(db, &c)? {
                    return Err(super::name_taken(&c, holder.id));
                }
                if let Some(task) = &c.task {
                    super::handoff::check(ctx, &c.workspace.norm, task)?;
                }
                let t = now();
                let id = ulid::Ulid::generate().to_string();
                let times = Times {
                    created_at: t,
                    updated_at: t,
                    deleted_at: None,
                };
                write_row(db, RowWrite::Insert, &id, &c, &times, ctx.next_seq(), None)?;
                if let Some(task) = &c.task {
                    let name = c.name.as_ref().map(|(raw, _)| raw.as_str());
                    super::handoff::record(ctx, &c.workspace.norm, task, &id, name, 1)?;
                }
                ctx.changed(&super::SEARCH_SOURCE);
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
    db: Db<'_>,
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
            let capsule = lookup(db, &r)?;
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
    db: Db<'_>,
    root: &Capsule,
    depth: i64,
    truncated: &mut bool,
) -> Result<Vec<LineageNode>> {
    // Every capsule with a lineage, read once through the partial index.
    let with_lineage: Vec<Capsule> = db.query_map(
        &match db.engine() {
            Engine::Sqlite => format!(
                "SELECT {SUMMARY_COLS} FROM capsules INDEXED BY idx_capsules_based_on
             WHERE based_on_json IS NOT NULL"
            ),
            Engine::Postgres => {
                format!("SELECT {SUMMARY_COLS} FROM capsules WHERE based_on_json IS NOT NULL")
            }
        },
        &[],
        |r| query::capsule_from_row(r, false),
    )?;
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

/// Columns of a version row `v`, in [`version_into`]'s order.
const VERSION_COLS: &str = "v.revision, v.title, v.capsule_text, v.capsule_chars, \
     v.tokens_estimate, v.tags_json, v.source, v.run_id, v.phase, v.role, v.based_on_json, \
     v.updated_at, v.evidence_json";

/// The versions of capsule `?1` that are visible, as rows `v` with `j.key` their place in its
/// list (0 the newest): the first `?2` vids its `versions_json` names, each only if it is still
/// that capsule's, so that a damaged list hides versions rather than show another capsule's.
/// Callers select from it and add a condition on `v` or an order.
const KEPT_VERSIONS: &str = "FROM (SELECT key, value \
       FROM json_each((SELECT versions_json FROM capsules WHERE id = ?1)) \
       ORDER BY key LIMIT ?2) j \
     JOIN capsule_versions v ON v.vid = j.value WHERE v.capsule_id = ?1";

/// [`KEPT_VERSIONS`] on PostgreSQL: the list's elements as `jsonb`, `key` from 0 as
/// `json_each` numbers them.
const KEPT_VERSIONS_PG: &str = "FROM (SELECT ord - 1 AS key, value::bigint AS value \
       FROM jsonb_array_elements_text((SELECT versions_json FROM capsules WHERE id = ?1)::jsonb) \
         WITH ORDINALITY AS e(value, ord) \
       ORDER BY ord LIMIT ?2) j \
     JOIN capsule_versions v ON v.vid = j.value WHERE v.capsule_id = ?1";

/// The [`KEPT_VERSIONS`] of `db`'s engine.
fn kept_versions(db: Db<'_>) -> &'static str {
    match db.engine() {
        Engine::Sqlite => KEPT_VERSIONS,
        Engine::Postgres => KEPT_VERSIONS_PG,
    }
}

/// `current` as it was at the version row `r`.
fn version_into(
    mut c: Capsule,
    r: &Row<'_>,
    include_text: bool,
    evidence: Option<bool>,
) -> std::result::Result<Capsule, DbError> {
    c.revision = r.get(0)?;
    c.title = r.get(1)?;
    c.capsule_text = if include_text {
        // The column is NOT NULL.
        Some(
            super::unpack_text(r, 2, "capsule_text")?.ok_or(DbError::Decode {
                column: 2,
                why: "NULL where a version text was expected".into(),
            })?,
        )
    } else {
        None
    };
    c.capsule_chars = r.get(3)?;
    c.tokens_estimate = r.get(4)?;
    c.tags = r
        .get::<Option<String>>(5)?
        .and_then(|j| serde_json::from_str::<Vec<String>>(&j).ok())
        .filter(|t| !t.is_empty());
    c.source = r.get(6)?;
    c.run_id = r.get(7)?;
    c.phase = r.get(8)?;
    c.role = r.get(9)?;
    c.based_on = r
        .get::<Option<String>>(10)?
        .and_then(|j| serde_json::from_str(&j).ok());
    c.updated_at = r.get(11)?;
    c.evidence = match evidence {
        None => None,
        Some(expand) => match super::unpack_text(r, 12, "evidence_json")? {
            None => None,
            Some(json) => super::evidence::items(Some(&json), expand),
        },
    };
    Ok(c)
}

/// The capsule at `addr`, now (`version` absent or its current revision) or at an earlier
/// version: -1 the newest kept, -2 the one before; a positive number that revision. With
/// `evidence`, its evidence too, with content when that is `Some(true)`.
pub(crate) fn fetch_at(
    db: Db<'_>,
    addr: &Address,
    include_deleted: bool,
    include_text: bool,
    version: Option<i64>,
    keep: u32,
    evidence: Option<bool>,
) -> Result<Capsule> {
    let mut current = super::fetch_one(db, addr, include_deleted, include_text)?;
    let v = match version {
        Some(v) if v != 0 && v != current.revision => v,
        _ => {
            if let Some(expand) = evidence {
                let stored = super::evidence::stored(db, &current.id)?;
                current.evidence = super::evidence::items(stored.as_deref(), expand);
            }
            return Ok(current);
        }
    };
    let id = current.id.clone();
    let keep = i64::from(keep);
    // Only the newest `keep` versions are visible (more remain after `capsule_versions` was
    // lowered, until the capsule's next change prunes them).
    let row = if v < -keep {
        None
    } else if v < 0 {
        db.query_opt(
            &format!(
                "SELECT {VERSION_COLS} {} ORDER BY j.key LIMIT 1 OFFSET ?3",
                kept_versions(db)
            ),
            crate::db_params![&id, keep, -v - 1],
            |r| version_into(current.clone(), r, include_text, evidence),
        )?
    } else {
        db.query_opt(
            &format!(
                "SELECT {VERSION_COLS} {} AND v.revision = ?3",
                kept_versions(db)
            ),
            crate::db_params![&id, keep, v],
            |r| version_into(current.clone(), r, include_text, evidence),
        )?
    };
    row.ok_or_else(|| {
        let kept: i64 = db
            .query_one(
                &format!("SELECT count(*) {}", kept_versions(db)),
                crate::db_params![&id, keep],
                |r| r.get::<i64>(0),
            )
            .unwrap_or(0);
        Error::not_found(format!(
            "capsule {} has no version {v}: it is at revision {} and {kept} earlier \
             revision(s) are kept (capsule_versions lists them)",
            addr.describe(),
            current.revision
        ))
        .with_details(json!({ "field": "version", "revision": current.revision, "kept": kept }))
    })
}

/// A capsule's text as `(title, body)` sections: the sections at its section level (as the
/// compose pivot reads them), bodies trimmed; a text without headers is one untitled section.
fn sections_of(text: &str) -> Vec<(String, String)> {
    let top = super::sections::top_level(text);
    if top.is_empty() {
        return vec![(String::new(), text.trim().to_string())];
    }
    top.iter()
        .map(|s| (s.title.clone(), s.body(text).trim().to_string()))
        .collect()
}

/// Two texts compared section by section.
#[derive(Debug)]
pub struct TextDiff {
    pub sections: std::collections::BTreeMap<String, SectionState>,
    pub order: Vec<String>,
    pub summary: DiffSummary,
    pub diffs: Option<std::collections::BTreeMap<String, String>>,
}

/// A unified diff of two texts, line by line with two lines of context (`--- a`, `+++ b`).
pub fn unified_diff(a: &str, b: &str) -> String {
    let (x, y) = (format!("{a}\n"), format!("{b}\n"));
    similar::TextDiff::from_lines(&x, &y)
        .unified_diff()
        .context_radius(2)
        .header("a", "b")
        .to_string()
}

/// Compares two texts section by section.
pub fn diff_texts(a: &str, b: &str, include_diff: bool) -> TextDiff {
    let (sa, sb) = (sections_of(a), sections_of(b));
    let find = |list: &[(String, String)], title: &str| {
        list.iter()
            .find(|(t, _)| t.to_lowercase() == title.to_lowercase())
            .map(|(_, body)| body.clone())
    };
    let mut order: Vec<String> = sa.iter().map(|(t, _)| t.clone()).collect();
    for (t, _) in &sb {
        if !order.iter().any(|o| o.to_lowercase() == t.to_lowercase()) {
            order.push(t.clone());
        }
    }
    let mut states = std::collections::BTreeMap::new();
    let mut diffs = std::collections::BTreeMap::new();
    let mut summary = DiffSummary {
        unchanged_sections: 0,
        modified_sections: 0,
        added_sections: 0,
        removed_sections: 0,
        a_chars: a.chars().count() as i64,
        b_chars: b.chars().count() as i64,
    };
    for title in &order {
        let (x, y) = (
            find(&sa, title).unwrap_or_default(),
            find(&sb, title).unwrap_or_default(),
        );
        let state = match (x.is_empty(), y.is_empty()) {
            _ if x == y => SectionState::Unchanged,
            (true, false) => SectionState::Added,
            (false, true) => SectionState::RemovedContent,
            _ => SectionState::Modified,
        };
        match state {
            SectionState::Unchanged => summary.unchanged_sections += 1,
            SectionState::Modified => summary.modified_sections += 1,
            SectionState::Added => summary.added_sections += 1,
            SectionState::RemovedContent => summary.removed_sections += 1,
        }
        if include_diff && state == SectionState::Modified {
            diffs.insert(title.clone(), unified_diff(&x, &y));
        }
        states.insert(title.clone(), state);
    }
    TextDiff {
        sections: states,
        order,
        summary,
        diffs: include_diff.then_some(diffs),
    }
}

impl Capsules {
    /// `capsule_versions`: the earlier revisions kept, newest first, without their texts.
    pub async fn versions(&self, req: VersionsRequest) -> Result<VersionsResponse> {
        let addr = Address::resolve(
            req.id.as_deref(),
            req.workspace.as_deref(),
            req.name.as_deref(),
        )?;
        let include_deleted = req.include_deleted.unwrap_or(false);
        let keep = self.config.capsule_versions as i64;
        self.store
            .readers
            .run_db(move |db| {
                let Some(c) = query::find(db, &addr, include_deleted, false)? else {
                    return Err(not_found(db, &addr, Wanted::Read));
                };
                let mut versions: Vec<CapsuleVersion> = db.query_map(
                    &format!(
                        "SELECT v.revision, v.updated_at, v.capsule_chars, v.title, v.run_id,
                           v.phase, v.role {} ORDER BY j.key",
                        kept_versions(db)
                    ),
                    crate::db_params![&c.id, keep],
                    |r| {
                        Ok(CapsuleVersion {
                            revision: r.get(0)?,
                            version: 0,
                            updated_at: r.get(1)?,
                            capsule_chars: r.get(2)?,
                            title: r.get(3)?,
                            run_id: r.get(4)?,
                            phase: r.get(5)?,
                            role: r.get(6)?,
                        })
                    },
                )?;
                for (i, v) in versions.iter_mut().enumerate() {
                    v.version = -(i as i64) - 1;
                }
                Ok(VersionsResponse {
                    id: c.id,
                    revision: c.revision,
                    versions,
                    keep,
                })
            })
            .await
    }

    /// `capsule_diff`: two capsules (or two versions of one) compared section by section.
    pub async fn diff(&self, req: DiffRequest) -> Result<DiffResponse> {
        let side = |name: &str, r: &DiffRef| {
            Address::resolve(r.id.as_deref(), r.workspace.as_deref(), r.name.as_deref())
                .map(|a| (a, r.version))
                .map_err(|mut e| {
                    e.0.message = format!("{name}: {}", e.0.message);
                    e
                })
        };
        let (a, b) = (side("a", &req.a)?, side("b", &req.b)?);
        let include_diff = req.include_diff.unwrap_or(false);
        let keep = self.config.capsule_versions;
        self.store
            .readers
            .run_db(move |db| {
                let ca = fetch_at(db, &a.0, true, true, a.1, keep, None)?;
                let cb = fetch_at(db, &b.0, true, true, b.1, keep, None)?;
                let d = diff_texts(
                    ca.capsule_text.as_deref().unwrap_or(""),
                    cb.capsule_text.as_deref().unwrap_or(""),
                    include_diff,
                );
                Ok(DiffResponse {
                    sections: d.sections,
                    order: d.order,
                    summary: d.summary,
                    diffs: d.diffs,
                    a_revision: ca.revision,
                    b_revision: cb.revision,
                })
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "## Objective\nShip auth\n## Current status\nstarted\n## Decisions\n- JWT\n\
                     ## Open questions\n- rotate keys?\n";
    const B: &str = "## Objective\nShip auth\n## Current status\nreviewing\n## Decisions\n- JWT\n\
                     - refresh tokens\n## Open questions\n\n## Risks\n- clock skew\n";

    #[test]
    fn every_section_state_and_the_line_diff() {
        let TextDiff {
            sections: states,
            order,
            summary,
            diffs,
        } = diff_texts(A, B, true);
        assert_eq!(
            order,
            [
                "Objective",
                "Current status",
                "Decisions",
                "Open questions",
                "Risks"
            ]
        );
        assert_eq!(states["Objective"], SectionState::Unchanged);
        assert_eq!(states["Current status"], SectionState::Modified);
        assert_eq!(states["Decisions"], SectionState::Modified);
        assert_eq!(states["Open questions"], SectionState::RemovedContent);
        assert_eq!(states["Risks"], SectionState::Added);
        assert_eq!(
            (
                summary.unchanged_sections,
                summary.modified_sections,
                summary.added_sections,
                summary.removed_sections
            ),
            (1, 2, 1, 1)
        );
        let diffs = diffs.unwrap();
        assert_eq!(diffs.len(), 2, "modified sections only");
        assert!(
            diffs["Decisions"].contains("+- refresh tokens"),
            "{}",
            diffs["Decisions"]
        );
        assert!(
            diffs["Current status"].contains("-started\n+reviewing"),
            "{}",
            diffs["Current status"]
        );
        assert!(diff_texts(A, A, false).diffs.is_none());
    }
}
