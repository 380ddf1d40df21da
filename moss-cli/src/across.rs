//! `moss workspaces`, `moss find` and `moss context`: the reads across every family
//! (`moss_workspaces`, `moss_search`, `moss_context`).

use clap::Args;
use moss_client::Client;
use moss_client::moss::{ContextRequest, FamilyList, SearchRequest, WorkspacesRequest};

use crate::output::{Format, print};

/// Arguments of `moss find`.
#[derive(Debug, Args)]
pub struct FindArgs {
    /// What to find: words ("refund flow"), "exact phrases", prefix*, AND/OR/NOT.
    pub query: String,
    /// Only this workspace (default: every workspace).
    #[arg(short, long)]
    pub workspace: Option<String>,
    /// Only these families: capsule, reasoning, tasks, memory (comma-separated).
    #[arg(long, value_name = "LIST")]
    pub families: Option<String>,
    /// Hits per page (default 20, at most 100).
    #[arg(long)]
    pub limit: Option<i64>,
    /// The next page: pagination.next_cursor of the previous answer.
    #[arg(long)]
    pub cursor: Option<String>,
    /// Cap on the answer's characters.
    #[arg(long)]
    pub max_chars: Option<i64>,
    /// Search the words as plain text (quotes, *, AND/OR/NOT lose their meaning).
    #[arg(long)]
    pub safe: bool,
    #[command(flatten)]
    pub ranking: crate::search::Ranking,
}

/// Arguments of `moss context`.
#[derive(Debug, Args)]
pub struct ContextArgs {
    /// Workspace (else MOSS_WORKSPACE, the project's .moss/config.json).
    #[arg(short, long)]
    pub workspace: Option<String>,
    /// A plan or task (PLAN-001, TASK-001); default the workspace's focus.
    #[arg(long)]
    pub task: Option<String>,
    /// Also recall memories for this.
    #[arg(long)]
    pub query: Option<String>,
    /// Cap on the answer's characters.
    #[arg(long)]
    pub max_chars: Option<i64>,
}

/// `moss workspaces`.
pub async fn workspaces(client: &Client, format: Format) -> anyhow::Result<()> {
    print(
        &client.moss().workspaces(&WorkspacesRequest {}).await?,
        format,
    )
}

/// `moss find`.
pub async fn find(client: &Client, args: FindArgs, format: Format) -> anyhow::Result<()> {
    let req = SearchRequest {
        query: args.query,
        workspace: crate::workspace::filter(args.workspace)?,
        families: args.families.map(FamilyList::One),
        limit: args.limit,
        cursor: args.cursor,
        max_chars: args.max_chars,
        safe_query: args.safe.then_some(true),
        mode: args.ranking.mode(),
        explain: args.ranking.explain.then_some(true),
    };
    print(&client.moss().search(&req).await?, format)
}

/// `moss context`.
pub async fn context(client: &Client, args: ContextArgs, format: Format) -> anyhow::Result<()> {
    let workspace = crate::workspace::required(args.workspace)?;
    let req = ContextRequest {
        workspace,
        task: args.task,
        query: args.query,
        max_chars: args.max_chars,
    };
    print(&client.moss().context(&req).await?, format)
}
