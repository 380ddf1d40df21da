//! Moves WAL checkpoints off the writer thread, and keeps the WAL from growing.
//!
//! With SQLite's automatic checkpoints, the commit that crosses the threshold copies the WAL
//! back into the database (and fsyncs) before the writer can start its next batch: every
//! waiting request pays for it. Here the writer's connection has `wal_autocheckpoint = 0` and
//! this thread runs `PRAGMA wal_checkpoint(PASSIVE)` on its own connection ten times a
//! second. PASSIVE never blocks the writer or the readers; it copies what it can and tries again
//! later. Checkpointing moves committed pages, it does not change data, so the writer is still
//! the only connection that writes rows.
//!
//! SQLite starts the WAL over from its first frame only when a write transaction begins with
//! every frame already copied back. Under continuous writes that moment never comes by itself:
//! each passive round ends behind the newest commit, the WAL grows, and each new frame lands
//! past the end of the file, where the kernel must allocate a fresh page-cache page and
//! filesystem block (half the writer's time in profiles). A blocking checkpoint (RESTART or
//! TRUNCATE) from this thread would make that moment, but it holds off every write while it
//! copies and fsyncs, which showed as 20-180 ms stalls.
//!
//! So the two threads share the work. Once the WAL is past `RESTART_FRAMES`, this thread keeps
//! copying until a passive round ends within `CATCH_UP_FRAMES` of the end, then raises
//! [`WalRestart`]'s flag. The writer sees it after its next batch's replies are sent and runs a
//! passive checkpoint itself: no write can land meanwhile, so it copies the short remainder
//! and leaves nothing behind, and its next transaction starts the WAL over. The file then stays
//! about `RESTART_FRAMES` long and its pages are rewritten in place.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use crate::error::{Error, Result};

const INTERVAL: Duration = Duration::from_millis(100);
/// WAL length (frames of 4 KiB) past which the WAL is started over: 16 MiB.
const RESTART_FRAMES: i64 = 4_096;
/// How close to the WAL's end a passive round must get before the writer finishes the job: the
/// writer then copies and fsyncs about this much (a few ms under `moss bench`) while requests
/// wait.
const CATCH_UP_FRAMES: i64 = 512;
/// Catch-up rounds run back to back, at most this many before the next interval.
const CATCH_UP_ROUNDS: usize = 16;
/// If the WAL still reaches this length (a reader held an old snapshot through every restart),
/// it is truncated with a blocking checkpoint: 128 MiB.
const TRUNCATE_FRAMES: i64 = 32_768;

/// The flag the checkpointer raises when the writer should start the WAL over.
#[derive(Debug, Default)]
pub struct WalRestart {
    wanted: AtomicBool,
}

impl WalRestart {
    /// On the writer's connection, between batches: copy the last frames back so the next write
    /// transaction starts the WAL over. Does nothing unless the checkpointer asked for it.
    pub fn run_if_wanted(&self, writer: &Connection) {
        if !self.wanted.swap(false, Ordering::AcqRel) {
            return;
        }
        match passive(writer) {
            // Another checkpoint was running: ask again after the next batch.
            Ok((true, ..)) => self.wanted.store(true, Ordering::Release),
            Ok(_) => {}
            Err(e) => tracing::warn!("WAL checkpoint on the writer failed (will retry): {e}"),
        }
    }
}

/// `PRAGMA wal_checkpoint(PASSIVE)`: (busy, frames in the WAL, frames copied back).
fn passive(conn: &Connection) -> rusqlite::Result<(bool, i64, i64)> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
        Ok((r.get::<_, i64>(0)? != 0, r.get(1)?, r.get(2)?))
    })
}

/// One round: copy what can be copied without blocking. Past `RESTART_FRAMES`, keep copying,
/// round after round, until a round has little left to copy (so little was written while it
/// ran), flush the copied pages to disk, and hand the rest to the writer; past
/// `TRUNCATE_FRAMES`, truncate.
///
/// The flush matters: SQLite fsyncs the database file only in a checkpoint that reaches the WAL's
/// end, which under continuous writes is the writer's. Left to it, the writer would fsync every
/// page copied since the previous restart (25-30 ms here, while requests wait). An fsync from
/// this thread, on its own descriptor, holds no lock; the writer's then has only the last
/// frames left to flush.
fn checkpoint(conn: &Connection, db: &File, restart: &WalRestart) -> Result<()> {
    // Where the previous round of this call stopped copying, in the current WAL.
    let mut copied_to: Option<i64> = None;
    // Frames copied since this thread last flushed the database file.
    let mut unflushed: i64 = 0;
    for _ in 0..CATCH_UP_ROUNDS {
        let (_busy, log, done) = passive(conn)?;
        if log > TRUNCATE_FRAMES {
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            return Ok(());
        }
        if log < RESTART_FRAMES {
            return Ok(());
        }
        // A WAL that started over since the previous round counts from its first frame.
        let copied = match copied_to {
            Some(prev) if prev <= done => done - prev,
            _ => done,
        };
        copied_to = Some(done);
        unflushed += copied;
        if done == log && copied <= CATCH_UP_FRAMES {
            if unflushed <= CATCH_UP_FRAMES {
                restart.wanted.store(true, Ordering::Release);
                return Ok(());
            }
            db.sync_data()
                .map_err(|e| Error::internal("flushing the database file", e))?;
            unflushed = 0;
        }
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
    pub fn spawn(path: &Path, restart: Arc<WalRestart>) -> Result<Checkpointer> {
        let conn = Connection::open(path)?;
        conn.execute_batch("PRAGMA busy_timeout = 1000;")?;
        let db = File::open(path)
            .map_err(|e| Error::internal(&format!("opening {}", path.display()), e))?;
        let (tx, rx) = mpsc::channel::<()>();
        let handle = std::thread::Builder::new()
            .name("moss-checkpoint".into())
            .spawn(move || {
                while let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(INTERVAL) {
                    if let Err(e) = checkpoint(&conn, &db, &restart) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A database in WAL mode whose writer never checkpoints by itself, like the store's.
    fn setup() -> (tempfile::TempDir, std::path::PathBuf, Connection) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let writer = Connection::open(&path).unwrap();
        writer
            .execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
                 PRAGMA wal_autocheckpoint = 0; CREATE TABLE t(b BLOB);",
            )
            .unwrap();
        (dir, path, writer)
    }

    /// Writes `pages` rows of ~one page each in one transaction.
    fn fill(writer: &Connection, pages: i64) {
        writer.execute_batch("BEGIN").unwrap();
        for _ in 0..pages {
            writer
                .execute("INSERT INTO t(b) VALUES (zeroblob(4000))", [])
                .unwrap();
        }
        writer.execute_batch("COMMIT").unwrap();
    }

    fn wal_len(path: &Path) -> u64 {
        std::fs::metadata(path.with_extension("db-wal"))
            .unwrap()
            .len()
    }

    #[test]
    fn a_long_wal_is_started_over_in_place_by_the_writer() {
        let (_dir, path, writer) = setup();
        fill(&writer, RESTART_FRAMES + 100);
        // A reader on the newest snapshot: checkpoints may copy everything, but the WAL cannot
        // start over while it reads.
        let reader = Connection::open(&path).unwrap();
        reader.execute_batch("BEGIN").unwrap();
        let _: i64 = reader
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        let conn = Connection::open(&path).unwrap();
        let db = File::open(&path).unwrap();
        let restart = WalRestart::default();

        checkpoint(&conn, &db, &restart).unwrap();
        assert!(
            restart.wanted.load(Ordering::Acquire),
            "a long WAL, fully copied back, is handed to the writer"
        );
        // Writes land after the checkpointer's last round (as under continuous load): they are
        // not copied back, so SQLite alone would never start the WAL over.
        fill(&writer, 10);
        reader.execute_batch("COMMIT").unwrap();
        let long = wal_len(&path);

        restart.run_if_wanted(&writer);
        assert!(!restart.wanted.load(Ordering::Acquire));

        fill(&writer, 100);
        // The new frames went to the start of the WAL: the file did not grow, and it holds
        // only them.
        assert_eq!(wal_len(&path), long);
        let (_busy, log, _done) = passive(&conn).unwrap();
        assert!(log < 200, "the WAL holds {log} frames");
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, RESTART_FRAMES + 210);
    }

    #[test]
    fn a_short_wal_is_only_copied() {
        let (_dir, path, writer) = setup();
        fill(&writer, 100);
        let conn = Connection::open(&path).unwrap();
        let db = File::open(&path).unwrap();
        let restart = WalRestart::default();
        checkpoint(&conn, &db, &restart).unwrap();
        assert!(!restart.wanted.load(Ordering::Acquire));
        // Copied back all the same.
        let (_busy, log, done) = passive(&conn).unwrap();
        assert!(log >= 100 && done == log, "{done} of {log} frames copied");
    }
}
