//! What every search shares: how it ranks (`mode`) and how a hit's rank is explained.
//!
//! A search ranks by its keyword index (full-text, BM25), by meaning (the cosine similarity of
//! sentence embeddings, when the daemon has a model), or by both fused. Fusion is reciprocal
//! rank fusion: a hit at rank `r` (1-based) of a part gets `1 / (60 + r)` from that part, and
//! the hit's fused value is the sum over the parts that found it. A semantic hit counts only
//! above a similarity floor, so a query unlike everything finds nothing by meaning.

use serde::{Deserialize, Serialize};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// By words, by meaning, or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum SearchMode {
    Keyword,
    Semantic,
    Hybrid,
}

impl SearchMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SearchMode::Keyword => "keyword",
            SearchMode::Semantic => "semantic",
            SearchMode::Hybrid => "hybrid",
        }
    }
}

impl std::fmt::Display for SearchMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a hit stands where it does (with `explain: true`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
pub struct HitExplain {
    /// Its place in the keyword ranking; absent when the words did not match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<KeywordPart>,
    /// Its place in the semantic ranking; absent when it was not near enough in meaning, or
    /// the search did not rank by meaning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic: Option<SemanticPart>,
    /// The fused value, the sum of `1 / (60 + rank)` over both parts.
    pub fused: f64,
}

/// A hit's keyword part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
pub struct KeywordPart {
    /// 1-based.
    pub rank: i64,
    /// BM25 as a relevance in 0..1, higher better (absent where the cross-family search ranks
    /// a family's hits by rank alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

/// A hit's semantic part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
pub struct SemanticPart {
    /// 1-based.
    pub rank: i64,
    /// Cosine similarity of the query and the item's nearest passage, -1..1.
    pub similarity: f64,
    /// Which passage of the item (0 is the first): long texts are embedded in parts.
    pub chunk: i64,
}
