//! Read-your-writes on a PostgreSQL replica (`database_read`): a replica replays its primary's
//! changes a little later, so a read sent there right after a write could miss it. The writer
//! notes the primary's WAL position after each COMMIT, before it answers the batch's callers
//! ([`ReplicaMark::committed`]); a read on the replica first waits until the replica has
//! replayed up to the last noted position ([`ReplicaMark::caught_up`]). So a read made after a
//! write through this daemon was acknowledged sees that write, whichever caller made it; writes
//! through other daemons are seen as the replica replays them.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use super::engine::{Db, DbError};
use crate::error::{Error, Result};

/// Longest a read waits for the replica to replay this daemon's last write.
const MAX_WAIT: Duration = Duration::from_secs(5);
/// Between two looks at the replica's replay position.
const POLL: Duration = Duration::from_millis(2);

/// The position (bytes of WAL) this daemon's reads must see, and the latest the replica was
/// seen to have replayed.
#[derive(Debug, Default)]
pub struct ReplicaMark {
    written: AtomicI64,
    replayed: AtomicI64,
}

impl ReplicaMark {
    /// On the writer's connection, after a COMMIT: notes the primary's WAL position.
    pub fn committed(&self, db: Db<'_>) -> std::result::Result<(), DbError> {
        let lsn: i64 = db.query_one(
            "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint",
            &[],
            |r| r.get(0),
        )?;
        self.written.fetch_max(lsn, Ordering::AcqRel);
        Ok(())
    }

    /// On a replica's connection, before a read: waits (at most 5 s) until the replica
    /// has replayed every write this daemon acknowledged. A server that is not in recovery (the
    /// primary itself) is always caught up.
    pub fn caught_up(&self, db: Db<'_>) -> Result<()> {
        let want = self.written.load(Ordering::Acquire);
        if self.replayed.load(Ordering::Acquire) >= want {
            return Ok(());
        }
        let start = Instant::now();
        loop {
            let replayed: Option<i64> = db.query_one(
                "SELECT (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint",
                &[],
                |r| r.get(0),
            )?;
            let replayed = replayed.unwrap_or(i64::MAX);
            self.replayed.fetch_max(replayed, Ordering::AcqRel);
            if replayed >= want {
                return Ok(());
            }
            if start.elapsed() >= MAX_WAIT {
                return Err(Error::new(
                    moss_client::ErrorCode::Unavailable,
                    format!(
                        "the read replica (database_read) is {} bytes of WAL behind this \
                         daemon's last write after {} s; retry, or check the replica's \
                         replication",
                        want - replayed,
                        MAX_WAIT.as_secs()
                    ),
                ));
            }
            std::thread::sleep(POLL);
        }
    }
}
