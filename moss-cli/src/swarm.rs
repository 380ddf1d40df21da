//! `moss watch` and `moss stats`: following a multi-agent run.

use clap::Args;
use moss_client::Client;
use moss_client::capsule::{RunIds, StatsRequest, WatchRequest};

use crate::capsule_args::Orchestration;
use crate::output::outln;
use crate::output::{Format, print};

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Only this workspace.
    #[arg(short, long)]
    workspace: Option<String>,
    /// Only capsules carrying this tag.
    #[arg(long)]
    tag: Option<String>,
    /// Only capsules whose name starts with this (case-insensitive).
    #[arg(long)]
    name_prefix: Option<String>,
    #[command(flatten)]
    orchestration: Orchestration,
    /// The cursor of an earlier answer: changes after it.
    #[arg(long)]
    since: Option<i64>,
    /// How long to wait, in milliseconds (default 30000, at most 300000).
    #[arg(long)]
    timeout_ms: Option<i64>,
    /// Most changes in one answer (default 1, at most 100).
    #[arg(long)]
    limit: Option<i64>,
    /// Keep watching: print every change as one JSON line, until interrupted.
    #[arg(long)]
    follow: bool,
}

pub async fn watch(a: WatchArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let mut req = WatchRequest {
        workspace: crate::workspace::filter(a.workspace)?,
        run_id: a.orchestration.runs(),
        phase: a.orchestration.phase,
        role: a.orchestration.role,
        tag: a.tag,
        name_prefix: a.name_prefix,
        since: a.since,
        timeout_ms: a.timeout_ms,
        limit: a.limit.or(a.follow.then_some(100)),
    };
    if !a.follow {
        return print(&client.capsules().watch(&req).await?, format);
    }
    loop {
        let resp = client.capsules().watch(&req).await?;
        req.since = Some(resp.cursor);
        for change in &resp.events {
            outln!("{}", serde_json::to_string(change)?)?;
        }
    }
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Only this workspace.
    #[arg(short, long)]
    workspace: Option<String>,
    /// Only capsules of this run (several: comma-separated).
    #[arg(long)]
    run_id: Option<String>,
}

pub async fn stats(a: StatsArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let req = StatsRequest {
        workspace: crate::workspace::filter(a.workspace)?,
        run_id: a.run_id.as_deref().map(RunIds::from),
    };
    print(&client.capsules().stats(&req).await?, format)
}
