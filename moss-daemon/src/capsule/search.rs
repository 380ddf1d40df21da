//! `capsule_search` (seed 001 §6.9): FTS5 over title and text, ranked by BM25 with the title
//! weighing 5x the body, with a bounded, HTML-safe snippet.
//!
//! The index lives in `moss-fts.db`, attached read-only to every reader as `fts` and kept up
//! to date by the indexer thread (see `store::fts`). A search first waits until the index has
//! applied every text change committed before it started, so a client always finds what it
//! has just stored.

use std::time::Duration;

use moss_client::{Pagination, SearchHit, SearchPage, SearchRequest};
use rusqlite::types::Value;
use rusqlite::{Connection, ErrorCode as SqliteCode};

use super::fields;
use super::query::{self, Filter};
use super::{Capsules, orchestration};
use crate::error::{Error, Result};

/// Longest accepted query, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// Visible characters of a snippet, not counting markup and the ellipses.
pub const SNIPPET_CHARS: usize = 300;
/// Longest a search waits for the indexer before answering from the index as it is.
const INDEX_WAIT: Duration = Duration::from_secs(5);

// Markers FTS5's snippet() puts around matches, turned into <b></b> after escaping. Private-use
// code points: they never come out of the escaping step, so user text cannot forge a tag.
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';
const ELLIPSIS: &str = "…";

impl Capsules {
    /// Text changes committed but not yet applied to the full-text index.
    pub fn index_behind(&self) -> i64 {
        (self.store.index_queued() - self.store.index_watermark()).max(0)
    }

    /// `capsule_search`.
    pub async fn search(&self, req: SearchRequest) -> Result<SearchPage> {
        let query = req.query.trim().to_string();
        let n = query.chars().count();
        if n == 0 {
            return Err(Error::invalid(
                "query is empty; give words, a \"phrase\", a prefix* or a boolean expression",
            ));
        }
        if n > MAX_QUERY_CHARS {
            return Err(Error::invalid(format!(
                "query is {n} characters; at most {MAX_QUERY_CHARS} are allowed. Search for \
                 the few most distinctive words instead"
            ))
            .with_details(serde_json::json!({ "max_chars": MAX_QUERY_CHARS, "actual_chars": n })));
        }
        let (limit, offset) = fields::page(req.limit, req.offset, 20, 100)?;
        let mut f = Filter::default();
        f.add("f.capsules_fts MATCH ?", query.clone());
        if let Some(ws) = req.workspace.as_deref().filter(|w| !w.trim().is_empty()) {
            f.add("c.workspace_norm = ?", fields::normalize(ws));
        }
        if !req.include_deleted.unwrap_or(false) {
            f.raw("c.deleted_at IS NULL");
        }
        if let Some(tag) = req.tag.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            f.add(
                "EXISTS (SELECT 1 FROM json_each(c.tags_json) WHERE json_each.value = ?)",
                tag.to_string(),
            );
        }
        orchestration(
            &mut f,
            req.run_id.as_deref().map(str::trim),
            req.phase.as_deref().map(str::trim),
            req.role.as_deref().map(str::trim),
        );

        // Read-your-writes: wait for the indexer to apply what was committed before now.
        let queued = self.store.index_queued();
        if !self.store.index_reached(queued, INDEX_WAIT).await {
            tracing::warn!(
                "search answered from an index still {} changes behind",
                queued - self.store.index_watermark()
            );
        }

        self.store
            .readers
            .run(move |conn| {
                let (items, total) = run_search(conn, &f, &query, limit, offset)?;
                let has_more = offset + (items.len() as i64) < total;
                Ok(SearchPage {
                    items,
                    pagination: Pagination {
                        limit,
                        offset,
                        has_more,
                        total,
                    },
                    sort: "relevance".into(),
                })
            })
            .await
    }
}

fn run_search(
    conn: &Connection,
    f: &Filter,
    query: &str,
    limit: i64,
    offset: i64,
) -> Result<(Vec<SearchHit>, i64)> {
    let n = f.params().len();
    // Two steps, so the costly parts run only where they must:
    // - `hits` ranks the matches and keeps one page of them. `CROSS JOIN` makes SQLite drive
    //   the join from the full-text match (otherwise it may walk every capsule of the workspace
    //   and run the match once per capsule). `c.seq DESC` makes equal ranks come back newest
    //   first, the same on every call.
    // - snippet() runs only for that page: in the ranking query SQLite would compute it for
    //   every match before sorting. `?1` is the MATCH text, the filter's first parameter.
    let sql = format!(
        "WITH hits AS MATERIALIZED (
             SELECT f.rowid AS rid, bm25(capsules_fts, 5.0, 1.0) AS rank, c.seq AS seq
             FROM fts.capsules_fts AS f CROSS JOIN capsules AS c ON c.rowid = f.rowid
             {}
             ORDER BY rank, c.seq DESC
             LIMIT ?{} OFFSET ?{})
         SELECT c.id, c.workspace_raw, c.name_raw, c.title, c.updated_at, c.deleted_at,
                (SELECT snippet(capsules_fts, -1, char(57344), char(57345), '{ELLIPSIS}', 64)
                 FROM fts.capsules_fts WHERE capsules_fts MATCH ?1 AND rowid = hits.rid)
         FROM hits CROSS JOIN capsules AS c ON c.rowid = hits.rid
         ORDER BY hits.rank, hits.seq DESC",
        f.sql(),
        n + 1,
        n + 2
    );
    let mut params: Vec<Value> = f.params().to_vec();
    params.push(Value::Integer(limit));
    params.push(Value::Integer(offset));
    let items = (|| {
        conn.prepare_cached(&sql)?
            .query_map(rusqlite::params_from_iter(params.iter()), |r| {
                let id: String = r.get(0)?;
                let workspace: String = r.get(1)?;
                let name: Option<String> = r.get(2)?;
                let raw: Option<String> = r.get(6)?;
                Ok(SearchHit {
                    fetch_key: query::fetch_key(&id, &workspace, name.as_deref()),
                    title: r.get(3)?,
                    updated_at: r.get(4)?,
                    deleted_at: r.get(5)?,
                    snippet: render_snippet(raw.as_deref().unwrap_or(""), SNIPPET_CHARS),
                    id,
                    workspace,
                    name,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()
    })()
    .map_err(|e| query_error(e, query))?;
    let total = if offset == 0 && (items.len() as i64) < limit {
        items.len() as i64
    } else {
        let count = format!(
            "SELECT count(*) FROM fts.capsules_fts AS f CROSS JOIN capsules AS c \
             ON c.rowid = f.rowid {}",
            f.sql()
        );
        conn.prepare_cached(&count)
            .and_then(|mut s| {
                s.query_row(rusqlite::params_from_iter(f.params().iter()), |r| r.get(0))
            })
            .map_err(|e| query_error(e, query))?
    };
    Ok((items, total))
}

/// How FTS5's query parser starts its error messages (sqlite3.c, `sqlite3Fts5ParseError`).
const FTS5_QUERY_ERRORS: &[&str] = &[
    "fts5:",
    "no such column",
    "unterminated string",
    "expected integer",
];

/// FTS5 reports a query it cannot parse as a plain SQL error; the SQL around it is fixed, so
/// such an error is the user's query.
fn query_error(e: rusqlite::Error, query: &str) -> Error {
    match &e {
        rusqlite::Error::SqliteFailure(err, Some(msg))
            if err.code == SqliteCode::Unknown
                && FTS5_QUERY_ERRORS.iter().any(|p| msg.starts_with(p)) =>
        {
            Error::invalid(format!(
                "query {query:?} is not valid FTS5 syntax ({msg}). Use words, \"quoted \
                 phrases\", prefix*, AND / OR / NOT; put punctuation such as - : . inside \
                 double quotes"
            ))
            .with_details(serde_json::json!({ "field": "query", "reason": msg }))
        }
        _ => Error::from(e),
    }
}

/// Turns FTS5's marked snippet into HTML: the text escaped, matches in `<b>`, at most `max`
/// visible characters. Whole characters and whole entities only; an open `<b>` is closed.
pub fn render_snippet(raw: &str, max: usize) -> String {
    let mut out = String::with_capacity(raw.len() + 16);
    let mut visible = 0;
    let mut bold = false;
    for c in raw.chars() {
        match c {
            OPEN => {
                if !bold {
                    out.push_str("<b>");
                    bold = true;
                }
            }
            CLOSE => {
                if bold {
                    out.push_str("</b>");
                    bold = false;
                }
            }
            _ => {
                if visible == max {
                    if bold {
                        out.push_str("</b>");
                        bold = false;
                    }
                    // Ends with the text's own ellipsis, or one of ours for the cut.
                    if !out.ends_with(ELLIPSIS) {
                        out.push_str(ELLIPSIS);
                    }
                    break;
                }
                visible += 1;
                match c {
                    '&' => out.push_str("&amp;"),
                    '<' => out.push_str("&lt;"),
                    '>' => out.push_str("&gt;"),
                    '"' => out.push_str("&quot;"),
                    '\'' => out.push_str("&#39;"),
                    _ => out.push(c),
                }
            }
        }
    }
    if bold {
        out.push_str("</b>");
    }
    out
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
        let raw = format!("é{OPEN}ü&ü{CLOSE}tail");
        // 3 visible characters: é, ü, & (one entity, never split).
        assert_eq!(render_snippet(&raw, 3), "é<b>ü&amp;</b>…");
        let long = "α".repeat(400);
        let s = render_snippet(&long, SNIPPET_CHARS);
        assert_eq!(s.chars().count(), SNIPPET_CHARS + 1);
        assert!(s.ends_with('…'));
    }

    #[test]
    fn forged_markup_stays_text() {
        assert_eq!(render_snippet("<b>x</b>", 300), "&lt;b&gt;x&lt;/b&gt;");
    }
}
