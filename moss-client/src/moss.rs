//! Cross-family wire types: the `moss_*` operations, which read every family at once.
//!
//! - `moss_workspaces`: every workspace, with what each family holds in it.
//! - `moss_search`: one ranked list over capsules, reasoning notes and cards, plans, tasks and
//!   steps, and memories.
//! - `moss_context`: where the work stands, in one call: the resume call.
//!
//! Every item these return carries `open`: the call (tool and arguments) that reads it in full.

use serde::{Deserialize, Serialize};
use serde_json::Value;

#[cfg(feature = "schema")]
use schemars::JsonSchema;

use crate::reasoning::Budget;

crate::op::ops! {
    /// Every cross-family operation, in listing order.
    table OPS, handle Moss;

    /// Resume in one call: a task's (default: the focus) radar, handoffs, questions, decisions,
    /// notes, memories, last changes; without one, the latest of each. Sections cut to fit are
    /// named in dropped.
    MossContext: moss_context, Post "/context",
        ContextRequest => ContextResponse, context;

    /// One ranked search of every family's 1,000 newest matches; scores in 0..1 compare across
    /// families. FTS5 syntax or safe_query.
    MossSearch: moss_search, Get "/search",
        SearchRequest => SearchResponse, search;

    /// Every workspace with its count per family and last activity, most recent first.
    MossWorkspaces: moss_workspaces, Get "/workspaces",
        WorkspacesRequest => WorkspacesResponse, workspaces;
}

/// The call that reads an item in full: a tool and its arguments (over REST, the tool's route
/// with the same fields).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Open {
    pub tool: String,
    pub arguments: Value,
}

/// Families to search: a name, a list, or names separated by commas (`capsule,memory`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(untagged)]
pub enum FamilyList {
    One(String),
    Many(Vec<String>),
}

impl FamilyList {
    /// The names: split on commas, trimmed, blanks dropped, each once.
    pub fn to_vec(&self) -> Vec<String> {
        let parts: Vec<&String> = match self {
            FamilyList::One(s) => vec![s],
            FamilyList::Many(v) => v.iter().collect(),
        };
        let mut out: Vec<String> = Vec::new();
        for name in parts
            .into_iter()
            .flat_map(|p| p.split(','))
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            if !out.iter().any(|o| o == name) {
                out.push(name.to_string());
            }
        }
        out
    }
}

impl Serialize for FamilyList {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_vec().join(","))
    }
}

/// Arguments of `moss_workspaces`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(
    feature = "schema",
    derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
pub struct WorkspacesRequest {}

/// What one family holds in a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct FamilyCounts {
    /// Active capsules.
    pub capsules: i64,
    /// Reasoning entries (notes, trace, cards) on every branch.
    pub reasoning: i64,
    /// Plans and tasks.
    pub tasks: i64,
    /// Memories.
    pub memories: i64,
}

/// One workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct WorkspaceInfo {
    pub workspace: String,
    pub counts: FamilyCounts,
    /// The newest write of an item held there, in any family (RFC 3339), if any; a purge or
    /// forget does not move it back.
    pub last_activity: Option<String>,
}

/// `moss_workspaces`' answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct WorkspacesResponse {
    /// Most recent activity first.
    pub items: Vec<WorkspaceInfo>,
}

/// Arguments of `moss_search`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(
    feature = "schema",
    derive(JsonSchema, utoipa::ToSchema, utoipa::IntoParams)
)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "schema", into_params(parameter_in = Query))]
#[cfg_attr(feature = "schema", schema(as = MossSearchRequest))]
pub struct SearchRequest {
    /// At most 1000 characters.
    pub query: String,
    /// Default: every workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Default all; a list or comma-separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub families: Option<FamilyList>,
    /// Default 20, at most 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<i64>,
    /// Plain words, no FTS5 syntax.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub safe_query: Option<bool>,
    /// Default hybrid with a model, else keyword.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<crate::search::SearchMode>,
    /// Show each part's rank.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<bool>,
}

/// One hit of `moss_search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", schema(as = MossSearchHit))]
pub struct SearchHit {
    /// capsule, reasoning, tasks or memory.
    pub family: String,
    /// What it is in its family: capsule; note, trace or card; plan, task or step; memory.
    pub kind: String,
    pub id: String,
    pub workspace: String,
    pub title: String,
    /// The matching passage, matches in `<b>` (the stored text is HTML-escaped).
    pub snippet: String,
    /// In 0..1, higher is better; comparable across families (see the fusion rule).
    pub score: f64,
    pub open: Open,
    /// The hit's keyword and semantic parts (with `explain: true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<crate::search::HitExplain>,
}

/// A page of hits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", schema(as = MossSearchPagination))]
pub struct SearchPagination {
    /// Pass as cursor for the next page; null on the last.
    pub next_cursor: Option<String>,
}

/// `moss_search`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "schema", schema(as = MossSearchResponse))]
pub struct SearchResponse {
    pub items: Vec<SearchHit>,
    pub pagination: SearchPagination,
    /// How the hits were ranked: keyword, semantic or hybrid.
    pub mode: crate::search::SearchMode,
    /// Hits were left out to fit max_chars.
    pub truncated: bool,
    pub budget: Budget,
    /// Set when nothing matched in a workspace that holds nothing (see moss_workspaces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Arguments of `moss_context`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ContextRequest {
    pub workspace: String,
    /// PLAN-### or TASK-### (default: the focus).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Also recall memories for this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<i64>,
}

/// One item of a `moss_context` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ContextItem {
    /// What it is: capsule, note, decision, question, memory, plan, task, change…
    pub kind: String,
    pub id: String,
    pub title: String,
    /// Its text, cut to fit (the newest handoff's in full when it fits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// When it was last written (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    pub open: Open,
}

/// `moss_context`'s answer. Sections that did not fit in max_chars are empty and named in
/// `dropped`, in the order they were dropped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ContextResponse {
    pub workspace: String,
    /// The plan or task the context is about (null without a task or focus).
    pub task: Option<String>,
    /// The task's radar (now, why, next, verify, blockers, step counts), as tasks_radar gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub radar: Option<Value>,
    /// Capsules handed off for the task (or the workspace's latest), newest first.
    pub handoffs: Vec<ContextItem>,
    /// Open plans and tasks (without a task).
    pub open_tasks: Vec<ContextItem>,
    /// Open questions of the task's graph.
    pub questions: Vec<ContextItem>,
    /// Latest decisions.
    pub decisions: Vec<ContextItem>,
    /// Latest notes of the task.
    pub notes: Vec<ContextItem>,
    /// Memories recalled for the task's title and the query.
    pub memories: Vec<ContextItem>,
    /// The workspace's last changes across families, newest first.
    pub changes: Vec<ContextItem>,
    /// Sections emptied to fit max_chars, in the order they were dropped.
    pub dropped: Vec<String>,
    pub truncated: bool,
    pub budget: Budget,
    /// Set when the workspace holds nothing (see moss_workspaces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}
