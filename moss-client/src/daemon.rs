//! The daemon's own state: `GET /status` and `POST /shutdown` (both behind the token).

use serde::{Deserialize, Serialize};

/// `GET /status`: where the daemon listens, what it runs, and for how long.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct DaemonStatus {
    /// The address it listens on, `host:port`.
    pub address: String,
    /// The daemon's version (the crate version it was built from).
    pub version: String,
    /// Its process id.
    pub pid: u32,
    /// The `$MOSS_HOME` it serves.
    pub home: String,
    /// The SQLite database it owns.
    pub db_path: String,
    /// When it started, unix seconds.
    pub started_at: i64,
    /// Seconds since it started.
    pub uptime_seconds: u64,
    /// Text changes committed but not yet in the full-text index. The indexer runs at the lowest
    /// CPU priority and works at most a quarter of the time while writes keep arriving, so after
    /// a burst of writes it catches up once they stop; a search waits for the changes committed
    /// before it (the indexer then works flat out), at most 5 s. Absent from daemons older than
    /// this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_behind: Option<i64>,
}

/// `POST /shutdown`: the daemon has begun a graceful shutdown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ShutdownResponse {
    /// Always `"shutting_down"`: it stops accepting, drains in-flight requests, commits and exits.
    pub status: String,
    /// The process that is stopping.
    pub pid: u32,
}
