//! The tasks family's registration: its MCP tools and its REST routes, in one place.

use moss_client::tasks::*;

use crate::family::{Family, Tool};
use crate::tool;

/// Plans and tasks with checkpoint-gated steps, every change ingested into the reasoning trace.
pub const TASKS: Family = Family {
    name: "tasks",
    summary: "Plans and tasks: checkpoint-gated steps, revisions, an event stream ingested into the reasoning trace",
    instructions: "Tasks (tasks_*): plans (PLAN-001) hold tasks (TASK-001); both hold a tree of \
        steps (STEP-0001, path s:0.s:1) with success criteria and tests. tasks_radar shows \
        now/why/verify/next/blockers and the reasoning_ref (branch task/TASK-001, docs notes, \
        TASK-001-graph, TASK-001-trace) that branchmind_* tools take as target. A step is done \
        only after tasks_verify confirms its criteria and tests. Every mutation returns its \
        event and lands in the trace; pass expected_revision to refuse a stale write.",
    tools: TOOLS,
    routes: crate::api::tasks::routes,
};

const TOOLS: &[Tool] = &[
    tool!(
        "tasks_create",
        TasksCreateRequest,
        "Create a plan (no parent) or a task (parent: PLAN-###, which must exist), optionally \
            with steps [{title, success_criteria?, tests?}]. Ids are numbered per workspace.",
        |app, req, _| app.tasks.create(req)
    ),
    tool!(
        "tasks_decompose",
        TasksDecomposeRequest,
        "Add steps [{title, success_criteria?, tests?}] to a task, at the top level or under \
            the step at parent (a path like s:0).",
        |app, req, _| app.tasks.decompose(req)
    ),
    tool!(
        "tasks_define",
        TasksDefineRequest,
        "Change a step (step_id or path): title, success_criteria, tests, blockers. New \
            criteria or tests reset that checkpoint.",
        |app, req, _| app.tasks.define(req)
    ),
    tool!(
        "tasks_note",
        TasksNoteRequest,
        "Record progress on a step; the note also lands in the task's notes document.",
        |app, req, _| app.tasks.note(req)
    ),
    tool!(
        "tasks_verify",
        TasksVerifyRequest,
        "Confirm (or unconfirm) a step's checkpoints: {criteria?: {confirmed}, tests?: \
            {confirmed}}.",
        |app, req, _| app.tasks.verify(req)
    ),
    tool!(
        "tasks_done",
        TasksDoneRequest,
        "Close a step. Refused with 409 CHECKPOINTS_UNCONFIRMED until both checkpoints are \
            confirmed; details.suggested_call is the tasks_verify call. Sub-steps must be done \
            first.",
        |app, req, _| app.tasks.done(req)
    ),
    tool!(
        "tasks_edit",
        TasksEditRequest,
        "Change a plan's or task's title, description, contract or contract_data (\"\" clears \
            a text).",
        |app, req, _| app.tasks.edit(req)
    ),
    tool!(
        "tasks_context",
        TasksContextRequest,
        "The workspace's plans and tasks, newest first, with revision, status and step counts; \
            page with cursor=pagination.next_cursor.",
        |app, req, _| app.tasks.context(req)
    ),
    tool!(
        "tasks_delta",
        TasksDeltaRequest,
        "Task events after since (an event id), oldest first; continue with \
            since=next_cursor.",
        |app, req, _| app.tasks.delta(req)
    ),
    tool!(
        "tasks_focus_get",
        TasksFocusRequest,
        "The workspace's focused plan or task (null if none).",
        |app, req, _| app.tasks.focus_get(req)
    ),
    tool!(
        "tasks_focus_set",
        TasksFocusSetRequest,
        "Focus a plan or task (it must exist): tasks_radar without task uses it.",
        |app, req, _| app.tasks.focus_set(req)
    ),
    tool!(
        "tasks_focus_clear",
        TasksFocusRequest,
        "Clear the workspace's focus.",
        |app, req, _| app.tasks.focus_clear(req)
    ),
    tool!(
        "tasks_radar",
        TasksRadarRequest,
        "One screen on a plan or task (default: the focus): now, why, verify, next, blockers, \
            step counts with the first open step, and its reasoning_ref for the branchmind_* \
            tools.",
        |app, req, _| app.tasks.radar(req)
    ),
];
