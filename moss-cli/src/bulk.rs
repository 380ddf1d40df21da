//! `moss bulk-delete`, `moss bulk-update` and `moss purge`.

use clap::Args;
use moss_client::Client;
use moss_client::capsule::{
    BulkDeleteRequest, BulkUpdateRequest, CapsuleRef, CloneRequest, CloneSet, CloneTarget,
    LineageRequest, PurgeRequest, RestoreMode, RestoreRequest, RunIds, StatsRequest, WatchRequest,
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
    /// Leave out capsules already holding every value set (they keep their updated_at).
    #[arg(long)]
    skip_unchanged: bool,
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
        skip_unchanged: a.skip_unchanged.then_some(true),
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

#[derive(Debug, Args)]
pub struct RestoreArgs {
    #[command(flatten)]
    address: crate::capsule::AddressArgs,
    /// When an active capsule holds the name: error (default), replace (delete it first) or
    /// rename (restore under <name>-1, -2, …).
    #[arg(long, value_parser = ["error", "replace", "rename"])]
    mode: Option<String>,
}

pub async fn restore(a: RestoreArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let (id, workspace, name) = a.address.parts();
    let req = RestoreRequest {
        id,
        workspace,
        name,
        mode: a.mode.as_deref().map(|m| match m {
            "replace" => RestoreMode::Replace,
            "rename" => RestoreMode::Rename,
            _ => RestoreMode::Error,
        }),
    };
    print(&client.capsules().restore(&req).await?, format)
}

#[derive(Debug, Args)]
pub struct LineageArgs {
    #[command(flatten)]
    address: crate::capsule::AddressArgs,
    /// Steps to walk each way (default 3, at most 10).
    #[arg(long)]
    depth: Option<i64>,
}

pub async fn lineage(a: LineageArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let (id, workspace, name) = a.address.parts();
    let req = LineageRequest {
        id,
        workspace,
        name,
        depth: a.depth,
    };
    print(&client.capsules().lineage(&req).await?, format)
}

#[derive(Debug, Args)]
pub struct CloneArgs {
    /// The source capsule's id (or give --from-name).
    id: Option<String>,
    /// The source capsule's name, in --from-workspace.
    #[arg(long, conflicts_with = "id")]
    from_name: Option<String>,
    /// Workspace of --from-name (default "default").
    #[arg(long)]
    from_workspace: Option<String>,
    /// Workspace of the copy (default: the source's).
    #[arg(long)]
    workspace: Option<String>,
    /// Name of the copy.
    #[arg(long)]
    name: Option<String>,
    /// Title of the copy (default: its name, else the source's title).
    #[arg(long)]
    title: Option<String>,
    /// Run id of the copy ("" clears it).
    #[arg(long)]
    run_id: Option<String>,
    /// Phase of the copy ("" clears it).
    #[arg(long)]
    phase: Option<String>,
    /// Role of the copy ("" clears it).
    #[arg(long)]
    role: Option<String>,
    /// Tags of the copy, replacing the source's (comma-separated or repeated).
    #[arg(long, value_delimiter = ',')]
    tags: Option<Vec<String>>,
}

pub async fn clone(a: CloneArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let source = match (a.id, a.from_name) {
        (Some(id), _) => CapsuleRef::by_id(id),
        (None, Some(name)) => CapsuleRef {
            id: None,
            workspace: a.from_workspace,
            name: Some(name),
        },
        (None, None) => anyhow::bail!("give the source capsule: its id, or --from-name"),
    };
    let set = CloneSet {
        run_id: a.run_id,
        phase: a.phase,
        role: a.role,
        tags: a.tags,
    };
    let req = CloneRequest {
        source,
        target: CloneTarget {
            workspace: a.workspace,
            name: a.name,
            title: a.title,
            run_id: None,
        },
        set: (set != CloneSet::default()).then_some(set),
    };
    print(&client.capsules().clone_capsule(&req).await?, format)
}
