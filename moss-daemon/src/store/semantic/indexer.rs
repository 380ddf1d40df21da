//! The embedder: a thread that keeps the vector file (`moss-vectors.db`) and the vectors in
//! memory in step with the tables it embeds.
//!
//! It follows the same queues as the full-text indexer (see `store::fts`): triggers append the
//! rowid of every text change to a source's queue in the same transaction as the change, and
//! the writer wakes both followers after each commit and trims no entry either still needs
//! (`QueueFollower::hold`). Embedding never runs on the write path: a store commits as soon as
//! its row and queue entry are written.
//!
//! For each source the vector file records the queue entry up to which its vectors are current
//! (its watermark), the model that made them, and, while the source is being rebuilt, the rowid
//! up to which its rows have been embedded. Each step embeds a few rows and writes their vectors
//! and the new watermark (or rebuild position) in one transaction, so a crash at any point
//! replays at most one step: replaying is idempotent (a row's vectors are replaced whole).
//!
//! A source is rebuilt when the file has no watermark for it, when its vectors were made by
//! another model (the model's identity is a digest of its files), or when its watermark is
//! ahead of the queue (the database was replaced). A rebuild walks the table by rowid, a step at
//! a time, each in its own read snapshot, and then applies what the queue gathered meanwhile.
//!
//! On PostgreSQL the database is shared by several daemons, each with its own embedder and
//! vector file (in its home, named by the database's identity: see
//! [`crate::store::engine::queues`]). The embedder follows the same queues, which keep their
//! newest entries for it instead of being trimmed to its watermark: one that finds its watermark
//! below a source's trimmed mark rebuilds that source. It learns of new entries from the commit
//! signals, this daemon's and (through the listener) the others', and reads the queue's end
//! itself.
//!
//! The thread runs at the lowest priority (SCHED_IDLE on Linux), and so does its pool of
//! workers for the model's arithmetic; while writes keep arriving it also rests three times as
//! long as each slice of a step (about 4,000 characters of text) took to embed, unless a search
//! is waiting for it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use crate::store::engine::postgres::PgConn;
use crate::store::engine::{Db, DbError, Param, queues};

use super::model::Model;
use super::passages::passages;
use super::vectors::{Quantized, Vectors};
use super::{EmbedSource, Shared, State};
use crate::store::fts::{FollowerWake, QueueFollower};

/// Rows read and embedded per step (one read snapshot, one transaction of the vector file).
const STEP_ROWS: i64 = 16;
/// While writes arrive, rest this many times as long as a slice of a step took to embed.
const REST_PER_WORK: u32 = 3;
/// Characters of text a step embeds between looks at whether writes arrive: a step's sixteen
/// memories at once, a capsule's passages (about 1,000 characters each) four or five at a
/// time, about half a second of work on one core.
const SLICE_CHARS: usize = 4_000;

/// The vector file next to the database.
pub fn vectors_path(db: &Path) -> PathBuf {
    db.with_file_name("moss-vectors.db")
}

/// The vector file of a PostgreSQL database of identity `identity`, in the daemon's home `dir`.
pub fn postgres_vectors_path(dir: &Path, identity: &str) -> PathBuf {
    dir.join(format!("moss-vectors-{identity}.db"))
}

/// Where the embedder reads the tables it embeds.
#[derive(Debug, Clone)]
pub enum Origin {
    /// This daemon's SQLite database (read-only), the vector file beside it. Its writer keeps
    /// the queue entries the embedder has not applied.
    Sqlite(PathBuf),
    /// A PostgreSQL database other daemons may write too; the vector file in `dir`.
    Postgres {
        config: Box<postgres::Config>,
        dir: PathBuf,
    },
}

/// The embedder's connection to the database.
enum Main {
    Sqlite(Connection),
    Postgres(Box<PgConn>),
}

impl Main {
    fn db(&self) -> Db<'_> {
        match self {
            Main::Sqlite(c) => Db::Sqlite(c),
            Main::Postgres(c) => Db::Postgres(c),
        }
    }

    /// On PostgreSQL, where the writer does not say how far the queues go: reads their ends
    /// (after reconnecting if the server dropped the connection).
    fn observe(&self, served: &[Served]) -> Result<(), DbError> {
        let Main::Postgres(conn) = self else {
            return Ok(());
        };
        conn.reconnect_if_closed()?;
        for s in served {
            s.follower
                .observe(queues::newest(self.db(), s.source.fts.queue)?);
        }
        Ok(())
    }
}

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS vector_sources (
      source      TEXT PRIMARY KEY,
      applied_seq INTEGER NOT NULL,
      model       TEXT NOT NULL,
      rebuilt_to  INTEGER
    );
    CREATE TABLE IF NOT EXISTS vectors (
      source    TEXT NOT NULL,
      doc       INTEGER NOT NULL,
      chunk     INTEGER NOT NULL,
      workspace TEXT NOT NULL,
      v         BLOB NOT NULL,
      PRIMARY KEY (source, doc, chunk)
    ) WITHOUT ROWID;
";

/// A source as the thread serves it.
pub(super) struct Served {
    pub(super) source: &'static EmbedSource,
    pub(super) follower: QueueFollower,
    /// Its index in `Shared::sources`.
    pub(super) slot: usize,
}

/// A source's place in the vector file.
#[derive(Debug, Clone, Copy)]
struct Mark {
    applied: i64,
    /// Set while rebuilding: rows up to this rowid are embedded.
    rebuilt_to: Option<i64>,
}

/// The thread's body. Returns when the writer closes (or at once when the model cannot load).
pub(super) fn run(
    origin: Origin,
    model_dir: PathBuf,
    served: Vec<Served>,
    wake: Arc<FollowerWake>,
    shared: Arc<Shared>,
) {
    crate::store::fts::indexing::background_priority();
    let release = || {
        for s in &served {
            s.follower.release();
        }
    };
    let model = match Model::load(&model_dir) {
        Ok(m) => Arc::new(m),
        Err(e) => {
            tracing::error!("semantic search is off: {e}");
            shared.set_state(State::Failed(e));
            release();
            return;
        }
    };
    let pool = match rayon::ThreadPoolBuilder::new()
        .num_threads(
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
        )
        .thread_name(|i| format!("moss-embed-{i}"))
        .start_handler(|_| crate::store::fts::indexing::background_priority())
        .build()
    {
        Ok(p) => p,
        Err(e) => {
            let e = format!("starting the embedder's workers: {e}");
            tracing::error!("semantic search is off: {e}");
            shared.set_state(State::Failed(e));
            release();
            return;
        }
    };
    let opened = open(&origin, &model, &served, &shared);
    let (main, mut file, mut marks) = match opened {
        Ok(v) => v,
        Err(e) => {
            tracing::error!("semantic search is off: {e}");
            shared.set_state(State::Failed(e));
            release();
            return;
        }
    };
    shared.set_model(model.clone());
    shared.set_state(State::Ready);
    tracing::info!(
        "semantic search on: {} ({} dimensions, model {})",
        model.dir.display(),
        model.dims,
        model.identity
    );
    let _ = wake.thread.set(std::thread::current());
    loop {
        if wake.closed.load(Ordering::Acquire) {
            return;
        }
        let mut more = false;
        if let Err(e) = main.observe(&served) {
            tracing::error!("reading the text-change queues failed (will retry): {e}");
            std::thread::sleep(Duration::from_millis(500));
            continue;
        }
        for (s, mark) in served.iter().zip(marks.iter_mut()) {
            match step(&main, &mut file, &model, &pool, s, *mark, &shared, &wake) {
                Ok(Some(next)) => {
                    *mark = next;
                    more = true;
                    publish(s, next, &shared);
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::error!("embedding {} failed (will retry): {e}", s.source.fts.name);
                    std::thread::sleep(Duration::from_millis(500));
                    more = true;
                }
            }
        }
        if !more && !wake.pending.swap(false, Ordering::AcqRel) {
            std::thread::park_timeout(Duration::from_secs(5));
        }
    }
}

/// Sleeps up to `length`, ending early when a search waits or the writer closes.
fn rest(wake: &FollowerWake, shared: &Shared, length: Duration) {
    let until = Instant::now() + length;
    loop {
        if shared.waiting.load(Ordering::Acquire) > 0 || wake.closed.load(Ordering::Acquire) {
            return;
        }
        let now = Instant::now();
        if now >= until {
            return;
        }
        std::thread::park_timeout(until - now);
    }
}

/// Tells the writer and the searches how far a source has come.
fn publish(s: &Served, mark: Mark, shared: &Shared) {
    let progress = &shared.sources[s.slot];
    progress.applied.store(mark.applied, Ordering::Release);
    progress
        .rebuilding
        .store(mark.rebuilt_to.is_some(), Ordering::Release);
    if mark.rebuilt_to.is_none() {
        s.follower.hold(mark.applied);
    }
    progress.changed.send_replace(());
}

/// Opens the main database (read-only) and the vector file, brings each source's record in line
/// with the model, and loads the vectors into memory. Errors name the file.
fn open(
    origin: &Origin,
    model: &Model,
    served: &[Served],
    shared: &Shared,
) -> Result<(Main, Connection, Vec<Mark>), String> {
    let (main, path) = match origin {
        Origin::Sqlite(db) => {
            let main = || -> rusqlite::Result<Connection> {
                let main = Connection::open_with_flags(
                    db,
                    OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )?;
                crate::store::stable_plans(&main)?;
                main.execute_batch("PRAGMA query_only = ON; PRAGMA busy_timeout = 5000;")?;
                Ok(main)
            };
            let main = main().map_err(|e| format!("opening {}: {e}", db.display()))?;
            (Main::Sqlite(main), vectors_path(db))
        }
        Origin::Postgres { config, dir } => {
            let conn =
                PgConn::connect(config).map_err(|e| format!("connecting to the database: {e}"))?;
            let identity = queues::identity(Db::Postgres(&conn))
                .map_err(|e| format!("reading the database's identity: {e}"))?;
            (
                Main::Postgres(Box::new(conn)),
                postgres_vectors_path(dir, &identity),
            )
        }
    };
    let opened = open_file(&main, &path, model, served, shared)
        .map_err(|e| format!("opening the vector file {}: {e}", path.display()))?;
    Ok((main, opened.0, opened.1))
}

fn open_file(
    main: &Main,
    path: &Path,
    model: &Model,
    served: &[Served],
    shared: &Shared,
) -> Result<(Connection, Vec<Mark>), DbError> {
    let mut file = Connection::open(path)?;
    file.execute_batch(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;",
    )?;
    file.execute_batch(SCHEMA)?;
    if let Err(e) = crate::home::set_mode(path, 0o600) {
        tracing::warn!("{e:#}");
    }
    let db = main.db();
    let mut marks = Vec::with_capacity(served.len());
    let tx = file.transaction()?;
    for s in served {
        let name = s.source.fts.name;
        let queue_end = queues::newest(db, s.source.fts.queue)?;
        // Entries trimmed without this follower (PostgreSQL: see `engine::queues`).
        let trimmed: i64 = match main {
            Main::Sqlite(_) => 0,
            Main::Postgres(_) => queues::trimmed(db, name)?,
        };
        s.follower.observe(queue_end);
        let row: Option<(i64, String, Option<i64>)> = tx
            .query_row(
                "SELECT applied_seq, model, rebuilt_to FROM vector_sources WHERE source = ?1",
                [name],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let mark = match row {
            Some((applied, m, rebuilt_to))
                if m == model.identity && applied <= queue_end && applied >= trimmed =>
            {
                Mark {
                    applied,
                    rebuilt_to,
                }
            }
            other => {
                match &other {
                    Some((_, m, _)) if *m != model.identity => tracing::warn!(
                        "the vectors of {name} were made by another model; rebuilding them"
                    ),
                    Some((applied, ..)) if *applied < trimmed => tracing::warn!(
                        "the vectors of {name} are more than {} changes behind the database \
                         (their daemon was stopped meanwhile); rebuilding them",
                        queues::KEEP
                    ),
                    Some(_) => tracing::warn!(
                        "the vectors of {name} are ahead of the database; rebuilding them"
                    ),
                    None => {}
                }
                tx.execute("DELETE FROM vectors WHERE source = ?1", [name])?;
                tx.execute(
                    "INSERT OR REPLACE INTO vector_sources(source, applied_seq, model, rebuilt_to)
                     VALUES (?1, ?2, ?3, 0)",
                    params![name, queue_end, model.identity],
                )?;
                Mark {
                    applied: queue_end,
                    rebuilt_to: Some(0),
                }
            }
        };
        // The queue keeps every entry from here on until this follower has applied it.
        s.follower.hold(mark.applied);
        marks.push(mark);
    }
    tx.commit()?;
    for (s, mark) in served.iter().zip(&marks) {
        let mut vectors = Vectors::new(model.dims);
        let mut stmt =
            file.prepare("SELECT doc, chunk, workspace, v FROM vectors WHERE source = ?1")?;
        let mut rows = stmt.query([s.source.fts.name])?;
        while let Some(r) = rows.next()? {
            let blob: Vec<u8> = r.get(3)?;
            if let Some(q) = Quantized::from_blob(&blob) {
                let ws: String = r.get(2)?;
                vectors.add(r.get(0)?, r.get(1)?, &ws, &q);
            }
        }
        *shared.sources[s.slot]
            .vectors
            .write()
            .expect("vectors lock") = vectors;
        if let Some(to) = mark.rebuilt_to {
            let left: i64 = db.query_one(
                &format!(
                    "SELECT count(*) FROM {} WHERE {} > ?1",
                    s.source.fts.table, s.source.key
                ),
                &[Param::Int(to)],
                |r| r.get(0),
            )?;
            shared.sources[s.slot]
                .rebuild_left
                .store(left, Ordering::Release);
        }
        publish(s, *mark, shared);
    }
    Ok((file, marks))
}

/// A row to embed: its rowid, and its workspace and text (none when it was deleted).
type Row = (i64, Option<(String, String, String)>);

/// One step for one source: a few rows of a rebuild, or a few queue entries. Returns the new
/// mark, or `None` when there was nothing to do.
#[allow(clippy::too_many_arguments)]
fn step(
    main: &Main,
    file: &mut Connection,
    model: &Model,
    pool: &rayon::ThreadPool,
    s: &Served,
    mark: Mark,
    shared: &Shared,
    wake: &FollowerWake,
) -> Result<Option<Mark>, String> {
    let src = s.source;
    let (rows, next): (Vec<Row>, Mark) = if let Some(to) = mark.rebuilt_to {
        let sql = format!(
            "SELECT c.{key}, {} FROM {} c WHERE c.{key} > ?1 ORDER BY c.{key} LIMIT ?2",
            columns(src),
            src.fts.table,
            key = src.key,
        );
        let rows = main
            .db()
            .query_map(&sql, &[Param::Int(to), Param::Int(STEP_ROWS)], |r| {
                Ok((r.get(0)?, Some((r.get(1)?, r.get(2)?, r.get(3)?))))
            })
            .map_err(|e| e.to_string())?;
        let next = match rows.last() {
            Some((doc, _)) if rows.len() as i64 == STEP_ROWS => Mark {
                applied: mark.applied,
                rebuilt_to: Some(*doc),
            },
            _ => Mark {
                applied: mark.applied,
                rebuilt_to: None,
            },
        };
        let left = &shared.sources[s.slot].rebuild_left;
        let done = rows.len() as i64;
        let _ = left.fetch_update(Ordering::AcqRel, Ordering::Acquire, |l| {
            Some(if next.rebuilt_to.is_none() {
                0
            } else {
                (l - done).max(0)
            })
        });
        (rows, next)
    } else {
        if mark.applied >= s.follower.queued() {
            return Ok(None);
        }
        let sql = format!(
            "SELECT q.seq, q.doc, CASE WHEN c.{key} IS NULL THEN 0 ELSE 1 END, {} FROM {} q
             LEFT JOIN {} c ON c.{key} = q.doc
             WHERE q.seq > ?1 ORDER BY q.seq LIMIT ?2",
            columns(src),
            src.fts.queue,
            src.fts.table,
            key = src.key,
        );
        let entries: Vec<(i64, Row)> = main
            .db()
            .query_map(
                &sql,
                &[Param::Int(mark.applied), Param::Int(STEP_ROWS)],
                |r| {
                    let exists: bool = r.get(2)?;
                    let row = if exists {
                        Some((r.get(3)?, r.get(4)?, r.get(5)?))
                    } else {
                        None
                    };
                    Ok((r.get(0)?, (r.get(1)?, row)))
                },
            )
            .map_err(|e| e.to_string())?;
        let Some(&(last, _)) = entries.last() else {
            return Ok(None);
        };
        // A row queued twice in the step is embedded once (its current text).
        let mut seen = HashMap::new();
        for (_, (doc, row)) in entries {
            seen.insert(doc, row);
        }
        (
            seen.into_iter().collect(),
            Mark {
                applied: last,
                rebuilt_to: None,
            },
        )
    };
    // Every passage of every row, embedded in one batch.
    let mut texts: Vec<String> = Vec::new();
    let mut owners: Vec<(i64, i64, usize)> = Vec::new(); // (doc, chunk, row index)
    for (i, (doc, row)) in rows.iter().enumerate() {
        if let Some((_, title, body)) = row {
            for (chunk, text) in passage_texts(title, body).into_iter().enumerate() {
                texts.push(text);
                owners.push((*doc, chunk as i64, i));
            }
        }
    }
    // In slices: while writes arrive, the embedder rests after each (the only rest it takes),
    // so that a step of long texts (sixteen capsules are about fifty passages, several seconds
    // of work) does not take the processors' caches from a burst of writes for all that time.
    let mut vectors = Vec::with_capacity(texts.len());
    let mut rest_of = texts.as_slice();
    while !rest_of.is_empty() {
        let mut n = 0;
        let mut chars = 0;
        while n < rest_of.len() && (n == 0 || chars + rest_of[n].len() <= SLICE_CHARS) {
            chars += rest_of[n].len();
            n += 1;
        }
        let (slice, after) = rest_of.split_at(n);
        rest_of = after;
        let refs: Vec<&str> = slice.iter().map(String::as_str).collect();
        let commits = wake.commits.load(Ordering::Acquire);
        let started = Instant::now();
        vectors.extend(pool.install(|| model.embed(&refs))?);
        if wake.commits.load(Ordering::Acquire) != commits
            && shared.waiting.load(Ordering::Acquire) == 0
        {
            rest(wake, shared, started.elapsed() * REST_PER_WORK);
        }
    }
    let quantized: Vec<Quantized> = vectors.iter().map(|v| Quantized::from_unit(v)).collect();
    // The vector file first (so a crash replays the step), then memory.
    let tx = file.transaction().map_err(|e| e.to_string())?;
    {
        let mut delete = tx
            .prepare_cached("DELETE FROM vectors WHERE source = ?1 AND doc = ?2")
            .map_err(|e| e.to_string())?;
        let mut insert = tx
            .prepare_cached(
                "INSERT OR REPLACE INTO vectors(source, doc, chunk, workspace, v)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )
            .map_err(|e| e.to_string())?;
        for (doc, _) in &rows {
            delete
                .execute(params![src.fts.name, doc])
                .map_err(|e| e.to_string())?;
        }
        for ((doc, chunk, i), q) in owners.iter().zip(&quantized) {
            let ws = rows[*i].1.as_ref().map_or("", |r| r.0.as_str());
            insert
                .execute(params![src.fts.name, doc, chunk, ws, q.to_blob()])
                .map_err(|e| e.to_string())?;
        }
        tx.execute(
            "UPDATE vector_sources SET applied_seq = ?2, rebuilt_to = ?3 WHERE source = ?1",
            params![src.fts.name, next.applied, next.rebuilt_to],
        )
        .map_err(|e| e.to_string())?;
    }
    tx.commit().map_err(|e| e.to_string())?;
    let mut mem = shared.sources[s.slot]
        .vectors
        .write()
        .expect("vectors lock");
    for (doc, _) in &rows {
        mem.remove(*doc);
    }
    for ((doc, chunk, i), q) in owners.iter().zip(&quantized) {
        let ws = rows[*i].1.as_ref().map_or("", |r| r.0.as_str());
        mem.add(*doc, *chunk, ws, q);
    }
    drop(mem);
    shared
        .embedded
        .fetch_add(texts.len() as u64, Ordering::Relaxed);
    Ok(Some(next))
}

/// The workspace, title and body of a row of `src`'s table aliased `c`.
fn columns(src: &EmbedSource) -> String {
    let title = match src.title {
        Some(t) => format!("coalesce(c.{t}, '')"),
        None => "''".into(),
    };
    format!("c.{}, {title}, coalesce(c.{}, '')", src.workspace, src.body)
}

/// The texts embedded for an item: each passage of its body, after its title.
pub fn passage_texts(title: &str, body: &str) -> Vec<String> {
    let title = title.trim();
    let ranges = passages(body);
    if ranges.is_empty() {
        return if title.is_empty() {
            Vec::new()
        } else {
            vec![title.to_string()]
        };
    }
    ranges
        .into_iter()
        .map(|r| {
            let p = body[r].trim();
            if title.is_empty() {
                p.to_string()
            } else {
                format!("{title}\n{p}")
            }
        })
        .collect()
}
