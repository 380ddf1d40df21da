//! Full-text search on PostgreSQL: each searchable table (a [`Source`]) carries its words in a
//! generated `tsvector` column with a GIN index, kept by PostgreSQL in the writing transaction.
//! There is no indexer to wait for: a search sees every committed write, through any daemon.
//!
//! The column weighs the source's columns in their order (`A` for the first, then `B`, `C`,
//! `D`), and is built as `moss_words` and `moss_english` cut and stem words (see
//! [`super::tsquery`]). The layout (columns and configuration) is recorded per source in
//! `moss_search_layout`; a source whose layout changed gets its column built again at start.

use super::{Db, DbError, Param};
use crate::store::fts::Source;

/// The generated column each searchable table carries on PostgreSQL.
pub const WORDS: &str = "moss_words";
/// The text search configuration of every source.
pub const CONFIG: &str = "moss_english";

/// The expression of a source's generated column.
pub fn expression(source: &Source) -> String {
    source
        .columns
        .iter()
        .enumerate()
        .map(|(i, col)| {
            let weight = ["A", "B", "C", "D"][i.min(3)];
            format!("setweight(to_tsvector('{CONFIG}', moss_words({col})), '{weight}')")
        })
        .collect::<Vec<_>>()
        .join(" || ")
}

/// Gives each of `sources` its generated column and index, building again those whose layout
/// changed. Run under the migration lock, after the migrations.
pub fn ensure_columns(db: Db<'_>, sources: &[&Source]) -> Result<(), DbError> {
    db.batch(
        "CREATE TABLE IF NOT EXISTS moss_search_layout (
           source TEXT PRIMARY KEY,
           layout TEXT NOT NULL
         )",
    )?;
    for source in sources {
        let layout = expression(source);
        let current: Option<String> = db.query_opt(
            "SELECT layout FROM moss_search_layout WHERE source = ?1",
            &[Param::Text(source.name)],
            |r| r.get(0),
        )?;
        if current.as_deref() == Some(layout.as_str()) {
            continue;
        }
        let table = source.table;
        // A column built before (another layout) goes first, with its index.
        let drop = match current {
            Some(_) => format!("ALTER TABLE {table} DROP COLUMN IF EXISTS {WORDS};"),
            None => String::new(),
        };
        db.batch("BEGIN")?;
        let built = db
            .batch(&format!(
                "{drop}
                 ALTER TABLE {table} ADD COLUMN {WORDS} tsvector
                   GENERATED ALWAYS AS ({layout}) STORED;
                 CREATE INDEX {table}_{WORDS} ON {table} USING GIN ({WORDS});"
            ))
            .and_then(|()| {
                db.execute(
                    "INSERT INTO moss_search_layout(source, layout) VALUES (?1, ?2)
                     ON CONFLICT (source) DO UPDATE SET layout = excluded.layout",
                    &[Param::Text(source.name), Param::Text(&layout)],
                )
            })
            .and_then(|_| db.batch("COMMIT"));
        if let Err(e) = built {
            let _ = db.batch("ROLLBACK");
            return Err(e);
        }
    }
    Ok(())
}

/// `to_tsquery` of the query bound as parameter `?{param}` (its text from
/// [`super::tsquery::to_tsquery`]).
pub fn query(param: usize) -> String {
    format!("to_tsquery('{CONFIG}', ?{param})")
}

/// The condition that `alias`'s row matches the query bound as `?{param}`: FTS5's
/// `{table} MATCH ?{param}` on PostgreSQL.
pub fn matches(alias: &str, param: usize) -> String {
    format!("{alias}.{WORDS} @@ {}", query(param))
}

/// A rank of `alias`'s row for the query bound as `?{param}`, read as FTS5's `bm25()` is:
/// negative, lower better (so the same `ORDER BY rank` and the same score mapping serve both
/// engines). `weights` are the bm25 weights of the source's columns in their order; PostgreSQL
/// takes them relative to the largest (`ts_rank_cd`'s `{D, C, B, A}` array). The rank is
/// divided by 1 + the logarithm of the text's length, as BM25 weighs long texts down.
pub fn rank(alias: &str, param: usize, weights: &[f64]) -> String {
    let max = weights.iter().copied().fold(f64::MIN_POSITIVE, f64::max);
    let w = |i: usize| weights.get(i).map_or(0.1, |w| (w / max).clamp(0.01, 1.0));
    format!(
        "(-ts_rank_cd('{{{}, {}, {}, {}}}', {alias}.{WORDS}, {}, 1))",
        w(3),
        w(2),
        w(1),
        w(0),
        query(param)
    )
}

/// A snippet of `text` (an SQL expression) for the query bound as `?{param}`, marked as FTS5's
/// `snippet()` marks it (U+E000 before a match, U+E001 after), about `tokens` words long, for
/// [`crate::search_text::render_snippet`].
pub fn headline(text: &str, param: usize, tokens: usize) -> String {
    let max = tokens.max(2);
    let min = (max / 2).max(1);
    format!(
        "ts_headline('{CONFIG}', {text}, {}, \
         'StartSel=\u{E000}, StopSel=\u{E001}, MaxWords={max}, MinWords={min}, ShortWord=0, \
          HighlightAll=false, MaxFragments=0')",
        query(param)
    )
}
