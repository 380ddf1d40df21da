//! `moss bench --search --cross-family`: `moss_search` and `moss_context` over every family.
//!
//! The corpus is `--items` items in one workspace (a fresh `bench-cross-<ulid>` unless
//! `--workspace` is given):
//!
//! - **the context task**: a plan and a task with [`CONTEXT_STEPS`] steps, [`CONTEXT_NOTES`]
//!   reasoning notes on it, [`CONTEXT_HANDOFFS`] capsules handed off for it (stored with its id
//!   as their `task`) and [`CONTEXT_MEMORIES`] memories with its id among their contexts;
//! - **the rest**, a quarter per family: capsules of `--size` bytes, reasoning notes (on `main`),
//!   plans holding tasks of [`STEPS_PER_TASK`] steps (each plan, task and step one item) and
//!   memories, written by `--clients` (at least 8) concurrent writers, the steps by the bulk
//!   path (a task's steps in its `tasks_create`).
//!
//! Every item carries `mossall` (the common word) and one of 1,000 rare words `rare<k>` (each
//! in 0.1% of the corpus, spread over the four families). Once the full-text indexes have
//! caught up, one client times `moss_search` of a rare word, then of `mossall`, then
//! `moss_context` of the context task, each for `--duration` seconds.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use moss_client::Client;
use moss_client::capsule::StoreRequest;
use moss_client::memory::{Contexts, MemoryStoreRequest};
use moss_client::moss::{ContextRequest, FamilyCounts, SearchRequest, WorkspacesRequest};
use moss_client::reasoning::NotesCommitRequest;
use moss_client::tasks::{NewStep, TasksCreateRequest};
use serde::Serialize;

use super::load::{OpReport, capsule_of_size, index_catch_up, phase, words};
use crate::output::outln;

const COMMON_TERM: &str = "mossall";
const RARE: u64 = 1000;
pub const CONTEXT_STEPS: u64 = 200;
pub const CONTEXT_NOTES: u64 = 50;
pub const CONTEXT_HANDOFFS: u64 = 20;
pub const CONTEXT_MEMORIES: u64 = 100;
/// Items of the context task: its plan, itself, its steps, notes, handoffs and memories.
const CONTEXT_ITEMS: u64 = 2 + CONTEXT_STEPS + CONTEXT_NOTES + CONTEXT_HANDOFFS + CONTEXT_MEMORIES;
const STEPS_PER_TASK: u64 = 99;
const TASKS_PER_PLAN: usize = 20;
/// Sizes of the other families' texts, in bytes (before the marker words).
const NOTE_CHARS: usize = 400;
const MEMORY_CHARS: usize = 160;
const STEP_CHARS: usize = 60;

#[derive(Debug, Serialize)]
struct SeedTimes {
    context_task: f64,
    capsules: f64,
    reasoning: f64,
    tasks: f64,
    memories: f64,
    /// From the last write until the full-text indexes held every write.
    index_catch_up: f64,
}

/// What the first `moss_context` of the context task answered.
#[derive(Debug, Serialize)]
struct ContextShape {
    steps_total: u64,
    handoffs: usize,
    notes: usize,
    memories: usize,
    decisions: usize,
    changes: usize,
    chars: usize,
}

#[derive(Debug, Serialize)]
struct CrossReport {
    addr: String,
    workspace: String,
    items: u64,
    /// What each family holds in the workspace, as moss_workspaces counts it.
    counts: FamilyCounts,
    /// Concurrent writers while seeding (the timed phases use one client).
    writers: usize,
    duration_s: f64,
    size_bytes: usize,
    /// Seconds spent seeding, per part.
    seed_s: SeedTimes,
    /// moss_search of a word in 0.1% of the items, one client (target p95 < 15 ms).
    search_rare: OpReport,
    /// moss_search of `mossall`, in every item, one client.
    search_common: OpReport,
    context_task: String,
    context_shape: ContextShape,
    /// moss_context of the context task, one client (target p95 < 10 ms).
    context: OpReport,
}

/// The common word and rare word `j` of a family's item `j`.
fn markers(j: u64) -> String {
    format!("{COMMON_TERM} rare{}", j % RARE)
}

/// How `count` items of the tasks family are laid out: the number of plans, and for each task
/// its plan (an index) and its number of steps. Plans, tasks and steps add up to `count`.
fn task_layout(count: u64) -> (usize, Vec<(usize, u64)>) {
    let (mut plans, mut tasks, mut left) = (0usize, Vec::new(), count);
    while left > 0 {
        if tasks.len() % TASKS_PER_PLAN == 0 && tasks.len() / TASKS_PER_PLAN == plans {
            plans += 1;
            left -= 1;
            if left == 0 {
                break;
            }
        }
        let steps = STEPS_PER_TASK.min(left - 1);
        tasks.push((plans - 1, steps));
        left -= 1 + steps;
    }
    (plans, tasks)
}

/// Runs `op(i)` for `i` in `0..count` with `writers` concurrent loops; the seconds it took.
async fn seed<F, Fut>(writers: usize, count: u64, what: &'static str, op: F) -> anyhow::Result<f64>
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send,
{
    let start = Instant::now();
    let (op, next) = (Arc::new(op), Arc::new(AtomicU64::new(0)));
    let mut loops = Vec::with_capacity(writers);
    for _ in 0..writers {
        let (op, next) = (op.clone(), next.clone());
        loops.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    return Ok::<(), anyhow::Error>(());
                }
                op(i)
                    .await
                    .map_err(|e| e.context(format!("seeding {what} {i}")))?;
            }
        }));
    }
    for l in loops {
        l.await??;
    }
    Ok(start.elapsed().as_secs_f64())
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// The context task: a plan, the task and its steps, then its notes, handoffs and memories.
/// Returns the task's id.
async fn seed_context_task(
    client: &Client,
    ws: &str,
    writers: usize,
    size: usize,
) -> anyhow::Result<String> {
    let plan = client
        .tasks()
        .create(&TasksCreateRequest {
            workspace: ws.to_string(),
            title: "Cross-family plan".into(),
            ..Default::default()
        })
        .await?;
    let steps = (0..CONTEXT_STEPS)
        .map(|i| NewStep {
            title: format!("context step {i} {}", markers(i)),
            success_criteria: Some(vec![format!("criterion {i}")]),
            tests: Some(vec![format!("test {i}")]),
        })
        .collect();
    let task = client
        .tasks()
        .create(&TasksCreateRequest {
            workspace: ws.to_string(),
            title: "Resume the cross-family work".into(),
            parent: Some(plan.item.id),
            description: Some(format!("The task moss_context reads. {COMMON_TERM}")),
            steps: Some(steps),
            ..Default::default()
        })
        .await?
        .item
        .id;
    let (c, w, t) = (client.clone(), ws.to_string(), task.clone());
    seed(writers, CONTEXT_NOTES, "context note", move |i| {
        let (c, w, t) = (c.clone(), w.clone(), t.clone());
        async move {
            let req = NotesCommitRequest {
                workspace: w,
                target: Some(t),
                content: format!("{}\n{}", words(NOTE_CHARS, (1 << 40) | i), markers(i)),
                ..Default::default()
            };
            c.reasoning().notes_commit(&req).await?;
            Ok(())
        }
    })
    .await?;
    let (c, w, t) = (client.clone(), ws.to_string(), task.clone());
    seed(writers, CONTEXT_HANDOFFS, "handoff", move |i| {
        let (c, w, t) = (c.clone(), w.clone(), t.clone());
        async move {
            let mut text = capsule_of_size(size, (1 << 41) | i);
            text.push_str(&format!("\n{}\n", markers(i)));
            let req = StoreRequest {
                capsule_text: text,
                workspace: Some(w),
                name: Some(format!("handoff-{i}")),
                task: Some(t),
                source: Some("moss-bench".into()),
                ..Default::default()
            };
            c.capsules().store(&req).await?;
            Ok(())
        }
    })
    .await?;
    let (c, w, t) = (client.clone(), ws.to_string(), task.clone());
    seed(writers, CONTEXT_MEMORIES, "context memory", move |i| {
        let (c, w, t) = (c.clone(), w.clone(), t.clone());
        async move {
            let req = MemoryStoreRequest {
                content: format!("{} {}", words(MEMORY_CHARS, (1 << 42) | i), markers(i)),
                context: Some(Contexts::One(t)),
                workspace: Some(w),
                ..Default::default()
            };
            c.memories().store(&req).await?;
            Ok(())
        }
    })
    .await?;
    Ok(task)
}

/// A quarter of `rest` to each family, the remainder to memories.
fn quotas(rest: u64) -> [u64; 4] {
    let q = rest / 4;
    [q, q, q, rest - 3 * q]
}

pub async fn run(
    client: &Client,
    items: u64,
    workspace: Option<String>,
    clients: usize,
    duration: Duration,
    size: usize,
    json: bool,
) -> anyhow::Result<()> {
    if items < CONTEXT_ITEMS + 4 {
        anyhow::bail!(
            "--items {items} is too few: the context task alone is {CONTEXT_ITEMS} items, and \
             each family needs one more; pass --items {} or more",
            CONTEXT_ITEMS + 4
        );
    }
    let ws = workspace.unwrap_or_else(|| {
        format!(
            "bench-cross-{}",
            ulid::Ulid::generate().to_string().to_lowercase()
        )
    });
    let writers = clients.max(8);
    let [capsules, notes, task_items, memories] = quotas(items - CONTEXT_ITEMS);
    eprintln!(
        "seeding {items} items in workspace {ws:?}: the context task ({CONTEXT_ITEMS}), \
         {capsules} capsules, {notes} notes, {task_items} plans/tasks/steps, {memories} memories"
    );
    let all = Instant::now();

    let started = Instant::now();
    let task = seed_context_task(client, &ws, writers, size).await?;
    let context_task_s = started.elapsed().as_secs_f64();

    let (c, w) = (client.clone(), ws.clone());
    let capsules_s = seed(writers, capsules, "capsule", move |i| {
        let (c, w) = (c.clone(), w.clone());
        async move {
            let mut text = capsule_of_size(size.saturating_sub(20), i);
            text.push_str(&format!("\n{}\n", markers(i)));
            let req = StoreRequest {
                capsule_text: text,
                workspace: Some(w),
                name: Some(format!("x{i}")),
                source: Some("moss-bench".into()),
                ..Default::default()
            };
            c.capsules().store(&req).await?;
            Ok(())
        }
    })
    .await?;

    let (c, w) = (client.clone(), ws.clone());
    let reasoning_s = seed(writers, notes, "note", move |i| {
        let (c, w) = (c.clone(), w.clone());
        async move {
            let req = NotesCommitRequest {
                workspace: w,
                branch: Some("main".into()),
                doc: Some("notes".into()),
                content: format!("{}\n{}", words(NOTE_CHARS, (1 << 43) | i), markers(i)),
                ..Default::default()
            };
            c.reasoning().notes_commit(&req).await?;
            Ok(())
        }
    })
    .await?;

    let started = Instant::now();
    let (plans, layout) = task_layout(task_items);
    let mut plan_ids = Vec::with_capacity(plans);
    for p in 0..plans as u64 {
        let plan = client
            .tasks()
            .create(&TasksCreateRequest {
                workspace: ws.clone(),
                title: format!("plan {p} {}", markers(p)),
                ..Default::default()
            })
            .await?;
        plan_ids.push(plan.item.id);
    }
    let (c, w) = (client.clone(), ws.clone());
    let (layout, plan_ids) = (Arc::new(layout), Arc::new(plan_ids));
    let tasks = layout.len() as u64;
    seed(writers, tasks, "task", move |i| {
        let (c, w, layout, plan_ids) = (c.clone(), w.clone(), layout.clone(), plan_ids.clone());
        async move {
            let (plan, steps) = layout[i as usize];
            // Step item numbers follow the plans and the tasks, so the rare words go round.
            let first = plans as u64 + tasks + i * STEPS_PER_TASK;
            let steps = (0..steps)
                .map(|k| NewStep {
                    title: format!(
                        "{} {}",
                        words(STEP_CHARS, (1 << 44) | (first + k)),
                        markers(first + k)
                    ),
                    success_criteria: None,
                    tests: None,
                })
                .collect();
            let req = TasksCreateRequest {
                workspace: w,
                title: format!("task {i} {}", markers(plans as u64 + i)),
                parent: Some(plan_ids[plan].clone()),
                steps: Some(steps),
                ..Default::default()
            };
            c.tasks().create(&req).await?;
            Ok(())
        }
    })
    .await?;
    let tasks_s = started.elapsed().as_secs_f64();

    let (c, w) = (client.clone(), ws.clone());
    let memories_s = seed(writers, memories, "memory", move |i| {
        let (c, w) = (c.clone(), w.clone());
        async move {
            let req = MemoryStoreRequest {
                content: format!("{} {}", words(MEMORY_CHARS, (1 << 45) | i), markers(i)),
                context: Some(Contexts::One(format!(
                    "src/mod{}/file{}.rs",
                    i % 500,
                    i % 5000
                ))),
                workspace: Some(w),
                ..Default::default()
            };
            c.memories().store(&req).await?;
            Ok(())
        }
    })
    .await?;

    let seeded = all.elapsed();
    let index_catch_up_s = index_catch_up(client, seeded).await?.unwrap_or(0.0);
    eprintln!(
        "seeded in {:.1} s; the indexes caught up {index_catch_up_s:.1} s later",
        seeded.as_secs_f64()
    );

    let counts = client
        .moss()
        .workspaces(&WorkspacesRequest {})
        .await?
        .items
        .into_iter()
        .find(|w| w.workspace == ws)
        .map(|w| w.counts)
        .ok_or_else(|| anyhow::anyhow!("moss_workspaces does not list {ws:?}"))?;
    // Every family answers the common word (this also warms the caches).
    let probe = client
        .moss()
        .search(&SearchRequest {
            query: COMMON_TERM.into(),
            workspace: Some(ws.clone()),
            limit: Some(100),
            ..Default::default()
        })
        .await?;
    for family in ["capsule", "reasoning", "tasks", "memory"] {
        if !probe.items.iter().any(|h| h.family == family) {
            anyhow::bail!(
                "moss_search for {COMMON_TERM:?} found nothing in family {family} of workspace \
                 {ws:?}; the benchmark cannot time a search that misses a family"
            );
        }
    }
    let first = client
        .moss()
        .context(&ContextRequest {
            workspace: ws.clone(),
            task: Some(task.clone()),
            ..Default::default()
        })
        .await?;
    let context_shape = ContextShape {
        steps_total: first
            .radar
            .as_ref()
            .and_then(|r| r["steps"]["total"].as_u64())
            .unwrap_or(0),
        handoffs: first.handoffs.len(),
        notes: first.notes.len(),
        memories: first.memories.len(),
        decisions: first.decisions.len(),
        changes: first.changes.len(),
        chars: serde_json::to_string(&first)?.chars().count(),
    };

    let (c, w) = (client.clone(), ws.clone());
    let (search_rare, _) = phase(1, duration, move |_, _, rng| {
        let (c, w) = (c.clone(), w.clone());
        let query = format!("rare{}", rng.next() % RARE);
        async move {
            let req = SearchRequest {
                query,
                workspace: Some(w),
                ..Default::default()
            };
            c.moss().search(&req).await.map(|_| ()).map_err(err)
        }
    })
    .await;
    let (c, w) = (client.clone(), ws.clone());
    let (search_common, _) = phase(1, duration, move |_, _, _| {
        let (c, w) = (c.clone(), w.clone());
        async move {
            let req = SearchRequest {
                query: COMMON_TERM.into(),
                workspace: Some(w),
                ..Default::default()
            };
            c.moss().search(&req).await.map(|_| ()).map_err(err)
        }
    })
    .await;
    let (c, w, t) = (client.clone(), ws.clone(), task.clone());
    let (context, _) = phase(1, duration, move |_, _, _| {
        let (c, w, t) = (c.clone(), w.clone(), t.clone());
        async move {
            let req = ContextRequest {
                workspace: w,
                task: Some(t),
                ..Default::default()
            };
            c.moss().context(&req).await.map(|_| ()).map_err(err)
        }
    })
    .await;

    let report = CrossReport {
        addr: client.addr().to_string(),
        workspace: ws,
        items,
        counts,
        writers,
        duration_s: duration.as_secs_f64(),
        size_bytes: size,
        seed_s: SeedTimes {
            context_task: context_task_s,
            capsules: capsules_s,
            reasoning: reasoning_s,
            tasks: tasks_s,
            memories: memories_s,
            index_catch_up: index_catch_up_s,
        },
        search_rare,
        search_common,
        context_task: task,
        context_shape,
        context,
    };
    if json {
        outln!("{}", serde_json::to_string(&report)?)?;
    } else {
        print_table(&report)?;
    }
    Ok(())
}

fn print_table(r: &CrossReport) -> anyhow::Result<()> {
    outln!(
        "moss bench --search --cross-family: {} items in {:?}, one client, {} s per phase, \
         daemon at {}",
        r.items,
        r.workspace,
        r.duration_s,
        r.addr
    )?;
    outln!(
        "held: {} capsules, {} reasoning entries, {} plans and tasks, {} memories",
        r.counts.capsules,
        r.counts.reasoning,
        r.counts.tasks,
        r.counts.memories
    )?;
    let s = &r.seed_s;
    outln!(
        "seeded with {} writers in {:.1} s: context task {:.1}, capsules {:.1}, notes {:.1}, \
         tasks {:.1}, memories {:.1}; indexes caught up {:.1} s later",
        r.writers,
        s.context_task + s.capsules + s.reasoning + s.tasks + s.memories,
        s.context_task,
        s.capsules,
        s.reasoning,
        s.tasks,
        s.memories,
        s.index_catch_up
    )?;
    let c = &r.context_shape;
    outln!(
        "moss_context of {}: {} steps; answers {} handoffs, {} notes, {} memories, {} changes \
         in {} chars",
        r.context_task,
        c.steps_total,
        c.handoffs,
        c.notes,
        c.memories,
        c.changes,
        c.chars
    )?;
    outln!(
        "{:<28} {:>8} {:>9} {:>9} {:>9} {:>9} {:>7}  target",
        "operation",
        "ops",
        "ops/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "errors"
    )?;
    for (name, op, target) in [
        ("moss_search rare word", &r.search_rare, "p95 < 15 ms"),
        ("moss_search mossall (all)", &r.search_common, ""),
        ("moss_context", &r.context, "p95 < 10 ms"),
    ] {
        op.print_row(name, 28, target)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_layout_adds_up_to_the_count() {
        for count in [1, 2, 3, 100, 101, 2001, 2100, 24_907, 25_000] {
            let (plans, tasks) = task_layout(count);
            let steps: u64 = tasks.iter().map(|t| t.1).sum();
            assert_eq!(plans as u64 + tasks.len() as u64 + steps, count, "{count}");
            assert!(tasks.iter().all(|t| t.1 <= STEPS_PER_TASK && t.0 < plans));
            assert!(plans >= tasks.len().div_ceil(TASKS_PER_PLAN), "{count}");
            assert!(plans <= tasks.len().div_ceil(TASKS_PER_PLAN) + 1, "{count}");
        }
    }

    #[test]
    fn quotas_share_the_rest() {
        assert_eq!(quotas(10), [2, 2, 2, 4]);
        assert_eq!(quotas(99_628).iter().sum::<u64>(), 99_628);
    }
}
