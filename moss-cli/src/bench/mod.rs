//! `moss bench`: concurrent clients against a daemon, one phase per operation. Latency is
//! measured per request on the client side.
//!
//! - [`capsule`]: the default run (store, append, fetch and `GET /health`);
//! - [`memory`], [`reasoning`], [`search`], [`semantic`], [`watch`]: the runs of `--memory`,
//!   `--reasoning`, `--search`, `--semantic` and `--watch`; [`cross`]: `--search --cross-family`, every family at once;
//! - [`args`]: the flags;
//! - [`load`]: what every run uses: the phase driver, its figures, synthetic capsules and the
//!   wait for the full-text index.

mod args;
mod capsule;
mod cross;
pub(crate) mod load;
mod memory;
mod reasoning;
mod search;
mod semantic;
mod watch;

use std::time::Duration;

use moss_client::Client;

pub use args::BenchArgs;

/// `moss bench`: against a scratch daemon it deletes afterwards, or with `--against-running`
/// the daemon at `addr`.
pub async fn run_command(args: BenchArgs, addr: &str) -> anyhow::Result<()> {
    if args.against_running {
        let client = crate::autostart::ensure_running(addr).await?;
        return run(args, &client).await;
    }
    let scratch = crate::scratch::ScratchDaemon::start(args.database.as_deref()).await?;
    eprintln!(
        "moss bench: a daemon of its own at {} (home {}, deleted afterwards{}; \
         --against-running measures the daemon at {addr})",
        scratch.client.addr(),
        scratch
            .home()
            .map(|h| h.display().to_string())
            .unwrap_or_default(),
        match &args.database {
            Some(_) => "; its store is the --database given, kept",
            None => "",
        }
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
    if args.semantic {
        return semantic::run(
            client,
            args.workspace,
            semantic::Sizes {
                memories: args.memories,
                capsules: args.semantic_capsules,
                size: args.size,
                clients: args.clients,
                queries: args.queries.max(1),
                wait: Duration::from_secs_f64(args.semantic_wait.max(1.0)),
            },
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
    if args.search && args.cross_family {
        return cross::run(
            client,
            args.items,
            args.workspace,
            args.clients,
            duration,
            args.size,
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
    capsule::run(args, client, duration).await
}
