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

use crate::store::engine::Engine;

/// A card's type, else the entry's kind, of the entry aliased `e` (PostgreSQL's form of
/// `COALESCE(json_extract(e.meta_json, '$.card_type'), e.kind)`).
const KIND_PG: &str = "CASE WHEN e.format = 'card'
             THEN COALESCE(e.meta_json::jsonb ->> 'card_type', e.kind) ELSE e.kind END";

/// The snippet of a hit on PostgreSQL, from the entry aliased `e` with the query bound as
/// `?1`: of its content when the words are there, else of its title (FTS5's `snippet()` picks
/// the column that matches best). Read from a lateral subquery that holds the content's one
/// as `c.h`.
pub(crate) fn snippet_pg() -> (String, String) {
    use crate::store::engine::search::headline;
    (
        format!(
            "CASE WHEN strpos(c.h, chr(57344)) > 0 THEN c.h
               ELSE {} END",
            headline("coalesce(e.title, '')", 1)
        ),
        format!(
            "CROSS JOIN LATERAL (SELECT {} AS h) AS c",
            headline("coalesce(e.content, '')", 1)
        ),
    )
}

/// [`search_hits`]'s statement on PostgreSQL, against the words `reasoning_entries` carries.
static SEARCH_HITS_PG: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    use crate::store::engine::search::{matches, rank};
    let (snippet, lateral) = snippet_pg();
    format!(
        "WITH hits AS MATERIALIZED (
           SELECT e.seq AS rid, {rank} AS rank
           FROM reasoning_entries AS e
           WHERE {e} AND (CAST(?2 AS TEXT) IS NULL OR e.workspace = ?2)
             AND e.seq >= coalesce((
               SELECT ne.seq FROM reasoning_entries AS ne
               WHERE {ne} AND (CAST(?2 AS TEXT) IS NULL OR ne.workspace = ?2)
               ORDER BY ne.seq DESC LIMIT 1 OFFSET ?4), 0)
           ORDER BY rank, e.seq DESC LIMIT ?3)
         SELECT e.seq, e.workspace, e.branch, e.doc, {KIND_PG}, e.title, e.content, {snippet}
         FROM hits JOIN reasoning_entries AS e ON e.seq = hits.rid {lateral}
         ORDER BY hits.rank, e.seq DESC",
        rank = rank("e", 1, &[5.0, 1.0]),
        e = matches("e", 1),
        ne = matches("ne", 1),
    )
});

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
    let sqlite = "WITH hits AS MATERIALIZED (
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
    let sql = match db.engine() {
        Engine::Sqlite => sqlite,
        Engine::Postgres => SEARCH_HITS_PG.as_str(),
    };
    let bound = crate::search_text::engine_query(db.engine(), query)?;
    db.query_map(sql, crate::db_params![&bound, ws, limit, newest - 1], |r| {
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
            open: ("branchmind_show", show_at(&workspace, &branch, &doc, seq)),
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
    let sql = match db.engine() {
        Engine::Sqlite => {
            "SELECT seq, branch, doc, title, content, ts_ms FROM reasoning_entries
         WHERE workspace = ?1 AND format = 'card'
           AND json_extract(meta_json, '$.card_type') = ?2
           AND (CAST(?3 AS TEXT) IS NULL OR doc LIKE ?3 OR branch = 'task/' || ?4)
         ORDER BY seq DESC LIMIT ?5"
        }
        Engine::Postgres => {
            "SELECT seq, branch, doc, title, content, ts_ms FROM reasoning_entries
         WHERE workspace = ?1 AND format = 'card'
           AND (meta_json::jsonb ->> 'card_type') = ?2
           AND (CAST(?3 AS TEXT) IS NULL OR doc LIKE ?3 OR branch = 'task/' || ?4)
         ORDER BY seq DESC LIMIT ?5"
        }
    };
    let rows = db.query_map(
        sql,
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
    let sql = match db.engine() {
        Engine::Sqlite => {
            "SELECT seq, branch, doc, title, content, ts_ms,
           CASE WHEN format = 'card'
             THEN COALESCE(json_extract(meta_json, '$.card_type'), kind) ELSE kind END
         FROM reasoning_entries WHERE workspace = ?1 ORDER BY seq DESC LIMIT ?2"
        }
        Engine::Postgres => RECENT_PG.as_str(),
    };
    let rows = db.query_map(sql, crate::db_params![ws, limit], |r| {
        Ok((
            r.get::<i64>(0)?,
            r.get::<String>(1)?,
            r.get::<String>(2)?,
            r.get::<Option<String>>(3)?,
            r.get::<Option<String>>(4)?,
            r.get::<i64>(5)?,
            r.get::<String>(6)?,
        ))
    })?;
    let mut out = Vec::with_capacity(rows.len());
    for (seq, branch, doc, title, content, at, kind) in rows {
        out.push((
            at,
            entry_item(ws, &kind, seq, &branch, &doc, title, content, at),
        ));
    }
    Ok(out)
}

/// [`recent`]'s statement on PostgreSQL.
static RECENT_PG: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT e.seq, e.branch, e.doc, e.title, e.content, e.ts_ms, {KIND_PG}
         FROM reasoning_entries AS e WHERE e.workspace = ?1 ORDER BY e.seq DESC LIMIT ?2"
    )
});

/// [`near_hits`]'s statement on PostgreSQL.
static NEAR_PG: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT e.seq, e.workspace, e.branch, e.doc, {KIND_PG}, e.title, e.content
         FROM reasoning_entries AS e WHERE e.seq = ?1"
    )
});

/// The arguments of `branchmind_show` that open entry `seq` (of `doc` on `branch`) alone: how
/// every hit and context item of the family is opened.
fn show_at(workspace: &str, branch: &str, doc: &str, seq: i64) -> serde_json::Value {
    serde_json::json!({
        "workspace": workspace, "branch": branch, "doc": doc, "cursor": seq + 1, "limit": 1,
    })
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
            arguments: show_at(ws, branch, doc, seq),
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
    let sql = match db.engine() {
        Engine::Sqlite => {
            "SELECT e.seq, e.workspace, e.branch, e.doc,
           CASE WHEN e.format = 'card'
             THEN COALESCE(json_extract(e.meta_json, '$.card_type'), e.kind) ELSE e.kind END,
           e.title, e.content
         FROM reasoning_entries AS e WHERE e.seq = ?1"
        }
        Engine::Postgres => NEAR_PG.as_str(),
    };
    let mut out = Vec::with_capacity(near.len());
    for n in near {
        let hit = db.query_opt(sql, crate::db_params![n.doc], |r| {
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
                open: ("branchmind_show", show_at(&workspace, &branch, &doc, seq)),
                workspace,
                explain: None,
            })
        })?;
        out.extend(hit.map(|h| (h, *n)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::store::engine::Db;

    /// The cross-family reads of entries run on PostgreSQL: the search (a title-only match
    /// marks the title), the newest entries and cards, the entries found by meaning.
    #[test]
    fn the_reads_of_other_families_run_on_postgres() {
        let Some((_scratch, pg)) = crate::schema::postgres_scratch() else {
            return;
        };
        let db = Db::Postgres(&pg);
        db.batch(
            "INSERT INTO reasoning_entries(seq, workspace, branch, doc, ts_ms, kind, title, format,
               meta_json, content)
             VALUES (1, 'w', 'main', 'notes', 1, 'note', NULL, NULL, NULL,
                     'We shard the index by workspace'),
               (2, 'w', 'main', 'TASK-001-trace', 2, 'card', 'Sharding decided', 'card',
                '{\"card_type\": \"decision\"}', 'smaller snapshots'),
               (3, 'v', 'main', 'notes', 3, 'note', NULL, NULL, NULL, 'shard elsewhere');",
        )
        .unwrap();
        let hits = super::search_hits(db, "shard*", Some("w"), 10).unwrap();
        let got: Vec<(&str, &str)> = hits
            .iter()
            .map(|h| (h.id.as_str(), h.kind.as_str()))
            .collect();
        assert_eq!(
            got,
            [("2", "decision"), ("1", "note")],
            "the title weighs more"
        );
        assert!(hits[0].snippet.contains("<b>Sharding</b>"), "{hits:?}");
        assert!(hits[1].snippet.contains("<b>shard</b>"), "{hits:?}");
        assert_eq!(super::search_hits(db, "shard", None, 10).unwrap().len(), 3);
        let recent = super::recent(db, "w", 10).unwrap();
        let kinds: Vec<&str> = recent.iter().map(|(_, i)| i.kind.as_str()).collect();
        assert_eq!(kinds, ["decision", "note"]);
        let cards = super::latest_cards(db, "w", Some("TASK-001"), "decision", 5).unwrap();
        assert_eq!(cards.len(), 1);
        assert!(
            super::latest_cards(db, "w", Some("TASK-002"), "decision", 5)
                .unwrap()
                .is_empty()
        );
        let near = crate::store::semantic::Near {
            doc: 2,
            chunk: 0,
            similarity: 0.9,
        };
        let found = super::near_hits(db, &[near]).unwrap();
        assert_eq!(found[0].0.kind, "decision");
    }
}
