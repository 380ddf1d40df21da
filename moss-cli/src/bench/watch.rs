//! `moss bench --watch`: how soon a capsule change reaches the waiters of `capsule_watch`.
//!
//! `--clients` writers store capsules into one run at `--watch-rate` writes per second in all,
//! while `--clients` waiters follow that run with `capsule_watch` (up to 100 changes per answer)
//! and their cursors. The commit
//! of a write falls between the writer's request and its answer, so for each event a waiter
//! receives, the latency from commit to answer lies between (answer − writer's answer) and
//! (answer − writer's request); both bounds are reported. Every waiter must see every write
//! exactly once.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use moss_client::Client;
use moss_client::capsule::{RunIds, StoreRequest, WatchRequest};
use serde::Serialize;

use super::load::capsule_of_size;
use crate::output::outln;

#[derive(Debug, Serialize)]
struct Report {
    waiters: usize,
    writers: usize,
    duration_s: f64,
    rate_per_s: f64,
    writes: usize,
    store_p50_ms: f64,
    store_p99_ms: f64,
    /// Events received, of writes × waiters expected.
    events: usize,
    expected_events: usize,
    duplicates: usize,
    /// Commit → answer lies between the lower and the upper bound.
    wake_p50_ms: (f64, f64),
    wake_p99_ms: (f64, f64),
}

/// When a writer sent a capsule's store, and when it got the answer.
type Sent = Arc<std::sync::Mutex<HashMap<String, (Instant, Instant)>>>;

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

pub async fn run(
    client: &Client,
    clients: usize,
    duration: Duration,
    size: usize,
    rate: f64,
    json: bool,
) -> anyhow::Result<()> {
    if rate <= 0.0 {
        anyhow::bail!("--watch-rate must be positive");
    }
    let tag = ulid::Ulid::generate().to_string().to_lowercase();
    let (workspace, run) = (format!("bench-watch-{tag}"), format!("bench-watch-{tag}"));
    let start = client
        .capsules()
        .watch(&WatchRequest {
            timeout_ms: Some(0),
            ..Default::default()
        })
        .await?;
    let stop_writing = Arc::new(AtomicBool::new(false));
    let stop_waiting = Arc::new(AtomicBool::new(false));
    let sent: Sent = Arc::default();

    let mut waiters = Vec::new();
    for _ in 0..clients {
        let (c, run, stop) = (client.clone(), run.clone(), stop_waiting.clone());
        let mut since = start.cursor;
        waiters.push(tokio::spawn(async move {
            let mut seen: Vec<(String, Instant)> = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let req = WatchRequest {
                    run_id: Some(RunIds::from(run.as_str())),
                    since: Some(since),
                    timeout_ms: Some(500),
                    limit: Some(100),
                    ..Default::default()
                };
                match c.capsules().watch(&req).await {
                    Ok(r) => {
                        let now = Instant::now();
                        since = r.cursor;
                        for change in r.events {
                            if let Some(name) = change.capsule.name {
                                seen.push((name, now));
                            }
                        }
                    }
                    Err(e) => {
                        eprintln!("watch failed: {e}");
                        break;
                    }
                }
            }
            seen
        }));
    }

    let interval = Duration::from_secs_f64(clients as f64 / rate);
    let began = Instant::now();
    let mut writers = Vec::new();
    for cn in 0..clients {
        let (c, ws, run, stop, sent) = (
            client.clone(),
            workspace.clone(),
            run.clone(),
            stop_writing.clone(),
            sent.clone(),
        );
        writers.push(tokio::spawn(async move {
            // Writers start spread over one interval, so writes do not come in bursts.
            tokio::time::sleep(interval.mul_f64(cn as f64 / clients as f64)).await;
            let mut tick = tokio::time::interval(interval);
            let mut n = 0u64;
            let mut store_ms = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                tick.tick().await;
                let name = format!("w{cn}-{n}");
                n += 1;
                let req = StoreRequest {
                    capsule_text: capsule_of_size(size, ((cn as u64) << 32) | n),
                    workspace: Some(ws.clone()),
                    name: Some(name.clone()),
                    run_id: Some(run.clone()),
                    ..Default::default()
                };
                let t0 = Instant::now();
                if let Err(e) = c.capsules().store(&req).await {
                    eprintln!("store failed: {e}");
                    continue;
                }
                let t1 = Instant::now();
                store_ms.push((t1 - t0).as_secs_f64() * 1000.0);
                sent.lock().unwrap().insert(name, (t0, t1));
            }
            store_ms
        }));
    }
    tokio::time::sleep(duration).await;
    stop_writing.store(true, Ordering::Relaxed);
    let mut store_ms = Vec::new();
    for w in writers {
        store_ms.extend(w.await?);
    }
    let elapsed = began.elapsed();
    // Let the waiters take the last writes.
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop_waiting.store(true, Ordering::Relaxed);
    let sent = sent.lock().unwrap().clone();
    let (mut lower, mut upper) = (Vec::new(), Vec::new());
    let (mut events, mut duplicates) = (0, 0);
    for w in waiters {
        let seen = w.await?;
        let mut once = std::collections::HashSet::new();
        for (name, at) in seen {
            if !once.insert(name.clone()) {
                duplicates += 1;
                continue;
            }
            let Some((t0, t1)) = sent.get(&name) else {
                continue;
            };
            events += 1;
            let ms = |from: Instant| {
                if at >= from {
                    (at - from).as_secs_f64() * 1000.0
                } else {
                    -((from - at).as_secs_f64() * 1000.0)
                }
            };
            lower.push(ms(*t1).max(0.0));
            upper.push(ms(*t0));
        }
    }
    for v in [&mut lower, &mut upper, &mut store_ms] {
        v.sort_by(|a, b| a.total_cmp(b));
    }
    let report = Report {
        waiters: clients,
        writers: clients,
        duration_s: elapsed.as_secs_f64(),
        rate_per_s: rate,
        writes: sent.len(),
        store_p50_ms: pct(&store_ms, 0.5),
        store_p99_ms: pct(&store_ms, 0.99),
        events,
        expected_events: sent.len() * clients,
        duplicates,
        wake_p50_ms: (pct(&lower, 0.5), pct(&upper, 0.5)),
        wake_p99_ms: (pct(&lower, 0.99), pct(&upper, 0.99)),
    };
    if json {
        outln!("{}", serde_json::to_string(&report)?)?;
        return Ok(());
    }
    outln!(
        "moss bench --watch: {} waiters, {} writers at {} writes/s in all, {:.1} s",
        report.waiters,
        report.writers,
        report.rate_per_s,
        report.duration_s
    )?;
    outln!(
        "writes {:>8}   capsule_store p50 {:.2} ms  p99 {:.2} ms",
        report.writes,
        report.store_p50_ms,
        report.store_p99_ms
    )?;
    outln!(
        "events {:>8} of {} expected, {} seen twice",
        report.events,
        report.expected_events,
        report.duplicates
    )?;
    outln!(
        "capsule_watch wake-up, commit → answer: p50 {:.2}-{:.2} ms  p99 {:.2}-{:.2} ms",
        report.wake_p50_ms.0,
        report.wake_p50_ms.1,
        report.wake_p99_ms.0,
        report.wake_p99_ms.1
    )?;
    outln!("(each between the writer's answer and the writer's request as the commit time)")?;
    Ok(())
}
