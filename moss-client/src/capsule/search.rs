//! Wire types of `capsule_search`.

use serde::{Deserialize, Serialize};

use super::{FetchKey, Pagination, RunIds};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// Arguments of `capsule_search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(
    feature = "schema",
    derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
pub struct SearchRequest {
    /// FTS5 query, at most 1000 characters: words (`redis`), phrases (`"user authentication"`),
    /// prefixes (`auth*`), and `AND` / `OR` / `NOT` (`JWT OR OAuth`). Title matches rank 5x
    /// higher than body matches.
    pub query: String,
    /// Only this workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Only capsules carrying this tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Only capsules of these runs: a run id, a list, or run ids separated by commas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunIds>,
    /// Only capsules of this phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Only capsules of this role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Search soft-deleted capsules too. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_deleted: Option<bool>,
    /// Page size: default 20, at most 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Hits to skip. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
    /// Count every match for `pagination.total`. Default true; false skips the count (faster
    /// on common words) and tells `has_more` by reading one hit more than the page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_total: Option<bool>,
    /// Take `query` as plain text: every word is searched as written (quotes, `-`, `:`, `*`,
    /// `AND`/`OR`/`NOT` lose their meaning), all words must match. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safe_query: Option<bool>,
    /// Tokens of context FTS5 puts in a snippet: default 64, 1 to 128 (FTS5 itself stops at
    /// 64, so larger values give 64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet_tokens: Option<i64>,
    /// Visible characters of a snippet: default 300, 50 to 500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snippet_chars: Option<i64>,
}

/// One search hit: where the capsule is and a highlighted excerpt, never the whole text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    pub updated_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_at: Option<i64>,
    pub fetch_key: FetchKey,
}

/// A page of search hits, best first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SearchPage {
    pub items: Vec<SearchHit>,
    pub pagination: Pagination,
    /// Always `relevance`.
    pub sort: String,
}
