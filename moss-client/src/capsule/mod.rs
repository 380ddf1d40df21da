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

    /// Store a capsule: a size-bounded, distilled handoff another session can pick up. capsule_text
    /// must contain the sections Objective, Current status, Decisions, Next actions, Key locations
    /// and Open questions (markdown headers, `Name:` lines or JSON keys; synonyms accepted) and be
    /// at most capsule_max_chars (12000) characters. Name it to fetch it later by workspace+name.
    /// mode "replace" overwrites the active capsule of that name (id kept). evidence: up to 20
    /// {type, ref, content} (snippets, transcript refs) kept beside the text, not counted in its
    /// size. Errors: 409 NAME_ALREADY_EXISTS, 413 CAPSULE_TOO_LARGE, 422 CAPSULE_TOO_THIN
    /// (details.missing lists the sections to add).
    CapsuleStore: capsule_store, Post "/capsules",
        StoreRequest => CapsuleHandle, store;

    /// Load one capsule with its full text, by id or by workspace+name (not both: 400
    /// AMBIGUOUS_ADDRESSING). include_text:false peeks at the summary only. Soft-deleted capsules
    /// are 404 NOT_FOUND unless include_deleted:true. version:-1 reads the previous revision kept,
    /// -2 the one before (capsule_versions lists them). Evidence comes as {type, ref, chars};
    /// expand_evidence:true adds each content.
    CapsuleFetch: capsule_fetch, Get "/capsules/{id}",
        FetchRequest => Capsule, fetch (manual);

    /// Load up to 50 capsules in one call, each ref by id or workspace+name. Partial success: found
    /// capsules come back in items (request order), missing ones in errors with their ref and code.
    CapsuleFetchMany: capsule_fetch_many, Post "/capsules/fetch-many",
        FetchManyRequest => FetchManyResponse, fetch_many;

    /// Update an active capsule's text (linted and size-checked like store), title, tags, source,
    /// run_id, phase, role, based_on or evidence (replaced whole). Address it by id or
    /// workspace+name; the address itself never changes. "" clears a text field, [] clears tags,
    /// based_on or evidence. if_revision (precise) or if_updated_at guards against overwriting
    /// someone else's change: 409 CONFLICT with the current revision and updated_at, nothing
    /// written.
    CapsuleUpdate: capsule_update, Put "/capsules/{id}",
        UpdateRequest => CapsuleHandle, update (manual);

    /// Soft-delete an active capsule by id or workspace+name. It stays readable with
    /// include_deleted:true, frees its name, and shows as the latest change.
    CapsuleDelete: capsule_delete, Delete "/capsules/{id}",
        DeleteRequest => DeleteResponse, delete (manual);

    /// The most recently updated capsule of a workspace, as a summary (or with text if
    /// include_text:true); {"item": null} if there is none. Filter by run_id, phase and role to get
    /// e.g. the latest design capsule of a run.
    CapsuleLatest: capsule_latest, Get "/capsules/latest",
        LatestRequest => LatestResponse, latest;

    /// Summaries (never text) of one workspace's capsules, newest first, with pagination (limit
    /// default 20, max 100). Filter by run_id (one, a list, or comma-separated), phase, role.
    CapsuleList: capsule_list, Get "/capsules",
        ListRequest => CapsulePage, list;

    /// Summaries (never text) of capsules across all workspaces, newest first (limit default 100,
    /// max 500). Filter by workspace, tag, name_prefix, run_id, phase, role.
    CapsuleInventory: capsule_inventory, Get "/capsules/inventory",
        InventoryRequest => CapsulePage, inventory;

    /// Full-text search over capsule titles and texts (FTS5, BM25; title matches weigh 5x). query
    /// (max 1000 chars): words, "exact phrases", prefix*, AND/OR/NOT. Filters: workspace, tag,
    /// run_id, phase, role, include_deleted; limit default 20, max 100. Each hit has a ~300-char
    /// snippet with <b> highlights (the capsule's text is HTML-escaped) and a fetch_key to load it
    /// with capsule_fetch. No match is an empty items list. Invalid FTS5 syntax is 400
    /// INVALID_REQUEST: quote punctuation.
    CapsuleSearch: capsule_search, Get "/capsules/search",
        SearchRequest => SearchPage, search;

    /// Assemble up to 50 capsules into one bundle: markdown `## <title|name|id>` + text, parts
    /// separated by `---`, or format "json", whose bundle_text is the JSON document {"parts":[{id,
    /// workspace, name, display_name, text, chars}]}. Each item is a ref (id, or workspace+name) or
    /// a filter ({"run_id": "pr-42"}; any of workspace, run_id, phase, role, tag, ANDed) expanding
    /// to every matching active capsule, oldest first, at its position; over 50 once expanded is
    /// 400 INVALID_REQUEST with details.expanded_count. sections keeps only the named sections
    /// (e.g. ["Decisions","Open questions"]). pivot "section" groups by section instead (each
    /// section once, every capsule's part under it; markdown only); include_attribution starts each
    /// part with `**name** (role):`. A missing ref is 404 NOT_FOUND (nothing composed); a filter
    /// matching nothing is skipped. Over capsule_max_chars is 413 COMPOSE_TOO_LARGE. store_as
    /// {name, …} also stores the markdown bundle as a capsule (linted like capsule_store; not with
    /// json).
    CapsuleCompose: capsule_compose, Post "/capsules/compose",
        ComposeRequest => ComposeResponse, compose;

    /// Soft-delete every active capsule matching ALL given filters (workspace, tag, name_prefix,
    /// run_id, phase, role). At least one non-empty filter is required (400 INVALID_REQUEST
    /// otherwise). Returns the count; 0 matches is not an error.
    CapsuleBulkDelete: capsule_bulk_delete, Post "/capsules/bulk-delete",
        BulkDeleteRequest => BulkDeleteResponse, bulk_delete;

    /// Set phase, role or tags (set_phase, set_role, set_tags) on every active capsule matching ALL
    /// given filters (workspace, tag, name_prefix, run_id, phase, role). Needs at least one
    /// non-empty filter and one set_ field. "" clears phase or role, [] clears tags; tags are
    /// replaced, not merged. Returns the count.
    CapsuleBulkUpdate: capsule_bulk_update, Post "/capsules/bulk-update",
        BulkUpdateRequest => BulkUpdateResponse, bulk_update;

    /// Permanently delete soft-deleted capsules (all, or of one workspace, or deleted at least
    /// older_than_days ago); active capsules are not touched. With run_id (one, a list, or
    /// comma-separated): every capsule of the run(s), active ones included, and only with
    /// confirm:true; without it, 400 INVALID_REQUEST says how many would go (details.would_purge).
    /// Cannot be undone.
    CapsulePurge: capsule_purge, Post "/capsules/purge",
        PurgeRequest => PurgeResponse, purge;

    /// Add markdown under one section of an active capsule (by id or workspace+name) without
    /// rewriting the rest, e.g. to log a review. section is the header text as written ("Design
    /// Reviews" for `## Design Reviews`), matched case-insensitively, no synonyms; a missing
    /// section is 400 INVALID_REQUEST listing the available ones. A placeholder body ((pending),
    /// TBD, N/A, -, none) is replaced; otherwise content goes after it (position "prepend": right
    /// under the header) with a blank line. sections [{section, content}] writes several at once,
    /// all or none. if_placeholder:true writes only into placeholder sections (409 CONFLICT
    /// otherwise); if_revision / if_updated_at guard against concurrent changes (409 CONFLICT,
    /// nothing written). 413 CAPSULE_TOO_LARGE if the result exceeds capsule_max_chars.
    CapsuleAppend: capsule_append, Post "/capsules/append",
        AppendRequest => AppendResponse, append;

    /// Wait (long poll, timeout_ms default 30000, max 300000) for the next capsule created,
    /// updated, deleted or purged that matches the filter (workspace, run_id, phase, role, tag,
    /// name_prefix; ANDed). Returns {event: created|updated|deleted|purged|timeout, capsule
    /// (summary; for purged, as it was), cursor}; purges stay listed 7 days. Pass cursor back as
    /// since: a change committed between two calls is returned by the next one, none twice; several
    /// changes to one capsule in between arrive as one event with its latest state. limit (default
    /// 1, max 100) returns up to that many changes at once in events, oldest first.
    CapsuleWatch: capsule_watch, Get "/capsules/watch",
        WatchRequest => WatchResponse, watch;

    /// Counts of capsules without reading their texts: capsule_count, total_chars, by_phase,
    /// by_role, oldest and newest (RFC 3339) of the active capsules, and deleted_count
    /// (soft-deleted, awaiting purge). Filter by workspace and run_id (one, a list, or
    /// comma-separated).
    CapsuleStats: capsule_stats, Get "/capsules/stats",
        StatsRequest => StatsResponse, stats;

    /// Undelete a soft-deleted capsule by id, or by workspace+name (the most recently deleted of
    /// that name). If an active capsule holds the name now: mode "error" (default) is 409
    /// NAME_ALREADY_EXISTS naming it, "replace" soft-deletes it first, "rename" restores under
    /// <name>-1, -2…. Restoring an active capsule is 400 INVALID_REQUEST.
    CapsuleRestore: capsule_restore, Post "/capsules/restore",
        RestoreRequest => RestoreResponse, restore;

    /// Walk a capsule's lineage both ways: based_on (the refs it was stored with, then theirs) and
    /// derived (capsules whose based_on names it by id or workspace+name, then theirs), breadth
    /// first, depth default 3 (1-10), at most 100 nodes each way (truncated says so). Each node has
    /// its depth, the ref, the capsule it leads to now (absent if none) and via (the node that led
    /// there).
    CapsuleLineage: capsule_lineage, Get "/capsules/lineage",
        LineageRequest => LineageResponse, lineage;

    /// Copy an active capsule (source: id or workspace+name) into a new one: same text, title, tags
    /// and metadata, fresh id and timestamps, based_on: [source]. target {workspace (default the
    /// source's), name, title, run_id}; set {run_id, phase, role, tags} overrides metadata. A taken
    /// target name is 409 NAME_ALREADY_EXISTS.
    CapsuleClone: capsule_clone, Post "/capsules/clone",
        CloneRequest => CapsuleHandle, clone_capsule;

    /// List the earlier revisions kept of a capsule (id or workspace+name), newest first, without
    /// their texts: revision, version (the capsule_fetch version that reads it: -1, -2, …),
    /// updated_at, capsule_chars, title, and the run_id/phase/role it carried. The daemon keeps the
    /// newest capsule_versions (config, default 10) per capsule; every update, append, replace,
    /// bulk update and import replace saves one; deletes and restores do not.
    CapsuleVersions: capsule_versions, Get "/capsules/versions",
        VersionsRequest => VersionsResponse, versions;

    /// Compare two capsules, or two versions of one (a and b: id or workspace+name, optional
    /// version as in capsule_fetch), section by section: sections {title:
    /// unchanged|modified|added|removed_content}, order, summary {unchanged_sections,
    /// modified_sections, added_sections, removed_sections, a_chars, b_chars}. include_diff:true
    /// adds a unified line diff per modified section.
    CapsuleDiff: capsule_diff, Post "/capsules/diff",
        DiffRequest => DiffResponse, diff;

    /// Back up capsules to a JSONL file (one capsule per line after a {"_moss_export":true,...}
    /// header line; file mode 0600; written to a temp file and renamed, so a failure never leaves a
    /// partial file). Default path ~/.moss/exports/<workspace>-<timestamp>.jsonl; workspace limits
    /// it to one workspace (default all), include_deleted adds soft-deleted ones. path must end in
    /// .jsonl and sit directly in ~/.moss/exports/ (a bare file name goes there) or an
    /// allowed_paths directory; `..`, subdirectories and symlinks are refused (400 INVALID_REQUEST,
    /// details.rule says which rule). Returns path, count, exported_at, bytes. Versions and lineage
    /// are not exported. Sends notifications/progress when the call carries a progressToken.
    CapsuleExport: capsule_export, Post "/capsules/export",
        ExportRequest => ExportResponse, export (manual);

    /// Restore capsules from a JSONL file written by capsule_export (same path rules).
    /// All-or-nothing: one transaction, nothing written on any error. mode "error" (default) fails
    /// on any id or active-name collision (409); "replace" overwrites the colliding capsule keeping
    /// its id (409 CONFLICT if a record's id and name match two different capsules); "rename"
    /// imports alongside, suffixing a taken name (auth -> auth-1) and giving a taken id a new one.
    /// Normalized names, capsule_chars and tokens_estimate are recomputed. A malformed line is 400
    /// INVALID_RECORD naming the line and field; records without id or workspace_raw are skipped
    /// and listed in errors. Over max_import_bytes (25 MB) is 413 FILE_TOO_LARGE. Export files hold
    /// no versions or lineage. Sends notifications/progress when the call carries a progressToken.
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

/// One run id or several, as a filter: `"r1"`, `["r1", "r2"]`, or `"r1,r2"` (a comma separates
/// run ids, so that a list also fits in a query string; it is sent that way).
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

/// A reference to one capsule: `id`, or `workspace` + `name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CapsuleRef {
    /// Capsule id (ULID). Give either this or `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Workspace of the named capsule (default "default").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Capsule name, unique within its workspace. Give either this or `id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
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
    /// What it is, e.g. "snippet", "transcript", "log", "link": 1 to 32 characters.
    #[serde(rename = "type")]
    pub kind: String,
    /// Where it is, e.g. "src/auth.ts:42-50" or a transcript id: 1 to 500 characters.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The evidence itself, at most 4,000 characters. Optional: a ref alone is fine.
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

/// Arguments of `capsule_store`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct StoreRequest {
    /// The capsule: markdown (or JSON) with the sections Objective, Current status, Decisions,
    /// Next actions, Key locations and Open questions. At most `capsule_max_chars` (12000 by
    /// default) characters.
    pub capsule_text: String,
    /// Workspace (namespace); default "default". Matched case- and space-insensitively.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Stable handle, unique among active capsules of the workspace. Omit for an id-only capsule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Display title; default: the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Tags, e.g. ["auth", "sessions"].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Who wrote it, e.g. "claude-code" or "codex".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Orchestration run this capsule belongs to, e.g. "pr-review-abc123".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Workflow phase, e.g. "design".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Agent role, e.g. "design-intent".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// "error" (default): fail if the name is taken. "replace": overwrite, keeping the id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<StoreMode>,
    /// Skip the required-sections check (escape hatch). Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_thin: Option<bool>,
    /// The capsules this one was based on (lineage), each `{"id"}` or `{"workspace","name"}`,
    /// stored as given: they need not exist. At most 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub based_on: Option<Vec<CapsuleRef>>,
    /// Evidence kept with the capsule, not counted in its size: at most 20 items
    /// `{type, ref, content}`, each ref up to 500 characters and content up to 4,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Vec<Evidence>>,
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

/// Arguments of `capsule_fetch`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(
    feature = "schema",
    derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
pub struct FetchRequest {
    /// Capsule id. Give either this or `workspace` + `name`, not both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Workspace of the named capsule (default "default").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Capsule name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Also return a soft-deleted capsule. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_deleted: Option<bool>,
    /// Return `capsule_text`. Default true; false is a cheap peek at the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_text: Option<bool>,
    /// An earlier state: -1 the version before the current one, -2 the one before that; a
    /// positive number is that revision. Only the newest `capsule_versions` (config, default
    /// 10) earlier revisions are kept; soft deletes and restores make none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
    /// Return each evidence item's `content` (default false: type, ref and chars only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expand_evidence: Option<bool>,
}

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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
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

/// Arguments of `capsule_fetch_many`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct FetchManyRequest {
    /// 1 to 50 references, each `{"id"}` or `{"workspace","name"}`.
    pub items: Vec<CapsuleRef>,
    /// Return `capsule_text`. Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_text: Option<bool>,
    /// Soft-deleted capsules are eligible. Default false.
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

/// Arguments of `capsule_update`. Address with `id` or `workspace` + `name`; those are not changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct UpdateRequest {
    /// Capsule id. Give either this or `workspace` + `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Workspace of the named capsule (default "default").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Capsule name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// New capsule text; linted and size-checked like `capsule_store`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capsule_text: Option<String>,
    /// New title; "" clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// New tags, replacing the old ones; [] clears them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// New source; "" clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// New run id; "" clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// New phase; "" clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// New role; "" clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Skip the required-sections check for the new text. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_thin: Option<bool>,
    /// Only update if the capsule's `updated_at` still equals this (optimistic concurrency);
    /// otherwise 409 CONFLICT with the current `updated_at` and `revision`, nothing written.
    /// Seconds: two changes in one second look alike, so prefer `if_revision`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub if_updated_at: Option<i64>,
    /// Only update if the capsule's `revision` still equals this (the precise guard); otherwise
    /// 409 CONFLICT with the current `revision` and `updated_at`, nothing written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub if_revision: Option<i64>,
    /// New lineage, replacing the old: refs `{"id"}` or `{"workspace","name"}`, stored as
    /// given; [] clears it. At most 20.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub based_on: Option<Vec<CapsuleRef>>,
    /// New evidence, replacing the old: at most 20 items `{type, ref, content}`; [] clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Vec<Evidence>>,
}

/// Arguments of `capsule_delete` (soft delete).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(
    feature = "schema",
    derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
pub struct DeleteRequest {
    /// Capsule id. Give either this or `workspace` + `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Workspace of the named capsule (default "default").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Capsule name (active capsules only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Result of `capsule_delete`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct DeleteResponse {
    pub deleted: bool,
    pub id: String,
}

/// Arguments of `capsule_latest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(
    feature = "schema",
    derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
pub struct LatestRequest {
    /// Workspace (default "default").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Return `capsule_text` too. Default false (summary only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_text: Option<bool>,
    /// Consider soft-deleted capsules too, purely by `updated_at`. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_deleted: Option<bool>,
    /// Only capsules of these runs: a run id, a list, or run ids separated by commas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunIds>,
    /// Only capsules of this phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Only capsules of this role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// Result of `capsule_latest`: `{"item": null}` when the workspace has no capsule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct LatestResponse {
    pub item: Option<Capsule>,
}

/// Arguments of `capsule_list` (one workspace, summaries only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(
    feature = "schema",
    derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
pub struct ListRequest {
    /// Workspace (default "default").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Page size: default 20, at most 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Items to skip. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
    /// Include soft-deleted capsules. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_deleted: Option<bool>,
    /// Only capsules of these runs: a run id, a list, or run ids separated by commas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunIds>,
    /// Only capsules of this phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Only capsules of this role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// Arguments of `capsule_inventory` (all workspaces, summaries only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(
    feature = "schema",
    derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
pub struct InventoryRequest {
    /// Only this workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Only capsules carrying this tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// Only capsules whose name starts with this (case-insensitive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_prefix: Option<String>,
    /// Only capsules of these runs: a run id, a list, or run ids separated by commas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunIds>,
    /// Only capsules of this phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Only capsules of this role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Include soft-deleted capsules. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_deleted: Option<bool>,
    /// Page size: default 100, at most 500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Items to skip. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
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
}
