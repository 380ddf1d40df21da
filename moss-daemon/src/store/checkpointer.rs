//! Moves WAL checkpoints off the writer thread.
//!
//! With SQLite's automatic checkpoints, the commit that crosses the threshold copies the WAL
//! back into the database (and fsyncs) before the writer can start its next batch: every
//! waiting request pays for it. Here the writer's connection has `wal_autocheckpoint = 0` and
//! this thread runs `PRAGMA wal_checkpoint(PASSIVE)` on its own connection a few times a
//! second. PASSIVE never blocks the writer or the readers; it copies what it can and tries again
//! later. Checkpointing moves committed pages, it does not change data, so the writer is still
//! the only connection that writes rows.

use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use crate::error::{Error, Result};

const INTERVAL: Duration = Duration::from_millis(250);
/// WAL frames (pages) beyond which the WAL is truncated: under continuous writes a passive
/// checkpoint never catches up with the end of the WAL, so SQLite never restarts it and the
/// file would grow without bound. 32768 frames of 4 KiB = 128 MiB. A truncation blocks new
/// writes while it waits for the current batch and readers, so it must be rare: at 64 MiB it ran
/// about once a second under `moss bench` and store throughput was ~10% lower; at 16 MiB p99
/// store latency went from ~25 ms to 85-185 ms.
const TRUNCATE_FRAMES: i64 = 32_768;

/// One round: copy what can be copied without blocking; when the WAL has grown large, wait
/// briefly for the writer's current batch and readers to finish and truncate it.
fn checkpoint(conn: &Connection) -> rusqlite::Result<()> {
    let (_busy, log, _done): (i64, i64, i64) =
        conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
    if log > TRUNCATE_FRAMES {
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    }
    Ok(())
}

/// The checkpoint thread; stops when [`Checkpointer::stop`] is called or it is dropped.
#[derive(Debug)]
pub struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    handle: Option<JoinHandle<()>>,
}

impl Checkpointer {
    pub fn spawn(path: &Path) -> Result<Checkpointer> {
        let conn = Connection::open(path)?;
        conn.execute_batch("PRAGMA busy_timeout = 1000;")?;
        let (tx, rx) = mpsc::channel::<()>();
        let handle = std::thread::Builder::new()
            .name("moss-checkpoint".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(INTERVAL) {
                    if let Err(e) = checkpoint(&conn) {
                        tracing::warn!("WAL checkpoint failed (will retry): {e}");
                    }
                }
            })
            .map_err(|e| Error::internal("starting the checkpoint thread", e))?;
        Ok(Checkpointer {
            stop: Some(tx),
            handle: Some(handle),
        })
    }

    /// Stops the thread and waits for it.
    pub fn stop(&mut self) {
        self.stop.take();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop();
    }
}
