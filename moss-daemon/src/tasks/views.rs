//! The reads of plans and tasks (context, delta, radar), the focus (the item the radar shows
//! when none is named), and how the reads fit a budget.

use moss_client::reasoning::Budget;
use moss_client::tasks::*;
use serde_json::{Value, json};

use super::Tasks;
use super::items::{event_id, event_seq, existing_item, focus_of, item_from_row, load_steps};
use crate::budget::blank_budget;
use crate::budget::{Fit, cut_text};
use crate::db_params;
use crate::error::{Error, Result, suggest};
use crate::json_field::parse_json;
use crate::page::limit;
use crate::read::Read;
use crate::reasoning::interface::docs::{keep_page, page_of};
use crate::reasoning::interface::refs::{self, ALL};

impl Fit for TasksContextResponse {
    fn units(&self) -> usize {
        self.items.len()
    }
    fn keep(&mut self, n: usize) {
        keep_page(&mut self.items, &mut self.pagination, n, |i| i.seq);
    }
    fn cut(&mut self, chars: usize) -> bool {
        self.items
            .first_mut()
            .is_some_and(|i| match i.description.as_mut() {
                Some(d) if !d.is_empty() => cut_text(d, chars),
                _ => i.contract_data.take().is_some(),
            })
    }
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated;
        self.budget = budget;
    }
}

impl Fit for TasksDeltaResponse {
    /// Events ascend: the last ones go first, and the next call starts after the last kept.
    fn units(&self) -> usize {
        self.events.len()
    }
    fn keep(&mut self, n: usize) {
        if n < self.events.len() {
            self.events.truncate(n);
            self.has_more = true;
            if let Some(last) = self.events.last() {
                self.next_cursor = Some(last.event_id.clone());
            }
        }
    }
    fn cut(&mut self, _chars: usize) -> bool {
        self.events.first_mut().is_some_and(|e| {
            let cut = !e.payload.is_null();
            e.payload = json!({ "truncated": true });
            cut
        })
    }
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated;
        self.budget = budget;
    }
}

impl Fit for TasksRadarResponse {
    fn units(&self) -> usize {
        self.radar.blockers.len()
    }
    fn keep(&mut self, n: usize) {
        self.radar.blockers.truncate(n);
    }
    fn cut(&mut self, chars: usize) -> bool {
        if self.radar.why.is_empty() {
            return false;
        }
        cut_text(&mut self.radar.why, chars)
    }
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated;
        self.budget = budget;
    }
    /// Blockers are a summary, not a page: the radar may show none of them.
    fn paged(&self) -> bool {
        false
    }
}

impl Tasks {
    /// `tasks_context`: plans and tasks, newest first, paginated by creation sequence.
    pub async fn context(&self, req: TasksContextRequest) -> Result<TasksContextResponse> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        let (limit, cursor) = read.page(req.limit, req.cursor, 50, 200)?;
        read.run_db(&self.store, move |db, ws| {
            let items: Vec<TaskItem> = db.query_map(
                "SELECT id, kind, parent, title, description, contract, contract_json, revision,
                       created_at_ms, updated_at_ms, seq,
                       (SELECT count(*) FROM task_steps s WHERE s.workspace = i.workspace AND s.task = i.id),
                       (SELECT count(*) FROM task_steps s WHERE s.workspace = i.workspace AND s.task = i.id AND s.done != 0)
                     FROM task_items i WHERE workspace = ?1 AND seq < ?2 ORDER BY seq DESC LIMIT ?3",
                db_params![&ws, cursor.unwrap_or(ALL), limit + 1],
                item_from_row,
            )?;
            let (items, pagination) = page_of(items, cursor, limit, |i| i.seq);
            Ok(TasksContextResponse {
                focus: focus_of(db, &ws)?,
                workspace: ws,
                pagination,
                items,
                truncated: false,
                budget: blank_budget(),
                hint: None,
            })
        })
        .await
    }

    /// `tasks_delta`: events after `since`, oldest first.
    pub async fn delta(&self, req: TasksDeltaRequest) -> Result<TasksDeltaResponse> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        let limit = limit("limit", req.limit, 100, 500)?;
        let since = req
            .since
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(|s| event_seq("since", s))
            .transpose()?;
        read.run_db(&self.store, move |db, ws| {
            let mut events: Vec<TaskEvent> = db.query_map(
                "SELECT seq, ts_ms, task_id, path, type, payload_json FROM task_events
                     WHERE workspace = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
                db_params![&ws, since.unwrap_or(0), limit + 1],
                |r| {
                    let ts_ms: i64 = r.get(1)?;
                    Ok(TaskEvent {
                        event_id: event_id(r.get(0)?),
                        ts: ts_ms / 1000,
                        ts_ms,
                        task_id: r.get(2)?,
                        path: r.get(3)?,
                        event_type: r.get(4)?,
                        payload: parse_json(r.get(5)?).unwrap_or(Value::Null),
                    })
                },
            )?;
            let has_more = events.len() as i64 > limit;
            events.truncate(limit as usize);
            Ok(TasksDeltaResponse {
                workspace: ws,
                next_cursor: events
                    .last()
                    .map(|e| e.event_id.clone())
                    .or(since.map(event_id)),
                has_more,
                events,
                truncated: false,
                budget: blank_budget(),
            })
        })
        .await
    }

    /// `tasks_focus_get`.
    pub async fn focus_get(&self, req: TasksFocusRequest) -> Result<TasksFocusResponse> {
        let ws = refs::workspace(&req.workspace)?;
        self.store
            .readers
            .run_db(move |db| {
                Ok(TasksFocusResponse {
                    focus: focus_of(db, &ws)?,
                    workspace: ws,
                    previous: None,
                })
            })
            .await
    }

    /// `tasks_focus_set`: the item must exist.
    pub async fn focus_set(&self, req: TasksFocusSetRequest) -> Result<TasksFocusResponse> {
        let ws = refs::workspace(&req.workspace)?;
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                let item = existing_item(db, &ws, "task", &req.task)?;
                let previous = focus_of(db, &ws)?;
                db.execute(
                    "INSERT INTO task_focus(workspace, task) VALUES (?1, ?2)
                     ON CONFLICT(workspace) DO UPDATE SET task = excluded.task",
                    db_params![&ws, &item.id],
                )?;
                Ok(TasksFocusResponse {
                    workspace: ws,
                    focus: Some(item.id),
                    previous,
                })
            })
            .await
    }

    /// `tasks_focus_clear`.
    pub async fn focus_clear(&self, req: TasksFocusRequest) -> Result<TasksFocusResponse> {
        let ws = refs::workspace(&req.workspace)?;
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                let previous = focus_of(db, &ws)?;
                db.execute(
                    "DELETE FROM task_focus WHERE workspace = ?1",
                    db_params![&ws],
                )?;
                Ok(TasksFocusResponse {
                    workspace: ws,
                    focus: None,
                    previous,
                })
            })
            .await
    }

    /// `tasks_radar`.
    pub async fn radar(&self, req: TasksRadarRequest) -> Result<TasksRadarResponse> {
        let read = Read::new(self.config.output_max_chars, &req)?;
        read.run_db(&self.store, move |db, ws| {
            let focus = focus_of(db, &ws)?;
            let target = match req.task.as_deref().filter(|t| !t.trim().is_empty()).or(focus.as_deref()) {
                Some(t) => t.to_string(),
                None => {
                    return Err(suggest(
                        Error::invalid_field("task", "no task given and no focus set: give task, or set one with tasks_focus_set"),
                        "tasks_context",
                        json!({ "workspace": ws }),
                    ));
                }
            };
            let item = existing_item(db, &ws, "task", &target)?;
            let steps = load_steps(db, &ws, &item.id)?;
            let open: Vec<&Step> = steps.iter().map(|s| &s.step).filter(|s| s.status != "done").collect();
            let first_open = open.first().map(|s| (*s).clone());
            let missing_criteria = open.iter().filter(|s| !s.criteria_confirmed).count() as i64;
            let missing_tests = open.iter().filter(|s| !s.tests_confirmed).count() as i64;
            let mut verify = Vec::new();
            let mut next = Vec::new();
            if let Some(f) = &first_open {
                if !f.criteria_confirmed {
                    verify.push(format!("Confirm the criteria of {} ({}): {}", f.path, f.step_id, if f.success_criteria.is_empty() { "none defined yet (tasks_define)".to_string() } else { f.success_criteria.join("; ") }));
                }
                if !f.tests_confirmed {
                    verify.push(format!("Confirm the tests of {} ({}): {}", f.path, f.step_id, if f.tests.is_empty() { "none defined yet (tasks_define)".to_string() } else { f.tests.join("; ") }));
                }
                if f.criteria_confirmed && f.tests_confirmed {
                    next.push(format!("Close {} ({}) with tasks_done: {}", f.path, f.step_id, f.title));
                } else {
                    next.push(format!("Work on {} ({}): {}", f.path, f.step_id, f.title));
                }
                if let Some(after) = open.get(1) {
                    next.push(format!("Then {} ({}): {}", after.path, after.step_id, after.title));
                }
            } else if steps.is_empty() {
                next.push("Add steps with tasks_decompose".into());
            } else {
                next.push(format!("All {} steps are done", steps.len()));
            }
            let blockers = open
                .iter()
                .flat_map(|s| s.blockers.iter().map(move |b| format!("{}: {b}", s.path)))
                .collect();
            let why = match item.kind.as_str() {
                "plan" => item.contract.clone().or(item.description.clone()),
                _ => item.description.clone().or(item.contract.clone()),
            }
            .unwrap_or_default();
            let handoffs = crate::capsule::interface::task_handoffs(db, &ws, &item.id, 5)?;
            let memories = crate::memory::interface::count_with_context(db, &ws, &item.id)?;
            Ok(TasksRadarResponse {
                handoffs,
                memories,
                workspace: ws,
                focus,
                reasoning_ref: refs::reasoning_ref(&item.kind, &item.id),
                radar: Radar {
                    now: format!("{} {}: {}", if item.kind == "plan" { "Plan" } else { "Task" }, item.id, item.title),
                    why,
                    verify,
                    next,
                    blockers,
                },
                steps: StepCounts {
                    total: steps.len() as i64,
                    open: open.len() as i64,
                    done: (steps.len() - open.len()) as i64,
                    missing_criteria,
                    missing_tests,
                    first_open,
                },
                target: item,
                truncated: false,
                budget: blank_budget(),
            })
        })
        .await
    }
}
