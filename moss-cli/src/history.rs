//! `moss restore`, `moss lineage`, `moss clone`, `moss versions` and `moss diff`: a capsule's
//! history.

use clap::Args;
use moss_client::Client;
use moss_client::capsule::{
    CapsuleRef, CloneRequest, CloneSet, CloneTarget, DiffRef, DiffRequest, LineageRequest,
    RestoreMode, RestoreRequest, VersionsRequest,
};

use crate::output::{Format, print};

#[derive(Debug, Args)]
pub struct RestoreArgs {
    #[command(flatten)]
    address: crate::capsule_args::AddressArgs,
    /// When an active capsule holds the name: error (default), replace (delete it first) or
    /// rename (restore under `<name>-1`, `-2`, …).
    #[arg(long, value_parser = ["error", "replace", "rename"])]
    mode: Option<String>,
}

pub async fn restore(a: RestoreArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let (id, workspace, name) = a.address.parts()?;
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
    address: crate::capsule_args::AddressArgs,
    /// Steps to walk each way (default 3, at most 10).
    #[arg(long)]
    depth: Option<i64>,
}

pub async fn lineage(a: LineageArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let (id, workspace, name) = a.address.parts()?;
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
    /// Workspace of --from-name (else MOSS_WORKSPACE, the project's .moss/config.json,
    /// "default").
    #[arg(long)]
    from_workspace: Option<String>,
    /// Workspace of the copy (default: the source's).
    #[arg(short, long)]
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
    /// The plan or task the copy hands off for (default: the source's, in its workspace).
    #[arg(long)]
    task: Option<String>,
    /// Tags of the copy, replacing the source's (comma-separated or repeated).
    #[arg(long, value_delimiter = ',')]
    tags: Option<Vec<String>>,
}

pub async fn clone(a: CloneArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let source = match (a.id, a.from_name) {
        (Some(id), _) => CapsuleRef::by_id(id),
        (None, Some(name)) => CapsuleRef {
            id: None,
            workspace: Some(crate::workspace::or_default(a.from_workspace, "default")?),
            name: Some(name),
        },
        (None, None) => anyhow::bail!("give the source capsule: its id, or --from-name"),
    };
    let set = CloneSet {
        run_id: a.run_id,
        phase: a.phase,
        role: a.role,
        task: a.task,
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

#[derive(Debug, Args)]
pub struct VersionsArgs {
    #[command(flatten)]
    address: crate::capsule_args::AddressArgs,
    /// A soft-deleted capsule too.
    #[arg(long)]
    include_deleted: bool,
}

pub async fn versions(a: VersionsArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let (id, workspace, name) = a.address.parts()?;
    let req = VersionsRequest {
        id,
        workspace,
        name,
        include_deleted: a.include_deleted.then_some(true),
    };
    print(&client.capsules().versions(&req).await?, format)
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Side a: capsule id (or --name).
    id: Option<String>,
    /// Side a: capsule name in --workspace.
    #[arg(long, conflicts_with = "id")]
    name: Option<String>,
    /// Workspace of the names (else MOSS_WORKSPACE, the project's .moss/config.json,
    /// "default").
    #[arg(short, long)]
    workspace: Option<String>,
    /// Side a at an earlier revision (-1 the previous one).
    #[arg(long, visible_alias = "version", allow_hyphen_values = true)]
    at_version: Option<i64>,
    /// Side b: capsule id (or --to-name).
    #[arg(long)]
    to_id: Option<String>,
    /// Side b: capsule name in --workspace.
    #[arg(long, conflicts_with = "to_id")]
    to_name: Option<String>,
    /// Side b at an earlier revision.
    #[arg(long, allow_hyphen_values = true)]
    to_version: Option<i64>,
    /// Add a line diff of each modified section.
    #[arg(long)]
    lines: bool,
}

pub async fn diff(a: DiffArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let workspace = if a.name.is_some() || a.to_name.is_some() {
        Some(crate::workspace::or_default(
            a.workspace.clone(),
            "default",
        )?)
    } else {
        None
    };
    let side = |id: Option<String>, name: Option<String>, version| DiffRef {
        name: name.clone(),
        workspace: name.and(workspace.clone()),
        id,
        version,
    };
    let req = DiffRequest {
        a: side(a.id.clone(), a.name.clone(), a.at_version),
        b: side(a.to_id.clone(), a.to_name.clone(), a.to_version),
        include_diff: a.lines.then_some(true),
    };
    print(&client.capsules().diff(&req).await?, format)
}
