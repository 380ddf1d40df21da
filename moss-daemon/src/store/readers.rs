//! The read pool: read-only connections (`query_only`) used from blocking tasks.

use std::path::Path;
use std::time::Duration;

use r2d2_sqlite::SqliteConnectionManager;
#[cfg(test)]
use rusqlite::Connection;
use rusqlite::OpenFlags;

use super::engine::Db;
use super::engine::postgres::Manager;
use crate::error::{Error, Result};

/// Statements each read connection keeps prepared (rusqlite's default is 16).
const READER_STATEMENT_CACHE: usize = 64;

/// A pool of read-only connections. Cheap to clone.
#[derive(Clone)]
pub struct ReadPool {
    pool: Pool,
}

#[derive(Clone)]
enum Pool {
    Sqlite(r2d2::Pool<SqliteConnectionManager>),
    /// With the mark reads on a replica wait for.
    Postgres(
        r2d2::Pool<Manager>,
        Option<std::sync::Arc<super::replica::ReplicaMark>>,
    ),
}

impl std::fmt::Debug for ReadPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (engine, size) = match &self.pool {
            Pool::Sqlite(p) => ("sqlite", p.max_size()),
            Pool::Postgres(p, _) => ("postgres", p.max_size()),
        };
        f.debug_struct("ReadPool")
            .field("engine", &engine)
            .field("size", &size)
            .finish()
    }
}

impl ReadPool {
    /// Opens `size` read-only connections to `path`, each with the full-text index file
    /// `index` attached read-only as schema `fts`.
    pub fn open(path: &Path, index: &Path, size: u32, idle: u32) -> Result<ReadPool> {
        let attach = format!(
            "ATTACH DATABASE '{}' AS fts;",
            file_uri(index).replace('\'', "''")
        );
        let manager = SqliteConnectionManager::file(path)
            .with_flags(
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI,
            )
            .with_init(move |c| {
                super::stable_plans(c)?;
                // Every statement goes through the cache (`Db`), those whose text depends on
                // how many values they take too (an `IN` list): room for them beside the
                // fixed ones, which would otherwise be pushed out and parsed again.
                c.set_prepared_statement_cache_capacity(READER_STATEMENT_CACHE);
                // Each reader keeps a small page cache: every commit invalidates it anyway, and
                // resident memory stays bounded however large the database grows.
                c.execute_batch(
                    "PRAGMA query_only = ON;
                     PRAGMA busy_timeout = 5000;
                     PRAGMA cache_size = -2000;
                     PRAGMA temp_store = MEMORY;",
                )?;
                c.execute_batch(&attach)
            });
        let pool = builder(size, idle)
            .build(manager)
            .map_err(|e| Error::internal("opening read connections", e))?;
        Ok(ReadPool {
            pool: Pool::Sqlite(pool),
        })
    }

    /// Opens `size` connections to a PostgreSQL database (a replica serves as well: reads
    /// never write; give it the writer's `replica` mark, which each read waits for). Each runs
    /// its statements read-only.
    pub fn open_postgres(
        config: &postgres::Config,
        size: u32,
        idle: u32,
        replica: Option<std::sync::Arc<super::replica::ReplicaMark>>,
    ) -> Result<ReadPool> {
        let mut config = config.clone();
        let options = match config.get_options() {
            Some(o) => format!("{o} -c default_transaction_read_only=on"),
            None => "-c default_transaction_read_only=on".to_string(),
        };
        config.options(&options);
        let pool = builder(size, idle)
            .build(Manager::new(config))
            .map_err(|e| Error::internal("opening read connections", e))?;
        Ok(ReadPool {
            pool: Pool::Postgres(pool, replica),
        })
    }

    pub fn engine(&self) -> super::engine::Engine {
        match self.pool {
            Pool::Sqlite(_) => super::engine::Engine::Sqlite,
            Pool::Postgres(..) => super::engine::Engine::Postgres,
        }
    }

    /// Runs `f` on a read connection on the blocking thread pool, whatever the engine.
    pub async fn run_db<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(Db<'_>) -> Result<T> + Send + 'static,
    {
        let pool = self.pool.clone();
        tokio::task::spawn_blocking(move || match pool {
            Pool::Sqlite(pool) => {
                let conn = pool.get()?;
                f(Db::Sqlite(&conn))
            }
            Pool::Postgres(pool, replica) => {
                let conn = pool.get()?;
                if let Some(mark) = replica {
                    mark.caught_up(Db::Postgres(&conn))?;
                }
                f(Db::Postgres(&conn))
            }
        })
        .await
        .map_err(|e| Error::internal("reading", e))?
    }

    /// Runs `f` on a SQLite read connection, for tests of SQLite's own behaviour.
    #[cfg(test)]
    pub async fn run<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let Pool::Sqlite(pool) = self.pool.clone() else {
            return Err(Error::internal(
                "reading",
                "a read written for SQLite's API was asked of a PostgreSQL store",
            ));
        };
        tokio::task::spawn_blocking(move || {
            let conn = pool.get()?;
            f(&conn)
        })
        .await
        .map_err(|e| Error::internal("reading", e))?
    }
}

fn builder<M: r2d2::ManageConnection>(size: u32, idle: u32) -> r2d2::Builder<M> {
    r2d2::Pool::builder()
        .max_size(size.max(1))
        .min_idle(Some(idle.min(size).max(1)))
        .connection_timeout(Duration::from_secs(10))
}

/// A read-only `file:` URI for `path` (the read pool opens with `SQLITE_OPEN_URI`).
fn file_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for b in path.as_os_str().as_encoded_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(*b as char)
            }
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri.push_str("?mode=ro");
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_escape_what_sqlite_would_read_as_syntax() {
        assert_eq!(
            file_uri(Path::new("/tmp/a b/x?#%.db")),
            "file:/tmp/a%20b/x%3F%23%25.db?mode=ro"
        );
    }
}
