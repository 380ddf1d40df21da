//! Think cards: templates, cards, the context of a graph's cards and the next card to write.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

use super::*;

/// `branchmind_think_template`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ThinkTemplateRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// One of frame, hypothesis, question, test, evidence, decision, note, update.
    #[serde(rename = "type")]
    pub card_type: String,
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

/// `branchmind_think_card`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ThinkCardRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `PLAN-###` or `TASK-###`: addresses its documents (its `reasoning_ref`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Branch (default: the target's branch, else the checked-out branch). With `target`, a
    /// branch made from the target's branch: the target's documents there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Trace document. Required unless `target` is given (then its trace doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_doc: Option<String>,
    /// Graph document. Required unless `target` is given (then its graph doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_doc: Option<String>,
    /// The card: a JSON object, a JSON object in a string, or `key: value` lines. Needs `id`
    /// (or `card_id`), `type`, and `title` or `text`; `status` defaults to `open`, `tags` to
    /// []; unknown keys are kept under `meta`.
    pub card: Value,
    /// Card ids this card supports (edges `supports` from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports: Option<Vec<String>>,
    /// Card ids this card blocks (edges `blocks` from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<Vec<String>>,
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

/// `branchmind_think_context`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ThinkContextRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `PLAN-###` or `TASK-###`: addresses its documents (its `reasoning_ref`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Branch (default: the target's branch, else the checked-out branch). With `target`, a
    /// branch made from the target's branch: the target's documents there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Graph document. Required unless `target` is given (then its graph doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_doc: Option<String>,
    /// 1-200 (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_cards: Option<i64>,
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

/// `branchmind_think_next`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ThinkNextRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `PLAN-###` or `TASK-###`: addresses its documents (its `reasoning_ref`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Branch (default: the target's branch, else the checked-out branch). With `target`, a
    /// branch made from the target's branch: the target's documents there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Graph document. Required unless `target` is given (then its graph doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_doc: Option<String>,
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
