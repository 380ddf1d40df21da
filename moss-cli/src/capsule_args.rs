//! What the capsule verbs share: the `<id>` / `-w/--workspace` + `--name` address, the
//! orchestration flags (`--run-id`, `--phase`, `--role`), and reading the capsule text from
//! stdin. The verbs' modules (`capsule`, `new`, `search`, `compose`, `bulk`, `history`,
//! `swarm`) import these here rather than from each other.

use std::io::{IsTerminal, Read};

use clap::Args;
use moss_client::capsule::RunIds;

/// `<id>` or `--workspace` + `--name`.
#[derive(Debug, Args)]
pub struct AddressArgs {
    /// Capsule id.
    id: Option<String>,
    /// Workspace of the named capsule (else MOSS_WORKSPACE, the project's .moss/config.json,
    /// "default").
    #[arg(short, long)]
    workspace: Option<String>,
    /// Capsule name.
    #[arg(long)]
    name: Option<String>,
}

impl AddressArgs {
    /// The id, workspace and name; a name's workspace follows the workspace rule
    /// (`crate::workspace`), an id needs none.
    pub fn parts(self) -> anyhow::Result<(Option<String>, Option<String>, Option<String>)> {
        let workspace = if self.name.is_some() {
            Some(crate::workspace::or_default(self.workspace, "default")?)
        } else {
            self.workspace
        };
        Ok((self.id, workspace, self.name))
    }
}

/// `--run-id`, `--phase`, `--role`.
#[derive(Debug, Args, Default)]
pub struct Orchestration {
    /// Orchestration run id (as a filter: several, comma-separated).
    #[arg(long)]
    pub run_id: Option<String>,
    /// Workflow phase.
    #[arg(long)]
    pub phase: Option<String>,
    /// Agent role.
    #[arg(long)]
    pub role: Option<String>,
}

impl Orchestration {
    /// The run id as a filter (commas separate several).
    pub fn runs(&self) -> Option<RunIds> {
        self.run_id.as_deref().map(RunIds::from)
    }
}

pub fn flag(b: bool) -> Option<bool> {
    b.then_some(true)
}

/// Capsule text from stdin; `None` when stdin is a terminal or empty.
pub fn stdin_text() -> anyhow::Result<Option<String>> {
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    let mut text = String::new();
    stdin.lock().read_to_string(&mut text)?;
    Ok((!text.is_empty()).then_some(text))
}
