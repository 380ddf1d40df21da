//! `moss search`.

use clap::Args;
use moss_client::Client;
use moss_client::capsule::SearchRequest;

use crate::capsule::{Orchestration, flag};
use crate::output::{Format, print};

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// FTS5 query: words, "phrases", prefix*, AND / OR / NOT (at most 1000 characters).
    query: String,
    /// Only this workspace.
    #[arg(long)]
    workspace: Option<String>,
    /// Only capsules carrying this tag.
    #[arg(long)]
    tag: Option<String>,
    /// Search soft-deleted capsules too.
    #[arg(long)]
    include_deleted: bool,
    /// Hits per page (default 20, at most 100).
    #[arg(long)]
    limit: Option<i64>,
    /// Hits to skip.
    #[arg(long)]
    offset: Option<i64>,
    #[command(flatten)]
    orchestration: Orchestration,
}

pub async fn run(a: SearchArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let req = SearchRequest {
        query: a.query,
        workspace: a.workspace,
        tag: a.tag,
        run_id: a.orchestration.runs(),
        phase: a.orchestration.phase,
        role: a.orchestration.role,
        include_deleted: flag(a.include_deleted),
        limit: a.limit,
        offset: a.offset,
    };
    print(&client.capsules().search(&req).await?, format)
}
