//! `moss_context`: where the work stands, in one call.
//!
//! For a plan or task (the request's, else the workspace's focus): its radar, the capsules
//! handed off for it (newest first, the newest with its text), its open questions and latest
//! decisions (think cards), its latest notes, the memories recalled for its title and the
//! query (and those attached to its id), and the workspace's last changes across families.
//! Without a task: the latest capsules, the open plans and tasks, the latest decisions and the
//! memories recalled for the query.
//!
//! **Budget.** The answer is held to `max_chars` (default: the output budget). Items go last
//! section first, in this order: changes, memories, notes, open tasks, decisions, questions,
//! then the older handoffs; the newest handoff's text is cut last. A section emptied on the
//! way is named in `dropped`, and `truncated`/`budget` say what happened.

use moss_client::memory::MemoryRecallRequest;
use moss_client::moss::{ContextItem, ContextRequest, ContextResponse, Open};
use moss_client::reasoning::{Budget, ShowRequest};
use moss_client::tasks::TasksRadarRequest;
use serde_json::json;

use crate::app::App;
use crate::budget::{self, Caps, Fit, blank_budget};
use crate::error::{Error, Result};
use crate::{capsule::interface as capsules, memory::interface as memories};
use crate::{reasoning::interface as reasoning, tasks::interface as tasks};

/// Items per section.
const HANDOFFS: i64 = 5;
const PER_SECTION: i64 = 5;
const CHANGES: usize = 10;

/// The sections in the order they are kept: the first is dropped last.
const KEEP_ORDER: [&str; 8] = [
    "handoffs",
    "questions",
    "decisions",
    "open_tasks",
    "notes",
    "memories",
    "changes",
    "",
];

fn section<'a>(resp: &'a mut ContextResponse, name: &str) -> Option<&'a mut Vec<ContextItem>> {
    Some(match name {
        "handoffs" => &mut resp.handoffs,
        "questions" => &mut resp.questions,
        "decisions" => &mut resp.decisions,
        "open_tasks" => &mut resp.open_tasks,
        "notes" => &mut resp.notes,
        "memories" => &mut resp.memories,
        "changes" => &mut resp.changes,
        _ => return None,
    })
}

impl Fit for ContextResponse {
    fn units(&self) -> usize {
        self.handoffs.len()
            + self.questions.len()
            + self.decisions.len()
            + self.open_tasks.len()
            + self.notes.len()
            + self.memories.len()
            + self.changes.len()
    }
    fn keep(&mut self, mut n: usize) {
        for name in KEEP_ORDER {
            let Some(items) = section(self, name) else {
                continue;
            };
            let had = items.len();
            items.truncate(n);
            n -= items.len();
            if had > 0 && items.is_empty() {
                self.dropped.push(name.to_string());
            }
        }
        // Named in the order they were dropped: the last kept section's loss comes last.
        self.dropped.reverse();
    }
    fn cut(&mut self, chars: usize) -> bool {
        self.handoffs
            .first_mut()
            .and_then(|h| h.text.as_mut())
            .is_some_and(|t| budget::cut_text(t, chars))
    }
    fn set_budget(&mut self, budget: Budget) {
        self.truncated = budget.truncated;
        self.budget = budget;
    }
    fn paged(&self) -> bool {
        false
    }
}

/// `moss_context`.
pub async fn context(app: &App, req: ContextRequest) -> Result<ContextResponse> {
    let ws = reasoning::refs::workspace(&req.workspace)?;
    let caps = Caps::new(app.config.output_max_chars, req.max_chars, None, None)?;
    let (w, asked) = (ws.clone(), req.task.clone());
    let task = app
        .store
        .readers
        .run_db(move |db| match asked {
            Some(t) => {
                let (_, id) = reasoning::refs::target_id("task", &t)?;
                if !tasks::exists(db, &w, &id)? {
                    return Err(Error::not_found(format!(
                        "no plan or task {id} in workspace {w:?}"
                    ))
                    .with_details(json!({
                        "field": "task",
                        "suggested_call": {"tool": "tasks_context", "arguments": {"workspace": w}},
                    })));
                }
                Ok(Some(id))
            }
            None => tasks::focus(db, &w),
        })
        .await?;
    let mut resp = ContextResponse {
        workspace: ws.clone(),
        task: task.clone(),
        radar: None,
        handoffs: Vec::new(),
        open_tasks: Vec::new(),
        questions: Vec::new(),
        decisions: Vec::new(),
        notes: Vec::new(),
        memories: Vec::new(),
        changes: Vec::new(),
        dropped: Vec::new(),
        truncated: false,
        budget: blank_budget(),
        hint: None,
    };
    // The sections are read at once, each on a read connection of its own: the radar (and
    // then the memories recalled for its title), the notes, and the rest in one go. Their
    // failures are taken in that order.
    let query = req.query.clone().unwrap_or_default();
    let radar_and_recall = async {
        let radar = match &task {
            Some(task) => Some(
                app.tasks
                    .radar(TasksRadarRequest {
                        workspace: ws.clone(),
                        task: Some(task.clone()),
                        ..Default::default()
                    })
                    .await,
            ),
            None => None,
        };
        let recall_for = match &radar {
            Some(Ok(radar)) => format!("{} {query}", radar.target.title),
            Some(Err(_)) => return (radar, Ok(Vec::new())),
            None => query.clone(),
        };
        let memories = recall(app, &ws, task.as_deref(), recall_for.trim()).await;
        (radar, memories)
    };
    let notes = async {
        let Some(task) = &task else {
            return Ok(None);
        };
        app.reasoning
            .show(ShowRequest {
                workspace: ws.clone(),
                target: Some(task.clone()),
                doc_kind: Some("notes".into()),
                limit: Some(PER_SECTION),
                ..Default::default()
            })
            .await
            .map(Some)
    };
    let (w, t) = (ws.clone(), task.clone());
    let rest = app.store.readers.run_db(move |db| {
        let t = t.as_deref();
        let handoffs = capsules::handoffs(db, &w, t, HANDOFFS, true)?;
        let questions = match t {
            Some(t) => reasoning::latest_cards(db, &w, Some(t), "question", PER_SECTION)?,
            None => Vec::new(),
        };
        let decisions = reasoning::latest_cards(db, &w, t, "decision", PER_SECTION)?;
        let open_tasks = if t.is_none() {
            tasks::recent(db, &w, 10, true)?
        } else {
            Vec::new()
        };
        let changes = match t {
            Some(_) => {
                let mut c = super::changes(db, &w, CHANGES as i64)?;
                c.truncate(CHANGES);
                c
            }
            None => Vec::new(),
        };
        let items = |v: Vec<(i64, ContextItem)>| v.into_iter().map(|(_, i)| i).collect();
        Ok((
            items(handoffs),
            items(questions),
            items(decisions),
            items(open_tasks),
            changes,
        ))
    });
    let ((radar, recalled), notes, rest) = tokio::join!(radar_and_recall, notes, rest);
    if let Some(radar) = radar {
        let radar = radar?;
        resp.radar = Some(json!({
            "title": radar.target.title,
            "status": radar.target.status,
            "revision": radar.target.revision,
            "now": radar.radar.now,
            "why": radar.radar.why,
            "verify": radar.radar.verify,
            "next": radar.radar.next,
            "blockers": radar.radar.blockers,
            "steps": {
                "total": radar.steps.total,
                "open": radar.steps.open,
                "done": radar.steps.done,
            },
            "reasoning_ref": radar.reasoning_ref,
            "memories": radar.memories,
        }));
    }
    if let Some(notes) = notes? {
        resp.notes = notes
            .entries
            .into_iter()
            .map(|e| ContextItem {
                kind: "note".into(),
                id: e.seq.to_string(),
                title: e.title.clone().unwrap_or_else(|| {
                    e.content
                        .clone()
                        .unwrap_or_default()
                        .chars()
                        .take(80)
                        .collect()
                }),
                text: e.content,
                updated_at: crate::time::rfc3339_ms(e.ts_ms),
                open: Open {
                    tool: "branchmind_show".into(),
                    arguments: json!({
                        "workspace": ws, "branch": e.branch, "doc": e.doc,
                        "cursor": e.seq + 1, "limit": 1,
                    }),
                },
            })
            .collect();
    }
    let with_task = task.is_some();
    (
        resp.handoffs,
        resp.questions,
        resp.decisions,
        resp.open_tasks,
        resp.changes,
    ) = rest?;
    resp.memories = recalled?;
    if !with_task
        && resp.handoffs.is_empty()
        && resp.open_tasks.is_empty()
        && resp.decisions.is_empty()
        && resp.memories.is_empty()
    {
        resp.hint = Some(format!(
            "workspace {ws:?} holds nothing yet; moss_workspaces lists the ones that do"
        ));
    }
    budget::fit(resp, &caps)
}

/// The memories recalled for `query` (the task's title and the request's query), and those
/// attached to the task's id as a context, best first, each once.
async fn recall(app: &App, ws: &str, task: Option<&str>, query: &str) -> Result<Vec<ContextItem>> {
    let ask = |context: Option<String>, query: Option<String>| MemoryRecallRequest {
        workspace: Some(ws.to_string()),
        context,
        query,
        limit: Some(PER_SECTION),
        ..Default::default()
    };
    // Both recalls at once; their answers are merged in this order.
    let by_context = async {
        match task {
            Some(task) => Some(app.memories.recall(ask(Some(task.to_string()), None)).await),
            None => None,
        }
    };
    let by_query = async {
        if query.is_empty() {
            return None;
        }
        Some(
            app.memories
                .recall(ask(None, Some(query.to_string())))
                .await,
        )
    };
    let (by_context, by_query) = tokio::join!(by_context, by_query);
    let mut out: Vec<ContextItem> = Vec::new();
    for got in [by_context, by_query].into_iter().flatten() {
        let got = got?;
        for r in got.items {
            let m = r.memory;
            if out.iter().any(|o| o.id == m.id) {
                continue;
            }
            out.push(memories::memory_item(
                ws,
                m.id,
                m.content,
                m.slot,
                m.updated_at * 1000,
            ));
        }
    }
    out.truncate(PER_SECTION as usize * 2);
    Ok(out)
}
