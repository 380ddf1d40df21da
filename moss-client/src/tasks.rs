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

    /// Create a plan (no parent) or a task (parent: PLAN-###, which must exist), optionally with
    /// steps [{title, success_criteria?, tests?}]. Ids are numbered per workspace.
    TasksCreate: tasks_create, Post "/tasks/create",
        TasksCreateRequest => TaskMutation, create;

    /// Add steps [{title, success_criteria?, tests?}] to a task, at the top level or under the step
    /// at parent (a path like s:0).
    TasksDecompose: tasks_decompose, Post "/tasks/decompose",
        TasksDecomposeRequest => TaskMutation, decompose;

    /// Change a step (step_id or path): title, success_criteria, tests, blockers. New criteria or
    /// tests reset that checkpoint.
    TasksDefine: tasks_define, Post "/tasks/define",
        TasksDefineRequest => TaskMutation, define;

    /// Record progress on a step; the note also lands in the task's notes document.
    TasksNote: tasks_note, Post "/tasks/note",
        TasksNoteRequest => TaskMutation, note;

    /// Confirm (or unconfirm) a step's checkpoints: {criteria?: {confirmed}, tests?: {confirmed}}.
    TasksVerify: tasks_verify, Post "/tasks/verify",
        TasksVerifyRequest => TaskMutation, verify;

    /// Close a step. Refused with 409 CHECKPOINTS_UNCONFIRMED until both checkpoints are confirmed;
    /// details.suggested_call is the tasks_verify call. Sub-steps must be done first.
    TasksDone: tasks_done, Post "/tasks/done",
        TasksDoneRequest => TaskMutation, done;

    /// Change a plan's or task's title, description, contract or contract_data ("" clears a text).
    TasksEdit: tasks_edit, Post "/tasks/edit",
        TasksEditRequest => TaskMutation, edit;

    /// The workspace's plans and tasks, newest first, with revision, status and step counts; page
    /// with cursor=pagination.next_cursor.
    TasksContext: tasks_context, Post "/tasks/context",
        TasksContextRequest => TasksContextResponse, context;

    /// Task events after since (an event id), oldest first; continue with since=next_cursor.
    TasksDelta: tasks_delta, Post "/tasks/delta",
        TasksDeltaRequest => TasksDeltaResponse, delta;

    /// The workspace's focused plan or task (null if none).
    TasksFocusGet: tasks_focus_get, Post "/tasks/focus/get",
        TasksFocusRequest => TasksFocusResponse, focus_get;

    /// Focus a plan or task (it must exist): tasks_radar without task uses it.
    TasksFocusSet: tasks_focus_set, Post "/tasks/focus/set",
        TasksFocusSetRequest => TasksFocusResponse, focus_set;

    /// Clear the workspace's focus.
    TasksFocusClear: tasks_focus_clear, Post "/tasks/focus/clear",
        TasksFocusRequest => TasksFocusResponse, focus_clear;

    /// One screen on a plan or task (default: the focus): now, why, verify, next, blockers, step
    /// counts with the first open step, and its reasoning_ref for the branchmind_* tools.
    TasksRadar: tasks_radar, Post "/tasks/radar",
        TasksRadarRequest => TasksRadarResponse, radar;

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
    /// Workspace. Required.
    pub workspace: String,
    /// A short title.
    pub title: String,
    /// `plan` or `task` (default: `task` when `parent` is given, else `plan`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The plan a task belongs to (required for a task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// What the item is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What done means for the whole item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<String>,
    /// Structured contract (a JSON object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_data: Option<Value>,
    /// Steps to create at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<NewStep>>,
}

/// `tasks_decompose`: add steps under the task, or under the step at `parent`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksDecomposeRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `TASK-###` or `PLAN-###`.
    pub task: String,
    /// 1-200 steps.
    pub steps: Vec<NewStep>,
    /// Path of the parent step (`s:0`); default: top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Refuse the write (409 CONFLICT, nothing written) unless the item is at this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<i64>,
}

/// `tasks_define`: change a step; new criteria or tests reset that checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksDefineRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `TASK-###` or `PLAN-###`.
    pub task: String,
    /// The step's stable id (preferred), or…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// …its path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// A short title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What must hold for the step to be done; changing them resets the criteria checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_criteria: Option<Vec<String>>,
    /// How the step is checked; changing them resets the tests checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<Vec<String>>,
    /// What stands in the way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blockers: Option<Vec<String>>,
    /// Refuse the write (409 CONFLICT, nothing written) unless the item is at this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<i64>,
}

/// `tasks_note`: a progress note on a step, also written to the item's notes document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksNoteRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `TASK-###` or `PLAN-###`.
    pub task: String,
    /// The step's stable id (`STEP-0001`; preferred over path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// The step's position (`s:0.s:1`), when step_id is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The progress note.
    pub note: String,
    /// Refuse the write (409 CONFLICT, nothing written) unless the item is at this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<i64>,
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

/// `tasks_verify`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksVerifyRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `TASK-###` or `PLAN-###`.
    pub task: String,
    /// The step's stable id (`STEP-0001`; preferred over path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// The step's position (`s:0.s:1`), when step_id is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    pub checkpoints: Checkpoints,
    /// Refuse the write (409 CONFLICT, nothing written) unless the item is at this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<i64>,
}

/// `tasks_done`: close a step whose two checkpoints are confirmed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksDoneRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `TASK-###` or `PLAN-###`.
    pub task: String,
    /// The step's stable id (`STEP-0001`; preferred over path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// The step's position (`s:0.s:1`), when step_id is not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Refuse the write (409 CONFLICT, nothing written) unless the item is at this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<i64>,
}

/// `tasks_edit`: change a plan's or task's own fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksEditRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// `TASK-###` or `PLAN-###`.
    pub task: String,
    /// Refuse the write (409 CONFLICT, nothing written) unless the item is at this revision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_revision: Option<i64>,
    /// A short title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `""` clears it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// What done means for the whole item ("" clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<String>,
    /// Structured contract (a JSON object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_data: Option<Value>,
}

/// `tasks_context`: the workspace's plans and tasks, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksContextRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// Read items with `seq` below this (`pagination.next_cursor` of the previous page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<i64>,
    /// 1-200 (default 50).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Cap on the answer's characters (default: the config's `output_max_chars`); one below the
    /// smallest answer the read can give gets that answer, with `budget.warning`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<i64>,
    /// Cap on the answer's UTF-8 bytes (clamped like `max_chars`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
    /// Cap on the lines of text in the answer's strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<i64>,
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
}

/// `tasks_delta`: events after `since`, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksDeltaRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// An event id (`next_cursor` of the previous call); default: from the first event.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// 1-500 (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Cap on the answer's characters (default: the config's `output_max_chars`); one below the
    /// smallest answer the read can give gets that answer, with `budget.warning`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<i64>,
    /// Cap on the answer's UTF-8 bytes (clamped like `max_chars`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
    /// Cap on the lines of text in the answer's strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<i64>,
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
    /// Workspace. Required.
    pub workspace: String,
}

/// `tasks_focus_set`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksFocusSetRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// An existing `PLAN-###` or `TASK-###`.
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

/// `tasks_radar`: one screen on a plan or task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TasksRadarRequest {
    /// Workspace. Required.
    pub workspace: String,
    /// Default: the focused item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// Cap on the answer's characters (default: the config's `output_max_chars`); one below the
    /// smallest answer the read can give gets that answer, with `budget.warning`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_chars: Option<i64>,
    /// Cap on the answer's UTF-8 bytes (clamped like `max_chars`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<i64>,
    /// Cap on the lines of text in the answer's strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<i64>,
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
    pub truncated: bool,
    pub budget: Budget,
}
