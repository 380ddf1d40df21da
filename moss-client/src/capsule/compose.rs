//! Wire types of `capsule_compose` and `capsule_append`.

use serde::{Deserialize, Serialize};

use super::{CapsuleHandle, CapsuleRef, FetchKey, StoreMode};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

/// The shape of a composed bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ComposeFormat {
    /// `## <display name>` then the text, parts separated by `---` (default).
    #[default]
    Markdown,
    /// `bundle_text` is the JSON document `{"parts": [{id, workspace, name, display_name,
    /// text, chars}]}` as text.
    Json,
}

/// Where and how `capsule_compose` stores its bundle, through the same path as `capsule_store`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct StoreAs {
    /// Name of the stored bundle (required).
    pub name: String,
    /// Workspace of the stored bundle (default "default").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Title of the stored bundle (default: its name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Tags of the stored bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// "error" (default) or "replace", as in `capsule_store`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<StoreMode>,
    /// Skip the required-sections check. Implied when `sections` filters the bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_thin: Option<bool>,
    /// Who stored it (e.g. "claude-code").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Run id of the stored bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Phase of the stored bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Role of the stored bundle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

/// Arguments of `capsule_compose`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ComposeRequest {
    /// 1 to 50 capsules, each `{"id"}` or `{"workspace","name"}`, in bundle order. All must
    /// exist (404 NOT_FOUND otherwise, nothing composed).
    pub items: Vec<CapsuleRef>,
    /// "markdown" (default) or "json".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<ComposeFormat>,
    /// Keep only these sections of each capsule (header names, case-insensitive, e.g.
    /// ["Decisions", "Open questions"]); sections a capsule lacks are skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Vec<String>>,
    /// Also store the markdown bundle as a capsule (not with format "json").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_as: Option<StoreAs>,
}

/// The document a json-format bundle's `bundle_text` holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ComposeParts {
    /// The capsules, in item order.
    pub parts: Vec<ComposePart>,
}

/// One capsule of a json-format bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ComposePart {
    pub id: String,
    pub workspace: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// title, else name, else id.
    pub display_name: String,
    pub text: String,
    pub chars: i64,
}

/// Result of `capsule_compose`, the same fields for both formats.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ComposeResponse {
    /// The bundle: the markdown text, or for format "json" the JSON document
    /// `{"parts": [{id, workspace, name, display_name, text, chars}]}` as text.
    pub bundle_text: String,
    /// Characters (Unicode scalar values) of `bundle_text`.
    pub bundle_chars: i64,
    pub parts_count: i64,
    /// The stored bundle, when `store_as` was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored: Option<CapsuleHandle>,
}

impl ComposeResponse {
    /// The parts of a json-format bundle; `None` when `bundle_text` is not such a document
    /// (a markdown bundle).
    pub fn parts(&self) -> Option<Vec<ComposePart>> {
        serde_json::from_str::<ComposeParts>(&self.bundle_text)
            .ok()
            .map(|d| d.parts)
    }
}

/// Arguments of `capsule_append`. Address with `id` or `workspace` + `name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AppendRequest {
    /// Capsule id. Give either this or `workspace` + `name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Workspace of the named capsule (default "default").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Capsule name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The markdown header to append under, as written but without `#`s (e.g. "Status" for
    /// `## Status`); matched exactly, case-insensitively, no synonyms.
    pub section: String,
    /// Markdown to add. Replaces a placeholder body (`(pending)`, `TBD`, `N/A`, `-`, `none`);
    /// otherwise goes after the existing body, separated by a blank line.
    pub content: String,
}

/// Result of `capsule_append`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct AppendResponse {
    pub id: String,
    /// Absent for an unnamed capsule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch_key: Option<FetchKey>,
    /// The header line that was hit, e.g. `## Design Reviews`.
    pub section_hit: String,
    /// True if a placeholder body was replaced, false if the content was appended.
    pub replaced: bool,
}
