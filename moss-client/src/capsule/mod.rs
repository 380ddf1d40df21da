//! Capsule wire types: the requests and responses of the `capsule_*` operations (the core ones
//! here; search, compose and append, bulk operations, export and import in submodules, all
//! re-exported here by name).
//!
//! Requests reject unknown fields, so a misspelt argument is an `INVALID_REQUEST` naming it
//! instead of a silently ignored option. Doc comments here are the descriptions MCP clients see.

mod bulk;
mod compose;
mod history;
mod search;
mod transfer;
mod watch;

use serde::{Deserialize, Serialize};

use crate::error::ErrorCode;

pub use bulk::{
    BulkDeleteRequest, BulkDeleteResponse, BulkUpdateRequest, BulkUpdateResponse, PurgeRequest,
    PurgeResponse,
};
pub use compose::{
    AppendHit, AppendPosition, AppendRequest, AppendResponse, AppendSection, ComposeFormat,
    ComposeItem, ComposePart, ComposeParts, ComposePivot, ComposeRequest, ComposeResponse, StoreAs,
};
pub use history::{
    CapsuleVersion, CloneRequest, CloneSet, CloneTarget, DiffRef, DiffRequest, DiffResponse,
    DiffSummary, LineageNode, LineageRequest, LineageResponse, RestoreMode, RestoreRequest,
    RestoreResponse, SectionState, VersionsRequest, VersionsResponse,
};
pub use search::{SearchHit, SearchPage, SearchRequest};
pub use transfer::{
    ExportRequest, ExportResponse, ImportMode, ImportRecordError, ImportRequest, ImportResponse,
};
pub use watch::{
    StatsRequest, StatsResponse, WatchChange, WatchEvent, WatchRequest, WatchResponse,
};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

crate::op::ops! {
    /// Every capsule operation, in listing order.
    table OPS, handle Capsules;

    /// Store a capsule: a distilled handoff another session resumes from. capsule_text needs the
    /// six sections (headers, `Name:` lines or JSON keys). Errors: 422 CAPSULE_TOO_THIN
    /// (details.missing), 413 CAPSULE_TOO_LARGE, 409 NAME_ALREADY_EXISTS.
    CapsuleStore: capsule_store, Post "/capsules",
        StoreRequest => CapsuleHandle, store;

    /// Load one capsule with its text; version -1 reads the previous revision. Evidence comes as
    /// {type, ref, chars}.
    CapsuleFetch: capsule_fetch, Get "/capsules/{id}",
        FetchRequest => Capsule, fetch (manual);

    /// Load up to 50 capsules: found ones in items (request order), missing ones in errors with
    /// their ref and code.
    CapsuleFetchMany: capsule_fetch_many, Post "/capsules/fetch-many",
        FetchManyRequest => FetchManyResponse, fetch_many;

    /// Change an active capsule's text (linted like store), metadata, based_on or evidence (lists
    /// are replaced whole). The id and name never change.
    CapsuleUpdate: capsule_update, Put "/capsules/{id}",
        UpdateRequest => CapsuleHandle, update (manual);

    /// Soft-delete an active capsule: it frees its name and stays readable with include_deleted.
    CapsuleDelete: capsule_delete, Delete "/capsules/{id}",
        DeleteRequest => DeleteResponse, delete (manual);

    /// The most recently updated capsule of a workspace, e.g. the latest design capsule of a run;
    /// {"item": null} if none.
    CapsuleLatest: capsule_latest, Get "/capsules/latest",
        LatestRequest => LatestResponse, latest;

    /// Summaries (no text) of one workspace's capsules, newest first.
    CapsuleList: capsule_list, Get "/capsules",
        ListRequest => CapsulePage, list;

    /// Summaries (no text) of capsules across all workspaces, newest first.
    CapsuleInventory: capsule_inventory, Get "/capsules/inventory",
        InventoryRequest => CapsulePage, inventory;

    /// Full-text search over capsule titles (5x) and texts; hits carry a <b> snippet and a
    /// fetch_key. Bad FTS5 syntax is 400: pass safe_query.
    CapsuleSearch: capsule_search, Get "/capsules/search",
        SearchRequest => SearchPage, search;

    /// Assemble up to 50 capsules into one bundle: markdown (`## <title>` + text, parts separated
    /// by `---`) or json. Items are refs or filters, expanded oldest first where they stand; a
    /// missing ref is 404, an empty filter is skipped. Over capsule_max_chars is 413.
    CapsuleCompose: capsule_compose, Post "/capsules/compose",
        ComposeRequest => ComposeResponse, compose;

    /// Soft-delete every active capsule matching all the filters given (at least one). Returns the
    /// count.
    CapsuleBulkDelete: capsule_bulk_delete, Post "/capsules/bulk-delete",
        BulkDeleteRequest => BulkDeleteResponse, bulk_delete;

    /// Set phase, role or tags on every active capsule matching all the filters given (at least one
    /// filter and one set_ field). Returns the count.
    CapsuleBulkUpdate: capsule_bulk_update, Post "/capsules/bulk-update",
        BulkUpdateRequest => BulkUpdateResponse, bulk_update;

    /// Delete soft-deleted capsules for good, or with run_id and confirm every capsule of the runs.
    /// Cannot be undone.
    CapsulePurge: capsule_purge, Post "/capsules/purge",
        PurgeRequest => PurgeResponse, purge;

    /// Add markdown under a section of an active capsule without rewriting the rest; a placeholder
    /// body ((pending), TBD, N/A, -, none) is replaced. A missing section is 400 listing those
    /// there are.
    CapsuleAppend: capsule_append, Post "/capsules/append",
        AppendRequest => AppendResponse, append;

    /// Long poll for the next capsule change matching the filters: {event (created, updated,
    /// deleted, purged, timeout), capsule, cursor}. Pass cursor back as since to miss nothing.
    CapsuleWatch: capsule_watch, Get "/capsules/watch",
        WatchRequest => WatchResponse, watch;

    /// Counts without reading texts: capsule_count, total_chars, by_phase, by_role, oldest, newest,
    /// deleted_count.
    CapsuleStats: capsule_stats, Get "/capsules/stats",
        StatsRequest => StatsResponse, stats;

    /// Undelete a soft-deleted capsule (by name: the latest deleted of that name).
    CapsuleRestore: capsule_restore, Post "/capsules/restore",
        RestoreRequest => RestoreResponse, restore;

    /// A capsule's lineage both ways, breadth first: based_on (what it came from) and derived (what
    /// names it), at most 100 nodes each way.
    CapsuleLineage: capsule_lineage, Get "/capsules/lineage",
        LineageRequest => LineageResponse, lineage;

    /// Copy an active capsule into a new one (fresh id, based_on the source); target and set
    /// override its place and metadata.
    CapsuleClone: capsule_clone, Post "/capsules/clone",
        CloneRequest => CapsuleHandle, clone_capsule;

    /// The earlier revisions kept of a capsule (config capsule_versions, default 10), newest first,
    /// without text.
    CapsuleVersions: capsule_versions, Get "/capsules/versions",
        VersionsRequest => VersionsResponse, versions;

    /// Compare two capsules, or two versions of one, section by section: each section unchanged,
    /// modified, added or removed_content, with a summary.
    CapsuleDiff: capsule_diff, Post "/capsules/diff",
        DiffRequest => DiffResponse, diff;

    /// Back up capsules to a JSONL file (mode 0600, written atomically); returns its path, count
    /// and bytes. Sends progress given a progressToken.
    CapsuleExport: capsule_export, Post "/capsules/export",
        ExportRequest => ExportResponse, export (manual);

    /// Restore capsules from a capsule_export file, all or nothing. A bad line is 400
    /// INVALID_RECORD naming it; over max_import_bytes is 413. Sends progress given a
    /// progressToken.
    CapsuleImport: capsule_import, Post "/capsules/import",
        ImportRequest => ImportResponse, import (manual);

}

/// Metadata an agent can paste into a task to point back at a capsule.
///
/// Named capsules are referenced by workspace and name; unnamed ones by id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct FetchKey {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moss_capsule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moss_workspace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moss_id: Option<String>,
}

/// Run ids: `"r1"`, `["r1", "r2"]` or `"r1,r2"`.
// A comma separates run ids so that a list also fits in a query string; it is sent that way.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(untagged)]
pub enum RunIds {
    One(String),
    Many(Vec<String>),
}

impl RunIds {
    /// The run ids: split on commas, trimmed, blanks dropped, duplicates kept once.
    pub fn to_vec(&self) -> Vec<String> {
        let parts: Vec<&String> = match self {
            RunIds::One(s) => vec![s],
            RunIds::Many(v) => v.iter().collect(),
        };
        let mut out: Vec<String> = Vec::new();
        for p in parts {
            for id in p.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                if !out.iter().any(|o| o == id) {
                    out.push(id.to_string());
                }
            }
        }
        out
    }
}

impl Serialize for RunIds {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_vec().join(","))
    }
}

impl From<&str> for RunIds {
    fn from(s: &str) -> Self {
        RunIds::One(s.to_string())
    }
}

impl From<Vec<String>> for RunIds {
    fn from(v: Vec<String>) -> Self {
        RunIds::Many(v)
    }
}

/// How `capsule_store` treats an active capsule that already holds the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum StoreMode {
    /// Fail with 409 NAME_ALREADY_EXISTS (default).
    #[default]
    Error,
    /// Overwrite the active capsule in place, keeping its id; create it if none is active.
    Replace,
}

crate::fields::wire_struct! {
    /// A reference to one capsule: `id`, or `workspace` + `name`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct CapsuleRef {
        ..capsule_ref,
    }
}

impl CapsuleRef {
    pub fn by_id(id: impl Into<String>) -> Self {
        CapsuleRef {
            id: Some(id.into()),
            ..Default::default()
        }
    }

    pub fn by_name(workspace: impl Into<String>, name: impl Into<String>) -> Self {
        CapsuleRef {
            id: None,
            workspace: Some(workspace.into()),
            name: Some(name.into()),
        }
    }
}

/// Evidence to keep with a capsule (`evidence` of store and update): a snippet, a transcript
/// ref, a link. Kept beside the text and not counted in its size; `capsule_fetch` lists it and
/// returns `content` only with `expand_evidence`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    /// e.g. snippet, transcript, link; 1-32 chars.
    #[serde(rename = "type")]
    pub kind: String,
    /// Where, e.g. "src/auth.ts:42"; 1-500 chars.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The evidence, at most 4000 chars.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// Evidence as `capsule_fetch` returns it: `content` only with `expand_evidence: true`;
/// `chars` says how long it is either way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
pub struct EvidenceItem {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(rename = "ref")]
    pub reference: String,
    /// Characters of `content` (0 when there is none).
    pub chars: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

crate::fields::wire_struct! {
    /// Arguments of `capsule_store`.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct StoreRequest {
        /// The six sections; at most capsule_max_chars (12000).
        pub capsule_text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub workspace: Option<String>,
        /// Unique among the workspace's active capsules.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub name: Option<String>,
        /// Default: the name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        /// e.g. ["auth"].
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tags: Option<Vec<String>>,
        /// Who wrote it, e.g. "codex".
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub source: Option<String>,
        ..run(
            String,
            run_id: "Orchestration run, e.g. \"pr-42\".",
            phase: "e.g. \"design\".",
            role: "e.g. \"reviewer\".",
        ),
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task: Option<String>,
        /// replace overwrites the capsule of that name, keeping its id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mode: Option<StoreMode>,
        /// Skip the sections check.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub allow_thin: Option<bool>,
        /// Refs it derives from, at most 20.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub based_on: Option<Vec<CapsuleRef>>,
        /// At most 20, not counted in the size.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub evidence: Option<Vec<Evidence>>,
    }
}

/// What a write answers: the capsule's id and its fetch key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct CapsuleHandle {
    pub id: String,
    pub fetch_key: FetchKey,
    /// The capsule's revision after this write (for `if_revision`).
    #[serde(default)]
    pub revision: i64,
    /// The capsule's `updated_at` after this write (for `if_updated_at`).
    #[serde(default)]
    pub updated_at: i64,
}

crate::fields::wire_struct! {
    /// Arguments of `capsule_fetch`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(
        feature = "schema",
        derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
    )]
    #[serde(deny_unknown_fields)]
    #[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
    pub struct FetchRequest {
        ..capsule_ref,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub include_deleted: Option<bool>,
        /// Default true.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub include_text: Option<bool>,
        /// -1 the previous version, -2 the one before; >0 a revision.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub version: Option<i64>,
        /// Include evidence content.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub expand_evidence: Option<bool>,
    }
}

crate::fields::wire_struct! {
    /// A capsule as returned by fetch, latest and the browse operations.
    ///
    /// `capsule_text` is present only where the operation returns text; summaries never carry it.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    #[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
    pub struct Capsule {
        pub id: String,
        pub workspace: String,
        pub workspace_norm: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub name_norm: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub capsule_text: Option<String>,
        pub capsule_chars: i64,
        pub tokens_estimate: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tags: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub source: Option<String>,
        ..run(String),
        /// The plan or task it was handed off for.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task: Option<String>,
        pub created_at: i64,
        pub updated_at: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub deleted_at: Option<i64>,
        /// 1 when stored, then one more with every change (update, append, delete, bulk change,
        /// replace, restore): the precise guard for `if_revision`.
        #[serde(default)]
        pub revision: i64,
        /// The capsules this one was based on, as given when it was stored (they need not exist).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub based_on: Option<Vec<CapsuleRef>>,
        /// The evidence kept with the capsule (`capsule_fetch` only): content with
        /// `expand_evidence`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub evidence: Option<Vec<EvidenceItem>>,
        pub fetch_key: FetchKey,
    }
}

/// Arguments of `capsule_fetch_many`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct FetchManyRequest {
    /// 1-50 refs.
    pub items: Vec<CapsuleRef>,
    /// Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_text: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_deleted: Option<bool>,
}

/// One reference `capsule_fetch_many` could not resolve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct FetchManyError {
    #[serde(rename = "ref")]
    pub reference: CapsuleRef,
    pub code: ErrorCode,
    pub message: String,
}

/// Result of `capsule_fetch_many`: what was found, in request order, and what was not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct FetchManyResponse {
    pub items: Vec<Capsule>,
    pub errors: Vec<FetchManyError>,
}

crate::fields::wire_struct! {
    /// Arguments of `capsule_update`. Address with `id` or `workspace` + `name`; those are not changed.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct UpdateRequest {
        ..capsule_ref,
        /// New text, linted like store.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub capsule_text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tags: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub source: Option<String>,
        ..run(String),
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task: Option<String>,
        /// Skip the sections check.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub allow_thin: Option<bool>,
        /// Like if_revision, by updated_at (seconds).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub if_updated_at: Option<i64>,
        /// Write only if revision is still this.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub if_revision: Option<i64>,
        /// At most 20.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub based_on: Option<Vec<CapsuleRef>>,
        /// At most 20.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub evidence: Option<Vec<Evidence>>,
    }
}

crate::fields::wire_struct! {
    /// Arguments of `capsule_delete` (soft delete).
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(
        feature = "schema",
        derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
    )]
    #[serde(deny_unknown_fields)]
    #[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
    pub struct DeleteRequest {
        ..capsule_ref,
    }
}

/// Result of `capsule_delete`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct DeleteResponse {
    pub deleted: bool,
    pub id: String,
}

crate::fields::wire_struct! {
    /// Arguments of `capsule_latest`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(
        feature = "schema",
        derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
    )]
    #[serde(deny_unknown_fields)]
    #[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
    pub struct LatestRequest {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub workspace: Option<String>,
        /// Default false.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub include_text: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub include_deleted: Option<bool>,
        ..run(RunIds),
    }
}

/// Result of `capsule_latest`: `{"item": null}` when the workspace has no capsule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct LatestResponse {
    pub item: Option<Capsule>,
    /// Set when the workspace holds nothing in any family (see moss_workspaces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

crate::fields::wire_struct! {
    /// Arguments of `capsule_list` (one workspace, summaries only).
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(
        feature = "schema",
        derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
    )]
    #[serde(deny_unknown_fields)]
    #[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
    pub struct ListRequest {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub workspace: Option<String>,
        /// Default 20, at most 100.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub limit: Option<i64>,
        /// Default 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub offset: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub include_deleted: Option<bool>,
        ..run(RunIds),
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task: Option<String>,
    }
}

crate::fields::wire_struct! {
    /// Arguments of `capsule_inventory` (all workspaces, summaries only).
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(
        feature = "schema",
        derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
    )]
    #[serde(deny_unknown_fields)]
    #[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
    pub struct InventoryRequest {
        ..capsule_filter,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub include_deleted: Option<bool>,
        /// Default 100, at most 500.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub limit: Option<i64>,
        /// Default 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub offset: Option<i64>,
    }
}

/// Where a page sits in the whole result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Pagination {
    pub limit: i64,
    pub offset: i64,
    pub has_more: bool,
    /// Every match; absent when a search was asked `count_total: false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<i64>,
}

/// A page of capsule summaries (`capsule_list`, `capsule_inventory`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct CapsulePage {
    pub items: Vec<Capsule>,
    pub pagination: Pagination,
    pub sort: String,
    /// `capsule_list`: set when the workspace holds nothing in any family (see
    /// moss_workspaces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}
