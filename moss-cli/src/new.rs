//! `moss new`: write a capsule in `$EDITOR`, from a skeleton of the six sections. When the
//! daemon refuses the text (too thin, too large, a bad field), or a section is left empty, the
//! editor opens again on it with the reason at the top, until it is stored or the file is left
//! empty. The skeleton saved as it was stores nothing.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use clap::Args;
use moss_client::capsule::{StoreMode, StoreRequest};
use moss_client::{Client, ClientError, ErrorCode};

use crate::capsule_args::Orchestration;
use crate::output::{Format, print};

/// Lines starting with this are guidance, dropped before the text is stored.
const NOTE: &str = "<!-- moss:";

const SKELETON: &str =
    "<!-- moss: write the capsule below; these lines are dropped. Save and quit to store it; -->
<!-- moss: leave the file empty to give up. Each section needs real content, not a placeholder. -->
## Objective


## Current status


## Decisions


## Next actions


## Key locations


## Open questions

";

/// Most times the editor reopens on a refused text.
const MAX_ROUNDS: usize = 10;

#[derive(Debug, Args)]
pub struct NewArgs {
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
    /// Overwrite an active capsule of that name.
    #[arg(long)]
    replace: bool,
    #[command(flatten)]
    orchestration: Orchestration,
}

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi`.
fn editor() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .find(|v| !v.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// Runs the editor on `path` through the shell, so that `EDITOR="code --wait"` works.
fn edit(path: &Path) -> anyhow::Result<()> {
    let editor = editor();
    let status = Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("moss-new")
        .arg(path)
        .status()
        .with_context(|| format!("cannot run the editor {editor:?}"))?;
    if !status.success() {
        bail!("the editor {editor:?} exited with {status}; nothing was stored");
    }
    Ok(())
}

/// The text without guidance lines; `None` when nothing else is left.
fn without_notes(text: &str) -> Option<String> {
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with(NOTE))
        .collect();
    let out = kept.join("\n").trim().to_string();
    (!out.is_empty()).then(|| format!("{out}\n"))
}

/// The skeleton's sections that `text` holds with nothing under them.
fn empty_sections(text: &str) -> Vec<String> {
    let skeleton: Vec<&str> = SKELETON
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .collect();
    let mut empty = Vec::new();
    let mut current: Option<(&str, bool)> = None;
    for line in text.lines().chain(std::iter::once("## ")) {
        if let Some(header) = line.strip_prefix("## ") {
            if let Some((name, false)) = current
                && skeleton.contains(&name)
            {
                empty.push(name.to_string());
            }
            current = Some((header.trim(), false));
        } else if let Some((_, filled)) = current.as_mut() {
            *filled |= !line.trim().is_empty();
        }
    }
    empty
}

/// The text with the daemon's reason for refusing it on top, as guidance lines.
fn with_reason(text: &str, reason: &str) -> String {
    let mut out = format!("{NOTE} not stored: {} -->\n", reason.replace("-->", "- ->"));
    out.push_str(&format!(
        "{NOTE} fix it and save to try again, or empty the file to give up. -->\n"
    ));
    out.push_str(text);
    out
}

pub async fn run(a: NewArgs, client: &Client, format: Format) -> anyhow::Result<()> {
    let workspace = crate::workspace::or_default(a.workspace.clone(), "default")?;
    let dir = tempfile::tempdir().context("cannot create a temporary directory")?;
    let path = dir.path().join("capsule.md");
    std::fs::write(&path, SKELETON)?;
    for _ in 0..MAX_ROUNDS {
        edit(&path)?;
        let written = std::fs::read_to_string(&path)?;
        let Some(text) = without_notes(&written) else {
            bail!("the file was left empty; nothing was stored");
        };
        if Some(&text) == without_notes(SKELETON).as_ref() {
            bail!(
                "the skeleton was saved as it was, its six sections empty; nothing was stored. \
                 Write each section in the editor (leave the file empty to give up)"
            );
        }
        let empty = empty_sections(&text);
        if !empty.is_empty() {
            let reason = format!(
                "[CAPSULE_TOO_THIN] sections left empty: {}; each needs real content",
                empty.join(", ")
            );
            eprintln!("{reason}; reopening the editor");
            std::fs::write(&path, with_reason(&text, &reason))?;
            continue;
        }
        let req = StoreRequest {
            capsule_text: text.clone(),
            workspace: Some(workspace.clone()),
            name: a.name.clone(),
            title: a.title.clone(),
            tags: (!a.tags.is_empty()).then(|| a.tags.clone()),
            source: Some("cli".into()),
            run_id: a.orchestration.run_id.clone(),
            phase: a.orchestration.phase.clone(),
            role: a.orchestration.role.clone(),
            mode: a.replace.then_some(StoreMode::Replace),
            ..Default::default()
        };
        match client.capsules().store(&req).await {
            Ok(handle) => return print(&handle, format),
            Err(ClientError::Api(e))
                if matches!(
                    e.code,
                    ErrorCode::CapsuleTooThin
                        | ErrorCode::CapsuleTooLarge
                        | ErrorCode::InvalidRequest
                        | ErrorCode::NameAlreadyExists
                ) =>
            {
                eprintln!("[{}] {}; reopening the editor", e.code, e.message);
                std::fs::write(
                    &path,
                    with_reason(&text, &format!("[{}] {}", e.code, e.message)),
                )?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    bail!("not stored after {MAX_ROUNDS} rounds in the editor")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guidance_lines_are_dropped_and_reasons_added() {
        assert_eq!(
            without_notes(SKELETON).unwrap().lines().next(),
            Some("## Objective")
        );
        assert_eq!(without_notes("<!-- moss: x -->\n\n  \n"), None);
        let again = with_reason(
            "## Objective\nx\n",
            "[CAPSULE_TOO_THIN] missing --> Decisions",
        );
        assert!(
            again.starts_with(
                "<!-- moss: not stored: [CAPSULE_TOO_THIN] missing - -> Decisions -->\n"
            )
        );
        assert_eq!(without_notes(&again).as_deref(), Some("## Objective\nx\n"));
    }

    #[test]
    fn sections_of_the_skeleton_left_empty_are_named() {
        assert_eq!(empty_sections(SKELETON).len(), 6);
        let text = "## Objective\nship\n## Current status\n\n  \n## Decisions\n- wal\n## Notes\n";
        assert_eq!(empty_sections(text), ["Current status"]);
        assert!(
            empty_sections(&crate::bench::load::capsule_of_size(300, 1).replace("Running.", "x"))
                .is_empty()
        );
    }
}
