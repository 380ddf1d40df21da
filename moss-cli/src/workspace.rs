//! Which workspace a command acts on, one rule for every group: `-w/--workspace`, else
//! `$MOSS_WORKSPACE`, else the `workspace` key of the nearest `.moss/config.json` above the
//! working directory (the Moss home's own `.moss` is not a project's), else the family's
//! default (the caller's: "default" for capsules and memories, every workspace for filters,
//! none for reasoning and tasks). With `-v` the choice and where it came from go to stderr.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, bail};

/// The environment variable naming the workspace.
pub const ENV: &str = "MOSS_WORKSPACE";

static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Turns on `-v`: every resolution prints its outcome to stderr.
pub fn set_verbose(on: bool) {
    VERBOSE.store(on, Ordering::Relaxed);
}

/// Where a workspace came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Flag,
    Env,
    Config(PathBuf),
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Flag => f.write_str("from -w"),
            Source::Env => write!(f, "from {ENV}"),
            Source::Config(path) => write!(f, "from {}", path.display()),
            Source::Default => f.write_str("default"),
        }
    }
}

/// The workspace given by the flag, the environment or the project's config, with its source;
/// `None` when none of them names one (the caller's default then applies).
pub fn given(flag: Option<String>) -> anyhow::Result<Option<(String, Source)>> {
    if let Some(ws) = flag.filter(|w| !w.is_empty()) {
        return Ok(Some((ws, Source::Flag)));
    }
    if let Ok(ws) = std::env::var(ENV)
        && !ws.is_empty()
    {
        return Ok(Some((ws, Source::Env)));
    }
    let Some(cwd) = std::env::current_dir()
        .ok()
        .and_then(|d| d.canonicalize().ok())
    else {
        return Ok(None);
    };
    let home = crate::connect::moss_home().and_then(|h| h.canonicalize().ok());
    from_config(&cwd, home.as_deref())
}

/// The `workspace` key of the nearest `.moss/config.json` at or above `dir`, skipping `home`
/// (the Moss home's own `.moss`). A config without the key names none; one that is not a JSON
/// object or whose key is not a string is an error naming the file.
fn from_config(dir: &Path, home: Option<&Path>) -> anyhow::Result<Option<(String, Source)>> {
    for d in dir.ancestors() {
        let moss = d.join(".moss");
        if !moss.is_dir() || home == moss.canonicalize().ok().as_deref() {
            continue;
        }
        let path = moss.join("config.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
        };
        let value: serde_json::Value = serde_json::from_str(&text).with_context(|| {
            format!(
                "{} is not valid JSON; fix it (e.g. {{\"workspace\": \"myproject\"}}) or pass -w NAME",
                path.display()
            )
        })?;
        let Some(obj) = value.as_object() else {
            bail!(
                "{} must be a JSON object, e.g. {{\"workspace\": \"myproject\"}}; fix it or pass -w NAME",
                path.display()
            );
        };
        return match obj.get("workspace") {
            None => Ok(None),
            Some(serde_json::Value::String(ws)) if !ws.is_empty() => {
                Ok(Some((ws.clone(), Source::Config(path))))
            }
            Some(other) => bail!(
                "{}: \"workspace\" must be a non-empty string naming the project's workspace, got {other}; fix it or pass -w NAME",
                path.display()
            ),
        };
    }
    Ok(None)
}

/// Prints the outcome with `-v`.
fn report(name: &str, source: &Source) {
    if VERBOSE.load(Ordering::Relaxed) {
        eprintln!("workspace: {name} ({source})");
    }
}

/// The workspace, or `default` when nothing names one.
pub fn or_default(flag: Option<String>, default: &str) -> anyhow::Result<String> {
    let (name, source) = given(flag)?.unwrap_or_else(|| (default.to_string(), Source::Default));
    report(&name, &source);
    Ok(name)
}

/// The workspace, or an error saying how to name one (reasoning and tasks have no default).
pub fn required(flag: Option<String>) -> anyhow::Result<String> {
    let Some((name, source)) = given(flag)? else {
        bail!(
            "a workspace is required: -w NAME, or MOSS_WORKSPACE, or {{\"workspace\": \"NAME\"}} in the project's .moss/config.json"
        );
    };
    report(&name, &source);
    Ok(name)
}

/// The workspace a filter keeps to; `None` (every workspace) when nothing names one.
pub fn filter(flag: Option<String>) -> anyhow::Result<Option<String>> {
    match given(flag)? {
        Some((name, source)) => {
            report(&name, &source);
            Ok(Some(name))
        }
        None => {
            report("every workspace", &Source::Default);
            Ok(None)
        }
    }
}

/// Prints a workspace decided elsewhere (e.g. a request's own `workspace` field) with `-v`.
pub fn report_request(name: &str) {
    if VERBOSE.load(Ordering::Relaxed) {
        eprintln!("workspace: {name} (from the request)");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_config_names_the_workspace_and_bad_ones_are_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let sub = root.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(from_config(&sub, None).unwrap(), None);

        std::fs::create_dir_all(root.join(".moss")).unwrap();
        let cfg = root.join(".moss/config.json");
        std::fs::write(&cfg, r#"{"workspace": "proj"}"#).unwrap();
        assert_eq!(
            from_config(&sub, None).unwrap(),
            Some(("proj".into(), Source::Config(cfg.clone())))
        );
        // The Moss home's own .moss is skipped.
        assert_eq!(from_config(&sub, Some(&root.join(".moss"))).unwrap(), None);

        std::fs::write(&cfg, "{not json").unwrap();
        let e = format!("{:#}", from_config(&sub, None).unwrap_err());
        assert!(e.contains("config.json is not valid JSON"), "{e}");
        std::fs::write(&cfg, r#"{"workspace": 3}"#).unwrap();
        let e = format!("{:#}", from_config(&sub, None).unwrap_err());
        assert!(
            e.contains("\"workspace\" must be a non-empty string"),
            "{e}"
        );
        std::fs::write(&cfg, r#"{"other": 1}"#).unwrap();
        assert_eq!(from_config(&sub, None).unwrap(), None);
    }
}
