//! What the memory family offers the rest of the daemon (the cross-family reads), and the only
//! path by which they reach it.

use rusqlite::Connection;

use crate::error::Result;

/// Per workspace: memories (every session's), and the last write (Unix milliseconds).
pub fn activity(conn: &Connection) -> Result<Vec<(String, i64, i64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT workspace, COUNT(*), MAX(updated_at) * 1000 FROM memories GROUP BY workspace",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The memory index, which a search waits on to read its own writes.
pub use super::search_source::{EMBED_SOURCE, SEARCH_SOURCE};

/// Persistent memories matching the FTS5 `query` in workspace `ws` (every workspace if
/// `None`), best first, at most `limit`.
pub fn search_hits(
    conn: &Connection,
    query: &str,
    ws: Option<&str>,
    limit: i64,
) -> Result<Vec<crate::search_text::FamilyHit>> {
    use crate::search_text::{FamilyHit, SNIPPET_CHARS, query_error, render_snippet};
    let sql = "WITH hits AS MATERIALIZED (
           SELECT f.rowid AS rid, bm25(memories_fts, 1.0, 2.0, 1.0) AS rank
           FROM fts.memories_fts AS f CROSS JOIN memories AS m ON m.rid = f.rowid
           WHERE f.memories_fts MATCH ?1 AND (?2 IS NULL OR m.workspace = ?2)
             AND m.session = ''
           ORDER BY rank, m.seq DESC LIMIT ?3)
         SELECT m.id, m.workspace, m.content, m.slot,
           (SELECT snippet(memories_fts, 0, char(57344), char(57345), '…', 64)
            FROM fts.memories_fts WHERE memories_fts MATCH ?1 AND rowid = hits.rid)
         FROM hits CROSS JOIN memories AS m ON m.rid = hits.rid
         ORDER BY hits.rank, m.seq DESC";
    let run = || -> rusqlite::Result<Vec<FamilyHit>> {
        conn.prepare_cached(sql)?
            .query_map(rusqlite::params![query, ws, limit], |r| {
                let id: String = r.get(0)?;
                let workspace: String = r.get(1)?;
                let content: String = r.get(2)?;
                let slot: Option<String> = r.get(3)?;
                let raw: Option<String> = r.get(4)?;
                let raw = raw.filter(|s| s.contains(crate::search_text::OPEN));
                let snippet = match raw {
                    Some(raw) => render_snippet(&raw, SNIPPET_CHARS),
                    None => render_snippet(&content, SNIPPET_CHARS),
                };
                let title: String = content.chars().take(80).collect();
                let open = match &slot {
                    Some(slot) => serde_json::json!({"workspace": workspace, "slot": slot}),
                    None => serde_json::json!({"workspace": workspace, "query": title}),
                };
                Ok(FamilyHit {
                    id,
                    kind: "memory".into(),
                    title,
                    snippet,
                    open: ("memory_recall", open),
                    workspace,
                    explain: None,
                })
            })?
            .collect()
    };
    run().map_err(|e| query_error(e, query))
}

/// The persistent memories of workspace `ws` written last, newest first, at most `limit`.
pub fn recent(
    conn: &Connection,
    ws: &str,
    limit: i64,
) -> Result<Vec<(i64, moss_client::moss::ContextItem)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, content, slot, updated_at * 1000 FROM memories
         WHERE workspace = ?1 AND session = '' ORDER BY seq DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(rusqlite::params![ws, limit], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, i64>(3)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, content, slot, at) = row?;
        out.push((at, memory_item(ws, id, content, slot, at)));
    }
    Ok(out)
}

/// A memory as a context item.
pub fn memory_item(
    ws: &str,
    id: String,
    content: String,
    slot: Option<String>,
    at: i64,
) -> moss_client::moss::ContextItem {
    let title: String = content.chars().take(80).collect();
    let arguments = match &slot {
        Some(slot) => serde_json::json!({"workspace": ws, "slot": slot}),
        None => serde_json::json!({"workspace": ws, "query": title}),
    };
    moss_client::moss::ContextItem {
        kind: "memory".into(),
        id,
        title,
        text: Some(content),
        updated_at: crate::time::rfc3339_ms(at),
        open: moss_client::moss::Open {
            tool: "memory_recall".into(),
            arguments,
        },
    }
}

/// How many memories of workspace `ws` carry `context` (a task id, a path) among their
/// contexts, case-insensitively.
pub fn count_with_context(conn: &Connection, ws: &str, context: &str) -> Result<i64> {
    Ok(conn
        .prepare_cached(
            // Contexts are kept lowercased, so this is one range of the primary key.
            "SELECT COUNT(DISTINCT rid) FROM memory_contexts
             WHERE workspace = ?1 AND context = lower(?2)",
        )?
        .query_row(rusqlite::params![ws, context], |r| r.get(0))?)
}

/// The persistent memories `near` names (found by meaning, best first), as cross-family hits.
pub fn near_hits(
    conn: &Connection,
    near: &[crate::semantic::Near],
) -> Result<Vec<(crate::search_text::FamilyHit, crate::semantic::Near)>> {
    use crate::search_text::{FamilyHit, SNIPPET_CHARS, render_snippet};
    use rusqlite::OptionalExtension;
    let mut stmt = conn.prepare_cached(
        "SELECT id, workspace, content, slot FROM memories WHERE rid = ?1 AND session = ''",
    )?;
    let mut out = Vec::with_capacity(near.len());
    for n in near {
        let hit = stmt
            .query_row([n.doc], |r| {
                let id: String = r.get(0)?;
                let workspace: String = r.get(1)?;
                let content: String = r.get(2)?;
                let slot: Option<String> = r.get(3)?;
                let title: String = content.chars().take(80).collect();
                let open = match &slot {
                    Some(slot) => serde_json::json!({"workspace": workspace, "slot": slot}),
                    None => serde_json::json!({"workspace": workspace, "query": title}),
                };
                Ok(FamilyHit {
                    id,
                    kind: "memory".into(),
                    snippet: render_snippet(&content, SNIPPET_CHARS),
                    title,
                    open: ("memory_recall", open),
                    workspace,
                    explain: None,
                })
            })
            .optional()?;
        out.extend(hit.map(|h| (h, *n)));
    }
    Ok(out)
}
