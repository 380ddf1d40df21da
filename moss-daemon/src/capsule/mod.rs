//! The capsule memory: size-bounded, linted handoffs addressed by id or by
//! workspace + name.
//!
//! - [`fields`]: addressing, the size and section checks of a capsule's text, token estimates
//!   (the rules all memories share are top-level modules: [`crate::names`], [`crate::bounds`],
//!   [`crate::tags`], [`crate::page`]).
//! - [`lint`]: required-section detection (also the markdown header parser).
//! - [`query`]: SQL for reading capsules, mapping rows and finding the active one at an address.
//! - [`search`]: full-text search with ranked, highlighted snippets.
//! - [`sections`]: markdown sections, for [`append`] and the `sections` filter of [`compose`].
//! - [`bulk`]: bulk delete, bulk update, purge.
//! - `versions`: the version log (the earlier revisions a capsule keeps, their list and sweep).
//! - [`export`], [`import`]: export to and import from JSONL files, following the file-system
//!   rules of [`crate::paths`]; [`transfer`] the file format they share.
//!
//! [`Capsules`] holds one method per operation. REST handlers, MCP tools and (through the
//! client) CLI subcommands all end here; [`family`] registers the tools and routes.

/// The [`Narrow`] of a request holding the common filter fields (workspace, tag, name_prefix,
/// run_id, phase, role); the task link, which only some requests take, is left unset.
macro_rules! narrow_of {
    ($req:expr) => {
        $crate::capsule::Narrow {
            workspace: $req.workspace.as_deref(),
            tag: $req.tag.as_deref(),
            name_prefix: $req.name_prefix.as_deref(),
            run_id: $req.run_id.as_ref(),
            phase: $req.phase.as_deref(),
            role: $req.role.as_deref(),
            task: None,
        }
    };
}

pub mod append;
pub mod bulk;
pub mod compose;
pub mod evidence;
pub mod export;
pub mod family;
pub mod fields;
mod filters;
mod handoff;
pub mod history;
pub mod import;
pub mod interface;
pub mod lint;
pub mod migrations;
pub mod query;
pub mod rest;
pub mod search;
pub mod search_source;
pub mod sections;
pub mod transfer;
mod versions;
pub mod watch;

pub use search_source::SEARCH_SOURCE;

use std::sync::Arc;

use moss_client::ErrorCode;
use moss_client::capsule::*;
use serde_json::json;

use crate::cancel;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::paths::PathRules;
pub use filters::MAX_RUN_IDS;
pub(crate) use filters::{Narrow, narrow, orchestration, run_id_value, run_ids};

use crate::sql_filter::Filter;
use crate::store::engine::{Db, DbError, DbErrorKind, Engine, Value};
use crate::store::{Store, WriteCtx, now};
use crate::tokens::Counted;
use crate::{bounds, names, page, tags};
use fields::Address;
use query::ActiveRow;
pub(crate) use versions::{Kept, save_version, unpack_text};

/// Most refs one `capsule_fetch_many` accepts.
pub const FETCH_MANY_MAX: usize = 50;

/// The capsule operations over one store.
#[derive(Debug, Clone)]
pub struct Capsules {
    store: Store,
    config: Arc<Config>,
    paths: PathRules,
    /// Fires at shutdown: long polls (`capsule_watch`) answer at once.
    stop: tokio_util::sync::CancellationToken,
}

/// A capsule's columns as written by store/replace and import.
pub(crate) struct NewCapsule {
    pub(crate) workspace: names::Workspace,
    pub(crate) name: Option<(String, String)>,
    pub(crate) title: Option<String>,
    pub(crate) text: String,
    pub(crate) chars: i64,
    pub(crate) tokens: i64,
    pub(crate) tags_json: Option<String>,
    pub(crate) source: Option<String>,
    pub(crate) run_id: Option<String>,
    pub(crate) phase: Option<String>,
    pub(crate) role: Option<String>,
    /// The plan or task it is handed off for.
    pub(crate) task: Option<String>,
    /// The lineage as JSON, when there is one.
    pub(crate) based_on_json: Option<String>,
    /// The evidence as JSON (`evidence::to_json`), when there is some.
    pub(crate) evidence_json: Option<String>,
}

/// When a capsule row was created, last changed and soft-deleted.
pub(crate) struct Times {
    pub(crate) created_at: i64,
    pub(crate) updated_at: i64,
    pub(crate) deleted_at: Option<i64>,
}

/// How [`write_row`] puts a capsule in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RowWrite {
    /// A new row under the id. SQLite's error is returned as it is, so that a caller can tell
    /// the unique index on active names refusing it from a failure.
    Insert,
    /// A new row under the id unless a unique key (the active name) refuses it, which writes
    /// nothing and is no error: on PostgreSQL, where a failed statement aborts the transaction
    /// the job runs in, so that the holder of the name can still be looked up after it.
    InsertIfFree,
    /// Every column written over the row of the id, which keeps its id: a store in mode replace
    /// and an import in mode replace.
    Overwrite,
}

impl RowWrite {
    /// The statement, with `?1` the id, then the columns in table order, `?18` the sequence
    /// number, `?19` the lineage, `?20` the list of versions kept when [`save_version`] gave
    /// one (an overwrite without one leaves the list as it is).
    fn sql(self) -> &'static str {
        macro_rules! insert {
            () => {
                "INSERT INTO capsules (id, workspace_raw, workspace_norm, name_raw, name_norm,
                   title, capsule_text, capsule_chars, tokens_estimate, tags_json, source, run_id,
                   phase, role, created_at, updated_at, deleted_at, seq, based_on_json,
                   versions_json, task)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,
                   ?17, ?18, ?19, ?20, ?21)"
            };
        }
        match self {
            RowWrite::Insert => insert!(),
            RowWrite::InsertIfFree => concat!(insert!(), " ON CONFLICT DO NOTHING"),
            RowWrite::Overwrite => {
                "UPDATE capsules SET workspace_raw = ?2, workspace_norm = ?3, name_raw = ?4,
                   name_norm = ?5, title = ?6, capsule_text = ?7, capsule_chars = ?8,
                   tokens_estimate = ?9, tags_json = ?10, source = ?11, run_id = ?12,
                   phase = ?13, role = ?14, created_at = ?15, updated_at = ?16,
                   deleted_at = ?17, seq = ?18, based_on_json = ?19,
                   versions_json = coalesce(?20, versions_json), task = ?21,
                   revision = revision + 1
                 WHERE id = ?1"
            }
        }
    }
}

/// Writes capsule `c` with `times` and `seq` as the row `id`, as `how` says: the one place a
/// capsule's columns are written whole. Whether a row was written: always, but for a
/// [`RowWrite::InsertIfFree`] refused.
pub(crate) fn write_row(
    db: Db<'_>,
    how: RowWrite,
    id: &str,
    c: &NewCapsule,
    times: &Times,
    seq: i64,
    versions: Option<&str>,
) -> std::result::Result<bool, DbError> {
    let (name_raw, name_norm) = match &c.name {
        Some((r, n)) => (Some(r.as_str()), Some(n.as_str())),
        None => (None, None),
    };
    let written = db.execute(
        how.sql(),
        crate::db_params![
            id,
            &c.workspace.raw,
            &c.workspace.norm,
            name_raw,
            name_norm,
            c.title.as_deref(),
            &c.text,
            c.chars,
            c.tokens,
            c.tags_json.as_deref(),
            c.source.as_deref(),
            c.run_id.as_deref(),
            c.phase.as_deref(),
            c.role.as_deref(),
            times.created_at,
            times.updated_at,
            times.deleted_at,
            seq,
            c.based_on_json.as_deref(),
            versions,
            c.task.as_deref()
        ],
    )?;
    if written == 0 {
        return Ok(false);
    }
    // A new row has no evidence to remove: only write some if it comes with it.
    if c.evidence_json.is_some() || matches!(how, RowWrite::Overwrite) {
        evidence::write(db, id, c.evidence_json.as_deref())?;
    }
    Ok(true)
}

impl Capsules {
    /// For a job whose text derives from the active capsule at `addr` (an append, a clone):
    /// with a real tokenizer, reads that capsule on a read connection, derives the text the job
    /// will write with `derive`, and counts it there, off the writer (see [`Counted`]). `None`
    /// with the default counter, whose count costs under a microsecond, or when the read or
    /// `derive` fails: the job then fails the same way and reports it.
    async fn count_ahead<F>(&self, addr: &Address, derive: F) -> Option<Counted>
    where
        F: FnOnce(String, &Address) -> Result<String> + Send + 'static,
    {
        let tokenizer = self.config.tokenizer;
        if !tokenizer.is_costly() {
            return None;
        }
        let addr = addr.clone();
        self.store
            .readers
            .run_db(move |db| {
                let found = query::find(db, &addr, false, true)?.ok_or_else(|| addr.not_found())?;
                let text = derive(found.capsule_text.unwrap_or_default(), &addr)?;
                Ok(Counted::new(tokenizer, text))
            })
            .await
            .ok()
    }

    pub fn new(store: Store, config: Arc<Config>, home: &crate::MossHome) -> Self {
        let paths = config.path_rules(home);
        Capsules {
            store,
            config,
            paths,
            stop: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// Makes long polls answer at once when `stop` fires (the daemon's shutdown).
    pub fn stop_on(mut self, stop: tokio_util::sync::CancellationToken) -> Self {
        self.stop = stop;
        self
    }

    fn check_text(&self, text: &str, allow_thin: bool) -> Result<usize> {
        let chars = fields::check_size(text, self.config.capsule_max_chars)?;
        fields::check_sections(text, allow_thin)?;
        Ok(chars)
    }

    /// `capsule_store`: create, or in mode replace overwrite the active capsule of that name.
    pub async fn store(&self, req: StoreRequest) -> Result<CapsuleHandle> {
        let chars = self.check_text(&req.capsule_text, req.allow_thin.unwrap_or(false))?;
        let workspace = names::workspace(req.workspace.as_deref())?;
        let name = names::name(req.name.as_deref())?;
        let title = match bounds::title(req.title.as_deref())? {
            Some(t) => Some(t),
            None => name.as_ref().map(|(raw, _)| raw.clone()),
        };
        let tags = tags::clean(req.tags.as_deref())?;
        let new = NewCapsule {
            tokens: self.config.tokenizer.count(&req.capsule_text),
            chars: chars as i64,
            text: req.capsule_text,
            title,
            tags_json: tags::to_json(tags.as_deref()),
            source: bounds::handle("source", req.source.as_deref())?,
            run_id: run_id_value(req.run_id.as_deref())?,
            phase: bounds::handle("phase", req.phase.as_deref())?,
            role: bounds::handle("role", req.role.as_deref())?,
            task: handoff::task_value(req.task.as_deref())?,
            based_on_json: based_on_json(req.based_on.as_deref())?,
            evidence_json: evidence::to_json(req.evidence.as_deref())?,
            workspace,
            name,
        };
        let mode = req.mode.unwrap_or_default();
        let keep = self.config.capsule_versions;
        self.store
            .writer
            .run(move |w| store_job(w, new, mode, keep))
            .await
    }

    /// `capsule_fetch`.
    pub async fn fetch(&self, req: FetchRequest) -> Result<Capsule> {
        let addr = Address::resolve(
            req.id.as_deref(),
            req.workspace.as_deref(),
            req.name.as_deref(),
        )?;
        let include_deleted = req.include_deleted.unwrap_or(false);
        let include_text = req.include_text.unwrap_or(true);
        let version = req.version;
        let expand = req.expand_evidence.unwrap_or(false);
        let keep = self.config.capsule_versions;
        self.store
            .readers
            .run_db(move |db| {
                history::fetch_at(
                    db,
                    &addr,
                    include_deleted,
                    include_text,
                    version,
                    keep,
                    Some(expand),
                )
            })
            .await
    }

    /// `capsule_fetch_many`: up to 50 refs, partial success.
    pub async fn fetch_many(&self, req: FetchManyRequest) -> Result<FetchManyResponse> {
        if req.items.is_empty() || req.items.len() > FETCH_MANY_MAX {
            return Err(Error::invalid(format!(
                "items must hold 1 to {FETCH_MANY_MAX} refs, got {}; split larger batches",
                req.items.len()
            ))
            .with_details(
                json!({ "max_items": FETCH_MANY_MAX, "actual_items": req.items.len() }),
            ));
        }
        let include_deleted = req.include_deleted.unwrap_or(false);
        let include_text = req.include_text.unwrap_or(true);
        cancel::on_drop(|cancel| {
            self.store.readers.run_db(move |db| {
                let mut items = Vec::new();
                let mut errors = Vec::new();
                for r in req.items {
                    cancel.check("fetch_many")?;
                    let found = Address::resolve(
                        r.id.as_deref(),
                        r.workspace.as_deref(),
                        r.name.as_deref(),
                    )
                    .and_then(|addr| fetch_one(db, &addr, include_deleted, include_text));
                    match found {
                        Ok(c) => items.push(c),
                        Err(e) if e.code() == ErrorCode::Internal => return Err(e),
                        Err(e) => errors.push(FetchManyError {
                            reference: r,
                            code: e.0.code,
                            message: e.0.message,
                        }),
                    }
                }
                Ok(FetchManyResponse { items, errors })
            })
        })
        .await
    }

    /// `capsule_update`: edit text and metadata of an active capsule; never its address.
    pub async fn update(&self, req: UpdateRequest) -> Result<CapsuleHandle> {
        let addr = Address::resolve(
            req.id.as_deref(),
            req.workspace.as_deref(),
            req.name.as_deref(),
        )?;
        let mut sets: Vec<(&'static str, Value)> = Vec::new();
        let opt = |v: Option<String>| v.map(Value::Text).unwrap_or(Value::Null);
        if let Some(text) = &req.capsule_text {
            let chars = self.check_text(text, req.allow_thin.unwrap_or(false))?;
            sets.push(("capsule_text", Value::Text(text.clone())));
            sets.push(("capsule_chars", Value::Int(chars as i64)));
            sets.push((
                "tokens_estimate",
                Value::Int(self.config.tokenizer.count(text)),
            ));
        }
        if req.title.is_some() {
            sets.push(("title", opt(bounds::title(req.title.as_deref())?)));
        }
        if let Some(t) = &req.tags {
            let tags = tags::clean(Some(t))?;
            sets.push(("tags_json", opt(tags::to_json(tags.as_deref()))));
        }
        for (col, val) in [
            ("source", &req.source),
            ("run_id", &req.run_id),
            ("phase", &req.phase),
            ("role", &req.role),
        ] {
            if val.is_some() {
                let v = if col == "run_id" {
                    run_id_value(val.as_deref())?
                } else {
                    bounds::handle(col, val.as_deref())?
                };
                sets.push((col, opt(v)));
            }
        }
        if let Some(refs) = &req.based_on {
            sets.push(("based_on_json", opt(based_on_json(Some(refs))?)));
        }
        let task = match &req.task {
            Some(t) => Some(handoff::task_value(Some(t))?),
            None => None,
        };
        if let Some(t) = &task {
            sets.push(("task", opt(t.clone())));
        }
        let evidence = match &req.evidence {
            Some(items) => Some(evidence::to_json(Some(items))?),
            None => None,
        };
        if sets.is_empty() && evidence.is_none() {
            return Err(Error::invalid(
                "no fields to update: give at least one of capsule_text, title, tags, source, \
                 run_id, phase, role, task, based_on, evidence",
            ));
        }
        let guard = Guard {
            if_updated_at: req.if_updated_at,
            if_revision: req.if_revision,
        };
        let keep = self.config.capsule_versions;
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                let id = guard.row(db, &addr)?.id;
                let versions = save_version(db, &id, keep)?;
                let mut params: Vec<Value> = Vec::new();
                let mut assignments = Vec::new();
                for (col, val) in sets {
                    params.push(val);
                    assignments.push(format!("{col} = ?{}", params.len()));
                }
                params.push(versions.into_value());
                assignments.push(format!(
                    "versions_json = coalesce(?{}, versions_json)",
                    params.len()
                ));
                params.push(Value::Int(now()));
                assignments.push(format!("updated_at = ?{}", params.len()));
                params.push(Value::Int(ctx.next_seq()));
                assignments.push(format!("seq = ?{}", params.len()));
                assignments.push("revision = revision + 1".to_string());
                params.push(Value::Text(id.clone()));
                let sql = format!(
                    "UPDATE capsules SET {} WHERE id = ?{}",
                    assignments.join(", "),
                    params.len()
                );
                db.execute(&sql, &Value::params(&params))?;
                if let Some(json) = &evidence {
                    evidence::write(db, &id, json.as_deref())?;
                }
                if let Some(Some(task)) = &task {
                    let (ws, name, revision): (String, Option<String>, i64) = db.query_one(
                        "SELECT workspace_norm, name_raw, revision FROM capsules WHERE id = ?1",
                        crate::db_params![&id],
                        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                    )?;
                    handoff::check(ctx, &ws, task)?;
                    handoff::record(ctx, &ws, task, &id, name.as_deref(), revision)?;
                }
                ctx.changed(&SEARCH_SOURCE);
                handle_of(db, &id)
            })
            .await
    }

    /// `capsule_delete`: soft delete; bumps `updated_at` so the deletion shows in `latest`.
    pub async fn delete(&self, req: DeleteRequest) -> Result<DeleteResponse> {
        let addr = Address::resolve(
            req.id.as_deref(),
            req.workspace.as_deref(),
            req.name.as_deref(),
        )?;
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                let Some(ActiveRow { id, .. }) = query::active(db, &addr)? else {
                    return Err(not_found(db, &addr, Wanted::Delete));
                };
                let t = now();
                db.execute(
                    "UPDATE capsules SET deleted_at = ?1, updated_at = ?1, seq = ?2,
                       revision = revision + 1 WHERE id = ?3",
                    crate::db_params![t, ctx.next_seq(), &id],
                )?;
                ctx.changed(&SEARCH_SOURCE);
                Ok(DeleteResponse { deleted: true, id })
            })
            .await
    }

    /// `capsule_latest`: the most recently updated capsule of a workspace.
    pub async fn latest(&self, req: LatestRequest) -> Result<LatestResponse> {
        let ws = names::workspace(req.workspace.as_deref())?;
        let include_text = req.include_text.unwrap_or(false);
        let mut f = Filter::default();
        f.add("workspace_norm = ?", ws.norm);
        if !req.include_deleted.unwrap_or(false) {
            f.raw("deleted_at IS NULL");
        }
        orchestration(
            &mut f,
            req.run_id.as_ref(),
            req.phase.as_deref(),
            req.role.as_deref(),
        )?;
        self.store
            .readers
            .run_db(move |db| {
                let (mut items, _) = query::page(db, &f, include_text, 1, 0)?;
                Ok(LatestResponse {
                    item: items.pop(),
                    hint: None,
                })
            })
            .await
    }

    /// `capsule_list`: summaries of one workspace, newest first.
    pub async fn list(&self, req: ListRequest) -> Result<CapsulePage> {
        let ws = names::workspace(req.workspace.as_deref())?;
        let (limit, offset) = page::bounds(req.limit, req.offset, 20, 100)?;
        let mut f = Filter::default();
        f.add("workspace_norm = ?", ws.norm);
        if !req.include_deleted.unwrap_or(false) {
            f.raw("deleted_at IS NULL");
        }
        orchestration(
            &mut f,
            req.run_id.as_ref(),
            req.phase.as_deref(),
            req.role.as_deref(),
        )?;
        if let Some(task) = handoff::task_value(req.task.as_deref())? {
            f.add("task = ?", task);
        }
        self.page(f, limit, offset).await
    }

    /// `capsule_inventory`: summaries across all workspaces, newest first.
    pub async fn inventory(&self, req: InventoryRequest) -> Result<CapsulePage> {
        let (limit, offset) = page::bounds(req.limit, req.offset, 100, 500)?;
        let mut f = Filter::default();
        if !req.include_deleted.unwrap_or(false) {
            f.raw("deleted_at IS NULL");
        }
        narrow(
            &mut f,
            &Narrow {
                task: req.task.as_deref(),
                ..narrow_of!(req)
            },
            self.store.engine(),
        )?;
        self.page(f, limit, offset).await
    }

    async fn page(&self, f: Filter, limit: i64, offset: i64) -> Result<CapsulePage> {
        self.store
            .readers
            .run_db(move |db| {
                let (items, total) = query::page(db, &f, false, limit, offset)?;
                Ok(CapsulePage {
                    pagination: page::pagination(limit, offset, items.len(), total),
                    items,
                    sort: "updated_at_desc".into(),
                    hint: None,
                })
            })
            .await
    }
}

/// Most refs a capsule's `based_on` holds.
pub const MAX_BASED_ON: usize = 20;

/// A lineage to store: each ref well formed (an id, or a name with its workspace), stored as
/// given; `None` for none.
pub(crate) fn based_on_json(refs: Option<&[CapsuleRef]>) -> Result<Option<String>> {
    let Some(refs) = refs.filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    if refs.len() > MAX_BASED_ON {
        return Err(Error::invalid_field(
            "based_on",
            format!(
                "based_on holds {} refs; at most {MAX_BASED_ON} are allowed",
                refs.len()
            ),
        ));
    }
    for (i, r) in refs.iter().enumerate() {
        Address::resolve(r.id.as_deref(), r.workspace.as_deref(), r.name.as_deref()).map_err(
            |e| {
                Error::invalid_field(
                    &format!("based_on[{i}]"),
                    format!("based_on[{i}]: {}", e.0.message),
                )
            },
        )?;
    }
    Ok(Some(serde_json::to_string(refs).expect("refs serialize")))
}

/// The optimistic-concurrency guards of a change: it applies only to the capsule as the caller
/// last saw it.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Guard {
    pub(crate) if_updated_at: Option<i64>,
    pub(crate) if_revision: Option<i64>,
}

impl Guard {
    /// The prologue of every guarded change, in its writer job: the active capsule at `addr`
    /// (404, saying why a soft-deleted one cannot change), checked against the guard.
    pub(crate) fn row(&self, db: Db<'_>, addr: &Address) -> Result<ActiveRow> {
        let Some(row) = query::active(db, addr)? else {
            return Err(not_found(db, addr, Wanted::Change));
        };
        self.check(&row, addr)?;
        Ok(row)
    }

    /// 409 CONFLICT, carrying the current `updated_at` and `revision`, when the capsule moved on.
    pub(crate) fn check(&self, row: &ActiveRow, addr: &Address) -> Result<()> {
        let stale = match (self.if_revision, self.if_updated_at) {
            (Some(r), _) if r != row.revision => {
                Some((format!("revision {r} (now {})", row.revision), r))
            }
            (_, Some(t)) if t != row.updated_at => {
                Some((format!("updated_at {t} (now {})", row.updated_at), t))
            }
            _ => None,
        };
        match stale {
            None => Ok(()),
            Some((what, expected)) => Err(Error::new(
                ErrorCode::Conflict,
                format!(
                    "capsule {} changed since {what}; nothing was written. Fetch it again and \
                     retry with its current revision",
                    addr.describe()
                ),
            )
            .with_details(json!({
                "id": row.id,
                "updated_at": row.updated_at,
                "revision": row.revision,
                "expected": expected,
                "expected_updated_at": self.if_updated_at,
                "expected_revision": self.if_revision,
            }))),
        }
    }
}

pub(crate) fn fetch_one(
    db: Db<'_>,
    addr: &Address,
    include_deleted: bool,
    include_text: bool,
) -> Result<Capsule> {
    match query::find(db, addr, include_deleted, include_text)? {
        Some(c) => Ok(c),
        None => Err(not_found(db, addr, Wanted::Read)),
    }
}

/// What a caller wanted of a capsule it did not find: the 404 says what to do about a
/// soft-deleted one, which only a read with `include_deleted` can reach.
#[derive(Clone, Copy)]
pub(crate) enum Wanted {
    /// `capsule_fetch`, `capsule_fetch_many`: they take `include_deleted`.
    Read,
    /// Reads without `include_deleted` (`capsule_compose`).
    ReadActive,
    /// `capsule_update`, `capsule_append`.
    Change,
    /// `capsule_delete`.
    Delete,
}

impl Wanted {
    fn deleted_hint(self) -> &'static str {
        match self {
            Wanted::Read => "set include_deleted to read it",
            Wanted::ReadActive => {
                "only active capsules are used here; a fetch with include_deleted set reads it"
            }
            Wanted::Change => {
                "a soft-deleted capsule cannot be changed; a fetch with include_deleted set \
                 reads it, and a new capsule can be stored under its name"
            }
            Wanted::Delete => "it was deleted already",
        }
    }
}

/// A 404 that says when only a soft-deleted capsule holds the address, and what to do then.
pub(crate) fn not_found(db: Db<'_>, addr: &Address, wanted: Wanted) -> Error {
    match query::only_deleted_exists(db, addr) {
        Ok(true) => Error::not_found(format!(
            "capsule not found: {} is soft-deleted ({})",
            addr.describe(),
            wanted.deleted_hint()
        )),
        Ok(false) => addr.not_found(),
        Err(e) => e,
    }
}

fn handle_of(db: Db<'_>, id: &str) -> Result<CapsuleHandle> {
    let (workspace, name, revision, updated_at): (String, Option<String>, i64, i64) = db
        .query_one(
            "SELECT workspace_raw, name_raw, revision, updated_at FROM capsules WHERE id = ?1",
            crate::db_params![id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )?;
    Ok(CapsuleHandle {
        id: id.to_string(),
        fetch_key: query::fetch_key(id, &workspace, name.as_deref()),
        revision,
        updated_at,
    })
}

fn store_job(ctx: &WriteCtx, c: NewCapsule, mode: StoreMode, keep: u32) -> Result<CapsuleHandle> {
    if let Some(task) = &c.task {
        handoff::check(ctx, &c.workspace.norm, task)?;
    }
    let db = ctx.db();
    let t = now();
    let seq = ctx.next_seq();
    let name_raw = c.name.as_ref().map(|(r, _)| r.as_str());
    let times = Times {
        created_at: t,
        updated_at: t,
        deleted_at: None,
    };
    let insert = |db: Db<'_>| -> std::result::Result<String, DbError> {
        let id = ulid::Ulid::generate().to_string();
        write_row(db, RowWrite::Insert, &id, &c, &times, seq, None)?;
        Ok(id)
    };
    let (id, revision) = match mode {
        // Insert first: the unique index on active names refuses a taken one, and only then is
        // the holder looked up to name it. A new name, the common case, costs one statement
        // instead of a lookup and an insert. SQLite undoes a failed statement, and the failed
        // job's savepoint is rolled back anyway. PostgreSQL's failed statement would abort the
        // transaction: there the insert gives way instead, and says so.
        StoreMode::Error if db.engine() == Engine::Postgres => {
            let id = ulid::Ulid::generate().to_string();
            if !write_row(db, RowWrite::InsertIfFree, &id, &c, &times, seq, None)? {
                return Err(match name_holder(db, &c)? {
                    Some(holder) => name_taken(&c, holder.id),
                    None => Error::internal(
                        "storing a capsule",
                        "a unique key refused the new row, and no active capsule holds its name",
                    ),
                });
            }
            (id, 1)
        }
        StoreMode::Error => match insert(db) {
            Ok(id) => (id, 1),
            Err(e) if is_constraint(&e) => {
                return Err(match name_holder(db, &c)? {
                    Some(holder) => name_taken(&c, holder.id),
                    None => e.into(),
                });
            }
            Err(e) => return Err(e.into()),
        },
        StoreMode::Replace => match name_holder(db, &c)? {
            Some(holder) => {
                // The capsule keeps its id and creation time; it is active, and changed now.
                let times = Times {
                    created_at: holder.created_at,
                    updated_at: t,
                    deleted_at: None,
                };
                let versions = save_version(db, &holder.id, keep)?;
                write_row(
                    db,
                    RowWrite::Overwrite,
                    &holder.id,
                    &c,
                    &times,
                    seq,
                    versions.json(),
                )?;
                (holder.id, holder.revision + 1)
            }
            None => (insert(db)?, 1),
        },
    };
    if let Some(task) = &c.task {
        handoff::record(ctx, &c.workspace.norm, task, &id, name_raw, revision)?;
    }
    ctx.changed(&SEARCH_SOURCE);
    Ok(CapsuleHandle {
        fetch_key: query::fetch_key(&id, &c.workspace.raw, name_raw),
        id,
        revision,
        updated_at: t,
    })
}

/// Whether the database refused a statement for a unique key (here: the unique index on active
/// names).
fn is_constraint(e: &DbError) -> bool {
    e.kind() == DbErrorKind::UniqueViolation
}

/// The active capsule holding `c`'s name, if `c` has a name and it is taken.
pub(crate) fn name_holder(db: Db<'_>, c: &NewCapsule) -> Result<Option<ActiveRow>> {
    match &c.name {
        Some((_, name_norm)) => query::active_by_name(db, &c.workspace.norm, name_norm),
        None => Ok(None),
    }
}

/// `NAME_ALREADY_EXISTS` for storing `c` in mode `error` over the active capsule `id`.
pub(crate) fn name_taken(c: &NewCapsule, id: String) -> Error {
    let name_raw = c.name.as_ref().map(|(r, _)| r.as_str());
    Error::new(
        ErrorCode::NameAlreadyExists,
        format!(
            "an active capsule named {:?} already exists in workspace {:?} (id {id}); \
             store it with mode replace to overwrite it, or choose another name",
            name_raw.unwrap_or_default(),
            c.workspace.raw
        ),
    )
    .with_details(json!({
        "workspace": c.workspace.raw, "name": name_raw, "id": id
    }))
}
