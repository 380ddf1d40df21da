//! Addressing: workspaces, branch and document names, targets, branches and their sources.

use moss_client::ErrorCode;
use moss_client::reasoning::{BranchInfo, ReasoningRef};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

use super::suggest;
use crate::error::{Error, Result};
use crate::names;

/// The root branch every workspace has.
pub const MAIN: &str = "main";
/// Most bases a branch's view walks through.
pub const MAX_BASE_DEPTH: usize = 32;
/// Longest branch or document name.
pub const MAX_NAME_CHARS: usize = 128;
/// "No cutoff": a source read in full.
pub const ALL: i64 = i64::MAX;

/// The required workspace of a reasoning or tasks request, normalized.
pub fn workspace(value: &str) -> Result<String> {
    if value.trim().is_empty() {
        return Err(Error::invalid_field(
            "workspace",
            "workspace is required: a stable identifier of the project, e.g. \"moss\"",
        ));
    }
    Ok(names::workspace(Some(value))?.norm)
}

/// A branch or document name: 1-128 characters, no control characters, no `|`, no leading or
/// trailing space.
pub fn name(field: &str, value: &str) -> Result<String> {
    let v = value.trim();
    if v.is_empty() {
        return Err(Error::invalid_field(
            field,
            format!("{field} must not be empty"),
        ));
    }
    if v.chars().count() > MAX_NAME_CHARS {
        return Err(Error::invalid_field(
            field,
            format!("{field} is longer than {MAX_NAME_CHARS} characters"),
        ));
    }
    if v.chars().any(|c| c.is_control() || c == '|') {
        return Err(Error::invalid_field(
            field,
            format!("{field} {v:?} holds a control character or `|` (reserved)"),
        ));
    }
    Ok(v.to_string())
}

/// A plan or task id: `PLAN-` or `TASK-` and at least three digits.
pub fn target_id(field: &str, value: &str) -> Result<(&'static str, String)> {
    let v = value.trim().to_uppercase();
    let kind = if v.starts_with("PLAN-") {
        "plan"
    } else if v.starts_with("TASK-") {
        "task"
    } else {
        ""
    };
    let digits = v.get(5..).unwrap_or("");
    if kind.is_empty() || digits.len() < 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(Error::invalid_field(
            field,
            format!("{field} must be a plan or task id like PLAN-001 or TASK-001, got {value:?}"),
        ));
    }
    Ok((kind, v))
}

/// The reasoning documents of a plan or task.
pub fn reasoning_ref(kind: &str, id: &str) -> ReasoningRef {
    ReasoningRef {
        branch: format!("{kind}/{id}"),
        notes_doc: "notes".into(),
        graph_doc: format!("{id}-graph"),
        trace_doc: format!("{id}-trace"),
    }
}

/// Resolves `target` to its `reasoning_ref`; the plan or task must exist.
pub fn resolve_target(conn: &Connection, ws: &str, target: &str) -> Result<ReasoningRef> {
    let (kind, id) = target_id("target", target)?;
    let exists: Option<i64> = conn
        .prepare_cached("SELECT 1 FROM task_items WHERE workspace = ?1 AND id = ?2")?
        .query_row(params![ws, id], |r| r.get(0))
        .optional()?;
    if exists.is_none() {
        return Err(suggest(
            Error::not_found(format!("no {kind} {id} in workspace {ws:?}"))
                .with_details(json!({ "field": "target", "target": id })),
            "tasks_context",
            json!({ "workspace": ws }),
        ));
    }
    Ok(reasoning_ref(kind, &id))
}

/// The workspace's checked-out branch (`main` until `branchmind_checkout`).
pub fn checkout(conn: &Connection, ws: &str) -> Result<String> {
    Ok(conn
        .prepare_cached("SELECT branch FROM reasoning_checkout WHERE workspace = ?1")?
        .query_row([ws], |r| r.get(0))
        .optional()?
        .unwrap_or_else(|| MAIN.to_string()))
}

/// A branch's record, `None` if it does not exist (`main` always does).
pub fn branch(conn: &Connection, ws: &str, name: &str) -> Result<Option<BranchInfo>> {
    let row = conn
        .prepare_cached(
            "SELECT base_branch, base_seq, created_at_ms FROM reasoning_branches
             WHERE workspace = ?1 AND name = ?2",
        )?
        .query_row(params![ws, name], |r| {
            Ok(BranchInfo {
                name: name.to_string(),
                base_branch: r.get(0)?,
                base_seq: r.get(1)?,
                created_at_ms: r.get(2)?,
                current: false,
            })
        })
        .optional()?;
    Ok(row.or_else(|| {
        (name == MAIN).then(|| BranchInfo {
            name: MAIN.into(),
            base_branch: None,
            base_seq: None,
            created_at_ms: None,
            current: false,
        })
    }))
}

/// The branch, or `NOT_FOUND` suggesting `branchmind_branch_list`.
pub fn existing_branch(conn: &Connection, ws: &str, field: &str, name: &str) -> Result<BranchInfo> {
    branch(conn, ws, name)?.ok_or_else(|| unknown_branch(ws, field, name))
}

pub fn unknown_branch(ws: &str, field: &str, name: &str) -> Error {
    suggest(
        Error::new(
            ErrorCode::NotFound,
            format!("no branch {name:?} in workspace {ws:?}; create it with branchmind_branch_create or list the branches"),
        )
        .with_details(json!({ "field": field, "branch": name })),
        "branchmind_branch_list",
        json!({ "workspace": ws }),
    )
}

/// The sources of `branch`'s view, nearest first: `(branch, cutoff)` pairs. The branch itself
/// is read in full; each base up to the smallest cutoff on the way to it.
pub fn sources(
    conn: &Connection,
    ws: &str,
    field: &str,
    branch_name: &str,
) -> Result<Vec<(String, i64)>> {
    let mut out: Vec<(String, i64)> = Vec::new();
    let mut current = existing_branch(conn, ws, field, branch_name)?;
    let mut cutoff = ALL;
    loop {
        if out.iter().any(|(b, _)| *b == current.name) {
            return Err(Error::internal(
                "reading a branch",
                format!(
                    "branch {:?} of {ws:?} has a cycle in its bases",
                    branch_name
                ),
            ));
        }
        out.push((current.name.clone(), cutoff));
        let (Some(base), Some(base_seq)) = (current.base_branch.clone(), current.base_seq) else {
            break;
        };
        if out.len() > MAX_BASE_DEPTH {
            return Err(Error::invalid_field(
                field,
                format!(
                    "branch {branch_name:?} is more than {MAX_BASE_DEPTH} bases deep; merge it \
                     back or branch from a shallower branch"
                ),
            ));
        }
        cutoff = cutoff.min(base_seq);
        current = branch(conn, ws, &base)?.ok_or_else(|| {
            Error::internal(
                "reading a branch",
                format!("base {base:?} of {:?} is missing", current.name),
            )
        })?;
    }
    Ok(out)
}

/// Whether an item at `(branch, seq)` is part of a view with these sources.
pub fn visible(sources: &[(String, i64)], branch: &str, seq: i64) -> bool {
    sources.iter().any(|(b, c)| b == branch && seq <= *c)
}

/// A document address resolved from a request's `target`, `branch` and `doc`.
#[derive(Debug, Clone)]
pub struct DocAddress {
    pub branch: String,
    pub doc: String,
    pub reasoning_ref: Option<ReasoningRef>,
}

/// Resolves `(target?, branch?, doc?)`: the target's branch and `pick(ref)` document; else the
/// given branch (or the checkout) and `doc` (or `default_doc`).
pub fn address(
    conn: &Connection,
    ws: &str,
    target: Option<&str>,
    branch: Option<&str>,
    doc: Option<&str>,
    pick: fn(&ReasoningRef) -> &str,
    default_doc: &str,
) -> Result<DocAddress> {
    let target = target.filter(|t| !t.trim().is_empty());
    let reference = target.map(|t| resolve_target(conn, ws, t)).transpose()?;
    let branch = match (branch.filter(|b| !b.trim().is_empty()), &reference) {
        (Some(b), _) => name("branch", b)?,
        (None, Some(r)) => r.branch.clone(),
        (None, None) => checkout(conn, ws)?,
    };
    let doc = match (doc.filter(|d| !d.trim().is_empty()), &reference) {
        (Some(d), _) => name("doc", d)?,
        (None, Some(r)) => pick(r).to_string(),
        (None, None) => default_doc.to_string(),
    };
    Ok(DocAddress {
        branch,
        doc,
        reasoning_ref: reference,
    })
}

/// Creates a plan's or task's canonical branch if it does not exist yet (a root branch).
pub fn ensure_branch(conn: &Connection, ws: &str, name: &str, seq: i64, ts_ms: i64) -> Result<()> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO reasoning_branches(workspace, name, base_branch, base_seq,
           created_seq, created_at_ms) VALUES (?1, ?2, NULL, NULL, ?3, ?4)",
    )?
    .execute(params![ws, name, seq, ts_ms])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_targets_are_checked() {
        assert!(name("branch", "what/if-1").is_ok());
        assert!(name("branch", "a|b").is_err());
        assert!(name("doc", "a\u{7}").is_err());
        assert!(name("doc", " ").is_err());
        assert_eq!(
            target_id("target", "task-001").unwrap(),
            ("task", "TASK-001".into())
        );
        assert_eq!(target_id("target", "PLAN-1234").unwrap().1, "PLAN-1234");
        assert!(target_id("target", "TASK-1").is_err());
        assert!(target_id("target", "BUG-001").is_err());
    }

    #[test]
    fn visibility_follows_cutoffs() {
        let s = vec![("b".to_string(), ALL), ("main".to_string(), 10)];
        assert!(visible(&s, "b", 50));
        assert!(visible(&s, "main", 10));
        assert!(!visible(&s, "main", 11));
        assert!(!visible(&s, "c", 1));
    }
}
