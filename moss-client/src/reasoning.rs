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

crate::op::ops! {
    /// Every reasoning operation, in listing order.
    table OPS, handle Reasoning;

    /// Initialize a workspace's reasoning memory (idempotent): returns its storage directory,
    /// schema version and checked-out branch (main at first).
    BranchmindInit: branchmind_init, Post "/reasoning/init",
        InitRequest => InitResponse, init;

    /// Fast snapshot of a workspace: schema version, checked-out branch, branch count, the newest
    /// task event (last_event_id, last_event_ts) and the newest sequence written.
    BranchmindStatus: branchmind_status, Post "/reasoning/status",
        ReasoningStatusRequest => ReasoningStatus, status;

    /// Append one note (a decision, its rationale, evidence) to the notes of a target
    /// (PLAN-###/TASK-###, with branch for a branch made from its branch) or to branch+doc (doc
    /// alone: the checked-out branch). Returns the entry with its seq. Errors: 400 INVALID_REQUEST
    /// when neither target nor doc is given, 404 NOT_FOUND for an unknown target or branch, each
    /// with details.suggested_call.
    BranchmindNotesCommit: branchmind_notes_commit, Post "/reasoning/notes/commit",
        NotesCommitRequest => CommitResponse, notes_commit;

    /// Append an entry of any kind (e.g. decision, evidence, summary) to any branch+doc, or to a
    /// target's notes. source_event_id makes it idempotent: an entry with that key in the document
    /// already is returned with inserted:false.
    BranchmindCommit: branchmind_commit, Post "/reasoning/commit",
        CommitRequest => CommitResponse, commit;

    /// Read a document newest first: target (+doc_kind notes|trace) or branch+doc. On a derived
    /// branch this is the effective view: the base's entries up to base_seq plus the branch's own.
    /// Page with cursor=pagination.next_cursor.
    BranchmindShow: branchmind_show, Post "/reasoning/show",
        ShowRequest => ShowResponse, show;

    /// A branch's entries across all its documents (its effective view), newest first, optionally
    /// of one kind. Page with cursor=pagination.next_cursor.
    BranchmindLog: branchmind_log, Post "/reasoning/log",
        LogRequest => LogResponse, log;

    /// Everything to resume a plan or task in one bounded call: the target, its reasoning_ref, and
    /// the newest notes and trace entries. max_chars covers the whole snapshot.
    BranchmindExport: branchmind_export, Post "/reasoning/export",
        ReasoningExportRequest => ReasoningExport, export;

    /// Entries in to's view of a document that are not in from's view (directional: swap the
    /// branches for the other side). doc defaults to notes.
    BranchmindDiff: branchmind_diff, Post "/reasoning/diff",
        DiffRequest => DiffResponse, diff;

    /// Copy the notes of from's view that into's view lacks into into (other kinds are ignored).
    /// Idempotent: each copy carries source_event_id merge:<branch>:<seq>, so a second run merges
    /// nothing. dry_run:true only counts. Large merges page with cursor.
    BranchmindMerge: branchmind_merge, Post "/reasoning/merge",
        MergeRequest => MergeResponse, merge;

    /// Create a branch from another (default: the checked-out branch) without copying: it records
    /// base_branch and base_seq, and sees the base as it was at base_seq. Errors: 409 CONFLICT if
    /// the name exists.
    BranchmindBranchCreate: branchmind_branch_create, Post "/reasoning/branch/create",
        BranchCreateRequest => BranchCreateResponse, branch_create;

    /// List a workspace's branches, newest first (canonical task/plan branches included, main
    /// last), with their base and whether checked out.
    BranchmindBranchList: branchmind_branch_list, Post "/reasoning/branch/list",
        BranchListRequest => BranchListResponse, branch_list;

    /// Set the workspace's current branch (ref must exist): reads and writes that name a doc but no
    /// target and no branch use it. Task state is not affected.
    BranchmindCheckout: branchmind_checkout, Post "/reasoning/checkout",
        CheckoutRequest => CheckoutResponse, checkout;

    /// Apply typed graph operations atomically (all or none) to a target's graph or branch+doc:
    /// node_upsert {id,type,title?,text?,status?,tags?,meta?}, node_delete {id}, edge_upsert
    /// {from,rel,to,meta?}, edge_delete {from,rel,to}. Each op is a new version; deletion is a
    /// tombstone. Ids: no control characters, no `|`; task: and step: are reserved for the task
    /// projection.
    BranchmindGraphApply: branchmind_graph_apply, Post "/reasoning/graph/apply",
        GraphApplyRequest => GraphApplyResponse, graph_apply;

    /// Query the effective graph: filter by ids, types, status, tags_any, tags_all, text; nodes
    /// newest first (limit 50), with the edges between them (edges_limit 200). Page with
    /// cursor=pagination.next_cursor. Edges are dropped before nodes to fit max_chars.
    BranchmindGraphQuery: branchmind_graph_query, Post "/reasoning/graph/query",
        GraphQueryRequest => GraphQueryResponse, graph_query;

    /// Check the effective graph: every edge's endpoints must be live nodes. Returns ok, counts,
    /// and up to max_errors (50) dangling_edge errors.
    BranchmindGraphValidate: branchmind_graph_validate, Post "/reasoning/graph/validate",
        GraphValidateRequest => GraphValidateResponse, graph_validate;

    /// Node and edge states in to's graph that differ from from's (a deletion is to.deleted:true),
    /// newest first. doc is required (a task's graph is TASK-###-graph).
    BranchmindGraphDiff: branchmind_graph_diff, Post "/reasoning/graph/diff",
        GraphDiffRequest => GraphDiffResponse, graph_diff;

    /// 3-way merge of a derived branch's graph back into its base (into must be from's base_branch,
    /// else 409 MERGE_INTO_NON_BASE). Keys changed only on from are written into into; keys changed
    /// on both sides differently become conflicts (ids are deterministic: rerunning finds the same
    /// ones and creates none). dry_run:true only counts. doc is required (a task's graph is
    /// TASK-###-graph).
    BranchmindGraphMerge: branchmind_graph_merge, Post "/reasoning/graph/merge",
        MergeRequest => GraphMergeResponse, graph_merge;

    /// List the graph conflicts of a merge destination's graph doc (required), newest first,
    /// optionally by status (open or resolved).
    BranchmindGraphConflicts: branchmind_graph_conflicts, Post "/reasoning/graph/conflicts",
        GraphConflictsRequest => GraphConflictsResponse, graph_conflicts;

    /// Show one conflict with its three states: base (at branching), theirs (from), ours (into).
    BranchmindGraphConflictShow: branchmind_graph_conflict_show, Post "/reasoning/graph/conflict/show",
        ConflictShowRequest => ConflictShowResponse, graph_conflict_show;

    /// Resolve a conflict: use_from writes from's state into into as a new version; use_into keeps
    /// into as it is. Both mark it resolved; resolving again changes nothing.
    BranchmindGraphConflictResolve: branchmind_graph_conflict_resolve, Post "/reasoning/graph/conflict/resolve",
        ConflictResolveRequest => ConflictResolveResponse, graph_conflict_resolve;

    /// The skeleton of a card type (frame, hypothesis, question, test, evidence, decision, note,
    /// update) as JSON and as key: value lines. An unknown type is 400 INVALID_REQUEST listing
    /// details.supported_types.
    BranchmindThinkTemplate: branchmind_think_template, Post "/reasoning/think/template",
        ThinkTemplateRequest => ThinkTemplateResponse, think_template;

    /// Write a thinking card: a trace entry and a graph node (+ supports/blocks edges) in one
    /// transaction, on a target's trace and graph (with branch: on a branch made from its branch)
    /// or on branch+trace_doc+graph_doc. card is an object, a JSON string, or key: value lines; it
    /// needs id, type and a title or text (unknown keys go to meta). The same card again writes
    /// nothing (inserted:false); the same id with a different card is 409 CONFLICT.
    BranchmindThinkCard: branchmind_think_card, Post "/reasoning/think/card",
        ThinkCardRequest => ThinkCardResponse, think_card;

    /// The newest cards of a graph (limit_cards 30) with counts by type: a low-noise slice to
    /// resume thinking.
    BranchmindThinkContext: branchmind_think_context, Post "/reasoning/think/context",
        ThinkContextRequest => ThinkContextResponse, think_context;

    /// The one card to write next, chosen deterministically from the graph: a frame if none; else
    /// evidence for the oldest open question nothing answers; a test for the oldest open hypothesis
    /// nothing tests; evidence for a test without any; a decision once evidence is in. Returns a
    /// filled skeleton and the supports edge; next:null when all is settled.
    BranchmindThinkNext: branchmind_think_next, Post "/reasoning/think/next",
        ThinkNextRequest => ThinkNextResponse, think_next;

    /// Full-text search over a workspace's notes, trace and cards (titles and texts): where did we
    /// decide X? Hits are ranked, with the matching passage in snippet.
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
    /// Workspace (a stable project identifier). Required.
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
    /// Workspace. Required.
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

/// `branchmind_graph_apply`: an atomic batch of graph operations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GraphApplyRequest {
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
    pub doc: Option<String>,
    /// 1-1000 operations, applied all or none.
    pub ops: Vec<GraphOp>,
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

/// `branchmind_graph_query`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GraphQueryRequest {
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
    pub doc: Option<String>,
    /// Only these node ids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ids: Option<Vec<String>>,
    /// Only these node types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub types: Option<Vec<String>>,
    /// Only nodes with this status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Nodes with at least one of these tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags_any: Option<Vec<String>>,
    /// Nodes with all of these tags.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags_all: Option<Vec<String>>,
    /// Case-insensitive substring of the id, title or text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Nodes with `last_seq` below this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<i64>,
    /// Nodes per page, 1-200 (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_edges: Option<bool>,
    /// 0-1000 (default 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edges_limit: Option<i64>,
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

/// `branchmind_graph_validate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GraphValidateRequest {
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
    pub doc: Option<String>,
    /// 1-1000 (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_errors: Option<i64>,
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

/// `branchmind_graph_diff`: node and edge states of `to` that differ from `from`'s.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GraphDiffRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// Branch compared against.
    pub from: String,
    /// Branch whose differing states are listed.
    pub to: String,
    /// Graph document, required (a plan's or task's graph is `<ID>-graph`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
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

/// `branchmind_graph_conflicts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GraphConflictsRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// Merge destination.
    pub into: String,
    /// Graph document, required (a plan's or task's graph is `<ID>-graph`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// `open` or `resolved` (default: both).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
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
    /// Workspace. Required.
    pub workspace: String,
    /// A conflict id from branchmind_graph_merge or branchmind_graph_conflicts.
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
    /// Workspace. Required.
    pub workspace: String,
    /// A conflict id from branchmind_graph_merge or branchmind_graph_conflicts.
    pub conflict_id: String,
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
