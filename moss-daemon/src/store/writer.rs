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
#[cfg(test)]
use std::ops::Deref;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread::JoinHandle;

use moss_client::ErrorCode;
use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot, watch};

use super::engine::postgres::PgConn;
use super::engine::{Db, DbError, DbErrorKind, Engine, Param};
use super::fts::Source;
use crate::error::{Error, Result};

/// Jobs queued beyond this make senders wait (back-pressure instead of unbounded memory).
const QUEUE_DEPTH: usize = 1024;
/// Jobs committed together at most.
const MAX_BATCH: usize = 512;

/// What the writer does around each batch's COMMIT besides the jobs, on its connection `C`.
pub trait BatchHooks<C: ?Sized = Connection>: Send + 'static {
    /// Runs after the jobs, outside their savepoints, inside the batch's transaction.
    fn before_commit(&self, _conn: &C) -> std::result::Result<(), DbError> {
        Ok(())
    }

    /// Runs after a successful COMMIT, before the batch's replies.
    fn after_commit(&self, _conn: &C) {}

    /// Runs after the batch's replies are sent, outside any transaction: housekeeping that must
    /// run on the writer's connection without delaying the batch it follows.
    fn after_replies(&self, _conn: &C) {}
}

impl<C: ?Sized> BatchHooks<C> for () {}

/// The connection a writer runs its batches on: SQLite's, or PostgreSQL's. What differs is how
/// a batch begins (PostgreSQL also takes the store's write lock, so that batches of several
/// daemons commit one at a time, in the order of their sequence numbers) and how its sequence
/// and its changes are recorded before COMMIT.
pub trait WriterConn: Send + 'static {
    fn db(&self) -> Db<'_>;

    /// The sequence's value when the writer starts.
    fn load_sequence(&self) -> std::result::Result<i64, DbError>;

    /// Opens a batch's transaction. `seq` is the sequence as this writer last knew it; an
    /// engine shared with other daemons reloads it here, under the write lock. On failure no
    /// transaction is left open.
    fn begin(&self, seq: &Sequence) -> std::result::Result<(), DbError>;

    /// Inside the batch's transaction, after its jobs: records the sequence's high mark if it
    /// moved, and announces the `touched` sources to other daemons (if any share the engine).
    fn record(&self, seq: &Sequence, touched: &[&str]) -> std::result::Result<(), DbError>;

    /// Whether the engine rolled the whole transaction back by itself (SQLite does on a full
    /// disk and some I/O errors).
    fn lost_transaction(&self) -> bool;

    /// Housekeeping when the writer stops.
    fn closing(&self) {}
}

impl WriterConn for Connection {
    fn db(&self) -> Db<'_> {
        Db::Sqlite(self)
    }

    fn load_sequence(&self) -> std::result::Result<i64, DbError> {
        sequence(self.db())
    }

    fn begin(&self, _seq: &Sequence) -> std::result::Result<(), DbError> {
        exec(Db::Sqlite(self), "BEGIN IMMEDIATE")
    }

    fn record(&self, seq: &Sequence, _touched: &[&str]) -> std::result::Result<(), DbError> {
        let issued = seq.issued.get();
        if issued != seq.recorded.get() {
            self.prepare_cached("UPDATE store_sequence SET value = ?1 WHERE id = 1")?
                .execute([issued])?;
        }
        Ok(())
    }

    fn lost_transaction(&self) -> bool {
        self.is_autocommit()
    }

    fn closing(&self) {
        if let Err(e) = self.execute_batch("PRAGMA optimize") {
            tracing::warn!("PRAGMA optimize at shutdown failed: {e}");
        }
    }
}

/// The batch hook of a PostgreSQL store, whose full-text index needs no queue (it is kept in
/// the writing transaction): every [`super::engine::queues::TRIM_EVERY`] batches it trims the
/// sources' queues to their newest entries, which the embedders of every daemon on the database
/// follow (see [`super::engine::queues`]); after each commit it notes the primary's position for
/// a read replica.
pub struct TrimQueues {
    trims: Vec<(&'static str, String)>,
    batches: std::cell::Cell<u64>,
    /// With a read replica: where the replica must have replayed to for reads to see the
    /// batch.
    replica: Option<std::sync::Arc<super::replica::ReplicaMark>>,
    /// This daemon's embedder, told when the writer stops.
    follower: Option<std::sync::Arc<super::fts::FollowerWake>>,
}

impl TrimQueues {
    pub fn new(
        sources: &[&'static Source],
        replica: Option<std::sync::Arc<super::replica::ReplicaMark>>,
        follower: Option<std::sync::Arc<super::fts::FollowerWake>>,
    ) -> TrimQueues {
        TrimQueues {
            replica,
            follower,
            batches: std::cell::Cell::new(0),
            trims: sources
                .iter()
                .map(|s| (s.name, super::engine::queues::trim_statement(s.queue)))
                .collect(),
        }
    }
}

impl BatchHooks<PgConn> for TrimQueues {
    fn before_commit(&self, conn: &PgConn) -> std::result::Result<(), DbError> {
        let n = self.batches.get() + 1;
        self.batches.set(n);
        if n.is_multiple_of(super::engine::queues::TRIM_EVERY) {
            // In a savepoint: a trim that fails is logged and tried again later, and never
            // fails the batch's writes.
            conn.batch("SAVEPOINT trim")?;
            let trimmed = self.trims.iter().try_for_each(|(name, trim)| {
                super::engine::queues::trim(conn, trim, name, super::engine::queues::KEEP)
                    .map(|_| ())
            });
            match trimmed {
                Ok(()) => conn.batch("RELEASE trim")?,
                Err(e) => {
                    tracing::warn!("trimming the text-change queues failed: {e}");
                    conn.batch("ROLLBACK TO trim; RELEASE trim")?;
                }
            }
        }
        Ok(())
    }

    fn after_commit(&self, conn: &PgConn) {
        if let Some(mark) = &self.replica
            && let Err(e) = mark.committed(Db::Postgres(conn))
        {
            // The next batch notes a later position; until then a read may wait for an
            // earlier one only.
            tracing::warn!("cannot read the WAL position after a commit: {e}");
        }
    }
}

impl Drop for TrimQueues {
    /// The writer is gone: the embedder stops too.
    fn drop(&mut self) {
        if let Some(f) = &self.follower {
            f.close();
        }
    }
}

/// The highest number the database's sequence has handed out, on either engine.
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

/// The PostgreSQL advisory lock a batch holds until it commits: one writer of all the daemons
/// on a database at a time, so that sequence numbers are committed in their order and a
/// watcher that has seen number N never later finds a change numbered below it.
pub const POSTGRES_WRITE_LOCK: i64 = 0x6d6f_7373_0001;

/// The channel each batch's changes are announced on, to every daemon on the database: the
/// payload is the store's schema, the changed sources' names, then the batch's high mark,
/// space-separated.
pub const POSTGRES_CHANNEL: &str = "moss_commits";

impl WriterConn for PgConn {
    fn db(&self) -> Db<'_> {
        Db::Postgres(self)
    }

    fn load_sequence(&self) -> std::result::Result<i64, DbError> {
        sequence(self.db())
    }

    fn begin(&self, seq: &Sequence) -> std::result::Result<(), DbError> {
        self.reconnect_if_closed()?;
        let db = self.db();
        db.batch("BEGIN")?;
        let locked = db
            .query_one(
                "SELECT pg_advisory_xact_lock(?1)::text",
                &[Param::Int(POSTGRES_WRITE_LOCK)],
                |_| Ok(()),
            )
            .and_then(|()| self.load_sequence());
        match locked {
            Ok(value) => {
                // Numbers this writer handed out in a batch that failed to commit stay taken.
                seq.issued.set(value.max(seq.issued.get()));
                seq.recorded.set(value);
                Ok(())
            }
            Err(e) => {
                let _ = db.batch("ROLLBACK");
                Err(e)
            }
        }
    }

    fn record(&self, seq: &Sequence, touched: &[&str]) -> std::result::Result<(), DbError> {
        let db = self.db();
        let issued = seq.issued.get();
        if issued != seq.recorded.get() {
            db.query_one(
                "SELECT setval('moss_sequence', ?1)",
                &[Param::Int(issued)],
                |_| Ok(()),
            )?;
        }
        if !touched.is_empty() {
            // Delivered when (and only if) the transaction commits. Led by the schema, so that
            // stores in several schemas of one database hear only their own.
            let payload = format!("{} {issued}", touched.join(" "));
            db.query_one(
                "SELECT pg_notify(?1, current_schema() || ' ' || ?2)::text",
                &[Param::Text(POSTGRES_CHANNEL), Param::Text(&payload)],
                |_| Ok(()),
            )?;
        }
        Ok(())
    }

    fn lost_transaction(&self) -> bool {
        self.is_closed()
    }
}
/// Called once the batch a job belongs to has committed (or failed to).
type Reply = Box<dyn FnOnce(Result<()>) + Send>;
/// Runs inside the job's savepoint; returns its failure (`None`: keep its changes) and its
/// reply. Given an error instead of a context when no transaction could be opened for it: it
/// then only answers with that error.
type Job = Box<dyn FnOnce(std::result::Result<&WriteCtx, Error>) -> (Option<Error>, Reply) + Send>;

/// What a writer job works with: the writer's connection ([`WriteCtx::db`], whatever the
/// engine) and the
/// database's sequence.
pub struct WriteCtx<'a> {
    db: Db<'a>,
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
    /// The writer's connection, inside the job's savepoint, whatever the engine.
    pub fn db(&self) -> Db<'_> {
        self.db
    }

    /// The writer's SQLite connection, for tests of SQLite's own behaviour.
    #[cfg(test)]
    pub fn conn(&self) -> &Connection {
        match self.db {
            Db::Sqlite(conn) => conn,
            Db::Postgres(_) => {
                unreachable!("a job written for SQLite's API ran on a PostgreSQL store")
            }
        }
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

#[cfg(test)]
impl Deref for WriteCtx<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.conn()
    }
}

/// The sequence's counter, owned by the writer thread.
pub struct Sequence {
    /// The last number handed out.
    issued: Cell<i64>,
    /// The value the database holds as of the last commit (or, on an engine shared with other
    /// daemons, as of this batch's start).
    recorded: Cell<i64>,
}

impl Sequence {
    fn new(value: i64) -> Sequence {
        Sequence {
            issued: Cell::new(value),
            recorded: Cell::new(value),
        }
    }

    fn next(&self) -> i64 {
        let n = self.issued.get() + 1;
        self.issued.set(n);
        n
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
    /// Each source's commit signal.
    signals: Arc<Signals>,
}

/// Each source's commit signal: the sequence's high mark as of the last committed batch that
/// changed it. Moved by this daemon's writer, and on an engine shared with other daemons by the
/// listener that hears their commits; it only ever goes up.
#[derive(Debug)]
pub struct Signals {
    names: Vec<&'static str>,
    senders: Vec<watch::Sender<i64>>,
    /// Woken at every raise: an embedder following the sources' queues on an engine where
    /// other daemons write too (PostgreSQL).
    follower: std::sync::OnceLock<Arc<super::fts::FollowerWake>>,
}

impl Signals {
    fn new(names: Vec<&'static str>, value: i64) -> Signals {
        Signals {
            senders: names.iter().map(|_| watch::channel(value).0).collect(),
            names,
            follower: std::sync::OnceLock::new(),
        }
    }

    /// Raises the signal of source `i` (in the writer's order) to `seq` and wakes its waiters,
    /// even when it is there already (a change that took no number of its own is still a
    /// change to look at); it never goes down (another daemon's later commit may have been
    /// heard first).
    fn raise(&self, i: usize, seq: i64) {
        self.senders[i].send_modify(|v| *v = (*v).max(seq));
        if let Some(f) = self.follower.get() {
            f.wake();
        }
    }

    /// Wakes `follower` at every change of any source from now on, this daemon's or (heard by
    /// the listener) another's.
    pub fn wake_on_change(&self, follower: Arc<super::fts::FollowerWake>) {
        let _ = self.follower.set(follower);
    }

    /// Raises the signal of the source named `name` to `seq`; a name this daemon does not serve
    /// is ignored (a newer daemon on the same database may serve more).
    pub fn announce(&self, name: &str, seq: i64) {
        if let Some(i) = self.names.iter().position(|n| *n == name) {
            self.raise(i, seq);
        }
    }

    /// Raises every source's signal to `seq`: for when changes may have been missed (a
    /// listener that reconnected), so that every waiter looks again.
    pub fn announce_all(&self, seq: i64) {
        for i in 0..self.senders.len() {
            self.raise(i, seq);
        }
    }
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
    pub fn spawn<C: WriterConn>(
        conn: C,
        hooks: impl BatchHooks<C>,
        sources: &[&'static Source],
    ) -> Result<(Writer, WriterThread)> {
        let seq = Sequence::new(
            conn.load_sequence()
                .map_err(|e| Error::internal("reading the database's sequence", e))?,
        );
        let (tx, rx) = mpsc::channel(QUEUE_DEPTH);
        let names: Vec<&'static str> = sources.iter().map(|s| s.name).collect();
        let signals = Arc::new(Signals::new(names.clone(), seq.issued.get()));
        let announce = signals.clone();
        let handle = std::thread::Builder::new()
            .name("moss-writer".into())
            .spawn(move || run(conn, seq, rx, hooks, Changes::new(names), announce))
            .map_err(|e| Error::internal("starting the writer thread", e))?;
        Ok((
            Writer { tx, signals },
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
        let i = self
            .signals
            .names
            .iter()
            .position(|name| *name == source.name)
            .unwrap_or_else(|| panic!("{} is not a source of this store", source.name));
        self.signals.senders[i].subscribe()
    }

    /// The commit signals, for a listener that hears other daemons' commits.
    pub fn signals(&self) -> Arc<Signals> {
        self.signals.clone()
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

fn run<C: WriterConn, H: BatchHooks<C>>(
    conn: C,
    seq: Sequence,
    mut rx: mpsc::Receiver<Msg>,
    hooks: H,
    changes: Changes,
    signals: Arc<Signals>,
) {
    let hooks = Announcing {
        hooks,
        signals,
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
    conn.closing();
}

/// The batch hooks, and the announcement of committed changes, source by source.
struct Announcing<H> {
    hooks: H,
    /// Each source's commit signal, in the order of `changes.names`.
    signals: Arc<Signals>,
    /// Which sources the current batch's jobs changed.
    changes: Changes,
}

fn commit_batch<C: WriterConn, H: BatchHooks<C>>(
    conn: &C,
    seq: &Sequence,
    batch: &mut Vec<Job>,
    hooks: &Announcing<H>,
) {
    if batch.is_empty() {
        return;
    }
    let db = conn.db();
    let ctx = WriteCtx {
        db,
        seq,
        changes: &hooks.changes,
    };
    // Replies of the jobs run in the open transaction, sent once it commits (or fails to).
    let mut replies: Vec<Reply> = Vec::with_capacity(batch.len());
    let mut in_transaction = false;
    for job in batch.drain(..) {
        if !in_transaction {
            if let Err(e) = conn.begin(seq) {
                // The job never runs: it answers with why (STORAGE_FULL on a full disk).
                let (_, reply) = job(Err(Error::from(e)));
                reply(Ok(()));
                continue;
            }
            in_transaction = true;
        }
        if let Err(e) = exec(db, "SAVEPOINT job") {
            let (_, reply) = job(Err(Error::from(e)));
            reply(Ok(()));
            continue;
        }
        let ran = catch_unwind(AssertUnwindSafe(|| job(Ok(&ctx))));
        if conn.lost_transaction() {
            // The engine rolled the whole transaction back (SQLite does on SQLITE_FULL and some
            // I/O errors; a PostgreSQL connection may be lost): the jobs before this one lost
            // their changes too, and say so. The writer goes on: the next job opens a new
            // transaction, so writes resume as soon as the disk has room again.
            let why = match &ran {
                Ok((Some(e), _)) => e.clone(),
                _ => Error::internal("writing", "the write transaction was rolled back"),
            };
            tracing::warn!("a write transaction was rolled back by the database: {why}");
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
                    rollback_savepoint(db);
                } else if let Err(e) = exec(db, "RELEASE job") {
                    tracing::error!("cannot release a savepoint: {e}");
                    rollback_savepoint(db);
                }
                replies.push(reply);
            }
            Err(_) => {
                // The job's reply sender was dropped with it: its caller sees an internal error.
                tracing::error!("a write job panicked; its changes are rolled back");
                rollback_savepoint(db);
            }
        }
    }
    if !in_transaction {
        hooks.changes.clear();
        return;
    }
    let touched: Vec<&str> = hooks
        .changes
        .names
        .iter()
        .zip(&hooks.changes.touched)
        .filter(|(_, t)| t.get())
        .map(|(name, _)| *name)
        .collect();
    let commit = conn
        .record(seq, &touched)
        .and_then(|()| hooks.hooks.before_commit(conn))
        .and_then(|()| exec(db, "COMMIT"))
        .map_err(|e| {
            if !conn.lost_transaction() {
                let _ = db.batch("ROLLBACK");
            }
            match e.kind() {
                DbErrorKind::DiskFull => Error::storage_full("committing a write", e),
                DbErrorKind::ConnectionLost => Error::from(e),
                _ => Error::internal("committing", e),
            }
        });
    if commit.is_ok() {
        seq.committed();
        hooks.hooks.after_commit(conn);
        for (i, touched) in hooks.changes.touched.iter().enumerate() {
            if touched.get() {
                hooks.signals.raise(i, seq.issued.get());
            }
        }
    }
    hooks.changes.clear();
    for reply in replies {
        reply(commit.clone());
    }
    hooks.hooks.after_replies(conn);
}

/// Runs a transaction-control statement (from SQLite's statement cache: no re-parsing per job).
fn exec(db: Db<'_>, sql: &str) -> std::result::Result<(), DbError> {
    match db {
        Db::Sqlite(conn) => Ok(conn.prepare_cached(sql)?.execute([]).map(|_| ())?),
        Db::Postgres(conn) => conn.batch(sql),
    }
}

fn rollback_savepoint(db: Db<'_>) {
    if let Err(e) = exec(db, "ROLLBACK TO job").and_then(|()| exec(db, "RELEASE job")) {
        tracing::error!("cannot roll back a savepoint: {e}");
    }
}

#[cfg(test)]
mod tests;
