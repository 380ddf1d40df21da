//! Wire types of the operations over many capsules: `capsule_bulk_delete`,
//! `capsule_bulk_update`, `capsule_purge`, and the tool listing.

use serde::{Deserialize, Serialize};

use super::RunIds;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

crate::fields::wire_struct! {
    /// Arguments of `capsule_bulk_delete`. At least one filter must be non-empty.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct BulkDeleteRequest {
        ..capsule_filter,
    }
}

/// Result of `capsule_bulk_delete`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct BulkDeleteResponse {
    pub deleted: i64,
    pub message: String,
}

crate::fields::wire_struct! {
    /// Arguments of `capsule_bulk_update`: filters (at least one non-empty) and `set_*` fields (at
    /// least one present).
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct BulkUpdateRequest {
        ..capsule_filter,
        /// New phase.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub set_phase: Option<String>,
        /// New role.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub set_role: Option<String>,
        /// New tags, replacing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub set_tags: Option<Vec<String>>,
        /// Do not touch capsules already holding the values.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub skip_unchanged: Option<bool>,
    }
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Only deleted at least this many days ago; not with run_id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub older_than_days: Option<i64>,
    /// Every capsule of these runs, active too; needs confirm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunIds>,
    /// Required with run_id (else 400 with details.would_purge).
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
