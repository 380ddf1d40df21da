//! Documents and branches: notes, commits, reads (show, log, export), diff and merge of
//! notes, branches and checkout.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

use super::*;

crate::fields::wire_struct! {
    /// `branchmind_notes_commit`: append one note to the notes of `target`, or to `(branch, doc)`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct NotesCommitRequest {
        pub workspace: String,
        ..doc_ref(doc),
        /// At most 65536 chars.
        pub content: String,
        /// Short title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        /// e.g. markdown.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub format: Option<String>,
        /// JSON object kept with it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub meta: Option<Value>,
    }
}

crate::fields::wire_struct! {
    /// `branchmind_commit`: append an entry of any kind to any `(branch, doc)`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct CommitRequest {
        pub workspace: String,
        ..doc_ref(doc),
        /// e.g. decision, evidence (lowercase; event is reserved).
        pub kind: String,
        /// At most 65536 chars.
        pub content: String,
        /// Short title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        /// e.g. markdown.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub format: Option<String>,
        /// JSON object kept with it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub meta: Option<Value>,
        /// Idempotency key: an entry with it in the doc is not written again.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub source_event_id: Option<String>,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct CommitResponse {
    /// The written entry, or the one already holding `source_event_id`.
    pub entry: Entry,
    pub inserted: bool,
}

crate::fields::wire_struct! {
    /// `branchmind_show`: a bounded, newest-first page of one document's effective view.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct ShowRequest {
        pub workspace: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub target: Option<String>,
        /// With target: notes (default) or trace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub doc_kind: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub branch: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub doc: Option<String>,
        ..page(limit: "1-200 (default 20)."),
        ..caps,
    }
}

/// A page of entries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ShowResponse {
    pub branch: String,
    pub doc: String,
    /// Newest first.
    pub entries: Vec<Entry>,
    pub pagination: SeqPagination,
    pub truncated: bool,
    pub budget: Budget,
}

crate::fields::wire_struct! {
    /// `branchmind_log`: a branch's entries across all its documents, newest first.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct LogRequest {
        pub workspace: String,
        ..doc_ref(),
        /// Only this kind.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub kind: Option<String>,
        ..page(limit: "1-200 (default 20)."),
        ..caps,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct LogResponse {
    pub branch: String,
    pub entries: Vec<Entry>,
    pub pagination: SeqPagination,
    pub truncated: bool,
    pub budget: Budget,
}

crate::fields::wire_struct! {
    /// `branchmind_export`: what an agent needs to resume a target, bounded.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct ReasoningExportRequest {
        pub workspace: String,
        pub target: String,
        /// 1-200 (default 20).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub notes_limit: Option<i64>,
        /// 1-200 (default 20).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub trace_limit: Option<i64>,
        ..caps(max_chars: "Cap for the whole snapshot."),
    }
}

/// A document's tail inside an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct DocSlice {
    pub doc: String,
    pub entries: Vec<Entry>,
    pub pagination: SeqPagination,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ReasoningExport {
    /// The plan or task (as `tasks_radar` shows it).
    pub target: Value,
    pub reasoning_ref: ReasoningRef,
    pub notes: DocSlice,
    pub trace: DocSlice,
    pub truncated: bool,
    pub budget: Budget,
}

crate::fields::wire_struct! {
    /// `branchmind_diff`: entries in `to`'s view of `doc` that are not in `from`'s.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[cfg_attr(feature = "schema", schema(as = BranchmindDiffRequest))]
    #[serde(deny_unknown_fields)]
    pub struct DiffRequest {
        pub workspace: String,
        /// Branch compared against.
        pub from: String,
        /// Branch whose extra entries are listed.
        pub to: String,
        /// Default notes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub doc: Option<String>,
        ..page(limit: "Items per page."),
        ..caps,
    }
}

/// `branchmind_diff`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", schema(as = BranchmindDiffResponse))]
pub struct DiffResponse {
    pub from: String,
    pub to: String,
    pub doc: String,
    pub entries: Vec<Entry>,
    pub pagination: SeqPagination,
    pub truncated: bool,
    pub budget: Budget,
}

crate::fields::wire_struct! {
    /// `branchmind_merge` (notes) and `branchmind_graph_merge`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct MergeRequest {
        pub workspace: String,
        /// Branch merged from.
        pub from: String,
        /// Branch merged into.
        pub into: String,
        /// Default notes; required by graph_merge (<ID>-graph).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub doc: Option<String>,
        ..page(limit: "Items per call, 1-1000 (default 200)."),
        /// Count only.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub dry_run: Option<bool>,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct MergeResponse {
    pub from: String,
    pub into: String,
    pub doc: String,
    /// Notes copied (or, with `dry_run`, that would be).
    pub merged: i64,
    /// Notes already in `into`.
    pub skipped: i64,
    pub dry_run: bool,
    pub pagination: SeqPagination,
}

/// `branchmind_branch_create`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BranchCreateRequest {
    pub workspace: String,
    /// Letters, digits, / - _ .; at most 128 chars.
    pub name: String,
    /// Default: the checked-out branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// A branch ref.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct BranchInfo {
    pub name: String,
    /// The branch it was created from; null for a root branch.
    pub base_branch: Option<String>,
    /// The base's entries and versions with `seq` up to this are part of this branch's view.
    pub base_seq: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at_ms: Option<i64>,
    /// Whether it is the workspace's checked-out branch.
    #[serde(default)]
    pub current: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct BranchCreateResponse {
    pub workspace: String,
    pub branch: BranchInfo,
}

crate::fields::wire_struct! {
    /// `branchmind_branch_list`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct BranchListRequest {
        pub workspace: String,
        ..page(limit: "1-200 (default 50)."),
        ..caps,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct BranchListResponse {
    pub workspace: String,
    /// Newest first; `main` last.
    pub branches: Vec<BranchInfo>,
    pub pagination: SeqPagination,
    pub truncated: bool,
    pub budget: Budget,
}

/// `branchmind_checkout`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CheckoutRequest {
    pub workspace: String,
    /// An existing branch.
    #[serde(rename = "ref")]
    pub reference: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct CheckoutResponse {
    pub workspace: String,
    pub previous: Option<String>,
    pub current: String,
}
