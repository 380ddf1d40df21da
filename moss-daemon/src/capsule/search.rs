//! `capsule_search`: FTS5 over title and text, ranked by BM25 with the title
//! weighing 5x the body, with a bounded, HTML-safe snippet.
//!
//! The index lives in `moss-fts.db`, attached read-only to every reader as `fts` and kept up
//! to date by the indexer thread (see `store::fts`). A search first waits until the index has
//! applied every text change committed before it started, so a client always finds what it
//! has just stored.
//!
//! On PostgreSQL the words are the table's generated `moss_words` column (see
//! `store::engine::search`), matched and ranked in the same statements' shape, with the title
//! weighing 5x the body as well.

use moss_client::capsule::{Pagination, SearchHit, SearchPage, SearchRequest};
use moss_client::search::SearchMode;

use super::query;
use super::{Capsules, orchestration};
use crate::error::{Error, Result};
use crate::search_text::{
    ELLIPSIS, MAX_QUERY_CHARS, SNIPPET_CHARS, bm25_score, check_query_start, engine_query,
    fts_query, query_error, render_snippet,
};
use crate::sql_filter::Filter;
use crate::store::engine::{Db, Engine, Param, search as pg};
use crate::store::semantic::CANDIDATES;
use crate::store::semantic::fusion::{DEPTH, fuse};
use crate::{names, page};

/// The bounds of `snippet_chars` (its default is [`SNIPPET_CHARS`]).
pub const SNIPPET_CHARS_MIN: i64 = 50;
pub const SNIPPET_CHARS_MAX: i64 = 500;
/// Tokens of a snippet: by default, the most accepted, and the most FTS5's snippet() gives.
pub const SNIPPET_TOKENS: i64 = 64;
pub const SNIPPET_TOKENS_MAX: i64 = 128;
const FTS5_SNIPPET_TOKENS_MAX: i64 = 64;

/// What a search returns around its hits.
#[derive(Debug, Clone, Copy)]
struct Shape {
    limit: i64,
    offset: i64,
    count_total: bool,
    snippet_tokens: i64,
    snippet_chars: usize,
}

impl Capsules {
    /// `capsule_search`.
    pub async fn search(&self, req: SearchRequest) -> Result<SearchPage> {
        self.search_within(req, None).await
    }

    /// `capsule_search` over the `newest` most recently created capsules that match and pass
    /// the filters, when given: what `moss_search` ranks (see
    /// [`crate::search_text::RANKED_MATCHES`]).
    pub async fn search_newest(&self, req: SearchRequest, newest: i64) -> Result<SearchPage> {
        self.search_within(req, Some(newest)).await
    }

    async fn search_within(&self, req: SearchRequest, newest: Option<i64>) -> Result<SearchPage> {
        let query = fts_query(&req.query, req.safe_query.unwrap_or(false))?;
        let snippet_tokens = req.snippet_tokens.unwrap_or(SNIPPET_TOKENS);
        if !(1..=SNIPPET_TOKENS_MAX).contains(&snippet_tokens) {
            return Err(Error::invalid_field(
                "snippet_tokens",
                format!("snippet_tokens must be 1 to {SNIPPET_TOKENS_MAX}, got {snippet_tokens}"),
            ));
        }
        let snippet_chars = req.snippet_chars.unwrap_or(SNIPPET_CHARS as i64);
        if !(SNIPPET_CHARS_MIN..=SNIPPET_CHARS_MAX).contains(&snippet_chars) {
            return Err(Error::invalid_field(
                "snippet_chars",
                format!(
                    "snippet_chars must be {SNIPPET_CHARS_MIN} to {SNIPPET_CHARS_MAX}, got \
                     {snippet_chars}"
                ),
            ));
        }
        check_query_start(&query)?;
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
        let (limit, offset) = page::bounds(req.limit, req.offset, 20, 100)?;
        let mut mode = self.store.semantic.mode(req.mode)?;
        let explain = req.explain.unwrap_or(false);
        let engine = self.store.engine();
        let conditions = |f: &mut Filter| -> Result<()> {
            if let Some(ws) = req.workspace.as_deref().filter(|w| !w.trim().is_empty()) {
                f.add("c.workspace_norm = ?", names::normalize(ws));
            }
            if !req.include_deleted.unwrap_or(false) {
                f.raw("c.deleted_at IS NULL");
            }
            crate::tags::filter_on(engine, f, "c.tags_json", req.tag.as_deref());
            orchestration(
                f,
                req.run_id.as_ref(),
                req.phase.as_deref().map(str::trim),
                req.role.as_deref().map(str::trim),
            )?;
            if let Some(task) = super::handoff::task_value(req.task.as_deref())? {
                f.add("c.task = ?", task);
            }
            Ok(())
        };
        let mut f = Filter::default();
        match engine {
            Engine::Sqlite => f.add("f.capsules_fts MATCH ?", query.clone()),
            Engine::Postgres => f.add(
                &pg::matches("c", 1).replace("?1", "?"),
                engine_query(engine, &query)?,
            ),
        };
        conditions(&mut f)?;
        let mut base = Filter::default();
        conditions(&mut base)?;
        let shape = Shape {
            limit,
            offset,
            count_total: req.count_total.unwrap_or(true),
            snippet_tokens: snippet_tokens.min(FTS5_SNIPPET_TOKENS_MAX),
            snippet_chars: snippet_chars as usize,
        };
        // By meaning: the query's vector and the nearest capsules, before the keyword part.
        let mut near = Vec::new();
        if mode != SearchMode::Keyword {
            match self.store.semantic.query_vector(&req.query).await? {
                Some(q) => {
                    let ws = req
                        .workspace
                        .as_deref()
                        .filter(|w| !w.trim().is_empty())
                        .map(|w| vec![names::normalize(w)]);
                    near = self
                        .store
                        .semantic
                        .nearest(&super::search_source::EMBED_SOURCE, q, ws, CANDIDATES)
                        .await?;
                }
                None if mode == SearchMode::Semantic => {
                    return Err(crate::store::semantic::not_ready());
                }
                None => mode = SearchMode::Keyword,
            }
        }
        if mode != SearchMode::Semantic {
            // Read-your-writes: wait for the indexer to apply what was committed before now.
            self.store.await_index(&super::SEARCH_SOURCE).await;
        }
        if mode != SearchMode::Keyword {
            return self
                .store
                .readers
                .run_db(move |db| {
                    let mut f = f;
                    if let Some(newest) = newest {
                        newest_only(db, &mut f, &query, newest)?;
                    }
                    let (items, pagination) =
                        fused_search(db, &f, &base, &query, shape, mode, &near, explain)?;
                    Ok(SearchPage {
                        pagination,
                        items,
                        sort: "relevance".into(),
                        mode,
                    })
                })
                .await;
        }
        self.store
            .readers
            .run_db(move |db| {
                let mut f = f;
                if let Some(newest) = newest {
                    newest_only(db, &mut f, &query, newest)?;
                }
                let (mut items, pagination) = run_search(db, &f, &query, shape)?;
                if explain {
                    for (i, h) in items.iter_mut().enumerate() {
                        h.explain = Some(crate::store::semantic::keyword_only(
                            offset as usize + i + 1,
                            h.score,
                        ));
                    }
                }
                Ok(SearchPage {
                    pagination,
                    items,
                    sort: "relevance".into(),
                    mode,
                })
            })
            .await
    }
}

/// Narrows `f` to the `newest` matches it lets through (the highest rowids): the rowid of the
/// `newest`-th, found walking the index's matches newest first, which stops there.
fn newest_only(db: Db<'_>, f: &mut Filter, query: &str, newest: i64) -> Result<()> {
    let sql = match db.engine() {
        Engine::Sqlite => format!(
            "SELECT f.rowid FROM fts.capsules_fts AS f CROSS JOIN capsules AS c ON c.rowid = f.rowid
         {} ORDER BY f.rowid DESC LIMIT 1 OFFSET {}",
            f.sql(),
            newest - 1
        ),
        Engine::Postgres => format!(
            "SELECT c.rowid FROM capsules AS c {} ORDER BY c.rowid DESC LIMIT 1 OFFSET {}",
            f.sql(),
            newest - 1
        ),
    };
    let from: Option<i64> = db
        .query_opt(&sql, &f.bind(), |r| r.get(0))
        .map_err(|e| query_error(e, query))?;
    if let Some(from) = from {
        match db.engine() {
            Engine::Sqlite => f.add("f.rowid >= ?", from),
            Engine::Postgres => f.add("c.rowid >= ?", from),
        };
    }
    Ok(())
}

/// A semantic or hybrid page: the keyword part (hybrid only) and the semantic part, each cut to
/// the filters and to `DEPTH`, fused by reciprocal rank. Pages reach `DEPTH` deep; `total` is
/// not counted.
#[allow(clippy::too_many_arguments)]
fn fused_search(
    db: Db<'_>,
    f: &Filter,
    base: &Filter,
    query: &str,
    shape: Shape,
    mode: SearchMode,
    near: &[crate::store::semantic::Near],
    explain: bool,
) -> Result<(Vec<SearchHit>, Pagination)> {
    let keyword: Vec<SearchHit> = if mode == SearchMode::Hybrid {
        let depth = Shape {
            limit: DEPTH as i64,
            offset: 0,
            count_total: false,
            ..shape
        };
        run_search(db, f, query, depth)?.0
    } else {
        Vec::new()
    };
    let semantic: Vec<(String, crate::store::semantic::Near)> = crate::search_text::filter_near(
        db,
        &super::search_source::EMBED_SOURCE,
        "c.id",
        base,
        near,
        DEPTH,
    )?;
    let ranked: Vec<(String, f64)> = keyword.iter().map(|h| (h.id.clone(), h.score)).collect();
    let fused = fuse(&ranked, &semantic);
    let parts = if mode == SearchMode::Hybrid { 2 } else { 1 };
    let total = fused.len();
    let mut by_id: std::collections::HashMap<String, SearchHit> =
        keyword.into_iter().map(|h| (h.id.clone(), h)).collect();
    let mut items = Vec::new();
    for hit in fused
        .iter()
        .skip(shape.offset as usize)
        .take(shape.limit as usize)
    {
        let mut h = match by_id.remove(&hit.key) {
            Some(h) => h,
            None => {
                let near = hit.semantic.expect("a hit of one part at least").1;
                semantic_hit(db, near, shape.snippet_chars)?
            }
        };
        h.score = hit.score(parts);
        if explain {
            h.explain = Some(hit.explain());
        }
        items.push(h);
    }
    let pagination = Pagination {
        limit: shape.limit,
        offset: shape.offset,
        has_more: ((shape.offset + shape.limit) as usize) < total,
        total: None,
    };
    Ok((items, pagination))
}

/// A capsule found by meaning alone: its passage nearest the query as the snippet.
fn semantic_hit(
    db: Db<'_>,
    near: crate::store::semantic::Near,
    snippet_chars: usize,
) -> Result<SearchHit> {
    let hit = db.query_one(
        "SELECT id, workspace_raw, name_raw, title, updated_at, deleted_at, task,
                    capsule_text
             FROM capsules WHERE rowid = ?1",
        crate::db_params![near.doc],
        |r| {
            let id: String = r.get(0)?;
            let workspace: String = r.get(1)?;
            let name: Option<String> = r.get(2)?;
            let text: String = r.get(7)?;
            Ok(SearchHit {
                fetch_key: query::fetch_key(&id, &workspace, name.as_deref()),
                title: r.get(3)?,
                updated_at: r.get(4)?,
                deleted_at: r.get(5)?,
                snippet: render_snippet(
                    &crate::store::semantic::passage(&text, near.chunk),
                    snippet_chars,
                ),
                score: 0.0,
                task: r.get(6)?,
                explain: None,
                id,
                workspace,
                name,
            })
        },
    )?;
    Ok(hit)
}

fn run_search(
    db: Db<'_>,
    f: &Filter,
    query: &str,
    shape: Shape,
) -> Result<(Vec<SearchHit>, Pagination)> {
    let Shape { limit, offset, .. } = shape;
    // Without a count, one hit more than the page tells whether there is more.
    let read = if shape.count_total { limit } else { limit + 1 };
    let n = f.params().len();
    // Two steps, so the costly parts run only where they must:
    // - `hits` ranks the matches and keeps one page of them. `CROSS JOIN` makes SQLite drive
    //   the join from the full-text match (otherwise it may walk every capsule of the workspace
    //   and run the match once per capsule). `c.seq DESC` makes equal ranks come back newest
    //   first, the same on every call.
    // - snippet() runs only for that page: in the ranking query SQLite would compute it for
    //   every match before sorting. `?1` is the MATCH text, the filter's first parameter.
    let sql = match db.engine() {
        Engine::Sqlite => format!(
            "WITH hits AS MATERIALIZED (
             SELECT f.rowid AS rid, bm25(capsules_fts, 5.0, 1.0) AS rank, c.seq AS seq
             FROM fts.capsules_fts AS f CROSS JOIN capsules AS c ON c.rowid = f.rowid
             {}
             ORDER BY rank, c.seq DESC
             LIMIT ?{} OFFSET ?{})
         SELECT c.id, c.workspace_raw, c.name_raw, c.title, c.updated_at, c.deleted_at,
                (SELECT snippet(capsules_fts, -1, char(57344), char(57345), '{ELLIPSIS}', {})
                 FROM fts.capsules_fts WHERE capsules_fts MATCH ?1 AND rowid = hits.rid),
                hits.rank, c.task
         FROM hits CROSS JOIN capsules AS c ON c.rowid = hits.rid
         ORDER BY hits.rank, hits.seq DESC",
            f.sql(),
            n + 1,
            n + 2,
            shape.snippet_tokens
        ),
        // The same two steps; the snippet is the matching column (the text, or the title when
        // only it matches) with every match marked, which `render_snippet` cuts to a window
        // around the first.
        Engine::Postgres => format!(
            "WITH hits AS MATERIALIZED (
                 SELECT c.rowid AS rid, {rank} AS rank, c.seq AS seq
                 FROM capsules AS c
                 {}
                 ORDER BY rank, c.seq DESC
                 LIMIT ?{} OFFSET ?{})
             SELECT c.id, c.workspace_raw, c.name_raw, c.title, c.updated_at, c.deleted_at,
                    CASE WHEN c.title IS NOT NULL
                              AND NOT ts_filter(c.{words}, '{{b}}') @@ {q}
                         THEN {title} ELSE {text} END,
                    hits.rank, c.task
             FROM hits JOIN capsules AS c ON c.rowid = hits.rid
             ORDER BY hits.rank, hits.seq DESC",
            f.sql(),
            n + 1,
            n + 2,
            rank = pg::rank("c", 1, &[5.0, 1.0]),
            words = pg::WORDS,
            q = pg::query(1),
            title = pg::headline("c.title", 1),
            text = pg::headline("c.capsule_text", 1),
        ),
    };
    let mut params: Vec<Param<'_>> = f.bind();
    params.push(Param::Int(read));
    params.push(Param::Int(offset));
    let items = db
        .query_map(&sql, &params, |r| {
            let id: String = r.get(0)?;
            let workspace: String = r.get(1)?;
            let name: Option<String> = r.get(2)?;
            let raw: Option<String> = r.get(6)?;
            Ok(SearchHit {
                fetch_key: query::fetch_key(&id, &workspace, name.as_deref()),
                title: r.get(3)?,
                updated_at: r.get(4)?,
                deleted_at: r.get(5)?,
                snippet: render_snippet(raw.as_deref().unwrap_or(""), shape.snippet_chars),
                score: bm25_score(r.get(7)?),
                task: r.get(8)?,
                explain: None,
                id,
                workspace,
                name,
            })
        })
        .map_err(|e| query_error(e, query))?;
    let mut items = items;
    if !shape.count_total {
        let has_more = items.len() as i64 > limit;
        items.truncate(limit as usize);
        let pagination = Pagination {
            limit,
            offset,
            has_more,
            total: None,
        };
        return Ok((items, pagination));
    }
    let total = if offset == 0 && (items.len() as i64) < limit {
        items.len() as i64
    } else {
        let count = match db.engine() {
            Engine::Sqlite => format!(
                "SELECT count(*) FROM fts.capsules_fts AS f CROSS JOIN capsules AS c \
                 ON c.rowid = f.rowid {}",
                f.sql()
            ),
            Engine::Postgres => format!("SELECT count(*) FROM capsules AS c {}", f.sql()),
        };
        db.query_one(&count, &f.bind(), |r| r.get(0))
            .map_err(|e| query_error(e, query))?
    };
    let pagination = page::pagination(limit, offset, items.len(), total);
    Ok((items, pagination))
}
