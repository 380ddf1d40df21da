//! Full-text search over notes, trace and cards.

use serde::{Deserialize, Serialize};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

use super::*;

crate::fields::wire_struct! {
    /// `branchmind_search`: full-text search over a workspace's notes and cards.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct ReasoningSearchRequest {
        pub workspace: String,
        /// Words (all must match), a "phrase", prefix*, AND/OR/NOT.
        pub query: String,
        /// Plain words, no FTS5 syntax.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub safe_query: Option<bool>,
        /// Only this branch's own entries.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub branch: Option<String>,
        /// 1-50 (default 10).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub limit: Option<i64>,
        /// Default hybrid with a model, else keyword.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mode: Option<crate::search::SearchMode>,
        /// Show each part's rank.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub explain: Option<bool>,
        ..caps,
    }
}

/// One matching entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ReasoningHit {
    pub seq: i64,
    pub ts: i64,
    pub branch: String,
    pub doc: String,
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The matching passage, HTML-escaped, matches in `<b>`.
    pub snippet: String,
    /// Relevance in 0..1, higher better: `r / (1 + r)` with `r` = −BM25 (title 5x), so it
    /// follows the ranking and does not depend on the page or the limit (0.5 is a BM25 rank
    /// of −1).
    pub score: f64,
    /// The hit's keyword and semantic parts (with `explain: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<crate::search::HitExplain>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ReasoningSearchResponse {
    pub workspace: String,
    pub query: String,
    pub hits: Vec<ReasoningHit>,
    /// How the hits were ranked: keyword, semantic or hybrid.
    pub mode: crate::search::SearchMode,
    pub truncated: bool,
    pub budget: Budget,
}
