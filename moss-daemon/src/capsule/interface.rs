//! What the capsule family offers the rest of the daemon (the cross-family reads), and the only
//! path by which they reach it.

use crate::error::Result;
use crate::store::engine::{Db, DbError};

/// Active capsules of workspace `ws`, newest first, at most `limit`: those handed off for
/// `task` (linked to it, or carrying it as run id) when one is given, else all. With
/// the newest one's text when `first_text`. `db` is a [`Db`] or (from callers not moved to
/// it yet) a SQLite connection.
pub fn handoffs<'c>(
    db: impl Into<Db<'c>>,
    ws: &str,
    task: Option<&str>,
    limit: i64,
    first_text: bool,
) -> Result<Vec<(i64, moss_client::moss::ContextItem)>> {
    let db = db.into();
    type Row = (String, Option<String>, Option<String>, i64);
    let row = |r: &crate::store::engine::Row<'_>| -> std::result::Result<Row, DbError> {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    };
    let rows: Vec<Row> = match task {
        // The task's capsules come from two index ranges (the task link, the run id) and are
        // sorted there: walking the workspace newest first would read every capsule written
        // since the task's last handoff.
        Some(task) => db.query_map(
            "SELECT id, name_raw, title, updated_at * 1000 FROM capsules
                 WHERE id IN (
                     SELECT id FROM capsules WHERE workspace_norm = ?1 AND task = ?2
                       AND deleted_at IS NULL
                     UNION ALL
                     SELECT id FROM capsules WHERE run_id = ?2 AND workspace_norm = ?1
                       AND deleted_at IS NULL)
                 ORDER BY updated_at DESC, seq DESC LIMIT ?3",
            crate::db_params![ws, task, limit],
            row,
        )?,
        None => db.query_map(
            "SELECT id, name_raw, title, updated_at * 1000 FROM capsules
                 WHERE workspace_norm = ?1 AND deleted_at IS NULL
                 ORDER BY updated_at DESC, seq DESC LIMIT ?2",
            crate::db_params![ws, limit],
            row,
        )?,
    };
    let mut out = Vec::with_capacity(rows.len());
    for (i, (id, name, title, at)) in rows.into_iter().enumerate() {
        // Only the newest one's text is read.
        let text = if i == 0 && first_text {
            db.query_opt(
                "SELECT capsule_text FROM capsules WHERE id = ?1",
                crate::db_params![&id],
                |r| r.get::<String>(0),
            )?
        } else {
            None
        };
        out.push((
            at,
            moss_client::moss::ContextItem {
                kind: "capsule".into(),
                title: title.or(name).unwrap_or_else(|| id.clone()),
                text,
                updated_at: crate::time::rfc3339_ms(at),
                open: moss_client::moss::Open {
                    tool: "capsule_fetch".into(),
                    arguments: serde_json::json!({ "id": id }),
                },
                id,
            },
        ));
    }
    Ok(out)
}

/// The capsules handed off for `task` in workspace `ws` (linked to it, or carrying it as run
/// id or tag), newest first, at most `limit`: id, name, revision and `updated_at`. `db` as for
/// [`handoffs`].
pub fn task_handoffs<'c>(
    db: impl Into<Db<'c>>,
    ws: &str,
    task: &str,
    limit: i64,
) -> Result<Vec<moss_client::tasks::Handoff>> {
    Ok(db.into().query_map(
        "SELECT id, name_raw, revision, updated_at FROM capsules
         WHERE id IN (
             SELECT id FROM capsules WHERE workspace_norm = ?1 AND task = ?2
               AND deleted_at IS NULL
             UNION ALL
             SELECT id FROM capsules WHERE run_id = ?2 AND workspace_norm = ?1
               AND deleted_at IS NULL)
         ORDER BY updated_at DESC, seq DESC LIMIT ?3",
        crate::db_params![ws, task, limit],
        |r| {
            Ok(moss_client::tasks::Handoff {
                id: r.get(0)?,
                name: r.get(1)?,
                revision: r.get(2)?,
                updated_at: r.get(3)?,
            })
        },
    )?)
}
