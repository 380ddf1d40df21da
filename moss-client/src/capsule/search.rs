//! Wire types of `capsule_search`.

use serde::{Deserialize, Serialize};

use super::{FetchKey, Pagination, RunIds};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

crate::fields::wire_struct! {
    /// Arguments of `capsule_search`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(
        feature = "schema",
        derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
    )]
    #[serde(deny_unknown_fields)]
    #[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
    pub struct SearchRequest {
        /// At most 1000 chars: words, "phrases", prefix*, AND/OR/NOT.
        pub query: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub workspace: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tag: Option<String>,
        ..run(RunIds),
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub include_deleted: Option<bool>,
        /// Default 20, at most 100.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub limit: Option<i64>,
        /// Default 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub offset: Option<i64>,
        /// Default true; false is faster, without pagination.total.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub count_total: Option<bool>,
        /// Take query as plain words, all required.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub safe_query: Option<bool>,
        /// Default 64, 1-128.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub snippet_tokens: Option<i64>,
        /// Default 300, 50-500.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub snippet_chars: Option<i64>,
        /// Default hybrid with a model, else keyword.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mode: Option<crate::search::SearchMode>,
        /// Show each part's rank.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub explain: Option<bool>,
    }
}

/// One search hit: where the capsule is and a highlighted excerpt, never the whole text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SearchHit {
    pub id: String,
    pub workspace: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// About 300 characters around the match: the capsule's own text HTML-escaped, the matched
    /// terms in `<b>…</b>`, `…` where it was cut.
    pub snippet: String,
    /// Relevance in 0..1, higher better: `r / (1 + r)` with `r` = −BM25 (title 5x), so it
    /// follows the ranking and does not depend on the page (0.5 is a BM25 rank of −1).
    pub score: f64,
    pub updated_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<i64>,
    /// The plan or task it was handed off for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    pub fetch_key: FetchKey,
    /// The hit's keyword and semantic parts (with `explain: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<crate::search::HitExplain>,
}

/// A page of search hits, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SearchPage {
    pub items: Vec<SearchHit>,
    pub pagination: Pagination,
    /// Always `relevance`.
    pub sort: String,
    /// How the hits were ranked: keyword, semantic or hybrid.
    pub mode: crate::search::SearchMode,
}
