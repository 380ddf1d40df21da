//! The full-text indexer: a thread that keeps `moss-fts.db` in step with `capsules`.
//!
//! Indexing a capsule (tokenizing ~2 KB of text, writing FTS5 segments and merging them) costs
//! more than the rest of a store together. Done inside the write transaction it made every
//! store wait for it; here it runs on its own thread, against its own database file, in
//! parallel with the writer:
//!
//! 1. Triggers on `capsules` append the rowid of every text change to `capsules_fts_queue`, in
//!    the same transaction as the change.
//! 2. After each commit the writer wakes the indexer (an atomic flag and `unpark`: see `Wake`).
//!    The indexer reads the queue past its watermark together with the current rows, 500 at a
//!    time (each chunk one read snapshot), replaces those rows in its FTS5 table, and stores the
//!    new watermark in the same transaction of the index file, up to 4,000 entries per
//!    transaction. A crash at any point replays at most what was not yet recorded: replaying is
//!    idempotent.
//! 3. The writer trims queue entries at or below the watermark at its next batch.
//!
//! If the index file is missing (first start, or deleted to force a rebuild), the indexer builds
//! it from every row of `capsules` in one snapshot, then follows the queue.
//!
//! The index trails the writes by one indexer pass (milliseconds; longer under sustained load).
//! [`super::Store::index_watermark`] and the queue's sequence tell a reader how far it has come, so search
//! can wait for the writes it must see.
//!
//! While writes keep arriving the indexer paces itself (see `Pace`): it rests three times as
//! long as it has just worked, unless a search is waiting for it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::thread::{JoinHandle, Thread};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
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
/// Queue entries indexed per transaction of the index file, at most.
const PASS_SIZE: i64 = 4_000;
/// FTS5's in-memory buffer of new postings (its `hashsize`, 1 MiB by default). FTS5 writes a
/// segment each time the buffer fills or a transaction ends, and merges segments level by
/// level: bigger segments leave fewer levels for each posting to be rewritten through. Indexing
/// 40,000 capsules of 2 KB on one thread took 97-107 µs each with this buffer and `PASS_SIZE`,
/// 110-135 µs with 500 per transaction and the default buffer; it costs at most this much more
/// memory while a pass runs.
const HASH_SIZE: i64 = 8 * 1024 * 1024;
/// While writes are arriving, the indexer rests this many times as long as each step of work
/// took: it works at most a quarter of the time.
const REST_PER_WORK: u32 = 3;

const SCHEMA: &str = "
    CREATE VIRTUAL TABLE IF NOT EXISTS capsules_fts USING fts5(
      title, capsule_text,
      tokenize = 'unicode61 remove_diacritics 2'
    );
    CREATE TABLE IF NOT EXISTS indexer_state (
      id          INTEGER PRIMARY KEY CHECK (id = 1),
      applied_seq INTEGER NOT NULL
    );
";

/// The index file next to the database.
pub fn index_path(db: &Path) -> PathBuf {
    db.with_file_name("moss-fts.db")
}

/// Handle on the indexer thread.
#[derive(Debug)]
pub struct Indexer {
    watermark: Arc<AtomicI64>,
    queued: Arc<AtomicI64>,
    progress: watch::Receiver<i64>,
    hurry: Hurry,
    handle: Option<JoinHandle<()>>,
}

/// What the writer does around each commit for the indexer: trim applied queue entries, and
/// wake the indexer once the batch is committed.
#[derive(Debug)]
pub struct IndexHooks {
    watermark: Arc<AtomicI64>,
    wake: Arc<Wake>,
    indexer: Thread,
    /// The queue's newest sequence in the batch being committed.
    pending: AtomicI64,
    /// The queue's newest committed sequence: what a search must wait for.
    queued: Arc<AtomicI64>,
}

impl BatchHooks for IndexHooks {
    fn before_commit(&self, conn: &Connection) -> rusqlite::Result<()> {
        let applied = self.watermark.load(Ordering::Acquire);
        if applied > 0 {
            // The newest entry always stays: `seq` is a rowid, and an emptied table would hand
            // out seq 1 again, below the watermark, and those changes would never be indexed.
            conn.prepare_cached(
                "DELETE FROM capsules_fts_queue WHERE seq <= ?1
                   AND seq < (SELECT max(seq) FROM capsules_fts_queue)",
            )?
            .execute([applied])?;
        }
        let newest: i64 = conn
            .prepare_cached("SELECT coalesce(max(seq), 0) FROM capsules_fts_queue")?
            .query_row([], |r| r.get(0))?;
        self.pending.store(newest, Ordering::Relaxed);
        Ok(())
    }

    fn after_commit(&self) {
        self.queued
            .fetch_max(self.pending.load(Ordering::Relaxed), Ordering::Release);
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
    /// A commit since the indexer last looked at the queue.
    pending: AtomicBool,
    /// The writer has stopped (the hooks were dropped).
    closed: AtomicBool,
    /// Searches waiting for the index to reach their writes: the indexer does not rest while
    /// there is one.
    waiting: AtomicUsize,
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
/// It is taken only after a step during which the writer committed: once writes stop, or a
/// search waits for the index, or the writer closes, the indexer works flat out. Under a
/// sustained burst the index so falls behind (`index_behind` in the daemon's status) and catches
/// up after; a search that comes meanwhile waits for its writes at full indexing speed.
#[derive(Debug)]
struct Pace<'a> {
    wake: &'a Wake,
    /// The newest committed queue sequence, moved by the writer after each commit.
    queued: &'a AtomicI64,
}

impl Pace<'_> {
    /// Runs one step of indexing, then rests if the writer committed meanwhile.
    fn step<T>(&self, work: impl FnOnce() -> T) -> T {
        let before = self.queued.load(Ordering::Acquire);
        let started = Instant::now();
        let out = work();
        if self.queued.load(Ordering::Acquire) != before {
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

impl Indexer {
    /// Opens (creating) the index file and starts the thread. Returns the writer's hooks; the
    /// thread stops after the hooks are dropped (when the writer exits), once it has caught up.
    pub fn spawn(db: &Path) -> Result<(Indexer, IndexHooks)> {
        let path = index_path(db);
        let fts = Connection::open(&path)
            .map_err(|e| Error::internal(&format!("opening {}", path.display()), e))?;
        fts.execute_batch(
            // Checkpoint every 32 MiB instead of SQLite's 4 MiB: segment merges rewrite the
            // same pages pass after pass, and each checkpoint copies them once, not once per pass.
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;
             PRAGMA wal_autocheckpoint = 8192; PRAGMA journal_size_limit = 67108864;",
        )?;
        fts.execute_batch(SCHEMA)?;
        fts.execute(
            "INSERT INTO capsules_fts(capsules_fts, rank) VALUES('hashsize', ?1)",
            [HASH_SIZE],
        )?;
        super::restrict_modes(&path);
        let main = Connection::open_with_flags(
            db,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        main.execute_batch("PRAGMA query_only = ON; PRAGMA busy_timeout = 5000;")?;
        let mut applied = applied_seq(&fts)?.unwrap_or(0);
        let queued: i64 = main.query_row(
            "SELECT coalesce(max(seq), 0) FROM capsules_fts_queue",
            [],
            |r| r.get(0),
        )?;
        if applied > queued {
            // The queue never falls below the watermark (see before_commit), so this index was
            // built for another database (e.g. moss.db was replaced): rebuild it.
            tracing::warn!(
                "the full-text index is ahead of the database ({applied} > {queued}); rebuilding it"
            );
            fts.execute("DELETE FROM indexer_state", [])?;
            applied = 0;
        }
        let watermark = Arc::new(AtomicI64::new(applied));
        let queued = Arc::new(AtomicI64::new(queued));
        let (progress, progress_rx) = watch::channel(applied);
        // Catch up with whatever the queue held at start.
        let wake = Arc::new(Wake {
            pending: AtomicBool::new(true),
            closed: AtomicBool::new(false),
            waiting: AtomicUsize::new(0),
        });
        let (w, woken, q) = (watermark.clone(), wake.clone(), queued.clone());
        let handle = std::thread::Builder::new()
            .name("moss-indexer".into())
            .spawn(move || run(main, fts, &woken, w, &q, progress))
            .map_err(|e| Error::internal("starting the indexer thread", e))?;
        let indexer = handle.thread().clone();
        Ok((
            Indexer {
                watermark: watermark.clone(),
                queued: queued.clone(),
                progress: progress_rx,
                hurry: Hurry {
                    wake: wake.clone(),
                    indexer: indexer.clone(),
                },
                handle: Some(handle),
            },
            IndexHooks {
                watermark,
                wake,
                indexer,
                pending: AtomicI64::new(0),
                queued,
            },
        ))
    }

    /// The queue sequence up to which the index is current, shared with the store.
    pub fn watermark(&self) -> Arc<AtomicI64> {
        self.watermark.clone()
    }

    /// The newest committed queue sequence (updated by the writer after each commit).
    pub fn queued(&self) -> Arc<AtomicI64> {
        self.queued.clone()
    }

    /// Follows the watermark (for readers that must wait until the index has their writes).
    pub fn progress(&self) -> watch::Receiver<i64> {
        self.progress.clone()
    }

    /// For readers waiting on the watermark: stops the indexer resting while they wait.
    pub fn hurry(&self) -> Hurry {
        self.hurry.clone()
    }

    /// Waits for the thread (after the writer, and so the hooks, are gone).
    pub fn join(mut self) {
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn applied_seq(fts: &Connection) -> rusqlite::Result<Option<i64>> {
    fts.query_row(
        "SELECT applied_seq FROM indexer_state WHERE id = 1",
        [],
        |r| r.get(0),
    )
    .optional()
}

fn run(
    main: Connection,
    mut fts: Connection,
    wake: &Wake,
    watermark: Arc<AtomicI64>,
    queued: &AtomicI64,
    progress: watch::Sender<i64>,
) {
    background_priority();
    let pace = Pace { wake, queued };
    loop {
        // Read `closed` first: once it is seen, every commit of the writer is visible.
        let last = wake.closed.load(Ordering::Acquire);
        if !wake.pending.swap(false, Ordering::AcqRel) && !last {
            // An unpark between the swap and here makes this return at once.
            std::thread::park();
            continue;
        }
        loop {
            match pass(&main, &mut fts, &pace) {
                Ok((applied, more)) => {
                    watermark.store(applied, Ordering::Release);
                    progress.send_replace(applied);
                    if !more {
                        break;
                    }
                }
                Err(e) => {
                    tracing::error!("full-text indexing failed (will retry): {e}");
                    std::thread::sleep(Duration::from_millis(500));
                    if last {
                        return;
                    }
                    break;
                }
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

/// One indexing transaction. Returns the new watermark and whether more is queued.
///
/// The read of the main database must not span the index writes: the WAL can start over only
/// when no reader holds an old snapshot (see `store::checkpointer`), and the blocking truncation
/// kept for a WAL that grows anyway stalls new writes while it waits for readers. For the same
/// reason a rebuild, which reads every row in one snapshot, is not paced: resting would hold the
/// snapshot longer.
fn pass(main: &Connection, fts: &mut Connection, pace: &Pace) -> rusqlite::Result<(i64, bool)> {
    let tx = fts.transaction()?;
    let outcome = match applied_seq(&tx)? {
        None => {
            // One snapshot for the queue's end and every row (first start or forced rebuild).
            main.execute_batch("BEGIN")?;
            let built = rebuild(main, &tx);
            main.execute_batch("COMMIT")?;
            built?
        }
        Some(mut applied) => {
            // Chunk after chunk, each read in its own snapshot, into this one transaction.
            let mut indexed = 0;
            loop {
                let read;
                (applied, read) = pace.step(|| apply_queue(main, &tx, applied))?;
                indexed += read;
                if read < READ_CHUNK {
                    break (applied, false);
                }
                if indexed >= PASS_SIZE {
                    break (applied, true);
                }
            }
        }
    };
    // Committing writes the buffered postings out as a segment, and may merge segments.
    pace.step(|| tx.commit())?;
    Ok(outcome)
}

/// Indexes every row of `capsules` into an emptied index; returns the queue's end it covers.
fn rebuild(main: &Connection, tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<(i64, bool)> {
    let upto: i64 = main.query_row(
        "SELECT coalesce(max(seq), 0) FROM capsules_fts_queue",
        [],
        |r| r.get(0),
    )?;
    tx.execute("DELETE FROM capsules_fts", [])?;
    {
        let mut rows = main.prepare("SELECT rowid, title, capsule_text FROM capsules")?;
        let mut insert =
            tx.prepare("INSERT INTO capsules_fts(rowid, title, capsule_text) VALUES (?1, ?2, ?3)")?;
        let mut it = rows.query([])?;
        while let Some(r) = it.next()? {
            let (doc, title, text): (i64, Option<String>, String) =
                (r.get(0)?, r.get(1)?, r.get(2)?);
            insert.execute(params![doc, title, text])?;
        }
    }
    tx.execute(
        "INSERT INTO indexer_state(id, applied_seq) VALUES (1, ?1)",
        [upto],
    )?;
    Ok((upto, false))
}

/// Applies up to `READ_CHUNK` queue entries past `applied` (one statement, so one snapshot, read
/// in full before any index write). Returns the new watermark and how many entries were read.
fn apply_queue(
    main: &Connection,
    tx: &rusqlite::Transaction<'_>,
    applied: i64,
) -> rusqlite::Result<(i64, i64)> {
    let mut rows = main.prepare_cached(
        "SELECT q.seq, q.doc, c.title, c.capsule_text FROM capsules_fts_queue q
         LEFT JOIN capsules c ON c.rowid = q.doc
         WHERE q.seq > ?1 ORDER BY q.seq LIMIT ?2",
    )?;
    let changes = rows
        .query_map(params![applied, READ_CHUNK], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    drop(rows);
    let Some(&(last, ..)) = changes.last() else {
        return Ok((applied, 0));
    };
    {
        let mut delete = tx.prepare_cached("DELETE FROM capsules_fts WHERE rowid = ?1")?;
        let mut insert = tx.prepare_cached(
            "INSERT INTO capsules_fts(rowid, title, capsule_text) VALUES (?1, ?2, ?3)",
        )?;
        for (_, doc, title, text) in &changes {
            delete.execute([doc])?;
            if let Some(text) = text {
                insert.execute(params![doc, title, text])?;
            }
        }
    }
    tx.execute(
        "UPDATE indexer_state SET applied_seq = ?1 WHERE id = 1",
        [last],
    )?;
    Ok((last, changes.len() as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A migrated main database holding `n` capsules (so `n` queue entries), and an empty index.
    fn setup(n: i64) -> (tempfile::TempDir, Connection, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("moss.db");
        let mut main = Connection::open(&db).unwrap();
        super::super::migrations::migrate(&mut main).unwrap();
        main.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
             INSERT INTO capsules(id, workspace_raw, workspace_norm, title, capsule_text,
               capsule_chars, tokens_estimate, created_at, updated_at, seq)
             SELECT 'c' || i, 'w', 'w', 'T' || i, 'word' || i || ' common', 10, 2, 1, 1, i FROM n",
            [n],
        )
        .unwrap();
        let fts = Connection::open(index_path(&db)).unwrap();
        fts.execute_batch(SCHEMA).unwrap();
        fts.execute(
            "INSERT INTO indexer_state(id, applied_seq) VALUES (1, 0)",
            [],
        )
        .unwrap();
        (dir, main, fts)
    }

    /// A pace for tests: no writer commits during a step, so it never rests.
    fn wake() -> Wake {
        Wake {
            pending: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            waiting: AtomicUsize::new(0),
        }
    }

    fn pass(main: &Connection, fts: &mut Connection) -> rusqlite::Result<(i64, bool)> {
        let (wake, queued) = (wake(), AtomicI64::new(0));
        super::pass(
            main,
            fts,
            &Pace {
                wake: &wake,
                queued: &queued,
            },
        )
    }

    /// A step during which the writer committed is followed by a rest three times its length;
    /// a step without a commit is not.
    #[test]
    fn the_indexer_rests_after_a_step_only_while_writes_arrive() {
        let (wake, queued) = (wake(), AtomicI64::new(0));
        let pace = Pace {
            wake: &wake,
            queued: &queued,
        };
        let started = Instant::now();
        pace.step(|| std::thread::sleep(Duration::from_millis(50)));
        let idle = started.elapsed();
        let started = Instant::now();
        pace.step(|| {
            std::thread::sleep(Duration::from_millis(50));
            queued.fetch_add(1, Ordering::Release);
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
            let queued = AtomicI64::new(0);
            let (tx, rx) = std::sync::mpsc::channel();
            let resting = {
                let wake = wake.clone();
                std::thread::spawn(move || {
                    let pace = Pace {
                        wake: &wake,
                        queued: &queued,
                    };
                    let started = Instant::now();
                    pace.rest(Duration::from_secs(300));
                    tx.send(started.elapsed()).unwrap();
                })
            };
            let hurry = Hurry {
                wake: wake.clone(),
                indexer: resting.thread().clone(),
            };
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

    fn hits(fts: &Connection, q: &str) -> i64 {
        fts.query_row(
            "SELECT count(*) FROM capsules_fts WHERE capsules_fts MATCH ?1",
            [q],
            |r| r.get(0),
        )
        .unwrap()
    }

    /// A pass reads the queue chunk by chunk into one transaction, up to `PASS_SIZE` entries,
    /// and says whether more is queued; the next pass takes the rest.
    #[test]
    fn passes_index_the_queue_in_chunks_up_to_the_pass_size() {
        let n = PASS_SIZE + READ_CHUNK + 7;
        let (_dir, main, mut fts) = setup(n);
        let (applied, more) = pass(&main, &mut fts).unwrap();
        assert_eq!((applied, more), (PASS_SIZE, true));
        assert_eq!(applied_seq(&fts).unwrap(), Some(PASS_SIZE));
        assert_eq!(hits(&fts, "common"), PASS_SIZE);
        let (applied, more) = pass(&main, &mut fts).unwrap();
        assert_eq!((applied, more), (n, false));
        assert_eq!(hits(&fts, "common"), n);
        assert_eq!(hits(&fts, &format!("word{n}")), 1);
        // Nothing queued: the watermark stays.
        assert_eq!(pass(&main, &mut fts).unwrap(), (n, false));
    }

    /// A queue ending exactly on a chunk boundary is caught up in one pass.
    #[test]
    fn a_queue_ending_on_a_chunk_boundary_is_caught_up() {
        let (_dir, main, mut fts) = setup(2 * READ_CHUNK);
        assert_eq!(pass(&main, &mut fts).unwrap(), (2 * READ_CHUNK, false));
        assert_eq!(hits(&fts, "common"), 2 * READ_CHUNK);
    }
}
