//! The associative memory (family `memory`): knowledge attached to contexts, recalled by one
//! ranked query.
//!
//! - [`rank`]: query parsing, candidate matching (full-text and contexts) and the score;
//!   `full_text`: the full-text statements it runs, on each engine.
//! - [`render`]: templates assembled from slots, recalls and variables.
//!
//! A memory belongs to a workspace (`global` is seen by every recall unless the caller opts out)
//! and, when `persist` is false, to a session: only that session recalls it, and it is removed
//! when the session ends or the daemon restarts. Storing the same content with the same
//! contexts and slot again updates the memory instead of adding a second one.
//!
//! [`Memories`] holds one method per operation; [`family`] registers the tools and routes.

pub mod family;
mod forget;
mod full_text;
pub mod interface;
pub mod lua;
pub mod migrations;
pub mod rank;
pub mod render;
pub mod rest;
pub mod runner;
pub mod search_source;
pub mod sources;
mod write;

use std::sync::Arc;

use moss_client::memory::*;

use crate::budget::{self, Caps, Fit, cut_text};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::json_field::{object_json, parse_json};
use crate::store::engine::{DbError, Engine, Row};
use crate::store::{Store, now};
use crate::{names, tags};
use moss_client::search::SearchMode;
use search_source::SEARCH_SOURCE;
use write::delete_rids;
pub use write::{Prepared, Written, upsert, write};

/// The workspace every recall also reads.
pub const GLOBAL: &str = "global";
/// Most contexts on one memory, and the longest.
pub const MAX_CONTEXTS: usize = 20;
pub const MAX_CONTEXT_CHARS: usize = 500;
/// Largest weight.
pub const MAX_WEIGHT: f64 = 100.0;
/// Most memories a forget by query, slot or context removes without `confirm: true`.
pub const FORGET_UNCONFIRMED_MAX: usize = 10;
/// Most memories one forget removes.
pub const FORGET_MAX: usize = 1000;

/// The memory operations over one store.
#[derive(Debug, Clone)]
pub struct Memories {
    store: Store,
    config: Arc<Config>,
    /// When each live session was last used; an idle one ends after `memory.session_ttl_seconds`.
    sessions: Arc<std::sync::Mutex<std::collections::HashMap<String, std::time::Instant>>>,
    /// `$MOSS_HOME`, whose `sources/` holds the sources of every workspace.
    home: std::path::PathBuf,
    /// The Lua sources' statuses and live handlers.
    sources: Arc<std::sync::Mutex<sources::SourcesState>>,
    /// Cancelled when the daemon stops: the sources' handler tasks end, and their runners with
    /// them.
    stop: tokio_util::sync::CancellationToken,
}

/// A context as compared: trimmed, `./` and trailing `/` dropped, `\` as `/`, lowercase.
pub fn norm_context(raw: &str) -> String {
    let mut s = raw.trim().replace('\\', "/");
    while let Some(rest) = s.strip_prefix("./") {
        s = rest.to_string();
    }
    while s.contains("//") {
        s = s.replace("//", "/");
    }
    let s = s.trim_end_matches('/');
    s.to_lowercase()
}

/// The last path component of a normalized context.
pub fn basename(ctx: &str) -> &str {
    ctx.rsplit('/').next().unwrap_or(ctx)
}

/// The columns a [`Memory`] is read from, in [`memory_from_row`]'s order.
pub const MEMORY_COLUMNS: &str = "m.id, m.workspace, m.content, m.contexts_json, m.weight, m.slot, \
    m.session, m.tags_json, m.metadata_json, m.source, m.created_at, m.updated_at, m.recalled_at";

pub fn memory_from_row(r: &Row) -> Result<Memory, DbError> {
    memory_from_row_at(r, 0)
}

/// A memory to write, checked.
#[derive(Debug, Clone)]
pub struct NewMemory {
    pub workspace: String,
    pub session: String,
    pub content: String,
    /// As given (trimmed), and normalized.
    pub contexts: Vec<String>,
    pub norm_contexts: Vec<String>,
    pub slot: Option<String>,
    pub weight: f64,
    pub tags: Option<Vec<String>>,
    pub metadata_json: Option<String>,
    pub source: Option<String>,
    /// For a Lua source's memory: the project root it ran for ('' without one).
    pub source_root: String,
    /// Stored by one of the source's event handlers, not by its body: a rerun of the body
    /// leaves it.
    pub from_handler: bool,
}

/// The workspace of a memory request (`default` when absent), normalized.
pub fn workspace(value: Option<&str>) -> Result<String> {
    Ok(names::workspace(value)?.norm)
}

/// A slot: trimmed, 1-100 characters.
pub fn slot(value: Option<&str>) -> Result<Option<String>> {
    crate::bounds::optional_text("slot", value, 100)
}

/// A session id: trimmed, 1-200 characters.
pub fn session(value: Option<&str>) -> Result<Option<String>> {
    crate::bounds::handle("session", value)
}

/// Checks a store request (or what a Lua source stores).
pub fn check(
    req: &MemoryStoreRequest,
    max_chars: usize,
    source: Option<String>,
) -> Result<NewMemory> {
    let content = req.content.trim();
    if content.is_empty() {
        return Err(Error::invalid_field("content", "content must not be empty"));
    }
    crate::bounds::check_len("content", content, max_chars)?;
    let raw = req
        .context
        .as_ref()
        .map(Contexts::to_vec)
        .unwrap_or_default();
    if raw.len() > MAX_CONTEXTS {
        return Err(Error::invalid_field(
            "context",
            format!(
                "context has {} entries; at most {MAX_CONTEXTS} are allowed",
                raw.len()
            ),
        ));
    }
    let mut contexts = Vec::new();
    let mut norm_contexts: Vec<String> = Vec::new();
    for (i, c) in raw.iter().enumerate() {
        let t = c.trim();
        if t.is_empty() {
            continue;
        }
        crate::bounds::check_len(&format!("context[{i}]"), t, MAX_CONTEXT_CHARS)?;
        if t.chars().any(char::is_control) {
            return Err(Error::invalid_field(
                &format!("context[{i}]"),
                "a context holds no control characters",
            ));
        }
        let n = norm_context(t);
        if !n.is_empty() && !norm_contexts.contains(&n) {
            norm_contexts.push(n);
            contexts.push(t.to_string());
        }
    }
    let weight = req.weight.unwrap_or(1.0);
    if !(weight > 0.0 && weight <= MAX_WEIGHT && weight.is_finite()) {
        return Err(Error::invalid_field(
            "weight",
            format!("weight must be above 0 and at most {MAX_WEIGHT}, got {weight}"),
        ));
    }
    let persist = req.persist.unwrap_or(true);
    let session = session(req.session.as_deref())?;
    let session = match (persist, session) {
        (true, _) => String::new(),
        (false, Some(s)) => s,
        (false, None) => {
            return Err(Error::invalid_field(
                "session",
                "persist:false needs a session (an MCP connection uses its own; REST and CLI callers name one)",
            ));
        }
    };
    Ok(NewMemory {
        workspace: workspace(req.workspace.as_deref())?,
        session,
        content: content.to_string(),
        contexts,
        norm_contexts,
        slot: slot(req.slot.as_deref())?,
        weight,
        tags: tags::clean(req.tags.as_deref())?,
        metadata_json: object_json("metadata", req.metadata.as_ref())?,
        source,
        source_root: String::new(),
        from_handler: false,
    })
}

impl Fit for MemoryRecallResponse {
    fn units(&self) -> usize {
        self.items.len()
    }
    fn keep(&mut self, n: usize) {
        self.items.truncate(n);
    }
    fn cut(&mut self, chars: usize) -> bool {
        self.items.first_mut().is_some_and(|r| {
            r.content_truncated = true;
            cut_text(&mut r.memory.content, chars)
        })
    }
    fn set_budget(&mut self, budget: moss_client::reasoning::Budget) {
        self.truncated = budget.truncated;
        self.budget = budget;
    }
}

impl Memories {
    pub fn new(store: Store, config: Arc<Config>, home: std::path::PathBuf) -> Memories {
        Memories {
            store,
            config,
            sessions: Default::default(),
            home,
            sources: Default::default(),
            stop: tokio_util::sync::CancellationToken::new(),
        }
    }

    /// Ends the sources' handlers (and kills their runners) when `stop` is cancelled.
    pub fn stop_on(mut self, stop: tokio_util::sync::CancellationToken) -> Self {
        self.stop = stop;
        self
    }

    pub(crate) fn stopping(&self) -> &tokio_util::sync::CancellationToken {
        &self.stop
    }

    /// Records that `session` was used now.
    pub(crate) fn touch(&self, session: Option<&str>) {
        if let Some(s) = session.map(str::trim).filter(|s| !s.is_empty()) {
            let mut map = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            map.insert(s.to_string(), std::time::Instant::now());
        }
    }

    /// Starts the task that ends idle sessions, until `stop`.
    pub fn spawn_sweeper(&self, stop: tokio_util::sync::CancellationToken) {
        let me = self.clone();
        let ttl = std::time::Duration::from_secs(self.config.memory.session_ttl_seconds);
        let every = (ttl / 10).clamp(
            std::time::Duration::from_secs(1),
            std::time::Duration::from_secs(60),
        );
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(every) => {}
                }
                let idle: Vec<String> = {
                    let mut map = me.sessions.lock().unwrap_or_else(|e| e.into_inner());
                    let idle: Vec<String> = map
                        .iter()
                        .filter(|(_, t)| t.elapsed() > ttl)
                        .map(|(s, _)| s.clone())
                        .collect();
                    for s in &idle {
                        map.remove(s);
                    }
                    idle
                };
                for s in idle {
                    if let Err(e) = me.end_session(&s).await {
                        tracing::warn!("ending idle memory session {s:?}: {e}");
                    }
                }
            }
        });
    }

    /// At start: no session survives a restart of a daemon that owns its store (SQLite). On
    /// PostgreSQL the other daemons on the database may be serving sessions now: only those
    /// idle longer than `session_ttl_seconds` (no memory of theirs written or recalled since)
    /// are ended, as the sweeper of the daemon that served them would have.
    pub async fn drop_sessions(&self) -> Result<usize> {
        let idle_since = now() - self.config.memory.session_ttl_seconds as i64;
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                let rids: Vec<i64> = match db.engine() {
                    Engine::Sqlite => {
                        db.query_map("SELECT rid FROM memories WHERE session != ''", &[], |r| {
                            r.get(0)
                        })?
                    }
                    Engine::Postgres => db.query_map(
                        "SELECT rid FROM memories WHERE session IN (
                           SELECT session FROM memories WHERE session != ''
                           GROUP BY session
                           HAVING max(GREATEST(updated_at, coalesce(recalled_at, 0))) < ?1)",
                        crate::db_params![idle_since],
                        |r| r.get(0),
                    )?,
                };
                delete_rids(db, &rids)?;
                Ok(rids.len())
            })
            .await
    }

    /// Ends a session: removes its memories; returns how many.
    pub async fn end_session(&self, id: &str) -> Result<usize> {
        let id = session(Some(id))?
            .ok_or_else(|| Error::invalid_field("session", "session id is empty"))?;
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                let rids: Vec<i64> = db.query_map(
                    "SELECT rid FROM memories WHERE session = ?1",
                    crate::db_params![&id],
                    |r| r.get(0),
                )?;
                delete_rids(db, &rids)?;
                Ok(rids.len())
            })
            .await
    }

    /// `memory_store`.
    pub async fn store(&self, req: MemoryStoreRequest) -> Result<MemoryStoreResponse> {
        let m = check(&req, self.config.memory.max_content_chars, None)?;
        self.touch(Some(&m.session));
        // Hashing, encoding and the handle happen here, on the request's task: the writer job
        // only executes the statements.
        let prepared = m.prepare();
        let (written, m) = self
            .store
            .writer
            .run(move |ctx| Ok((write(ctx, &m, &prepared)?, m)))
            .await?;
        Ok(MemoryStoreResponse {
            memory: written.handle(m),
            created: written.created,
            updated: written.changed,
        })
    }

    /// `memory_recall`.
    pub async fn recall(&self, req: MemoryRecallRequest) -> Result<MemoryRecallResponse> {
        let caps = Caps::new(
            self.config.output_max_chars,
            req.max_chars,
            req.max_bytes,
            req.max_lines,
        )?;
        let mut q = rank::Query::from_recall(&req, self.config.memory.recency_half_life_days)?;
        self.touch(req.session.as_deref());
        q.mode = self.store.semantic.mode(req.mode)?;
        let text = req.query.as_deref().map(str::trim).unwrap_or("");
        if text.is_empty() {
            // Nothing to embed (a slot or context alone): ranked as before.
            q.mode = SearchMode::Keyword;
        }
        if q.mode == SearchMode::Semantic {
            // Meaning only: the words still match contexts, not the index.
            q.terms.clear();
        }
        // The words' matches are read while the question is embedded and its nearest memories
        // found: the two take about as long, and neither needs the other.
        let words = async {
            self.store.await_index(&SEARCH_SOURCE).await;
            let q = q.clone();
            self.store
                .readers
                .run_db(move |db| rank::word_matches(db, &q))
                .await
        };
        let meaning = async {
            if q.mode == SearchMode::Keyword {
                return Ok(None);
            }
            let Some(v) = self.store.semantic.query_vector(text).await? else {
                return Ok(None);
            };
            self.store
                .semantic
                .nearest(
                    &search_source::EMBED_SOURCE,
                    v,
                    Some(q.workspaces.clone()),
                    crate::store::semantic::fusion::DEPTH,
                )
                .await
                .map(Some)
        };
        let (found, near) = tokio::try_join!(words, meaning)?;
        match near {
            Some(near) => q.semantic = near,
            None if q.mode == SearchMode::Semantic => {
                return Err(crate::store::semantic::not_ready());
            }
            // The model was not ready in time: by words alone.
            None => q.mode = SearchMode::Keyword,
        }
        let resp = self
            .store
            .readers
            .run_db(move |db| rank::recall(db, &q, found, now()))
            .await?;
        if !resp.items.is_empty() {
            let ids: Vec<String> = resp.items.iter().map(|r| r.memory.id.clone()).collect();
            let writer = self.store.writer.clone();
            // Recency counts from the last recall: recorded by the writer, off the answer's
            // path (readers never write).
            tokio::spawn(async move {
                let t = now();
                let _ = writer
                    .run(move |ctx| {
                        for id in &ids {
                            ctx.db().execute(
                                "UPDATE memories SET recalled_at = ?2 WHERE id = ?1",
                                crate::db_params![id, t],
                            )?;
                        }
                        Ok(())
                    })
                    .await;
            });
        }
        budget::fit(resp, &caps)
    }

    /// `memory_render`.
    pub async fn render(&self, req: MemoryRenderRequest) -> Result<MemoryRenderResponse> {
        render::render(self, req).await
    }

    pub(crate) fn config(&self) -> &Config {
        &self.config
    }
}

/// [`memory_from_row`] for a row whose memory columns start at `at`.
pub fn memory_from_row_at(r: &Row, at: usize) -> Result<Memory, DbError> {
    let contexts: String = r.get(at + 3)?;
    let session: String = r.get(at + 6)?;
    let tags: Option<String> = r.get(at + 7)?;
    Ok(Memory {
        id: r.get(at)?,
        workspace: r.get(at + 1)?,
        content: r.get(at + 2)?,
        contexts: serde_json::from_str(&contexts).unwrap_or_default(),
        weight: r.get(at + 4)?,
        slot: r.get(at + 5)?,
        persist: session.is_empty(),
        session: (!session.is_empty()).then_some(session),
        tags: tags
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default(),
        metadata: parse_json(r.get(at + 8)?),
        source: r.get(at + 9)?,
        created_at: r.get(at + 10)?,
        updated_at: r.get(at + 11)?,
        recalled_at: r.get(at + 12)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contexts_normalize() {
        assert_eq!(norm_context(" ./src//Auth/login.py/ "), "src/auth/login.py");
        assert_eq!(norm_context("src\\auth"), "src/auth");
        assert_eq!(basename("src/auth/login.py"), "login.py");
        assert_eq!(basename("formatting"), "formatting");
    }

    #[test]
    fn bad_input_names_the_field() {
        let base = MemoryStoreRequest {
            content: "x".into(),
            ..Default::default()
        };
        let field =
            |r: MemoryStoreRequest| check(&r, 100, None).unwrap_err().0.details["field"].clone();
        assert_eq!(
            field(MemoryStoreRequest {
                content: " ".into(),
                ..base.clone()
            }),
            "content"
        );
        assert_eq!(
            field(MemoryStoreRequest {
                weight: Some(0.0),
                ..base.clone()
            }),
            "weight"
        );
        assert_eq!(
            field(MemoryStoreRequest {
                weight: Some(101.0),
                ..base.clone()
            }),
            "weight"
        );
        assert_eq!(
            field(MemoryStoreRequest {
                metadata: Some(serde_json::json!([1])),
                ..base.clone()
            }),
            "metadata"
        );
        assert_eq!(
            field(MemoryStoreRequest {
                persist: Some(false),
                ..base.clone()
            }),
            "session"
        );
        assert_eq!(
            field(MemoryStoreRequest {
                content: "y".repeat(101),
                ..base.clone()
            }),
            "content"
        );
    }

    #[test]
    fn identity_ignores_context_order_and_case() {
        let a = check(
            &MemoryStoreRequest {
                content: "Use tabs".into(),
                context: Some(Contexts::Many(vec!["A".into(), "b".into()])),
                ..Default::default()
            },
            100,
            None,
        )
        .unwrap();
        let b = check(
            &MemoryStoreRequest {
                content: "Use tabs ".into(),
                context: Some(Contexts::Many(vec!["b".into(), "a".into()])),
                ..Default::default()
            },
            100,
            None,
        )
        .unwrap();
        assert_eq!(a.identity(), b.identity());
    }
}
