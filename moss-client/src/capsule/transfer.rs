//! Wire types of `capsule_export` and `capsule_import`.

use serde::{Deserialize, Serialize};

use crate::error::ErrorCode;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// Arguments of `capsule_export`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ExportRequest {
    /// A .jsonl in ~/.moss/exports/ or allowed_paths (no .., no symlinks); default
    /// <workspace>-<time>.jsonl.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_deleted: Option<bool>,
}

/// Result of `capsule_export`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ExportResponse {
    /// The file written (absolute).
    pub path: String,
    /// Capsules written.
    pub count: i64,
    /// Unix seconds, as in the file's header line.
    pub exported_at: i64,
    /// Size of the file in bytes.
    pub bytes: u64,
}

/// How `capsule_import` treats a record whose `id` or active name is already taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ImportMode {
    /// Fail the whole import on any collision; nothing is written (default).
    #[default]
    Error,
    /// Overwrite the colliding capsule in place, keeping its id. A record whose id matches one
    /// capsule and whose name matches another fails the import.
    Replace,
    /// Import alongside: a taken name gets a suffix (`auth` → `auth-1`), a taken id a new id.
    Rename,
}

/// Arguments of `capsule_import`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    /// A capsule_export file; same path rules.
    pub path: String,
    /// On collision: error (default), replace (keep the id) or rename (auth-1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ImportMode>,
}

/// A record `capsule_import` skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ImportRecordError {
    /// 1-based line number in the file.
    pub line: u64,
    pub code: ErrorCode,
    pub message: String,
}

/// Result of `capsule_import`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ImportResponse {
    /// The file read (absolute).
    pub path: String,
    /// Records written (created, replaced or renamed).
    pub imported: i64,
    /// Of `imported`, records that overwrote an existing capsule (mode "replace").
    pub replaced: i64,
    /// Of `imported`, records stored under a suffixed name or a new id (mode "rename").
    pub renamed: i64,
    /// Records skipped because they lack `id` or `workspace_raw` (listed in `errors`).
    pub skipped: i64,
    /// Of `imported`, records whose `task` names no plan or task of their workspace here:
    /// imported without the link.
    #[serde(default)]
    pub unlinked: i64,
    /// Why records were skipped; the first 100 are listed.
    pub errors: Vec<ImportRecordError>,
}
