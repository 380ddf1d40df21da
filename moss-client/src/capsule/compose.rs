//! Wire types of `capsule_compose` and `capsule_append`.

use serde::{Deserialize, Serialize};

use super::{CapsuleHandle, FetchKey, RunIds, StoreMode};

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

crate::fields::wire_struct! {
    /// Where and how `capsule_compose` stores its bundle, through the same path as `capsule_store`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct StoreAs {
        pub name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub workspace: Option<String>,
        /// Default: the name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tags: Option<Vec<String>>,
        /// error (default) or replace, as in capsule_store.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub mode: Option<StoreMode>,
        /// Skip the sections check (implied with sections).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub allow_thin: Option<bool>,
        /// Who stored it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub source: Option<String>,
        ..run(String),
    }
}

/// How `capsule_compose` groups its bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ComposePivot {
    /// Section by section: each section once (`## Decisions`), with every capsule's part of
    /// it under it, in item order.
    Section,
}

crate::fields::wire_struct! {
    /// One item of `capsule_compose`: a ref (`id`, or `workspace` + `name`) or a filter (any of
    /// `workspace`, `run_id`, `phase`, `role`, `tag`, `task`, ANDed, without `id`/`name`) that expands to
    /// every matching active capsule, oldest first, at its position.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct ComposeItem {
        ..capsule_ref(
            id: "Ref: capsule id.",
            workspace: "Ref: workspace of name; filter: this workspace.",
            name: "Ref: capsule name.",
        ),
        ..run(RunIds),
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tag: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task: Option<String>,
    }
}

impl ComposeItem {
    pub fn by_id(id: impl Into<String>) -> Self {
        ComposeItem {
            id: Some(id.into()),
            ..Default::default()
        }
    }

    pub fn by_name(workspace: impl Into<String>, name: impl Into<String>) -> Self {
        ComposeItem {
            workspace: Some(workspace.into()),
            name: Some(name.into()),
            ..Default::default()
        }
    }
}

/// Arguments of `capsule_compose`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ComposeRequest {
    /// Refs and filters (ANDed fields), in order; at most 50 expanded.
    pub items: Vec<ComposeItem>,
    /// markdown (default) or json.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<ComposeFormat>,
    /// Keep only these sections, e.g. ["Decisions"].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sections: Option<Vec<String>>,
    /// Also store the markdown bundle as a capsule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_as: Option<StoreAs>,
    /// section: group by section instead of by capsule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pivot: Option<ComposePivot>,
    /// Start each part with `**<name>** (<role>):`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_attribution: Option<bool>,
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

/// Where `capsule_append` puts content in a section that already has some.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum AppendPosition {
    /// After the section's body (default).
    #[default]
    Append,
    /// Right under the section's header, before its body (latest at the top).
    Prepend,
}

/// One section's content in a multi-section `capsule_append`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AppendSection {
    /// Header text.
    pub section: String,
    /// Markdown.
    pub content: String,
}

crate::fields::wire_struct! {
    /// Arguments of `capsule_append`. Address with `id` or `workspace` + `name`; give `section` and
    /// `content`, or `sections`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct AppendRequest {
        ..capsule_ref,
        /// Header text without #s ("Status"), any case.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub section: Option<String>,
        /// Markdown to add.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub content: Option<String>,
        /// Several {section, content} at once, all or none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub sections: Option<Vec<AppendSection>>,
        /// append (default) or prepend (under the header).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub position: Option<AppendPosition>,
        /// Write only into placeholder sections, else 409.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub if_placeholder: Option<bool>,
        /// Like if_revision, by updated_at.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub if_updated_at: Option<i64>,
        /// Write only if revision is still this.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub if_revision: Option<i64>,
    }
}

/// What `capsule_append` did to one section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct AppendHit {
    /// The header line that was hit, e.g. `## Design Reviews`.
    pub section_hit: String,
    /// True if a placeholder body was replaced, false if the content was added to the body.
    pub replaced: bool,
}

/// Result of `capsule_append`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct AppendResponse {
    pub id: String,
    /// Absent for an unnamed capsule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetch_key: Option<FetchKey>,
    /// The header line that was hit, e.g. `## Design Reviews` (the first section's, with
    /// `sections`).
    pub section_hit: String,
    /// True if a placeholder body was replaced (the first section's, with `sections`).
    pub replaced: bool,
    /// Every section written, in request order.
    pub sections: Vec<AppendHit>,
    /// The capsule's revision after the append.
    pub revision: i64,
    /// The capsule's `updated_at` after the append.
    pub updated_at: i64,
}
