//! SQL for reading capsules: the column lists, the row mapping, lookups by address, pages.

use moss_client::capsule::{Capsule, FetchKey};

use super::fields::Address;
use crate::error::Result;
use crate::sql_filter::Filter;
use crate::store::engine::{Db, DbError, Param, Row};

/// Columns of a summary, in the order [`capsule_from_row`] reads them.
pub const SUMMARY_COLS: &str = "id, workspace_raw, workspace_norm, name_raw, name_norm, title, \
     capsule_chars, tokens_estimate, tags_json, source, run_id, phase, role, created_at, \
     updated_at, deleted_at, revision, based_on_json, task";

/// Summary columns plus `capsule_text`.
pub const FULL_COLS: &str = "id, workspace_raw, workspace_norm, name_raw, name_norm, title, \
     capsule_chars, tokens_estimate, tags_json, source, run_id, phase, role, created_at, \
     updated_at, deleted_at, revision, based_on_json, task, capsule_text";

pub fn cols(include_text: bool) -> &'static str {
    if include_text {
        FULL_COLS
    } else {
        SUMMARY_COLS
    }
}

/// Maps a row selected with [`SUMMARY_COLS`] (`include_text` false) or [`FULL_COLS`] (true).
pub fn capsule_from_row(row: &Row<'_>, include_text: bool) -> Result<Capsule, DbError> {
    let id: String = row.get(0)?;
    let workspace: String = row.get(1)?;
    let name: Option<String> = row.get(3)?;
    let tags_json: Option<String> = row.get(8)?;
    let tags = tags_json.and_then(|j| serde_json::from_str::<Vec<String>>(&j).ok());
    let based_on: Option<String> = row.get(17)?;
    let capsule_text = if include_text {
        Some(row.get(19)?)
    } else {
        None
    };
    let fetch_key = fetch_key(&id, &workspace, name.as_deref());
    Ok(Capsule {
        workspace_norm: row.get(2)?,
        name_norm: row.get(4)?,
        title: row.get(5)?,
        capsule_chars: row.get(6)?,
        tokens_estimate: row.get(7)?,
        tags: tags.filter(|t| !t.is_empty()),
        source: row.get(9)?,
        run_id: row.get(10)?,
        phase: row.get(11)?,
        role: row.get(12)?,
        task: row.get(18)?,
        created_at: row.get(13)?,
        updated_at: row.get(14)?,
        deleted_at: row.get(15)?,
        revision: row.get(16)?,
        based_on: based_on.and_then(|j| serde_json::from_str(&j).ok()),
        evidence: None,
        capsule_text,
        id,
        workspace,
        name,
        fetch_key,
    })
}

/// Named capsules are fetched by workspace and name; unnamed ones by id.
pub fn fetch_key(id: &str, workspace: &str, name: Option<&str>) -> FetchKey {
    match name {
        Some(name) => FetchKey {
            moss_capsule: Some(name.to_string()),
            moss_workspace: Some(workspace.to_string()),
            moss_id: None,
        },
        None => FetchKey {
            moss_id: Some(id.to_string()),
            ..FetchKey::default()
        },
    }
}

/// Finds one capsule. By name, the active capsule wins; with `include_deleted` and no active
/// one, the most recently updated deleted one is returned.
pub fn find(
    db: Db<'_>,
    addr: &Address,
    include_deleted: bool,
    include_text: bool,
) -> Result<Option<Capsule>> {
    let cols = cols(include_text);
    let found = match addr {
        Address::Id(id) => {
            let sql = if include_deleted {
                format!("SELECT {cols} FROM capsules WHERE id = ?1")
            } else {
                format!("SELECT {cols} FROM capsules WHERE id = ?1 AND deleted_at IS NULL")
            };
            db.query_opt(&sql, crate::db_params![id], |r| {
                capsule_from_row(r, include_text)
            })?
        }
        Address::Name {
            workspace,
            name_norm,
            ..
        } => {
            let active = format!(
                "SELECT {cols} FROM capsules WHERE workspace_norm = ?1 AND name_norm = ?2 \
                 AND deleted_at IS NULL"
            );
            let hit = db.query_opt(
                &active,
                crate::db_params![&workspace.norm, name_norm],
                |r| capsule_from_row(r, include_text),
            )?;
            if hit.is_some() || !include_deleted {
                hit
            } else {
                let any = format!(
                    "SELECT {cols} FROM capsules WHERE workspace_norm = ?1 AND name_norm = ?2 \
                     AND deleted_at IS NOT NULL ORDER BY updated_at DESC, seq DESC LIMIT 1"
                );
                db.query_opt(&any, crate::db_params![&workspace.norm, name_norm], |r| {
                    capsule_from_row(r, include_text)
                })?
            }
        }
    };
    Ok(found)
}

/// An active capsule's row as writes find it: the id, and the times a write keeps or compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActiveRow {
    pub id: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub revision: i64,
}

fn active_row(r: &Row<'_>) -> Result<ActiveRow, DbError> {
    Ok(ActiveRow {
        id: r.get(0)?,
        created_at: r.get(1)?,
        updated_at: r.get(2)?,
        revision: r.get(3)?,
    })
}

/// The active capsule at `addr`, if any (for writes, which touch active rows only).
pub fn active(db: Db<'_>, addr: &Address) -> Result<Option<ActiveRow>> {
    match addr {
        Address::Id(id) => Ok(db.query_opt(
            "SELECT id, created_at, updated_at, revision FROM capsules \
             WHERE id = ?1 AND deleted_at IS NULL",
            crate::db_params![id],
            active_row,
        )?),
        Address::Name {
            workspace,
            name_norm,
            ..
        } => active_by_name(db, &workspace.norm, name_norm),
    }
}

/// The active capsule holding a name, if any: at most one, as the unique index on active names
/// guarantees.
pub fn active_by_name(
    db: Db<'_>,
    workspace_norm: &str,
    name_norm: &str,
) -> Result<Option<ActiveRow>> {
    Ok(db.query_opt(
        "SELECT id, created_at, updated_at, revision FROM capsules \
         WHERE workspace_norm = ?1 AND name_norm = ?2 AND deleted_at IS NULL",
        crate::db_params![workspace_norm, name_norm],
        active_row,
    )?)
}

/// Whether only a soft-deleted capsule exists at `addr` (to make a 404 say so).
pub fn only_deleted_exists(db: Db<'_>, addr: &Address) -> Result<bool> {
    let n: i64 = match addr {
        Address::Id(id) => db.query_one(
            "SELECT count(*) FROM capsules WHERE id = ?1 AND deleted_at IS NOT NULL",
            crate::db_params![id],
            |r| r.get(0),
        )?,
        Address::Name {
            workspace,
            name_norm,
            ..
        } => db.query_one(
            "SELECT count(*) FROM capsules WHERE workspace_norm = ?1 AND name_norm = ?2 \
             AND deleted_at IS NOT NULL",
            crate::db_params![&workspace.norm, name_norm],
            |r| r.get(0),
        )?,
    };
    Ok(n > 0)
}

/// One page of capsules matching `filter`, newest first, and the total.
pub fn page(
    db: Db<'_>,
    filter: &Filter,
    include_text: bool,
    limit: i64,
    offset: i64,
) -> Result<(Vec<Capsule>, i64)> {
    let where_sql = filter.sql();
    let n = filter.params().len();
    let sql = format!(
        "SELECT {} FROM capsules {where_sql} ORDER BY updated_at DESC, seq DESC \
         LIMIT ?{} OFFSET ?{}",
        cols(include_text),
        n + 1,
        n + 2
    );
    let mut params: Vec<Param<'_>> = filter.bind();
    params.push(Param::Int(limit));
    params.push(Param::Int(offset));
    let items = db.query_map(&sql, &params, |r| capsule_from_row(r, include_text))?;
    let total: i64 = if offset == 0 && (items.len() as i64) < limit {
        items.len() as i64
    } else {
        db.query_one(
            &format!("SELECT count(*) FROM capsules {where_sql}"),
            &filter.bind(),
            |r| r.get(0),
        )?
    };
    Ok((items, total))
}
