//! Copies a store from one database to another, whatever their engines: every table the two
//! schemas share, row by row with its ids (SQLite's implicit `rowid` included, which a
//! PostgreSQL table carries as a column of that name), then the database's sequence. Both
//! databases must be migrated to this build's schema first; the target must hold no rows.
//!
//! The target's triggers are off while the copy runs (rows they would derive, such as a
//! workspace's activity, are copied as they are). Queue tables (`*_queue`) are not copied: a
//! target's full-text and embedding indexes are built from its tables when its daemon first
//! starts (a store without an index or vector file is indexed whole), and PostgreSQL keeps its
//! full-text index in the tables themselves. Bookkeeping (`store_sequence`, `moss_schema`,
//! PostgreSQL's `moss_store` and `moss_queue_trims`) is not copied either: the sequence is
//! carried over as a value, and each database keeps its own schema version and identity.

use std::collections::BTreeMap;

use super::engine::{Db, DbError, Engine, Param, Value};
use crate::error::{Error, Result};

/// Rows inserted by one statement (far under both engines' parameter limits for the widest
/// table).
const ROWS_PER_INSERT: usize = 64;

/// Rows compared between source and target per table, after the copy.
const SAMPLE_ROWS: i64 = 8;

/// One table copied, and how many rows it holds on both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copied {
    pub table: String,
    pub rows: i64,
}

/// What [`copy_store`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub tables: Vec<Copied>,
    /// Rows read back from the target and found equal to the source's.
    pub sampled: i64,
    /// The sequence carried over.
    pub sequence: i64,
}

/// A table's columns, and whether its rows have an id outside them (SQLite's implicit rowid, or
/// a PostgreSQL column named `rowid`).
#[derive(Debug)]
struct Table {
    columns: Vec<String>,
    rowid: bool,
}

/// Copies every shared table of `from` into `to` in one transaction of `to` and one snapshot of
/// `from`, then sets `to`'s sequence to `from`'s. Before committing, counts every table on both
/// sides and compares a sample of rows: any difference fails the copy and leaves `to` as it
/// was. Returns the tables and their row counts.
pub fn copy_store(from: Db<'_>, to: Db<'_>) -> Result<Report> {
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
        // The target's triggers would derive rows from the copied ones (activity, queues) that
        // are copied themselves: they are off while the copy runs, within its transaction.
        let triggers = suspend_triggers(to, &target)?;
        let mut copied = Vec::new();
        let mut sampled = 0;
        for (name, src) in &source {
            let Some(dst) = target.get(name) else {
                continue;
            };
            copy_table(from, to, name, src, dst)?;
            let (rows, in_target) = (count_rows(from, name)?, count_rows(to, name)?);
            if rows != in_target {
                return Err(Mismatch(format!(
                    "table {name} has {rows} rows in the source but {in_target} in the target"
                ))
                .into());
            }
            sampled += sample(from, to, name, src, dst, rows)?;
            copied.push(Copied {
                table: name.clone(),
                rows,
            });
        }
        let seq = sequence(from)?;
        set_sequence(to, seq)?;
        resume_triggers(to, &target, triggers)?;
        if to.engine() == Engine::Postgres {
            // Every identity (`rowid`, and the columns standing for SQLite's rowid aliases:
            // `rid`, `seq`, `doc`) continues after the copied numbers, or the next insert would
            // be handed one of them.
            let identities: Vec<(String, String)> = to.query_map(
                "SELECT table_name::text, column_name::text FROM information_schema.columns
                 WHERE table_schema = current_schema() AND is_identity = 'YES'",
                &[],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            for (table, column) in identities {
                if !copied.iter().any(|c| c.table == table) {
                    continue;
                }
                to.query_one(
                    &format!(
                        "SELECT setval(pg_get_serial_sequence('{table}', '{column}'), \
                         greatest((SELECT max({column}) FROM {table}), 1))::text"
                    ),
                    &[],
                    |_| Ok(()),
                )?;
            }
        }
        Ok::<_, CopyError>(Report {
            tables: copied,
            sampled,
            sequence: seq,
        })
    })();
    let _ = from.batch("COMMIT");
    let report = match copied {
        Ok(r) => r,
        Err(e) => {
            let _ = to.batch("ROLLBACK");
            return Err(match e {
                CopyError::Db(e) => Error::internal("copying the store", e),
                CopyError::Mismatch(Mismatch(why)) => Error::internal(
                    "checking the copied store",
                    format!("{why}; nothing was committed"),
                ),
            });
        }
    };
    to.batch("COMMIT")
        .map_err(failed("committing the copied store"))?;
    if to.engine() == Engine::Postgres {
        // Statistics now, not at autovacuum's first pass: until then the planner knows
        // nothing of the tables' sizes, and a search of a rare word walked a whole workspace
        // (107 ms at the median after a bulk load, 19 ms after ANALYZE).
        for Copied { table, .. } in &report.tables {
            if let Err(e) = to.batch(&format!("ANALYZE {table}")) {
                tracing::warn!("ANALYZE {table} after the copy failed: {e}");
            }
        }
    }
    Ok(report)
}

/// Where [`migrate`] copies a store to.
#[derive(Debug)]
pub enum Target {
    /// A PostgreSQL database (its URL).
    Postgres(String),
    /// A new SQLite file, checked against the export path rules.
    Sqlite(crate::paths::CheckedPath),
}

impl Target {
    /// Parses `to` (`postgres://…` or `sqlite:PATH`); the error names the field and the forms.
    pub fn parse(to: &str, rules: &crate::paths::PathRules) -> Result<Target> {
        let to = to.trim();
        if to.starts_with("postgres://") || to.starts_with("postgresql://") {
            super::engine::postgres::config(to)
                .map_err(|_| Error::invalid_field("to", Target::FORMS))?;
            return Ok(Target::Postgres(to.to_string()));
        }
        let Some(path) = to.strip_prefix("sqlite:") else {
            return Err(Error::invalid_field("to", Target::FORMS));
        };
        let checked = rules.check_kind(path, true, crate::paths::FileKind::Backup)?;
        if std::fs::symlink_metadata(checked.path()).is_ok() {
            return Err(Error::invalid_field(
                "to",
                format!(
                    "{} exists already; a store is copied into a new file only (choose another \
                     name, or move that file away)",
                    checked.path().display()
                ),
            ));
        }
        Ok(Target::Sqlite(checked))
    }

    const FORMS: &str = "`to` is postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE or \
                         sqlite:PATH (PATH ends in .db; a bare name goes to ~/.moss/exports/)";
}

/// Copies the store `from` reads (one snapshot) into `target`, migrated first to this build's
/// schema for its engine, and checked (every table counted, rows sampled) before it commits.
/// Blocks: run it on a blocking thread.
pub fn migrate(
    from: Db<'_>,
    target: &Target,
    opts: &super::StoreOptions,
) -> Result<moss_client::daemon::MigrateResponse> {
    let started = std::time::Instant::now();
    let (shown, next, report) = match target {
        Target::Postgres(url) => {
            let shown = super::engine::postgres::redact(url);
            let config = super::engine::postgres::config(url)?;
            let conn = super::engine::postgres::PgConn::connect(&config).map_err(|e| {
                Error::new(
                    moss_client::ErrorCode::Unavailable,
                    format!("cannot reach the PostgreSQL database at {shown}: {e}"),
                )
            })?;
            let sources = opts.search_sources;
            super::migrations::migrate_postgres_then(&conn, opts.migrations_postgres, |db| {
                super::engine::search::ensure_columns(db, sources)
            })?;
            let report = copy_store(from, Db::Postgres(&conn))?;
            let next =
                format!("point a daemon at it: \"database\": \"{shown}\" in ~/.moss/config.json");
            (shown, next, report)
        }
        Target::Sqlite(checked) => {
            let path = checked.path();
            let file = NewFile::create(&path)?;
            let mut conn = rusqlite::Connection::open(&path)
                .map_err(|e| Error::internal(&format!("opening {}", path.display()), e))?;
            super::migrations::migrate(&mut conn, opts.migrations)?;
            let report = copy_store(from, Db::Sqlite(&conn))?;
            conn.close()
                .map_err(|(_, e)| Error::internal("closing the copied store", e))?;
            file.keep()?;
            let shown = path.display().to_string();
            let next = format!(
                "point a daemon at it: \"database\": \"sqlite:{shown}\" in ~/.moss/config.json"
            );
            (shown, next, report)
        }
    };
    Ok(moss_client::daemon::MigrateResponse {
        to: shown,
        rows: report.tables.iter().map(|t| t.rows).sum(),
        tables: report
            .tables
            .into_iter()
            .map(|t| moss_client::daemon::MigratedTable {
                table: t.table,
                rows: t.rows,
            })
            .collect(),
        sampled: report.sampled,
        sequence: report.sequence,
        elapsed_ms: started.elapsed().as_millis() as u64,
        next,
    })
}

/// `POST /backup` of a store on another engine than SQLite: the store copied (one snapshot) into
/// a new SQLite file, written beside `target` and renamed over it once complete, so the backup
/// restores like any other (`moss restore-backup`).
pub fn backup_to_sqlite(
    from: Db<'_>,
    target: &crate::paths::CheckedPath,
    opts: &super::StoreOptions,
    backed_up_at: i64,
) -> Result<moss_client::daemon::BackupResponse> {
    let final_path = target.path();
    let tmp = target.dir.join(format!(
        ".{}.{}.tmp",
        target.name.to_string_lossy(),
        ulid::Ulid::generate()
    ));
    let file = NewFile::create(&tmp)?;
    let mut conn = rusqlite::Connection::open(&tmp)
        .map_err(|e| Error::internal(&format!("opening {}", tmp.display()), e))?;
    let schema_version = super::migrations::migrate(&mut conn, opts.migrations)?;
    let report = copy_store(from, Db::Sqlite(&conn))?;
    conn.close()
        .map_err(|(_, e)| Error::internal("closing the backup", e))?;
    file.keep()?;
    let bytes = std::fs::metadata(&tmp)
        .map_err(|e| crate::paths::io_error("reading", &tmp, e))?
        .len();
    std::fs::rename(&tmp, &final_path)
        .map_err(|e| crate::paths::io_error("renaming into", &final_path, e))?;
    std::fs::File::open(&target.dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| crate::paths::io_error("syncing directory", &target.dir, e))?;
    Ok(moss_client::daemon::BackupResponse {
        restore: format!("moss restore-backup {}", final_path.display()),
        path: final_path.display().to_string(),
        bytes,
        schema_version,
        sequence: report.sequence,
        backed_up_at,
    })
}

/// A new file (0600, never through a symlink), removed unless kept.
struct NewFile(Option<std::path::PathBuf>);

impl NewFile {
    fn create(path: &std::path::Path) -> Result<NewFile> {
        use std::os::unix::fs::OpenOptionsExt;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|e| crate::paths::io_error("creating", path, e))?;
        Ok(NewFile(Some(path.to_path_buf())))
    }

    /// Syncs the file (and its directory) and keeps it.
    fn keep(mut self) -> Result<()> {
        let path = self.0.take().expect("kept once");
        let sync = |p: &std::path::Path| std::fs::File::open(p).and_then(|f| f.sync_all());
        sync(&path).map_err(|e| crate::paths::io_error("syncing", &path, e))?;
        if let Some(dir) = path.parent() {
            sync(dir).map_err(|e| crate::paths::io_error("syncing directory", dir, e))?;
        }
        Ok(())
    }
}

impl Drop for NewFile {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            let _ = std::fs::remove_file(&path);
            for suffix in ["-journal", "-wal", "-shm"] {
                let mut p = path.clone().into_os_string();
                p.push(suffix);
                let _ = std::fs::remove_file(p);
            }
        }
    }
}

/// Turns the target's triggers off for the copy: SQLite has no switch, so they are dropped
/// (and returned, to be made again); PostgreSQL disables them table by table.
fn suspend_triggers(
    to: Db<'_>,
    tables: &BTreeMap<String, Table>,
) -> std::result::Result<Vec<String>, DbError> {
    match to.engine() {
        Engine::Sqlite => {
            let triggers: Vec<(String, String)> = to.query_map(
                "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name",
                &[],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            for (name, _) in &triggers {
                to.batch(&format!("DROP TRIGGER \"{name}\""))?;
            }
            Ok(triggers.into_iter().map(|(_, sql)| sql).collect())
        }
        Engine::Postgres => {
            for name in tables.keys() {
                to.batch(&format!("ALTER TABLE {name} DISABLE TRIGGER USER"))?;
            }
            Ok(Vec::new())
        }
    }
}

fn resume_triggers(
    to: Db<'_>,
    tables: &BTreeMap<String, Table>,
    dropped: Vec<String>,
) -> std::result::Result<(), DbError> {
    match to.engine() {
        Engine::Sqlite => dropped.iter().try_for_each(|sql| to.batch(sql)),
        Engine::Postgres => tables
            .keys()
            .try_for_each(|name| to.batch(&format!("ALTER TABLE {name} ENABLE TRIGGER USER"))),
    }
}

/// The copy read back differs from the source.
#[derive(Debug)]
struct Mismatch(String);

#[derive(Debug)]
enum CopyError {
    Db(DbError),
    Mismatch(Mismatch),
}

impl From<DbError> for CopyError {
    fn from(e: DbError) -> Self {
        CopyError::Db(e)
    }
}

impl From<Mismatch> for CopyError {
    fn from(m: Mismatch) -> Self {
        CopyError::Mismatch(m)
    }
}

fn count_rows(db: Db<'_>, table: &str) -> std::result::Result<i64, DbError> {
    db.query_one(&format!("SELECT count(*) FROM {table}"), &[], |r| r.get(0))
}

/// Compares up to [`SAMPLE_ROWS`] rows spread over the table, by the same key on both sides.
fn sample(
    from: Db<'_>,
    to: Db<'_>,
    name: &str,
    src: &Table,
    dst: &Table,
    rows: i64,
) -> std::result::Result<i64, CopyError> {
    let columns = shared_columns(src, dst);
    if columns.is_empty() || rows == 0 {
        return Ok(0);
    }
    let list = columns.join(", ");
    // Rows are found by their integer key (the rowid, or an integer first column such as a
    // queue's sequence): texts would sort by each database's collation, which may differ.
    let integer_key = from.query_one(
        &format!("SELECT {} FROM {name} LIMIT 1", columns[0]),
        &[],
        |r| Ok(matches!(r.get::<Value>(0)?, Value::Int(_))),
    )?;
    if !integer_key {
        return Ok(0);
    }
    let sql = format!(
        "SELECT {list} FROM {name} ORDER BY {} LIMIT 1 OFFSET ?1",
        columns[0]
    );
    let step = (rows / SAMPLE_ROWS).max(1);
    let mut compared = 0;
    let mut offset = 0;
    while offset < rows && compared < SAMPLE_ROWS {
        let read = |db: Db<'_>| {
            db.query_one(&sql, &[Param::Int(offset)], |r| {
                (0..columns.len())
                    .map(|i| r.get::<Value>(i))
                    .collect::<std::result::Result<Vec<_>, _>>()
            })
        };
        let (a, b) = (read(from)?, read(to)?);
        if a != b {
            return Err(Mismatch(format!(
                "row {offset} of table {name} (by {list}) differs between source and target"
            ))
            .into());
        }
        compared += 1;
        offset += step;
    }
    Ok(compared)
}

fn copy_table(
    from: Db<'_>,
    to: Db<'_>,
    name: &str,
    src: &Table,
    dst: &Table,
) -> std::result::Result<(), DbError> {
    let columns = shared_columns(src, dst);
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

/// The columns a table's copy carries: those both sides have, the row's id first when both keep
/// one.
fn shared_columns<'t>(src: &'t Table, dst: &Table) -> Vec<&'t str> {
    let mut columns: Vec<&str> = src
        .columns
        .iter()
        .filter(|c| dst.columns.contains(c))
        .map(String::as_str)
        .collect();
    if src.rowid && dst.rowid {
        columns.insert(0, "rowid");
    }
    columns
}

/// The tables a store's rows live in, by name, with their columns.
fn tables(db: Db<'_>) -> std::result::Result<BTreeMap<String, Table>, DbError> {
    let skip = |name: &str| {
        name.ends_with("_queue")
            || matches!(
                name,
                "store_sequence"
                    | "moss_schema"
                    | "moss_search_layout"
                    | "moss_store"
                    | "moss_queue_trims"
            )
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

pub use super::writer::sequence;

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
