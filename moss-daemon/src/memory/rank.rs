//! Recall: which memories match a query, and in what order.
//!
//! **Matching.** A query's words (stop words such as "about" or "the" dropped) are looked up two
//! ways: in the full-text index over content, contexts and slot (BM25: the best 300 among the
//! newest [`crate::search_text::RANKED_MATCHES`] memories the words match, so a word most
//! memories hold costs no more than a rare one), and as contexts: a word
//! equal to a memory's context matches it exactly (`auth.py`); one whose file name is a
//! memory's context, or the reverse, matches by basename; a path matches memories attached to
//! its parent directories, less the further up they are. `context` narrows to that context's
//! matches (exact, basename, parent directories); with a query as well, those memories are
//! ranked by the query's full-text match, so one holding its words comes first. `slot` narrows
//! to one slot (alone, it lists the slot).
//!
//! **Score** = relevance × weight × recency × specificity, each explained by `explain: true`,
//! each in 0..1, so the score is in 0..1 (higher better):
//!
//! - relevance = 1 − (1 − context) × (1 − text), where context is 1 (exact), 0.9 (basename) or
//!   0.75 − 0.1 per level above the first (parent directory, at least 0.3), divided by √(the
//!   query's words) since a context matches one word of it (an explicit `context` counts as one
//!   word more: alone it scores in full, with a query it shares the question), and text is the
//!   share of the query's words the memory holds (a word counts when the memory holds it as
//!   written or, through the index's stemming, in another form: `merging` in "merged") × (0.5 +
//!   0.5 × its BM25 relative to the best match's). A slot-only recall has relevance 1.
//! - weight = (0.5 + w / (w + 1)) / 1.5: 2/3 at the default weight 1, saturating towards 1.
//! - recency = 0.85 + 0.15 × 0.5^(age / half-life), age from the later of the latest store
//!   (`updated_at`: storing the same knowledge again counts) and the last recall (`recalled_at`),
//!   half-life the config's `memory.recency_half_life_days` (7).
//! - specificity = 1 (exact), 0.95 (basename), 0.85 (parent), 0.8 (text only; 1 for a slot
//!   recall), divided by 1 + 0.15 × (contexts − 1): a memory on many contexts is broad.
//!
//! Memories whose relevance is under 0.2, or whose score is under `min_score` (default 1/15),
//! are dropped: no filler. Ties break by weight, then newest write, then id.
//!
//! **The query** is always plain words (a recall never fails on FTS5 syntax): each word, split
//! at punctuation, is one quoted term of an OR query, so `safe_query` changes nothing here.

use std::collections::{HashMap, HashSet};

use moss_client::memory::{
    Memory, MemoryRecallRequest, MemoryRecallResponse, Recalled, ScoreParts,
};

use super::{GLOBAL, MEMORY_COLUMNS, memory_from_row_at, norm_context, session, slot, workspace};
use crate::db_params;
use crate::error::{Error, Result};
use crate::store::engine::{Db, Engine};

/// Least relevance a recalled memory needs.
pub const MIN_RELEVANCE: f64 = 0.2;
/// Least relevance a memory needs to be removed by a query forget.
pub const FORGET_MIN_RELEVANCE: f64 = 0.8;
/// What the weight part of a score tends to as the weight grows: the parts are divided by it,
/// so the score stays in 0..1.
const WEIGHT_PART_MAX: f64 = 1.5;
/// `min_score` when none is given.
pub const MIN_SCORE: f64 = 0.1 / WEIGHT_PART_MAX;
/// The similarity at which the semantic part of relevance is full: sentence embeddings of a
/// question and the text that answers it rarely come closer than this.
const SEMANTIC_FULL: f64 = 0.6;

/// Candidates taken from the full-text index: the best by BM25, each then scored in full.
const FTS_CANDIDATES: i64 = 300;
/// Candidates of a slot-only recall (by weight).
const SLOT_CANDIDATES: i64 = 500;

/// Words that carry no meaning in a recall query.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "by", "can", "did", "do",
    "does", "for", "from", "how", "i", "in", "is", "it", "its", "me", "my", "of", "on", "or",
    "our", "should", "so", "that", "the", "there", "this", "to", "was", "we", "were", "what",
    "when", "where", "which", "who", "why", "with", "you", "your",
];

/// A parsed recall (or forget) query.
#[derive(Debug, Clone)]
pub struct Query {
    pub workspaces: Vec<String>,
    pub session: String,
    /// The user's words, lowercase, stop words dropped (also tried as contexts).
    pub phrase_contexts: Vec<String>,
    /// Full-text terms: the words split as the index splits them.
    pub terms: Vec<String>,
    pub slot: Option<String>,
    /// An explicit context to narrow to.
    pub context: Option<String>,
    pub limit: usize,
    pub min_score: f64,
    pub min_relevance: f64,
    pub explain: bool,
    pub half_life_days: f64,
    /// The memories nearest the query in meaning (a semantic or hybrid recall), best first.
    pub semantic: Vec<crate::store::semantic::Near>,
    /// How the recall ranks: with `semantic`, the text part is left out.
    pub mode: moss_client::search::SearchMode,
}

impl Query {
    pub fn from_recall(req: &MemoryRecallRequest, half_life_days: f64) -> Result<Query> {
        let ws = workspace(req.workspace.as_deref())?;
        let mut workspaces = vec![ws.clone()];
        if req.include_global.unwrap_or(true) && ws != GLOBAL {
            workspaces.push(GLOBAL.to_string());
        }
        let text = req
            .query
            .as_deref()
            .map(str::trim)
            .filter(|q| !q.is_empty());
        if let Some(t) = text {
            crate::bounds::check_len("query", t, 1000)?;
        }
        let slot = slot(req.slot.as_deref())?;
        let context = req
            .context
            .as_deref()
            .map(norm_context)
            .filter(|c| !c.is_empty());
        if text.is_none() && slot.is_none() && context.is_none() {
            return Err(Error::invalid_field(
                "query",
                "memory_recall needs query, slot or context (e.g. {\"query\": \"about auth.py\"} or {\"slot\": \"preferences\"})",
            ));
        }
        let (phrase_contexts, terms) = words(text.unwrap_or(""));
        let limit = match req.limit {
            None => 10,
            Some(v) if (1..=100).contains(&v) => v as usize,
            Some(v) => {
                return Err(Error::invalid_field(
                    "limit",
                    format!("limit must be between 1 and 100, got {v}"),
                ));
            }
        };
        let min_score = match req.min_score {
            None => MIN_SCORE,
            Some(v) if (0.0..=1.0).contains(&v) => v,
            Some(v) => {
                return Err(Error::invalid_field(
                    "min_score",
                    format!("min_score must be between 0 and 1 (scores are in 0..1), got {v}"),
                ));
            }
        };
        Ok(Query {
            workspaces,
            session: session(req.session.as_deref())?.unwrap_or_default(),
            phrase_contexts,
            terms,
            slot,
            context,
            limit,
            min_score,
            min_relevance: MIN_RELEVANCE,
            explain: req.explain.unwrap_or(false),
            half_life_days,
            semantic: Vec::new(),
            mode: moss_client::search::SearchMode::Keyword,
        })
    }
}

/// The query's words (tried as contexts) and its full-text terms.
pub fn words(text: &str) -> (Vec<String>, Vec<String>) {
    let mut phrases: Vec<String> = Vec::new();
    let mut terms: Vec<String> = Vec::new();
    for raw in text.split_whitespace() {
        let w = raw
            .trim_matches(|c: char| {
                matches!(
                    c,
                    ',' | ';'
                        | ':'
                        | '!'
                        | '?'
                        | '('
                        | ')'
                        | '['
                        | ']'
                        | '{'
                        | '}'
                        | '"'
                        | '\''
                        | '`'
                )
            })
            .trim_end_matches('.')
            .to_lowercase();
        if w.is_empty() || STOP_WORDS.contains(&w.as_str()) {
            continue;
        }
        let w = norm_context(&w);
        if !phrases.contains(&w) {
            phrases.push(w.clone());
        }
        for t in w.split(|c: char| !c.is_alphanumeric()) {
            if t.chars().count() >= 2 && !STOP_WORDS.contains(&t) && !terms.iter().any(|x| x == t) {
                terms.push(t.to_string());
            }
        }
    }
    (phrases, terms)
}

/// How a candidate matched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ContextMatch {
    Exact,
    Basename,
    Parent(u32),
    None,
}

impl ContextMatch {
    fn score(self) -> f64 {
        match self {
            ContextMatch::Exact => 1.0,
            ContextMatch::Basename => 0.9,
            ContextMatch::Parent(levels) => {
                (0.75 - 0.1 * f64::from(levels.saturating_sub(1))).max(0.3)
            }
            ContextMatch::None => 0.0,
        }
    }

    fn name(self) -> &'static str {
        match self {
            ContextMatch::Exact => "exact",
            ContextMatch::Basename => "basename",
            ContextMatch::Parent(_) => "parent",
            ContextMatch::None => "none",
        }
    }

    fn specificity(self) -> f64 {
        match self {
            ContextMatch::Exact => 1.0,
            ContextMatch::Basename => 0.95,
            ContextMatch::Parent(_) => 0.85,
            ContextMatch::None => 0.8,
        }
    }

    /// The better of two matches.
    fn best(self, other: ContextMatch) -> ContextMatch {
        if other.score() > self.score() {
            other
        } else {
            self
        }
    }
}

/// A candidate with what the score is made of.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub rid: i64,
    pub memory: Memory,
    pub seq: i64,
    pub context_count: i64,
    /// BM25 (lower is better), when the full-text index matched it.
    pub bm25: Option<f64>,
    pub context_match: ContextMatch,
    /// Share of the query's words the memory holds.
    pub coverage: f64,
    /// Cosine similarity of its nearest passage to the query, when the semantic part found it.
    pub similarity: Option<f32>,
}

/// Every memory matching `q`, unscored.
pub fn candidates(db: Db<'_>, q: &Query) -> Result<Vec<Candidate>> {
    let found = word_matches(db, q)?;
    candidates_from(db, q, found)
}

/// What a query's words found, before its meaning: the memories its contexts, its full text
/// or its slot match, each read and measured against the words (its full-text rank, how well
/// its contexts match, the share of the words it holds). None of it depends on the query's
/// vector, so a recall reads it while the question is embedded.
#[derive(Debug, Default)]
pub struct WordMatches(Vec<Candidate>);

/// Each matching memory's full-text rank (BM25, when the full text ranked it) and how well its
/// contexts match.
#[derive(Default)]
struct Matches(HashMap<i64, (Option<f64>, ContextMatch)>);

impl Matches {
    fn add(&mut self, rid: i64, bm25: Option<f64>, m: ContextMatch) {
        let e = self.0.entry(rid).or_insert((None, ContextMatch::None));
        if bm25.is_some() {
            e.0 = bm25;
        }
        e.1 = e.1.best(m);
    }
}

/// Memories read per statement while loading candidates: the statement has this many
/// placeholders (a short list repeats its first id), so its text is one and it stays prepared.
const LOAD_CHUNK: usize = 64;

/// A memory's row as read for a candidate: its sequence, context count, session and memory.
type Row = (i64, i64, String, Memory);

/// The rows of memories `rids`, by row id, [`LOAD_CHUNK`] a statement: a PostgreSQL server is a
/// round trip away, and a recall may read hundreds of candidates.
fn load_rows(db: Db<'_>, rids: &[i64]) -> Result<HashMap<i64, Row>> {
    static LOAD: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let marks: Vec<String> = (1..=LOAD_CHUNK).map(|i| format!("?{i}")).collect();
        format!(
            "SELECT m.rid, m.seq, m.context_count, m.session, {MEMORY_COLUMNS}
             FROM memories m WHERE m.rid IN ({})",
            marks.join(", ")
        )
    });
    let mut out = HashMap::with_capacity(rids.len());
    for chunk in rids.chunks(LOAD_CHUNK) {
        let params: Vec<crate::store::engine::Param<'_>> = (0..LOAD_CHUNK)
            .map(|i| crate::store::engine::Param::Int(*chunk.get(i).unwrap_or(&chunk[0])))
            .collect();
        for (rid, row) in db.query_map(&LOAD, &params, |r| {
            Ok((
                r.get::<i64>(0)?,
                (
                    r.get::<i64>(1)?,
                    r.get::<i64>(2)?,
                    r.get::<String>(3)?,
                    memory_from_row_at(r, 4)?,
                ),
            ))
        })? {
            out.insert(rid, row);
        }
    }
    Ok(out)
}

/// A memory's row (from [`load_rows`]) as a candidate, `None` when it is gone or not the
/// query's to see (another session's, another slot's); `coverage` still to measure.
fn load_candidate(
    row: Option<Row>,
    q: &Query,
    rid: i64,
    bm25: Option<f64>,
    context_match: ContextMatch,
) -> Result<Option<Candidate>> {
    let Some((seq, context_count, sess, memory)) = row else {
        return Ok(None);
    };
    if (!sess.is_empty() && sess != q.session) || (q.slot.is_some() && memory.slot != q.slot) {
        return Ok(None);
    }
    Ok(Some(Candidate {
        rid,
        memory,
        seq,
        context_count,
        bm25,
        context_match,
        coverage: 0.0,
        similarity: None,
    }))
}

/// The memories a query's words match: by context (the query's context, else each of its
/// words) and by full text.
pub fn word_matches(db: Db<'_>, q: &Query) -> Result<WordMatches> {
    let ws1 = q.workspaces[0].as_str();
    let ws2 = q.workspaces.get(1).map_or(ws1, String::as_str);
    let mut found = Matches::default();
    let mut add = |rid: i64, bm25: Option<f64>, m: ContextMatch| found.add(rid, bm25, m);
    // Contexts: the explicit one, else every word of the query.
    let context_terms: Vec<String> = match &q.context {
        Some(c) => vec![c.clone()],
        None => q.phrase_contexts.clone(),
    };
    {
        let exact = |c: &str| {
            db.query_map(
                "SELECT rid FROM memory_contexts WHERE workspace IN (?1, ?2) AND context = ?3",
                db_params![ws1, ws2, c],
                |r| r.get::<i64>(0),
            )
        };
        let by_base_sql = match db.engine() {
            // Named: without statistics the planner would rather scan the workspace's rows
            // by the primary key.
            Engine::Sqlite => {
                "SELECT rid FROM memory_contexts INDEXED BY memory_contexts_basename
             WHERE workspace IN (?1, ?2) AND basename = ?3 AND context != ?3"
            }
            Engine::Postgres => {
                "SELECT rid FROM memory_contexts
             WHERE workspace IN (?1, ?2) AND basename = ?3 AND context != ?3"
            }
        };
        let by_base =
            |c: &str| db.query_map(by_base_sql, db_params![ws1, ws2, c], |r| r.get::<i64>(0));
        // (Never the empty context: that key holds the memories without one.)
        for t in context_terms.iter().filter(|t| !t.is_empty()) {
            for rid in exact(t)? {
                add(rid, None, ContextMatch::Exact);
            }
            if t.contains('/') {
                let base = super::basename(t);
                for rid in exact(base)? {
                    add(rid, None, ContextMatch::Basename);
                }
                let mut levels = 0;
                let mut dir = t.as_str();
                while let Some((parent, _)) = dir.rsplit_once('/') {
                    levels += 1;
                    if parent.is_empty() {
                        break;
                    }
                    for rid in exact(parent)? {
                        add(rid, None, ContextMatch::Parent(levels));
                    }
                    dir = parent;
                }
            } else {
                for rid in by_base(t)? {
                    add(rid, None, ContextMatch::Basename);
                }
            }
        }
    }
    // Full text over the workspaces (narrowed to a context, only the context's memories are
    // ranked by it: see `ranks_within`).
    let expr = super::full_text::terms_expression(&q.terms);
    let bound = |e: &str| crate::search_text::engine_query(db.engine(), e);
    let statements = super::full_text::statements(db.engine());
    if q.context.is_none() && !q.terms.is_empty() {
        let newest = crate::search_text::RANKED_MATCHES;
        let rows = db
            .query_map(
                &statements.ranked,
                db_params![&bound(&expr)?, ws1, ws2, FTS_CANDIDATES, newest - 1],
                |r| Ok((r.get::<i64>(0)?, r.get::<f64>(1)?)),
            )
            .map_err(|e| crate::search_text::query_error(e, &expr))?;
        for (rid, rank) in rows {
            add(rid, Some(rank), ContextMatch::None);
        }
    }
    // A slot alone lists the slot, heaviest first.
    let slot_only = q.slot.is_some() && q.context.is_none() && q.phrase_contexts.is_empty();
    if slot_only {
        for rid in db.query_map(
            "SELECT rid FROM memories WHERE workspace IN (?1, ?2) AND slot = ?3 ORDER BY weight DESC LIMIT ?4",
            db_params![ws1, ws2, q.slot.as_ref(), SLOT_CANDIDATES],
            |r| r.get::<i64>(0),
        )? {
            add(rid, None, ContextMatch::None);
        }
    }
    // Narrowed to a context, each of the context's memories gets the query's full-text rank,
    // looked up by rowid: none is missed however common the words are elsewhere.
    let ranks_within =
        (q.context.is_some() && !q.terms.is_empty()).then_some(statements.rank_of.as_str());
    // Whether a memory's row matches an expression (its words in other forms).
    let row_matches = statements.row_matches.as_str();
    // Without a context, the rows the full text ranked lie among the newest matches of the
    // query's words in the workspaces, a span of rowids holding at most `RANKED_MATCHES` of
    // them: an expression made of those words is read once over the span (its matches there),
    // not looked up once per row (a seek in its whole list of matches each time, for each
    // word of the question and each of up to `FTS_CANDIDATES` rows).
    let span = if q.context.is_none() {
        let ranked: Vec<i64> = found
            .0
            .iter()
            .filter(|(_, (bm25, _))| bm25.is_some())
            .map(|(rid, _)| *rid)
            .collect();
        ranked
            .iter()
            .min()
            .copied()
            .zip(ranked.iter().max().copied())
    } else {
        None
    };
    let span_matches = statements.span_matches.as_str();
    let mut matched_in_span: HashMap<String, HashSet<i64>> = HashMap::new();
    let rids: Vec<i64> = found.0.keys().copied().collect();
    let mut rows = load_rows(db, &rids)?;
    let mut out = Vec::with_capacity(found.0.len());
    for (rid, (bm25, context_match)) in found.0 {
        let Some(mut c) = load_candidate(rows.remove(&rid), q, rid, bm25, context_match)? else {
            continue;
        };
        let (rid, memory, mut bm25) = (c.rid, &c.memory, c.bm25);
        if let Some(sql) = ranks_within {
            bm25 = db
                .query_opt(sql, db_params![&bound(&expr)?, rid], |r| r.get::<f64>(0))
                .map_err(|e| crate::search_text::query_error(e, &expr))?;
        }
        let coverage = if bm25.is_some() {
            let mut matches = |e: &str| -> Result<bool> {
                if let Some((lo, hi)) = span {
                    if !matched_in_span.contains_key(e) {
                        let mut rows = HashSet::new();
                        db.query_each(span_matches, db_params![&bound(e)?, lo, hi], |r| {
                            rows.insert(r.get::<i64>(0)?);
                            Ok(true)
                        })?;
                        matched_in_span.insert(e.to_string(), rows);
                    }
                    return Ok(matched_in_span.get(e).is_some_and(|m| m.contains(&rid)));
                }
                Ok(db
                    .query_opt(row_matches, db_params![&bound(e)?, rid], |_| Ok(()))?
                    .is_some())
            };
            coverage(memory, &q.phrase_contexts, Some(&mut matches))?
        } else {
            coverage(memory, &q.phrase_contexts, None)?
        };
        c.bm25 = bm25;
        c.coverage = coverage;
        out.push(c);
    }
    Ok(WordMatches(out))
}

/// The candidates: what the words matched (see [`word_matches`]) and the memories nearest the
/// query in meaning (narrowed to a context, only the context's memories are candidates, and
/// the meaning only adds to their relevance), each with its similarity.
pub fn candidates_from(
    db: Db<'_>,
    q: &Query,
    WordMatches(mut out): WordMatches,
) -> Result<Vec<Candidate>> {
    if q.context.is_none() {
        let read: HashSet<i64> = out.iter().map(|c| c.rid).collect();
        let near: Vec<i64> = q
            .semantic
            .iter()
            .map(|n| n.doc)
            .filter(|d| !read.contains(d))
            .collect();
        let mut rows = load_rows(db, &near)?;
        for n in q.semantic.iter().filter(|n| !read.contains(&n.doc)) {
            if let Some(mut c) =
                load_candidate(rows.remove(&n.doc), q, n.doc, None, ContextMatch::None)?
            {
                c.coverage = coverage(&c.memory, &q.phrase_contexts, None)?;
                out.push(c);
            }
        }
    }
    let similarity: HashMap<i64, f32> = q.semantic.iter().map(|n| (n.doc, n.similarity)).collect();
    for c in &mut out {
        c.similarity = similarity.get(&c.rid).copied();
    }
    Ok(out)
}

/// Whether a memory's row of the index matches an FTS5 expression.
type RowMatches<'a> = dyn FnMut(&str) -> Result<bool> + 'a;

/// Share of the query's words found in the memory's content, contexts or slot: as written
/// (case aside), or else, when `indexed` (the index matched the memory), in another form the
/// index stems alike: `indexed(expr)` says whether the memory's row matches the FTS5 `expr`.
fn coverage(m: &Memory, words: &[String], mut indexed: Option<&mut RowMatches<'_>>) -> Result<f64> {
    if words.is_empty() {
        return Ok(0.0);
    }
    let hay = format!(
        "{} {} {}",
        m.content.to_lowercase(),
        m.contexts.join(" ").to_lowercase(),
        m.slot.as_deref().unwrap_or("").to_lowercase()
    );
    let mut found = 0;
    for w in words {
        let parts: Vec<&str> = w
            .split(|c: char| !c.is_alphanumeric())
            .filter(|t| t.chars().count() >= 2)
            .collect();
        let written = hay.contains(w.as_str()) || parts.iter().all(|t| hay.contains(t));
        if written {
            found += 1;
        } else if let Some(matches) = indexed.as_mut()
            && !parts.is_empty()
        {
            // Every part, quoted (so a plain term), all required.
            let expr = parts
                .iter()
                .map(|t| format!("\"{}\"", t.replace('"', "")))
                .collect::<Vec<_>>()
                .join(" ");
            if matches(&expr)? {
                found += 1;
            }
        }
    }
    Ok(f64::from(found) / words.len() as f64)
}

/// Scores a candidate. `best_bm25` is the best (lowest) BM25 among the candidates.
pub fn score(c: &Candidate, q: &Query, best_bm25: Option<f64>, now: i64) -> ScoreParts {
    let slot_only = q.slot.is_some() && q.context.is_none() && q.phrase_contexts.is_empty();
    // A context matches one word of the query: in a longer question it says less. An explicit
    // context counts as one word more.
    let words = if q.context.is_some() {
        1 + q.phrase_contexts.len()
    } else {
        q.phrase_contexts.len().max(1)
    };
    let ctx = c.context_match.score() / (words as f64).sqrt();
    let text = match (c.bm25, best_bm25) {
        (Some(b), Some(best)) if best < 0.0 => {
            c.coverage * (0.5 + 0.5 * (b / best).clamp(0.0, 1.0))
        }
        (Some(_), _) => c.coverage * 0.5,
        (None, _) => 0.0,
    };
    let semantic = c.similarity.map(|s| {
        ((s - crate::store::semantic::SIMILARITY_FLOOR) as f64
            / (SEMANTIC_FULL - crate::store::semantic::SIMILARITY_FLOOR as f64))
            .clamp(0.0, 1.0)
    });
    let relevance = if slot_only {
        1.0
    } else {
        1.0 - (1.0 - ctx) * (1.0 - text) * (1.0 - semantic.unwrap_or(0.0))
    };
    let w = c.memory.weight;
    let weight = (0.5 + w / (w + 1.0)) / WEIGHT_PART_MAX;
    // The latest store (every store of the same knowledge sets updated_at) or recall.
    let last = c.memory.recalled_at.unwrap_or(0).max(c.memory.updated_at);
    let age_days = ((now - last).max(0) as f64) / 86_400.0;
    let recency = 0.85 + 0.15 * 0.5f64.powf(age_days / q.half_life_days.max(0.01));
    let base = if slot_only {
        1.0
    } else {
        c.context_match.specificity()
    };
    let specificity = base / (1.0 + 0.15 * (c.context_count.max(1) - 1) as f64);
    let score = relevance * weight * recency * specificity;
    ScoreParts {
        relevance,
        context_match: if slot_only {
            "slot".into()
        } else {
            c.context_match.name().into()
        },
        context: ctx,
        text,
        semantic: semantic.map(|s| (s * 10_000.0).round() / 10_000.0),
        similarity: c
            .similarity
            .map(|s| (s as f64 * 10_000.0).round() / 10_000.0),
        weight,
        recency,
        specificity,
        score,
    }
}

/// A recall's outcome before the limit: the kept candidates best first, how many matched at
/// all, and why nothing was kept when that is the case.
pub struct Ranked {
    pub scored: Vec<(Candidate, ScoreParts)>,
    pub matched: usize,
    pub reason: Option<String>,
}

/// Candidates scored, filtered and ordered best first.
pub fn ranked(db: Db<'_>, q: &Query, now: i64) -> Result<Ranked> {
    ranked_from(db, q, word_matches(db, q)?, now)
}

/// [`ranked`], given what the query's words matched.
fn ranked_from(db: Db<'_>, q: &Query, found: WordMatches, now: i64) -> Result<Ranked> {
    let cands = candidates_from(db, q, found)?;
    let matched = cands.len();
    let best = cands
        .iter()
        .filter_map(|c| c.bm25)
        .fold(None, |acc: Option<f64>, b| {
            Some(acc.map_or(b, |a| a.min(b)))
        });
    let mut scored: Vec<(Candidate, ScoreParts)> = cands
        .into_iter()
        .map(|c| {
            let s = score(&c, q, best, now);
            (c, s)
        })
        .collect();
    let best_relevance = scored.iter().map(|(_, s)| s.relevance).fold(0.0, f64::max);
    let best_score = scored.iter().map(|(_, s)| s.score).fold(0.0, f64::max);
    scored.retain(|(_, s)| s.relevance >= q.min_relevance && s.score >= q.min_score);
    scored.sort_by(|(a, sa), (b, sb)| {
        sb.score
            .total_cmp(&sa.score)
            .then(b.memory.weight.total_cmp(&a.memory.weight))
            .then(b.seq.cmp(&a.seq))
            .then(a.memory.id.cmp(&b.memory.id))
    });
    let reason = if matched == 0 {
        Some(format!(
            "nothing in {} matches {}",
            q.workspaces
                .iter()
                .map(|w| format!("{w:?}"))
                .collect::<Vec<_>>()
                .join(" or "),
            describe(q)
        ))
    } else if scored.is_empty() {
        Some(format!(
            "{matched} memories matched {} only weakly (best relevance {best_relevance:.2}, needed {:.2}; best score {best_score:.3}, min_score {:.3})",
            describe(q),
            q.min_relevance,
            q.min_score
        ))
    } else {
        None
    };
    Ok(Ranked {
        scored,
        matched,
        reason,
    })
}

fn describe(q: &Query) -> String {
    let mut parts = Vec::new();
    if !q.phrase_contexts.is_empty() {
        use moss_client::search::SearchMode;
        parts.push(match q.mode {
            SearchMode::Keyword => format!("the words {:?}", q.phrase_contexts),
            SearchMode::Semantic => format!("the meaning of {:?}", q.phrase_contexts.join(" ")),
            SearchMode::Hybrid => format!("the words {:?} or their meaning", q.phrase_contexts),
        });
    }
    if let Some(c) = &q.context {
        parts.push(format!("context {c:?}"));
    }
    if let Some(s) = &q.slot {
        parts.push(format!("slot {s:?}"));
    }
    if parts.is_empty() {
        "the query (it has only stop words)".into()
    } else {
        parts.join(" and ")
    }
}

/// `memory_recall` on a read connection, given what the query's words matched (read by
/// [`word_matches`] with the same query, its meaning aside).
pub fn recall(db: Db<'_>, q: &Query, found: WordMatches, now: i64) -> Result<MemoryRecallResponse> {
    let Ranked {
        mut scored,
        matched,
        reason,
    } = ranked_from(db, q, found, now)?;
    scored.truncate(q.limit);
    Ok(MemoryRecallResponse {
        items: scored
            .into_iter()
            .map(|(c, s)| Recalled {
                memory: c.memory,
                score: (s.score * 10_000.0).round() / 10_000.0,
                explain: q.explain.then_some(s),
                content_truncated: false,
            })
            .collect(),
        reason,
        matched: matched as i64,
        mode: q.mode,
        truncated: false,
        budget: crate::budget::blank_budget(),
        hint: None,
    })
}

/// What a query forget removes: every memory over [`FORGET_MIN_RELEVANCE`], with its rid.
pub fn matching(db: Db<'_>, q: &Query, now: i64) -> Result<Vec<(i64, Memory)>> {
    Ok(ranked(db, q, now)?
        .scored
        .into_iter()
        .map(|(c, _)| (c.rid, c.memory))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An empty recall's reason names what was looked for the way the mode looked.
    #[test]
    fn an_empty_recall_says_how_it_looked() {
        use moss_client::search::SearchMode;
        let req = MemoryRecallRequest {
            query: Some("indentation style".into()),
            ..Default::default()
        };
        let mut q = Query::from_recall(&req, 30.0).unwrap();
        for (mode, says) in [
            (SearchMode::Keyword, r#"the words ["indentation", "style"]"#),
            (
                SearchMode::Semantic,
                r#"the meaning of "indentation style""#,
            ),
            (
                SearchMode::Hybrid,
                r#"the words ["indentation", "style"] or their meaning"#,
            ),
        ] {
            q.mode = mode;
            assert_eq!(describe(&q), says);
        }
    }

    #[test]
    fn words_drop_stop_words_and_split_terms() {
        let (phrases, terms) = words("What about ./src/Auth.py, and the tests?");
        assert_eq!(phrases, vec!["src/auth.py", "tests"]);
        assert_eq!(terms, vec!["src", "auth", "py", "tests"]);
        assert_eq!(words("a the of").0, Vec::<String>::new());
    }

    #[test]
    fn parents_score_less_the_further_up() {
        assert!(ContextMatch::Exact.score() > ContextMatch::Basename.score());
        assert!(ContextMatch::Basename.score() > ContextMatch::Parent(1).score());
        assert!(ContextMatch::Parent(1).score() > ContextMatch::Parent(3).score());
        assert!(ContextMatch::Parent(9).score() >= 0.3);
    }
}
