//! Wire types of `capsule_watch` and `capsule_stats`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Capsule, RunIds};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

crate::fields::wire_struct! {
    /// Arguments of `capsule_watch`: a long poll for the next capsule change matching the filter
    /// (ANDed; none given matches every capsule).
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(
        feature = "schema",
        derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
    )]
    #[serde(deny_unknown_fields)]
    #[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
    pub struct WatchRequest {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub workspace: Option<String>,
        ..run(RunIds),
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tag: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub name_prefix: Option<String>,
        /// The previous answer's cursor.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub since: Option<i64>,
        /// Default 30000, 0-300000.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub timeout_ms: Option<i64>,
        /// Changes per answer, oldest first: default 1, at most 100.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub limit: Option<i64>,
    }
}

/// What `capsule_watch` saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum WatchEvent {
    /// A capsule was stored (its first revision).
    Created,
    /// A capsule changed: updated, appended to, replaced, bulk-changed.
    Updated,
    /// A capsule was soft-deleted.
    Deleted,
    /// A capsule was deleted for good (`capsule_purge`): the summary is as it was. Purges
    /// stay listed for 7 days; a follower further behind lists the capsules again.
    Purged,
    /// Nothing matched before `timeout_ms`.
    Timeout,
}

/// One change `capsule_watch` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct WatchChange {
    pub event: WatchEvent,
    /// The capsule's summary as of now (no text).
    pub capsule: Capsule,
    /// The change's place in the sequence.
    pub cursor: i64,
}

/// Result of `capsule_watch`: the oldest changes after `since` (up to `limit`), or a timeout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct WatchResponse {
    /// The first change's event, or `timeout`.
    pub event: WatchEvent,
    /// The first change's capsule, as a summary as of now (no text); absent on a timeout.
    /// Several changes to one capsule between two calls arrive as one event with its latest
    /// state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capsule: Option<Capsule>,
    /// Pass as `since` to the next call: nothing is missed or seen twice.
    pub cursor: i64,
    /// Every change returned, oldest first (one unless `limit` is larger; none on a timeout).
    #[serde(default)]
    pub events: Vec<WatchChange>,
}

/// Arguments of `capsule_stats`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(
    feature = "schema",
    derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
pub struct StatsRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunIds>,
}

/// Result of `capsule_stats`: the active capsules, and how many soft-deleted ones wait for a
/// purge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct StatsResponse {
    /// Active capsules.
    pub capsule_count: i64,
    /// Characters of the active capsules' texts.
    pub total_chars: i64,
    /// Active capsules per phase ("" for none).
    pub by_phase: BTreeMap<String, i64>,
    /// Active capsules per role ("" for none).
    pub by_role: BTreeMap<String, i64>,
    /// Creation time of the oldest active capsule (RFC 3339, UTC); absent when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oldest: Option<String>,
    /// Last change of the most recently changed active capsule (RFC 3339, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub newest: Option<String>,
    /// Soft-deleted capsules (not counted above).
    pub deleted_count: i64,
}
