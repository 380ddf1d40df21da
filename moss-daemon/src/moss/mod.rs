//! The cross-family reads (`moss_*`): every workspace with what each family holds, one ranked
//! search over every family, and the resume call. They read each family only through what the
//! family exports for them (its `interface` module and its public operations).

pub mod context;
pub mod family;
pub mod interface;
pub mod migrations;
pub mod search;

use std::collections::BTreeMap;

use moss_client::moss::*;

use crate::app::App;
use crate::error::Result;
use crate::store::engine::Db;
use crate::time::rfc3339_ms;
use crate::{capsule::interface as capsules, memory::interface as memories};
use crate::{reasoning::interface as reasoning, tasks::interface as tasks};

/// When a read found nothing: a hint naming `moss_workspaces` if the workspace holds nothing
/// in any family, so an empty answer is not taken for an empty part of a real workspace.
pub async fn empty_hint(app: &App, ws: &str) -> Result<Option<String>> {
    let norm = crate::names::normalize(ws);
    let known = workspaces(app, Default::default())
        .await?
        .items
        .iter()
        .any(|w| crate::names::normalize(&w.workspace) == norm);
    Ok((!known).then(|| {
        format!(
            "workspace {ws:?} holds nothing in any family; moss_workspaces lists the ones that \
             do"
        )
    }))
}

/// `capsule_list`, with [`empty_hint`] on an empty first page.
pub async fn capsule_list(
    app: &App,
    req: moss_client::capsule::ListRequest,
) -> Result<moss_client::capsule::CapsulePage> {
    let ws = req.workspace.clone().unwrap_or_default();
    let ws = if ws.trim().is_empty() {
        crate::names::DEFAULT_WORKSPACE.to_string()
    } else {
        ws
    };
    let mut page = app.capsules.list(req).await?;
    if page.items.is_empty() {
        page.hint = empty_hint(app, &ws).await?;
    }
    Ok(page)
}

/// `capsule_latest`, with [`empty_hint`] when there is no item.
pub async fn capsule_latest(
    app: &App,
    req: moss_client::capsule::LatestRequest,
) -> Result<moss_client::capsule::LatestResponse> {
    let ws = req.workspace.clone().unwrap_or_default();
    let ws = if ws.trim().is_empty() {
        crate::names::DEFAULT_WORKSPACE.to_string()
    } else {
        ws
    };
    let mut resp = app.capsules.latest(req).await?;
    if resp.item.is_none() {
        resp.hint = empty_hint(app, &ws).await?;
    }
    Ok(resp)
}

/// `tasks_context`, with [`empty_hint`] on an empty first page, fitted again to the caps with
/// the hint in.
pub async fn tasks_context(
    app: &App,
    req: moss_client::tasks::TasksContextRequest,
) -> Result<moss_client::tasks::TasksContextResponse> {
    let read = crate::read::Read::new(app.config.output_max_chars, &req)?;
    let first = req.cursor.is_none();
    let mut resp = app.tasks.context(req).await?;
    if first && resp.items.is_empty() {
        resp.hint = empty_hint(app, read.ws()).await?;
        if resp.hint.is_some() {
            return read.fit(resp);
        }
    }
    Ok(resp)
}

/// `memory_recall`, with [`empty_hint`] when nothing came back from a workspace that holds
/// nothing, fitted again to the caps with the hint in.
pub async fn memory_recall(
    app: &App,
    req: moss_client::memory::MemoryRecallRequest,
) -> Result<moss_client::memory::MemoryRecallResponse> {
    let caps = crate::budget::Caps::new(
        app.config.output_max_chars,
        req.max_chars,
        req.max_bytes,
        req.max_lines,
    )?;
    let ws = req
        .workspace
        .clone()
        .filter(|w| !w.trim().is_empty())
        .unwrap_or_else(|| crate::names::DEFAULT_WORKSPACE.to_string());
    let mut resp = app.memories.recall(req).await?;
    if resp.items.is_empty() {
        resp.hint = empty_hint(app, &ws).await?;
        if resp.hint.is_some() {
            return crate::budget::fit(resp, &caps);
        }
    }
    Ok(resp)
}

/// The last changes of workspace `ws` across families, newest first: at most `per_family`
/// from each (capsules handed off or stored, reasoning entries, plans and tasks, memories).
pub fn changes<'c>(
    db: impl Into<Db<'c>>,
    ws: &str,
    per_family: i64,
) -> Result<Vec<moss_client::moss::ContextItem>> {
    let db = db.into();
    let mut all = Vec::new();
    all.extend(capsules::handoffs(db, ws, None, per_family, false)?);
    all.extend(reasoning::recent(db, ws, per_family)?);
    all.extend(tasks::recent(db, ws, per_family, false)?);
    all.extend(memories::recent(db, ws, per_family)?);
    all.sort_by_key(|c| std::cmp::Reverse(c.0));
    Ok(all
        .into_iter()
        .map(|(_, mut i)| {
            i.text = None;
            i
        })
        .collect())
}

/// `moss_workspaces`: every workspace any family holds something in, most recent first. It
/// reads `workspace_activity` (see [`migrations`]), kept in the transactions that write the
/// items: one row per workspace and family, however many items they hold.
pub async fn workspaces(app: &App, _req: WorkspacesRequest) -> Result<WorkspacesResponse> {
    let counts = app
        .store
        .readers
        .run_db(|db| {
            let mut by_ws: BTreeMap<String, (FamilyCounts, i64)> = BTreeMap::new();
            db.query_each(
                "SELECT workspace, family, counted, last_ms FROM workspace_activity",
                crate::db_params![],
                |r| {
                    let (ws, family, count, last_ms) = (
                        r.get::<String>(0)?,
                        r.get::<String>(1)?,
                        r.get::<i64>(2)?,
                        r.get::<i64>(3)?,
                    );
                    let entry = by_ws.entry(ws).or_default();
                    let slot = match family.as_str() {
                        "capsules" => &mut entry.0.capsules,
                        "reasoning" => &mut entry.0.reasoning,
                        "tasks" => &mut entry.0.tasks,
                        "memories" => &mut entry.0.memories,
                        _ => return Ok(true),
                    };
                    *slot += count;
                    entry.1 = entry.1.max(last_ms);
                    Ok(true)
                },
            )?;
            Ok(by_ws)
        })
        .await?;
    let mut items: Vec<(i64, WorkspaceInfo)> = counts
        .into_iter()
        .map(|(workspace, (counts, last))| {
            let info = WorkspaceInfo {
                workspace,
                counts,
                last_activity: rfc3339_ms(last),
            };
            (last, info)
        })
        .collect();
    items.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| a.1.workspace.cmp(&b.1.workspace))
    });
    Ok(WorkspacesResponse {
        items: items.into_iter().map(|(_, i)| i).collect(),
    })
}
