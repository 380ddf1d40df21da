//! Reasoning memory wire types: the requests and responses of the `branchmind_*` operations.
//!
//! Documents are append-only logs addressed by `(branch, doc)`, or by `target` (`PLAN-001`,
//! `TASK-001`), which resolves to the target's `reasoning_ref`: branch `task/TASK-001`, docs
//! `notes`, `TASK-001-graph` and `TASK-001-trace`. A document is always named, never guessed:
//! `target` (with `branch` for the target's documents on a branch made from its branch), or
//! `doc` (on `branch`, or the workspace's checked-out branch, `main` until
//! `branchmind_checkout`). A call that names neither is `INVALID_REQUEST` with the call that
//! works in `details.suggested_call`. The one default is `notes` in `branchmind_diff` and
//! `branchmind_merge`, the notes document of every plan and task alike.
//!
//! Every list-like read pages by sequence from the newest: `cursor` (exclusive upper bound),
//! `limit`, and `pagination.next_cursor` for the next, older page. Every read takes `max_chars`,
//! `max_bytes` and `max_lines`: the serialized answer never exceeds them; what did not fit is
//! dropped oldest first and the answer says `truncated: true`. A cap below the smallest answer
//! a read can give (its frame, or one item with its text cut) is clamped to that answer, which
//! says so in `budget.warning`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

mod docs;
mod graph;
mod search;
mod think;

pub use docs::*;
pub use graph::*;
pub use search::*;
pub use think::*;

crate::op::ops! {
    /// Every reasoning operation, in listing order.
    table OPS, handle Reasoning;

    /// Initialize a workspace's reasoning memory (idempotent).
    BranchmindInit: branchmind_init, Post "/reasoning/init",
        InitRequest => InitResponse, init;

    /// A workspace's schema version, checked-out branch, branch count and newest event.
    BranchmindStatus: branchmind_status, Post "/reasoning/status",
        ReasoningStatusRequest => ReasoningStatus, status;

    /// Append a note (a decision, its rationale, evidence) to a target's notes or to branch+doc.
    /// Neither given is 400, an unknown target 404, each with details.suggested_call.
    BranchmindNotesCommit: branchmind_notes_commit, Post "/reasoning/notes/commit",
        NotesCommitRequest => CommitResponse, notes_commit;

    /// Append an entry of any kind (decision, evidence, summary…) to branch+doc or a target's
    /// notes.
    BranchmindCommit: branchmind_commit, Post "/reasoning/commit",
        CommitRequest => CommitResponse, commit;

    /// Read a document newest first: a target's notes or trace, or branch+doc. A derived branch
    /// shows its base up to base_seq plus its own entries.
    BranchmindShow: branchmind_show, Post "/reasoning/show",
        ShowRequest => ShowResponse, show;

    /// A branch's entries across its documents, newest first, optionally of one kind.
    BranchmindLog: branchmind_log, Post "/reasoning/log",
        LogRequest => LogResponse, log;

    /// Everything to resume a plan or task in one bounded call: the target, its reasoning_ref, its
    /// newest notes and trace.
    BranchmindExport: branchmind_export, Post "/reasoning/export",
        ReasoningExportRequest => ReasoningExport, export;

    /// Entries in to's view of a document that from's view lacks (swap them for the other side).
    BranchmindDiff: branchmind_diff, Post "/reasoning/diff",
        DiffRequest => DiffResponse, diff;

    /// Copy the notes from's view has and into's lacks into into; idempotent (a second run merges
    /// nothing). Large merges page with cursor.
    BranchmindMerge: branchmind_merge, Post "/reasoning/merge",
        MergeRequest => MergeResponse, merge;

    /// Create a branch from another without copying: it sees the base as of base_seq. A taken name
    /// is 409.
    BranchmindBranchCreate: branchmind_branch_create, Post "/reasoning/branch/create",
        BranchCreateRequest => BranchCreateResponse, branch_create;

    /// A workspace's branches, newest first, with their base and whether checked out.
    BranchmindBranchList: branchmind_branch_list, Post "/reasoning/branch/list",
        BranchListRequest => BranchListResponse, branch_list;

    /// Set the workspace's current branch, used by calls naming a doc but no target or branch.
    BranchmindCheckout: branchmind_checkout, Post "/reasoning/checkout",
        CheckoutRequest => CheckoutResponse, checkout;

    /// Apply graph ops all or none: node_upsert {id, type, title?, text?, status?, tags?, meta?},
    /// node_delete {id}, edge_upsert {from, rel, to, meta?}, edge_delete {from, rel, to}. A delete
    /// is a tombstone; task: and step: ids are reserved.
    BranchmindGraphApply: branchmind_graph_apply, Post "/reasoning/graph/apply",
        GraphApplyRequest => GraphApplyResponse, graph_apply;

    /// Query the graph: nodes newest first matching every filter, with the edges between them
    /// (edges are cut before nodes to fit).
    BranchmindGraphQuery: branchmind_graph_query, Post "/reasoning/graph/query",
        GraphQueryRequest => GraphQueryResponse, graph_query;

    /// Check the graph: every edge's endpoints must be live nodes; returns counts and dangling_edge
    /// errors.
    BranchmindGraphValidate: branchmind_graph_validate, Post "/reasoning/graph/validate",
        GraphValidateRequest => GraphValidateResponse, graph_validate;

    /// Node and edge states in to's graph that differ from from's (a deletion is deleted:true),
    /// newest first.
    BranchmindGraphDiff: branchmind_graph_diff, Post "/reasoning/graph/diff",
        GraphDiffRequest => GraphDiffResponse, graph_diff;

    /// 3-way merge of a derived branch's graph into its base: one-sided changes are written,
    /// two-sided ones become conflicts. into must be from's base (409 MERGE_INTO_NON_BASE).
    BranchmindGraphMerge: branchmind_graph_merge, Post "/reasoning/graph/merge",
        MergeRequest => GraphMergeResponse, graph_merge;

    /// The conflicts on a merge destination's graph doc, newest first.
    BranchmindGraphConflicts: branchmind_graph_conflicts, Post "/reasoning/graph/conflicts",
        GraphConflictsRequest => GraphConflictsResponse, graph_conflicts;

    /// One conflict with its three states: base, theirs (from), ours (into).
    BranchmindGraphConflictShow: branchmind_graph_conflict_show, Post "/reasoning/graph/conflict/show",
        ConflictShowRequest => ConflictShowResponse, graph_conflict_show;

    /// Resolve a conflict (resolving again changes nothing).
    BranchmindGraphConflictResolve: branchmind_graph_conflict_resolve, Post "/reasoning/graph/conflict/resolve",
        ConflictResolveRequest => ConflictResolveResponse, graph_conflict_resolve;

    /// The skeleton of a card type, as JSON and as key: value lines.
    BranchmindThinkTemplate: branchmind_think_template, Post "/reasoning/think/template",
        ThinkTemplateRequest => ThinkTemplateResponse, think_template;

    /// Write a thinking card: a trace entry and a graph node (+ supports/blocks edges), on a target
    /// or on branch+trace_doc+graph_doc. The same card again writes nothing; the same id with
    /// another card is 409.
    BranchmindThinkCard: branchmind_think_card, Post "/reasoning/think/card",
        ThinkCardRequest => ThinkCardResponse, think_card;

    /// The newest cards of a graph with counts by type: a low-noise slice to resume thinking.
    BranchmindThinkContext: branchmind_think_context, Post "/reasoning/think/context",
        ThinkContextRequest => ThinkContextResponse, think_context;

    /// The card to write next (a frame, evidence for an open question, a test for a hypothesis, a
    /// decision), as a filled skeleton; next:null when all is settled.
    BranchmindThinkNext: branchmind_think_next, Post "/reasoning/think/next",
        ThinkNextRequest => ThinkNextResponse, think_next;

    /// Full-text search over a workspace's notes, trace and cards: where did we decide X? Ranked
    /// hits with the passage in snippet.
    BranchmindSearch: branchmind_search, Post "/reasoning/search",
        ReasoningSearchRequest => ReasoningSearchResponse, search;

}

/// Tail pagination by sequence, the same on every list-like read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SeqPagination {
    /// The cursor this page was read from (exclusive upper bound on `seq`); null for the newest.
    pub cursor: Option<i64>,
    /// Pass as `cursor` to read the next, older page; null when there is none.
    pub next_cursor: Option<i64>,
    pub has_more: bool,
    pub limit: i64,
    /// Items on this page.
    pub count: i64,
}

/// What an output budget allowed and what the answer used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Budget {
    pub max_chars: i64,
    /// Characters of the whole serialized answer.
    pub used_chars: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_bytes: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<i64>,
    /// Lines of text in the answer's string values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub used_lines: Option<i64>,
    pub truncated: bool,
    /// Set when a cap was below the smallest answer the read can give: names the cap and what
    /// it was clamped to (the answer then exceeds it, and `truncated` is true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// One entry of a document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Entry {
    /// Position in the store's one sequence: orders every entry and graph version.
    pub seq: i64,
    /// Unix seconds.
    pub ts: i64,
    pub ts_ms: i64,
    pub branch: String,
    pub doc: String,
    /// `note` (written by an agent), `event` (a task mutation), or the kind given to
    /// `branchmind_commit`.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// The idempotency key it was written with (`merge:<branch>:<seq>`, a task event id, a
    /// card id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_event_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<Value>,
    /// Set when an output budget cut this entry's content to fit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub content_truncated: bool,
}

/// Where a plan's or task's reasoning lives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ReasoningRef {
    /// `task/TASK-001` or `plan/PLAN-001`.
    pub branch: String,
    /// `notes`.
    pub notes_doc: String,
    /// `TASK-001-graph`.
    pub graph_doc: String,
    /// `TASK-001-trace`.
    pub trace_doc: String,
}

/// `branchmind_init`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct InitRequest {
    /// Workspace (a stable project id).
    pub workspace: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct InitResponse {
    pub workspace: String,
    /// The directory holding the database.
    pub storage_dir: String,
    pub schema_version: i64,
    /// The checked-out branch (`main` at first).
    pub checkout: String,
}

/// `branchmind_status`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ReasoningStatusRequest {
    pub workspace: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ReasoningStatus {
    pub workspace: String,
    pub schema_version: i64,
    pub checkout: String,
    /// Branches of the workspace, `main` included.
    pub branches: i64,
    /// The newest task event of the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_event_id: Option<String>,
    /// Its time, unix seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_event_ts: Option<i64>,
    /// The newest sequence number written in the workspace's documents and graphs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seq: Option<i64>,
}
