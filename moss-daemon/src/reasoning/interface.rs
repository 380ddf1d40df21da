//! What the reasoning family offers other families, and the only path by which they reach it.
//!
//! Plans and tasks (`crate::tasks`) keep their trace and graph in reasoning documents: each
//! mutation writes its event into the item's trace document and projects the item into its
//! graph document, inside the same writer job. They stay two families (two toolsets, two
//! folders) that talk through one interface each, this module and `tasks::interface`, rather
//! than one folder: the tasks toolset can be served, disabled and read on its own, and each
//! side's private helpers can change without the other noticing. The moss-daemon test
//! `imports.rs` checks that no family reaches into another outside these modules.

/// Workspaces, targets (`TASK-001`) and branches.
pub mod refs {
    pub use crate::reasoning::refs::{ALL, ensure_branch, reasoning_ref, target_id, workspace};
}

/// Entries of documents (an item's trace), and the pages of reads over them.
pub mod docs {
    pub use crate::reasoning::docs::{NewEntry, insert_entry, keep_page, page_of};
}

/// Nodes and edges of a graph document (an item's projection).
pub mod graph {
    pub use crate::reasoning::graph::{edge, node, upsert_edge_if_changed, upsert_node_if_changed};
}

/// The reasoning index, which a search waits on to read its own writes.
pub use super::search_source::{EMBED_SOURCE, SEARCH_SOURCE};

/// Entries matching the FTS5 `query` in workspace `ws` (every workspace if `None`), best
/// first, at most `limit`, ranked among the newest [`crate::search_text::RANKED_MATCHES`].
pub fn search_hits(
    db: crate::store::engine::Db<'_>,
    query: &str,
    ws: Option<&str>,
    limit: i64,
) -> crate::error::Result<Vec<crate::search_text::FamilyHit>> {
    use crate::search_text::{FamilyHit, RANKED_MATCHES as newest, SNIPPET_CHARS};
    use crate::search_text::{query_error, render_snippet};
    let sql = "WITH hits AS MATERIALIZED (
           SELECT f.rowid AS rid, bm25(reasoning_fts, 5.0, 1.0) AS rank
           FROM fts.reasoning_fts AS f CROSS JOIN reasoning_entries AS e ON e.seq = f.rowid
           WHERE f.reasoning_fts MATCH ?1 AND (?2 IS NULL OR e.workspace = ?2)
             AND f.rowid >= coalesce((
               SELECT nf.rowid FROM fts.reasoning_fts AS nf
               CROSS JOIN reasoning_entries AS ne ON ne.seq = nf.rowid
               WHERE nf.reasoning_fts MATCH ?1 AND (?2 IS NULL OR ne.workspace = ?2)
               ORDER BY nf.rowid DESC LIMIT 1 OFFSET ?4), 0)
           ORDER BY rank, e.seq DESC LIMIT ?3)
         SELECT e.seq, e.workspace, e.branch, e.doc,
           CASE WHEN e.format = 'card'
             THEN COALESCE(json_extract(e.meta_json, '$.card_type'), e.kind) ELSE e.kind END,
           e.title, e.content,
           (SELECT snippet(reasoning_fts, -1, char(57344), char(57345), '…', 64)
            FROM fts.reasoning_fts WHERE reasoning_fts MATCH ?1 AND rowid = hits.rid)
         FROM hits CROSS JOIN reasoning_entries AS e ON e.seq = hits.rid
         ORDER BY hits.rank, e.seq DESC";
    db.query_map(sql, crate::db_params![query, ws, limit, newest - 1], |r| {
        let seq: i64 = r.get(0)?;
        let workspace: String = r.get(1)?;
        let branch: String = r.get(2)?;
        let doc: String = r.get(3)?;
        let kind: String = r.get(4)?;
        let title: Option<String> = r.get(5)?;
        let content: Option<String> = r.get(6)?;
        let raw: Option<String> = r.get(7)?;
        let title = title.unwrap_or_else(|| {
            let text = content.unwrap_or_default();
            text.chars().take(80).collect()
        });
        Ok(FamilyHit {
            id: seq.to_string(),
            kind,
            title,
            snippet: render_snippet(raw.as_deref().unwrap_or(""), SNIPPET_CHARS),
            open: (
                "branchmind_show",
                serde_json::json!({
                    "workspace": workspace, "branch": branch, "doc": doc,
                    "cursor": seq + 1, "limit": 1,
                }),
            ),
            workspace,
            explain: None,
        })
    })
    .map_err(|e| query_error(e, query))
}

/// The newest think cards of type `card_type` (`decision`, `question`…) in workspace `ws`,
/// on any branch, for `task`'s documents only when one is given; at most `limit`.
pub fn latest_cards(
    db: crate::store::engine::Db<'_>,
    ws: &str,
    task: Option<&str>,
    card_type: &str,
    limit: i64,
) -> crate::error::Result<Vec<(i64, moss_client::moss::ContextItem)>> {
    let prefix = task.map(|t| format!("{t}-%"));
    let rows = db.query_map(
        "SELECT seq, branch, doc, title, content, ts_ms FROM reasoning_entries
         WHERE workspace = ?1 AND format = 'card'
           AND json_extract(meta_json, '$.card_type') = ?2
           AND (CAST(?3 AS TEXT) IS NULL OR doc LIKE ?3 OR branch = 'task/' || ?4)
         ORDER BY seq DESC LIMIT ?5",
        crate::db_params![ws, card_type, prefix.as_ref(), task, limit],
        |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<String>(1)?,
                r.get::<String>(2)?,
                r.get::<Option<String>>(3)?,
                r.get::<Option<String>>(4)?,
                r.get::<i64>(5)?,
            ))
        },
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for (seq, branch, doc, title, content, at) in rows {
        out.push((
            at,
            entry_item(ws, card_type, seq, &branch, &doc, title, content, at),
        ));
    }
    Ok(out)
}

/// The newest entries of workspace `ws` on any branch (notes, trace, cards), at most `limit`:
/// its last changes.
pub fn recent(
    db: crate::store::engine::Db<'_>,
    ws: &str,
    limit: i64,
) -> crate::error::Result<Vec<(i64, moss_client::moss::ContextItem)>> {
    let rows = db.query_map(
        "SELECT seq, branch, doc, title, content, ts_ms,
           CASE WHEN format = 'card'
             THEN COALESCE(json_extract(meta_json, '$.card_type'), kind) ELSE kind END
         FROM reasoning_entries WHERE workspace = ?1 ORDER BY seq DESC LIMIT ?2",
        crate::db_params![ws, limit],
        |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<String>(1)?,
                r.get::<String>(2)?,
                r.get::<Option<String>>(3)?,
                r.get::<Option<String>>(4)?,
                r.get::<i64>(5)?,
                r.get::<String>(6)?,
            ))
        },
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for (seq, branch, doc, title, content, at, kind) in rows {
        out.push((
            at,
            entry_item(ws, &kind, seq, &branch, &doc, title, content, at),
        ));
    }
    Ok(out)
}

/// A reasoning entry as a context item, opened by `branchmind_show` at its sequence.
#[allow(clippy::too_many_arguments)]
fn entry_item(
    ws: &str,
    kind: &str,
    seq: i64,
    branch: &str,
    doc: &str,
    title: Option<String>,
    content: Option<String>,
    at: i64,
) -> moss_client::moss::ContextItem {
    let title = title.clone().unwrap_or_else(|| {
        content
            .clone()
            .unwrap_or_default()
            .chars()
            .take(80)
            .collect()
    });
    moss_client::moss::ContextItem {
        kind: kind.into(),
        id: seq.to_string(),
        title,
        text: content,
        updated_at: crate::time::rfc3339_ms(at),
        open: moss_client::moss::Open {
            tool: "branchmind_show".into(),
            arguments: serde_json::json!({
                "workspace": ws, "branch": branch, "doc": doc, "cursor": seq + 1, "limit": 1,
            }),
        },
    }
}

/// The entries `near` names (found by meaning, best first), as cross-family hits: each with its
/// passage nearest the query as the snippet.
pub fn near_hits(
    db: crate::store::engine::Db<'_>,
    near: &[crate::store::semantic::Near],
) -> crate::error::Result<Vec<(crate::search_text::FamilyHit, crate::store::semantic::Near)>> {
    use crate::search_text::{FamilyHit, SNIPPET_CHARS, render_snippet};
    let mut out = Vec::with_capacity(near.len());
    for n in near {
        let hit = db.query_opt(
            "SELECT e.seq, e.workspace, e.branch, e.doc,
           CASE WHEN e.format = 'card'
             THEN COALESCE(json_extract(e.meta_json, '$.card_type'), e.kind) ELSE e.kind END,
           e.title, e.content
         FROM reasoning_entries AS e WHERE e.seq = ?1",
            crate::db_params![n.doc],
            |r| {
                let seq: i64 = r.get(0)?;
                let workspace: String = r.get(1)?;
                let branch: String = r.get(2)?;
                let doc: String = r.get(3)?;
                let content: String = r.get::<Option<String>>(6)?.unwrap_or_default();
                let title: String = r
                    .get::<Option<String>>(5)?
                    .unwrap_or_else(|| content.chars().take(80).collect());
                Ok(FamilyHit {
                    id: seq.to_string(),
                    kind: r.get(4)?,
                    title,
                    snippet: render_snippet(
                        &crate::store::semantic::passage(&content, n.chunk),
                        SNIPPET_CHARS,
                    ),
                    open: (
                        "branchmind_show",
                        serde_json::json!({
                            "workspace": workspace, "branch": branch, "doc": doc,
                            "cursor": seq + 1, "limit": 1,
                        }),
                    ),
                    workspace,
                    explain: None,
                })
            },
        )?;
        out.extend(hit.map(|h| (h, *n)));
    }
    Ok(out)
}
