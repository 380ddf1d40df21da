//! The default run of `moss bench`: phases run one after another, each for the full duration:
//! store (distinct names in a fresh workspace), with `--append` an append phase (a line added
//! to each stored capsule in turn), fetch by name (names stored in the first phase, picked at
//! random), and `GET /health` (the HTTP floor).

use std::sync::Arc;
use std::time::Duration;

use moss_client::Client;
use moss_client::capsule::{AppendRequest, FetchRequest, StoreMode, StoreRequest};
use serde::Serialize;

use super::args::BenchArgs;
use super::load::{OpReport, capsule_of_size, index_catch_up, phase};
use crate::output::outln;

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

/// The store, append, fetch and health phases against `client`.
pub async fn run(args: BenchArgs, client: &Client, duration: Duration) -> anyhow::Result<()> {
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
