//! Items and steps as stored: event ids, loading a plan or task with its step counts and its
//! step tree (each step with its positional path), addressing one step, the revision check,
//! and the focus.

use std::collections::HashMap;

use moss_client::ErrorCode;
use moss_client::tasks::*;
use serde_json::json;

use crate::db_params;
use crate::error::{Error, Result, suggest};
use crate::json_field::parse_json;
use crate::reasoning::interface::refs;
use crate::store::engine::{Db, DbError, Row};

/// The event id of a sequence number.
pub fn event_id(seq: i64) -> String {
    format!("evt_{seq:016}")
}

pub(super) fn event_seq(field: &str, id: &str) -> Result<i64> {
    id.strip_prefix("evt_")
        .and_then(|d| d.parse::<i64>().ok())
        .filter(|s| *s >= 0)
        .ok_or_else(|| {
            Error::invalid_field(
                field,
                format!("{field} must be an event id like evt_0000000000000042, got {id:?}"),
            )
        })
}

/// A step row with its position.
#[derive(Debug, Clone)]
pub(super) struct StepRow {
    pub(super) step: Step,
    pub(super) parent: Option<String>,
    pub(super) ordinal: i64,
}

/// Loads a step tree in order, with each step's positional path.
pub(super) fn load_steps(db: Db<'_>, ws: &str, task: &str) -> Result<Vec<StepRow>> {
    let rows: Vec<StepRow> = db.query_map(
        "SELECT step_id, parent_step, ordinal, title, criteria_json, tests_json, blockers_json,
           criteria_confirmed, tests_confirmed, done
         FROM task_steps WHERE workspace = ?1 AND task = ?2",
        db_params![ws, task],
        |r| {
            let list = |i: usize| -> Result<Vec<String>, DbError> {
                let s: String = r.get(i)?;
                Ok(serde_json::from_str(&s).unwrap_or_default())
            };
            Ok(StepRow {
                step: Step {
                    step_id: r.get(0)?,
                    path: String::new(),
                    title: r.get(3)?,
                    success_criteria: list(4)?,
                    tests: list(5)?,
                    blockers: list(6)?,
                    criteria_confirmed: r.get(7)?,
                    tests_confirmed: r.get(8)?,
                    status: if r.get::<bool>(9)? {
                        "done".into()
                    } else {
                        "open".into()
                    },
                },
                parent: r.get(1)?,
                ordinal: r.get(2)?,
            })
        },
    )?;
    let mut children: HashMap<Option<String>, Vec<StepRow>> = HashMap::new();
    for row in rows {
        children.entry(row.parent.clone()).or_default().push(row);
    }
    for list in children.values_mut() {
        list.sort_by_key(|r| r.ordinal);
    }
    let mut out = Vec::new();
    fn walk(
        parent: Option<String>,
        prefix: &str,
        children: &mut HashMap<Option<String>, Vec<StepRow>>,
        out: &mut Vec<StepRow>,
    ) {
        let Some(list) = children.remove(&parent) else {
            return;
        };
        for (i, mut row) in list.into_iter().enumerate() {
            row.step.path = if prefix.is_empty() {
                format!("s:{i}")
            } else {
                format!("{prefix}.s:{i}")
            };
            let id = row.step.step_id.clone();
            let path = row.step.path.clone();
            out.push(row);
            walk(Some(id), &path, children, out);
        }
    }
    walk(None, "", &mut children, &mut out);
    Ok(out)
}

/// A plan or task with its step counts, `None` if it does not exist.
pub fn load_item(db: Db<'_>, ws: &str, id: &str) -> Result<Option<TaskItem>> {
    let item = db.query_opt(
        "SELECT id, kind, parent, title, description, contract, contract_json, revision,
               created_at_ms, updated_at_ms, seq,
               (SELECT count(*) FROM task_steps s WHERE s.workspace = i.workspace AND s.task = i.id),
               (SELECT count(*) FROM task_steps s WHERE s.workspace = i.workspace AND s.task = i.id AND s.done != 0)
             FROM task_items i WHERE workspace = ?1 AND id = ?2",
        db_params![ws, id],
        item_from_row,
    )?;
    Ok(item)
}

pub(super) fn item_from_row(r: &Row<'_>) -> Result<TaskItem, DbError> {
    let total: i64 = r.get(11)?;
    let done: i64 = r.get(12)?;
    Ok(TaskItem {
        id: r.get(0)?,
        kind: r.get(1)?,
        parent: r.get(2)?,
        title: r.get(3)?,
        description: r.get(4)?,
        contract: r.get(5)?,
        contract_data: parse_json(r.get(6)?),
        revision: r.get(7)?,
        created_at_ms: r.get(8)?,
        updated_at_ms: r.get(9)?,
        seq: r.get(10)?,
        status: if total > 0 && total == done {
            "done".into()
        } else {
            "open".into()
        },
        steps_total: total,
        steps_done: done,
    })
}

/// The item, or `NOT_FOUND` suggesting `tasks_context`.
pub(super) fn existing_item(db: Db<'_>, ws: &str, field: &str, id: &str) -> Result<TaskItem> {
    let (_, id) = refs::target_id(field, id)?;
    load_item(db, ws, &id)?.ok_or_else(|| {
        suggest(
            Error::not_found(format!("no plan or task {id} in workspace {ws:?}"))
                .with_details(json!({ "field": field, "task": id })),
            "tasks_context",
            json!({ "workspace": ws }),
        )
    })
}

pub(super) fn check_revision(item: &TaskItem, expected: Option<i64>) -> Result<()> {
    match expected {
        Some(e) if e != item.revision => Err(Error::new(
            ErrorCode::Conflict,
            format!(
                "{} is at revision {}, not the expected {e}: someone changed it; read it again (tasks_radar) and retry",
                item.id, item.revision
            ),
        )
        .with_details(json!({
            "field": "expected_revision",
            "task": item.id,
            "expected_revision": e,
            "current_revision": item.revision,
        }))),
        _ => Ok(()),
    }
}

/// Picks a step by `step_id` or `path` (exactly one).
pub(super) fn pick_step<'a>(
    ws: &str,
    item: &TaskItem,
    steps: &'a [StepRow],
    step_id: Option<&str>,
    path: Option<&str>,
) -> Result<&'a StepRow> {
    let found = match (
        step_id.filter(|s| !s.is_empty()),
        path.filter(|s| !s.is_empty()),
    ) {
        (Some(_), Some(_)) => {
            return Err(Error::new(
                ErrorCode::AmbiguousAddressing,
                "give step_id or path, not both",
            )
            .with_details(json!({ "field": "step_id" })));
        }
        (None, None) => {
            return Err(Error::invalid_field(
                "step_id",
                "step_id (preferred) or path is required",
            ));
        }
        (Some(id), None) => steps
            .iter()
            .find(|s| s.step.step_id == id.trim().to_uppercase()),
        (None, Some(p)) => steps.iter().find(|s| s.step.path == p.trim()),
    };
    found.ok_or_else(|| {
        suggest(
            Error::not_found(format!(
                "{} has no step {}",
                item.id,
                step_id.or(path).unwrap_or_default()
            ))
            .with_details(json!({ "field": if step_id.is_some() { "step_id" } else { "path" } })),
            "tasks_radar",
            json!({ "workspace": ws, "task": item.id }),
        )
    })
}

pub(super) fn focus_of(db: Db<'_>, ws: &str) -> Result<Option<String>> {
    Ok(db.query_opt(
        "SELECT task FROM task_focus WHERE workspace = ?1",
        db_params![ws],
        |r| r.get(0),
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_round_trip() {
        assert_eq!(event_id(42), "evt_0000000000000042");
        assert_eq!(event_seq("since", "evt_0000000000000042").unwrap(), 42);
        assert!(event_seq("since", "42").is_err());
    }
}
