//! `moss compose` and `moss append`.

use anyhow::bail;
use clap::Args;
use moss_client::Client;
use moss_client::capsule::{
    AppendRequest, CapsuleRef, ComposeFormat, ComposeParts, ComposeRequest, StoreAs, StoreMode,
};

use crate::capsule::{AddressArgs, Orchestration, flag, stdin_text};
use crate::output::{Format, print};

#[derive(Debug, Args)]
pub struct ComposeArgs {
    /// Capsule ids, in bundle order (before the --name ones).
    #[arg(long = "id", value_name = "ID")]
    ids: Vec<String>,
    /// Capsule names in --workspace, in bundle order.
    #[arg(long = "name", value_name = "NAME")]
    names: Vec<String>,
    /// Workspace of the --name capsules.
    #[arg(long, default_value = "default")]
    workspace: String,
    /// Bundle format.
    #[arg(long, value_parser = ["markdown", "json"], default_value = "markdown")]
    bundle_format: String,
    /// Keep only these sections of each capsule (comma-separated or repeated).
    #[arg(long, value_delimiter = ',')]
    sections: Vec<String>,
    /// Also store the bundle as a capsule with this name.
    #[arg(long, value_name = "NAME")]
    store_as: Option<String>,
    /// Workspace of the stored bundle (default "default").
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
    let mut items: Vec<CapsuleRef> = a.ids.into_iter().map(CapsuleRef::by_id).collect();
    items.extend(
        a.names
            .into_iter()
            .map(|n| CapsuleRef::by_name(a.workspace.clone(), n)),
    );
    if items.is_empty() {
        bail!("give the capsules to compose with --id and/or --name");
    }
    let store_as = a.store_as.map(|name| StoreAs {
        name,
        workspace: a.store_workspace,
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
    };
    let resp = client.capsules().compose(&req).await?;
    // For people, a json bundle is shown as its document, indented; `--format json` prints the
    // daemon's answer as it is, the document being the `bundle_text` string.
    if json_bundle
        && format == Format::Table
        && let Ok(doc) = serde_json::from_str::<ComposeParts>(&resp.bundle_text)
    {
        println!("{}", serde_json::to_string_pretty(&doc)?);
        return Ok(());
    }
    print(&resp, format)
}

#[derive(Debug, Args)]
pub struct AppendArgs {
    #[command(flatten)]
    address: AddressArgs,
    /// The section's header text as written, e.g. "Design Reviews" for `## Design Reviews`.
    #[arg(long)]
    section: String,
    /// The content to add; read from stdin when omitted.
    #[arg(long)]
    content: Option<String>,
}

pub async fn append(a: AppendArgs, client: &Client, format: Format) -> anyhow::Result<()> {
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
    let (id, workspace, name) = a.address.parts();
    let req = AppendRequest {
        id,
        workspace,
        name,
        section: a.section,
        content,
    };
    print(&client.capsules().append(&req).await?, format)
}
