//! The full-text statements of a recall, on each engine: the query's terms (any of them) bound
//! as `?1`, ranked by BM25 on SQLite and by `ts_rank_cd` on PostgreSQL (see
//! `crate::store::engine::search`).

use crate::store::engine::Engine;
use crate::store::engine::search::{matches, rank};

/// The full-text expression of a query's terms: any of them.
pub(super) fn terms_expression(terms: &[String]) -> String {
    terms
        .iter()
        .map(|t| format!("\"{}\"", t.replace('"', "")))
        .collect::<Vec<_>>()
        .join(" OR ")
}

/// The full-text statements of a recall, the query's expression bound as `?1`.
pub(super) struct FullText {
    /// The best `?4` matches in workspaces `?2`, `?3` among their newest `?5` + 1, with their
    /// BM25 rank.
    pub(super) ranked: String,
    /// The BM25 rank of memory `?2`, when it matches.
    pub(super) rank_of: String,
    /// Whether memory `?2` matches.
    pub(super) row_matches: String,
    /// The matching memories whose row ids are in `?2..=?3`.
    pub(super) span_matches: String,
}

static FULL_TEXT_SQLITE: std::sync::LazyLock<FullText> = std::sync::LazyLock::new(|| FullText {
    ranked: "SELECT m.rid, bm25(memories_fts, 1.0, 2.0, 1.0) AS rank
             FROM fts.memories_fts AS f CROSS JOIN memories AS m ON m.rid = f.rowid
             WHERE f.memories_fts MATCH ?1 AND m.workspace IN (?2, ?3)
               AND f.rowid >= coalesce((
                 SELECT nf.rowid FROM fts.memories_fts AS nf
                 CROSS JOIN memories AS nm ON nm.rid = nf.rowid
                 WHERE nf.memories_fts MATCH ?1 AND nm.workspace IN (?2, ?3)
                 ORDER BY nf.rowid DESC LIMIT 1 OFFSET ?5), 0)
             ORDER BY rank LIMIT ?4"
        .into(),
    rank_of: "SELECT bm25(memories_fts, 1.0, 2.0, 1.0) FROM fts.memories_fts AS f
             WHERE f.memories_fts MATCH ?1 AND f.rowid = ?2"
        .into(),
    row_matches:
        "SELECT 1 FROM fts.memories_fts AS f WHERE f.memories_fts MATCH ?1 AND f.rowid = ?2".into(),
    span_matches: "SELECT f.rowid FROM fts.memories_fts AS f
         WHERE f.memories_fts MATCH ?1 AND f.rowid BETWEEN ?2 AND ?3"
        .into(),
});

/// The same on PostgreSQL, against the words `memories` carries.
static FULL_TEXT_PG: std::sync::LazyLock<FullText> = std::sync::LazyLock::new(|| {
    let rank = rank("m", 1, &[1.0, 2.0, 1.0]);
    let (m, nm) = (matches("m", 1), matches("nm", 1));
    FullText {
        ranked: format!(
            "SELECT m.rid, {rank} AS rank FROM memories AS m
             WHERE {m} AND m.workspace IN (?2, ?3)
               AND m.rid >= coalesce((
                 SELECT nm.rid FROM memories AS nm
                 WHERE {nm} AND nm.workspace IN (?2, ?3)
                 ORDER BY nm.rid DESC LIMIT 1 OFFSET ?5), 0)
             ORDER BY rank LIMIT ?4"
        ),
        rank_of: format!("SELECT {rank} FROM memories AS m WHERE {m} AND m.rid = ?2"),
        row_matches: format!("SELECT 1 FROM memories AS m WHERE {m} AND m.rid = ?2"),
        span_matches: format!(
            "SELECT m.rid FROM memories AS m WHERE {m} AND m.rid BETWEEN ?2 AND ?3"
        ),
    }
});

/// The statements for `engine`.
pub(super) fn statements(engine: Engine) -> &'static FullText {
    match engine {
        Engine::Sqlite => &FULL_TEXT_SQLITE,
        Engine::Postgres => &FULL_TEXT_PG,
    }
}
