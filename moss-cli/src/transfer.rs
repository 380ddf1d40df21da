//! `moss export` and `moss import`, with a progress line on stderr when it is a terminal.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use clap::{Args, ValueEnum};
use moss_client::Client;
use moss_client::capsule::{ExportRequest, ImportMode, ImportRequest};

use crate::output::{Format, print};

/// How often the progress line is refreshed.
const POLL: Duration = Duration::from_millis(250);

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// JSONL file to write. A bare file name goes to ~/.moss/exports/; otherwise an absolute
    /// path directly inside ~/.moss/exports/ or an allowed_paths directory.
    /// Default: ~/.moss/exports/WORKSPACE-TIMESTAMP.jsonl.
    #[arg(long)]
    path: Option<String>,
    /// Only this workspace (default: all).
    #[arg(short, long)]
    workspace: Option<String>,
    /// Also export soft-deleted capsules.
    #[arg(long)]
    include_deleted: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ModeArg {
    /// Fail the whole import on any id or name collision (nothing is written).
    Error,
    /// Overwrite the colliding capsule, keeping its id.
    Replace,
    /// Import alongside: suffix a taken name (auth -> auth-1), new id for a taken id.
    Rename,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// JSONL file to read (same rules as export --path).
    #[arg(long)]
    path: String,
    /// What to do when a record's id or name is already taken.
    #[arg(long, value_enum, default_value_t = ModeArg::Error)]
    mode: ModeArg,
}

pub async fn export(a: ExportArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let req = ExportRequest {
        path: a.path,
        workspace: crate::workspace::filter(a.workspace)?,
        include_deleted: a.include_deleted.then_some(true),
    };
    let id = ulid::Ulid::generate().to_string();
    let r = with_progress(client, &id, client.capsules().export(&req, Some(&id))).await?;
    print(&r, format)
}

pub async fn import(a: ImportArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let req = ImportRequest {
        path: a.path,
        mode: Some(match a.mode {
            ModeArg::Error => ImportMode::Error,
            ModeArg::Replace => ImportMode::Replace,
            ModeArg::Rename => ImportMode::Rename,
        }),
    };
    let id = ulid::Ulid::generate().to_string();
    let r = with_progress(client, &id, client.capsules().import(&req, Some(&id))).await?;
    print(&r, format)
}

/// Runs `call`; meanwhile, when stderr is a terminal, polls `GET /progress/{id}` and redraws a
/// `phase: done/total` line there, erased when the call ends.
async fn with_progress<T>(
    client: &Client,
    id: &str,
    call: impl Future<Output = Result<T, moss_client::ClientError>>,
) -> anyhow::Result<T> {
    if !std::io::stderr().is_terminal() {
        return Ok(call.await?);
    }
    let shown = std::cell::Cell::new(false);
    let poll = async {
        loop {
            tokio::time::sleep(POLL).await;
            if let Ok(p) = client.progress(id).await {
                let line = if p.total > 0 {
                    format!(
                        "{}: {}/{} ({}%)",
                        p.phase,
                        p.done,
                        p.total,
                        p.done.saturating_mul(100) / p.total
                    )
                } else {
                    format!("{}: {}", p.phase, p.done)
                };
                eprint!("\r\x1b[2K{line}");
                let _ = std::io::stderr().flush();
                shown.set(true);
            }
        }
    };
    let r = tokio::select! {
        r = call => r,
        () = poll => unreachable!("the poll loop never ends"),
    };
    if shown.get() {
        eprint!("\r\x1b[2K");
        let _ = std::io::stderr().flush();
    }
    Ok(r?)
}
