//! The versioned graph: operations, queries, validation, diff, 3-way merge and conflicts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

use super::*;

/// One graph operation of `branchmind_graph_apply`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum GraphOp {
    NodeUpsert {
        id: String,
        #[serde(rename = "type")]
        node_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tags: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    NodeDelete {
        id: String,
    },
    EdgeUpsert {
        from: String,
        rel: String,
        to: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    EdgeDelete {
        from: String,
        rel: String,
        to: String,
    },
}

crate::fields::wire_struct! {
    /// `branchmind_graph_apply`: an atomic batch of graph operations.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct GraphApplyRequest {
        pub workspace: String,
        ..doc_ref(doc),
        /// 1-1000 ops.
        pub ops: Vec<GraphOp>,
    }
}

/// Counts of what a graph write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GraphApplied {
    pub nodes_upserted: i64,
    pub nodes_deleted: i64,
    pub edges_upserted: i64,
    pub edges_deleted: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GraphApplyResponse {
    pub branch: String,
    pub doc: String,
    pub applied: GraphApplied,
    pub last_seq: i64,
    pub last_ts_ms: i64,
}

/// A node's effective state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GraphNode {
    pub id: String,
    #[serde(rename = "type")]
    pub node_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    pub deleted: bool,
    pub last_seq: i64,
    pub last_ts_ms: i64,
    /// Set when an output budget cut this node's text to fit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub text_truncated: bool,
}

/// An edge's effective state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GraphEdge {
    pub from: String,
    pub rel: String,
    pub to: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    pub deleted: bool,
    pub last_seq: i64,
    pub last_ts_ms: i64,
}

crate::fields::wire_struct! {
    /// `branchmind_graph_query`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct GraphQueryRequest {
        pub workspace: String,
        ..doc_ref(doc),
        /// Only these ids.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub ids: Option<Vec<String>>,
        /// Only these types.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub types: Option<Vec<String>>,
        /// Only this status.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub status: Option<String>,
        /// Any of these tags.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tags_any: Option<Vec<String>>,
        /// All of these tags.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tags_all: Option<Vec<String>>,
        /// Substring of id, title or text, any case.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub text: Option<String>,
        ..page(cursor: "Nodes with last_seq below this.", limit: "1-200 (default 50)."),
        /// Default true.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub include_edges: Option<bool>,
        /// 0-1000 (default 200).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub edges_limit: Option<i64>,
        ..caps,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GraphQueryResponse {
    pub branch: String,
    pub doc: String,
    /// Newest first.
    pub nodes: Vec<GraphNode>,
    /// Edges between returned nodes, newest first.
    pub edges: Vec<GraphEdge>,
    pub pagination: SeqPagination,
    pub truncated: bool,
    pub budget: Budget,
}

crate::fields::wire_struct! {
    /// `branchmind_graph_validate`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct GraphValidateRequest {
        pub workspace: String,
        ..doc_ref(doc),
        /// 1-1000 (default 50).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub max_errors: Option<i64>,
        ..caps,
    }
}

/// One broken invariant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GraphError {
    /// `dangling_edge`.
    pub code: String,
    pub message: String,
    pub from: String,
    pub rel: String,
    pub to: String,
    /// The endpoint that is missing or deleted.
    pub missing: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GraphStats {
    pub nodes: i64,
    pub edges: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GraphValidateResponse {
    pub branch: String,
    pub doc: String,
    pub ok: bool,
    pub stats: GraphStats,
    /// Every error found, up to `max_errors`.
    pub errors: Vec<GraphError>,
    /// All errors found, including those past `max_errors`.
    pub error_count: i64,
    pub truncated: bool,
    pub budget: Budget,
}

crate::fields::wire_struct! {
    /// `branchmind_graph_diff`: node and edge states of `to` that differ from `from`'s.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct GraphDiffRequest {
        pub workspace: String,
        /// Branch compared against.
        pub from: String,
        /// Branch whose differing states are listed.
        pub to: String,
        /// Graph document (<ID>-graph).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub doc: Option<String>,
        ..page(limit: "1-200 (default 50)."),
        ..caps,
    }
}

/// The key of an edge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct EdgeKey {
    pub from: String,
    pub rel: String,
    pub to: String,
}

/// One differing node or edge; a deletion is `to.deleted: true`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GraphChange {
    Node { id: String, to: GraphNode },
    Edge { key: EdgeKey, to: GraphEdge },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GraphDiffResponse {
    pub from: String,
    pub to: String,
    pub doc: String,
    /// Ordered by `to.last_seq`, newest first.
    pub changes: Vec<GraphChange>,
    pub pagination: SeqPagination,
    pub truncated: bool,
    pub budget: Budget,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GraphMergeResponse {
    pub from: String,
    pub into: String,
    pub doc: String,
    /// Keys whose `from` state was written into `into` (or would be, with `dry_run`).
    pub merged: i64,
    /// Keys already equal on both sides, or already in conflict.
    pub skipped: i64,
    /// Conflicts discovered by this call (0 when run again).
    pub conflicts_created: i64,
    /// Every conflict this page ran into, new or known.
    pub conflict_ids: Vec<String>,
    pub dry_run: bool,
    pub pagination: SeqPagination,
}

crate::fields::wire_struct! {
    /// `branchmind_graph_conflicts`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct GraphConflictsRequest {
        pub workspace: String,
        /// Merge destination.
        pub into: String,
        /// Graph document (<ID>-graph).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub doc: Option<String>,
        /// open or resolved (default both).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub status: Option<String>,
        ..page(limit: "Items per page."),
        ..caps,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ConflictSummary {
    pub conflict_id: String,
    /// `node` or `edge`.
    pub kind: String,
    /// The node id, or `from|rel|to`.
    pub key: String,
    pub status: String,
    pub created_at_ms: i64,
    /// Its position in the store's sequence (what `cursor` pages by).
    pub seq: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct GraphConflictsResponse {
    pub into: String,
    pub doc: String,
    pub conflicts: Vec<ConflictSummary>,
    pub pagination: SeqPagination,
    pub truncated: bool,
    pub budget: Budget,
}

/// `branchmind_graph_conflict_show`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ConflictShowRequest {
    pub workspace: String,
    /// From graph_merge or graph_conflicts.
    pub conflict_id: String,
}

/// A conflict with the three states: `base` (at branching), `theirs` (`from`), `ours` (`into`).
/// A state is null where the key did not exist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Conflict {
    pub conflict_id: String,
    pub kind: String,
    pub key: String,
    pub from: String,
    pub into: String,
    pub doc: String,
    pub status: String,
    pub base: Option<Value>,
    pub theirs: Option<Value>,
    pub ours: Option<Value>,
    pub created_at_ms: i64,
    pub resolved_at_ms: Option<i64>,
    /// `use_from` or `use_into`, once resolved.
    pub resolution: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ConflictShowResponse {
    pub conflict: Conflict,
}

/// How a conflict is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// Write the `from` state into `into` as a new version.
    UseFrom,
    /// Keep `into` as it is.
    UseInto,
}

/// `branchmind_graph_conflict_resolve`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ConflictResolveRequest {
    pub workspace: String,
    /// From graph_merge or graph_conflicts.
    pub conflict_id: String,
    /// use_from: write from's state into into; use_into: keep into's.
    pub resolution: Resolution,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ConflictResolveResponse {
    pub conflict_id: String,
    pub status: String,
    /// Whether a new version was written into `into`.
    pub applied: bool,
    /// The sequence of that version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seq: Option<i64>,
}
