//! Copies a store from one database to another, whatever their engines: every table the two
//! schemas share, row by row with its ids (SQLite's implicit `rowid` included, which a
//! PostgreSQL table carries as a column of that name), then the database's sequence. Both
//! databases must be migrated to this build's schema first; the target must hold no rows.
//!
//! Queue tables (`*_queue`) are not copied: the target's own triggers queue every copied row, so
//! its full-text and embedding indexes are built from what was copied. Schema bookkeeping
//! (`store_sequence`, `moss_schema`) is not copied either: the sequence is carried over as a
//! value, and each database keeps its own schema version.

use std::collections::BTreeMap;

use super::engine::{Db, DbError, Engine, Param, Value};
use crate::error::{Error, Result};

/// Rows inserted by one statement (far under both engines' parameter limits for the widest
/// table).
const ROWS_PER_INSERT: usize = 64;

/// One table copied, and how many rows it holds on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    pub table: String,
    pub rows: i64,
}

/// A table's columns, and whether its rows have an id outside them (SQLite's implicit rowid, or
/// a PostgreSQL column named `rowid`).
#[derive(Debug)]
struct Table {
    columns: Vec<String>,
    rowid: bool,
}

/// Copies every shared table of `from` into `to` in one transaction of `to` and one snapshot of
/// `from`, then sets `to`'s sequence to `from`'s. Returns the tables and their row counts, as
/// counted again in `to` after the copy.
pub fn copy_store(from: Db<'_>, to: Db<'_>) -> Result<Vec<Copied>> {
    let failed = |what: &'static str| move |e: DbError| Error::internal(what, e);
    let source = tables(from).map_err(failed("listing the source's tables"))?;
    let target = tables(to).map_err(failed("listing the target's tables"))?;
    for name in source.keys() {
        if !target.contains_key(name) && count(from, name)? > 0 {
            return Err(Error::invalid(format!(
                "the target has no table {name}, which holds rows in the source: migrate the \
                 target with a mossd as new as the source's"
            )));
        }
    }
    for name in target.keys().filter(|n| source.contains_key(*n)) {
        if count(to, name)? > 0 {
            return Err(Error::invalid(format!(
                "the target already holds rows (table {name}); copy into an empty database"
            )));
        }
    }
    begin_snapshot(from).map_err(failed("opening a snapshot of the source"))?;
    to.batch("BEGIN")
        .map_err(failed("opening the target's transaction"))?;
    let copied = (|| {
        let mut copied = Vec::new();
        for (name, src) in &source {
            let Some(dst) = target.get(name) else {
                continue;
            };
            copy_table(from, to, name, src, dst)?;
            copied.push(name.clone());
        }
        let seq = sequence(from)?;
        set_sequence(to, seq)?;
        for name in &copied {
            if to.engine() == Engine::Postgres && target[name].rowid {
                // The identity behind `rowid` continues after the copied ids.
                to.query_one(
                    &format!(
                        "SELECT setval(pg_get_serial_sequence('{name}', 'rowid'), \
                         greatest((SELECT max(rowid) FROM {name}), 1))::text"
                    ),
                    &[],
                    |_| Ok(()),
                )?;
            }
        }
        Ok::<_, DbError>(copied)
    })();
    let _ = from.batch("COMMIT");
    let copied = match copied {
        Ok(c) => c,
        Err(e) => {
            let _ = to.batch("ROLLBACK");
            return Err(Error::internal("copying the store", e));
        }
    };
    to.batch("COMMIT")
        .map_err(failed("committing the copied store"))?;
    copied
        .into_iter()
        .map(|table| {
            let rows = count(to, &table)?;
            Ok(Copied { table, rows })
        })
        .collect()
}

fn copy_table(
    from: Db<'_>,
    to: Db<'_>,
    name: &str,
    src: &Table,
    dst: &Table,
) -> std::result::Result<(), DbError> {
    let mut columns: Vec<&str> = src
        .columns
        .iter()
        .filter(|c| dst.columns.contains(c))
        .map(String::as_str)
        .collect();
    if src.rowid && dst.rowid {
        columns.insert(0, "rowid");
    }
    if columns.is_empty() {
        return Ok(());
    }
    let list = columns.join(", ");
    let order = if src.rowid { " ORDER BY rowid" } else { "" };
    let select = format!("SELECT {list} FROM {name}{order}");
    let mut pending: Vec<Value> = Vec::with_capacity(ROWS_PER_INSERT * columns.len());
    let width = columns.len();
    let flush = |pending: &mut Vec<Value>| -> std::result::Result<(), DbError> {
        if pending.is_empty() {
            return Ok(());
        }
        let rows = pending.len() / width;
        let mut sql = format!("INSERT INTO {name} ({list}) VALUES ");
        for r in 0..rows {
            sql.push_str(if r == 0 { "(" } else { ", (" });
            for c in 0..width {
                if c > 0 {
                    sql.push_str(", ");
                }
                sql.push('?');
                sql.push_str(&(r * width + c + 1).to_string());
            }
            sql.push(')');
        }
        to.execute(&sql, &Value::params(pending))?;
        pending.clear();
        Ok(())
    };
    let mut inner: std::result::Result<(), DbError> = Ok(());
    from.query_each(&select, &[], |row| {
        for c in 0..width {
            pending.push(row.get::<Value>(c)?);
        }
        if pending.len() >= ROWS_PER_INSERT * width
            && let Err(e) = flush(&mut pending)
        {
            inner = Err(e);
            return Ok(false);
        }
        Ok(true)
    })?;
    inner?;
    flush(&mut pending)
}

/// The tables a store's rows live in, by name, with their columns.
fn tables(db: Db<'_>) -> std::result::Result<BTreeMap<String, Table>, DbError> {
    let skip = |name: &str| {
        name.ends_with("_queue")
            || matches!(name, "store_sequence" | "moss_schema")
            || name.starts_with("sqlite_")
    };
    let mut out = BTreeMap::new();
    match db.engine() {
        Engine::Sqlite => {
            let names: Vec<(String, String)> = db.query_map(
                "SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table' ORDER BY name",
                &[],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            for (name, sql) in names.into_iter().filter(|(n, _)| !skip(n)) {
                // (name, declared type, part of the primary key)
                let cols: Vec<(String, String, i64)> = db.query_map(
                    "SELECT name, upper(type), pk FROM pragma_table_info(?1) ORDER BY cid",
                    &[Param::Text(&name)],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )?;
                let pk: Vec<_> = cols.iter().filter(|c| c.2 > 0).collect();
                let alias = pk.len() == 1 && pk[0].1 == "INTEGER";
                let without_rowid = sql.to_uppercase().contains("WITHOUT ROWID");
                out.insert(
                    name,
                    Table {
                        columns: cols.into_iter().map(|c| c.0).collect(),
                        rowid: !alias && !without_rowid,
                    },
                );
            }
        }
        Engine::Postgres => {
            let cols: Vec<(String, String)> = db.query_map(
                "SELECT c.table_name::text, c.column_name::text \
                 FROM information_schema.columns c \
                 JOIN information_schema.tables t \
                   ON t.table_schema = c.table_schema AND t.table_name = c.table_name \
                 WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' \
                   AND c.is_generated = 'NEVER' \
                 ORDER BY c.table_name, c.ordinal_position",
                &[],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            for (table, column) in cols.into_iter().filter(|(t, _)| !skip(t)) {
                let t = out.entry(table).or_insert_with(|| Table {
                    columns: Vec::new(),
                    rowid: false,
                });
                if column == "rowid" {
                    t.rowid = true;
                } else {
                    t.columns.push(column);
                }
            }
        }
    }
    Ok(out)
}

fn count(db: Db<'_>, table: &str) -> Result<i64> {
    Ok(db.query_one(&format!("SELECT count(*) FROM {table}"), &[], |r| r.get(0))?)
}

fn begin_snapshot(db: Db<'_>) -> std::result::Result<(), DbError> {
    match db.engine() {
        // A read transaction: every table read as of one moment, writes going on meanwhile.
        Engine::Sqlite => db.batch("BEGIN"),
        Engine::Postgres => db.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"),
    }
}

/// The highest number the database's sequence has handed out.
pub fn sequence(db: Db<'_>) -> std::result::Result<i64, DbError> {
    match db.engine() {
        Engine::Sqlite => db.query_one("SELECT value FROM store_sequence WHERE id = 1", &[], |r| {
            r.get(0)
        }),
        Engine::Postgres => db.query_one(
            "SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END FROM moss_sequence",
            &[],
            |r| r.get(0),
        ),
    }
}

fn set_sequence(db: Db<'_>, value: i64) -> std::result::Result<(), DbError> {
    match db.engine() {
        Engine::Sqlite => db
            .execute(
                "UPDATE store_sequence SET value = ?1 WHERE id = 1",
                &[Param::Int(value)],
            )
            .map(|_| ()),
        Engine::Postgres => db.query_one(
            "SELECT setval('moss_sequence', ?1)::text",
            &[Param::Int(value)],
            |_| Ok(()),
        ),
    }
}

#[cfg(test)]
mod tests;
