//! `moss bench --memory`: the associative memory under load, in one run.
//!
//! 1. Write throughput: `capsule_store`, then `memory_store` with the same text, each for
//!    `--duration` with `--clients` clients; the ratio memory/capsule.
//! 2. A corpus of `--memories` memories in a fresh workspace: varied text, a file context each
//!    (500 directories, 5,000 files), one of 20 slots, weights 0.5-3, and a marker
//!    `rare<i % 1000>` (0.1% of the corpus each).
//! 3. Recall latency with one client: a rare term, and a slot (5% of the corpus).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use moss_client::Client;
use moss_client::capsule::StoreRequest;
use moss_client::memory::{Contexts, MemoryRecallRequest, MemoryStoreRequest};
use serde::Serialize;

use super::load::{OpReport, XorShift, capsule_of_size, phase};
use crate::output::outln;

#[derive(Debug, Serialize)]
struct MemoryReport {
    addr: String,
    workspace: String,
    clients: usize,
    duration_s: f64,
    size_bytes: usize,
    capsule_store: OpReport,
    memory_store: OpReport,
    /// memory_store throughput / capsule_store throughput (target ≥ 0.8).
    memory_capsule_ratio: f64,
    memories: u64,
    populate_s: f64,
    /// recall of a term in 0.1% of the corpus, one client (target p95 < 10 ms).
    recall_rare: OpReport,
    /// recall of a slot holding 5% of the corpus, one client (target p95 < 10 ms).
    recall_slot: OpReport,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Corpus memory `i`.
fn corpus(i: u64, ws: &str) -> MemoryStoreRequest {
    let mut rng = XorShift(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    const WORDS: [&str; 24] = [
        "cache", "retry", "token", "schema", "index", "queue", "deploy", "build", "lint", "query",
        "worker", "session", "config", "backup", "metric", "alert", "route", "handler", "client",
        "server", "timeout", "limit", "bundle", "release",
    ];
    let mut text = String::new();
    for k in 0..12 {
        if k > 0 {
            text.push(' ');
        }
        text.push_str(WORDS[(rng.next() % WORDS.len() as u64) as usize]);
    }
    text.push_str(&format!(" rare{} note {i}", i % 1000));
    MemoryStoreRequest {
        content: text,
        context: Some(Contexts::One(format!(
            "src/mod{}/file{}.py",
            i % 500,
            i % 5000
        ))),
        slot: Some(format!("slot{}", i % 20)),
        weight: Some(0.5 + (i % 6) as f64 * 0.5),
        workspace: Some(ws.to_string()),
        ..Default::default()
    }
}

pub async fn run(
    client: &Client,
    clients: usize,
    duration: Duration,
    size: usize,
    count: u64,
    json: bool,
) -> anyhow::Result<()> {
    let ws = format!(
        "bench-memory-{}",
        ulid::Ulid::generate().to_string().to_lowercase()
    );
    let writes = format!("{ws}-writes");

    // 1. Writes.
    let (c, w) = (client.clone(), writes.clone());
    let (capsule_store, _) = phase(clients, duration, move |cn, n, _| {
        let (c, w) = (c.clone(), w.clone());
        let text = capsule_of_size(size, ((cn as u64) << 32) | n);
        async move {
            let req = StoreRequest {
                capsule_text: text,
                workspace: Some(w),
                name: Some(format!("c{cn}-{n}")),
                ..Default::default()
            };
            c.capsules().store(&req).await.map(|_| ()).map_err(err)
        }
    })
    .await;
    let (c, w) = (client.clone(), writes.clone());
    let (memory_store, _) = phase(clients, duration, move |cn, n, _| {
        let (c, w) = (c.clone(), w.clone());
        let text = capsule_of_size(size, ((cn as u64) << 32) | n | (1 << 62));
        async move {
            let req = MemoryStoreRequest {
                content: text,
                context: Some(Contexts::One(format!("src/client{cn}/file{n}.py"))),
                workspace: Some(w),
                ..Default::default()
            };
            c.memories().store(&req).await.map(|_| ()).map_err(err)
        }
    })
    .await;

    // 2. The corpus.
    eprintln!("populating {count} memories…");
    let start = Instant::now();
    let next = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    for _ in 0..clients {
        let (c, w, next) = (client.clone(), ws.clone(), next.clone());
        writers.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= count {
                    return Ok::<(), anyhow::Error>(());
                }
                c.memories().store(&corpus(i, &w)).await?;
            }
        }));
    }
    for w in writers {
        w.await??;
    }
    let populate_s = start.elapsed().as_secs_f64();
    // A recall waits for the index to hold every write before it: let it catch up first, so
    // that the recall phases time recalls, not the indexer.
    super::load::index_catch_up(client, Duration::from_secs(120)).await?;

    // 3. Recall, one client.
    let (c, w) = (client.clone(), ws.clone());
    let (recall_rare, _) = phase(1, duration, move |_, _, rng| {
        let (c, w) = (c.clone(), w.clone());
        let term = rng.next() % 1000;
        async move {
            let req = MemoryRecallRequest {
                query: Some(format!("rare{term}")),
                workspace: Some(w),
                ..Default::default()
            };
            c.memories().recall(&req).await.map(|_| ()).map_err(err)
        }
    })
    .await;
    let (c, w) = (client.clone(), ws.clone());
    let (recall_slot, _) = phase(1, duration, move |_, _, rng| {
        let (c, w) = (c.clone(), w.clone());
        let slot = rng.next() % 20;
        async move {
            let req = MemoryRecallRequest {
                slot: Some(format!("slot{slot}")),
                workspace: Some(w),
                ..Default::default()
            };
            c.memories().recall(&req).await.map(|_| ()).map_err(err)
        }
    })
    .await;

    let report = MemoryReport {
        addr: client.addr().to_string(),
        workspace: ws,
        clients,
        duration_s: duration.as_secs_f64(),
        size_bytes: size,
        memory_capsule_ratio: if capsule_store.throughput > 0.0 {
            memory_store.throughput / capsule_store.throughput
        } else {
            0.0
        },
        capsule_store,
        memory_store,
        memories: count,
        populate_s,
        recall_rare,
        recall_slot,
    };
    if json {
        outln!("{}", serde_json::to_string(&report)?)?;
    } else {
        let row = |name: &str, o: &OpReport, target: &str| o.print_line(name, 28, target);
        outln!(
            "moss bench --memory: {} clients, {} s per phase, {}-byte texts, daemon at {}",
            report.clients,
            report.duration_s,
            report.size_bytes,
            report.addr
        )?;
        row("capsule_store", &report.capsule_store, "")?;
        row("memory_store", &report.memory_store, "")?;
        outln!(
            "memory_store / capsule_store  {:.2}  (target ≥ 0.8)",
            report.memory_capsule_ratio
        )?;
        row(
            &format!("recall rare term, {} mem.", report.memories),
            &report.recall_rare,
            "(target p95 < 10 ms)",
        )?;
        row(
            &format!("recall slot, {} mem.", report.memories),
            &report.recall_slot,
            "(target p95 < 10 ms)",
        )?;
        outln!(
            "(populating took {:.1} s; workspace {})",
            report.populate_s,
            report.workspace
        )?;
    }
    Ok(())
}
