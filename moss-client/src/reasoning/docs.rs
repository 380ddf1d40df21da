//! Documents and branches: notes, commits, reads (show, log, export), diff and merge of
//! notes, branches and checkout.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

use super::*;

/// `branchmind_notes_commit`: append one note to the notes of `target`, or to `(branch, doc)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NotesCommitRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `PLAN-###` or `TASK-###`: writes to its notes doc on its branch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Branch (default: the target's branch, else the checked-out branch). With `target`, a
    /// branch made from the target's branch: the target's documents there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Document. Required unless `target` is given (then its notes doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// The note (at most 65536 characters).
    pub content: String,
    /// A short title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// e.g. `markdown`, `text`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// A JSON object kept with the note.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// `branchmind_commit`: append an entry of any kind to any `(branch, doc)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CommitRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `PLAN-###` or `TASK-###`: addresses its documents (its `reasoning_ref`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Branch (default: the target's branch, else the checked-out branch). With `target`, a
    /// branch made from the target's branch: the target's documents there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Document. Required unless `target` is given (then its notes doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// Entry kind, e.g. `note`, `decision`, `evidence` (lowercase letters, digits, `_`, `-`;
    /// `event` is reserved for task events).
    pub kind: String,
    /// The entry's text (at most 65536 characters).
    pub content: String,
    /// A short title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// How the content is written, e.g. `markdown`, `text`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// A JSON object kept with the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// Idempotency key: an entry with this key already in `(branch, doc)` is not written again
    /// (`inserted: false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_event_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct CommitResponse {
    /// The written entry, or the one already holding `source_event_id`.
    pub entry: Entry,
    pub inserted: bool,
}

/// `branchmind_show`: a bounded, newest-first page of one document's effective view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ShowRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `PLAN-###` or `TASK-###`: addresses its documents (its `reasoning_ref`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// With `target`: `notes` (default) or `trace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc_kind: Option<String>,
    /// Branch (default: the target's branch, else the checked-out branch). With `target`, a
    /// branch made from the target's branch: the target's documents there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Document. Required unless `target` is given (then its notes, or its `doc_kind`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// Read entries with `seq` below this (`pagination.next_cursor` of the previous page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<i64>,
    /// Entries per page, 1-200 (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Cap on the answer's characters (default: the config's `output_max_chars`); one below the
    /// smallest answer the read can give gets that answer, with `budget.warning`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<i64>,
    /// Cap on the answer's UTF-8 bytes (clamped like `max_chars`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
    /// Cap on the lines of text in the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<i64>,
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

/// `branchmind_log`: a branch's entries across all its documents, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct LogRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `PLAN-###` or `TASK-###`: addresses its documents (its `reasoning_ref`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Branch (default: the target's branch, else the checked-out branch). With `target`, a
    /// branch made from the target's branch: the target's documents there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Only entries of this kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Read items with `seq` below this (`pagination.next_cursor` of the previous page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<i64>,
    /// 1-200 (default 20).
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct LogResponse {
    pub branch: String,
    pub entries: Vec<Entry>,
    pub pagination: SeqPagination,
    pub truncated: bool,
    pub budget: Budget,
}

/// `branchmind_export`: what an agent needs to resume a target, bounded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReasoningExportRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `PLAN-###` or `TASK-###`. Required.
    pub target: String,
    /// Newest notes to include, 1-200 (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notes_limit: Option<i64>,
    /// Newest trace entries to include, 1-200 (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_limit: Option<i64>,
    /// Applies to the whole snapshot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<i64>,
    /// Cap on the answer's UTF-8 bytes (clamped like `max_chars`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
    /// Cap on the lines of text in the answer's strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<i64>,
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

/// `branchmind_diff`: entries in `to`'s view of `doc` that are not in `from`'s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[cfg_attr(feature = "schema", schema(as = BranchmindDiffRequest))]
#[serde(deny_unknown_fields)]
pub struct DiffRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// Branch compared against.
    pub from: String,
    /// Branch whose extra entries are listed.
    pub to: String,
    /// Document (default `notes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// Read items with `seq` below this (`pagination.next_cursor` of the previous page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<i64>,
    /// Items per page.
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

/// `branchmind_merge` (notes) and `branchmind_graph_merge`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MergeRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// Branch merged from.
    pub from: String,
    /// Branch merged into.
    pub into: String,
    /// Document: `notes` by default for `branchmind_merge`; required for
    /// `branchmind_graph_merge` (a plan's or task's graph is `<ID>-graph`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// Continue a large merge from `pagination.next_cursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<i64>,
    /// Items considered per call, 1-1000 (default 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Discover only; write nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dry_run: Option<bool>,
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
    /// Workspace. Required.
    pub workspace: String,
    /// New branch name (letters, digits, `/`, `-`, `_`, `.`; at most 128 characters).
    pub name: String,
    /// Branch it starts from (default: the checked-out branch).
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

/// `branchmind_branch_list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BranchListRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// Read items with `seq` below this (`pagination.next_cursor` of the previous page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<i64>,
    /// 1-200 (default 50).
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
    /// Workspace. Required.
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
