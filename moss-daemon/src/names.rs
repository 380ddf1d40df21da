//! Workspaces and names: how every memory normalizes them, so that one workspace is the same
//! workspace in all of them. A workspace or name is kept as given (for display) and normalized
//! (for lookup): trimmed, lowercased, internal whitespace collapsed to single spaces.

use crate::bounds::{MAX_HANDLE_CHARS, check_len};
use crate::error::{Error, Result};

/// The workspace of a request that names none.
pub const DEFAULT_WORKSPACE: &str = "default";

/// Normalization of workspaces and names: trim, lowercase, collapse internal whitespace to
/// single spaces.
pub fn normalize(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// A workspace as given (for display) and normalized (for lookup).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    pub raw: String,
    pub norm: String,
}

/// Resolves an optional workspace: absent or "" means `default`.
pub fn workspace(value: Option<&str>) -> Result<Workspace> {
    match value {
        None | Some("") => Ok(Workspace {
            raw: DEFAULT_WORKSPACE.into(),
            norm: DEFAULT_WORKSPACE.into(),
        }),
        Some(raw) => {
            let norm = normalize(raw);
            if norm.is_empty() {
                return Err(Error::invalid_field(
                    "workspace",
                    "workspace is only whitespace; omit it to use \"default\", or give a name",
                ));
            }
            check_len("workspace", raw, MAX_HANDLE_CHARS)?;
            Ok(Workspace {
                raw: raw.to_string(),
                norm,
            })
        }
    }
}

/// A name as given and normalized; `None` for an unnamed item (absent or "").
pub fn name(value: Option<&str>) -> Result<Option<(String, String)>> {
    match value {
        None | Some("") => Ok(None),
        Some(raw) => {
            let norm = normalize(raw);
            if norm.is_empty() {
                return Err(Error::invalid_field(
                    "name",
                    "name is only whitespace; omit it for an unnamed capsule, or give a name",
                ));
            }
            check_len("name", raw, MAX_HANDLE_CHARS)?;
            Ok(Some((raw.to_string(), norm)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_trims_lowercases_and_collapses_whitespace() {
        assert_eq!(normalize("StartupA"), "startupa");
        assert_eq!(normalize("  My Project  "), "my project");
        assert_eq!(normalize("LOUD_NAME"), "loud_name");
        assert_eq!(normalize("a \t\n b"), "a b");
    }
}
