//! Full-text search over notes, trace and cards.

use serde::{Deserialize, Serialize};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

use super::*;

/// `branchmind_search`: full-text search over a workspace's notes and cards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReasoningSearchRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// Words to find (all of them), or a quoted phrase.
    pub query: String,
    /// Only this branch's own entries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// 1-50 (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Cap on the answer's characters (default: the config's `output_max_chars`); one below the
    /// smallest answer the read can give gets that answer, with `budget.warning`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<i64>,
    /// Cap on the answer's UTF-8 bytes (clamped like `max_chars`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
    /// Cap on the lines of text in the answer's strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<i64>,
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
    /// BM25 rank (lower is better).
    pub score: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ReasoningSearchResponse {
    pub workspace: String,
    pub query: String,
    pub hits: Vec<ReasoningHit>,
    pub truncated: bool,
    pub budget: Budget,
}
