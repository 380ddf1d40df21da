//! `moss search`.

use clap::Args;
use moss_client::Client;
use moss_client::capsule::SearchRequest;

use crate::capsule_args::{Orchestration, flag};
use crate::output::{Format, print};

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// FTS5 query: words, "phrases", prefix*, AND / OR / NOT (at most 1000 characters).
    query: String,
    /// Only this workspace.
    #[arg(short, long)]
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
    /// Only capsules handed off for this plan or task.
    #[arg(long)]
    task: Option<String>,
    /// Take the query as plain text: no operator, every word must match.
    #[arg(long)]
    safe: bool,
    /// Skip counting every match (has_more from one hit more than the page).
    #[arg(long)]
    no_count: bool,
    /// Tokens of context in a snippet (default 64).
    #[arg(long)]
    snippet_tokens: Option<i64>,
    /// Visible characters of a snippet (default 300, 50 to 500).
    #[arg(long)]
    snippet_chars: Option<i64>,
}

pub async fn run(a: SearchArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let req = SearchRequest {
        query: a.query,
        workspace: crate::workspace::filter(a.workspace)?,
        tag: a.tag,
        run_id: a.orchestration.runs(),
        phase: a.orchestration.phase,
        role: a.orchestration.role,
        task: a.task,
        include_deleted: flag(a.include_deleted),
        limit: a.limit,
        offset: a.offset,
        count_total: a.no_count.then_some(false),
        safe_query: flag(a.safe),
        snippet_tokens: a.snippet_tokens,
        snippet_chars: a.snippet_chars,
    };
    print(&client.capsules().search(&req).await?, format)
}
