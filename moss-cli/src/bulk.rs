//! `moss bulk-delete`, `moss bulk-update` and `moss purge`.

use clap::Args;
use moss_client::Client;
use moss_client::capsule::{BulkDeleteRequest, BulkUpdateRequest, PurgeRequest, RunIds};

use crate::capsule_args::Orchestration;
use crate::output::{Format, print};

/// Filters of the bulk operations; all given ones must match.
#[derive(Debug, Args)]
pub struct BulkFilter {
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
}

pub async fn bulk_delete(f: BulkFilter, client: &Client, format: Format) -> anyhow::Result<()> {
    let req = BulkDeleteRequest {
        workspace: crate::workspace::filter(f.workspace)?,
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
        workspace: crate::workspace::filter(f.workspace)?,
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
    #[arg(short, long)]
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
        workspace: crate::workspace::filter(a.workspace)?,
        older_than_days: a.older_than_days,
        run_id: a.run_id.as_deref().map(RunIds::from),
        confirm: a.confirm.then_some(true),
    };
    print(&client.capsules().purge(&req).await?, format)
}
