//! What the capsule family offers the rest of the daemon (the cross-family reads), and the only
//! path by which they reach it.

use rusqlite::Connection;

use crate::error::Result;

/// Per workspace: active capsules, and the last write (Unix milliseconds), deletes included.
pub fn activity(conn: &Connection) -> Result<Vec<(String, i64, i64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT workspace_norm, SUM(deleted_at IS NULL), MAX(updated_at) * 1000
         FROM capsules GROUP BY workspace_norm",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Active capsules of workspace `ws`, newest first, at most `limit`: those handed off for
/// `task` (linked to it, or carrying it as run id) when one is given, else all. With
/// the newest one's text when `first_text`.
pub fn handoffs(
    conn: &Connection,
    ws: &str,
    task: Option<&str>,
    limit: i64,
    first_text: bool,
) -> Result<Vec<(i64, moss_client::moss::ContextItem)>> {
    let mut stmt = conn.prepare_cached(
        // Two index ranges (the task link, the run id) instead of a scan of the workspace.
        "SELECT id, name_raw, title, capsule_text, updated_at * 1000 FROM capsules
         WHERE workspace_norm = ?1 AND deleted_at IS NULL
           AND (?2 IS NULL OR id IN (
             SELECT id FROM capsules WHERE workspace_norm = ?1 AND task = ?2
               AND deleted_at IS NULL
             UNION ALL
             SELECT id FROM capsules WHERE run_id = ?2 AND workspace_norm = ?1
               AND deleted_at IS NULL))
         ORDER BY updated_at DESC, seq DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(rusqlite::params![ws, task, limit], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, Option<String>>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, i64>(4)?,
        ))
    })?;
    let mut out = Vec::new();
    for (i, row) in rows.enumerate() {
        let (id, name, title, text, at) = row?;
        out.push((
            at,
            moss_client::moss::ContextItem {
                kind: "capsule".into(),
                title: title.or(name).unwrap_or_else(|| id.clone()),
                text: (i == 0 && first_text).then_some(text),
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
/// id or tag), newest first, at most `limit`: id, name, revision and `updated_at`.
pub fn task_handoffs(
    conn: &Connection,
    ws: &str,
    task: &str,
    limit: i64,
) -> Result<Vec<moss_client::tasks::Handoff>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, name_raw, revision, updated_at FROM capsules
         WHERE id IN (
             SELECT id FROM capsules WHERE workspace_norm = ?1 AND task = ?2
               AND deleted_at IS NULL
             UNION ALL
             SELECT id FROM capsules WHERE run_id = ?2 AND workspace_norm = ?1
               AND deleted_at IS NULL)
         ORDER BY updated_at DESC, seq DESC LIMIT ?3",
    )?;
    let rows = stmt.query_map(rusqlite::params![ws, task, limit], |r| {
        Ok(moss_client::tasks::Handoff {
            id: r.get(0)?,
            name: r.get(1)?,
            revision: r.get(2)?,
            updated_at: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
