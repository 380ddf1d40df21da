//! `branchmind_search`: full-text search over a workspace's entries (notes, trace, cards),
//! ranked by BM25 with titles weighing 5x, with the same snippets, scores (`bm25_score`) and
//! `safe_query` as capsule search.

use moss_client::reasoning::{
    Budget, ReasoningHit, ReasoningSearchRequest, ReasoningSearchResponse,
};
use rusqlite::params;

use super::search_source::SEARCH_SOURCE;
use super::{Reasoning, limit, refs};
use crate::budget::Fit;
use crate::budget::blank_budget;
use crate::error::{Error, Result};
use crate::read::Read;
use crate::search_text::{
    MAX_QUERY_CHARS, SNIPPET_CHARS, bm25_score, check_query_start, fts_query, query_error,
    render_snippet,
};

impl Fit for ReasoningSearchResponse {
    fn units(&self) -> usize {
        self.hits.len()
    }
    fn keep(&mut self, n: usize) {
        self.hits.truncate(n);
    }
    fn cut(&mut self, chars: usize) -> bool {
        self.hits
            .first_mut()
            .is_some_and(|h| crate::budget::cut_text(&mut h.snippet, chars))
    }
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated;
        self.budget = budget;
    }
}

impl Reasoning {
    /// `branchmind_search`.
    pub async fn search(&self, req: ReasoningSearchRequest) -> Result<ReasoningSearchResponse> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        let limit = limit("limit", req.limit, 10, 50)?;
        let query = fts_query(&req.query, req.safe_query.unwrap_or(false))?;
        let n = query.chars().count();
        if n == 0 || n > MAX_QUERY_CHARS {
            return Err(Error::invalid_field(
                "query",
                format!(
                    "query must be 1 to {MAX_QUERY_CHARS} characters of words, \"phrases\" or prefix*"
                ),
            ));
        }
        check_query_start(&query)?;
        let branch = req
            .branch
            .as_deref()
            .map(|b| refs::name("branch", b))
            .transpose()?;
        // Read-your-writes: wait for the indexer to apply what was committed before now.
        self.store.await_index(&SEARCH_SOURCE).await;
        read.run(&self.store, move |conn, ws| {
            let sql = "WITH hits AS MATERIALIZED (
                   SELECT f.rowid AS rid, bm25(reasoning_fts, 5.0, 1.0) AS rank
                   FROM fts.reasoning_fts AS f CROSS JOIN reasoning_entries AS e ON e.seq = f.rowid
                   WHERE f.reasoning_fts MATCH ?1 AND e.workspace = ?2 AND (?3 IS NULL OR e.branch = ?3)
                   ORDER BY rank, e.seq DESC LIMIT ?4)
                 SELECT e.seq, e.ts_ms, e.branch, e.doc, e.kind, e.title, hits.rank,
                   (SELECT snippet(reasoning_fts, -1, char(57344), char(57345), '…', 64)
                    FROM fts.reasoning_fts WHERE reasoning_fts MATCH ?1 AND rowid = hits.rid)
                 FROM hits CROSS JOIN reasoning_entries AS e ON e.seq = hits.rid
                 ORDER BY hits.rank, e.seq DESC";
            let hits = (|| {
                conn.prepare_cached(sql)?
                    .query_map(params![query, ws, branch, limit], |r| {
                        let ts_ms: i64 = r.get(1)?;
                        let raw: Option<String> = r.get(7)?;
                        Ok(ReasoningHit {
                            seq: r.get(0)?,
                            ts: ts_ms / 1000,
                            branch: r.get(2)?,
                            doc: r.get(3)?,
                            kind: r.get(4)?,
                            title: r.get(5)?,
                            score: bm25_score(r.get(6)?),
                            snippet: render_snippet(raw.as_deref().unwrap_or(""), SNIPPET_CHARS),
                        })
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })()
            .map_err(|e| query_error(e, &query))?;
            Ok(ReasoningSearchResponse {
                workspace: ws,
                query,
                hits,
                truncated: false,
                budget: blank_budget(),
            })
        })
        .await
    }
}
