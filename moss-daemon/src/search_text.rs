//! What every full-text search shares: the query's checks and the errors FTS5's parser gives,
//! and snippets (FTS5's marked text turned into bounded, HTML-safe text). Capsule search,
//! reasoning search and memory recall use it; none owns it.

use rusqlite::ErrorCode as SqliteCode;

use crate::error::{Error, Result};

/// Longest accepted query, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// Most matches of one full-text query a family ranks for `moss_search` or a recall: the
/// newest that pass the read's filters (by rowid: the order the items were first written).
/// Ranking reads every match it ranks (BM25, the row behind it), so a word found in most
/// texts would cost a read of every text; with this cap it costs at most this many. A query
/// matching fewer is ranked in full, the same as without it; one matching more is ranked
/// among its newest matches only, and a more specific query reaches older ones. The
/// descriptions of `moss_search` and `memory_recall` state the number.
pub const RANKED_MATCHES: i64 = 1_000;
/// Visible characters of a snippet, not counting markup and the ellipses, by default.
pub const SNIPPET_CHARS: usize = 300;

/// Markers FTS5's snippet() puts around matches (`char(57344)`, `char(57345)` in SQL), turned
/// into <b></b> after escaping. Private-use code points: they never come out of the escaping
/// step, so user text cannot forge a tag.
pub const OPEN: char = '\u{E000}';
pub const CLOSE: char = '\u{E001}';
/// What a cut side of a snippet ends with.
pub const ELLIPSIS: &str = "…";

/// How FTS5's query parser starts its error messages (sqlite3.c, `sqlite3Fts5ParseError`).
const FTS5_QUERY_ERRORS: &[&str] = &[
    "fts5:",
    "unknown special query",
    "no such column",
    "unterminated string",
    "expected integer",
];

/// Refuses a query FTS5 would read as one of its special queries (`*reads`, `*id`, which only
/// its own tests use) or fail on: a query starting with `*`.
pub fn check_query_start(query: &str) -> Result<()> {
    if query.trim_start().starts_with('*') {
        return Err(Error::invalid_field(
            "query",
            format!(
                "query {query:?} starts with `*`; a prefix search puts `*` after the word \
                 (auth*), and a literal * goes inside double quotes (\"*\")"
            ),
        ));
    }
    Ok(())
}

/// FTS5 reports a query it cannot parse as a plain SQL error; the SQL around it is fixed, so
/// such an error is the user's query: `INVALID_REQUEST` naming the field, and the way around it.
pub fn query_error(e: impl Into<crate::store::engine::DbError>, query: &str) -> Error {
    let e: crate::store::engine::DbError = e.into();
    match &e {
        crate::store::engine::DbError::Sqlite(rusqlite::Error::SqliteFailure(err, Some(msg)))
            if err.code == SqliteCode::Unknown
                && FTS5_QUERY_ERRORS.iter().any(|p| msg.starts_with(p)) =>
        {
            Error::invalid(format!(
                "query {query:?} is not valid FTS5 syntax ({msg}). Pass safe_query: true \
                 (CLI: --safe, or safe_query:=true) to search the words as written, or use \
                 words, \"quoted phrases\", prefix*, AND / OR / NOT with punctuation such as \
                 - : . inside double quotes"
            ))
            .with_details(serde_json::json!({ "field": "query", "reason": msg }))
        }
        _ => Error::from(e),
    }
}

/// Plain text as an FTS5 query that matches it word for word (`safe_query: true`): every
/// whitespace-separated word becomes a quoted string (its own quotes doubled), so no character
/// is an operator; words without a letter or digit are dropped. `None` when nothing searchable
/// is left.
pub fn safe_query(text: &str) -> Option<String> {
    let words: Vec<String> = text
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// The FTS5 query of a search: `query` trimmed, rewritten by [`safe_query`] when `safe` is set.
pub fn fts_query(query: &str, safe: bool) -> Result<String> {
    let query = query.trim();
    if !safe {
        return Ok(query.to_string());
    }
    safe_query(query).ok_or_else(|| {
        Error::invalid_field(
            "query",
            format!("query {query:?} has no word to search for (letters or digits)"),
        )
    })
}

/// The text a search binds for `fts` (an FTS5 query, from [`fts_query`]) on `engine`: as is on
/// SQLite; on PostgreSQL its `tsquery` form ([`crate::store::engine::search::matches`] and
/// its siblings read it), or `INVALID_REQUEST` naming the field when the query uses what
/// PostgreSQL's search cannot say (`NEAR`, column filters, `^`).
pub fn engine_query(engine: crate::store::engine::Engine, fts: &str) -> Result<String> {
    use crate::store::engine::{Engine, tsquery};
    match engine {
        Engine::Sqlite => Ok(fts.to_string()),
        Engine::Postgres => tsquery::to_tsquery(fts).map_err(|tsquery::Unmapped(reason)| {
            Error::invalid(format!(
                "query {fts:?} cannot be searched on this store (PostgreSQL): {reason}. Pass \
                 safe_query: true (CLI: --safe, or safe_query:=true) to search the words as \
                 written"
            ))
            .with_details(serde_json::json!({ "field": "query", "reason": reason }))
        }),
    }
}

/// A BM25 rank of FTS5 (negative; lower is better) as a score in 0..1, higher better:
/// `r / (1 + r)` with `r = −bm25`. It keeps the order of the ranks, and depends on the hit alone
/// (not on the page or the other hits), so scores compare across pages and calls; 0.5 is a rank
/// of −1. Not rounded: a term in over half of the texts has the least weight FTS5 gives
/// (an IDF of 1e-6), and rounding would make its hits' scores equal where their order is not.
pub fn bm25_score(bm25: f64) -> f64 {
    let r = (-bm25).max(0.0);
    r / (1.0 + r)
}

/// How far a cut may move to land between words instead of inside one, in characters.
const WORD_SLACK: usize = 20;

/// Turns FTS5's marked snippet into HTML: the text escaped, matches in `<b>`, at most `max`
/// visible characters. Whole characters and whole entities only.
///
/// FTS5 picks its window in tokens, so it can hold far more than `max` characters. The
/// characters shown are then a window of `max` around the first match, which is always shown
/// whole (cut only when it alone is longer than `max`); a later match the window would cut is
/// left out, and a cut falls between words when one is near. A cut side gets an ellipsis.
pub fn render_snippet(raw: &str, max: usize) -> String {
    // The visible characters, each with whether it is inside a match.
    let mut chars: Vec<(char, bool)> = Vec::with_capacity(raw.len());
    let mut bold = false;
    for c in raw.chars() {
        match c {
            OPEN => bold = true,
            CLOSE => bold = false,
            _ => chars.push((c, bold)),
        }
    }
    let (start, end) = window(&chars, max);
    let mut out = String::with_capacity(raw.len() + 16);
    // Ends with the text's own ellipsis, or one of ours for the cut.
    if start > 0 && chars[start].0 != '…' {
        out.push_str(ELLIPSIS);
    }
    let mut bold = false;
    for &(c, b) in &chars[start..end] {
        if b != bold {
            out.push_str(if b { "<b>" } else { "</b>" });
            bold = b;
        }
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    if bold {
        out.push_str("</b>");
    }
    if end < chars.len() && !out.ends_with(ELLIPSIS) {
        out.push_str(ELLIPSIS);
    }
    out
}

/// The range of `chars` to show: all of them when they fit in `max`, else `max` or a little
/// fewer around the first match (see [`render_snippet`]).
fn window(chars: &[(char, bool)], max: usize) -> (usize, usize) {
    let len = chars.len();
    if len <= max {
        return (0, len);
    }
    // The first match, [s, e); none (a title-only or odd snippet) keeps the head.
    let s = chars.iter().position(|&(_, b)| b).unwrap_or(0);
    let e = s + chars[s..].iter().take_while(|&&(_, b)| b).count();
    if e - s >= max {
        return (s, s + max);
    }
    // Centre the match in `max` characters, shifted back inside the text at its end.
    let slack = max - (e - s);
    let mut start = s - (slack / 2).min(s);
    let mut end = start + max;
    if end > len {
        end = len;
        start = len - max;
    }
    // A later match the end would cut is left out whole.
    if end < len && chars[end].1 && chars[end - 1].1 {
        while end > e && chars[end - 1].1 {
            end -= 1;
        }
    }
    let space = |i: usize| chars[i].0.is_whitespace();
    // Cut between words: drop a partial word at either side when a space is near.
    if start > 0 && !space(start - 1) && !space(start) {
        let limit = s.min(start + WORD_SLACK);
        if let Some(p) = (start..limit).find(|&i| space(i)) {
            start = p;
        }
    }
    if start > 0 {
        while start < s && space(start) {
            start += 1;
        }
    }
    if end < len && !space(end - 1) && !space(end) {
        let limit = e.max(end.saturating_sub(WORD_SLACK));
        if let Some(p) = (limit..end).rev().find(|&i| space(i)) {
            end = p;
        }
    }
    if end < len {
        while end > e && space(end - 1) {
            end -= 1;
        }
    }
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_escape_user_text_and_highlight_matches() {
        let raw = format!("use {OPEN}JWT{CLOSE} <script>&\"x\"'");
        assert_eq!(
            render_snippet(&raw, 300),
            "use <b>JWT</b> &lt;script&gt;&amp;&quot;x&quot;&#39;"
        );
    }

    #[test]
    fn snippets_are_cut_on_whole_characters_and_close_their_tags() {
        // 3 visible characters: é, ü, & (one entity, never split).
        assert_eq!(render_snippet("éü&ütail", 3), "éü&amp;…");
        // A match longer than the budget is the one thing cut, and its tag is closed.
        let raw = format!("é{OPEN}ü&ü{CLOSE}tail");
        assert_eq!(render_snippet(&raw, 2), "…<b>ü&amp;</b>…");
        let long = "α".repeat(400);
        let s = render_snippet(&long, SNIPPET_CHARS);
        assert_eq!(s.chars().count(), SNIPPET_CHARS + 1);
        assert!(s.ends_with('…'));
    }

    /// The visible text of a rendered snippet and its highlighted pieces.
    fn parse(html: &str) -> (String, Vec<String>) {
        let mut bolds = Vec::new();
        let mut rest = html;
        while let Some(at) = rest.find("<b>") {
            let tail = &rest[at + 3..];
            let end = tail.find("</b>").expect("closed <b>");
            bolds.push(decode(&tail[..end]));
            rest = &tail[end + 4..];
        }
        (decode(&html.replace("<b>", "").replace("</b>", "")), bolds)
    }

    fn decode(s: &str) -> String {
        s.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&")
    }

    #[test]
    fn the_first_match_is_whole_wherever_the_token_window_puts_it() {
        let fillers = [
            "lorem ipsum dolor sit amet ",
            "internationalization considerations ",
            "a ",
            "日本語のテキスト ",
            "x&y<z> ",
            "nospacesatallinthisfillerwordsoitislong",
        ];
        let terms = [
            "q".to_string(),
            "zqxwvutsrpom".to_string(),
            "zqxwvutsrpomn".to_string(),
            "z".repeat(40),
            "überprüfungsmaßnahmen".to_string(),
            "🦀é日本".repeat(5),
            "a&b<c>".repeat(4),
        ];
        for filler in fillers {
            for term in &terms {
                // Before the match, every length up to past the budget, so the old cut at
                // `max` characters lands on each character of the term.
                for before_len in (0..400).step_by(7) {
                    let before: String = filler.chars().cycle().take(before_len).collect();
                    let after: String = filler.chars().cycle().take(500).collect();
                    let raw = format!("…{before} {OPEN}{term}{CLOSE} {after}…");
                    let html = render_snippet(&raw, SNIPPET_CHARS);
                    let (vis, bolds) = parse(&html);
                    assert_eq!(bolds, [term.as_str()], "{html}");
                    let n = vis.chars().count();
                    assert!(n <= SNIPPET_CHARS + 2, "{n} visible characters: {html}");
                    assert!(n >= SNIPPET_CHARS - 2 * WORD_SLACK - 2, "{n}: {html}");
                    let all = format!("…{before} {term} {after}…");
                    for piece in vis.split('…').filter(|p| !p.is_empty()) {
                        assert!(all.contains(piece), "{piece:?} not in the text: {html}");
                    }
                }
            }
        }
    }

    #[test]
    fn the_match_is_centred_and_cuts_fall_between_words() {
        let before = "alpha beta gamma delta ".repeat(20);
        let after = " epsilon zeta eta theta".repeat(20);
        let raw = format!("…{before}{OPEN}needle{CLOSE}{after}…");
        let html = render_snippet(&raw, 100);
        let (vis, _) = parse(&html);
        let vis = vis.trim_matches('…');
        let at = vis.find("needle").unwrap();
        let (left, right) = (at, vis.len() - at - "needle".len());
        assert!(left.abs_diff(right) <= 2 * WORD_SLACK, "{html}");
        for w in vis.split(' ') {
            assert!(
                [
                    "alpha", "beta", "gamma", "delta", "needle", "epsilon", "zeta", "eta", "theta"
                ]
                .contains(&w),
                "cut word {w:?}: {html}"
            );
        }
    }

    #[test]
    fn a_match_at_either_end_keeps_the_window_inside_the_text() {
        let filler = "word ".repeat(100);
        let head = render_snippet(&format!("{OPEN}first{CLOSE} {filler}"), 50);
        assert!(head.starts_with("<b>first</b> word"), "{head}");
        assert!(head.ends_with('…'), "{head}");
        let tail = render_snippet(&format!("{filler}{OPEN}last{CLOSE}"), 50);
        assert!(tail.starts_with('…'), "{tail}");
        assert!(tail.ends_with("word <b>last</b>"), "{tail}");
    }

    #[test]
    fn a_later_match_the_window_would_cut_is_left_out() {
        let raw = format!(
            "{OPEN}one{CLOSE} {} {OPEN}{}{CLOSE} tail",
            "w".repeat(5),
            "x".repeat(30)
        );
        let html = render_snippet(&raw, 20);
        assert_eq!(html, "<b>one</b> wwwww…");
        // Adjacent matches in the window are all shown.
        let raw = format!("{OPEN}one{CLOSE} {OPEN}two{CLOSE} {}", "w ".repeat(50));
        let html = render_snippet(&raw, 20);
        assert!(html.starts_with("<b>one</b> <b>two</b> w"), "{html}");
    }

    #[test]
    fn plain_text_becomes_quoted_words() {
        assert_eq!(safe_query("pr-123").as_deref(), Some("\"pr-123\""));
        assert_eq!(
            safe_query("TODO: fix").as_deref(),
            Some("\"TODO:\" \"fix\"")
        );
        assert_eq!(
            safe_query("\"unbalanced").as_deref(),
            Some("\"\"\"unbalanced\"")
        );
        assert_eq!(
            safe_query("a AND b*").as_deref(),
            Some("\"a\" \"AND\" \"b*\"")
        );
        assert_eq!(safe_query(" - : \" "), None);
    }

    #[test]
    fn bm25_ranks_become_scores_in_the_same_order() {
        let ranks = [-12.5, -3.0, -1.0, -0.2, -0.000_002, -0.000_001, 0.0];
        let scores: Vec<f64> = ranks.iter().map(|&b| bm25_score(b)).collect();
        assert_eq!(scores[2], 0.5);
        assert_eq!(scores[6], 0.0);
        for w in scores.windows(2) {
            assert!(w[0] > w[1], "{scores:?}");
        }
        assert!(scores.iter().all(|s| (0.0..1.0).contains(s)), "{scores:?}");
    }

    #[test]
    fn forged_markup_stays_text() {
        assert_eq!(render_snippet("<b>x</b>", 300), "&lt;b&gt;x&lt;/b&gt;");
    }
}

/// One hit of a family's search, as the cross-family search fuses them: where it is, what it
/// shows, its rank in its family (best first), and the call that opens it.
#[derive(Debug, Clone, PartialEq)]
pub struct FamilyHit {
    pub workspace: String,
    pub id: String,
    pub kind: String,
    pub title: String,
    /// HTML-escaped, matches in `<b>`.
    pub snippet: String,
    /// The tool and arguments that read the item in full.
    pub open: (&'static str, serde_json::Value),
    /// Its keyword and semantic ranks within its family, when its family ranked by both.
    pub explain: Option<moss_client::search::HitExplain>,
}

/// Marks whole-word, case-insensitive occurrences of `words` in `text` (HTML-escaped first)
/// with `<b>`, keeping at most `max` characters from the first match on.
pub fn mark_words(text: &str, words: &[String], max: usize) -> String {
    let lower = text.to_lowercase();
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for w in words.iter().filter(|w| !w.is_empty()) {
        let w = w.to_lowercase();
        let mut from = 0;
        while let Some(at) = lower[from..].find(&w) {
            let start = from + at;
            let end = start + w.len();
            let before = lower[..start].chars().next_back();
            if before.is_none_or(|c| !c.is_alphanumeric()) && lower.is_char_boundary(end) {
                // A word and its suffixes (tab, tabs): extend to the end of the word.
                let extra = lower[end..]
                    .char_indices()
                    .find(|(_, c)| !c.is_alphanumeric())
                    .map_or(lower.len() - end, |(i, _)| i);
                spans.push((start, end + extra));
            }
            from = end.max(start + 1);
            while !lower.is_char_boundary(from) {
                from += 1;
            }
        }
    }
    spans.sort();
    // Lowercasing can change byte lengths; fall back to no marks then.
    if lower.len() != text.len() {
        spans.clear();
    }
    let mut raw = String::with_capacity(text.len() + 8);
    let mut at = 0;
    for (s, e) in spans {
        if s < at {
            continue;
        }
        raw.push_str(&text[at..s]);
        raw.push(OPEN);
        raw.push_str(&text[s..e]);
        raw.push(CLOSE);
        at = e;
    }
    raw.push_str(&text[at..]);
    render_snippet(&raw, max)
}

/// The words of a query, without FTS5's operators and punctuation: what a search that is not
/// FTS5 matches.
pub fn query_words(query: &str) -> Vec<String> {
    query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty() && !matches!(*w, "AND" | "OR" | "NOT" | "NEAR"))
        .map(str::to_lowercase)
        .collect()
}

/// Rows read per statement while `filter_near` checks candidates against a filter.
const FILTER_CHUNK: usize = 500;

/// The candidates of `near` (best first) that `f` keeps, as `(key, passage)`, best first, at
/// most `want`: filters apply before ranking, so a selective filter reads further down the
/// list instead of returning fewer hits. The filter reads `source`'s table aliased `c`; `key` is
/// the column returned for each row (`c.id`).
pub fn filter_near<K: crate::store::engine::FromValue>(
    db: crate::store::engine::Db<'_>,
    source: &crate::store::semantic::EmbedSource,
    key: &str,
    f: &crate::sql_filter::Filter,
    near: &[crate::store::semantic::Near],
    want: usize,
) -> Result<Vec<(K, crate::store::semantic::Near)>, crate::store::engine::DbError> {
    let mut out = Vec::new();
    for chunk in near.chunks(FILTER_CHUNK) {
        if out.len() >= want {
            break;
        }
        let ids: Vec<String> = chunk.iter().map(|n| n.doc.to_string()).collect();
        let sql = format!(
            "SELECT c.{rowid}, {key} FROM {table} c {} {} c.{rowid} IN ({})",
            f.sql(),
            if f.is_empty() { "WHERE" } else { "AND" },
            ids.join(", "),
            rowid = source.key,
            table = source.fts.table,
        );
        let mut kept: std::collections::HashMap<i64, K> = db
            .query_map(&sql, &f.bind(), |r| Ok((r.get::<i64>(0)?, r.get::<K>(1)?)))?
            .into_iter()
            .collect();
        for n in chunk {
            if out.len() >= want {
                break;
            }
            if let Some(k) = kept.remove(&n.doc) {
                out.push((k, *n));
            }
        }
    }
    Ok(out)
}
