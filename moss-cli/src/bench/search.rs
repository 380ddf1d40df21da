//! `moss bench --search`: search latency over a large corpus.
//!
//! The corpus is `--capsules` capsules in one workspace (`bench-search-<N>` by default; against
//! the running daemon, kept between runs so the corpus is built once). Besides the varied filler text of
//! [`capsule_of_size`], capsule `i` carries three marker terms:
//!
//! - `mossall`, in every capsule (the worst case: a term that matches everything);
//! - `rare<i % 1000>`, each in 0.1% of the capsules;
//! - `unus<i % 500>`, each in 0.2% of the capsules.
//!
//! The timed phase runs `--clients` concurrent searches of rare terms (one term, two terms
//! OR-ed, two terms AND-ed: every term under 1% of the corpus) for `--duration` seconds; then
//! one client times searches for `mossall`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use moss_client::Client;
use moss_client::capsule::{ListRequest, SearchRequest, StoreMode, StoreRequest};
use serde::Serialize;

use super::load::{OpReport, XorShift, capsule_of_size, phase};
use crate::output::outln;

const RARE: u64 = 1000;
const UNUSUAL: u64 = 500;
const COMMON_TERM: &str = "mossall";
/// Searches timed for the term that matches every capsule.
const COMMON_SAMPLES: usize = 30;

#[derive(Debug, Serialize)]
struct SearchReport {
    addr: String,
    capsules: u64,
    workspace: String,
    clients: usize,
    duration_s: f64,
    size_bytes: usize,
    /// Seconds spent storing missing capsules (0 when the corpus already existed).
    populate_s: f64,
    /// Queries whose terms each match under 1% of the corpus.
    rare: OpReport,
    /// `mossall`, which matches every capsule, one client.
    common: OpReport,
}

/// The text of corpus capsule `i`.
fn corpus_text(i: u64, size: usize) -> String {
    let mut t = capsule_of_size(size.saturating_sub(40), i);
    t.push_str(&format!(
        "\n{COMMON_TERM} rare{} unus{}\n",
        i % RARE,
        i % UNUSUAL
    ));
    t
}

/// Stores capsules `have..want` with `clients` concurrent writers; prints progress on stderr.
async fn populate(client: &Client, ws: &str, have: u64, want: u64, size: usize, clients: usize) {
    let next = Arc::new(AtomicUsize::new(have as usize));
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (c, ws, next) = (client.clone(), ws.to_string(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as u64;
                if i >= want {
                    return;
                }
                let req = StoreRequest {
                    capsule_text: corpus_text(i, size),
                    workspace: Some(ws.clone()),
                    name: Some(format!("s{i}")),
                    source: Some("moss-bench".into()),
                    mode: Some(StoreMode::Replace),
                    ..Default::default()
                };
                // A failed store is retried once, then reported and skipped.
                if c.capsules().store(&req).await.is_err()
                    && let Err(e) = c.capsules().store(&req).await
                {
                    eprintln!("store s{i}: {e}");
                }
                if i.is_multiple_of(10_000) && i > have {
                    eprintln!("  stored {i} / {want}");
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
}

pub async fn run(
    client: &Client,
    capsules: u64,
    workspace: Option<String>,
    clients: usize,
    duration: Duration,
    size: usize,
    json: bool,
) -> anyhow::Result<()> {
    let ws = workspace.unwrap_or_else(|| format!("bench-search-{capsules}"));
    let have = client
        .capsules()
        .list(&ListRequest {
            workspace: Some(ws.clone()),
            limit: Some(1),
            ..Default::default()
        })
        .await?
        .pagination
        .total
        .unwrap_or(0) as u64;
    let started = Instant::now();
    if have < capsules {
        eprintln!("building the corpus: {capsules} capsules in workspace {ws:?} ({have} exist)");
        populate(client, &ws, have, capsules, size, clients.max(8)).await;
    }
    let populate_s = if have < capsules {
        started.elapsed().as_secs_f64()
    } else {
        0.0
    };
    // Searches wait for the indexer; this one also warms the caches.
    let found = client
        .capsules()
        .search(&SearchRequest {
            query: COMMON_TERM.into(),
            workspace: Some(ws.clone()),
            limit: Some(1),
            ..Default::default()
        })
        .await?
        .pagination
        .total
        .unwrap_or(0) as u64;
    if found < capsules {
        anyhow::bail!(
            "only {found} of {capsules} corpus capsules are searchable yet; run again when the \
             index has caught up"
        );
    }

    let (c, w) = (client.clone(), ws.clone());
    let (rare, _) = phase(clients, duration, move |_, n, rng: &mut XorShift| {
        let (c, w) = (c.clone(), w.clone());
        let (a, b) = (rng.next() % RARE, rng.next() % UNUSUAL);
        let query = match n % 3 {
            0 => format!("rare{a}"),
            1 => format!("rare{a} OR unus{b}"),
            _ => format!("rare{a} unus{b}"),
        };
        async move {
            let req = SearchRequest {
                query,
                workspace: Some(w),
                ..Default::default()
            };
            c.capsules()
                .search(&req)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
    })
    .await;

    let mut lat = Vec::with_capacity(COMMON_SAMPLES);
    let mut errors = 0;
    let t0 = Instant::now();
    for _ in 0..COMMON_SAMPLES {
        let t = Instant::now();
        let r = client
            .capsules()
            .search(&SearchRequest {
                query: COMMON_TERM.into(),
                workspace: Some(ws.clone()),
                ..Default::default()
            })
            .await;
        match r {
            Ok(_) => lat.push(t.elapsed()),
            Err(_) => errors += 1,
        }
    }
    let common = OpReport::from_latencies(lat, errors, t0.elapsed());

    let report = SearchReport {
        addr: client.addr().to_string(),
        capsules,
        workspace: ws,
        clients,
        duration_s: duration.as_secs_f64(),
        size_bytes: size,
        populate_s,
        rare,
        common,
    };
    if json {
        outln!("{}", serde_json::to_string(&report)?)?;
    } else {
        outln!(
            "moss bench --search: {} capsules in {:?}, {} clients, {} s, daemon at {}",
            report.capsules,
            report.workspace,
            report.clients,
            report.duration_s,
            report.addr
        )?;
        if report.populate_s > 0.0 {
            outln!("corpus built in {:.1} s", report.populate_s)?;
        }
        outln!(
            "{:<26} {:>8} {:>9} {:>9} {:>9} {:>9} {:>7}",
            "query",
            "ops",
            "ops/s",
            "p50 ms",
            "p95 ms",
            "p99 ms",
            "errors"
        )?;
        for (name, op) in [
            ("rare terms (<1% each)", &report.rare),
            ("mossall (every capsule)", &report.common),
        ] {
            op.print_row(name, 26, "")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corpus_texts_carry_their_markers() {
        let t = corpus_text(1234, 2048);
        assert!(t.contains("mossall rare234 unus234"));
        assert!(t.contains("## Open questions"));
    }
}
