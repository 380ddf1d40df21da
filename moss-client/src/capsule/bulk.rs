//! Wire types of the operations over many capsules: `capsule_bulk_delete`,
//! `capsule_bulk_update`, `capsule_purge`, and the tool listing.

use serde::{Deserialize, Serialize};

use super::RunIds;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// Arguments of `capsule_bulk_delete`. At least one filter must be non-empty.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BulkDeleteRequest {
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
}

/// Result of `capsule_bulk_delete`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct BulkDeleteResponse {
    pub deleted: i64,
    pub message: String,
}

/// Arguments of `capsule_bulk_update`: filters (at least one non-empty) and `set_*` fields (at
/// least one present).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BulkUpdateRequest {
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
    /// New phase; "" clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_phase: Option<String>,
    /// New role; "" clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_role: Option<String>,
    /// New tags, replacing the old ones entirely; [] clears them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_tags: Option<Vec<String>>,
    /// Leave out capsules already holding every value set, so they keep their `updated_at`
    /// (and their place in `latest` and `list`); the count is then of capsules changed.
    /// Default false: every matching capsule is touched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_unchanged: Option<bool>,
}

/// Result of `capsule_bulk_update`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct BulkUpdateResponse {
    pub updated: i64,
    pub message: String,
}

/// Arguments of `capsule_purge`: which capsules to delete for good. Without `run_id`: the
/// soft-deleted ones (active capsules are never touched). With `run_id`: every capsule of the
/// run(s), active ones included, and only with `confirm: true`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PurgeRequest {
    /// Only this workspace (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Only capsules soft-deleted at least this many days ago (default: any age). Not with
    /// `run_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub older_than_days: Option<i64>,
    /// Purge every capsule of these runs, active ones included: a run id, a list, or run ids
    /// separated by commas. Needs `confirm: true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunIds>,
    /// Required with `run_id`: without it the purge refuses (400 INVALID_REQUEST) and says how
    /// many capsules it would delete (`details.would_purge`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confirm: Option<bool>,
}

/// Result of `capsule_purge`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct PurgeResponse {
    pub purged: i64,
    pub message: String,
}
