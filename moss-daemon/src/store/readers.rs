//! The read pool: read-only connections (`query_only`) used from blocking tasks.

use std::path::Path;
use std::time::Duration;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};

/// A pool of read-only connections. Cheap to clone.
#[derive(Clone)]
pub struct ReadPool {
    pool: r2d2::Pool<SqliteConnectionManager>,
}

impl std::fmt::Debug for ReadPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadPool")
            .field("size", &self.pool.max_size())
            .finish()
    }
}

impl ReadPool {
    pub fn open(path: &Path, size: u32, idle: u32) -> Result<ReadPool> {
        let manager = SqliteConnectionManager::file(path)
            .with_flags(
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI,
            )
            .with_init(|c| {
                // Each reader keeps a small page cache: every commit invalidates it anyway, and
                // resident memory stays bounded however large the database grows.
                c.execute_batch(
                    "PRAGMA query_only = ON;
                     PRAGMA busy_timeout = 5000;
                     PRAGMA cache_size = -2000;
                     PRAGMA temp_store = MEMORY;",
                )
            });
        let pool = r2d2::Pool::builder()
            .max_size(size.max(1))
            .min_idle(Some(idle.min(size).max(1)))
            .connection_timeout(Duration::from_secs(10))
            .build(manager)
            .map_err(|e| Error::internal("opening read connections", e))?;
        Ok(ReadPool { pool })
    }

    /// Runs `f` on a read connection on the blocking thread pool.
    pub async fn run<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let pool = self.pool.clone();
        tokio::task::spawn_blocking(move || {
            let conn = pool.get()?;
            f(&conn)
        })
        .await
        .map_err(|e| Error::internal("reading", e))?
    }
}
