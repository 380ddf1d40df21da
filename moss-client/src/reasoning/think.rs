//! Think cards: templates, cards, the context of a graph's cards and the next card to write.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

use super::*;

crate::fields::wire_struct! {
    /// `branchmind_think_template`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct ThinkTemplateRequest {
        pub workspace: String,
        /// frame, hypothesis, question, test, evidence, decision, note or update.
        #[serde(rename = "type")]
        pub card_type: String,
        ..caps,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ThinkTemplateResponse {
    #[serde(rename = "type")]
    pub card_type: String,
    pub supported_types: Vec<String>,
    pub template: Value,
    /// The same card in the `key: value` form `card` also accepts.
    pub dsl: String,
    pub truncated: bool,
    pub budget: Budget,
}

crate::fields::wire_struct! {
    /// `branchmind_think_card`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct ThinkCardRequest {
        pub workspace: String,
        ..doc_ref(trace_doc, graph_doc),
        /// Object, JSON string or key: value lines with id, type, and title or text; other keys go to
        /// meta.
        pub card: Value,
        /// Card ids it supports (edges).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub supports: Option<Vec<String>>,
        /// Card ids it blocks (edges).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub blocks: Option<Vec<String>>,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct CardApplied {
    pub nodes_upserted: i64,
    pub edges_upserted: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ThinkCardResponse {
    pub branch: String,
    pub trace_doc: String,
    pub graph_doc: String,
    pub card_id: String,
    /// False when the same card was already written.
    pub inserted: bool,
    pub graph_applied: CardApplied,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seq: Option<i64>,
}

crate::fields::wire_struct! {
    /// `branchmind_think_context`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct ThinkContextRequest {
        pub workspace: String,
        ..doc_ref(graph_doc),
        /// 1-200 (default 30).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub limit_cards: Option<i64>,
        ..caps,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct CardStats {
    /// Cards in the effective graph.
    pub cards: i64,
    pub by_type: std::collections::BTreeMap<String, i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ThinkContextResponse {
    pub branch: String,
    pub graph_doc: String,
    pub stats: CardStats,
    /// Newest first.
    pub cards: Vec<GraphNode>,
    pub truncated: bool,
    pub budget: Budget,
}

crate::fields::wire_struct! {
    /// `branchmind_think_next`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct ThinkNextRequest {
        pub workspace: String,
        ..doc_ref(graph_doc),
    }
}

/// The one card to write next.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct NextCard {
    /// The rule that chose it: `frame_missing`, `question_unanswered`, `hypothesis_untested`,
    /// `test_without_evidence`, `evidence_undecided`.
    pub rule: String,
    /// Why, in one sentence.
    pub reason: String,
    /// The card it is about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub about: Option<String>,
    /// A filled-in skeleton to pass as `branchmind_think_card`'s `card`.
    pub card: Value,
    /// Edges to pass along (`supports`).
    pub supports: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ThinkNextResponse {
    pub branch: String,
    pub graph_doc: String,
    /// Null when every card is settled.
    pub next: Option<NextCard>,
    pub stats: CardStats,
}
