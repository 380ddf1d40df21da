//! Storage: one SQLite database, one writer thread, a pool of readers.
//!
//! - [`checkpointer`]: WAL checkpoints on their own thread, off the writer's path.
//! - [`fts`]: the full-text indexer thread and its index file, serving the sources the
//!   families declare (handed in through [`StoreOptions::search_sources`]).
//! - [`migrations`]: numbered schema migrations under `PRAGMA user_version`, as the families
//!   list them (handed in through [`StoreOptions::migrations`]).
//! - [`writer`]: the only connection that writes, with group commit, and the database's
//!   sequence.
//! - [`readers`]: read-only connections for queries.

pub mod backup;
pub mod checkpointer;
pub mod copy;
pub mod engine;
pub mod fts;
pub mod migrations;
pub mod readers;
pub mod replica;
pub mod semantic;
pub mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::Connection;
use serde::Deserialize;

use crate::error::{Error, Result};
pub use fts::{IndexLag, SearchTokenizer, Source};
pub use readers::ReadPool;
pub use writer::{WriteCtx, Writer, WriterThread};

/// Statements the writer's connection keeps prepared (rusqlite's default is 16). A batch runs
/// the transaction control, the sequence's update, two statements per full-text source, and
/// each job's own: all of them stay prepared from batch to batch.
const WRITER_STATEMENT_CACHE: usize = 64;

/// Sets what every connection of the daemon shares: plans that never depend on bound values.
///
/// Without it SQLite plans `LIMIT ?n` (and, once `PRAGMA optimize` has gathered statistics,
/// `col = ?n`) with the value bound, and so prepares such a statement again on every run: a
/// cached statement would cost a parse each time. The daemon's statements are written for their
/// indexes, and one plan per statement is also what makes their cost predictable.
pub(crate) fn stable_plans(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(())
}

/// How hard a commit pushes data to disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// WAL with `synchronous=NORMAL`: a commit survives a crash of the daemon; a power loss may
    /// lose the last transactions, never corrupt the file.
    #[default]
    Normal,
    /// `synchronous=FULL`: every commit is fsynced before it is acknowledged.
    Full,
}

/// Options for [`Store::open`].
#[derive(Debug, Clone)]
pub struct StoreOptions {
    pub durability: Durability,
    pub read_pool_size: u32,
    pub read_pool_idle: u32,
    /// How full-text search cuts words; a change rebuilds the index.
    pub search_tokenizer: SearchTokenizer,
    /// The tables kept searchable, as the families declare them, in the order of the indexer's
    /// rounds: each gets its index and its commit signal ([`Writer::commits`]).
    pub search_sources: &'static [&'static Source],
    /// The sentence-embedding model semantic search runs (`embeddings.model_dir`), if any.
    /// With one, the embedder follows the queues of `embed_sources` too, and the writer keeps
    /// their entries until it has applied them (see [`fts::QueueFollower`]).
    pub model_dir: Option<PathBuf>,
    /// The tables embedded for semantic search, as the families declare them.
    pub embed_sources: &'static [&'static crate::store::semantic::EmbedSource],
    /// The families' migration lists, applied in their one global order at open.
    pub migrations: &'static [&'static [migrations::Migration]],
    /// The same on PostgreSQL, which numbers its own.
    pub migrations_postgres: &'static [&'static [migrations::Migration]],
}

/// The database: a writer (which hands out the database's sequence to its jobs), a read pool,
/// and how far the full-text index has come.
#[derive(Clone, Debug)]
pub struct Store {
    pub writer: Writer,
    pub readers: ReadPool,
    /// The full-text indexer's progress (SQLite); `None` where the engine indexes in the writing
    /// transaction (PostgreSQL).
    index: Option<fts::IndexView>,
    /// Semantic search: the embedding index over the same queues.
    pub semantic: crate::store::semantic::Semantic,
}

impl Store {
    /// Opens (creating and migrating) the database at `path` and starts the writer and the
    /// checkpointer.
    pub fn open(path: &Path, opts: &StoreOptions) -> Result<(Store, StoreThreads)> {
        let mut conn = Connection::open(path)
            .map_err(|e| Error::internal(&format!("opening {}", path.display()), e))?;
        restrict_mode(path);
        stable_plans(&conn)?;
        let synchronous = match opts.durability {
            Durability::Normal => "NORMAL",
            Durability::Full => "FULL",
        };
        conn.execute_batch(&format!(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = {synchronous};
             PRAGMA busy_timeout = 5000;
             PRAGMA foreign_keys = ON;
             PRAGMA temp_store = MEMORY;
             PRAGMA cache_size = -8000;
             PRAGMA wal_autocheckpoint = 0; -- see checkpointer
             PRAGMA journal_size_limit = 67108864;"
        ))?;
        migrations::migrate(&mut conn, opts.migrations)?;
        conn.set_prepared_statement_cache_capacity(WRITER_STATEMENT_CACHE);
        restrict_modes(path);
        let wal_restart = Arc::new(checkpointer::WalRestart::default());
        let checkpointer = checkpointer::Checkpointer::spawn(path, wal_restart.clone())?;
        let (indexer, index_hooks) = fts::Indexer::spawn(
            path,
            opts.search_sources,
            opts.search_tokenizer,
            opts.model_dir.is_some(),
        )?;
        let hooks = WriterHooks {
            index: index_hooks,
            wal_restart,
        };
        let readers = ReadPool::open(
            path,
            &fts::index_path(path),
            opts.read_pool_size,
            opts.read_pool_idle,
        )?;
        let (writer, thread) = Writer::spawn(conn, hooks, opts.search_sources)?;
        let index = indexer.view();
        let (semantic, embedder) = crate::store::semantic::Semantic::start(
            &index,
            path,
            opts.model_dir.as_deref(),
            opts.embed_sources,
        )?;
        Ok((
            Store {
                writer,
                readers,
                index: Some(index),
                semantic,
            },
            StoreThreads {
                writer: thread,
                checkpointer: Some(checkpointer),
                indexer: Some(indexer),
                embedder: Some(embedder),
                listener: None,
            },
        ))
    }

    /// Opens (migrating) a PostgreSQL database for this daemon: its writer, a read pool (on
    /// `read_url` when given, a replica say), and the listener that hears the commits of every
    /// daemon on the database. Full-text search is kept by PostgreSQL itself, in each searchable
    /// table's generated column ([`engine::search`]). With a model, this daemon's embedder
    /// keeps its vectors in a file of `home` (see [`engine::queues`]).
    ///
    /// Blocks (connecting, migrating): call it off the async runtime's threads.
    pub fn open_postgres(
        url: &str,
        read_url: Option<&str>,
        opts: &StoreOptions,
        home: &Path,
    ) -> Result<(Store, StoreThreads)> {
        let config = engine::postgres::config(url)?;
        let read_config = match read_url {
            Some(u) => engine::postgres::config(u).map_err(|_| {
                Error::invalid_field(
                    "database_read",
                    format!(
                        "{} is not a PostgreSQL URL; write it as \
                         postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE",
                        engine::postgres::redact(u)
                    ),
                )
            })?,
            None => config.clone(),
        };
        let unreachable = |e: engine::DbError| {
            Error::new(
                moss_client::ErrorCode::Unavailable,
                format!(
                    "cannot reach the PostgreSQL database at {}: {e}",
                    engine::postgres::redact(url)
                ),
            )
        };
        let conn = engine::postgres::PgConn::connect(&config).map_err(unreachable)?;
        let sources = opts.search_sources;
        migrations::migrate_postgres_then(&conn, opts.migrations_postgres, |db| {
            engine::search::ensure_columns(db, sources)?;
            engine::queues::ensure_tables(db)
        })?;
        // Reads on a replica wait for this daemon's writes (read-your-writes).
        let replica = read_url.map(|_| std::sync::Arc::new(replica::ReplicaMark::default()));
        let readers = ReadPool::open_postgres(
            &read_config,
            opts.read_pool_size,
            opts.read_pool_idle,
            replica.clone(),
        )?;
        let (semantic, embedder, follower) = crate::store::semantic::Semantic::start_postgres(
            &config,
            home,
            readers.clone(),
            opts.model_dir.as_deref(),
            opts.embed_sources,
        )?;
        let hooks = writer::TrimQueues::new(sources, replica, Some(follower.clone()));
        let (writer, thread) = Writer::spawn(conn, hooks, sources)?;
        writer.signals().wake_on_change(follower);
        let listener = engine::listener::Listener::spawn(&config, writer.signals())?;
        Ok((
            Store {
                writer,
                readers,
                index: None,
                semantic,
            },
            StoreThreads {
                writer: thread,
                checkpointer: None,
                indexer: None,
                embedder: Some(embedder),
                listener: Some(listener),
            },
        ))
    }

    /// The engine the store runs on.
    pub fn engine(&self) -> engine::Engine {
        self.readers.engine()
    }

    /// The newest committed text change of `source` its full-text index must apply (a
    /// sequence of the source's queue). `source` is one of [`StoreOptions::search_sources`].
    pub fn index_queued(&self, source: &Source) -> i64 {
        self.index.as_ref().map_or(0, |i| i.queued(source))
    }

    /// Text changes of `source` committed but not yet in its full-text index.
    pub fn index_behind(&self, source: &Source) -> i64 {
        self.index.as_ref().map_or(0, |i| i.behind(source))
    }

    /// How far behind its writes each source's full-text index is, in the order of
    /// [`StoreOptions::search_sources`].
    pub fn index_lag(&self) -> Vec<IndexLag> {
        self.index.as_ref().map_or_else(Vec::new, |i| i.lag())
    }

    /// Waits until the full-text index of `source` holds every text change queued up to `seq`,
    /// at most `timeout`. Returns whether it got there. While it waits, the indexer does not
    /// rest.
    pub async fn index_reached(&self, source: &Source, seq: i64, timeout: Duration) -> bool {
        match &self.index {
            Some(i) => i.reached(source, seq, timeout).await,
            None => true,
        }
    }

    /// Read-your-writes for a search of `source`: waits (at most [`SEARCH_INDEX_WAIT`]) until
    /// its index holds every text change committed before now; past that, the search answers
    /// from the index as it is, and the lag is logged.
    pub async fn await_index(&self, source: &Source) {
        let queued = self.index_queued(source);
        if !self.index_reached(source, queued, SEARCH_INDEX_WAIT).await {
            tracing::warn!(
                "a {} search answered from an index still {} changes behind",
                source.name,
                self.index_behind(source)
            );
        }
    }
}

/// Longest a search waits for the indexer before answering from the index as it is.
pub const SEARCH_INDEX_WAIT: Duration = Duration::from_secs(5);

/// 0600 on a database file and its `-wal` and `-shm` companions.
fn restrict_modes(path: &Path) {
    restrict_mode(path);
    for suffix in ["-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        restrict_mode(Path::new(&p));
    }
}

fn restrict_mode(path: &Path) {
    if path.exists()
        && let Err(e) = crate::home::set_mode(path, 0o600)
    {
        tracing::warn!("{e:#}");
    }
}

/// What the writer does around its batches: feed the full-text indexer, and start the WAL over
/// when the checkpointer asks.
struct WriterHooks {
    index: fts::IndexHooks,
    wal_restart: Arc<checkpointer::WalRestart>,
}

impl writer::BatchHooks for WriterHooks {
    fn before_commit(&self, conn: &Connection) -> std::result::Result<(), engine::DbError> {
        self.index.before_commit(conn)
    }

    fn after_commit(&self, conn: &Connection) {
        self.index.after_commit(conn);
    }

    fn after_replies(&self, conn: &Connection) {
        self.wal_restart.run_if_wanted(conn);
    }
}

/// The store's background threads, joined at shutdown.
#[derive(Debug)]
pub struct StoreThreads {
    writer: WriterThread,
    checkpointer: Option<checkpointer::Checkpointer>,
    indexer: Option<fts::Indexer>,
    embedder: Option<crate::store::semantic::SemanticThread>,
    listener: Option<engine::listener::Listener>,
}

impl StoreThreads {
    /// Stops the checkpointer, waits for the writer (after [`Writer::close`]), then for the
    /// indexer to catch up with the last batch and stop, and for the embedder to end its step
    /// (what it has not embedded waits in the queues for the next start).
    pub fn join(mut self) {
        if let Some(c) = self.checkpointer.as_mut() {
            c.stop();
        }
        self.writer.join();
        if let Some(i) = self.indexer {
            i.join();
        }
        if let Some(e) = self.embedder {
            e.join();
        }
        if let Some(l) = self.listener {
            l.stop();
        }
    }
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests;
