//! `moss bulk-delete`, `moss bulk-update` and `moss purge`.

use clap::Args;
use moss_client::Client;
use moss_client::capsule::{
    BulkDeleteRequest, BulkUpdateRequest, PurgeRequest, RunIds, StatsRequest, WatchRequest,
};

use crate::capsule::Orchestration;
use crate::output::{Format, print};

/// Filters of the bulk operations; all given ones must match.
#[derive(Debug, Args)]
pub struct BulkFilter {
    /// Only this workspace.
    #[arg(long)]
    workspace: Option<String>,
    /// Only capsules carrying this tag.
    #[arg(long)]
    tag: Option<String>,
    /// Only capsules whose name starts with this (case-insensitive).
    #[arg(long)]
    name_prefix: Option<String>,
    #[command(flatten)]
    orchestration: Orchestration,
}

pub async fn bulk_delete(f: BulkFilter, client: &Client, format: Format) -> anyhow::Result<()> {
    let req = BulkDeleteRequest {
        workspace: f.workspace,
        tag: f.tag,
        name_prefix: f.name_prefix,
        run_id: f.orchestration.runs(),
        phase: f.orchestration.phase,
        role: f.orchestration.role,
    };
    print(&client.capsules().bulk_delete(&req).await?, format)
}

#[derive(Debug, Args)]
pub struct BulkUpdateArgs {
    #[command(flatten)]
    filter: BulkFilter,
    /// New phase ("" clears it).
    #[arg(long)]
    set_phase: Option<String>,
    /// New role ("" clears it).
    #[arg(long)]
    set_role: Option<String>,
    /// New tags, replacing the old ones (comma-separated or repeated).
    #[arg(long, value_delimiter = ',', conflicts_with = "clear_tags")]
    set_tags: Vec<String>,
    /// Remove all tags.
    #[arg(long)]
    clear_tags: bool,
}

pub async fn bulk_update(a: BulkUpdateArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let f = a.filter;
    let set_tags = if a.clear_tags {
        Some(Vec::new())
    } else {
        (!a.set_tags.is_empty()).then_some(a.set_tags)
    };
    let req = BulkUpdateRequest {
        workspace: f.workspace,
        tag: f.tag,
        name_prefix: f.name_prefix,
        run_id: f.orchestration.runs(),
        phase: f.orchestration.phase,
        role: f.orchestration.role,
        set_phase: a.set_phase,
        set_role: a.set_role,
        set_tags,
    };
    print(&client.capsules().bulk_update(&req).await?, format)
}

#[derive(Debug, Args)]
pub struct PurgeArgs {
    /// Only this workspace.
    #[arg(long)]
    workspace: Option<String>,
    /// Only capsules soft-deleted at least this many days ago.
    #[arg(long)]
    older_than_days: Option<i64>,
    /// Every capsule of this run (several: comma-separated), active ones included.
    #[arg(long)]
    run_id: Option<String>,
    /// Required with --run-id: really delete them.
    #[arg(long)]
    confirm: bool,
}

pub async fn purge(a: PurgeArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let req = PurgeRequest {
        workspace: a.workspace,
        older_than_days: a.older_than_days,
        run_id: a.run_id.as_deref().map(RunIds::from),
        confirm: a.confirm.then_some(true),
    };
    print(&client.capsules().purge(&req).await?, format)
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Only this workspace.
    #[arg(long)]
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
        workspace: a.workspace,
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
            println!("{}", serde_json::to_string(change)?);
        }
    }
}

#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Only this workspace.
    #[arg(long)]
    workspace: Option<String>,
    /// Only capsules of this run (several: comma-separated).
    #[arg(long)]
    run_id: Option<String>,
}

pub async fn stats(a: StatsArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let req = StatsRequest {
        workspace: a.workspace,
        run_id: a.run_id.as_deref().map(RunIds::from),
    };
    print(&client.capsules().stats(&req).await?, format)
}
