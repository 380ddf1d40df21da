//! A capsule handed off for a plan or task (`task`): the link is checked against the tasks of
//! the capsule's workspace, and each handoff (a store, update or clone that sets it) is written
//! into the task's trace, so the task's history shows which capsule carried it on.

use serde_json::json;

use crate::error::{Error, Result};
use crate::reasoning::interface::docs::{NewEntry, insert_entry};
use crate::reasoning::interface::refs;
use crate::store::WriteCtx;
use crate::tasks::interface as tasks;

/// `task` as given: a plan or task id (`TASK-001`, `plan-2` → `PLAN-002` as the tasks family
/// writes it), or `""` to clear the link.
pub(crate) fn task_value(value: Option<&str>) -> Result<Option<String>> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => Ok(Some(refs::target_id("task", v)?.1)),
    }
}

/// The task must be one of the workspace's plans or tasks.
pub(crate) fn check(ctx: &WriteCtx, ws: &str, task: &str) -> Result<()> {
    if tasks::exists(ctx.db(), ws, task)? {
        return Ok(());
    }
    Err(Error::not_found(format!(
        "task {task} is no plan or task of workspace {ws:?}; tasks_context lists them"
    ))
    .with_details(json!({
        "field": "task",
        "suggested_call": {"tool": "tasks_context", "arguments": {"workspace": ws}},
    })))
}

/// Writes the handoff of capsule `id` at `revision` into the task's trace (once per revision).
pub(crate) fn record(
    ctx: &WriteCtx,
    ws: &str,
    task: &str,
    id: &str,
    name: Option<&str>,
    revision: i64,
) -> Result<()> {
    let kind = if task.starts_with("PLAN-") {
        "plan"
    } else {
        "task"
    };
    let r = refs::reasoning_ref(kind, task);
    let label = name.unwrap_or(id);
    insert_entry(
        ctx,
        ws,
        NewEntry {
            branch: &r.branch,
            doc: &r.trace_doc,
            kind: "event",
            title: Some("capsule_handoff".into()),
            content: Some(format!("Capsule {label} handed off (revision {revision})")),
            source_event_id: Some(format!("handoff:{id}:{revision}")),
            event_type: Some("capsule_handoff".into()),
            task_id: Some(task.to_string()),
            payload_json: Some(
                json!({"capsule_id": id, "name": name, "revision": revision}).to_string(),
            ),
            ..NewEntry::default()
        },
    )?;
    Ok(())
}
