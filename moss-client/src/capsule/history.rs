//! Wire types of a capsule's history: `capsule_restore`, `capsule_lineage`, `capsule_clone`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Capsule, CapsuleRef, FetchKey};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// What `capsule_restore` does when an active capsule holds the name now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum RestoreMode {
    /// 409 NAME_ALREADY_EXISTS naming the active capsule (default).
    #[default]
    Error,
    /// Soft-delete the active capsule, then restore.
    Replace,
    /// Restore under the first free name `<name>-1`, `<name>-2`, ….
    Rename,
}

crate::fields::wire_struct! {
    /// Arguments of `capsule_restore`: a soft-deleted capsule by `id`, or by `workspace` + `name`
    /// (the most recently deleted one of that name).
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct RestoreRequest {
        ..capsule_ref,
        /// If the name is taken: error (default), replace or rename (<name>-1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mode: Option<RestoreMode>,
    }
}

/// Result of `capsule_restore`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct RestoreResponse {
    pub id: String,
    pub fetch_key: FetchKey,
    /// The name it has now (another one after mode "rename").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The active capsule mode "replace" soft-deleted to make room.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced_id: Option<String>,
    pub revision: i64,
}

crate::fields::wire_struct! {
    /// Arguments of `capsule_lineage`: a capsule by `id` or `workspace` + `name`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(
        feature = "schema",
        derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
    )]
    #[serde(deny_unknown_fields)]
    #[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
    pub struct LineageRequest {
        ..capsule_ref,
        /// Default 3, 1-10.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub depth: Option<i64>,
    }
}

/// One capsule met walking the lineage.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct LineageNode {
    /// Steps from the capsule asked about (1: a direct parent or child).
    pub depth: i64,
    /// The ref as it is written in a `based_on` (going up), or the child's own ref (going
    /// down).
    #[serde(rename = "ref")]
    pub reference: CapsuleRef,
    /// The capsule the ref leads to now, as a summary (soft-deleted ones included); absent when
    /// nothing is there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capsule: Option<Capsule>,
    /// Which node (index into the same list) led here; absent at depth 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<usize>,
}

/// Result of `capsule_lineage`: what the capsule was based on, and what was based on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct LineageResponse {
    pub capsule: Capsule,
    /// Going up: its `based_on`, then theirs, breadth first.
    pub based_on: Vec<LineageNode>,
    /// Going down: capsules whose `based_on` names it (by id, or by workspace and name), then
    /// theirs, breadth first.
    pub derived: Vec<LineageNode>,
    /// True when a walk stopped at `depth` or at 100 nodes with more to go.
    pub truncated: bool,
}

/// The new capsule of `capsule_clone`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CloneTarget {
    /// Default: the source's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Default: the name, else the source's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Default: the source's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

crate::fields::wire_struct! {
    /// Metadata `capsule_clone` sets on the new capsule instead of the source's.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct CloneSet {
        ..run(String),
        /// Default: the source's, in its workspace.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task: Option<String>,
        /// Tags, replacing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tags: Option<Vec<String>>,
    }
}

/// Arguments of `capsule_clone`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CloneRequest {
    /// The active capsule to copy.
    pub source: CapsuleRef,
    /// Where the copy goes.
    #[serde(default)]
    pub target: CloneTarget,
    /// Metadata overrides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<CloneSet>,
}

crate::fields::wire_struct! {
    /// Arguments of `capsule_versions`: a capsule by `id` or `workspace` + `name`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(
        feature = "schema",
        derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
    )]
    #[serde(deny_unknown_fields)]
    #[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
    pub struct VersionsRequest {
        ..capsule_ref,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub include_deleted: Option<bool>,
    }
}

crate::fields::wire_struct! {
    /// One earlier revision of a capsule, without its text.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    #[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
    pub struct CapsuleVersion {
        pub revision: i64,
        /// `capsule_fetch` `version` that reads it: -1 for the newest earlier one.
        pub version: i64,
        /// When this revision was written.
        pub updated_at: i64,
        pub capsule_chars: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        ..run(String, run_id: "Who wrote this revision, as it was tagged then."),
    }
}

/// Result of `capsule_versions`: the current revision and the earlier ones kept, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct VersionsResponse {
    pub id: String,
    /// The capsule's current revision.
    pub revision: i64,
    pub versions: Vec<CapsuleVersion>,
    /// How many earlier revisions the daemon keeps per capsule (config `capsule_versions`).
    pub keep: i64,
}

crate::fields::wire_struct! {
    /// One side of `capsule_diff`: a capsule (`id` or `workspace` + `name`), now or at a
    /// `version`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct DiffRef {
        ..capsule_ref,
        /// As in capsule_fetch.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub version: Option<i64>,
    }
}

/// Arguments of `capsule_diff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct DiffRequest {
    /// The older side.
    pub a: DiffRef,
    /// The newer side.
    pub b: DiffRef,
    /// Add a unified diff per modified section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_diff: Option<bool>,
}

/// How a section compares between `a` and `b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SectionState {
    /// The same text on both sides.
    Unchanged,
    /// Both sides have content, and it differs.
    Modified,
    /// Content in `b` only (the section is missing or empty in `a`).
    Added,
    /// Content in `a` only (the section is missing or empty in `b`).
    RemovedContent,
}

/// Counts of `capsule_diff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct DiffSummary {
    pub unchanged_sections: i64,
    pub modified_sections: i64,
    pub added_sections: i64,
    pub removed_sections: i64,
    pub a_chars: i64,
    pub b_chars: i64,
}

/// Result of `capsule_diff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct DiffResponse {
    /// Every section of either side (header text as first written), and its state.
    pub sections: BTreeMap<String, SectionState>,
    /// The sections in order: `a`'s, then those only `b` has.
    pub order: Vec<String>,
    pub summary: DiffSummary,
    /// With `include_diff`: a unified line diff of each modified section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diffs: Option<BTreeMap<String, String>>,
    /// The revisions compared.
    pub a_revision: i64,
    pub b_revision: i64,
}
