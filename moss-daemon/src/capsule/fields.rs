//! The capsule's own input rules: addressing (by id, or by workspace + name), the bound on a
//! capsule's text and its required sections, and the token estimate. The rules every memory
//! shares are in [`crate::names`], [`crate::bounds`], [`crate::tags`] and [`crate::page`].

use moss_client::ErrorCode;
use serde_json::json;

use crate::error::{Error, Result};
use crate::names::{self, Workspace};

/// How a request points at one capsule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address {
    Id(String),
    Name {
        workspace: Workspace,
        name: String,
        name_norm: String,
    },
}

impl Address {
    /// Addressing: exactly one of `id` or `workspace`+`name`.
    pub fn resolve(
        id: Option<&str>,
        workspace_arg: Option<&str>,
        name_arg: Option<&str>,
    ) -> Result<Address> {
        let id = id.map(str::trim).filter(|s| !s.is_empty());
        let named = name_arg.is_some_and(|n| !n.is_empty());
        match (id, named) {
            (Some(_), true) => Err(Error::new(
                ErrorCode::AmbiguousAddressing,
                "both `id` and `name` were given; address the capsule by `id` alone or by \
                 `workspace` + `name`",
            )),
            (Some(id), false) => Ok(Address::Id(id.to_string())),
            (None, true) => {
                let ws = names::workspace(workspace_arg)?;
                let (name, name_norm) = names::name(name_arg)?.expect("name is non-empty");
                Ok(Address::Name {
                    workspace: ws,
                    name,
                    name_norm,
                })
            }
            (None, false) => Err(Error::invalid(
                "no capsule address: give `id`, or `workspace` + `name` (workspace defaults to \
                 \"default\")",
            )),
        }
    }

    /// How the address reads in messages: `id 01J…` or `workspace/name`.
    pub fn describe(&self) -> String {
        match self {
            Address::Id(id) => format!("id {id}"),
            Address::Name {
                workspace, name, ..
            } => format!("{}/{}", workspace.raw, name),
        }
    }

    pub fn not_found(&self) -> Error {
        Error::not_found(format!("capsule not found: {}", self.describe()))
    }
}

/// Size bound: `capsule_text` may hold at most `max` characters.
pub fn check_size(text: &str, max: usize) -> Result<usize> {
    let chars = text.chars().count();
    if chars > max {
        return Err(Error::new(
            ErrorCode::CapsuleTooLarge,
            format!(
                "capsule_text is {chars} characters; the limit is {max} (capsule_max_chars). \
                 Distill it further: keep decisions and next actions, drop narrative"
            ),
        )
        .with_details(json!({ "max_chars": max, "actual_chars": chars })));
    }
    Ok(chars)
}

/// The six required sections, unless `allow_thin`.
pub fn check_sections(text: &str, allow_thin: bool) -> Result<()> {
    if allow_thin {
        return Ok(());
    }
    let missing = super::lint::missing_sections(text);
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::new(
        ErrorCode::CapsuleTooThin,
        format!(
            "capsule missing required sections: [{}]. Add a header or `Name:` line for each \
             (e.g. `## {}`), or set allow_thin to store it anyway",
            missing.join(", "),
            missing[0]
        ),
    )
    .with_details(json!({ "missing": missing })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addressing_is_exactly_one_mode() {
        assert_eq!(
            Address::resolve(Some("X"), None, Some("n"))
                .unwrap_err()
                .code(),
            ErrorCode::AmbiguousAddressing
        );
        assert_eq!(
            Address::resolve(None, Some("w"), None).unwrap_err().code(),
            ErrorCode::InvalidRequest
        );
        assert_eq!(
            Address::resolve(Some("X"), None, None).unwrap(),
            Address::Id("X".into())
        );
        match Address::resolve(None, None, Some(" Auth ")).unwrap() {
            Address::Name {
                workspace,
                name_norm,
                ..
            } => {
                assert_eq!(workspace.norm, "default");
                assert_eq!(name_norm, "auth");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sizes() {
        let e = check_size("ééé", 2).unwrap_err();
        assert_eq!(e.code(), ErrorCode::CapsuleTooLarge);
        assert_eq!(e.0.details["actual_chars"], 3);
        assert_eq!(e.0.details["max_chars"], 2);
        assert_eq!(check_size("ééé", 3).unwrap(), 3);
    }
}
