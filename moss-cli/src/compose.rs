//! `moss compose` and `moss append`.

use anyhow::bail;
use clap::Args;
use moss_client::Client;
use moss_client::capsule::{
    AppendPosition, AppendRequest, AppendSection, ComposeFormat, ComposeItem, ComposeParts,
    ComposePivot, ComposeRequest, RunIds, StoreAs, StoreMode,
};

use crate::capsule_args::{AddressArgs, Orchestration, flag, stdin_text};
use crate::output::outln;
use crate::output::{Format, print};

#[derive(Debug, Args)]
pub struct ComposeArgs {
    /// Capsule ids, in bundle order (before the --name ones).
    #[arg(long = "id", value_name = "ID")]
    ids: Vec<String>,
    /// Capsule names in --workspace, in bundle order.
    #[arg(long = "name", value_name = "NAME")]
    names: Vec<String>,
    /// Workspace of the --name capsules, and of the stored bundle unless --store-workspace.
    #[arg(short, long)]
    workspace: Option<String>,
    /// Bundle format.
    #[arg(long, value_parser = ["markdown", "json"], default_value = "markdown")]
    bundle_format: String,
    /// Keep only these sections of each capsule (comma-separated or repeated).
    #[arg(long, value_delimiter = ',')]
    sections: Vec<String>,
    /// Also every active capsule matching these KEY=VALUE filters (workspace, run_id, phase,
    /// role, tag, task; all must match), oldest first, after the --id and --name ones.
    #[arg(long = "where", value_name = "KEY=VALUE")]
    filters: Vec<String>,
    /// Group the bundle by section: each section once, every capsule's part under it.
    #[arg(long, value_parser = ["section"])]
    pivot: Option<String>,
    /// Start each capsule's part with `**name** (role):`.
    #[arg(long)]
    attribution: bool,
    /// Also store the bundle as a capsule with this name.
    #[arg(long, value_name = "NAME")]
    store_as: Option<String>,
    /// Workspace of the stored bundle (default: the --name capsules').
    #[arg(long, requires = "store_as")]
    store_workspace: Option<String>,
    /// Title of the stored bundle.
    #[arg(long, requires = "store_as")]
    store_title: Option<String>,
    /// Overwrite an existing capsule of the --store-as name.
    #[arg(long, requires = "store_as")]
    replace: bool,
    /// Store the bundle even without the six required sections.
    #[arg(long, requires = "store_as")]
    allow_thin: bool,
    #[command(flatten)]
    orchestration: Orchestration,
}

pub async fn compose(a: ComposeArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let workspace = if a.names.is_empty() && a.store_as.is_none() {
        None
    } else {
        Some(crate::workspace::or_default(a.workspace, "default")?)
    };
    let mut items: Vec<ComposeItem> = a.ids.into_iter().map(ComposeItem::by_id).collect();
    if let Some(ws) = &workspace {
        items.extend(
            a.names
                .into_iter()
                .map(|n| ComposeItem::by_name(ws.clone(), n)),
        );
    }
    if !a.filters.is_empty() {
        let mut filter = ComposeItem::default();
        for kv in &a.filters {
            let Some((k, v)) = kv.split_once('=') else {
                bail!("--where takes KEY=VALUE, e.g. --where run_id=pr-42; got {kv:?}");
            };
            let v = Some(v.to_string());
            match k.trim() {
                "workspace" => filter.workspace = v,
                "run_id" => filter.run_id = v.as_deref().map(RunIds::from),
                "phase" => filter.phase = v,
                "role" => filter.role = v,
                "tag" => filter.tag = v,
                "task" => filter.task = v,
                other => bail!(
                    "--where {other:?}: the filter keys are workspace, run_id, phase, role, tag, \
                     task"
                ),
            }
        }
        items.push(filter);
    }
    if items.is_empty() {
        bail!("give the capsules to compose with --id, --name and/or --where");
    }
    let store_as = a.store_as.map(|name| StoreAs {
        name,
        workspace: a.store_workspace.or(workspace),
        title: a.store_title,
        mode: a.replace.then_some(StoreMode::Replace),
        allow_thin: flag(a.allow_thin),
        source: Some("cli".into()),
        run_id: a.orchestration.run_id,
        phase: a.orchestration.phase,
        role: a.orchestration.role,
        tags: None,
    });
    let json_bundle = a.bundle_format == "json";
    let req = ComposeRequest {
        items,
        format: Some(if json_bundle {
            ComposeFormat::Json
        } else {
            ComposeFormat::Markdown
        }),
        sections: (!a.sections.is_empty()).then_some(a.sections),
        store_as,
        pivot: a.pivot.map(|_| ComposePivot::Section),
        include_attribution: a.attribution.then_some(true),
    };
    let resp = client.capsules().compose(&req).await?;
    // For people, a json bundle is shown as its document, indented; `--format json` prints the
    // daemon's answer as it is, the document being the `bundle_text` string.
    if json_bundle
        && format == Format::Table
        && let Ok(doc) = serde_json::from_str::<ComposeParts>(&resp.bundle_text)
    {
        outln!("{}", serde_json::to_string_pretty(&doc)?)?;
        return Ok(());
    }
    print(&resp, format)
}

#[derive(Debug, Args)]
pub struct AppendArgs {
    #[command(flatten)]
    address: AddressArgs,
    /// The section's header text as written, e.g. "Design Reviews" for `## Design Reviews`.
    #[arg(long, required_unless_present = "add", conflicts_with = "add")]
    section: Option<String>,
    /// The content to add; read from stdin when omitted. It may start with `-` (a list item).
    #[arg(long, requires = "section", allow_hyphen_values = true)]
    content: Option<String>,
    /// Several sections at once, all or none: SECTION=CONTENT, repeated.
    #[arg(long, value_name = "SECTION=CONTENT", allow_hyphen_values = true)]
    add: Vec<String>,
    /// Put the content right under the header instead of after the body.
    #[arg(long)]
    prepend: bool,
    /// Only write into sections that still hold a placeholder (else CONFLICT).
    #[arg(long)]
    if_placeholder: bool,
    /// Only if the capsule's revision is still this (else CONFLICT).
    #[arg(long)]
    if_revision: Option<i64>,
    /// Only if the capsule's updated_at is still this (else CONFLICT).
    #[arg(long)]
    if_updated_at: Option<i64>,
}

pub async fn append(a: AppendArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let (section, content, sections) = if a.add.is_empty() {
        let content = match a.content {
            Some(c) => c,
            None => match stdin_text()? {
                Some(c) => c,
                None => bail!(
                    "no content: pass --content \"…\" or pipe it in, e.g. \
                     `echo '- approved' | moss append --name auth --section Reviews`"
                ),
            },
        };
        (a.section, Some(content), None)
    } else {
        let mut list = Vec::new();
        for kv in &a.add {
            let Some((section, content)) = kv.split_once('=') else {
                bail!("--add takes SECTION=CONTENT, e.g. --add 'Status=implementing'; got {kv:?}");
            };
            list.push(AppendSection {
                section: section.to_string(),
                content: content.to_string(),
            });
        }
        (None, None, Some(list))
    };
    let (id, workspace, name) = a.address.parts()?;
    let req = AppendRequest {
        id,
        workspace,
        name,
        section,
        content,
        sections,
        position: a.prepend.then_some(AppendPosition::Prepend),
        if_placeholder: a.if_placeholder.then_some(true),
        if_updated_at: a.if_updated_at,
        if_revision: a.if_revision,
    };
    print(&client.capsules().append(&req).await?, format)
}
