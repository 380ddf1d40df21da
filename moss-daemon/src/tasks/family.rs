//! The tasks family's registration: its MCP tools and its REST routes, in one place.

use moss_client::tasks::*;

use crate::family::{Family, Tool};
use crate::tool;

/// Plans and tasks with checkpoint-gated steps, every change ingested into the reasoning trace.
pub const TASKS: Family = Family {
    name: "tasks",
    summary: "Plans and tasks: checkpoint-gated steps, revisions, an event stream ingested into the reasoning trace",
    instructions: "Tasks (tasks_*): plans (PLAN-001) hold tasks (TASK-001), each with a title; \
        both hold a tree of steps (STEP-0001, path s:0.s:1) with success criteria and tests. \
        tasks_radar shows now/why/verify/next/blockers and the reasoning_ref (branch task/TASK-001, docs notes, \
        TASK-001-graph, TASK-001-trace) that branchmind_* tools take as target. A step is done \
        only after tasks_verify confirms its criteria and tests. Every mutation returns its \
        event and lands in the trace; pass expected_revision to refuse a stale write. workspace \
        is required; task is a TASK-### or PLAN-###; a step is addressed by step_id (STEP-0001, \
        preferred) or path (s:0.s:1).",
    ops: moss_client::tasks::OPS,
    tools: TOOLS,
    routes: crate::family::no_routes,
};

const TOOLS: &[Tool] = &[
    tool!(TasksCreate, |app, req, _| app.tasks.create(req)),
    tool!(TasksDecompose, |app, req, _| app.tasks.decompose(req)),
    tool!(TasksDefine, |app, req, _| app.tasks.define(req)),
    tool!(TasksNote, |app, req, _| app.tasks.note(req)),
    tool!(TasksVerify, |app, req, _| app.tasks.verify(req)),
    tool!(TasksDone, |app, req, _| app.tasks.done(req)),
    tool!(TasksEdit, |app, req, _| app.tasks.edit(req)),
    tool!(TasksContext, |app, req, _| {
        crate::moss::interface::tasks_context(app, req)
    }),
    tool!(TasksDelta, |app, req, _| app.tasks.delta(req)),
    tool!(TasksFocusGet, |app, req, _| app.tasks.focus_get(req)),
    tool!(TasksFocusSet, |app, req, _| app.tasks.focus_set(req)),
    tool!(TasksFocusClear, |app, req, _| app.tasks.focus_clear(req)),
    tool!(TasksRadar, |app, req, _| app.tasks.radar(req)),
];
