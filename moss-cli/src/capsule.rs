//! Capsule subcommands: each builds the wire request and calls the typed client.

use anyhow::bail;
use clap::{Args, Subcommand};
use moss_client::Client;
use moss_client::capsule::*;

use crate::capsule_args::{AddressArgs, Orchestration, flag, stdin_text};
use crate::output::{Format, print};

#[derive(Debug, Subcommand)]
pub enum CapsuleCommand {
    /// Store a capsule read from stdin.
    ///
    /// The text must hold the six sections (Objective, Current status, Decisions,
    /// Next actions, Key locations, Open questions) unless --allow-thin.
    ///
    /// Examples:
    ///   moss store --name auth < capsule.md
    ///   moss store --name auth -w myproject --title "Auth context" < capsule.md
    ///   cat capsule.md | moss store --name auth --mode replace --tags auth,jwt
    ///   moss store --name auth --evidence transcript=run-7#12 --evidence-file ev.json < c.md
    #[command(verbatim_doc_comment)]
    Store(StoreArgs),
    /// Write a capsule in $EDITOR from a skeleton of the six sections, and store it.
    ///
    /// When the daemon refuses the text (too thin, too large, a name taken), the editor opens
    /// again with the reason at the top; leave the file empty to give up. $VISUAL or $EDITOR
    /// picks the editor (default vi).
    ///
    /// Examples:
    ///   moss new --name auth -w myproject
    ///   EDITOR="code --wait" moss new --name handoff --run-id pr-42 --role reviewer
    #[command(verbatim_doc_comment)]
    New(crate::new::NewArgs),
    /// Fetch one capsule by id, or by --workspace and --name.
    ///
    /// Examples:
    ///   moss fetch 01JABCDEF0123456789ABCDEFG
    ///   moss fetch -w myproject --name auth
    ///   moss fetch --name auth --no-text        # summary only
    ///   moss fetch --name auth --expand-evidence
    #[command(verbatim_doc_comment)]
    Fetch(FetchArgs),
    /// Fetch up to 50 capsules at once; missing ones are listed under "errors".
    ///
    /// Examples:
    ///   moss fetch-many -w phinn --name pr-123-base --name pr-123-design
    ///   moss fetch-many --id 01JABCDEF0123456789ABCDEFG --name auth --no-text
    #[command(verbatim_doc_comment)]
    FetchMany(FetchManyArgs),
    /// Update a capsule's text (from stdin, when piped) and/or metadata.
    ///
    /// Examples:
    ///   moss update 01JABCDEF0123456789ABCDEFG --title "New title"
    ///   moss update -w myproject --name auth < updated.md
    ///   moss update --name auth --phase review --if-updated-at 1737260500
    ///   moss update --name auth --clear-evidence
    #[command(verbatim_doc_comment)]
    Update(UpdateArgs),
    /// Soft-delete a capsule (recoverable with include_deleted / export).
    ///
    /// Examples:
    ///   moss delete 01JABCDEF0123456789ABCDEFG
    ///   moss delete -w myproject --name auth
    #[command(verbatim_doc_comment)]
    Delete(AddressArgs),
    /// The most recently updated capsule of a workspace (summary unless --include-text).
    ///
    /// Examples:
    ///   moss latest -w myproject
    ///   moss latest --include-text --run-id pr-42 --phase design
    #[command(verbatim_doc_comment)]
    Latest(LatestArgs),
    /// List capsule summaries of one workspace, newest first.
    ///
    /// Examples:
    ///   moss list -w myproject --limit 50
    ///   moss list --run-id pr-42 --format table
    #[command(verbatim_doc_comment)]
    List(ListArgs),
    /// Capsule summaries across all workspaces, newest first.
    ///
    /// Examples:
    ///   moss inventory --format table
    ///   moss inventory --tag auth --name-prefix au
    #[command(verbatim_doc_comment)]
    Inventory(InventoryArgs),
    /// Full-text search over titles and texts, best match first, with highlighted snippets.
    ///
    /// Examples:
    ///   moss search redis
    ///   moss search '"user authentication" OR oauth' -w myproject
    ///   moss search 'auth*' --run-id pr-42 --format table
    #[command(verbatim_doc_comment)]
    Search(crate::search::SearchArgs),
    /// Assemble capsules into one markdown (or json) bundle; optionally store it.
    ///
    /// Examples:
    ///   moss compose --name design --name review
    ///   moss compose -w pr-42 --name sec --name perf --sections Decisions,"Open questions"
    ///   moss compose --name a --name b --store-as a-and-b --replace
    #[command(verbatim_doc_comment)]
    Compose(crate::compose::ComposeArgs),
    /// Add content under one section of a capsule (content from --content or stdin).
    ///
    /// A placeholder body such as (pending), TBD or N/A is replaced; otherwise the content
    /// goes after the section's body with a blank line.
    ///
    /// Examples:
    ///   moss append --name auth --section "Design Reviews" --content "- approved by sec"
    ///   echo "- retried, green" | moss append 01JABCDEF0123456789ABCDEFG --section Status
    #[command(verbatim_doc_comment)]
    Append(crate::compose::AppendArgs),
    /// Soft-delete every active capsule matching all the given filters (at least one).
    ///
    /// Examples:
    ///   moss bulk-delete -w scratch
    ///   moss bulk-delete --run-id pr-42 --phase draft
    #[command(verbatim_doc_comment)]
    BulkDelete(crate::bulk::BulkFilter),
    /// Set phase, role or tags on every active capsule matching all the given filters.
    ///
    /// Examples:
    ///   moss bulk-update --run-id pr-42 --set-phase archived
    ///   moss bulk-update -w old --tag wip --set-tags done,reviewed
    ///   moss bulk-update --name-prefix tmp- --set-role "" --clear-tags
    #[command(verbatim_doc_comment)]
    BulkUpdate(crate::bulk::BulkUpdateArgs),
    /// Permanently delete soft-deleted capsules, or every capsule of a run. Cannot be undone.
    ///
    /// With --run-id, active capsules of the run go too, and only with --confirm (without it,
    /// the answer says how many would go).
    ///
    /// Examples:
    ///   moss purge
    ///   moss purge -w scratch --older-than-days 7
    ///   moss purge --run-id pr-review-42 --confirm
    #[command(verbatim_doc_comment)]
    Purge(crate::bulk::PurgeArgs),
    /// Wait for the next capsule change matching the filters (a long poll), or follow them.
    ///
    /// Prints one event: created, updated, deleted, purged or timeout, with a cursor; pass it back
    /// with --since so that no change is missed between two calls. --follow keeps printing
    /// events, one JSON line each, until interrupted.
    ///
    /// Examples:
    ///   moss watch --run-id pr-42 --timeout-ms 60000
    ///   moss watch -w myproject --phase review --since 1234
    ///   moss watch --run-id pr-42 --follow
    #[command(verbatim_doc_comment)]
    Watch(crate::swarm::WatchArgs),
    /// Undelete a soft-deleted capsule, by id or --workspace and --name.
    ///
    /// Examples:
    ///   moss restore 01JABCDEF0123456789ABCDEFG
    ///   moss restore -w myproject --name auth --mode rename
    #[command(verbatim_doc_comment)]
    Restore(crate::history::RestoreArgs),
    /// What a capsule was based on, and what was based on it (its lineage, both ways).
    ///
    /// Examples:
    ///   moss lineage -w myproject --name implementation-plan
    ///   moss lineage 01JABCDEF0123456789ABCDEFG --depth 5
    #[command(verbatim_doc_comment)]
    Lineage(crate::history::LineageArgs),
    /// The earlier revisions kept of a capsule, newest first (read one with fetch --version).
    ///
    /// Examples:
    ///   moss versions -w myproject --name auth
    ///   moss fetch -w myproject --name auth --at-version -1
    #[command(verbatim_doc_comment)]
    Versions(crate::history::VersionsArgs),
    /// Compare two capsules, or two versions of one, section by section.
    ///
    /// Examples:
    ///   moss diff --name plan-v1 --to-name plan-v2 -w myproject
    ///   moss diff --name auth --at-version -1 --to-name auth --lines   # the last change
    #[command(verbatim_doc_comment)]
    Diff(crate::history::DiffArgs),
    /// Copy a capsule into a new one whose lineage names the source.
    ///
    /// Examples:
    ///   moss clone --from-name oauth-research-v1 --name oauth-research-v2 --run-id pr-200
    ///   moss clone 01JABCDEF0123456789ABCDEFG -w other --name copy --phase research
    #[command(verbatim_doc_comment)]
    Clone(crate::history::CloneArgs),
    /// Counts, sizes, phases and roles of capsules, without reading their texts.
    ///
    /// Examples:
    ///   moss stats
    ///   moss stats -w myproject --run-id pr-41,pr-42
    #[command(verbatim_doc_comment)]
    Stats(crate::swarm::StatsArgs),
    /// Back up capsules to a JSONL file (mode 0600; replaced atomically, never left partial).
    ///
    /// The file has a header line, then one capsule per line in id order. A bare file name is
    /// placed in ~/.moss/exports/; an absolute path must be directly inside ~/.moss/exports/
    /// or a directory listed in allowed_paths. `..`, subdirectories and symlinks are refused.
    /// Shows progress on stderr when it is a terminal.
    ///
    /// Examples:
    ///   moss export                                  # ~/.moss/exports/all-TIMESTAMP.jsonl
    ///   moss export -w myproject --path myproject.jsonl
    ///   moss export --include-deleted --path /srv/backups/moss.jsonl   # in allowed_paths
    #[command(verbatim_doc_comment)]
    Export(crate::transfer::ExportArgs),
    /// Restore capsules from a JSONL file written by export, in one transaction.
    ///
    /// Nothing is written if any line is malformed or, with --mode error, if any record's id
    /// or name is taken. Same path rules as export. Shows progress on stderr when it is a
    /// terminal.
    ///
    /// Examples:
    ///   moss import --path backup.jsonl
    ///   moss import --path backup.jsonl --mode replace
    ///   moss import --path /srv/backups/moss.jsonl --mode rename
    #[command(verbatim_doc_comment)]
    Import(crate::transfer::ImportArgs),
}

#[derive(Debug, Args)]
pub struct StoreArgs {
    /// Name (handle) unique in the workspace; omit for an id-only capsule.
    #[arg(long)]
    name: Option<String>,
    /// Workspace.
    #[arg(short, long)]
    workspace: Option<String>,
    /// Title (default: the name).
    #[arg(long)]
    title: Option<String>,
    /// Tags, comma-separated or repeated.
    #[arg(long, value_delimiter = ',')]
    tags: Vec<String>,
    /// Source recorded with the capsule.
    #[arg(long, default_value = "cli")]
    source: String,
    /// On an existing name: error (default) or replace.
    #[arg(long, value_parser = ["error", "replace"], default_value = "error")]
    mode: String,
    /// Skip the required-sections check.
    #[arg(long)]
    allow_thin: bool,
    #[command(flatten)]
    orchestration: Orchestration,
    /// The plan or task it hands off for (PLAN-001, TASK-001): shows in its trace and radar.
    #[arg(long)]
    task: Option<String>,
    /// Capsules this one was based on (lineage), by name in --workspace (repeated).
    #[arg(long = "based-on", value_name = "NAME")]
    based_on: Vec<String>,
    /// Capsules this one was based on, by id (repeated).
    #[arg(long = "based-on-id", value_name = "ID")]
    based_on_id: Vec<String>,
    /// Evidence kept with the capsule, as TYPE=REF without content (repeated), e.g.
    /// `--evidence snippet=src/auth.ts:42-50 --evidence transcript=run-7#12`.
    #[arg(long = "evidence", value_name = "TYPE=REF")]
    evidence: Vec<String>,
    /// Evidence with content: a JSON array of {"type","ref","content"} (added after --evidence).
    #[arg(long = "evidence-file", value_name = "FILE")]
    evidence_file: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct FetchArgs {
    #[command(flatten)]
    address: AddressArgs,
    /// Also return a soft-deleted capsule.
    #[arg(long)]
    include_deleted: bool,
    /// Summary only, without capsule_text.
    #[arg(long)]
    no_text: bool,
    /// An earlier revision: -1 the previous one kept, -2 the one before; N revision N.
    #[arg(long, visible_alias = "version", allow_hyphen_values = true)]
    at_version: Option<i64>,
    /// Return the content of each evidence item (default: type, ref and length only).
    #[arg(long)]
    expand_evidence: bool,
}

#[derive(Debug, Args)]
pub struct FetchManyArgs {
    /// Capsule ids (repeatable).
    #[arg(long = "id")]
    ids: Vec<String>,
    /// Capsule names in --workspace (repeatable).
    #[arg(long = "name")]
    names: Vec<String>,
    /// Workspace of the --name refs.
    #[arg(short, long)]
    workspace: Option<String>,
    /// Soft-deleted capsules are eligible.
    #[arg(long)]
    include_deleted: bool,
    /// Summaries only.
    #[arg(long)]
    no_text: bool,
}

#[derive(Debug, Args)]
pub struct UpdateArgs {
    #[command(flatten)]
    address: AddressArgs,
    /// New title ("" clears it).
    #[arg(long)]
    title: Option<String>,
    /// New tags, replacing the old (comma-separated or repeated).
    #[arg(long, value_delimiter = ',')]
    tags: Option<Vec<String>>,
    /// New source.
    #[arg(long)]
    source: Option<String>,
    #[command(flatten)]
    orchestration: Orchestration,
    /// The plan or task it hands off for (PLAN-001, TASK-001; "" clears it).
    #[arg(long)]
    task: Option<String>,
    /// Skip the required-sections check for the new text.
    #[arg(long)]
    allow_thin: bool,
    /// Only update if the capsule's updated_at is still this (else CONFLICT).
    #[arg(long)]
    if_updated_at: Option<i64>,
    /// Only update if the capsule's revision is still this (else CONFLICT): the precise guard.
    #[arg(long)]
    if_revision: Option<i64>,
    /// New lineage by name in --workspace (repeated; replaces the old one).
    #[arg(long = "based-on", value_name = "NAME")]
    based_on: Vec<String>,
    /// New lineage by id (repeated; replaces the old one).
    #[arg(long = "based-on-id", value_name = "ID")]
    based_on_id: Vec<String>,
    /// New evidence, replacing the old, as TYPE=REF without content (repeated), e.g.
    /// `--evidence snippet=src/auth.ts:42-50 --evidence transcript=run-7#12`.
    #[arg(long = "evidence", value_name = "TYPE=REF")]
    evidence: Vec<String>,
    /// Evidence with content: a JSON array of {"type","ref","content"} (added after --evidence).
    #[arg(long = "evidence-file", value_name = "FILE")]
    evidence_file: Option<std::path::PathBuf>,
    /// Remove the capsule's evidence.
    #[arg(long, conflicts_with_all = ["evidence", "evidence_file"])]
    clear_evidence: bool,
}

#[derive(Debug, Args)]
pub struct LatestArgs {
    /// Workspace.
    #[arg(short, long)]
    workspace: Option<String>,
    /// Include capsule_text.
    #[arg(long)]
    include_text: bool,
    /// Consider soft-deleted capsules too.
    #[arg(long)]
    include_deleted: bool,
    #[command(flatten)]
    orchestration: Orchestration,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Workspace.
    #[arg(short, long)]
    workspace: Option<String>,
    /// Page size (default 20, max 100).
    #[arg(long)]
    limit: Option<i64>,
    /// Items to skip.
    #[arg(long)]
    offset: Option<i64>,
    /// Include soft-deleted capsules.
    #[arg(long)]
    include_deleted: bool,
    #[command(flatten)]
    orchestration: Orchestration,
    /// Only capsules handed off for this plan or task.
    #[arg(long)]
    task: Option<String>,
}

#[derive(Debug, Args)]
pub struct InventoryArgs {
    /// Only this workspace.
    #[arg(short, long)]
    workspace: Option<String>,
    /// Only capsules with this tag.
    #[arg(long)]
    tag: Option<String>,
    /// Only names starting with this.
    #[arg(long)]
    name_prefix: Option<String>,
    /// Page size (default 100, max 500).
    #[arg(long)]
    limit: Option<i64>,
    /// Items to skip.
    #[arg(long)]
    offset: Option<i64>,
    /// Include soft-deleted capsules.
    #[arg(long)]
    include_deleted: bool,
    #[command(flatten)]
    orchestration: Orchestration,
    /// Only capsules handed off for this plan or task.
    #[arg(long)]
    task: Option<String>,
}

/// The evidence of `--evidence TYPE=REF` flags and an `--evidence-file`; `None` when neither
/// was given. A file holding `[]` is an empty list (which clears the evidence on update).
fn evidence(
    flags: Vec<String>,
    file: Option<&std::path::Path>,
) -> anyhow::Result<Option<Vec<Evidence>>> {
    let mut items = Vec::new();
    for f in flags {
        let Some((kind, reference)) = f.split_once('=') else {
            bail!("--evidence {f:?}: expected TYPE=REF, e.g. --evidence snippet=src/auth.ts:42-50");
        };
        items.push(Evidence {
            kind: kind.to_string(),
            reference: reference.to_string(),
            content: None,
        });
    }
    let from_file = file.is_some();
    if let Some(path) = file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("--evidence-file {}: {e}", path.display()))?;
        let more: Vec<Evidence> = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "--evidence-file {}: {e}; expected a JSON array such as \
                 [{{\"type\":\"snippet\",\"ref\":\"src/a.rs:3-9\",\"content\":\"...\"}}]",
                path.display()
            )
        })?;
        items.extend(more);
    }
    Ok((from_file || !items.is_empty()).then_some(items))
}

/// Lineage refs from `--based-on` names (in `workspace`) and `--based-on-id` ids; `None` when
/// neither is given.
fn refs(workspace: &str, names: Vec<String>, ids: Vec<String>) -> Option<Vec<CapsuleRef>> {
    let mut out: Vec<CapsuleRef> = ids.into_iter().map(CapsuleRef::by_id).collect();
    out.extend(names.into_iter().map(|n| CapsuleRef::by_name(workspace, n)));
    (!out.is_empty()).then_some(out)
}

pub async fn run(cmd: CapsuleCommand, client: &Client, format: Format) -> anyhow::Result<()> {
    match cmd {
        CapsuleCommand::Store(a) => {
            let Some(text) = stdin_text()? else {
                bail!(
                    "no capsule text on stdin; pipe it in, e.g. `moss store --name auth < capsule.md`"
                );
            };
            let workspace = crate::workspace::or_default(a.workspace, "default")?;
            let based_on = refs(&workspace, a.based_on, a.based_on_id);
            let req = StoreRequest {
                capsule_text: text,
                workspace: Some(workspace),
                name: a.name,
                title: a.title,
                tags: (!a.tags.is_empty()).then_some(a.tags),
                source: Some(a.source),
                run_id: a.orchestration.run_id,
                phase: a.orchestration.phase,
                role: a.orchestration.role,
                task: a.task,
                mode: Some(if a.mode == "replace" {
                    StoreMode::Replace
                } else {
                    StoreMode::Error
                }),
                allow_thin: flag(a.allow_thin),
                based_on,
                evidence: evidence(a.evidence, a.evidence_file.as_deref())?,
            };
            print(&client.capsules().store(&req).await?, format)
        }
        CapsuleCommand::New(a) => crate::new::run(a, client, format).await,
        CapsuleCommand::Fetch(a) => {
            let (id, workspace, name) = a.address.parts()?;
            let req = FetchRequest {
                id,
                workspace,
                name,
                include_deleted: flag(a.include_deleted),
                include_text: a.no_text.then_some(false),
                version: a.at_version,
                expand_evidence: flag(a.expand_evidence),
            };
            print(&client.capsules().fetch(&req).await?, format)
        }
        CapsuleCommand::FetchMany(a) => {
            let mut items: Vec<CapsuleRef> = a.ids.into_iter().map(CapsuleRef::by_id).collect();
            if !a.names.is_empty() {
                let workspace = crate::workspace::or_default(a.workspace, "default")?;
                items.extend(
                    a.names
                        .into_iter()
                        .map(|n| CapsuleRef::by_name(workspace.clone(), n)),
                );
            }
            if items.is_empty() {
                bail!("give at least one --id or --name");
            }
            let req = FetchManyRequest {
                items,
                include_text: a.no_text.then_some(false),
                include_deleted: flag(a.include_deleted),
            };
            print(&client.capsules().fetch_many(&req).await?, format)
        }
        CapsuleCommand::Update(a) => {
            let (id, workspace, name) = a.address.parts()?;
            let based_on = refs(
                workspace.as_deref().unwrap_or("default"),
                a.based_on,
                a.based_on_id,
            );
            let req = UpdateRequest {
                id,
                workspace,
                name,
                capsule_text: stdin_text()?,
                title: a.title,
                tags: a.tags,
                source: a.source,
                run_id: a.orchestration.run_id,
                phase: a.orchestration.phase,
                role: a.orchestration.role,
                task: a.task,
                allow_thin: flag(a.allow_thin),
                if_updated_at: a.if_updated_at,
                if_revision: a.if_revision,
                based_on,
                evidence: if a.clear_evidence {
                    Some(Vec::new())
                } else {
                    evidence(a.evidence, a.evidence_file.as_deref())?
                },
            };
            print(&client.capsules().update(&req).await?, format)
        }
        CapsuleCommand::Delete(a) => {
            let (id, workspace, name) = a.parts()?;
            print(
                &client
                    .capsules()
                    .delete(&DeleteRequest {
                        id,
                        workspace,
                        name,
                    })
                    .await?,
                format,
            )
        }
        CapsuleCommand::Latest(a) => {
            let req = LatestRequest {
                workspace: Some(crate::workspace::or_default(a.workspace, "default")?),
                include_text: flag(a.include_text),
                include_deleted: flag(a.include_deleted),
                run_id: a.orchestration.runs(),
                phase: a.orchestration.phase,
                role: a.orchestration.role,
            };
            print(&client.capsules().latest(&req).await?, format)
        }
        CapsuleCommand::List(a) => {
            let req = ListRequest {
                workspace: Some(crate::workspace::or_default(a.workspace, "default")?),
                limit: a.limit,
                offset: a.offset,
                include_deleted: flag(a.include_deleted),
                run_id: a.orchestration.runs(),
                phase: a.orchestration.phase,
                role: a.orchestration.role,
                task: a.task,
            };
            print(&client.capsules().list(&req).await?, format)
        }
        CapsuleCommand::Inventory(a) => {
            let req = InventoryRequest {
                workspace: crate::workspace::filter(a.workspace)?,
                tag: a.tag,
                name_prefix: a.name_prefix,
                run_id: a.orchestration.runs(),
                phase: a.orchestration.phase,
                role: a.orchestration.role,
                task: a.task,
                include_deleted: flag(a.include_deleted),
                limit: a.limit,
                offset: a.offset,
            };
            print(&client.capsules().inventory(&req).await?, format)
        }
        CapsuleCommand::Search(a) => crate::search::run(a, client, format).await,
        CapsuleCommand::Compose(a) => crate::compose::compose(a, client, format).await,
        CapsuleCommand::Append(a) => crate::compose::append(a, client, format).await,
        CapsuleCommand::BulkDelete(a) => crate::bulk::bulk_delete(a, client, format).await,
        CapsuleCommand::BulkUpdate(a) => crate::bulk::bulk_update(a, client, format).await,
        CapsuleCommand::Purge(a) => crate::bulk::purge(a, client, format).await,
        CapsuleCommand::Watch(a) => crate::swarm::watch(a, client, format).await,
        CapsuleCommand::Stats(a) => crate::swarm::stats(a, client, format).await,
        CapsuleCommand::Restore(a) => crate::history::restore(a, client, format).await,
        CapsuleCommand::Lineage(a) => crate::history::lineage(a, client, format).await,
        CapsuleCommand::Clone(a) => crate::history::clone(a, client, format).await,
        CapsuleCommand::Versions(a) => crate::history::versions(a, client, format).await,
        CapsuleCommand::Diff(a) => crate::history::diff(a, client, format).await,
        CapsuleCommand::Export(a) => crate::transfer::export(a, client, format).await,
        CapsuleCommand::Import(a) => crate::transfer::import(a, client, format).await,
    }
}
