//! What the tasks family offers other families, and the only path by which they reach it: the
//! reasoning family (see `reasoning::interface`) reads plans and tasks only through these
//! functions, never through the `task_*` tables.

use rusqlite::{Connection, OptionalExtension, params};

pub use super::{event_id, load_item};
use crate::error::Result;

/// Whether the plan or task `id` exists in workspace `ws`.
pub fn exists(conn: &Connection, ws: &str, id: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM task_items WHERE workspace = ?1 AND id = ?2")?
        .query_row(params![ws, id], |r| r.get::<_, i64>(0))
        .optional()?
        .is_some())
}

/// The sequence number and time (ms) of the workspace's last task event, if any.
pub fn last_event(conn: &Connection, ws: &str) -> Result<Option<(i64, i64)>> {
    Ok(conn
        .prepare_cached(
            "SELECT seq, ts_ms FROM task_events WHERE workspace = ?1 ORDER BY seq DESC LIMIT 1",
        )?
        .query_row([ws], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}
