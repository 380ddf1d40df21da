//! The writer: one OS thread owning the only read-write connection.
//!
//! Jobs arrive on a bounded channel. The thread takes whatever is queued (up to a batch cap),
//! runs the jobs in one transaction with a savepoint per job, commits, and only then replies to
//! each job. A failing job rolls back to its savepoint alone; the others commit. A reply
//! therefore means durable (to the configured `durability`). Many concurrent writers cost one
//! commit per batch instead of one per write (group commit), and no request ever waits on
//! SQLite's file lock.
//!
//! The writer also owns the database's sequence (`store_sequence`, one row): one counter for
//! every memory, so numbers taken by capsules, and by whatever is stored next to them, are
//! ordered among themselves by write. Jobs take numbers from it through their [`WriteCtx`]; the
//! counter lives in memory, and the batch records its high mark in the table inside its own
//! transaction, once per batch rather than per job (the write path is hot). A number is never
//! handed out twice, not after a purge of every row that carried it nor after a restart; a job
//! rolled back leaves a gap.
//!
//! Each full-text source has a commit signal ([`Writer::commits`]): a job that changes the
//! source's table says so ([`WriteCtx::changed`]), and once its batch commits the signal carries
//! the sequence's high mark. Waiters on one source are not woken by changes to another.

use std::cell::Cell;
use std::ops::Deref;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::thread::JoinHandle;

use moss_client::ErrorCode;
use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot, watch};

use super::fts::Source;
use crate::error::{Error, Result};

/// Jobs queued beyond this make senders wait (back-pressure instead of unbounded memory).
const QUEUE_DEPTH: usize = 1024;
/// Jobs committed together at most.
const MAX_BATCH: usize = 512;

/// What the writer does around each batch's COMMIT besides the jobs.
pub trait BatchHooks: Send + 'static {
    /// Runs after the jobs, outside their savepoints, inside the batch's transaction.
    fn before_commit(&self, _conn: &Connection) -> rusqlite::Result<()> {
        Ok(())
    }

    /// Runs after a successful COMMIT.
    fn after_commit(&self) {}

    /// Runs after the batch's replies are sent, outside any transaction: housekeeping that must
    /// run on the writer's connection without delaying the batch it follows.
    fn after_replies(&self, _conn: &Connection) {}
}

impl BatchHooks for () {}
/// Called once the batch a job belongs to has committed (or failed to).
type Reply = Box<dyn FnOnce(Result<()>) + Send>;
/// Runs inside the job's savepoint; returns its failure (`None`: keep its changes) and its
/// reply. Given an error instead of a context when no transaction could be opened for it: it
/// then only answers with that error.
type Job = Box<dyn FnOnce(std::result::Result<&WriteCtx, Error>) -> (Option<Error>, Reply) + Send>;

/// What a writer job works with: the writer's connection (through `Deref`, or [`WriteCtx::conn`])
/// and the database's sequence.
pub struct WriteCtx<'a> {
    conn: &'a Connection,
    seq: &'a Sequence,
    changes: &'a Changes,
}

/// The sources whose commit signal the writer keeps, and which of them the current batch
/// changed.
struct Changes {
    names: Vec<&'static str>,
    touched: Vec<Cell<bool>>,
}

impl Changes {
    fn new(names: Vec<&'static str>) -> Changes {
        Changes {
            touched: names.iter().map(|_| Cell::new(false)).collect(),
            names,
        }
    }

    fn clear(&self) {
        for t in &self.touched {
            t.set(false);
        }
    }
}

impl WriteCtx<'_> {
    /// The writer's connection, inside the job's savepoint.
    pub fn conn(&self) -> &Connection {
        self.conn
    }

    /// The next number of the database's sequence: larger than every number handed out before,
    /// by this process or an earlier one. The order of numbers is the order of writes.
    pub fn next_seq(&self) -> i64 {
        self.seq.next()
    }

    /// Says that this job changed rows of `source`'s table: once the batch commits,
    /// [`Writer::commits`] of that source announces the sequence's high mark. (A job rolled back
    /// after saying so costs a waiter one look that finds nothing, never a missed change.)
    /// `source` is one of the sources the writer was started with.
    pub fn changed(&self, source: &Source) {
        match self.changes.names.iter().position(|n| *n == source.name) {
            Some(i) => self.changes.touched[i].set(true),
            None => debug_assert!(false, "{} is not a source of this store", source.name),
        }
    }
}

impl Deref for WriteCtx<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.conn
    }
}

/// The sequence's counter, owned by the writer thread.
struct Sequence {
    /// The last number handed out.
    issued: Cell<i64>,
    /// The value `store_sequence` holds as of the last commit.
    recorded: Cell<i64>,
}

impl Sequence {
    fn load(conn: &Connection) -> rusqlite::Result<Sequence> {
        let value: i64 =
            conn.query_row("SELECT value FROM store_sequence WHERE id = 1", [], |r| {
                r.get(0)
            })?;
        Ok(Sequence {
            issued: Cell::new(value),
            recorded: Cell::new(value),
        })
    }

    fn next(&self) -> i64 {
        let n = self.issued.get() + 1;
        self.issued.set(n);
        n
    }

    /// Inside the batch's transaction, after its jobs: records the high mark if it moved.
    /// Numbers taken by a job that was rolled back are recorded too, so they are never reused.
    fn record(&self, conn: &Connection) -> rusqlite::Result<()> {
        let issued = self.issued.get();
        if issued != self.recorded.get() {
            conn.prepare_cached("UPDATE store_sequence SET value = ?1 WHERE id = 1")?
                .execute([issued])?;
        }
        Ok(())
    }

    /// After a successful COMMIT. After a failed one the in-memory counter keeps its numbers
    /// (so none is handed out twice) and the next batch records them.
    fn committed(&self) {
        self.recorded.set(self.issued.get());
    }
}

enum Msg {
    Job(Job),
    /// Finish what is queued before this, then exit.
    Close,
}

/// Handle to the writer thread. Cheap to clone.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Msg>,
    /// Each source's name and commit signal.
    commits: std::sync::Arc<[(&'static str, watch::Receiver<i64>)]>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Writer")
    }
}

/// Joins the writer thread when the daemon shuts down.
#[derive(Debug)]
pub struct WriterThread {
    handle: Option<JoinHandle<()>>,
}

impl Writer {
    /// Starts the writer thread on an open, migrated connection (it must hold `store_sequence`),
    /// with its batch hooks and a commit signal for each of `sources`.
    pub fn spawn(
        conn: Connection,
        hooks: impl BatchHooks,
        sources: &[&'static Source],
    ) -> Result<(Writer, WriterThread)> {
        let seq = Sequence::load(&conn)
            .map_err(|e| Error::internal("reading the database's sequence", e))?;
        let (tx, rx) = mpsc::channel(QUEUE_DEPTH);
        let names: Vec<&'static str> = sources.iter().map(|s| s.name).collect();
        let (senders, commits): (Vec<_>, Vec<_>) = names
            .iter()
            .map(|name| {
                let (tx, rx) = watch::channel(seq.issued.get());
                (tx, (*name, rx))
            })
            .unzip();
        let handle = std::thread::Builder::new()
            .name("moss-writer".into())
            .spawn(move || run(conn, seq, rx, hooks, Changes::new(names), senders))
            .map_err(|e| Error::internal("starting the writer thread", e))?;
        Ok((
            Writer {
                tx,
                commits: commits.into(),
            },
            WriterThread {
                handle: Some(handle),
            },
        ))
    }

    /// Runs `f` on the writer connection inside its own savepoint. Resolves after COMMIT.
    pub async fn run<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&WriteCtx) -> Result<T> + Send + 'static,
    {
        let (reply_tx, reply_rx) = oneshot::channel::<Result<T>>();
        let job: Job = Box::new(move |ctx| {
            let outcome = match ctx {
                Ok(ctx) => f(ctx),
                Err(e) => Err(e),
            };
            let failure = outcome.as_ref().err().cloned();
            let reply: Reply = Box::new(move |commit| {
                let answer = match (outcome, commit) {
                    (Err(e), _) => Err(e),
                    (Ok(v), Ok(())) => Ok(v),
                    (Ok(_), Err(e)) => Err(e),
                };
                let _ = reply_tx.send(answer);
            });
            (failure, reply)
        });
        self.tx.send(Msg::Job(job)).await.map_err(|_| closed())?;
        reply_rx
            .await
            .unwrap_or_else(|_| Err(Error::internal("writing", "the write job did not complete")))
    }

    /// The sequence's high mark as of the last committed batch that changed `source`, and a
    /// way to wait for the next one: every change of it committed so far has a sequence number
    /// at most the value seen. `source` is one of the sources the writer was started with.
    pub fn commits(&self, source: &Source) -> watch::Receiver<i64> {
        self.commits
            .iter()
            .find(|(name, _)| *name == source.name)
            .map(|(_, rx)| rx.clone())
            .unwrap_or_else(|| panic!("{} is not a source of this store", source.name))
    }

    /// Asks the thread to finish the queued jobs and stop. Later writes fail with UNAVAILABLE.
    pub async fn close(&self) {
        let _ = self.tx.send(Msg::Close).await;
    }
}

impl WriterThread {
    /// Waits for the writer to finish (after [`Writer::close`] or when every sender is gone).
    pub fn join(mut self) {
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn closed() -> Error {
    Error::new(
        ErrorCode::Unavailable,
        "the daemon is shutting down and accepts no more writes; retry once it is back",
    )
}

fn run(
    conn: Connection,
    seq: Sequence,
    mut rx: mpsc::Receiver<Msg>,
    hooks: impl BatchHooks,
    changes: Changes,
    commits: Vec<watch::Sender<i64>>,
) {
    let hooks = Announcing {
        hooks,
        commits,
        changes,
    };
    let mut batch: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    let mut closing = false;
    while !closing {
        match rx.blocking_recv() {
            Some(Msg::Job(job)) => batch.push(job),
            Some(Msg::Close) | None => break,
        }
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(Msg::Job(job)) => batch.push(job),
                Ok(Msg::Close) => {
                    closing = true;
                    break;
                }
                Err(_) => break,
            }
        }
        commit_batch(&conn, &seq, &mut batch, &hooks);
    }
    rx.close();
    // Anything that raced the close: reject it cleanly rather than dropping it unanswered.
    while let Ok(msg) = rx.try_recv() {
        if let Msg::Job(job) = msg {
            batch.push(job);
        }
    }
    commit_batch(&conn, &seq, &mut batch, &hooks);
    if let Err(e) = conn.execute_batch("PRAGMA optimize") {
        tracing::warn!("PRAGMA optimize at shutdown failed: {e}");
    }
}

/// The batch hooks, and the announcement of committed changes, source by source.
struct Announcing<H> {
    hooks: H,
    /// Each source's commit signal, in the order of `changes.names`.
    commits: Vec<watch::Sender<i64>>,
    /// Which sources the current batch's jobs changed.
    changes: Changes,
}

fn commit_batch<H: BatchHooks>(
    conn: &Connection,
    seq: &Sequence,
    batch: &mut Vec<Job>,
    hooks: &Announcing<H>,
) {
    if batch.is_empty() {
        return;
    }
    let ctx = WriteCtx {
        conn,
        seq,
        changes: &hooks.changes,
    };
    // Replies of the jobs run in the open transaction, sent once it commits (or fails to).
    let mut replies: Vec<Reply> = Vec::with_capacity(batch.len());
    let mut in_transaction = false;
    for job in batch.drain(..) {
        if !in_transaction {
            if let Err(e) = exec(conn, "BEGIN IMMEDIATE") {
                // The job never runs: it answers with why (STORAGE_FULL on a full disk).
                let (_, reply) = job(Err(Error::from(e)));
                reply(Ok(()));
                continue;
            }
            in_transaction = true;
        }
        if let Err(e) = exec(conn, "SAVEPOINT job") {
            let (_, reply) = job(Err(Error::from(e)));
            reply(Ok(()));
            continue;
        }
        let ran = catch_unwind(AssertUnwindSafe(|| job(Ok(&ctx))));
        if conn.is_autocommit() {
            // SQLite rolled the whole transaction back (it does on SQLITE_FULL and some I/O
            // errors): the jobs before this one lost their changes too, and say so. The writer
            // goes on: the next job opens a new transaction, so writes resume as soon as the
            // disk has room again.
            let why = match &ran {
                Ok((Some(e), _)) => e.clone(),
                _ => Error::internal("writing", "the write transaction was rolled back"),
            };
            tracing::warn!("a write transaction was rolled back by SQLite: {why}");
            for reply in replies.drain(..) {
                reply(Err(why.clone()));
            }
            if let Ok((_, reply)) = ran {
                reply(Err(why));
            }
            in_transaction = false;
            continue;
        }
        match ran {
            Ok((failure, reply)) => {
                if failure.is_some() {
                    rollback_savepoint(conn);
                } else if let Err(e) = exec(conn, "RELEASE job") {
                    tracing::error!("cannot release a savepoint: {e}");
                    rollback_savepoint(conn);
                }
                replies.push(reply);
            }
            Err(_) => {
                // The job's reply sender was dropped with it: its caller sees an internal error.
                tracing::error!("a write job panicked; its changes are rolled back");
                rollback_savepoint(conn);
            }
        }
    }
    if !in_transaction {
        hooks.changes.clear();
        return;
    }
    let commit = seq
        .record(conn)
        .and_then(|()| hooks.hooks.before_commit(conn))
        .and_then(|()| exec(conn, "COMMIT"))
        .map_err(|e| {
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
            if crate::error::is_disk_full(&e) {
                Error::storage_full("committing a write", e)
            } else {
                Error::internal("committing", e)
            }
        });
    if commit.is_ok() {
        seq.committed();
        hooks.hooks.after_commit();
        for (touched, signal) in hooks.changes.touched.iter().zip(&hooks.commits) {
            if touched.get() {
                signal.send_replace(seq.issued.get());
            }
        }
    }
    hooks.changes.clear();
    for reply in replies {
        reply(commit.clone());
    }
    hooks.hooks.after_replies(conn);
}

/// Runs a transaction-control statement from the statement cache (no re-parsing per job).
fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

fn rollback_savepoint(conn: &Connection) {
    if let Err(e) = exec(conn, "ROLLBACK TO job").and_then(|()| exec(conn, "RELEASE job")) {
        tracing::error!("cannot roll back a savepoint: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer() -> (Writer, WriterThread, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("t.db")).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode=WAL; CREATE TABLE t(x INTEGER UNIQUE);
             CREATE TABLE store_sequence(id INTEGER PRIMARY KEY, value INTEGER NOT NULL);
             INSERT INTO store_sequence VALUES (1, 0);",
        )
        .unwrap();
        let (w, t) = Writer::spawn(conn, (), &[&SOURCE_A, &SOURCE_B]).unwrap();
        (w, t, dir)
    }

    fn reopen(dir: &tempfile::TempDir) -> (Writer, WriterThread) {
        Writer::spawn(Connection::open(dir.path().join("t.db")).unwrap(), (), &[]).unwrap()
    }

    /// Two sources, for the commit signals (no table of theirs is indexed here).
    const fn source(name: &'static str) -> Source {
        Source {
            name,
            table: "t",
            queue: "t_queue",
            columns: &["x"],
            fts: "t_fts",
            tokenizer: "unicode61",
            code_aware: false,
            inherits_single_watermark: false,
        }
    }
    static SOURCE_A: Source = source("a");
    static SOURCE_B: Source = source("b");

    /// A job that changes one source moves that source's commit signal, after its batch
    /// commits, and leaves the other's alone; a job rolled back after saying so moves it too
    /// (a waiter looks once more and finds nothing).
    #[tokio::test]
    async fn a_change_signals_its_own_source_only() {
        let (w, t, _dir) = writer();
        let mut a = w.commits(&SOURCE_A);
        let mut b = w.commits(&SOURCE_B);
        a.borrow_and_update();
        b.borrow_and_update();
        let taken = w
            .run(|c| {
                c.execute("INSERT INTO t(x) VALUES (1)", [])?;
                c.changed(&SOURCE_B);
                Ok(c.next_seq())
            })
            .await
            .unwrap();
        assert!(!a.has_changed().unwrap(), "a change of b does not wake a");
        assert!(b.has_changed().unwrap());
        assert_eq!(*b.borrow_and_update(), taken);
        w.run(|c| Ok(c.execute("INSERT INTO t(x) VALUES (2)", [])?))
            .await
            .unwrap();
        assert!(
            !a.has_changed().unwrap() && !b.has_changed().unwrap(),
            "a job that changes no source signals none"
        );
        let _: Result<()> = w
            .run(|c| {
                c.changed(&SOURCE_A);
                Err(Error::invalid("rolled back"))
            })
            .await;
        assert!(a.has_changed().unwrap());
        assert!(!b.has_changed().unwrap());
        w.close().await;
        t.join();
    }

    async fn recorded(w: &Writer) -> i64 {
        w.run(|c| Ok(c.query_row("SELECT value FROM store_sequence", [], |r| r.get(0))?))
            .await
            .unwrap()
    }

    /// Numbers go up across jobs, batches and restarts; a job that failed, or panicked, keeps
    /// the numbers it took from ever being handed out again.
    #[tokio::test]
    async fn sequence_numbers_are_never_handed_out_twice() {
        let (w, t, dir) = writer();
        let first: i64 = w.run(|c| Ok(c.next_seq())).await.unwrap();
        assert_eq!(first, 1);
        let failed: Result<()> = w
            .run(|c| {
                c.next_seq();
                c.next_seq();
                Err(Error::invalid("rolled back"))
            })
            .await;
        assert!(failed.is_err());
        let panicked: Result<()> = w
            .run(|c| {
                c.next_seq();
                panic!("boom")
            })
            .await;
        assert!(panicked.is_err());
        assert_eq!(recorded(&w).await, 4, "rolled-back numbers are recorded");
        let mut handles = Vec::new();
        for _ in 0..200 {
            let w = w.clone();
            handles.push(tokio::spawn(async move {
                w.run(|c| Ok((c.next_seq(), c.next_seq()))).await.unwrap()
            }));
        }
        let mut seen = Vec::new();
        for h in handles {
            let (a, b) = h.await.unwrap();
            assert_eq!(b, a + 1, "one job's numbers are consecutive");
            seen.extend([a, b]);
        }
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 400, "no number twice");
        assert_eq!((seen[0], seen[399]), (5, 404));
        w.close().await;
        t.join();
        let (w, t) = reopen(&dir);
        assert_eq!(w.run(|c| Ok(c.next_seq())).await.unwrap(), 405);
        w.close().await;
        t.join();
    }

    /// A batch whose jobs took no number does not write the sequence's row.
    #[tokio::test]
    async fn a_batch_without_numbers_leaves_the_sequence_row_alone() {
        let (w, t, _dir) = writer();
        w.run(|c| Ok(c.next_seq())).await.unwrap();
        let changes = |w: &Writer| {
            let w = w.clone();
            async move {
                w.run(|c| Ok(c.query_row("SELECT total_changes()", [], |r| r.get::<_, i64>(0))?))
                    .await
                    .unwrap()
            }
        };
        let before = changes(&w).await;
        w.run(|c| Ok(c.execute("INSERT INTO t(x) VALUES (1)", [])?))
            .await
            .unwrap();
        assert_eq!(changes(&w).await, before + 1, "the insert alone");
        w.close().await;
        t.join();
    }

    #[tokio::test]
    async fn a_failing_job_rolls_back_alone() {
        let (w, t, dir) = writer();
        let mut handles = Vec::new();
        for i in 0..50 {
            let w = w.clone();
            handles.push(tokio::spawn(async move {
                w.run(move |c| {
                    c.execute("INSERT INTO t(x) VALUES (?1)", [i % 25])?;
                    Ok(())
                })
                .await
            }));
        }
        let mut ok = 0;
        for h in handles {
            if h.await.unwrap().is_ok() {
                ok += 1;
            }
        }
        assert_eq!(ok, 25, "each duplicate fails alone");
        w.close().await;
        t.join();
        let conn = Connection::open(dir.path().join("t.db")).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 25);
    }

    #[tokio::test]
    async fn a_panicking_job_fails_without_taking_the_writer_down() {
        let (w, t, _dir) = writer();
        let r: Result<()> = w
            .run(|c| {
                c.execute("INSERT INTO t(x) VALUES (1)", [])?;
                panic!("boom")
            })
            .await;
        assert_eq!(r.unwrap_err().code(), ErrorCode::Internal);
        let n: i64 = w
            .run(|c| Ok(c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))?))
            .await
            .unwrap();
        assert_eq!(n, 0, "the panicking job's insert was rolled back");
        w.close().await;
        t.join();
    }

    /// A database that cannot grow (`max_page_count` stands in for a full disk: SQLite answers
    /// SQLITE_FULL either way) fails writes with STORAGE_FULL, batch after batch, without
    /// stopping the writer, and writes resume as soon as there is room again.
    #[tokio::test]
    async fn a_full_database_answers_storage_full_and_recovers_without_a_restart() {
        let (w, t, _dir) = writer();
        w.run(|c| Ok(c.execute_batch("CREATE TABLE big(b BLOB)")?))
            .await
            .unwrap();
        let pages: i64 = w
            .run(|c| Ok(c.query_row("PRAGMA page_count", [], |r| r.get(0))?))
            .await
            .unwrap();
        w.run(move |c| Ok(c.execute_batch(&format!("PRAGMA max_page_count = {}", pages + 2))?))
            .await
            .unwrap();
        let insert = |w: &Writer| {
            let w = w.clone();
            async move {
                w.run(|c| {
                    c.execute("INSERT INTO big(b) VALUES (zeroblob(64 * 1024))", [])?;
                    Ok(())
                })
                .await
            }
        };
        // Several at once, so that the failures land in shared batches too.
        let mut handles = Vec::new();
        for _ in 0..8 {
            let insert = insert(&w);
            handles.push(tokio::spawn(insert));
        }
        for h in handles {
            let e = h.await.unwrap().unwrap_err();
            assert_eq!(e.code(), ErrorCode::StorageFull, "{e}");
            assert!(e.0.message.contains("reads go on"), "{e}");
        }
        // Small writes that fit still go through, and reads are answered.
        w.run(|c| Ok(c.execute("INSERT INTO t(x) VALUES (7)", [])?))
            .await
            .unwrap();
        w.run(|c| Ok(c.execute_batch("PRAGMA max_page_count = 1000000")?))
            .await
            .unwrap();
        insert(&w).await.expect("writes resume once there is room");
        let n: i64 = w
            .run(|c| Ok(c.query_row("SELECT count(*) FROM big", [], |r| r.get(0))?))
            .await
            .unwrap();
        assert_eq!(n, 1);
        w.close().await;
        t.join();
    }

    #[tokio::test]
    async fn writes_after_close_are_unavailable() {
        let (w, t, _dir) = writer();
        w.close().await;
        t.join();
        let r = w.run(|_| Ok(())).await;
        assert_eq!(r.unwrap_err().code(), ErrorCode::Unavailable);
    }
}
