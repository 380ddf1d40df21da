//! `branchmind_search`: full-text search over a workspace's entries (notes, trace, cards),
//! ranked by BM25 with titles weighing 5x, with the same snippets, scores (`bm25_score`) and
//! `safe_query` as capsule search.

use moss_client::reasoning::{
    Budget, ReasoningHit, ReasoningSearchRequest, ReasoningSearchResponse,
};

use super::search_source::{EMBED_SOURCE, SEARCH_SOURCE};
use super::{Reasoning, limit, refs};
use crate::budget::Fit;
use crate::budget::blank_budget;
use crate::error::{Error, Result};
use crate::read::Read;
use crate::search_text::{
    MAX_QUERY_CHARS, SNIPPET_CHARS, bm25_score, check_query_start, fts_query, query_error,
    render_snippet,
};
use crate::sql_filter::Filter;
use crate::store::engine::{Db, Engine};
use crate::store::semantic::fusion::{DEPTH, fuse};
use crate::store::semantic::{CANDIDATES, Near};
use moss_client::search::SearchMode;

/// The search's statement on PostgreSQL, against the words `reasoning_entries` carries.
static SEARCH_PG: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    use crate::store::engine::search::{matches, rank};
    let (snippet, lateral) = super::interface::snippet_pg();
    format!(
        "WITH hits AS MATERIALIZED (
           SELECT e.seq AS rid, {rank} AS rank
           FROM reasoning_entries AS e
           WHERE {e} AND e.workspace = ?2 AND (CAST(?3 AS TEXT) IS NULL OR e.branch = ?3)
           ORDER BY rank, e.seq DESC LIMIT ?4)
         SELECT e.seq, e.ts_ms, e.branch, e.doc, e.kind, e.title, CAST(hits.rank AS DOUBLE PRECISION),
           {snippet}
         FROM hits JOIN reasoning_entries AS e ON e.seq = hits.rid {lateral}
         ORDER BY hits.rank, e.seq DESC",
        rank = rank("e", 1, &[5.0, 1.0]),
        e = matches("e", 1),
    )
});

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
        let mut mode = self.store.semantic.mode(req.mode)?;
        let explain = req.explain.unwrap_or(false);
        let mut near = Vec::new();
        if mode != SearchMode::Keyword {
            match self.store.semantic.query_vector(&req.query).await? {
                Some(q) => {
                    let ws = vec![read.ws().to_string()];
                    near = self
                        .store
                        .semantic
                        .nearest(&EMBED_SOURCE, q, Some(ws), CANDIDATES)
                        .await?;
                }
                None if mode == SearchMode::Semantic => {
                    return Err(crate::store::semantic::not_ready());
                }
                None => mode = SearchMode::Keyword,
            }
        }
        // Read-your-writes: wait for the indexer to apply what was committed before now.
        self.store.await_index(&SEARCH_SOURCE).await;
        let depth = if mode == SearchMode::Keyword {
            limit
        } else {
            DEPTH as i64
        };
        read.run_db(&self.store, move |db, ws| {
            let sqlite = "WITH hits AS MATERIALIZED (
                   SELECT f.rowid AS rid, bm25(reasoning_fts, 5.0, 1.0) AS rank
                   FROM fts.reasoning_fts AS f CROSS JOIN reasoning_entries AS e ON e.seq = f.rowid
                   WHERE f.reasoning_fts MATCH ?1 AND e.workspace = ?2 AND (?3 IS NULL OR e.branch = ?3)
                   ORDER BY rank, e.seq DESC LIMIT ?4)
                 SELECT e.seq, e.ts_ms, e.branch, e.doc, e.kind, e.title, hits.rank,
                   (SELECT snippet(reasoning_fts, -1, char(57344), char(57345), '…', 64)
                    FROM fts.reasoning_fts WHERE reasoning_fts MATCH ?1 AND rowid = hits.rid)
                 FROM hits CROSS JOIN reasoning_entries AS e ON e.seq = hits.rid
                 ORDER BY hits.rank, e.seq DESC";
            let sql = match db.engine() {
                Engine::Sqlite => sqlite,
                Engine::Postgres => SEARCH_PG.as_str(),
            };
            let bound = crate::search_text::engine_query(db.engine(), &query)?;
            let hits = db
                .query_map(
                    sql,
                    crate::db_params![&bound, &ws, branch.as_ref(), depth],
                    |r| {
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
                            explain: None,
                        })
                    },
                )
                .map_err(|e| query_error(e, &query))?;
            let hits = if mode == SearchMode::Keyword {
                let mut hits = hits;
                if explain {
                    for (i, h) in hits.iter_mut().enumerate() {
                        h.explain = Some(crate::store::semantic::keyword_only(i + 1, h.score));
                    }
                }
                hits
            } else {
                let keyword = if mode == SearchMode::Hybrid {
                    hits
                } else {
                    Vec::new()
                };
                let mut base = Filter::default();
                base.add("c.workspace = ?", ws.clone());
                if let Some(b) = &branch {
                    base.add("c.branch = ?", b.clone());
                }
                let semantic: Vec<(i64, Near)> = crate::search_text::filter_near(
                    db,
                    &EMBED_SOURCE,
                    "c.seq",
                    &base,
                    &near,
                    DEPTH,
                )?;
                let ranked: Vec<(i64, f64)> = keyword.iter().map(|h| (h.seq, h.score)).collect();
                let fused = fuse(&ranked, &semantic);
                let parts = if mode == SearchMode::Hybrid { 2 } else { 1 };
                let mut by_seq: std::collections::HashMap<i64, ReasoningHit> =
                    keyword.into_iter().map(|h| (h.seq, h)).collect();
                let mut out = Vec::new();
                for f in fused.iter().take(limit as usize) {
                    let mut h = match by_seq.remove(&f.key) {
                        Some(h) => h,
                        None => entry_hit(db, f.semantic.expect("a semantic hit").1)?,
                    };
                    h.score = f.score(parts);
                    if explain {
                        h.explain = Some(f.explain());
                    }
                    out.push(h);
                }
                out
            };
            Ok(ReasoningSearchResponse {
                workspace: ws,
                query,
                hits,
                mode,
                truncated: false,
                budget: blank_budget(),
            })
        })
        .await
    }
}

/// An entry found by meaning alone: its passage nearest the query as the snippet.
fn entry_hit(db: Db<'_>, near: Near) -> Result<ReasoningHit> {
    Ok(db.query_one(
        "SELECT seq, ts_ms, branch, doc, kind, title, content FROM reasoning_entries
             WHERE seq = ?1",
        crate::db_params![near.doc],
        |r| {
            let ts_ms: i64 = r.get(1)?;
            let content: Option<String> = r.get(6)?;
            Ok(ReasoningHit {
                seq: r.get(0)?,
                ts: ts_ms / 1000,
                branch: r.get(2)?,
                doc: r.get(3)?,
                kind: r.get(4)?,
                title: r.get(5)?,
                snippet: render_snippet(
                    &crate::store::semantic::passage(content.as_deref().unwrap_or(""), near.chunk),
                    SNIPPET_CHARS,
                ),
                score: 0.0,
                explain: None,
            })
        },
    )?)
}
