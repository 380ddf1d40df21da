//! Changes to an item: the input rules of titles, texts and step lists, the one writer job
//! every mutation runs (revision check, change, event, trace entry, graph projection), and the
//! operations that change a plan or task (create, decompose, define, note, verify, done, edit).

use moss_client::ErrorCode;
use moss_client::reasoning::ReasoningRef;
use moss_client::tasks::*;
use serde_json::{Value, json};

use super::items::{
    StepRow, check_revision, event_id, existing_item, load_item, load_steps, pick_step,
};
use super::{MAX_LIST, MAX_LIST_ITEM_CHARS, MAX_NEW_STEPS, MAX_STEPS, MAX_TEXT_CHARS, Tasks};
use crate::db_params;
use crate::error::{Error, Result, suggest};
use crate::json_field::object_json;
use crate::reasoning::interface::docs::{NewEntry, insert_entry};
use crate::reasoning::interface::graph;
use crate::reasoning::interface::refs::{self, ALL};
use crate::store::{WriteCtx, now_ms};

fn list_json(field: &str, v: Option<&[String]>) -> Result<String> {
    let mut out: Vec<String> = Vec::new();
    let items = v.unwrap_or_default();
    if items.len() > MAX_LIST {
        return Err(Error::invalid_field(
            field,
            format!(
                "{field} has {} entries; at most {MAX_LIST} are allowed",
                items.len()
            ),
        ));
    }
    for (i, s) in items.iter().enumerate() {
        let s = s.trim();
        if s.is_empty() {
            continue;
        }
        crate::bounds::check_len(&format!("{field}[{i}]"), s, MAX_LIST_ITEM_CHARS)?;
        out.push(s.to_string());
    }
    Ok(serde_json::to_string(&out).expect("strings serialize"))
}

fn title(field: &str, v: &str) -> Result<String> {
    let v = v.trim();
    if v.is_empty() {
        return Err(Error::invalid_field(
            field,
            format!("{field} must not be empty"),
        ));
    }
    crate::bounds::check_len(field, v, crate::bounds::MAX_TITLE_CHARS)?;
    Ok(v.to_string())
}

fn text(field: &str, v: Option<&str>) -> Result<Option<String>> {
    crate::bounds::optional_text(field, v, MAX_TEXT_CHARS)
}

/// What a mutation did, before its event is written.
struct Change {
    event_type: &'static str,
    path: Option<String>,
    payload: Value,
    /// Ids of the steps it created or changed.
    steps: Vec<String>,
}

/// Writes an event into the item's trace document, once per event id.
pub fn ingest(ctx: &WriteCtx, ws: &str, r: &ReasoningRef, event: &TaskEvent) -> Result<bool> {
    let (_, inserted) = insert_entry(
        ctx,
        ws,
        NewEntry {
            branch: &r.branch,
            doc: &r.trace_doc,
            kind: "event",
            title: Some(event.event_type.clone()),
            content: None,
            source_event_id: Some(event.event_id.clone()),
            event_type: Some(event.event_type.clone()),
            task_id: Some(event.task_id.clone()),
            path: event.path.clone(),
            payload_json: Some(event.payload.to_string()),
            ..NewEntry::default()
        },
    )?;
    Ok(inserted)
}

/// Projects an item and its steps into its graph document, writing only what changed.
fn project(
    ctx: &WriteCtx,
    ws: &str,
    r: &ReasoningRef,
    item: &TaskItem,
    steps: &[StepRow],
) -> Result<()> {
    let sources = [(r.branch.clone(), ALL)];
    let write_node = |n: moss_client::reasoning::GraphNode| {
        graph::upsert_node_if_changed(ctx, ws, &sources, &r.branch, &r.graph_doc, &n)
    };
    let task_key = format!("task:{}", item.id);
    let mut n = graph::node(task_key.clone(), item.kind.clone());
    n.title = Some(item.title.clone());
    n.text = item.description.clone().or_else(|| item.contract.clone());
    n.status = Some(item.status.clone());
    write_node(n)?;
    for s in steps {
        let mut n = graph::node(format!("step:{}", s.step.step_id), "step".into());
        n.title = Some(s.step.title.clone());
        n.status = Some(s.step.status.clone());
        n.meta = Some(json!({
            "path": s.step.path,
            "criteria_confirmed": s.step.criteria_confirmed,
            "tests_confirmed": s.step.tests_confirmed,
        }));
        write_node(n)?;
        let from = match &s.parent {
            Some(p) => format!("step:{p}"),
            None => task_key.clone(),
        };
        let e = graph::edge(
            from,
            "contains".into(),
            format!("step:{}", s.step.step_id),
            None,
        );
        graph::upsert_edge_if_changed(ctx, ws, &sources, &r.branch, &r.graph_doc, &e)?;
    }
    Ok(())
}

/// Records a mutation: revision, event, trace entry and graph projection.
fn commit(ctx: &WriteCtx, ws: &str, item_id: &str, change: Change) -> Result<TaskMutation> {
    let ts_ms = now_ms();
    let db = ctx.db();
    db.execute(
        "UPDATE task_items SET revision = revision + 1, updated_at_ms = ?3 WHERE workspace = ?1 AND id = ?2",
        db_params![ws, item_id, ts_ms],
    )?;
    let item = load_item(db, ws, item_id)?.expect("the item was just updated");
    let seq = ctx.next_seq();
    let event = TaskEvent {
        event_id: event_id(seq),
        ts: ts_ms / 1000,
        ts_ms,
        task_id: item.id.clone(),
        path: change.path,
        event_type: change.event_type.into(),
        payload: change.payload,
    };
    db.execute(
        "INSERT INTO task_events(seq, workspace, ts_ms, task_id, path, type, payload_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        db_params![
            seq,
            ws,
            ts_ms,
            &event.task_id,
            event.path.as_ref(),
            &event.event_type,
            &event.payload.to_string()
        ],
    )?;
    let r = refs::reasoning_ref(&item.kind, &item.id);
    ingest(ctx, ws, &r, &event)?;
    let all = load_steps(db, ws, &item.id)?;
    project(ctx, ws, &r, &item, &all)?;
    let steps = all
        .into_iter()
        .filter(|s| change.steps.contains(&s.step.step_id))
        .map(|s| s.step)
        .collect();
    Ok(TaskMutation {
        item,
        steps,
        event,
        reasoning_ref: r,
    })
}

/// Inserts steps under `parent` (a step id, or the item's top level).
fn add_steps(
    ctx: &WriteCtx,
    ws: &str,
    task: &str,
    parent: Option<&str>,
    steps: &[(String, String, String)],
) -> Result<Vec<String>> {
    let db = ctx.db();
    let (count, next_ordinal): (i64, i64) = db.query_one(
        "SELECT (SELECT count(*) FROM task_steps WHERE workspace = ?1 AND task = ?2),
                (SELECT coalesce(max(ordinal), -1) + 1 FROM task_steps WHERE workspace = ?1 AND task = ?2
                   AND parent_step IS NOT DISTINCT FROM ?3)",
        db_params![ws, task, parent],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if count + steps.len() as i64 > MAX_STEPS {
        return Err(Error::invalid_field(
            "steps",
            format!("{task} would have more than {MAX_STEPS} steps"),
        ));
    }
    let mut ids = Vec::new();
    for (i, (title, criteria, tests)) in steps.iter().enumerate() {
        let id = format!("STEP-{:04}", count + i as i64 + 1);
        db.execute(
            "INSERT INTO task_steps(workspace, task, step_id, parent_step, ordinal, title, criteria_json,
               tests_json, blockers_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, '[]')",
            db_params![ws, task, &id, parent, next_ordinal + i as i64, title, criteria, tests],
        )?;
        ids.push(id);
    }
    Ok(ids)
}

/// Checks new steps: `(title, criteria_json, tests_json)`.
fn new_steps(steps: &[NewStep]) -> Result<Vec<(String, String, String)>> {
    if steps.len() > MAX_NEW_STEPS {
        return Err(Error::invalid_field(
            "steps",
            format!(
                "steps has {} entries; at most {MAX_NEW_STEPS} per call",
                steps.len()
            ),
        ));
    }
    steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            Ok((
                title(&format!("steps[{i}].title"), &s.title)?,
                list_json(
                    &format!("steps[{i}].success_criteria"),
                    s.success_criteria.as_deref(),
                )?,
                list_json(&format!("steps[{i}].tests"), s.tests.as_deref())?,
            ))
        })
        .collect()
}

fn step_payload(s: &Step) -> Value {
    json!({ "step_id": s.step_id, "path": s.path, "title": s.title })
}

impl Tasks {
    /// Runs a step or item mutation: loads the item and its steps, checks the revision, applies
    /// `f`, and commits the event.
    async fn mutate<F>(
        &self,
        workspace: &str,
        task: &str,
        expected: Option<i64>,
        f: F,
    ) -> Result<TaskMutation>
    where
        F: FnOnce(&WriteCtx, &str, &TaskItem, &[StepRow]) -> Result<Change> + Send + 'static,
    {
        let ws = refs::workspace(workspace)?;
        let (_, id) = refs::target_id("task", task)?;
        self.store
            .writer
            .run(move |ctx| {
                let item = existing_item(ctx.db(), &ws, "task", &id)?;
                check_revision(&item, expected)?;
                let steps = load_steps(ctx.db(), &ws, &item.id)?;
                let change = f(ctx, &ws, &item, &steps)?;
                commit(ctx, &ws, &item.id, change)
            })
            .await
    }

    /// `tasks_create`.
    pub async fn create(&self, req: TasksCreateRequest) -> Result<TaskMutation> {
        let ws = refs::workspace(&req.workspace)?;
        let title = title("title", &req.title)?;
        let kind = match (req.kind.as_deref().map(str::trim), &req.parent) {
            (Some("plan"), _) => "plan",
            (Some("task"), _) => "task",
            (None | Some(""), Some(_)) => "task",
            (None | Some(""), None) => "plan",
            (Some(other), _) => {
                return Err(Error::invalid_field(
                    "kind",
                    format!("kind must be \"plan\" or \"task\", got {other:?}"),
                ));
            }
        };
        let parent = match (&req.parent, kind) {
            (Some(_), "plan") => {
                return Err(Error::invalid_field(
                    "parent",
                    "a plan has no parent; omit parent, or create a task",
                ));
            }
            (None, "task") => {
                return Err(suggest(
                    Error::invalid_field(
                        "parent",
                        "a task belongs to a plan: give parent (PLAN-###)",
                    ),
                    "tasks_context",
                    json!({ "workspace": ws }),
                ));
            }
            (Some(p), _) => {
                let (k, id) = refs::target_id("parent", p)?;
                if k != "plan" {
                    return Err(Error::invalid_field(
                        "parent",
                        format!("parent must be a plan (PLAN-###), got {id}"),
                    ));
                }
                Some(id)
            }
            (None, _) => None,
        };
        let description = text("description", req.description.as_deref())?;
        let contract = text("contract", req.contract.as_deref())?;
        let contract_json = object_json("contract_data", req.contract_data.as_ref())?;
        let steps = new_steps(req.steps.as_deref().unwrap_or_default())?;
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                if let Some(p) = &parent {
                    existing_item(db, &ws, "parent", p)?;
                }
                let prefix = if kind == "plan" { "PLAN" } else { "TASK" };
                let n: i64 = db.query_one(
                    "INSERT INTO task_counters(workspace, kind, last) VALUES (?1, ?2, 1)
                     ON CONFLICT(workspace, kind) DO UPDATE SET last = task_counters.last + 1 RETURNING last",
                    db_params![&ws, kind],
                    |r| r.get(0),
                )?;
                let id = format!("{prefix}-{n:03}");
                let seq = ctx.next_seq();
                let ts_ms = now_ms();
                db.execute(
                    "INSERT INTO task_items(workspace, id, kind, parent, title, description, contract,
                       contract_json, revision, seq, created_at_ms, updated_at_ms)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0, ?9, ?10, ?10)",
                    db_params![
                        &ws,
                        &id,
                        kind,
                        parent.as_ref(),
                        &title,
                        description.as_ref(),
                        contract.as_ref(),
                        contract_json.as_ref(),
                        seq,
                        ts_ms
                    ],
                )?;
                let r = refs::reasoning_ref(kind, &id);
                // The reasoning family's `ensure_branch` still takes SQLite's connection.
                refs::ensure_branch(ctx, &ws, &r.branch, seq, ts_ms)?;
                let ids = add_steps(ctx, &ws, &id, None, &steps)?;
                commit(
                    ctx,
                    &ws,
                    &id,
                    Change {
                        event_type: if kind == "plan" { "plan_created" } else { "task_created" },
                        path: None,
                        payload: json!({ "id": id, "kind": kind, "title": title, "parent": parent, "steps": ids.len() }),
                        steps: ids,
                    },
                )
            })
            .await
    }

    /// `tasks_decompose`.
    pub async fn decompose(&self, req: TasksDecomposeRequest) -> Result<TaskMutation> {
        if req.steps.is_empty() {
            return Err(Error::invalid_field(
                "steps",
                "steps must hold at least one step",
            ));
        }
        let steps = new_steps(&req.steps)?;
        let parent_path = req.parent.clone();
        self.mutate(
            &req.workspace,
            &req.task,
            req.expected_revision,
            move |ctx, ws, item, all| {
                let parent = match parent_path.as_deref() {
                    Some(p) if !p.trim().is_empty() => Some(
                        pick_step(ws, item, all, None, Some(p))?
                            .step
                            .step_id
                            .clone(),
                    ),
                    _ => None,
                };
                let ids = add_steps(ctx, ws, &item.id, parent.as_deref(), &steps)?;
                Ok(Change {
                    event_type: "steps_added",
                    path: parent_path,
                    payload: json!({ "parent": parent, "step_ids": ids }),
                    steps: ids,
                })
            },
        )
        .await
    }

    /// `tasks_define`.
    pub async fn define(&self, req: TasksDefineRequest) -> Result<TaskMutation> {
        let new_title = req
            .title
            .as_deref()
            .map(|t| title("title", t))
            .transpose()?;
        let criteria = req
            .success_criteria
            .as_deref()
            .map(|c| list_json("success_criteria", Some(c)))
            .transpose()?;
        let tests = req
            .tests
            .as_deref()
            .map(|c| list_json("tests", Some(c)))
            .transpose()?;
        let blockers = req
            .blockers
            .as_deref()
            .map(|c| list_json("blockers", Some(c)))
            .transpose()?;
        if new_title.is_none() && criteria.is_none() && tests.is_none() && blockers.is_none() {
            return Err(Error::invalid_field(
                "title",
                "give at least one of title, success_criteria, tests, blockers",
            ));
        }
        let (step_id, path) = (req.step_id.clone(), req.path.clone());
        self.mutate(&req.workspace, &req.task, req.expected_revision, move |ctx, ws, item, all| {
            let s = pick_step(ws, item, all, step_id.as_deref(), path.as_deref())?;
            ctx.db().execute(
                "UPDATE task_steps SET title = coalesce(?4, title),
                   criteria_json = coalesce(?5, criteria_json),
                   criteria_confirmed = CASE WHEN ?5 IS NULL THEN criteria_confirmed ELSE 0 END,
                   tests_json = coalesce(?6, tests_json),
                   tests_confirmed = CASE WHEN ?6 IS NULL THEN tests_confirmed ELSE 0 END,
                   blockers_json = coalesce(?7, blockers_json)
                 WHERE workspace = ?1 AND task = ?2 AND step_id = ?3",
                db_params![
                    ws,
                    &item.id,
                    &s.step.step_id,
                    new_title.as_ref(),
                    criteria.as_ref(),
                    tests.as_ref(),
                    blockers.as_ref()
                ],
            )?;
            Ok(Change {
                event_type: "step_defined",
                path: Some(s.step.path.clone()),
                payload: json!({
                    "step_id": s.step.step_id,
                    "title": new_title,
                    "success_criteria": criteria.as_deref().map(|c| serde_json::from_str::<Value>(c).unwrap_or_default()),
                    "tests": tests.as_deref().map(|c| serde_json::from_str::<Value>(c).unwrap_or_default()),
                    "blockers": blockers.as_deref().map(|c| serde_json::from_str::<Value>(c).unwrap_or_default()),
                }),
                steps: vec![s.step.step_id.clone()],
            })
        })
        .await
    }

    /// `tasks_note`: also a note in the item's notes document.
    pub async fn note(&self, req: TasksNoteRequest) -> Result<TaskMutation> {
        let note = text("note", Some(&req.note))?
            .ok_or_else(|| Error::invalid_field("note", "note must not be empty"))?;
        let (step_id, path) = (req.step_id.clone(), req.path.clone());
        self.mutate(&req.workspace, &req.task, req.expected_revision, move |ctx, ws, item, all| {
            let s = pick_step(ws, item, all, step_id.as_deref(), path.as_deref())?;
            let r = refs::reasoning_ref(&item.kind, &item.id);
            let (entry, _) = insert_entry(
                ctx,
                ws,
                NewEntry {
                    branch: &r.branch,
                    doc: &r.notes_doc,
                    kind: "note",
                    title: Some(format!("{} {}", s.step.path, s.step.title)),
                    content: Some(note.clone()),
                    meta_json: Some(json!({ "source": "tasks_note", "task_id": item.id, "step_id": s.step.step_id, "path": s.step.path }).to_string()),
                    ..NewEntry::default()
                },
            )?;
            Ok(Change {
                event_type: "step_noted",
                path: Some(s.step.path.clone()),
                payload: json!({ "step_id": s.step.step_id, "note": note, "note_seq": entry.seq }),
                steps: vec![s.step.step_id.clone()],
            })
        })
        .await
    }

    /// `tasks_verify`.
    pub async fn verify(&self, req: TasksVerifyRequest) -> Result<TaskMutation> {
        let cp = req.checkpoints;
        if cp.criteria.is_none() && cp.tests.is_none() {
            return Err(Error::invalid_field(
                "checkpoints",
                "checkpoints needs criteria, tests or both, e.g. {\"criteria\":{\"confirmed\":true}}",
            ));
        }
        let (step_id, path) = (req.step_id.clone(), req.path.clone());
        self.mutate(
            &req.workspace,
            &req.task,
            req.expected_revision,
            move |ctx, ws, item, all| {
                let s = pick_step(ws, item, all, step_id.as_deref(), path.as_deref())?;
                ctx.db().execute(
                    "UPDATE task_steps SET criteria_confirmed = coalesce(?4, criteria_confirmed),
                   tests_confirmed = coalesce(?5, tests_confirmed)
                 WHERE workspace = ?1 AND task = ?2 AND step_id = ?3",
                    db_params![
                        ws,
                        &item.id,
                        &s.step.step_id,
                        cp.criteria.map(|c| c.confirmed),
                        cp.tests.map(|c| c.confirmed)
                    ],
                )?;
                Ok(Change {
                    event_type: "step_verified",
                    path: Some(s.step.path.clone()),
                    payload: json!({
                        "step_id": s.step.step_id,
                        "criteria": cp.criteria.map(|c| c.confirmed),
                        "tests": cp.tests.map(|c| c.confirmed),
                    }),
                    steps: vec![s.step.step_id.clone()],
                })
            },
        )
        .await
    }

    /// `tasks_done`: refused until both checkpoints are confirmed and every sub-step is done.
    pub async fn done(&self, req: TasksDoneRequest) -> Result<TaskMutation> {
        let (step_id, path) = (req.step_id.clone(), req.path.clone());
        self.mutate(&req.workspace, &req.task, req.expected_revision, move |ctx, ws, item, all| {
            let s = pick_step(ws, item, all, step_id.as_deref(), path.as_deref())?;
            if s.step.status == "done" {
                return Err(Error::new(ErrorCode::Conflict, format!("step {} ({}) is already done", s.step.step_id, s.step.path))
                    .with_details(json!({ "field": "step_id", "step_id": s.step.step_id })));
            }
            if !s.step.criteria_confirmed || !s.step.tests_confirmed {
                let mut missing = Vec::new();
                let mut checkpoints = serde_json::Map::new();
                if !s.step.criteria_confirmed {
                    missing.push("criteria");
                    checkpoints.insert("criteria".into(), json!({ "confirmed": true }));
                }
                if !s.step.tests_confirmed {
                    missing.push("tests");
                    checkpoints.insert("tests".into(), json!({ "confirmed": true }));
                }
                return Err(suggest(
                    Error::new(
                        ErrorCode::CheckpointsUnconfirmed,
                        format!(
                            "step {} ({}) cannot be done: its {} checkpoint{} not confirmed; confirm with tasks_verify once they hold",
                            s.step.step_id,
                            s.step.path,
                            missing.join(" and "),
                            if missing.len() > 1 { "s are" } else { " is" }
                        ),
                    )
                    .with_details(json!({ "step_id": s.step.step_id, "path": s.step.path, "missing": missing })),
                    "tasks_verify",
                    json!({ "workspace": ws, "task": item.id, "step_id": s.step.step_id, "checkpoints": checkpoints }),
                ));
            }
            let open_children: Vec<&str> = all
                .iter()
                .filter(|c| c.parent.as_deref() == Some(s.step.step_id.as_str()) && c.step.status != "done")
                .map(|c| c.step.path.as_str())
                .collect();
            if !open_children.is_empty() {
                return Err(Error::new(
                    ErrorCode::Conflict,
                    format!("step {} has open sub-steps: {}; finish them first", s.step.path, open_children.join(", ")),
                )
                .with_details(json!({ "field": "step_id", "open_steps": open_children })));
            }
            ctx.db().execute(
                "UPDATE task_steps SET done = 1, done_at_ms = ?4 WHERE workspace = ?1 AND task = ?2 AND step_id = ?3",
                db_params![ws, &item.id, &s.step.step_id, now_ms()],
            )?;
            Ok(Change {
                event_type: "step_done",
                path: Some(s.step.path.clone()),
                payload: step_payload(&s.step),
                steps: vec![s.step.step_id.clone()],
            })
        })
        .await
    }

    /// `tasks_edit`.
    pub async fn edit(&self, req: TasksEditRequest) -> Result<TaskMutation> {
        let new_title = req
            .title
            .as_deref()
            .map(|t| title("title", t))
            .transpose()?;
        // "" clears a text field: Some(None).
        let clearable = |field: &str, v: Option<&str>| -> Result<Option<Option<String>>> {
            v.map(|v| text(field, Some(v))).transpose()
        };
        let description = clearable("description", req.description.as_deref())?;
        let contract = clearable("contract", req.contract.as_deref())?;
        let contract_json = match &req.contract_data {
            None => None,
            Some(v) => Some(object_json("contract_data", Some(v))?),
        };
        if new_title.is_none()
            && description.is_none()
            && contract.is_none()
            && contract_json.is_none()
        {
            return Err(Error::invalid_field(
                "title",
                "give at least one of title, description, contract, contract_data",
            ));
        }
        self.mutate(
            &req.workspace,
            &req.task,
            req.expected_revision,
            move |ctx, ws, item, _| {
                let set = |col: &str, v: &Option<Option<String>>| -> Result<()> {
                    if let Some(v) = v {
                        ctx.db().execute(
                            &format!(
                                "UPDATE task_items SET {col} = ?3 WHERE workspace = ?1 AND id = ?2"
                            ),
                            db_params![ws, &item.id, v.as_ref()],
                        )?;
                    }
                    Ok(())
                };
                set("title", &new_title.clone().map(Some))?;
                set("description", &description)?;
                set("contract", &contract)?;
                set("contract_json", &contract_json)?;
                let fields: Vec<&str> = [
                    new_title.as_ref().map(|_| "title"),
                    description.as_ref().map(|_| "description"),
                    contract.as_ref().map(|_| "contract"),
                    contract_json.as_ref().map(|_| "contract_data"),
                ]
                .into_iter()
                .flatten()
                .collect();
                Ok(Change {
                    event_type: "item_edited",
                    path: None,
                    payload: json!({ "fields": fields, "title": new_title }),
                    steps: Vec::new(),
                })
            },
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::config::Config;

    /// Ingesting the same event twice writes one trace entry: the second call is a no-op.
    #[tokio::test]
    async fn ingesting_an_event_twice_writes_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let (store, threads) = crate::schema::open_default(&dir.path().join("moss.db")).unwrap();
        let tasks = Tasks::new(store.clone(), Arc::new(Config::default()));
        tasks
            .create(TasksCreateRequest {
                workspace: "w".into(),
                title: "P".into(),
                ..Default::default()
            })
            .await
            .unwrap();
        let m = tasks
            .create(TasksCreateRequest {
                workspace: "w".into(),
                title: "T".into(),
                parent: Some("PLAN-001".into()),
                ..Default::default()
            })
            .await
            .unwrap();
        let event = m.event.clone();
        let r = m.reasoning_ref.clone();
        let again = store
            .writer
            .run(move |ctx| {
                let first = ingest(ctx, "w", &r, &event)?;
                let second = ingest(ctx, "w", &r, &event)?;
                Ok((first, second))
            })
            .await
            .unwrap();
        assert_eq!(again, (false, false), "the mutation already ingested it");
        let r = m.reasoning_ref.clone();
        let id = m.event.event_id.clone();
        let count: i64 = store
            .readers
            .run_db(move |db| {
                Ok(db.query_one(
                    "SELECT count(*) FROM reasoning_entries WHERE workspace = 'w' AND branch = ?1
                       AND doc = ?2 AND source_event_id = ?3",
                    db_params![&r.branch, &r.trace_doc, &id],
                    |row| row.get(0),
                )?)
            })
            .await
            .unwrap();
        assert_eq!(count, 1);
        // A new event id is ingested once, then ignored.
        let mut other = m.event.clone();
        other.event_id = event_id(999_999);
        let r = m.reasoning_ref.clone();
        let twice = store
            .writer
            .run(move |ctx| Ok((ingest(ctx, "w", &r, &other)?, ingest(ctx, "w", &r, &other)?)))
            .await
            .unwrap();
        assert_eq!(twice, (true, false));
        store.writer.close().await;
        threads.join();
    }
}
