//! The full-text indexer: a thread that keeps `moss-fts.db` in step with the tables it indexes.
//!
//! Indexing a capsule (tokenizing ~2 KB of text, writing FTS5 segments and merging them) costs
//! more than the rest of a store together. Done inside the write transaction it made every
//! store wait for it; here it runs on its own thread, against its own database file, in
//! parallel with the writer.
//!
//! Each [`Source`] is a table of `moss.db` whose rows are searchable, with its own queue in
//! `moss.db`, its own FTS5 table in the index file and its own watermark. The store knows no
//! source of its own: each family declares its sources (a `Source` value next to its search),
//! and the daemon hands them to [`crate::store::Store::open`]. For each:
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
//! file deleted to force a rebuild, or a descriptor whose columns or tokenizer changed: the file
//! records each source's layout, its columns and `tokenize` option, next to its watermark) has
//! its FTS5 table built from every row of its table in one snapshot, then follows its queue.
//! Searches meanwhile wait for it as they wait for any catch-up (`Store::await_index`, bounded),
//! then answer from the index as it is.
//!
//! The index trails the writes by one indexer pass (milliseconds; longer under sustained load).
//! [`IndexView`] tells the store how far each source has come and lets search wait for the
//! writes it must see.
//!
//! While writes keep arriving the indexer paces itself (see `Pace`): it rests three times as
//! long as it has just worked, unless a search is waiting for it.
//!
//! Adding a source takes a migration that creates its queue table (`seq INTEGER PRIMARY KEY,
//! doc INTEGER NOT NULL`) and the triggers feeding it, and its descriptor in the family's
//! sources; the indexer creates and fills its FTS5 table at the next start.
//!
//! The parts: `plan` (a source's statements and the index file's tables), `indexing` (the
//! thread's rounds and passes), `wake` (how the writer and searches wake the indexer, and its
//! pace).

pub(crate) mod indexing;
mod plan;
mod wake;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use serde::Deserialize;
use tokio::sync::watch;

use crate::error::{Error, Result};
use indexing::run;
use plan::{Plan, applied_seq, prepare_index};
pub use wake::{Hurry, HurryGuard, IndexHooks};
use wake::{Trimmed, Wake};

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
    /// Its `tokenize` option. The families' sources stem English words (`porter` over
    /// `unicode61`: `tabs` and `tab`, `merged` and `merging` are one word to search). The
    /// tokenizer is part of the layout the index file records for the source, so changing it
    /// rebuilds that source's index, in the background, at the next start.
    pub tokenizer: &'static str,
    /// Whether `search_tokenizer = "code"` applies: sources searched by what users type do;
    /// a source whose queries are split at punctuation into terms stays on the default.
    pub code_aware: bool,
    /// Whether this source takes over the one watermark kept in `indexer_state` by index files
    /// from before there were several sources (that source indexed `capsules(title,
    /// capsule_text)` with `unicode61 remove_diacritics 2`, no stemming): that watermark is
    /// carried over with the layout that file was built with, so the index is kept only while
    /// the source's layout is still that one, and rebuilt otherwise. At most one source says so.
    pub inherits_single_watermark: bool,
}

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
    /// The queue entry up to which the queue's other follower, the embedding index (see
    /// `crate::store::semantic`), has applied the changes: the writer trims no entry above it.
    /// `i64::MAX` when there is no such follower.
    held: AtomicI64,
}

/// Another follower of the sources' queues: the writer keeps their entries until it says it has
/// applied them ([`QueueFollower::hold`]), and wakes it after each commit that queued some.
#[derive(Debug, Default)]
pub struct FollowerWake {
    /// A commit queued text changes since the follower last looked.
    pub pending: AtomicBool,
    /// The follower's thread, once it runs.
    pub thread: OnceLock<std::thread::Thread>,
    /// Commits that queued text changes: while it moves, writes are arriving.
    pub commits: AtomicU64,
    /// The writer has stopped: the follower stops too.
    pub closed: AtomicBool,
}

impl FollowerWake {
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }

    pub(crate) fn wake(&self) {
        self.commits.fetch_add(1, Ordering::Release);
        self.pending.store(true, Ordering::Release);
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
    }
}

/// One source's queue as its other follower sees it.
#[derive(Debug, Clone)]
pub struct QueueFollower {
    position: Arc<Position>,
}

impl QueueFollower {
    /// A follower of no queue (a store whose engine keeps no queue followers): nothing is ever
    /// queued for it.
    pub fn detached() -> QueueFollower {
        QueueFollower {
            position: Arc::new(Position {
                applied: AtomicI64::new(0),
                queued: AtomicI64::new(0),
                held: AtomicI64::new(i64::MAX),
            }),
        }
    }

    /// The newest committed entry of the queue.
    pub fn queued(&self) -> i64 {
        self.position.queued.load(Ordering::Acquire)
    }

    /// The queue holds committed entries up to `seq`: for an engine whose writer does not say
    /// so (PostgreSQL, where other daemons write too), the follower reads it itself.
    pub fn observe(&self, seq: i64) {
        self.position.queued.fetch_max(seq, Ordering::Release);
    }

    /// The follower has applied every entry up to `seq`: the writer may trim them.
    pub fn hold(&self, seq: i64) {
        self.position.held.store(seq, Ordering::Release);
    }

    /// The follower is gone: the writer trims as if there were none.
    pub fn release(&self) {
        self.position.held.store(i64::MAX, Ordering::Release);
    }
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
    follower: Arc<FollowerWake>,
}

impl IndexView {
    /// `source` must be one of the sources the indexer was started with.
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

    /// The queue of `source` as another follower sees it.
    pub fn follower(&self, source: &Source) -> QueueFollower {
        QueueFollower {
            position: self.followed(source).position.clone(),
        }
    }

    /// How the writer wakes another follower of the queues.
    pub fn follower_wake(&self) -> Arc<FollowerWake> {
        self.follower.clone()
    }

    /// Every source's lag, in the order the indexer was given them.
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

/// A source as the indexer thread serves it.
struct Indexed {
    plan: Plan,
    position: Arc<Position>,
    progress: watch::Sender<i64>,
}

impl Indexer {
    /// Opens (creating) the index file and starts the thread. Returns the writer's hooks; the
    /// thread stops after the hooks are dropped (when the writer exits), once it has caught up.
    /// `sources` are the sources served, in the order of its rounds (their names distinct).
    /// With `held`, the queues have another follower: the writer trims none of their entries
    /// until it says how far it has come (see [`QueueFollower`]).
    pub fn spawn(
        db: &Path,
        sources: &[&'static Source],
        words: SearchTokenizer,
        held: bool,
    ) -> Result<(Indexer, IndexHooks)> {
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
        let plans: Vec<Plan> = sources.iter().map(|s| Plan::with(s, words)).collect();
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
                held: AtomicI64::new(if held { 0 } else { i64::MAX }),
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
        let follower = Arc::new(FollowerWake::default());
        let hooks = IndexHooks {
            follower: follower.clone(),
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
                    follower,
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

#[cfg(test)]
pub(crate) mod tests;
