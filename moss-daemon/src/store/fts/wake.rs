//! How the writer and searches wake the indexer (flags and `unpark`, never a lock), and how the
//! indexer paces itself while writes arrive.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::thread::Thread;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::Position;
use crate::store::writer::BatchHooks;

/// While writes are arriving, the indexer rests this many times as long as each step of work
/// took: it works at most a quarter of the time.
pub(super) const REST_PER_WORK: u32 = 3;

/// What the writer does around each commit for the indexer: trim applied queue entries, and
/// wake the indexer once the batch is committed.
#[derive(Debug)]
pub struct IndexHooks {
    pub(super) sources: Vec<Trimmed>,
    pub(super) wake: Arc<Wake>,
    pub(super) indexer: Thread,
    /// The queues' other follower, if any.
    pub(super) follower: Arc<super::FollowerWake>,
}

/// A source's queue as the writer keeps it.
#[derive(Debug)]
pub(super) struct Trimmed {
    /// Deletes applied entries but the newest.
    pub(super) trim: String,
    /// The queue's newest sequence.
    pub(super) newest: String,
    pub(super) position: Arc<Position>,
    /// The queue's newest sequence in the batch being committed.
    pub(super) pending: AtomicI64,
}

impl BatchHooks for IndexHooks {
    fn before_commit(&self, conn: &Connection) -> Result<(), crate::store::engine::DbError> {
        for s in &self.sources {
            let applied = s
                .position
                .applied
                .load(Ordering::Acquire)
                .min(s.position.held.load(Ordering::Acquire));
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

    fn after_commit(&self, _conn: &Connection) {
        let mut queued = false;
        for s in &self.sources {
            let pending = s.pending.load(Ordering::Relaxed);
            if s.position.queued.fetch_max(pending, Ordering::Release) < pending {
                queued = true;
            }
        }
        // Only a commit that queued text changes of a source wakes the indexer: one that changed
        // nothing indexed gives it nothing to do.
        if queued {
            self.wake.queued.fetch_add(1, Ordering::Release);
            self.wake.pending.store(true, Ordering::Release);
            self.indexer.unpark();
            self.follower.wake();
        }
    }
}

impl Drop for IndexHooks {
    /// The writer is gone: the indexer catches up with its last commits and stops.
    fn drop(&mut self) {
        self.wake.closed.store(true, Ordering::Release);
        self.indexer.unpark();
        self.follower.close();
    }
}

/// How the writer wakes the indexer: flags and `unpark`, never a lock.
///
/// The indexer runs at the lowest priority, so it is often preempted, and a lock it held at that
/// moment (a channel's list of waiters is one) would stall the writer, between a commit and its
/// replies, until the indexer next got a CPU: under a burst of writes that saturates the CPUs,
/// that can be many milliseconds. Setting an atomic and unparking a thread waits on no one.
#[derive(Debug)]
pub(super) struct Wake {
    /// A commit that queued text changes since the indexer last looked at the queues.
    pub(super) pending: AtomicBool,
    /// Commits that queued text changes, of any source: while it moves, writes are arriving
    /// (see `Pace`).
    pub(super) queued: AtomicU64,
    /// The writer has stopped (the hooks were dropped).
    pub(super) closed: AtomicBool,
    /// Searches waiting for the index to reach their writes: the indexer does not rest while
    /// there is one.
    pub(super) waiting: AtomicUsize,
}

impl Wake {
    pub(super) fn new(pending: bool) -> Wake {
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
    pub(super) wake: Arc<Wake>,
    pub(super) indexer: Thread,
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
pub(super) struct Pace<'a> {
    pub(super) wake: &'a Wake,
}

impl Pace<'_> {
    /// Runs one step of indexing, then rests if the writer committed text changes meanwhile.
    pub(super) fn step<T>(&self, work: impl FnOnce() -> T) -> T {
        let before = self.wake.queued.load(Ordering::Acquire);
        let started = Instant::now();
        let out = work();
        if self.wake.queued.load(Ordering::Acquire) != before {
            self.rest(started.elapsed() * REST_PER_WORK);
        }
        out
    }

    pub(super) fn rest(&self, length: Duration) {
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
