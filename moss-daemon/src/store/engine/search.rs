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

/// ASCII punctuation, and the private-use characters that stand in for it while
/// `ts_headline` reads a text (see [`headline`]).
const PUNCTUATION: &str = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
const PUNCTUATION_STANDINS: &str = "\u{E010}\u{E011}\u{E012}\u{E013}\u{E014}\u{E015}\u{E016}\u{E017}\
    \u{E018}\u{E019}\u{E01A}\u{E01B}\u{E01C}\u{E01D}\u{E01E}\u{E01F}\u{E020}\u{E021}\u{E022}\u{E023}\
    \u{E024}\u{E025}\u{E026}\u{E027}\u{E028}\u{E029}\u{E02A}\u{E02B}\u{E02C}\u{E02D}\u{E02E}\u{E02F}";

/// The whole text of `text` (an SQL expression) with every match of the query bound as
/// `?{param}` marked as FTS5's `snippet()` marks it (U+E000 before, U+E001 after), for
/// [`crate::search_text::render_snippet`], which cuts the window around the first match.
/// The text reaches `ts_headline` with its punctuation standing in for spaces, so that its
/// words are those of the search (`moss_words`) and nothing is read as markup and dropped
/// (`<script>` stays), then gets it back.
pub fn headline(text: &str, param: usize) -> String {
    let punctuation = PUNCTUATION.replace('\'', "''");
    format!(
        "translate(ts_headline('{CONFIG}', translate({text}, '{punctuation}', \
         '{PUNCTUATION_STANDINS}'), {q}, 'StartSel=\u{E000}, StopSel=\u{E001}, \
         HighlightAll=true'), '{PUNCTUATION_STANDINS}', '{punctuation}')",
        q = query(param),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_punctuation_character_has_its_stand_in() {
        let standins: Vec<char> = PUNCTUATION_STANDINS.chars().collect();
        let punctuation: Vec<char> = PUNCTUATION.chars().collect();
        assert_eq!(standins.len(), punctuation.len());
        assert!(punctuation.iter().all(|c| c.is_ascii_punctuation()));
        assert_eq!(
            (0x21..0x7f_u8).filter(u8::is_ascii_punctuation).count(),
            punctuation.len()
        );
    }
}
