//! Operations over many capsules at once: `capsule_bulk_delete`,
//! `capsule_bulk_update` and `capsule_purge`. Each is one writer job, so it applies entirely or
//! not at all.

use crate::sql_filter::Value;
use moss_client::capsule::{
    BulkDeleteRequest, BulkDeleteResponse, BulkUpdateRequest, BulkUpdateResponse, PurgeRequest,
    PurgeResponse,
};
use serde_json::json;

use super::{Capsules, Narrow, narrow, query, run_ids};
use crate::error::{Error, Result};
use crate::sql_filter::Filter;
use crate::store::engine::{Db, Engine};
use crate::store::{WriteCtx, now};
use crate::{bounds, names, tags};

const SECONDS_PER_DAY: i64 = 86_400;

/// The filters shared by bulk delete and bulk update, cleaned; `None` when all are empty.
struct Selection {
    filter: Filter,
    /// `workspace="project", tag="stale"`, for the messages.
    described: String,
}

fn select(n: &Narrow, engine: Engine) -> Result<Selection> {
    let mut f = Filter::default();
    f.raw("deleted_at IS NULL");
    let described = narrow(&mut f, n, engine)?;
    if described.is_empty() {
        return Err(Error::invalid(NO_FILTER));
    }
    Ok(Selection {
        filter: f,
        described: described.join(", "),
    })
}

const NO_FILTER: &str = "at least one filter is required (workspace, tag, name_prefix, run_id, \
     phase or role) and it must not be empty or only whitespace: this guard keeps a bulk \
     operation from touching every capsule";

fn plural(n: i64) -> &'static str {
    if n == 1 { "capsule" } else { "capsules" }
}

/// Ids of the selected rows, oldest change first, so the new sequence numbers keep their order.
fn selected_ids(db: Db<'_>, f: &Filter) -> Result<Vec<String>> {
    let sql = format!(
        "SELECT id FROM capsules {} ORDER BY updated_at, seq",
        f.sql()
    );
    let ids = db.query_map(&sql, &f.bind(), |r| r.get(0))?;
    Ok(ids)
}

/// Sets `assignments` (plus `updated_at` and a fresh `seq`) on each of `ids`.
fn update_each(
    ctx: &WriteCtx,
    ids: &[String],
    assignments: &str,
    values: &[Value],
    t: i64,
    keep: u32,
) -> Result<()> {
    let n = values.len();
    let sql = format!(
        "UPDATE capsules SET {assignments}, updated_at = ?{}, seq = ?{},
           versions_json = coalesce(?{}, versions_json), revision = revision + 1
         WHERE id = ?{}",
        n + 1,
        n + 2,
        n + 3,
        n + 4
    );
    let db = ctx.db();
    for id in ids {
        let versions = super::save_version(db, id, keep)?;
        let mut params = values.to_vec();
        params.push(Value::Int(t));
        params.push(Value::Int(ctx.next_seq()));
        params.push(versions.into_value());
        params.push(Value::Text(id.clone()));
        db.execute(&sql, &Value::params(&params))?;
    }
    if !ids.is_empty() {
        ctx.changed(&super::SEARCH_SOURCE);
    }
    Ok(())
}

impl Capsules {
    /// `capsule_bulk_delete`: soft-delete every active capsule matching all given filters.
    pub async fn bulk_delete(&self, req: BulkDeleteRequest) -> Result<BulkDeleteResponse> {
        let sel = select(&narrow_of!(req), self.store.engine())?;
        self.store
            .writer
            .run(move |ctx| {
                let ids = selected_ids(ctx.db(), &sel.filter)?;
                let t = now();
                // A soft delete changes no content: no version.
                update_each(ctx, &ids, "deleted_at = ?1", &[Value::Int(t)], t, 0)?;
                let n = ids.len() as i64;
                Ok(BulkDeleteResponse {
                    deleted: n,
                    message: format!("Soft-deleted {n} {} matching {}", plural(n), sel.described),
                })
            })
            .await
    }

    /// `capsule_bulk_update`: set phase, role or tags on every active capsule matching all given
    /// filters. `""` clears phase or role; `[]` clears tags; tags are replaced, not merged.
    pub async fn bulk_update(&self, req: BulkUpdateRequest) -> Result<BulkUpdateResponse> {
        let mut sel = select(&narrow_of!(req), self.store.engine())?;
        // skip_unchanged: a capsule already holding every value set is left out.
        let mut differs: Vec<String> = Vec::new();
        let mut differs_values: Vec<Value> = Vec::new();
        let mut assignments = Vec::new();
        let mut values = Vec::new();
        let mut described = Vec::new();
        for (col, val) in [("phase", &req.set_phase), ("role", &req.set_role)] {
            if let Some(v) = val {
                let v = bounds::handle(&format!("set_{col}"), Some(v))?;
                described.push(match &v {
                    Some(v) => format!("{col}={v:?}"),
                    None => format!("{col} cleared"),
                });
                match &v {
                    Some(v) => {
                        differs.push(format!("({col} IS NULL OR {col} != ?)"));
                        differs_values.push(Value::Text(v.clone()));
                    }
                    None => differs.push(format!("{col} IS NOT NULL")),
                }
                values.push(v.map(Value::Text).unwrap_or(Value::Null));
                assignments.push(format!("{col} = ?{}", values.len()));
            }
        }
        if let Some(given) = &req.set_tags {
            let cleaned = tags::clean(Some(given)).map_err(|mut e| {
                e.0.message = e.0.message.replacen("tags", "set_tags", 1);
                e
            })?;
            let json = tags::to_json(cleaned.as_deref());
            described.push(match &json {
                Some(j) => format!("tags={j}"),
                None => "tags cleared".to_string(),
            });
            match &json {
                // Tags are stored as deterministic JSON, so text equality is set equality in
                // order.
                Some(j) => {
                    differs.push("(tags_json IS NULL OR tags_json != ?)".into());
                    differs_values.push(Value::Text(j.clone()));
                }
                None => differs.push("tags_json IS NOT NULL".into()),
            }
            values.push(json.map(Value::Text).unwrap_or(Value::Null));
            assignments.push(format!("tags_json = ?{}", values.len()));
        }
        if assignments.is_empty() {
            return Err(Error::invalid(
                "no update fields: give at least one of set_phase, set_role or set_tags (\"\" \
                 or [] clears the field)",
            ));
        }
        let skip_unchanged = req.skip_unchanged.unwrap_or(false);
        if skip_unchanged {
            sel.filter
                .add_each(&format!("({})", differs.join(" OR ")), differs_values);
        }
        let assignments = assignments.join(", ");
        let keep = self.config.capsule_versions;
        self.store
            .writer
            .run(move |ctx| {
                let ids = selected_ids(ctx.db(), &sel.filter)?;
                update_each(ctx, &ids, &assignments, &values, now(), keep)?;
                let n = ids.len() as i64;
                Ok(BulkUpdateResponse {
                    updated: n,
                    message: format!(
                        "Updated {n} {} matching {}{}; set {}",
                        plural(n),
                        sel.described,
                        if skip_unchanged {
                            " (those already holding these values were skipped)"
                        } else {
                            ""
                        },
                        described.join(", ")
                    ),
                })
            })
            .await
    }

    /// `capsule_purge`: permanently delete soft-deleted capsules, optionally of one workspace
    /// and deleted at least `older_than_days` ago; or, with `run_id` and `confirm`, every
    /// capsule of the runs, active ones included.
    pub async fn purge(&self, req: PurgeRequest) -> Result<PurgeResponse> {
        let mut f = Filter::default();
        let mut described = Vec::new();
        let runs = run_ids(req.run_id.as_ref())?;
        if runs.is_empty() {
            f.raw("deleted_at IS NOT NULL");
        } else {
            if req.older_than_days.is_some() {
                return Err(Error::invalid_field(
                    "older_than_days",
                    "older_than_days selects soft-deleted capsules; a purge by run_id deletes \
                     every capsule of the run. Give one or the other",
                ));
            }
            f.any("run_id", &runs);
            described.push(match runs.as_slice() {
                [one] => format!("of run {one:?}"),
                many => format!("of runs {many:?}"),
            });
        }
        if let Some(ws) = req
            .workspace
            .as_deref()
            .map(str::trim)
            .filter(|w| !w.is_empty())
        {
            f.add("workspace_norm = ?", names::normalize(ws));
            described.push(format!("in workspace {ws:?}"));
        }
        match req.older_than_days {
            None => {}
            Some(d) if d < 0 => {
                return Err(Error::invalid(format!(
                    "older_than_days must be 0 or more, got {d}"
                )));
            }
            Some(d) => {
                let cutoff = now().saturating_sub(d.saturating_mul(SECONDS_PER_DAY));
                f.add("deleted_at <= ?", cutoff);
                described.push(format!("deleted at least {d} days ago"));
            }
        }
        if !runs.is_empty() && !req.confirm.unwrap_or(false) {
            let sql = format!(
                "SELECT count(*), count(deleted_at) FROM capsules {}",
                f.sql()
            );
            let params = f.params().to_vec();
            let (n, deleted): (i64, i64) = self
                .store
                .readers
                .run_db(move |db| {
                    Ok(db.query_one(&sql, &Value::params(&params), |r| {
                        Ok((r.get(0)?, r.get(1)?))
                    })?)
                })
                .await?;
            return Err(Error::invalid_field(
                "confirm",
                format!(
                    "a purge by run_id deletes every capsule of the run for good, active ones \
                     included: it would delete {n} {} {} ({} active). Repeat with confirm: true",
                    plural(n),
                    described.join(" "),
                    n - deleted
                ),
            )
            .with_details(json!({
                "field": "confirm",
                "would_purge": n,
                "active": n - deleted,
                "run_id": runs,
            })));
        }
        self.store
            .writer
            .run(move |ctx| {
                let n = record_purged(ctx, &f)?;
                let sql = format!("DELETE FROM capsules {}", f.sql());
                let deleted = ctx.db().execute(&sql, &f.bind())? as i64;
                debug_assert_eq!(n, deleted, "one job: nothing changed in between");
                if n > 0 {
                    ctx.changed(&super::SEARCH_SOURCE);
                }
                let mut message = format!("Permanently deleted {n} {}", plural(n));
                if !described.is_empty() {
                    message = format!("{message} {}", described.join(", "));
                }
                Ok(PurgeResponse { purged: n, message })
            })
            .await
    }
}

/// How long purged capsules stay listed for `capsule_watch`: a follower further behind lists
/// the capsules again instead.
pub const PURGED_KEPT_SECS: i64 = 7 * SECONDS_PER_DAY;

/// Records the capsules `f` selects in `capsule_purged`, each under a fresh sequence number in
/// their own order, before they are deleted: `capsule_watch` reports them as `purged`. Drops
/// records older than [`PURGED_KEPT_SECS`]. Returns how many it recorded.
fn record_purged(ctx: &WriteCtx<'_>, f: &Filter) -> Result<i64> {
    let db = ctx.db();
    let mut params = f.params().to_vec();
    let n: i64 = db.query_one(
        &format!("SELECT count(*) FROM capsules {}", f.sql()),
        &f.bind(),
        |r| r.get(0),
    )?;
    let t = now();
    db.execute(
        "DELETE FROM capsule_purged WHERE purged_at < ?1",
        crate::db_params![t - PURGED_KEPT_SECS],
    )?;
    if n == 0 {
        return Ok(0);
    }
    // The sequence hands out consecutive numbers within a job.
    let first = ctx.next_seq();
    for _ in 1..n {
        ctx.next_seq();
    }
    params.push(first.into());
    params.push(t.into());
    let k = params.len();
    let sql = format!(
        "INSERT INTO capsule_purged(seq, purged_at, {cols})
         SELECT ?{} + row_number() OVER (ORDER BY seq) - 1, ?{k}, {cols} FROM capsules {}",
        k - 1,
        f.sql(),
        cols = query::SUMMARY_COLS,
    );
    db.execute(&sql, &Value::params(&params))?;
    Ok(n)
}
