//! The full-text indexer: a thread that keeps `moss-fts.db` in step with the tables it indexes.
//!
//! Indexing a capsule (tokenizing ~2 KB of text, writing FTS5 segments and merging them) costs
//! more than the rest of a store together. Done inside the write transaction it made every
//! store wait for it; here it runs on its own thread, against its own database file, in
//! parallel with the writer.
//!
//! Each [`Source`] in [`SOURCES`] is a table of `moss.db` whose rows are searchable, with its own
//! queue in `moss.db`, its own FTS5 table in the index file and its own watermark. For each:
//!
//! 1. Triggers on the table append the rowid of every text change to the source's queue, in
//!    the same transaction as the change.
//! 2. After each commit the writer wakes the indexer (an atomic flag and `unpark`: see `Wake`).
//!    The indexer reads the queue past the source's watermark together with the current rows,
//!    100 at a time (`READ_CHUNK`; each chunk one read snapshot), replaces those rows in the
//!    source's FTS5 table, and stores the new watermark in the same transaction of the index
//!    file, up to 4,000 entries per transaction (`PASS_SIZE`). A crash at any point replays at
//!    most what was not yet recorded: replaying is idempotent.
//! 3. The writer trims queue entries at or below the watermark at its next batch.
//!
//! The indexer serves the sources in rounds, one pass (one transaction of the index file) for
//! each source with something queued, until none has: a backlog in one source delays another
//! by at most one pass per round. Pacing, waking and the searches' hurry are shared.
//!
//! A source without a watermark in the index file (first start, a source new to this file, the
//! file deleted to force a rebuild, or a descriptor whose columns or tokenizer changed) has its
//! FTS5 table built from every row of its table in one snapshot, then follows its queue.
//!
//! The index trails the writes by one indexer pass (milliseconds; longer under sustained load).
//! [`IndexView`] tells the store how far each source has come and lets search wait for the
//! writes it must see.
//!
//! While writes keep arriving the indexer paces itself (see `Pace`): it rests three times as
//! long as it has just worked, unless a search is waiting for it.
//!
//! Adding a source takes a migration that creates its queue table (`seq INTEGER PRIMARY KEY,
//! doc INTEGER NOT NULL`) and the triggers feeding it, and its descriptor in [`SOURCES`]; the
//! indexer creates and fills its FTS5 table at the next start.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

use rusqlite::types::{ToSqlOutput, Value};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde::Deserialize;
use tokio::sync::watch;

use super::writer::BatchHooks;
use crate::error::{Error, Result};

/// The indexer thread's nice value where SCHED_IDLE is refused (Linux).
#[cfg(target_os = "linux")]
const INDEXER_NICE: i32 = 19;

/// Queue entries read per statement (one read snapshot of `moss.db`, released before the index
/// writes; so at most this many texts in memory at once). Also the indexer's unit of work
/// between rests (see [`Pace`]): about 10 ms for texts of 2 KB.
const READ_CHUNK: i64 = 100;
/// Queue entries indexed per transaction of the index file, at most: a pass reads up to this
/// many, `READ_CHUNK` at a time, into one transaction.
const PASS_SIZE: i64 = 4_000;
/// FTS5's in-memory buffer of new postings (its `hashsize`, 1 MiB by default). FTS5 writes a
/// segment each time the buffer fills or a transaction ends, and merges segments level by
/// level: bigger segments leave fewer levels for each posting to be rewritten through. Indexing
/// 40,000 capsules of 2 KB on one thread took 97-107 µs each with this buffer and `PASS_SIZE`,
/// 110-135 µs with 500 per transaction and the default buffer; it costs at most this much more
/// memory while a pass runs (the buffer is per FTS5 table, and a pass writes one).
const HASH_SIZE: i64 = 8 * 1024 * 1024;
/// While writes are arriving, the indexer rests this many times as long as each step of work
/// took: it works at most a quarter of the time.
const REST_PER_WORK: u32 = 3;

/// The index file's watermarks, one per source. `layout` is the FTS5 table's arguments (columns
/// and tokenizer) it was built with: a descriptor that no longer matches is rebuilt.
const STATE_SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS indexer_sources (
      source      TEXT PRIMARY KEY,
      applied_seq INTEGER NOT NULL,
      layout      TEXT NOT NULL
    );
";

/// How full-text search cuts text into words (`search_tokenizer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchTokenizer {
    /// Letters and digits make words; everything else separates them (`src`, `auth`,
    /// `session`, `go`).
    #[default]
    Default,
    /// `_`, `/`, `-` and `.` are word characters too: `src/auth/session.go`, `snake_case_name`
    /// and `pr-123` are single words. A part of one (`session`) no longer finds it, and a word
    /// followed by a full stop is another word.
    Code,
}

/// A table of `moss.db` kept searchable in the index file. Names are plain SQL identifiers,
/// written into the indexer's statements as they are.
#[derive(Debug)]
pub struct Source {
    /// The source's name in the index file's state, the store's API and the daemon's status.
    pub name: &'static str,
    /// The table in `moss.db` whose rows are indexed, by rowid (so `VACUUM`, which may renumber
    /// rowids, would need a rebuild).
    pub table: &'static str,
    /// Its queue in `moss.db`, `(seq INTEGER PRIMARY KEY, doc INTEGER NOT NULL)`: triggers on
    /// `table` append a row's rowid at its insert, its delete and each change of an indexed
    /// column.
    pub queue: &'static str,
    /// The columns of `table` indexed, under the same names in the FTS5 table.
    pub columns: &'static [&'static str],
    /// The FTS5 table in the index file (`fts.<name>` to the readers, which attach it as `fts`).
    pub fts: &'static str,
    /// Its `tokenize` option.
    pub tokenizer: &'static str,
    /// Whether `search_tokenizer = "code"` applies: searched by what users type (capsules,
    /// reasoning). Memories stay on the default: recall splits its query at punctuation into
    /// terms and matches paths through contexts instead.
    pub code_aware: bool,
}

/// Capsules: title and text.
pub static CAPSULES: Source = Source {
    name: "capsules",
    table: "capsules",
    queue: "capsules_fts_queue",
    columns: &["title", "capsule_text"],
    fts: "capsules_fts",
    tokenizer: "unicode61 remove_diacritics 2",
    code_aware: true,
};

/// Reasoning entries (notes, trace, cards): title and content.
pub static REASONING: Source = Source {
    name: "reasoning",
    table: "reasoning_entries",
    queue: "reasoning_entries_fts_queue",
    columns: &["title", "content"],
    fts: "reasoning_fts",
    tokenizer: "unicode61 remove_diacritics 2",
    code_aware: true,
};

/// Memories: content, contexts and slot.
pub static MEMORIES: Source = Source {
    name: "memories",
    table: "memories",
    queue: "memories_fts_queue",
    columns: &["content", "contexts_text", "slot"],
    fts: "memories_fts",
    tokenizer: "unicode61 remove_diacritics 2",
    code_aware: false,
};

/// Every source the indexer serves, in the order of its rounds.
pub static SOURCES: &[&Source] = &[&CAPSULES, &REASONING, &MEMORIES];

/// The index file next to the database.
pub fn index_path(db: &Path) -> PathBuf {
    db.with_file_name("moss-fts.db")
}

/// How far a source's index has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexLag {
    pub source: &'static str,
    /// The newest committed entry of its queue: what a search must wait for.
    pub queued: i64,
    /// The queue entry up to which the index holds the changes.
    pub applied: i64,
}

impl IndexLag {
    /// Text changes committed but not yet in the index.
    pub fn behind(&self) -> i64 {
        (self.queued - self.applied).max(0)
    }
}

/// One source's position, shared by the indexer thread, the writer's hooks and the store.
/// Atomics, so that the writer never waits on a lock the indexer holds (see `Wake`).
#[derive(Debug)]
struct Position {
    /// The queue sequence up to which the index is current (moved by the indexer).
    applied: AtomicI64,
    /// The queue's newest committed sequence (moved by the writer after each commit).
    queued: AtomicI64,
}

/// A source as the store follows it.
#[derive(Debug)]
struct Followed {
    source: &'static Source,
    position: Arc<Position>,
    /// Follows `position.applied`, for waits.
    progress: watch::Receiver<i64>,
}

/// What the store sees of the index: how far each source has come, and a way to wait for it.
/// Cheap to clone.
#[derive(Clone, Debug)]
pub struct IndexView {
    sources: Arc<[Followed]>,
    hurry: Hurry,
}

impl IndexView {
    /// `source` must be one of [`SOURCES`].
    fn followed(&self, source: &Source) -> &Followed {
        self.sources
            .iter()
            .find(|f| f.source.name == source.name)
            .unwrap_or_else(|| panic!("{} is not a full-text source", source.name))
    }

    /// The newest committed text change of `source` its index must apply (a queue sequence).
    pub fn queued(&self, source: &Source) -> i64 {
        self.followed(source)
            .position
            .queued
            .load(Ordering::Acquire)
    }

    /// Text changes of `source` committed but not yet in its index.
    pub fn behind(&self, source: &Source) -> i64 {
        lag(self.followed(source)).behind()
    }

    /// Every source's lag, in the order of [`SOURCES`].
    pub fn lag(&self) -> Vec<IndexLag> {
        self.sources.iter().map(lag).collect()
    }

    /// Waits until the index of `source` holds every text change queued up to `seq`, at most
    /// `timeout`. Returns whether it got there. While it waits, the indexer does not rest.
    pub async fn reached(&self, source: &Source, seq: i64, timeout: Duration) -> bool {
        let mut progress = self.followed(source).progress.clone();
        if *progress.borrow() >= seq {
            return true;
        }
        let _hurry = self.hurry.start();
        matches!(
            tokio::time::timeout(timeout, progress.wait_for(|applied| *applied >= seq)).await,
            Ok(Ok(_))
        )
    }

    #[cfg(test)]
    pub(crate) fn hurry(&self) -> &Hurry {
        &self.hurry
    }
}

fn lag(f: &Followed) -> IndexLag {
    IndexLag {
        source: f.source.name,
        queued: f.position.queued.load(Ordering::Acquire),
        applied: f.position.applied.load(Ordering::Acquire),
    }
}

/// Handle on the indexer thread.
#[derive(Debug)]
pub struct Indexer {
    view: IndexView,
    handle: Option<JoinHandle<()>>,
}

/// What the writer does around each commit for the indexer: trim applied queue entries, and
/// wake the indexer once the batch is committed.
#[derive(Debug)]
pub struct IndexHooks {
    sources: Vec<Trimmed>,
    wake: Arc<Wake>,
    indexer: Thread,
}

/// A source's queue as the writer keeps it.
#[derive(Debug)]
struct Trimmed {
    /// Deletes applied entries but the newest.
    trim: String,
    /// The queue's newest sequence.
    newest: String,
    position: Arc<Position>,
    /// The queue's newest sequence in the batch being committed.
    pending: AtomicI64,
}

impl BatchHooks for IndexHooks {
    fn before_commit(&self, conn: &Connection) -> rusqlite::Result<()> {
        for s in &self.sources {
            let applied = s.position.applied.load(Ordering::Acquire);
            if applied > 0 {
                // The newest entry always stays: `seq` is a rowid, and an emptied table would
                // hand out seq 1 again, below the watermark, and those changes would never be
                // indexed.
                conn.prepare_cached(&s.trim)?.execute([applied])?;
            }
            let newest: i64 = conn
                .prepare_cached(&s.newest)?
                .query_row([], |r| r.get(0))?;
            s.pending.store(newest, Ordering::Relaxed);
        }
        Ok(())
    }

    fn after_commit(&self) {
        let mut queued = false;
        for s in &self.sources {
            let pending = s.pending.load(Ordering::Relaxed);
            if s.position.queued.fetch_max(pending, Ordering::Release) < pending {
                queued = true;
            }
        }
        if queued {
            self.wake.queued.fetch_add(1, Ordering::Release);
        }
        self.wake.pending.store(true, Ordering::Release);
        self.indexer.unpark();
    }
}

impl Drop for IndexHooks {
    /// The writer is gone: the indexer catches up with its last commits and stops.
    fn drop(&mut self) {
        self.wake.closed.store(true, Ordering::Release);
        self.indexer.unpark();
    }
}

/// How the writer wakes the indexer: flags and `unpark`, never a lock.
///
/// The indexer runs at the lowest priority, so it is often preempted, and a lock it held at that
/// moment (a channel's list of waiters is one) would stall the writer, between a commit and its
/// replies, until the indexer next got a CPU: under a burst of writes that saturates the CPUs,
/// that can be many milliseconds. Setting an atomic and unparking a thread waits on no one.
#[derive(Debug)]
struct Wake {
    /// A commit since the indexer last looked at the queues.
    pending: AtomicBool,
    /// Commits that queued text changes, of any source: while it moves, writes are arriving
    /// (see `Pace`).
    queued: AtomicU64,
    /// The writer has stopped (the hooks were dropped).
    closed: AtomicBool,
    /// Searches waiting for the index to reach their writes: the indexer does not rest while
    /// there is one.
    waiting: AtomicUsize,
}

impl Wake {
    fn new(pending: bool) -> Wake {
        Wake {
            pending: AtomicBool::new(pending),
            queued: AtomicU64::new(0),
            closed: AtomicBool::new(false),
            waiting: AtomicUsize::new(0),
        }
    }
}

/// How a search tells the indexer it is waiting for it. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Hurry {
    wake: Arc<Wake>,
    indexer: Thread,
}

impl Hurry {
    /// Until the guard is dropped, the indexer works without resting.
    pub fn start(&self) -> HurryGuard<'_> {
        self.wake.waiting.fetch_add(1, Ordering::AcqRel);
        self.indexer.unpark();
        HurryGuard(self)
    }

    /// How many waits are under way.
    #[cfg(test)]
    pub fn waiting(&self) -> usize {
        self.wake.waiting.load(Ordering::Acquire)
    }
}

/// See [`Hurry::start`].
#[derive(Debug)]
pub struct HurryGuard<'a>(&'a Hurry);

impl Drop for HurryGuard<'_> {
    fn drop(&mut self) {
        self.0.wake.waiting.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Keeps indexing from crowding out requests while writes are arriving.
///
/// Under `moss bench` (32 clients storing 2 KB capsules as fast as they can, on two cores) the
/// indexer under SCHED_IDLE still got most of one CPU (2.5 of the 8 CPU-seconds in a 4 s
/// `perf sched` trace): the kernel kept placing waking request threads on the other, busy CPU
/// instead of preempting the indexer, so the writer waited up to 17 ms for a CPU, and the store
/// p99 was 25-27 ms. With this pace the indexer took 8% of the CPU time, and in four runs
/// interleaved with four unpaced ones the store p99 was 17.6-18.4 ms against 24.9-26.6 ms, and
/// the stores per second 7,379-8,422 against 5,760-6,751.
///
/// The rest is a sleep the writer's commits do not end, so it holds whatever the CPUs are doing.
/// It is taken only after a step during which the writer committed text changes (of any
/// source): once writes stop, or a search waits for the index, or the writer closes, the indexer
/// works flat out. Under a sustained burst the index so falls behind (`index_behind` in the
/// daemon's status) and catches up after; a search that comes meanwhile waits for its writes at
/// full indexing speed.
#[derive(Debug)]
struct Pace<'a> {
    wake: &'a Wake,
}

impl Pace<'_> {
    /// Runs one step of indexing, then rests if the writer committed text changes meanwhile.
    fn step<T>(&self, work: impl FnOnce() -> T) -> T {
        let before = self.wake.queued.load(Ordering::Acquire);
        let started = Instant::now();
        let out = work();
        if self.wake.queued.load(Ordering::Acquire) != before {
            self.rest(started.elapsed() * REST_PER_WORK);
        }
        out
    }

    fn rest(&self, length: Duration) {
        let until = Instant::now() + length;
        loop {
            if self.wake.waiting.load(Ordering::Acquire) > 0
                || self.wake.closed.load(Ordering::Acquire)
            {
                return;
            }
            let now = Instant::now();
            if now >= until {
                return;
            }
            // The writer unparks the thread after every commit: park again until the end.
            std::thread::park_timeout(until - now);
        }
    }
}

/// A source's statements, built once when the indexer starts.
#[derive(Debug)]
struct Plan {
    source: &'static Source,
    /// The FTS5 table's arguments: columns and tokenizer.
    layout: String,
    /// Index file: create, empty, delete a row, insert a row.
    create: String,
    clear: String,
    delete: String,
    insert: String,
    /// `moss.db`: the queue's newest sequence; every row; the queue past a watermark with the
    /// current rows (`exists` false for a row deleted since).
    queue_end: String,
    read_all: String,
    read_queue: String,
}

/// What `search_tokenizer = "code"` adds to a source's tokenizer: `_`, `/`, `-` and `.` are
/// word characters, so paths, snake_case names and ids such as `pr-123` are single words.
const CODE_TOKENCHARS: &str = "tokenchars '_/-.'";

impl Plan {
    fn new(source: &'static Source) -> Plan {
        Plan::with(source, SearchTokenizer::Default)
    }

    /// The plan of `source` under the configured word rules. The tokenizer is part of the
    /// layout, so changing the setting rebuilds every code-aware source at the next start.
    fn with(source: &'static Source, words: SearchTokenizer) -> Plan {
        let Source {
            table,
            queue,
            columns,
            fts,
            tokenizer,
            ..
        } = source;
        let tokenizer = match words {
            SearchTokenizer::Code if source.code_aware => format!("{tokenizer} {CODE_TOKENCHARS}"),
            _ => tokenizer.to_string(),
        };
        let cols = columns.join(", ");
        let layout = format!("{cols}, tokenize = '{}'", tokenizer.replace('\'', "''"));
        let marks: Vec<String> = (2..columns.len() + 2).map(|i| format!("?{i}")).collect();
        let current: Vec<String> = columns.iter().map(|c| format!("c.{c}")).collect();
        Plan {
            source,
            create: format!("CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5({layout})"),
            layout,
            clear: format!("DELETE FROM {fts}"),
            delete: format!("DELETE FROM {fts} WHERE rowid = ?1"),
            insert: format!(
                "INSERT INTO {fts}(rowid, {cols}) VALUES (?1, {})",
                marks.join(", ")
            ),
            queue_end: format!("SELECT coalesce(max(seq), 0) FROM {queue}"),
            read_all: format!("SELECT rowid, {cols} FROM {table}"),
            read_queue: format!(
                "SELECT q.seq, q.doc, c.rowid IS NOT NULL, {} FROM {queue} q
                 LEFT JOIN {table} c ON c.rowid = q.doc
                 WHERE q.seq > ?1 ORDER BY q.seq LIMIT ?2",
                current.join(", ")
            ),
        }
    }
}

/// A source as the indexer thread serves it.
struct Indexed {
    plan: Plan,
    position: Arc<Position>,
    progress: watch::Sender<i64>,
}

impl Indexer {
    /// Opens (creating) the index file and starts the thread. Returns the writer's hooks; the
    /// thread stops after the hooks are dropped (when the writer exits), once it has caught up.
    pub fn spawn(db: &Path, words: SearchTokenizer) -> Result<(Indexer, IndexHooks)> {
        let path = index_path(db);
        let mut fts = Connection::open(&path)
            .map_err(|e| Error::internal(&format!("opening {}", path.display()), e))?;
        super::stable_plans(&fts)?;
        fts.execute_batch(
            // Checkpoint every 32 MiB instead of SQLite's 4 MiB: segment merges rewrite the
            // same pages pass after pass, and each checkpoint copies them once, not once per pass.
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;
             PRAGMA wal_autocheckpoint = 8192; PRAGMA journal_size_limit = 67108864;",
        )?;
        let plans: Vec<Plan> = SOURCES.iter().map(|s| Plan::with(s, words)).collect();
        prepare_index(&mut fts, &plans)?;
        super::restrict_modes(&path);
        let main = Connection::open_with_flags(
            db,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        super::stable_plans(&main)?;
        main.execute_batch("PRAGMA query_only = ON; PRAGMA busy_timeout = 5000;")?;
        let mut indexed = Vec::with_capacity(plans.len());
        let mut followed = Vec::with_capacity(plans.len());
        for plan in plans {
            let name = plan.source.name;
            let mut applied = applied_seq(&fts, name)?.unwrap_or(0);
            let queued: i64 = main.query_row(&plan.queue_end, [], |r| r.get(0))?;
            if applied > queued {
                // The queue never falls below the watermark (see before_commit), so this index
                // was built for another database (e.g. moss.db was replaced): rebuild it.
                tracing::warn!(
                    "the full-text index of {name} is ahead of the database ({applied} > \
                     {queued}); rebuilding it"
                );
                fts.execute("DELETE FROM indexer_sources WHERE source = ?1", [name])?;
                applied = 0;
            }
            let position = Arc::new(Position {
                applied: AtomicI64::new(applied),
                queued: AtomicI64::new(queued),
            });
            let (progress, progress_rx) = watch::channel(applied);
            followed.push(Followed {
                source: plan.source,
                position: position.clone(),
                progress: progress_rx,
            });
            indexed.push(Indexed {
                plan,
                position,
                progress,
            });
        }
        // Pending: catch up with whatever the queues held at start.
        let wake = Arc::new(Wake::new(true));
        let woken = wake.clone();
        let handle = std::thread::Builder::new()
            .name("moss-indexer".into())
            .spawn(move || run(main, fts, &woken, &indexed))
            .map_err(|e| Error::internal("starting the indexer thread", e))?;
        let indexer = handle.thread().clone();
        let hooks = IndexHooks {
            sources: followed
                .iter()
                .map(|f| Trimmed {
                    trim: format!(
                        "DELETE FROM {q} WHERE seq <= ?1 AND seq < (SELECT max(seq) FROM {q})",
                        q = f.source.queue
                    ),
                    newest: format!("SELECT coalesce(max(seq), 0) FROM {}", f.source.queue),
                    position: f.position.clone(),
                    pending: AtomicI64::new(0),
                })
                .collect(),
            wake: wake.clone(),
            indexer: indexer.clone(),
        };
        Ok((
            Indexer {
                view: IndexView {
                    sources: followed.into(),
                    hurry: Hurry { wake, indexer },
                },
                handle: Some(handle),
            },
            hooks,
        ))
    }

    /// How far each source has come, for the store.
    pub fn view(&self) -> IndexView {
        self.view.clone()
    }

    /// Waits for the thread (after the writer, and so the hooks, are gone).
    pub fn join(mut self) {
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Brings the index file's tables in line with `plans`, in one transaction: the state table,
/// the state of a file older than it, and each source's FTS5 table.
///
/// A source whose watermark is missing, whose table is missing, or whose table was built with
/// other columns or another tokenizer gets an empty table and no watermark: the indexer
/// rebuilds it. Tables of sources no longer served are left alone.
fn prepare_index(fts: &mut Connection, plans: &[Plan]) -> rusqlite::Result<()> {
    let tx = fts.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute_batch(STATE_SCHEMA)?;
    if table_exists(&tx, "indexer_state")? {
        // A file from before there were several sources kept one watermark, the capsules',
        // in `indexer_state(id = 1)`, for a table with the columns and tokenizer of `CAPSULES`
        // today: it is carried over, so the upgrade does not rebuild the index.
        let capsules = Plan::new(&CAPSULES);
        tx.execute(
            "INSERT OR IGNORE INTO indexer_sources(source, applied_seq, layout)
             SELECT ?1, applied_seq, ?2 FROM indexer_state WHERE id = 1",
            params![CAPSULES.name, capsules.layout],
        )?;
        tx.execute_batch("DROP TABLE indexer_state")?;
    }
    for plan in plans {
        let layout: Option<String> = tx
            .query_row(
                "SELECT layout FROM indexer_sources WHERE source = ?1",
                [plan.source.name],
                |r| r.get(0),
            )
            .optional()?;
        let built =
            layout.as_deref() == Some(plan.layout.as_str()) && table_exists(&tx, plan.source.fts)?;
        if !built {
            if layout.is_some() {
                tracing::warn!(
                    "the full-text index of {} is missing or built differently; rebuilding it",
                    plan.source.name
                );
            }
            tx.execute_batch(&format!("DROP TABLE IF EXISTS {}", plan.source.fts))?;
            tx.execute(
                "DELETE FROM indexer_sources WHERE source = ?1",
                [plan.source.name],
            )?;
        }
        tx.execute_batch(&plan.create)?;
        tx.execute(
            &format!(
                "INSERT INTO {fts}({fts}, rank) VALUES('hashsize', ?1)",
                fts = plan.source.fts
            ),
            [HASH_SIZE],
        )?;
    }
    tx.commit()
}

fn table_exists(conn: &Connection, name: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
        [name],
        |r| r.get(0),
    )
}

fn applied_seq(fts: &Connection, source: &str) -> rusqlite::Result<Option<i64>> {
    fts.prepare_cached("SELECT applied_seq FROM indexer_sources WHERE source = ?1")?
        .query_row([source], |r| r.get(0))
        .optional()
}

fn run(main: Connection, mut fts: Connection, wake: &Wake, sources: &[Indexed]) {
    background_priority();
    let pace = Pace { wake };
    // Each source gets a pass at the first wake (to rebuild or catch up); after that, only
    // while its index is behind its queue. A commit moves `queued` before it sets `pending`,
    // and `pending` is taken before `queued` is read, so no commit is missed.
    let mut visited = vec![false; sources.len()];
    loop {
        // Read `closed` first: once it is seen, every commit of the writer is visible.
        let last = wake.closed.load(Ordering::Acquire);
        if !wake.pending.swap(false, Ordering::AcqRel) && !last {
            // An unpark between the swap and here makes this return at once.
            std::thread::park();
            continue;
        }
        // Rounds of one pass per source, until no source has more queued.
        loop {
            let mut more = false;
            let mut failed = false;
            for (s, visited) in sources.iter().zip(visited.iter_mut()) {
                if *visited
                    && s.position.applied.load(Ordering::Acquire)
                        >= s.position.queued.load(Ordering::Acquire)
                {
                    continue;
                }
                match pass(&main, &mut fts, &s.plan, &pace) {
                    Ok((applied, rest)) => {
                        *visited = true;
                        s.position.applied.store(applied, Ordering::Release);
                        s.progress.send_replace(applied);
                        more |= rest;
                    }
                    Err(e) => {
                        tracing::error!(
                            "full-text indexing of {} failed (will retry): {e}",
                            s.plan.source.name
                        );
                        failed = true;
                    }
                }
            }
            if failed {
                std::thread::sleep(Duration::from_millis(500));
                if last {
                    return;
                }
                // Try again without waiting for another commit: a full disk stops the writes
                // that would wake the indexer, and the index catches up once space is freed.
                wake.pending.store(true, Ordering::Release);
                break;
            }
            if !more {
                break;
            }
        }
        if last {
            return;
        }
    }
}

/// Indexing is background work: under a burst of writes that saturates the CPUs, the requests
/// being answered go first and the index catches up when the burst ends (searches wait for it, up
/// to their bound). On Linux the thread runs under SCHED_IDLE: a waking request thread preempts
/// it at once, where a thread at nice 19 could still finish its time slice first (under
/// `moss bench`, with malloc then capped at two arenas, 5,900-6,000 stores/s against
/// 5,000-5,500 at nice 19 and 4,400-4,900 at nice 10). If the kernel refuses SCHED_IDLE, nice 19.
/// Elsewhere the thread keeps the default.
fn background_priority() {
    #[cfg(target_os = "linux")]
    {
        use thread_priority::{
            NormalThreadSchedulePolicy, ThreadPriority, ThreadSchedulePolicy,
            set_thread_priority_and_policy, thread_native_id,
        };
        if let Err(e) = set_thread_priority_and_policy(
            thread_native_id(),
            ThreadPriority::Min,
            ThreadSchedulePolicy::Normal(NormalThreadSchedulePolicy::Idle),
        ) {
            tracing::debug!("cannot put the indexer under SCHED_IDLE: {e:?}");
            let tid = rustix::thread::gettid();
            if let Err(e) = rustix::process::setpriority_process(Some(tid), INDEXER_NICE) {
                tracing::debug!("cannot lower the indexer's priority: {e}");
            }
        }
    }
}

/// One indexing transaction for one source. Returns its new watermark and whether more is
/// queued.
///
/// The read of the main database must not span the index writes: the WAL can start over only
/// when no reader holds an old snapshot (see `store::checkpointer`), and the blocking truncation
/// kept for a WAL that grows anyway stalls new writes while it waits for readers. For the same
/// reason a rebuild, which reads every row in one snapshot, is not paced: resting would hold the
/// snapshot longer.
fn pass(
    main: &Connection,
    fts: &mut Connection,
    plan: &Plan,
    pace: &Pace,
) -> rusqlite::Result<(i64, bool)> {
    let tx = fts.transaction()?;
    let outcome = match applied_seq(&tx, plan.source.name)? {
        None => {
            // One snapshot for the queue's end and every row (first start or forced rebuild).
            main.execute_batch("BEGIN")?;
            let built = rebuild(main, &tx, plan);
            main.execute_batch("COMMIT")?;
            built?
        }
        Some(start) => {
            // Chunk after chunk, each read in its own snapshot, into this one transaction.
            let mut applied = start;
            let mut indexed = 0;
            let outcome = loop {
                let read;
                (applied, read) = pace.step(|| apply_queue(main, &tx, plan, applied))?;
                indexed += read;
                if read < READ_CHUNK {
                    break (applied, false);
                }
                if indexed >= PASS_SIZE {
                    break (applied, true);
                }
            };
            if applied != start {
                tx.prepare_cached("UPDATE indexer_sources SET applied_seq = ?2 WHERE source = ?1")?
                    .execute(params![plan.source.name, applied])?;
            }
            outcome
        }
    };
    // Committing writes the buffered postings out as a segment, and may merge segments.
    pace.step(|| tx.commit())?;
    Ok(outcome)
}

/// Indexes every row of the source's table into its emptied FTS5 table; returns the queue's
/// end it covers.
fn rebuild(
    main: &Connection,
    tx: &rusqlite::Transaction<'_>,
    plan: &Plan,
) -> rusqlite::Result<(i64, bool)> {
    let upto: i64 = main.query_row(&plan.queue_end, [], |r| r.get(0))?;
    tx.execute(&plan.clear, [])?;
    {
        let mut rows = main.prepare(&plan.read_all)?;
        let mut insert = tx.prepare(&plan.insert)?;
        let width = plan.source.columns.len() + 1;
        let mut it = rows.query([])?;
        while let Some(r) = it.next()? {
            for i in 0..width {
                insert.raw_bind_parameter(i + 1, ToSqlOutput::Borrowed(r.get_ref(i)?))?;
            }
            insert.raw_execute()?;
        }
    }
    tx.execute(
        "INSERT OR REPLACE INTO indexer_sources(source, applied_seq, layout) VALUES (?1, ?2, ?3)",
        params![plan.source.name, upto, plan.layout],
    )?;
    Ok((upto, false))
}

/// Applies up to `READ_CHUNK` queue entries past `applied` (one statement, so one snapshot, read
/// in full before any index write). Returns the new watermark and how many entries were read.
fn apply_queue(
    main: &Connection,
    tx: &rusqlite::Transaction<'_>,
    plan: &Plan,
    applied: i64,
) -> rusqlite::Result<(i64, i64)> {
    let width = plan.source.columns.len();
    let mut rows = main.prepare_cached(&plan.read_queue)?;
    let changes = rows
        .query_map(params![applied, READ_CHUNK], |r| {
            let exists: bool = r.get(2)?;
            let values = if exists {
                Some(
                    (0..width)
                        .map(|i| r.get::<_, Value>(3 + i))
                        .collect::<rusqlite::Result<Vec<_>>>()?,
                )
            } else {
                None
            };
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, values))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    drop(rows);
    let Some(&(last, ..)) = changes.last() else {
        return Ok((applied, 0));
    };
    let mut delete = tx.prepare_cached(&plan.delete)?;
    let mut insert = tx.prepare_cached(&plan.insert)?;
    for (_, doc, values) in &changes {
        delete.execute([doc])?;
        if let Some(values) = values {
            insert.raw_bind_parameter(1, doc)?;
            for (i, v) in values.iter().enumerate() {
                insert.raw_bind_parameter(i + 2, v)?;
            }
            insert.raw_execute()?;
        }
    }
    Ok((last, changes.len() as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A migrated main database holding `n` capsules (so `n` queue entries), and an index file
    /// whose capsules source is empty with a watermark of 0.
    fn setup(n: i64) -> (tempfile::TempDir, Connection, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("moss.db");
        let mut main = Connection::open(&db).unwrap();
        super::super::migrations::migrate(&mut main).unwrap();
        add_capsules(&main, 1, n);
        let mut fts = Connection::open(index_path(&db)).unwrap();
        prepare_index(&mut fts, &[Plan::new(&CAPSULES)]).unwrap();
        fts.execute(
            "INSERT INTO indexer_sources(source, applied_seq, layout) VALUES ('capsules', 0, ?1)",
            [Plan::new(&CAPSULES).layout],
        )
        .unwrap();
        (dir, main, fts)
    }

    fn add_capsules(main: &Connection, from: i64, to: i64) {
        main.execute(
            "WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
             INSERT INTO capsules(id, workspace_raw, workspace_norm, title, capsule_text,
               capsule_chars, tokens_estimate, created_at, updated_at, seq)
             SELECT 'c' || i, 'w', 'w', 'T' || i, 'word' || i || ' common', 10, 2, 1, 1, i FROM n",
            [from, to],
        )
        .unwrap();
    }

    /// A wake for tests: no writer commits during a step, so the pace never rests.
    fn wake() -> Wake {
        Wake::new(false)
    }

    fn pass(main: &Connection, fts: &mut Connection) -> rusqlite::Result<(i64, bool)> {
        let wake = wake();
        super::pass(main, fts, &Plan::new(&CAPSULES), &Pace { wake: &wake })
    }

    fn watermark(fts: &Connection) -> Option<i64> {
        applied_seq(fts, CAPSULES.name).unwrap()
    }

    /// A step during which the writer committed text changes is followed by a rest three times
    /// its length; a step without one is not.
    #[test]
    fn the_indexer_rests_after_a_step_only_while_writes_arrive() {
        let wake = wake();
        let pace = Pace { wake: &wake };
        let started = Instant::now();
        pace.step(|| std::thread::sleep(Duration::from_millis(50)));
        let idle = started.elapsed();
        let started = Instant::now();
        pace.step(|| {
            std::thread::sleep(Duration::from_millis(50));
            wake.queued.fetch_add(1, Ordering::Release);
        });
        let busy = started.elapsed();
        assert!(busy >= Duration::from_millis(200), "rested: {busy:?}");
        assert!(
            idle < busy,
            "no rest without a commit: {idle:?} against {busy:?}"
        );
    }

    /// A search that starts waiting, or the writer closing, ends a rest at once.
    #[test]
    fn a_waiting_search_or_the_writer_closing_ends_a_rest() {
        for end in ["search", "close"] {
            let wake = Arc::new(wake());
            let (tx, rx) = std::sync::mpsc::channel();
            let (resting_tx, resting_rx) = std::sync::mpsc::channel();
            let resting = {
                let wake = wake.clone();
                std::thread::spawn(move || {
                    let pace = Pace { wake: &wake };
                    let started = Instant::now();
                    resting_tx.send(()).unwrap();
                    pace.rest(Duration::from_secs(300));
                    tx.send(started.elapsed()).unwrap();
                })
            };
            let hurry = Hurry {
                wake: wake.clone(),
                indexer: resting.thread().clone(),
            };
            // Counted from when the rest began (the thread may start late on a loaded machine),
            // so a rest that lasts until the search or the close lasts at least this long.
            resting_rx.recv().unwrap();
            std::thread::sleep(Duration::from_millis(100));
            let guard = (end == "search").then(|| hurry.start());
            if end == "close" {
                wake.closed.store(true, Ordering::Release);
                resting.thread().unpark();
            }
            let rested = rx
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("the rest did not end when the {end} came"));
            assert!(rested >= Duration::from_millis(100), "{end}: {rested:?}");
            drop(guard);
            assert_eq!(wake.waiting.load(Ordering::Acquire), 0);
            resting.join().unwrap();
        }
    }

    fn hits_in(fts: &Connection, table: &str, q: &str) -> i64 {
        fts.query_row(
            &format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?1"),
            [q],
            |r| r.get(0),
        )
        .unwrap()
    }

    fn hits(fts: &Connection, q: &str) -> i64 {
        hits_in(fts, "capsules_fts", q)
    }

    /// A pass reads the queue chunk by chunk into one transaction, up to `PASS_SIZE` entries,
    /// and says whether more is queued; the next pass takes the rest.
    #[test]
    fn passes_index_the_queue_in_chunks_up_to_the_pass_size() {
        let n = PASS_SIZE + READ_CHUNK + 7;
        let (_dir, main, mut fts) = setup(n);
        let (applied, more) = pass(&main, &mut fts).unwrap();
        assert_eq!((applied, more), (PASS_SIZE, true));
        assert_eq!(watermark(&fts), Some(PASS_SIZE));
        assert_eq!(hits(&fts, "common"), PASS_SIZE);
        let (applied, more) = pass(&main, &mut fts).unwrap();
        assert_eq!((applied, more), (n, false));
        assert_eq!(hits(&fts, "common"), n);
        assert_eq!(hits(&fts, &format!("word{n}")), 1);
        // Nothing queued: the watermark stays.
        assert_eq!(pass(&main, &mut fts).unwrap(), (n, false));
        assert_eq!(watermark(&fts), Some(n));
    }

    /// A queue ending exactly on a chunk boundary is caught up in one pass.
    #[test]
    fn a_queue_ending_on_a_chunk_boundary_is_caught_up() {
        let (_dir, main, mut fts) = setup(2 * READ_CHUNK);
        assert_eq!(pass(&main, &mut fts).unwrap(), (2 * READ_CHUNK, false));
        assert_eq!(hits(&fts, "common"), 2 * READ_CHUNK);
    }

    /// A changed or deleted row replaces or leaves its index entry; a title may be NULL.
    #[test]
    fn updates_and_deletes_follow_the_rows() {
        let (_dir, main, mut fts) = setup(3);
        main.execute_batch(
            "UPDATE capsules SET title = NULL, capsule_text = 'replaced' WHERE id = 'c1';
             DELETE FROM capsules WHERE id = 'c2';",
        )
        .unwrap();
        assert_eq!(pass(&main, &mut fts).unwrap(), (5, false));
        assert_eq!(
            (
                hits(&fts, "replaced"),
                hits(&fts, "word1"),
                hits(&fts, "word2")
            ),
            (1, 0, 0)
        );
        assert_eq!((hits(&fts, "common"), hits(&fts, "T3")), (1, 1));
    }

    /// The index file of a build that had one source kept its watermark in `indexer_state`: it
    /// becomes the capsules source's, and the index is kept, not rebuilt. A source whose columns
    /// or tokenizer changed since its table was built is rebuilt.
    #[test]
    fn an_index_file_from_before_sources_keeps_its_watermark() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("moss.db");
        let mut main = Connection::open(&db).unwrap();
        super::super::migrations::migrate(&mut main).unwrap();
        add_capsules(&main, 1, 5);
        let mut fts = Connection::open(index_path(&db)).unwrap();
        // The schema as that build created it, with a row no rebuild would produce.
        fts.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS capsules_fts USING fts5(
               title, capsule_text,
               tokenize = 'unicode61 remove_diacritics 2'
             );
             CREATE TABLE IF NOT EXISTS indexer_state (
               id          INTEGER PRIMARY KEY CHECK (id = 1),
               applied_seq INTEGER NOT NULL
             );
             INSERT INTO capsules_fts(rowid, title, capsule_text) VALUES (99, 't', 'keptmarker');
             INSERT INTO indexer_state(id, applied_seq) VALUES (1, 4);",
        )
        .unwrap();
        let plans = [Plan::new(&CAPSULES)];
        prepare_index(&mut fts, &plans).unwrap();
        assert!(!table_exists(&fts, "indexer_state").unwrap());
        assert_eq!(watermark(&fts), Some(4));
        // The pass applies what came after the watermark, and keeps the rest.
        assert_eq!(pass(&main, &mut fts).unwrap(), (5, false));
        assert_eq!(
            (
                hits(&fts, "keptmarker"),
                hits(&fts, "word5"),
                hits(&fts, "word1")
            ),
            (1, 1, 0),
            "not rebuilt"
        );
        // Reopening changes nothing.
        prepare_index(&mut fts, &plans).unwrap();
        assert_eq!(watermark(&fts), Some(5));
        assert_eq!(hits(&fts, "keptmarker"), 1);

        // Built with other columns: dropped, and rebuilt by the next pass.
        fts.execute(
            "UPDATE indexer_sources SET layout = 'capsule_text' WHERE source = 'capsules'",
            [],
        )
        .unwrap();
        prepare_index(&mut fts, &plans).unwrap();
        assert_eq!(watermark(&fts), None);
        assert_eq!(pass(&main, &mut fts).unwrap(), (5, false));
        assert_eq!((hits(&fts, "keptmarker"), hits(&fts, "common")), (0, 5));
        assert_eq!(watermark(&fts), Some(5));
    }

    /// A second source, described by one descriptor over a table with its queue and triggers,
    /// gets its own FTS5 table and watermark; the thread serves both in rounds until neither
    /// has more, including a rebuild of one while the other follows its queue.
    #[test]
    fn the_indexer_serves_every_source_in_rounds() {
        static NOTES: Source = Source {
            name: "notes",
            table: "notes",
            queue: "notes_fts_queue",
            columns: &["body"],
            fts: "notes_fts",
            tokenizer: "unicode61",
            code_aware: false,
        };
        let n = PASS_SIZE + 5;
        let (dir, main, mut fts) = setup(n);
        main.execute_batch(
            "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
             CREATE TABLE notes_fts_queue (seq INTEGER PRIMARY KEY, doc INTEGER NOT NULL);
             INSERT INTO notes(body) VALUES ('before the queue existed');
             CREATE TRIGGER notes_fts_insert AFTER INSERT ON notes BEGIN
               INSERT INTO notes_fts_queue(doc) VALUES (new.rowid);
             END;
             INSERT INTO notes(body) VALUES ('queued note');",
        )
        .unwrap();
        let plans: Vec<Plan> = [&CAPSULES, &NOTES].into_iter().map(Plan::new).collect();
        prepare_index(&mut fts, &plans).unwrap();
        let sources: Vec<Indexed> = plans
            .into_iter()
            .map(|plan| {
                let applied = applied_seq(&fts, plan.source.name).unwrap().unwrap_or(0);
                let queued = main.query_row(&plan.queue_end, [], |r| r.get(0)).unwrap();
                Indexed {
                    plan,
                    position: Arc::new(Position {
                        applied: AtomicI64::new(applied),
                        queued: AtomicI64::new(queued),
                    }),
                    progress: watch::channel(applied).0,
                }
            })
            .collect();
        let positions: Vec<Arc<Position>> = sources.iter().map(|s| s.position.clone()).collect();
        // The writer has closed: the thread catches up with everything, then returns.
        let wake = Wake::new(true);
        wake.closed.store(true, Ordering::Release);
        std::thread::spawn(move || run(main, fts, &wake, &sources))
            .join()
            .unwrap();
        let fts = Connection::open(index_path(&dir.path().join("moss.db"))).unwrap();
        assert_eq!(hits(&fts, "common"), n);
        assert_eq!(
            (
                hits_in(&fts, "notes_fts", "existed"),
                hits_in(&fts, "notes_fts", "queued")
            ),
            (1, 1),
            "the new source was built from every row"
        );
        assert_eq!(
            (watermark(&fts), applied_seq(&fts, "notes").unwrap()),
            (Some(n), Some(1))
        );
        assert_eq!(positions[0].applied.load(Ordering::Acquire), n);
        assert_eq!(positions[1].applied.load(Ordering::Acquire), 1);
    }
}
