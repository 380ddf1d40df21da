//! `moss bench`: concurrent clients against a running daemon, one phase per operation.
//!
//! Phases run one after another, each for the full duration: store (distinct names in a fresh
//! workspace), with `--append` an append phase (a line added to each stored capsule in turn),
//! fetch by name (names stored in the first phase, picked at random), and `GET /health` (the
//! HTTP floor). Latency is measured per request on the client side.

mod memory;
mod reasoning;
mod search;
mod watch;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::output::outln;
use clap::Args;
use moss_client::Client;
use moss_client::capsule::{AppendRequest, FetchRequest, StoreMode, StoreRequest};
use serde::Serialize;

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Measure the daemon at --addr and keep what the benchmark writes in its store (default:
    /// a daemon of the benchmark's own, deleted afterwards).
    #[arg(long)]
    against_running: bool,
    /// Concurrent clients.
    #[arg(long, default_value_t = 32)]
    clients: usize,
    /// Seconds per phase.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Capsule size in bytes.
    #[arg(long, default_value_t = 2048)]
    size: usize,
    /// Workspace to write into (default: a fresh `bench-<ulid>`).
    #[arg(long)]
    workspace: Option<String>,
    /// Print one JSON line instead of a table.
    #[arg(long)]
    json: bool,
    /// Measure search instead: latency over a corpus of --capsules capsules (in workspace
    /// `bench-search-<N>` unless --workspace is given; with --against-running, built once and
    /// reused by the next run).
    #[arg(long)]
    search: bool,
    /// Corpus size for --search.
    #[arg(long, default_value_t = 100_000, requires = "search")]
    capsules: u64,
    /// Measure the associative memory instead: memory_store against capsule_store, and recall
    /// over a corpus of --memories memories.
    #[arg(long, conflicts_with_all = ["search", "reasoning"])]
    memory: bool,
    /// Corpus size for --memory.
    #[arg(long, default_value_t = 100_000, requires = "memory")]
    memories: u64,
    /// Measure the reasoning and tasks families instead: notes_commit against capsule_store,
    /// show on a derived branch of a large base, graph_query, graph_merge, tasks_radar.
    #[arg(long, conflicts_with = "search")]
    reasoning: bool,
    /// Entries of the base branch for --reasoning.
    #[arg(long, default_value_t = 100_000, requires = "reasoning")]
    entries: u64,
    /// Graph nodes for --reasoning.
    #[arg(long, default_value_t = 10_000, requires = "reasoning")]
    nodes: u64,
    /// Versions of each node for --reasoning.
    #[arg(long, default_value_t = 5, requires = "reasoning")]
    versions: u64,
    /// Keys changed on the merged branch for --reasoning (at most 1000: one merge call).
    #[arg(long, default_value_t = 1000, requires = "reasoning")]
    merge_keys: u64,
    /// Steps of the task whose radar --reasoning times.
    #[arg(long, default_value_t = 200, requires = "reasoning")]
    steps: u64,
    /// Store with mode replace over this many names per client, so that most stores overwrite
    /// a capsule (and keep a version of it) instead of creating one.
    #[arg(long)]
    replace: Option<u64>,
    /// Also time capsule_append: a phase after the store phase in which each client appends a
    /// line to the "Open questions" section of the capsules it stored, in turn.
    #[arg(long, conflicts_with_all = ["search", "reasoning", "memory", "watch"])]
    append: bool,
    /// Measure capsule_watch instead: --clients waiters follow one run while --clients
    /// writers store into it; the wake-up latency from commit to each waiter's answer.
    #[arg(long, conflicts_with_all = ["search", "reasoning", "memory"])]
    watch: bool,
    /// Writes per second, all writers together, for --watch.
    #[arg(long, default_value_t = 200.0, requires = "watch")]
    watch_rate: f64,
}

/// Figures for one operation.
#[derive(Debug, Serialize)]
pub struct OpReport {
    pub ops: u64,
    pub errors: u64,
    pub throughput: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

#[derive(Debug, Serialize)]
struct Report {
    addr: String,
    clients: usize,
    duration_s: f64,
    size_bytes: usize,
    workspace: String,
    store: OpReport,
    /// The append phase (`--append`).
    #[serde(skip_serializing_if = "Option::is_none")]
    append: Option<OpReport>,
    fetch: OpReport,
    health: OpReport,
    store_health_ratio: f64,
    fetch_health_ratio: f64,
    /// Seconds the full-text index took, after the store phase, to hold every stored capsule
    /// (absent against a daemon that does not report its index).
    #[serde(skip_serializing_if = "Option::is_none")]
    index_catch_up_s: Option<f64>,
}

impl OpReport {
    /// Figures from individual latencies measured over `elapsed`.
    pub fn from_latencies(mut lat: Vec<Duration>, errors: u64, elapsed: Duration) -> OpReport {
        lat.sort_unstable();
        let pct = |p: f64| -> f64 {
            if lat.is_empty() {
                return 0.0;
            }
            let i = ((lat.len() as f64 * p).ceil() as usize).clamp(1, lat.len()) - 1;
            lat[i].as_secs_f64() * 1000.0
        };
        OpReport {
            ops: lat.len() as u64,
            errors,
            throughput: lat.len() as f64 / elapsed.as_secs_f64().max(1e-9),
            p50_ms: pct(0.50),
            p95_ms: pct(0.95),
            p99_ms: pct(0.99),
            first_error: None,
        }
    }
}

#[derive(Default)]
struct Samples {
    lat_us: Vec<u32>,
    errors: u64,
    first_error: Option<String>,
}

/// A capsule that passes the lint, padded to exactly `size` bytes with words drawn by `seed`
/// from a synthetic vocabulary of a few thousand terms, so the full-text index does the work
/// real, varied text makes it do (identical texts would flatter it).
pub fn capsule_of_size(size: usize, seed: u64) -> String {
    const SYLLABLES: [&str; 16] = [
        "ka", "lo", "mi", "nu", "per", "sta", "tor", "vex", "qui", "ran", "sel", "dor", "fin",
        "gal", "hup", "zer",
    ];
    let mut text = String::from(
        "## Objective\nMeasure Moss.\n## Current status\nRunning.\n## Decisions\nNone.\n\
         ## Next actions\nRead the figures.\n## Key locations\nmoss-cli/src/bench.rs\n\
         ## Open questions\n",
    );
    let floor = text.len();
    let mut rng = XorShift(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
    let mut i = 0;
    while text.len() < size {
        let r = rng.next();
        for k in 0..3 {
            text.push_str(SYLLABLES[((r >> (k * 4)) & 15) as usize]);
        }
        text.push(if i % 12 == 11 { '\n' } else { ' ' });
        i += 1;
    }
    text.truncate(size.max(floor));
    text
}

/// Small, fast, good enough to spread fetches over the stored names.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

pub async fn phase<F, Fut>(clients: usize, duration: Duration, op: F) -> (OpReport, Vec<u64>)
where
    F: Fn(usize, u64, &mut XorShift) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send,
{
    let op = Arc::new(op);
    let start = Instant::now();
    let deadline = start + duration;
    let mut tasks = Vec::with_capacity(clients);
    for c in 0..clients {
        let op = op.clone();
        tasks.push(tokio::spawn(async move {
            let mut s = Samples::default();
            let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ (c as u64 + 1));
            let mut n = 0u64;
            while Instant::now() < deadline {
                let t = Instant::now();
                let r = op(c, n, &mut rng).await;
                let us = t.elapsed().as_micros().min(u32::MAX as u128) as u32;
                match r {
                    Ok(()) => {
                        s.lat_us.push(us);
                        n += 1;
                    }
                    Err(e) => {
                        s.errors += 1;
                        s.first_error.get_or_insert(e);
                    }
                }
            }
            (s, n)
        }));
    }
    let mut all = Samples::default();
    let mut per_client = Vec::with_capacity(clients);
    for t in tasks {
        let (s, n) = t.await.expect("bench task");
        all.lat_us.extend(s.lat_us);
        all.errors += s.errors;
        if all.first_error.is_none() {
            all.first_error = s.first_error;
        }
        per_client.push(n);
    }
    let elapsed = start.elapsed().as_secs_f64();
    all.lat_us.sort_unstable();
    let pct = |p: f64| -> f64 {
        if all.lat_us.is_empty() {
            return 0.0;
        }
        let i = ((all.lat_us.len() as f64 * p).ceil() as usize).clamp(1, all.lat_us.len()) - 1;
        all.lat_us[i] as f64 / 1000.0
    };
    let ops = all.lat_us.len() as u64;
    (
        OpReport {
            ops,
            errors: all.errors,
            throughput: ops as f64 / elapsed,
            p50_ms: pct(0.50),
            p95_ms: pct(0.95),
            p99_ms: pct(0.99),
            first_error: all.first_error,
        },
        per_client,
    )
}

/// `moss bench`: against a scratch daemon it deletes afterwards, or with `--against-running`
/// the daemon at `addr`.
pub async fn run_command(args: BenchArgs, addr: &str) -> anyhow::Result<()> {
    if args.against_running {
        let client = crate::autostart::ensure_running(addr).await?;
        return run(args, &client).await;
    }
    let scratch = crate::scratch::ScratchDaemon::start().await?;
    eprintln!(
        "moss bench: a daemon of its own at {} (home {}, deleted afterwards; \
         --against-running measures the daemon at {addr})",
        scratch.client.addr(),
        scratch
            .home()
            .map(|h| h.display().to_string())
            .unwrap_or_default()
    );
    // Ctrl-C stops the scratch daemon and deletes its home too (mossd, in this process group,
    // gets the SIGINT as well and drains).
    let result = tokio::select! {
        r = run(args, &scratch.client) => r,
        _ = tokio::signal::ctrl_c() => Err(crate::output::Interrupted(
            "the benchmark's own daemon is stopped and its home deleted",
        )
        .into()),
    };
    let stopped = scratch.stop().await;
    result.and(stopped)
}

pub async fn run(args: BenchArgs, client: &Client) -> anyhow::Result<()> {
    if args.clients == 0 || args.duration <= 0.0 {
        anyhow::bail!("--clients and --duration must be positive");
    }
    client.health().await?;
    // Fail fast on a missing or wrong token instead of timing thousands of 401s.
    client
        .capsules()
        .list(&moss_client::capsule::ListRequest {
            limit: Some(1),
            ..Default::default()
        })
        .await?;
    let duration = Duration::from_secs_f64(args.duration);
    if args.watch {
        return watch::run(
            client,
            args.clients,
            duration,
            args.size,
            args.watch_rate,
            args.json,
        )
        .await;
    }
    if args.memory {
        return memory::run(
            client,
            args.clients,
            duration,
            args.size,
            args.memories,
            args.json,
        )
        .await;
    }
    if args.reasoning {
        return reasoning::run(
            client,
            reasoning::Sizes {
                clients: args.clients,
                duration,
                size: args.size,
                entries: args.entries,
                nodes: args.nodes,
                versions: args.versions,
                merge_keys: args.merge_keys.min(1000),
                steps: args.steps,
            },
            args.json,
        )
        .await;
    }
    if args.search {
        return search::run(
            client,
            args.capsules,
            args.workspace,
            args.clients,
            duration,
            args.size,
            args.json,
        )
        .await;
    }
    let workspace = args.workspace.unwrap_or_else(|| {
        format!(
            "bench-{}",
            ulid::Ulid::generate().to_string().to_lowercase()
        )
    });
    let size = args.size;
    let (c, ws) = (client.clone(), workspace.clone());
    let replace = args.replace.filter(|r| *r > 0);
    let (store, stored) = phase(args.clients, duration, move |client_no, n, _| {
        let (c, ws) = (c.clone(), ws.clone());
        let text = capsule_of_size(size, ((client_no as u64) << 32) | n);
        async move {
            let req = StoreRequest {
                capsule_text: text,
                workspace: Some(ws),
                name: Some(format!("c{client_no}-{}", replace.map_or(n, |r| n % r))),
                source: Some("moss-bench".into()),
                mode: replace.map(|_| StoreMode::Replace),
                ..Default::default()
            };
            c.capsules()
                .store(&req)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
    })
    .await;

    // The indexer yields the CPU to requests, so it may still be catching up: wait for it, so
    // that the next phases measure a quiet daemon, and report how long it took.
    let index_catch_up_s = index_catch_up(client, duration).await?;

    let stored = Arc::new(stored);
    // Names stored by client `client_no`: `c<client_no>-<k>` for k below this.
    let names_of = move |stored: &[u64], client_no: usize| {
        replace
            .map_or(stored[client_no], |r| stored[client_no].min(r))
            .max(1)
    };
    let append = if args.append {
        let (c, ws, stored) = (client.clone(), workspace.clone(), stored.clone());
        let (report, _) = phase(args.clients, duration, move |client_no, n, _| {
            let (c, ws) = (c.clone(), ws.clone());
            let name = format!("c{client_no}-{}", n % names_of(&stored, client_no));
            async move {
                let req = AppendRequest {
                    workspace: Some(ws),
                    name: Some(name),
                    section: Some("Open questions".into()),
                    content: Some(format!("- appended note {n}")),
                    ..Default::default()
                };
                c.capsules()
                    .append(&req)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
        })
        .await;
        Some(report)
    } else {
        None
    };

    let (c, ws) = (client.clone(), workspace.clone());
    let (fetch, _) = phase(args.clients, duration, move |client_no, _, rng| {
        let (c, ws, stored) = (c.clone(), ws.clone(), stored.clone());
        let owner = (rng.next() as usize) % stored.len();
        let pick = rng.next() % names_of(&stored, owner);
        let _ = client_no;
        async move {
            let req = FetchRequest {
                workspace: Some(ws),
                name: Some(format!("c{owner}-{pick}")),
                ..Default::default()
            };
            c.capsules()
                .fetch(&req)
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
    })
    .await;

    let c = client.clone();
    let (health, _) = phase(args.clients, duration, move |_, _, _| {
        let c = c.clone();
        async move { c.health().await.map(|_| ()).map_err(|e| e.to_string()) }
    })
    .await;

    let ratio = |x: f64| {
        if health.throughput > 0.0 {
            x / health.throughput
        } else {
            0.0
        }
    };
    let report = Report {
        addr: client.addr().to_string(),
        clients: args.clients,
        duration_s: args.duration,
        size_bytes: args.size,
        store_health_ratio: ratio(store.throughput),
        fetch_health_ratio: ratio(fetch.throughput),
        workspace,
        store,
        append,
        fetch,
        health,
        index_catch_up_s,
    };
    if args.json {
        outln!("{}", serde_json::to_string(&report)?)?;
    } else {
        print_table(&report)?;
    }
    Ok(())
}

fn print_table(r: &Report) -> anyhow::Result<()> {
    outln!(
        "moss bench: {} clients, {} s per phase, {}-byte capsules, daemon at {}",
        r.clients,
        r.duration_s,
        r.size_bytes,
        r.addr
    )?;
    outln!(
        "{:<8} {:>10} {:>12} {:>9} {:>9} {:>8}",
        "op",
        "ops",
        "ops/s",
        "p50 ms",
        "p99 ms",
        "errors"
    )?;
    for (name, op) in [
        ("store", Some(&r.store)),
        ("append", r.append.as_ref()),
        ("fetch", Some(&r.fetch)),
        ("health", Some(&r.health)),
    ]
    .into_iter()
    .filter_map(|(name, op)| Some((name, op?)))
    {
        outln!(
            "{:<8} {:>10} {:>12.0} {:>9.3} {:>9.3} {:>8}",
            name,
            op.ops,
            op.throughput,
            op.p50_ms,
            op.p99_ms,
            op.errors
        )?;
        if let Some(e) = &op.first_error {
            outln!("         first error: {e}")?;
        }
    }
    outln!(
        "store/health {:.3}   fetch/health {:.3}   (workspace {})",
        r.store_health_ratio,
        r.fetch_health_ratio,
        r.workspace
    )?;
    match r.index_catch_up_s {
        Some(s) => outln!(
            "full-text index caught up {s:.1} s after the store phase (the fetch phase waited for it)"
        )?,
        None => outln!("the daemon does not report its full-text index (older than this moss)")?,
    }
    Ok(())
}

/// Waits until the daemon's full-text index holds every write; returns how long that took, or
/// `None` if the daemon does not report its index.
///
/// The indexer mostly rests while stores keep arriving, so after a store phase that saturated
/// the daemon it has most of the phase's writes still to index (about as long again as the
/// phase, at most, on the 2-core development machine): the bound grows with the phase.
pub(crate) async fn index_catch_up(
    client: &Client,
    phase: Duration,
) -> anyhow::Result<Option<f64>> {
    let bound = Duration::from_secs(300) + phase * 3;
    let start = Instant::now();
    loop {
        let status = client.status().await?;
        let Some(behind) = status.index_behind else {
            return Ok(None);
        };
        if behind == 0 {
            return Ok(Some(start.elapsed().as_secs_f64()));
        }
        if start.elapsed() > bound {
            anyhow::bail!(
                "the daemon's full-text index is still {behind} changes behind {} s after the \
                 store phase; see its log ({}/mossd.log, or `journalctl --user -u moss` for the \
                 service)",
                bound.as_secs(),
                status.home
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_capsules_have_the_asked_size() {
        for size in [300, 2048, 8192] {
            let t = capsule_of_size(size, size as u64);
            assert_eq!(t.len(), size);
            assert!(t.contains("## Open questions"));
        }
    }
}
