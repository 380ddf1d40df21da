//! Plans and tasks wire types: the requests and responses of the `tasks_*` operations.
//!
//! Plans (`PLAN-001`) hold tasks (`TASK-001`); both hold a tree of steps, each with a stable id
//! (`STEP-0001`) and a positional path (`s:0.s:2`). Every mutation increments the item's
//! `revision`, returns its `event`, and writes that event into the item's trace document in the
//! same transaction.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::reasoning::{Budget, ReasoningRef, SeqPagination};

#[cfg(feature = "schema")]
use schemars::JsonSchema;

crate::op::ops! {
    /// Every tasks operation, in listing order.
    table OPS, handle Tasks;

    /// Create a plan (no parent) or a task in a plan, optionally with steps. Ids are numbered per
    /// workspace.
    TasksCreate: tasks_create, Post "/tasks/create",
        TasksCreateRequest => TaskMutation, create;

    /// Add steps to a task, at the top level or under a step.
    TasksDecompose: tasks_decompose, Post "/tasks/decompose",
        TasksDecomposeRequest => TaskMutation, decompose;

    /// Change a step's title, success_criteria, tests or blockers; new criteria or tests reset that
    /// checkpoint.
    TasksDefine: tasks_define, Post "/tasks/define",
        TasksDefineRequest => TaskMutation, define;

    /// Record progress on a step; the note also lands in the task's notes document.
    TasksNote: tasks_note, Post "/tasks/note",
        TasksNoteRequest => TaskMutation, note;

    /// Confirm (or unconfirm) a step's checkpoints.
    TasksVerify: tasks_verify, Post "/tasks/verify",
        TasksVerifyRequest => TaskMutation, verify;

    /// Close a step once its checkpoints are confirmed and sub-steps done; else 409
    /// CHECKPOINTS_UNCONFIRMED with the tasks_verify call in details.suggested_call.
    TasksDone: tasks_done, Post "/tasks/done",
        TasksDoneRequest => TaskMutation, done;

    /// Change a plan's or task's title, description, contract or contract_data.
    TasksEdit: tasks_edit, Post "/tasks/edit",
        TasksEditRequest => TaskMutation, edit;

    /// The workspace's plans and tasks, newest first, with revision, status and step counts.
    TasksContext: tasks_context, Post "/tasks/context",
        TasksContextRequest => TasksContextResponse, context;

    /// Task events after since, oldest first; continue with since=next_cursor.
    TasksDelta: tasks_delta, Post "/tasks/delta",
        TasksDeltaRequest => TasksDeltaResponse, delta;

    /// The workspace's focused plan or task (null if none).
    TasksFocusGet: tasks_focus_get, Post "/tasks/focus/get",
        TasksFocusRequest => TasksFocusResponse, focus_get;

    /// Focus a plan or task; tasks_radar without task uses it.
    TasksFocusSet: tasks_focus_set, Post "/tasks/focus/set",
        TasksFocusSetRequest => TasksFocusResponse, focus_set;

    /// Clear the workspace's focus.
    TasksFocusClear: tasks_focus_clear, Post "/tasks/focus/clear",
        TasksFocusRequest => TasksFocusResponse, focus_clear;

    /// One screen on a plan or task: now, why, verify, next, blockers, step counts, the first open
    /// step, and its reasoning_ref for branchmind_* tools.
    TasksRadar: tasks_radar, Post "/tasks/radar",
        TasksRadarRequest => TasksRadarResponse, radar;

}

/// A capsule handed off for a plan or task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Handoff {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub revision: i64,
    /// Unix seconds.
    pub updated_at: i64,
}

/// A task mutation, as `tasks_delta` streams it and the trace records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct TaskEvent {
    /// `evt_` and the event's sequence, 16 digits.
    pub event_id: String,
    /// Unix seconds.
    pub ts: i64,
    pub ts_ms: i64,
    /// The plan or task it changed.
    pub task_id: String,
    /// The step's path, for step events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// `plan_created`, `task_created`, `steps_added`, `step_defined`, `step_noted`,
    /// `step_verified`, `step_done`, `item_edited`.
    #[serde(rename = "type")]
    pub event_type: String,
    pub payload: Value,
}

/// A step to create.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct NewStep {
    pub title: String,
    /// What must hold for the step to be done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_criteria: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<Vec<String>>,
}

/// A step as the radar and the mutations show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Step {
    pub step_id: String,
    /// Position in the tree, e.g. `s:0.s:2`.
    pub path: String,
    pub title: String,
    pub success_criteria: Vec<String>,
    pub tests: Vec<String>,
    pub blockers: Vec<String>,
    pub criteria_confirmed: bool,
    pub tests_confirmed: bool,
    /// `open` or `done`.
    pub status: String,
}

/// A plan or task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct TaskItem {
    pub id: String,
    /// `plan` or `task`.
    pub kind: String,
    /// The plan a task belongs to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_data: Option<Value>,
    pub revision: i64,
    /// `open`, or `done` once it has steps and all are done.
    pub status: String,
    pub steps_total: i64,
    pub steps_done: i64,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
    /// Its position in the store's sequence (what `tasks_context` pages by).
    pub seq: i64,
}

/// What every mutation answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct TaskMutation {
    pub item: TaskItem,
    /// The steps the call created or changed.
    pub steps: Vec<Step>,
    pub event: TaskEvent,
    pub reasoning_ref: ReasoningRef,
}

/// `tasks_create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksCreateRequest {
    pub workspace: String,
    pub title: String,
    /// plan or task (default: task with parent, else plan).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// PLAN-### (required for a task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// What it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What done means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<String>,
    /// Structured contract (JSON object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_data: Option<Value>,
    /// Steps to create.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<NewStep>>,
}

/// `tasks_decompose`: add steps under the task, or under the step at `parent`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksDecomposeRequest {
    pub workspace: String,
    pub task: String,
    /// 1-200 steps.
    pub steps: Vec<NewStep>,
    /// Parent step path (s:0); default top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<i64>,
}

crate::fields::wire_struct! {
    /// `tasks_define`: change a step; new criteria or tests reset that checkpoint.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct TasksDefineRequest {
        pub workspace: String,
        ..step,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
        /// What must hold (a change resets that checkpoint).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub success_criteria: Option<Vec<String>>,
        /// How it is checked (a change resets that checkpoint).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub tests: Option<Vec<String>>,
        /// What stands in the way.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub blockers: Option<Vec<String>>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub expected_revision: Option<i64>,
    }
}

crate::fields::wire_struct! {
    /// `tasks_note`: a progress note on a step, also written to the item's notes document.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct TasksNoteRequest {
        pub workspace: String,
        ..step,
        /// The progress note.
        pub note: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub expected_revision: Option<i64>,
    }
}

/// One checkpoint's new state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Checkpoint {
    pub confirmed: bool,
}

/// The checkpoints `tasks_verify` sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct Checkpoints {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub criteria: Option<Checkpoint>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<Checkpoint>,
}

crate::fields::wire_struct! {
    /// `tasks_verify`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct TasksVerifyRequest {
        pub workspace: String,
        ..step,
        /// {criteria?: {confirmed}, tests?: {confirmed}}.
        pub checkpoints: Checkpoints,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub expected_revision: Option<i64>,
    }
}

crate::fields::wire_struct! {
    /// `tasks_done`: close a step whose two checkpoints are confirmed.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct TasksDoneRequest {
        pub workspace: String,
        ..step,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub expected_revision: Option<i64>,
    }
}

/// `tasks_edit`: change a plan's or task's own fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksEditRequest {
    pub workspace: String,
    pub task: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// "" clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What done means ("" clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<String>,
    /// Structured contract (JSON object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_data: Option<Value>,
}

crate::fields::wire_struct! {
    /// `tasks_context`: the workspace's plans and tasks, newest first.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct TasksContextRequest {
        pub workspace: String,
        ..page(limit: "1-200 (default 50)."),
        ..caps,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct TasksContextResponse {
    pub workspace: String,
    pub focus: Option<String>,
    pub items: Vec<TaskItem>,
    pub pagination: SeqPagination,
    pub truncated: bool,
    pub budget: Budget,
    /// Set when the workspace holds nothing in any family (see moss_workspaces).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

crate::fields::wire_struct! {
    /// `tasks_delta`: events after `since`, oldest first.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct TasksDeltaRequest {
        pub workspace: String,
        /// An event id (the last next_cursor); default: the first.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub since: Option<String>,
        /// 1-500 (default 100).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub limit: Option<i64>,
        ..caps,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct TasksDeltaResponse {
    pub workspace: String,
    pub events: Vec<TaskEvent>,
    /// Pass as `since` for the events after these; equal to `since` when there were none.
    pub next_cursor: Option<String>,
    pub has_more: bool,
    pub truncated: bool,
    pub budget: Budget,
}

/// `tasks_focus_get` and `tasks_focus_clear`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksFocusRequest {
    pub workspace: String,
}

/// `tasks_focus_set`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksFocusSetRequest {
    pub workspace: String,
    /// An existing PLAN-### or TASK-###.
    pub task: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct TasksFocusResponse {
    pub workspace: String,
    pub focus: Option<String>,
    /// The focus before this call (set and clear).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous: Option<String>,
}

crate::fields::wire_struct! {
    /// `tasks_radar`: one screen on a plan or task.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
    #[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
    #[serde(deny_unknown_fields)]
    pub struct TasksRadarRequest {
        pub workspace: String,
        /// Default: the focus.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub task: Option<String>,
        ..caps,
    }
}

/// Now / Why / Verify / Next / Blockers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Radar {
    pub now: String,
    pub why: String,
    pub verify: Vec<String>,
    pub next: Vec<String>,
    pub blockers: Vec<String>,
}

/// Step counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct StepCounts {
    pub total: i64,
    pub open: i64,
    pub done: i64,
    /// Open steps whose criteria are not confirmed.
    pub missing_criteria: i64,
    /// Open steps whose tests are not confirmed.
    pub missing_tests: i64,
    /// The first open step in tree order.
    pub first_open: Option<Step>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct TasksRadarResponse {
    pub workspace: String,
    pub focus: Option<String>,
    pub target: TaskItem,
    pub reasoning_ref: ReasoningRef,
    pub radar: Radar,
    pub steps: StepCounts,
    /// The capsules handed off for it, newest first (at most five).
    #[serde(default)]
    pub handoffs: Vec<Handoff>,
    /// Memories that carry its id among their contexts.
    #[serde(default)]
    pub memories: i64,
    pub truncated: bool,
    pub budget: Budget,
}
