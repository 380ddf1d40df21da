//! `moss bench --reasoning`: the reasoning and tasks families under load, in one run.
//!
//! 1. Write throughput: `capsule_store`, then `branchmind_notes_commit` with notes of the same
//!    size, each for `--duration` with `--clients` clients; the ratio notes/store.
//! 2. `branchmind_show` latency on a derived branch whose base holds `--entries` entries.
//! 3. `branchmind_graph_query` latency over `--nodes` nodes with `--versions` versions each.
//! 4. `branchmind_graph_merge` of `--merge-keys` keys changed on a branch, timed once.
//! 5. `tasks_radar` latency for a task with `--steps` steps.
//!
//! Everything is written into a fresh workspace `bench-reasoning-<ulid>`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use moss_client::Client;
use moss_client::capsule::StoreRequest;
use moss_client::reasoning::{
    BranchCreateRequest, GraphApplyRequest, GraphOp, GraphQueryRequest, MergeRequest,
    NotesCommitRequest, ShowRequest,
};
use moss_client::tasks::{NewStep, TasksCreateRequest, TasksRadarRequest};
use serde::Serialize;

use super::load::{OpReport, capsule_of_size, phase};
use crate::output::outln;

/// What `--reasoning` is told.
#[derive(Debug, Clone, Copy)]
pub struct Sizes {
    pub clients: usize,
    pub duration: Duration,
    pub size: usize,
    pub entries: u64,
    pub nodes: u64,
    pub versions: u64,
    pub merge_keys: u64,
    pub steps: u64,
}

#[derive(Debug, Serialize)]
struct ReasoningReport {
    addr: String,
    workspace: String,
    clients: usize,
    duration_s: f64,
    size_bytes: usize,
    capsule_store: OpReport,
    notes_commit: OpReport,
    /// notes_commit throughput / capsule_store throughput (target ≥ 0.8).
    notes_store_ratio: f64,
    base_entries: u64,
    populate_entries_s: f64,
    /// show (limit 20) on a branch derived from a base of `base_entries` (target p95 < 5 ms).
    show_derived: OpReport,
    graph_nodes: u64,
    graph_versions: u64,
    populate_graph_s: f64,
    /// graph_query (limit 50, with edges) over the graph (target p95 < 10 ms).
    graph_query: OpReport,
    merge_keys: u64,
    /// graph_merge of `merge_keys` changed keys, one call (target < 1000 ms).
    graph_merge_ms: f64,
    graph_merged: i64,
    task_steps: u64,
    /// tasks_radar of a task with `task_steps` steps (target p95 < 5 ms).
    tasks_radar: OpReport,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Clients for the read phases: reads measure latency, so fewer clients than the write phase.
const READ_CLIENTS: usize = 4;

pub async fn run(client: &Client, s: Sizes, json: bool) -> anyhow::Result<()> {
    let ws = format!(
        "bench-reasoning-{}",
        ulid::Ulid::generate().to_string().to_lowercase()
    );
    let text = capsule_of_size(s.size, 7);

    // 1. Writes: capsules, then notes of the same size.
    let (c, w, t) = (client.clone(), ws.clone(), text.clone());
    let (capsule_store, _) = phase(s.clients, s.duration, move |cn, n, _| {
        let (c, w, t) = (c.clone(), w.clone(), t.clone());
        async move {
            let req = StoreRequest {
                capsule_text: t,
                workspace: Some(w),
                name: Some(format!("c{cn}-{n}")),
                ..Default::default()
            };
            c.capsules().store(&req).await.map(|_| ()).map_err(err)
        }
    })
    .await;
    client
        .reasoning()
        .branch_create(&BranchCreateRequest {
            workspace: ws.clone(),
            name: "notes-bench".into(),
            from: Some("main".into()),
        })
        .await?;
    let (c, w, t) = (client.clone(), ws.clone(), text.clone());
    let (notes_commit, _) = phase(s.clients, s.duration, move |_, _, _| {
        let (c, w, t) = (c.clone(), w.clone(), t.clone());
        async move {
            let req = NotesCommitRequest {
                workspace: w,
                branch: Some("notes-bench".into()),
                doc: Some("notes".into()),
                content: t,
                ..Default::default()
            };
            c.reasoning()
                .notes_commit(&req)
                .await
                .map(|_| ())
                .map_err(err)
        }
    })
    .await;

    // 2. A base of `entries` entries, a branch from it with a few of its own, then show.
    eprintln!("populating {} entries…", s.entries);
    let start = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    for _ in 0..s.clients {
        let (c, w, next) = (client.clone(), ws.clone(), next.clone());
        let total = s.entries;
        writers.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= total {
                    return Ok::<(), anyhow::Error>(());
                }
                let req = NotesCommitRequest {
                    workspace: w.clone(),
                    branch: Some("main".into()),
                    doc: Some("notes".into()),
                    content: format!("base entry {i}: the cache was cold after deploy {i}"),
                    ..Default::default()
                };
                c.reasoning().notes_commit(&req).await?;
            }
        }));
    }
    for w in writers {
        w.await??;
    }
    let populate_entries_s = start.elapsed().as_secs_f64();
    client
        .reasoning()
        .branch_create(&BranchCreateRequest {
            workspace: ws.clone(),
            name: "derived".into(),
            from: Some("main".into()),
        })
        .await?;
    for i in 0..10 {
        client
            .reasoning()
            .notes_commit(&NotesCommitRequest {
                workspace: ws.clone(),
                branch: Some("derived".into()),
                doc: Some("notes".into()),
                content: format!("derived note {i}"),
                ..Default::default()
            })
            .await?;
    }
    let (c, w) = (client.clone(), ws.clone());
    let (show_derived, _) = phase(READ_CLIENTS, s.duration, move |_, _, rng| {
        let (c, w) = (c.clone(), w.clone());
        // Half the reads page from a point deep in the base.
        let cursor = (rng.next() % 2 == 0).then(|| (rng.next() % 100_000) as i64 + 1000);
        async move {
            let req = ShowRequest {
                workspace: w,
                branch: Some("derived".into()),
                doc: Some("notes".into()),
                limit: Some(20),
                cursor,
                ..Default::default()
            };
            c.reasoning().show(&req).await.map(|_| ()).map_err(err)
        }
    })
    .await;

    // 3. The graph: `nodes` nodes, each written `versions` times, plus a chain of edges.
    eprintln!("populating {} nodes × {} versions…", s.nodes, s.versions);
    let start = Instant::now();
    let types = ["hypothesis", "question", "test", "evidence", "decision"];
    for v in 0..s.versions {
        let mut i = 0;
        while i < s.nodes {
            let end = (i + 1000).min(s.nodes);
            let ops: Vec<GraphOp> = (i..end)
                .map(|k| GraphOp::NodeUpsert {
                    id: format!("n{k}"),
                    node_type: types[(k % 5) as usize].into(),
                    title: Some(format!("node {k} version {v}")),
                    text: Some(format!(
                        "what we learned about component {} in round {v}",
                        k % 97
                    )),
                    status: Some(if k % 3 == 0 { "open" } else { "closed" }.into()),
                    tags: Some(vec![format!("t{}", k % 10)]),
                    meta: None,
                })
                .collect();
            let mut batches = vec![ops];
            if v == 0 {
                batches.push(
                    (i.max(1)..end)
                        .map(|k| GraphOp::EdgeUpsert {
                            from: format!("n{k}"),
                            rel: "supports".into(),
                            to: format!("n{}", k - 1),
                            meta: None,
                        })
                        .collect(),
                );
            }
            for ops in batches {
                client
                    .reasoning()
                    .graph_apply(&GraphApplyRequest {
                        workspace: ws.clone(),
                        branch: Some("main".into()),
                        doc: Some("graph".into()),
                        ops,
                        ..Default::default()
                    })
                    .await?;
            }
            i = end;
        }
    }
    let populate_graph_s = start.elapsed().as_secs_f64();
    let (c, w) = (client.clone(), ws.clone());
    let (graph_query, _) = phase(READ_CLIENTS, s.duration, move |_, _, _| {
        let (c, w) = (c.clone(), w.clone());
        async move {
            let req = GraphQueryRequest {
                workspace: w,
                branch: Some("main".into()),
                doc: Some("graph".into()),
                ..Default::default()
            };
            c.reasoning()
                .graph_query(&req)
                .await
                .map(|_| ())
                .map_err(err)
        }
    })
    .await;

    // 4. A merge of `merge_keys` keys changed on a branch.
    client
        .reasoning()
        .branch_create(&BranchCreateRequest {
            workspace: ws.clone(),
            name: "merge-me".into(),
            from: Some("main".into()),
        })
        .await?;
    let mut k = 0;
    while k < s.merge_keys {
        let end = (k + 1000).min(s.merge_keys);
        let ops = (k..end)
            .map(|i| GraphOp::NodeUpsert {
                id: format!("n{i}"),
                node_type: "decision".into(),
                title: Some(format!("merged {i}")),
                text: None,
                status: Some("closed".into()),
                tags: None,
                meta: None,
            })
            .collect();
        client
            .reasoning()
            .graph_apply(&GraphApplyRequest {
                workspace: ws.clone(),
                branch: Some("merge-me".into()),
                doc: Some("graph".into()),
                ops,
                ..Default::default()
            })
            .await?;
        k = end;
    }
    let start = Instant::now();
    let merged = client
        .reasoning()
        .graph_merge(&MergeRequest {
            workspace: ws.clone(),
            from: "merge-me".into(),
            into: "main".into(),
            doc: Some("graph".into()),
            limit: Some(s.merge_keys.clamp(1, 1000) as i64),
            ..Default::default()
        })
        .await?;
    let graph_merge_ms = start.elapsed().as_secs_f64() * 1000.0;

    // 5. The radar of a task with `steps` steps.
    client
        .tasks()
        .create(&TasksCreateRequest {
            workspace: ws.clone(),
            title: "Bench plan".into(),
            ..Default::default()
        })
        .await?;
    let steps: Vec<NewStep> = (0..s.steps)
        .map(|i| NewStep {
            title: format!("step {i}"),
            success_criteria: Some(vec![format!("criterion {i}")]),
            tests: Some(vec![format!("test {i}")]),
        })
        .collect();
    let task = client
        .tasks()
        .create(&TasksCreateRequest {
            workspace: ws.clone(),
            title: "Bench task".into(),
            parent: Some("PLAN-001".into()),
            steps: Some(steps),
            ..Default::default()
        })
        .await?;
    let (c, w, id) = (client.clone(), ws.clone(), task.item.id.clone());
    let (tasks_radar, _) = phase(READ_CLIENTS, s.duration, move |_, _, _| {
        let (c, w, id) = (c.clone(), w.clone(), id.clone());
        async move {
            let req = TasksRadarRequest {
                workspace: w,
                task: Some(id),
                ..Default::default()
            };
            c.tasks().radar(&req).await.map(|_| ()).map_err(err)
        }
    })
    .await;

    let report = ReasoningReport {
        addr: client.addr().to_string(),
        workspace: ws,
        clients: s.clients,
        duration_s: s.duration.as_secs_f64(),
        size_bytes: s.size,
        notes_store_ratio: if capsule_store.throughput > 0.0 {
            notes_commit.throughput / capsule_store.throughput
        } else {
            0.0
        },
        capsule_store,
        notes_commit,
        base_entries: s.entries,
        populate_entries_s,
        show_derived,
        graph_nodes: s.nodes,
        graph_versions: s.versions,
        populate_graph_s,
        graph_query,
        merge_keys: s.merge_keys,
        graph_merge_ms,
        graph_merged: merged.merged,
        task_steps: s.steps,
        tasks_radar,
    };
    if json {
        outln!("{}", serde_json::to_string(&report)?)?;
    } else {
        print_table(&report)?;
    }
    Ok(())
}

fn print_table(r: &ReasoningReport) -> anyhow::Result<()> {
    outln!(
        "moss bench --reasoning: {} clients, {} s per phase, {}-byte notes, daemon at {}",
        r.clients,
        r.duration_s,
        r.size_bytes,
        r.addr
    )?;
    let row = |name: &str, o: &OpReport, target: &str| o.print_line(name, 34, target);
    row("capsule_store", &r.capsule_store, "")?;
    row("branchmind_notes_commit", &r.notes_commit, "")?;
    outln!(
        "notes_commit / capsule_store        {:.2}  (target ≥ 0.8)",
        r.notes_store_ratio
    )?;
    row(
        &format!("show, derived of {} entries", r.base_entries),
        &r.show_derived,
        "(target p95 < 5 ms)",
    )?;
    row(
        &format!(
            "graph_query, {}×{} versions",
            r.graph_nodes, r.graph_versions
        ),
        &r.graph_query,
        "(target p95 < 10 ms)",
    )?;
    outln!(
        "graph_merge of {} keys              {:.1} ms, {} merged  (target < 1000 ms)",
        r.merge_keys,
        r.graph_merge_ms,
        r.graph_merged
    )?;
    row(
        &format!("tasks_radar, {} steps", r.task_steps),
        &r.tasks_radar,
        "(target p95 < 5 ms)",
    )?;
    outln!(
        "(populating: {:.1} s for the entries, {:.1} s for the graph; workspace {})",
        r.populate_entries_s,
        r.populate_graph_s,
        r.workspace
    )?;
    Ok(())
}
