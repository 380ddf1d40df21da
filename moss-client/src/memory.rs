//! Associative memory wire types: the requests and responses of the `memory_*` operations.
//!
//! A memory is a piece of knowledge attached to contexts (a file path, a directory, a topic, a
//! task id), with a weight, an optional slot (free-form, queryable), tags and metadata. Recall
//! ranks by relevance to the query, then weight, recency and specificity; there is no ordering
//! option.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::reasoning::Budget;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

crate::op::ops! {
    /// Every memory operation, in listing order.
    table OPS, handle Memories;

    /// Store a piece of knowledge, e.g. {"content": "User prefers tabs", "context": "formatting",
    /// "slot": "preferences"}. The same content, contexts and slot again updates it.
    MemoryStore: memory_store, Post "/memories",
        MemoryStoreRequest => MemoryStoreResponse, store;

    /// Recall memories by query (a path finds its parents' too), slot or context, ranked by
    /// relevance, weight, recency, specificity among the newest 1,000 matches; none: an empty
    /// list with a reason.
    MemoryRecall: memory_recall, Post "/memories/recall",
        MemoryRecallRequest => MemoryRecallResponse, recall;

    /// Remove memories by id(s), or by query (strong matches only), slot or context; returns
    /// exactly what it removed.
    MemoryForget: memory_forget, Post "/memories/forget",
        MemoryForgetRequest => MemoryForgetResponse, forget;

    /// Render a template of strings and {"slot"}, {"recall"}, {"var"} parts, or a configured
    /// template by name; empty parts are skipped and named in warnings.
    MemoryRender: memory_render, Post "/memories/render",
        MemoryRenderRequest => MemoryRenderResponse, render;

    /// The Lua sources that populate memory, each with its last run, items, events handled and last
    /// error.
    MemorySources: memory_sources, Post "/memories/sources",
        MemorySourcesRequest => MemorySourcesResponse, sources;

    /// Run the Lua sources again (all or one), sandboxed; a source's memories are replaced only
    /// when it succeeds.
    MemorySourcesRun: memory_sources_run, Post "/memories/sources/run",
        MemorySourcesRunRequest => MemorySourcesResponse, sources_run;

    /// Send an event to the handlers sources registered with moss.on(event, fn), e.g. {"event":
    /// "file_opened", "data": {"file": "src/auth.py"}}.
    MemoryEvent: memory_event, Post "/memories/events",
        MemoryEventRequest => MemoryEventResponse, event;

}

/// One context or several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(untagged)]
pub enum Contexts {
    One(String),
    Many(Vec<String>),
}

impl Contexts {
    /// The contexts as a list.
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            Contexts::One(s) => vec![s.clone()],
            Contexts::Many(v) => v.clone(),
        }
    }
}

/// A stored memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Memory {
    pub id: String,
    pub workspace: String,
    pub content: String,
    pub contexts: Vec<String>,
    pub weight: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
    pub persist: bool,
    /// The session a non-persistent memory belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
    /// The Lua source that wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Unix seconds: the first store.
    pub created_at: i64,
    /// The latest store (storing the same knowledge again sets it; a recall does not).
    pub updated_at: i64,
    /// When recall last returned it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recalled_at: Option<i64>,
}

/// `memory_store`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MemoryStoreRequest {
    /// The knowledge, at most memory_max_chars.
    pub content: String,
    /// A file path, directory, topic or task id; one or a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<Contexts>,
    /// Above 0, at most 100 (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// Placement hint, e.g. "preferences".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
    /// false: gone when session ends (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub persist: Option<bool>,
    /// Session of a non-persistent memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Default "default"; "global" is seen by every recall.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// JSON object kept with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Value>,
}

/// A stored memory as `memory_store` answers it: everything but the content the caller sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct MemoryHandle {
    pub id: String,
    pub workspace: String,
    /// Characters of the stored content.
    pub content_chars: i64,
    pub contexts: Vec<String>,
    pub weight: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
    pub persist: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

impl From<&Memory> for MemoryHandle {
    fn from(m: &Memory) -> MemoryHandle {
        MemoryHandle {
            id: m.id.clone(),
            workspace: m.workspace.clone(),
            content_chars: m.content.chars().count() as i64,
            contexts: m.contexts.clone(),
            weight: m.weight,
            slot: m.slot.clone(),
            persist: m.persist,
            session: m.session.clone(),
            tags: m.tags.clone(),
            source: m.source.clone(),
            created_at: m.created_at,
            updated_at: m.updated_at,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct MemoryStoreResponse {
    pub memory: MemoryHandle,
    /// false when the same content with the same contexts and slot was already stored: it was
    /// updated instead.
    pub created: bool,
    /// What an update changed (`weight`, `tags`, `metadata`).
    #[serde(default)]
    pub updated: Vec<String>,
}

crate::fields::wire_struct! {
    /// `memory_recall`: at least one of `query`, `slot`, `context`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct MemoryRecallRequest {
        /// Free text, e.g. "about auth.py", taken as plain words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub query: Option<String>,
        /// Accepted; recall always takes query as plain words.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub safe_query: Option<bool>,
        /// Only this slot.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub slot: Option<String>,
        /// Only memories on this context or a parent directory.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub context: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub workspace: Option<String>,
        /// Default true.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub include_global: Option<bool>,
        /// 1-100 (default 10).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub limit: Option<i64>,
        /// 0-1 (default 1/15).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub min_score: Option<f64>,
        /// Return the score parts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub explain: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub session: Option<String>,
        /// Default hybrid with a model, else keyword.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mode: Option<crate::search::SearchMode>,
        ..caps,
    }
}

/// The components of a score: `score = relevance × weight × recency × specificity`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ScoreParts {
    /// 1 − (1 − context) × (1 − text) × (1 − semantic).
    pub relevance: f64,
    /// How the best context matched: `exact`, `basename`, `parent`, `slot` or `none`.
    pub context_match: String,
    /// The context part of relevance: the match's score over √(the query's words), an
    /// explicit `context` counting as one word.
    pub context: f64,
    /// The text part: query terms found × the BM25 rank relative to the best match.
    pub text: f64,
    /// The semantic part, in 0..1: how far the memory's similarity to the query stands above
    /// the similarity floor (absent when recall did not rank by meaning).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic: Option<f64>,
    /// The cosine similarity behind `semantic`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub similarity: Option<f64>,
    /// (0.5 + w / (w + 1)) / 1.5: 2/3 at the default weight 1, towards 1.
    pub weight: f64,
    /// 0.85 + 0.15 × 0.5^(age / half-life), age from the later of the latest store
    /// (`updated_at`, which storing the same knowledge again sets) and the last recall
    /// (`recalled_at`).
    pub recency: f64,
    /// By match kind, divided by 1 + 0.15 × (contexts − 1).
    pub specificity: f64,
    pub score: f64,
}

/// A recalled memory with its score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Recalled {
    #[serde(flatten)]
    pub memory: Memory,
    /// In 0..1, higher better: relevance × weight × recency × specificity, each in 0..1.
    pub score: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<ScoreParts>,
    /// Set when an output budget cut this memory's content to fit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub content_truncated: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct MemoryRecallResponse {
    /// Best first.
    pub items: Vec<Recalled>,
    /// Why nothing (or less than asked) came back, when that needs saying.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Candidates that matched before the `min_score` cut and the limit.
    pub matched: i64,
    /// How the hits were ranked: keyword, semantic or hybrid.
    pub mode: crate::search::SearchMode,
    pub truncated: bool,
    pub budget: Budget,
    /// Set when the workspace holds nothing in any family (see moss_workspaces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// `memory_forget`: by id(s), or by query, slot or context (bounded).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MemoryForgetRequest {
    /// One memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// At most 1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<String>>,
    /// What recall finds with relevance >= 0.8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// This slot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
    /// Exactly this context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// Default "default"; never "global" unless named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Report only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
    /// Needed for more than 10 by query, slot or context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// A removed memory, as `memory_forget` reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Forgotten {
    pub id: String,
    pub content: String,
    pub contexts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct MemoryForgetResponse {
    /// Exactly what was removed (or, with `dry_run`, would be).
    pub removed: Vec<Forgotten>,
    pub count: i64,
    pub dry_run: bool,
}

/// One part of a template: a literal string, or a slot, a recall or a variable to fill in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(untagged)]
pub enum TemplatePart {
    Text(String),
    Slot { slot: String },
    Recall { recall: String },
    Var { var: String },
}

/// A template: its parts, or the name of one in the config's `memory.templates` (`default` is
/// `memory.template`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(untagged)]
pub enum Template {
    Parts(Vec<TemplatePart>),
    Named(String),
}

/// `memory_render`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MemoryRenderRequest {
    /// Parts or a configured template name.
    pub template: Template,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Values of {"var"} parts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vars: Option<std::collections::BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Cap on the rendered text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct MemoryRenderResponse {
    pub text: String,
    /// Parts that rendered nothing, and why.
    pub warnings: Vec<String>,
    pub truncated: bool,
    pub chars: i64,
}

/// `memory_sources`: the Lua sources a workspace (and project root) runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MemorySourcesRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The project's absolute root (adds its and the builtin sources).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
}

/// `memory_sources_run`: runs the sources again (all, or the one named).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MemorySourcesRunRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The project's absolute root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// Only this source, e.g. "git.lua".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A Lua source and how its last run went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SourceStatus {
    /// The file name, e.g. "git.lua"; the memories it stores carry it as `source`.
    pub name: String,
    /// Where it is read from (`builtin:` for the shipped ones).
    pub path: String,
    pub workspace: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// `ok`, `error` or `never` (not run yet).
    pub status: String,
    /// Unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    /// Memories its last run stored.
    pub items: i64,
    /// The events it handles (`moss.on`).
    pub handlers: Vec<String>,
    /// The last error, with file and line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct MemorySourcesResponse {
    pub sources: Vec<SourceStatus>,
}

/// `memory_event`: runs the handlers sources registered for `event` with `moss.on`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MemoryEventRequest {
    /// e.g. "file_opened".
    pub event: String,
    /// e.g. {"file": "src/auth.py"}.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Session of what handlers store without persist.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// The project's absolute root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct MemoryEventResponse {
    pub event: String,
    /// Handlers that ran.
    pub handled: i64,
    /// Memories they stored.
    pub stored: i64,
    /// Handlers that failed, with file and line.
    pub errors: Vec<String>,
    /// When no handler ran: which sources are loaded for the workspace and root, and why none
    /// handled the event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
