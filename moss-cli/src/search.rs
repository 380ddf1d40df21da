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
    #[command(flatten)]
    ranking: Ranking,
}

/// How a search ranks, shared by `moss search` and `moss find`.
#[derive(Debug, Args)]
pub struct Ranking {
    /// keyword, semantic or hybrid (default hybrid when the daemon has an embedding model,
    /// keyword otherwise; `moss daemon status` says which).
    #[arg(long, value_enum)]
    pub mode: Option<Mode>,
    /// Show each hit's keyword and semantic ranks.
    #[arg(long)]
    pub explain: bool,
}

/// `--mode`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Mode {
    /// Words only (the full-text index).
    Keyword,
    /// Meaning only (the embedding index).
    Semantic,
    /// Both, fused by rank.
    Hybrid,
}

impl Ranking {
    pub fn mode(&self) -> Option<moss_client::search::SearchMode> {
        use moss_client::search::SearchMode;
        self.mode.map(|m| match m {
            Mode::Keyword => SearchMode::Keyword,
            Mode::Semantic => SearchMode::Semantic,
            Mode::Hybrid => SearchMode::Hybrid,
        })
    }
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
        mode: a.ranking.mode(),
        explain: flag(a.ranking.explain),
    };
    print(&client.capsules().search(&req).await?, format)
}
