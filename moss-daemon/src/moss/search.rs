//! `moss_search`: one ranked list over every family.
//!
//! Each family ranks its own hits with its own search (capsules, reasoning entries and
//! memories by their full-text index and BM25; plans, tasks and steps by the query words they
//! hold, among the candidates of their full-text index), among at most its [`RANKED_MATCHES`]
//! newest matches: a word found in every text
//! costs as much as one found in a thousand. The lists are fused by **reciprocal rank fusion**: a hit at
//! rank `r` (1-based) of its family scores `(K + 1) / (K + r)` with `K = 60`, so every family's
//! best hit scores 1 and a hit's score falls slowly with its rank; ties go to the family
//! listed first (capsule, reasoning, tasks, memory), then to the earlier rank. Scores are in
//! 0..1, higher is better, and compare across families: they say how high the hit stands in
//! its own family's ranking, not how its BM25 compares with another index's, which would
//! not be comparable.

use std::sync::Arc;

use moss_client::moss::{Open, SearchHit, SearchPagination, SearchRequest, SearchResponse};
use moss_client::reasoning::Budget;

use crate::app::App;
use crate::budget::{self, Caps, Fit, blank_budget};
use crate::error::{Error, Result};
use crate::memory::interface as memories;
use crate::search_text::{
    FamilyHit, MAX_QUERY_CHARS, RANKED_MATCHES, check_query_start, query_words,
};
use crate::store::Source;
use crate::store::engine::Db;
use crate::store::semantic::{EmbedSource, Near};
use crate::{reasoning::interface as reasoning, tasks::interface as tasks};
use moss_client::search::SearchMode;

/// The fusion constant: how slowly a score falls with rank.
const K: f64 = 60.0;
/// Most hits one family contributes: the deepest page a cursor can reach.
const DEPTH: i64 = 100;
/// The families `families` may name, in tie-break order.
pub const FAMILIES: [&str; 4] = ["capsule", "reasoning", "tasks", "memory"];

impl Fit for SearchResponse {
    fn units(&self) -> usize {
        self.items.len()
    }
    fn keep(&mut self, n: usize) {
        self.items.truncate(n);
    }
    fn cut(&mut self, chars: usize) -> bool {
        self.items
            .first_mut()
            .is_some_and(|h| budget::cut_text(&mut h.snippet, chars))
    }
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated;
        self.budget = budget;
    }
}

/// The families a request names, checked.
fn families(req: &SearchRequest) -> Result<Vec<&'static str>> {
    let Some(list) = &req.families else {
        return Ok(FAMILIES.to_vec());
    };
    let names = list.to_vec();
    let mut chosen = Vec::new();
    for name in &names {
        match FAMILIES.iter().find(|f| **f == name) {
            Some(f) => chosen.push(*f),
            None => {
                return Err(Error::invalid_field(
                    "families",
                    format!(
                        "{name:?} is not a family; families takes {}",
                        FAMILIES.join(", ")
                    ),
                ));
            }
        }
    }
    if chosen.is_empty() {
        return Err(Error::invalid_field(
            "families",
            format!("families names none; give some of {}", FAMILIES.join(", ")),
        ));
    }
    Ok(FAMILIES
        .into_iter()
        .filter(|f| chosen.contains(f))
        .collect())
}

/// `moss_search`.
pub async fn search(app: &App, req: SearchRequest) -> Result<SearchResponse> {
    let caps = Caps::new(app.config.output_max_chars, req.max_chars, None, None)?;
    let families = families(&req)?;
    let limit = crate::page::limit("limit", req.limit, 20, 100)?;
    let offset: i64 = match req.cursor.as_deref() {
        None | Some("") => 0,
        Some(c) => c.parse().ok().filter(|o| *o >= 0).ok_or_else(|| {
            Error::invalid_field(
                "cursor",
                format!("cursor {c:?} is not one this search gave: pass pagination.next_cursor"),
            )
        })?,
    };
    let query = req.query.trim().to_string();
    // The text as asked: what is embedded, and what the capsule search escapes itself.
    let text = query.clone();
    let n = query.chars().count();
    if n == 0 || n > MAX_QUERY_CHARS {
        return Err(Error::invalid_field(
            "query",
            format!("query must be 1 to {MAX_QUERY_CHARS} characters"),
        ));
    }
    let query = if req.safe_query.unwrap_or(false) {
        crate::search_text::safe_query(&query)
            .ok_or_else(|| Error::invalid_field("query", "query has no word to search for"))?
    } else {
        check_query_start(&query)?;
        query
    };
    let ws = match req.workspace.as_deref() {
        Some(w) => Some(crate::names::workspace(Some(w))?.norm),
        None => None,
    };
    // One hit more than the page needs from each family: a family with more hits than the
    // page shows then leaves more in the fused list, and so a cursor to them.
    let depth = (offset + limit + 1).min(DEPTH);
    let mode = app.store.semantic.mode(req.mode)?;
    let explain = req.explain.unwrap_or(false);
    // By meaning: the query's vector, embedded once for every family by the first that asks;
    // each family reads its words meanwhile.
    let embedded: tokio::sync::OnceCell<Option<Arc<Vec<f32>>>> = tokio::sync::OnceCell::new();
    let vector = || async {
        if mode == SearchMode::Keyword {
            return Ok(None);
        }
        embedded
            .get_or_try_init(|| app.store.semantic.query_vector(&req.query))
            .await
            .cloned()
    };
    let keyword = mode != SearchMode::Semantic;
    // How many hits a family's words give: by words alone, those the page can reach (each one's
    // snippet and row read costs); with meaning, the deeper list fused within the family.
    let words_depth = if mode == SearchMode::Keyword {
        depth
    } else {
        DEPTH
    };
    let spaces = ws.clone().map(|w| vec![w]);
    // Each family searches on a read connection of its own, all at once; their answers (and
    // a failure, the first family's first) are taken in the family order.
    let capsule_hits = async {
        if !families.contains(&"capsule") {
            return Ok(None);
        }
        // The capsule search embeds the query itself: once it is embedded, from the cache.
        if mode != SearchMode::Keyword && vector().await?.is_none() {
            return Ok(None);
        }
        let req = moss_client::capsule::SearchRequest {
            // The words as asked (not escaped here): the capsule search embeds this text,
            // the same as the other families' vector, found in the cache.
            query: text.clone(),
            safe_query: req.safe_query,
            workspace: ws.clone(),
            limit: Some(if mode == SearchMode::Keyword {
                depth
            } else {
                DEPTH
            }),
            count_total: Some(false),
            mode: Some(mode),
            explain: Some(true),
            ..Default::default()
        };
        let page = app.capsules.search_newest(req, RANKED_MATCHES).await?;
        let hits = page
            .items
            .into_iter()
            .map(|h| FamilyHit {
                title: h
                    .title
                    .clone()
                    .or_else(|| h.name.clone())
                    .unwrap_or_else(|| h.id.clone()),
                snippet: h.snippet,
                open: ("capsule_fetch", serde_json::json!({ "id": h.id })),
                kind: "capsule".into(),
                workspace: h.workspace,
                id: h.id,
                explain: h.explain,
            })
            .collect();
        Ok(Some(hits))
    };
    let reasoning_hits = async {
        if !families.contains(&"reasoning") {
            return Ok(None);
        }
        let (q, w) = (query.clone(), ws.clone());
        let words = keyword
            .then_some(move |db: Db<'_>| reasoning::search_hits(db, &q, w.as_deref(), words_depth));
        let sources = (&reasoning::SEARCH_SOURCE, &reasoning::EMBED_SOURCE);
        family_hits(
            app,
            sources,
            words,
            vector(),
            &spaces,
            reasoning::near_hits,
            depth,
        )
        .await
    };
    let tasks_hits = async {
        if !families.contains(&"tasks") {
            return Ok(None);
        }
        let (words, w) = (query_words(&query), ws.clone());
        // Fused with meaning, the words keep the other families' rule, every word matching: a
        // task that shares only "the" or "our" with the question would otherwise outrank every
        // answer found by meaning.
        let every_word = mode == SearchMode::Hybrid;
        let words = keyword.then_some(move |db: Db<'_>| {
            tasks::search_hits(db, &words, w.as_deref(), depth.max(DEPTH), every_word)
        });
        let sources = (&tasks::SEARCH_SOURCE, &tasks::EMBED_SOURCE);
        family_hits(
            app,
            sources,
            words,
            vector(),
            &spaces,
            tasks::near_hits,
            depth,
        )
        .await
    };
    let memory_hits = async {
        if !families.contains(&"memory") {
            return Ok(None);
        }
        let (q, w) = (query.clone(), ws.clone());
        let words = keyword
            .then_some(move |db: Db<'_>| memories::search_hits(db, &q, w.as_deref(), words_depth));
        let sources = (&memories::SEARCH_SOURCE, &memories::EMBED_SOURCE);
        family_hits(
            app,
            sources,
            words,
            vector(),
            &spaces,
            memories::near_hits,
            depth,
        )
        .await
    };
    let (capsule, reasoning, tasks, memory): (Found, Found, Found, Found) =
        tokio::join!(capsule_hits, reasoning_hits, tasks_hits, memory_hits);
    if mode != SearchMode::Keyword && embedded.get().cloned().flatten().is_none() {
        // The model was not ready in time (it is still loading).
        if mode == SearchMode::Semantic {
            return Err(crate::store::semantic::not_ready());
        }
        let req = SearchRequest {
            mode: Some(SearchMode::Keyword),
            ..req
        };
        return Box::pin(search(app, req)).await;
    }
    let mut lists: Vec<(&'static str, Vec<FamilyHit>)> = Vec::new();
    for (family, found) in [
        ("capsule", capsule),
        ("reasoning", reasoning),
        ("tasks", tasks),
        ("memory", memory),
    ] {
        if let Some(hits) = found? {
            lists.push((family, hits));
        }
    }
    let mut fused = if mode == SearchMode::Keyword {
        fuse(lists)
    } else {
        fuse_by_meaning(lists, mode)
    };
    if !explain {
        for h in &mut fused {
            h.explain = None;
        }
    }
    let total = fused.len() as i64;
    let items: Vec<SearchHit> = fused
        .into_iter()
        .skip(offset as usize)
        .take(limit as usize)
        .collect();
    let next = offset + items.len() as i64;
    let next_cursor = (next < total && next < DEPTH).then(|| next.to_string());
    let hint = if total == 0 {
        match ws.as_deref() {
            Some(ws) => super::empty_hint(app, ws).await?,
            None => None,
        }
    } else {
        None
    };
    let resp = SearchResponse {
        items,
        pagination: SearchPagination { next_cursor },
        mode,
        truncated: false,
        budget: blank_budget(),
        hint,
    };
    budget::fit(resp, &caps)
}

/// A family's reading of the items a scan found nearest in meaning, as hits.
type NearHits = fn(Db<'_>, &[Near]) -> Result<Vec<(FamilyHit, Near)>>;

/// A family's hits: its words' hits (`words`, read once the family's index holds every write
/// before the search, and meanwhile the query is embedded) fused within the family with its
/// items nearest the query's `vector` in meaning; at most `depth`.
async fn family_hits(
    app: &App,
    (index, embedded): (&'static Source, &'static EmbedSource),
    words: Option<impl FnOnce(Db<'_>) -> Result<Vec<FamilyHit>> + Send + 'static>,
    vector: impl Future<Output = Result<Option<Arc<Vec<f32>>>>>,
    spaces: &Option<Vec<String>>,
    near_hits: NearHits,
    depth: i64,
) -> Found {
    let words = async {
        let Some(words) = words else {
            return Ok(Vec::new());
        };
        app.store.await_index(index).await;
        app.store.readers.run_db(words).await
    };
    let near = async { semantic_part(app, embedded, &vector.await?, spaces).await };
    let (words, near) = tokio::try_join!(words, near)?;
    let hits = app
        .store
        .readers
        .run_db(move |db| Ok(within_family(words, near_hits(db, &near)?, depth)))
        .await?;
    Ok(Some(hits))
}

/// The items of `source` nearest the query in meaning (none when the search ranks by words).
async fn semantic_part(
    app: &App,
    source: &'static crate::store::semantic::EmbedSource,
    vector: &Option<std::sync::Arc<Vec<f32>>>,
    spaces: &Option<Vec<String>>,
) -> Result<Vec<crate::store::semantic::Near>> {
    match vector {
        Some(v) => {
            app.store
                .semantic
                .nearest(source, v.clone(), spaces.clone(), DEPTH as usize)
                .await
        }
        None => Ok(Vec::new()),
    }
}

/// A family's keyword hits and semantic hits (each best first) as one ranking, by reciprocal
/// rank fusion within the family, each hit carrying its explanation; at most `depth`.
///
/// Hits are told apart by workspace and id: a plan's or task's id is unique only within its
/// workspace (`TASK-004` may be in each).
fn within_family(
    words: Vec<FamilyHit>,
    meaning: Vec<(FamilyHit, crate::store::semantic::Near)>,
    depth: i64,
) -> Vec<FamilyHit> {
    let key = |h: &FamilyHit| (h.workspace.clone(), h.id.clone());
    let keyed_words: Vec<((String, String), f64)> =
        words.iter().map(|h| (key(h), f64::NAN)).collect();
    let keyed_meaning: Vec<((String, String), crate::store::semantic::Near)> =
        meaning.iter().map(|(h, n)| (key(h), *n)).collect();
    let fused = crate::store::semantic::fusion::fuse(&keyed_words, &keyed_meaning);
    // A hit both parts found keeps its keyword snippet, which marks the words.
    let mut by_id: std::collections::HashMap<(String, String), FamilyHit> =
        words.into_iter().map(|h| (key(&h), h)).collect();
    for (h, _) in meaning {
        by_id.entry(key(&h)).or_insert(h);
    }
    fused
        .into_iter()
        .take(depth as usize)
        .filter_map(|f| {
            let mut h = by_id.remove(&f.key)?;
            h.explain = Some(f.explain());
            Some(h)
        })
        .collect()
}

/// The fusion of each family's hits when the search ranks by meaning too.
///
/// Keyword ranks do not compare across families (each index has its own BM25), but
/// similarities do: one model embedded the query and every item. So a hit gets
/// `1 / (K + r)` from its keyword rank `r` within its family, plus `1 / (K + s)` from its rank
/// `s` among the semantic hits of every family, ordered by similarity. A family's best hit by
/// meaning so no longer ties with another family's answer. Ties go to a hit the words matched,
/// then to the more similar, then to the family listed first. Scores are the sum scaled so a
/// hit first in both parts scores 1.
fn fuse_by_meaning(lists: Vec<(&'static str, Vec<FamilyHit>)>, mode: SearchMode) -> Vec<SearchHit> {
    use moss_client::search::{HitExplain, KeywordPart, SemanticPart};
    let mut all: Vec<(usize, usize, &'static str, FamilyHit)> = Vec::new();
    for (order, (family, hits)) in lists.into_iter().enumerate() {
        for (i, h) in hits.into_iter().enumerate() {
            all.push((order, i, family, h));
        }
    }
    let similarity = |h: &FamilyHit| {
        h.explain
            .as_ref()
            .and_then(|e| e.semantic.as_ref())
            .map(|s| s.similarity)
    };
    // Global semantic ranks, by similarity.
    let mut by_meaning: Vec<usize> = (0..all.len())
        .filter(|i| similarity(&all[*i].3).is_some())
        .collect();
    by_meaning.sort_by(|a, b| {
        similarity(&all[*b].3)
            .unwrap_or(0.0)
            .total_cmp(&similarity(&all[*a].3).unwrap_or(0.0))
            .then(all[*a].0.cmp(&all[*b].0))
    });
    let mut global = vec![None; all.len()];
    for (rank, i) in by_meaning.into_iter().enumerate() {
        global[i] = Some(rank + 1);
    }
    let best = if mode == SearchMode::Hybrid { 2.0 } else { 1.0 } / (K + 1.0);
    let mut scored: Vec<(f64, bool, f64, usize, usize, SearchHit)> = all
        .into_iter()
        .zip(global)
        .map(|((order, i, family, h), g)| {
            let keyword_rank = h
                .explain
                .as_ref()
                .and_then(|e| e.keyword.as_ref())
                .map(|k| k.rank);
            let semantic = h.explain.as_ref().and_then(|e| e.semantic.clone());
            let sim = semantic.as_ref().map_or(-1.0, |s| s.similarity);
            let fused = keyword_rank.map_or(0.0, |r| 1.0 / (K + r as f64))
                + g.map_or(0.0, |r| 1.0 / (K + r as f64));
            let explain = HitExplain {
                keyword: keyword_rank.map(|rank| KeywordPart { rank, score: None }),
                semantic: semantic.zip(g).map(|(s, g)| SemanticPart {
                    rank: g as i64,
                    ..s
                }),
                fused: (fused * 1_000_000.0).round() / 1_000_000.0,
            };
            let hit = SearchHit {
                family: family.into(),
                kind: h.kind,
                id: h.id,
                workspace: h.workspace,
                title: h.title,
                snippet: h.snippet,
                score: ((fused / best).min(1.0) * 10_000.0).round() / 10_000.0,
                open: Open {
                    tool: h.open.0.into(),
                    arguments: h.open.1,
                },
                explain: Some(explain),
            };
            (fused, keyword_rank.is_some(), sim, order, i, hit)
        })
        .collect();
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then(b.2.total_cmp(&a.2))
            .then(a.3.cmp(&b.3))
            .then(a.4.cmp(&b.4))
    });
    scored.into_iter().map(|(.., h)| h).collect()
}

/// One family's hits, or `None` when the request leaves the family out.
type Found = Result<Option<Vec<FamilyHit>>>;

/// Reciprocal rank fusion of each family's ranked hits (see the module doc).
pub fn fuse(lists: Vec<(&'static str, Vec<FamilyHit>)>) -> Vec<SearchHit> {
    let mut all: Vec<(f64, usize, usize, SearchHit)> = Vec::new();
    for (order, (family, hits)) in lists.into_iter().enumerate() {
        for (i, h) in hits.into_iter().enumerate() {
            let rank = (i + 1) as f64;
            let score = (K + 1.0) / (K + rank);
            all.push((
                score,
                order,
                i,
                SearchHit {
                    family: family.into(),
                    kind: h.kind,
                    id: h.id,
                    workspace: h.workspace,
                    title: h.title,
                    snippet: h.snippet,
                    score: (score * 10_000.0).round() / 10_000.0,
                    open: Open {
                        tool: h.open.0.into(),
                        arguments: h.open.1,
                    },
                    explain: h.explain,
                },
            ));
        }
    }
    all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    all.into_iter().map(|(_, _, _, h)| h).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn hit(id: &str) -> FamilyHit {
        FamilyHit {
            workspace: "w".into(),
            id: id.into(),
            kind: "k".into(),
            title: id.into(),
            snippet: String::new(),
            open: ("t", Value::Null),
            explain: None,
        }
    }

    #[test]
    fn within_a_family_the_same_id_in_two_workspaces_is_two_hits() {
        let mut other = hit("TASK-004");
        other.workspace = "v".into();
        let near = crate::store::semantic::Near {
            doc: 1,
            chunk: 0,
            similarity: 0.5,
        };
        let fused = within_family(
            vec![hit("TASK-004"), other.clone()],
            vec![(other, near)],
            10,
        );
        let found: Vec<(&str, &str)> = fused
            .iter()
            .map(|h| (h.workspace.as_str(), h.id.as_str()))
            .collect();
        assert_eq!(found, [("v", "TASK-004"), ("w", "TASK-004")]);
        let e = fused[0].explain.as_ref().unwrap();
        assert_eq!(e.keyword.as_ref().unwrap().rank, 2);
        assert_eq!(e.semantic.as_ref().unwrap().rank, 1);
    }

    #[test]
    fn fusion_interleaves_by_rank_and_scores_in_0_1() {
        let fused = fuse(vec![
            ("capsule", vec![hit("c1"), hit("c2")]),
            ("memory", vec![hit("m1")]),
        ]);
        let ids: Vec<&str> = fused.iter().map(|h| h.id.as_str()).collect();
        assert_eq!(ids, ["c1", "m1", "c2"]);
        assert_eq!(fused[0].score, 1.0);
        assert!(fused.iter().all(|h| h.score > 0.0 && h.score <= 1.0));
        assert!(fused[2].score < fused[1].score);
    }
}
