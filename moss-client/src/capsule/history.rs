//! Wire types of a capsule's history: `capsule_restore`, `capsule_lineage`, `capsule_clone`.

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

/// Arguments of `capsule_restore`: a soft-deleted capsule by `id`, or by `workspace` + `name`
/// (the most recently deleted one of that name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct RestoreRequest {
    /// Capsule id. Give either this or `workspace` + `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Workspace of the named capsule (default "default").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Capsule name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// "error" (default), "replace" or "rename": what to do when an active capsule holds the
    /// name now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<RestoreMode>,
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

/// Arguments of `capsule_lineage`: a capsule by `id` or `workspace` + `name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(
    feature = "schema",
    derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
pub struct LineageRequest {
    /// Capsule id. Give either this or `workspace` + `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Workspace of the named capsule (default "default").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Capsule name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// How many steps to walk each way: default 3, 1 to 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<i64>,
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
    /// Workspace (default: the source's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Name (default: none, an id-only capsule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Title (default: the name, else the source's title).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Run id (default: the source's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// Metadata `capsule_clone` sets on the new capsule instead of the source's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CloneSet {
    /// Run id; "" clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Phase; "" clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Role; "" clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Tags, replacing the source's; [] clears them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
}

/// Arguments of `capsule_clone`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CloneRequest {
    /// The active capsule to copy: `{"id"}` or `{"workspace","name"}`.
    pub source: CapsuleRef,
    /// Where the copy goes (workspace defaults to the source's).
    #[serde(default)]
    pub target: CloneTarget,
    /// Metadata overrides (run_id, phase, role, tags).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<CloneSet>,
}
