//! Addressing: workspaces, branch and document names, targets, branches and their sources.

use moss_client::ErrorCode;
use moss_client::reasoning::{
    BranchInfo, CommitRequest, GraphApplyRequest, GraphQueryRequest, GraphValidateRequest,
    NotesCommitRequest, ReasoningRef, ShowRequest, ThinkContextRequest, ThinkNextRequest,
};
use serde_json::json;

use super::suggest;
use crate::error::{Error, Result};
use crate::store::WriteCtx;
use crate::store::engine::Db;

/// The root branch every workspace has.
pub const MAIN: &str = "main";
/// Most bases a branch's view walks through.
pub const MAX_BASE_DEPTH: usize = 32;
/// Longest branch or document name.
pub const MAX_NAME_CHARS: usize = 128;
/// "No cutoff": a source read in full.
pub const ALL: i64 = i64::MAX;

/// The required workspace of a reasoning or tasks request, normalized.
pub use crate::read::workspace;

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
pub fn resolve_target(db: Db<'_>, ws: &str, target: &str) -> Result<ReasoningRef> {
    let (kind, id) = target_id("target", target)?;
    if !crate::tasks::interface::exists(db, ws, &id)? {
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
pub fn checkout(db: Db<'_>, ws: &str) -> Result<String> {
    Ok(db
        .query_opt(
            "SELECT branch FROM reasoning_checkout WHERE workspace = ?1",
            crate::db_params![ws],
            |r| r.get(0),
        )?
        .unwrap_or_else(|| MAIN.to_string()))
}

/// A branch's record, `None` if it does not exist (`main` always does).
pub fn branch(db: Db<'_>, ws: &str, name: &str) -> Result<Option<BranchInfo>> {
    let row = db.query_opt(
        "SELECT base_branch, base_seq, created_at_ms FROM reasoning_branches
             WHERE workspace = ?1 AND name = ?2",
        crate::db_params![ws, name],
        |r| {
            Ok(BranchInfo {
                name: name.to_string(),
                base_branch: r.get(0)?,
                base_seq: r.get(1)?,
                created_at_ms: r.get(2)?,
                current: false,
            })
        },
    )?;
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
pub fn existing_branch(db: Db<'_>, ws: &str, field: &str, name: &str) -> Result<BranchInfo> {
    branch(db, ws, name)?.ok_or_else(|| unknown_branch(ws, field, name))
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
pub fn sources(db: Db<'_>, ws: &str, field: &str, branch_name: &str) -> Result<Vec<(String, i64)>> {
    let mut out: Vec<(String, i64)> = Vec::new();
    let mut current = existing_branch(db, ws, field, branch_name)?;
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
        current = branch(db, ws, &base)?.ok_or_else(|| {
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

/// How a tool names the documents it reads or writes, for refusing a call that names none.
#[derive(Debug, Clone, Copy)]
pub struct Naming {
    /// The tool, for the suggested call.
    pub tool: &'static str,
    /// The fields that name its documents without a target, each with the usual document.
    pub fields: &'static [(&'static str, &'static str)],
}

impl Naming {
    /// A graph read or write whose document field is `doc` (usually `graph`).
    pub const fn graph(tool: &'static str) -> Naming {
        Naming {
            tool,
            fields: &[("doc", "graph")],
        }
    }

    /// A notes read or write whose document field is `doc` (usually `notes`).
    pub const fn notes(tool: &'static str) -> Naming {
        Naming {
            tool,
            fields: &[("doc", "notes")],
        }
    }

    /// A card tool, whose graph document field is `graph_doc` (usually `graph`).
    pub const fn graph_doc(tool: &'static str) -> Naming {
        Naming {
            tool,
            fields: &[("graph_doc", "graph")],
        }
    }
}

/// The branch of `(target?, branch?)`: `branch`, else the target's branch, else the checkout;
/// with the target's `reasoning_ref`.
pub fn branch_of(
    db: Db<'_>,
    ws: &str,
    target: Option<&str>,
    branch: Option<&str>,
) -> Result<(String, Option<ReasoningRef>)> {
    let target = target.filter(|t| !t.trim().is_empty());
    let reference = target.map(|t| resolve_target(db, ws, t)).transpose()?;
    let branch = match (branch.filter(|b| !b.trim().is_empty()), &reference) {
        (Some(b), _) => name("branch", b)?,
        (None, Some(r)) => r.branch.clone(),
        (None, None) => checkout(db, ws)?,
    };
    Ok((branch, reference))
}

/// A request that names its document by `target`, `branch` and a document field (`doc`, or a
/// card's `graph_doc`).
pub trait DocRef {
    fn target(&self) -> Option<&str>;
    fn branch(&self) -> Option<&str>;
    fn doc(&self) -> Option<&str>;
}

macro_rules! doc_ref {
    ($($t:ty: $doc:ident),* $(,)?) => {$(
        impl DocRef for $t {
            fn target(&self) -> Option<&str> {
                self.target.as_deref()
            }
            fn branch(&self) -> Option<&str> {
                self.branch.as_deref()
            }
            fn doc(&self) -> Option<&str> {
                self.$doc.as_deref()
            }
        }
    )*};
}

doc_ref!(
    NotesCommitRequest: doc,
    CommitRequest: doc,
    ShowRequest: doc,
    GraphApplyRequest: doc,
    GraphQueryRequest: doc,
    GraphValidateRequest: doc,
    ThinkContextRequest: graph_doc,
    ThinkNextRequest: graph_doc,
);

/// [`address`] of the document `req` names.
pub fn address_of(
    db: Db<'_>,
    ws: &str,
    req: &impl DocRef,
    pick: fn(&ReasoningRef) -> &str,
    naming: &Naming,
) -> Result<DocAddress> {
    address(db, ws, req.target(), req.branch(), req.doc(), pick, naming)
}

/// Resolves `(target?, branch?, doc?)`. A document is always named, never guessed: `target`
/// names the plan's or task's documents (`pick(ref)`), on its branch or on `branch`; without a
/// target, `doc` names it, on `branch` or the checked-out branch. A call that names neither is
/// `INVALID_REQUEST` carrying the call that works (see [`unnamed_document`]).
pub fn address(
    db: Db<'_>,
    ws: &str,
    target: Option<&str>,
    branch: Option<&str>,
    doc: Option<&str>,
    pick: fn(&ReasoningRef) -> &str,
    naming: &Naming,
) -> Result<DocAddress> {
    let doc = doc.filter(|d| !d.trim().is_empty());
    let no_target = target.is_none_or(|t| t.trim().is_empty());
    if no_target && doc.is_none() {
        return Err(unnamed_document(db, ws, branch, naming)?);
    }
    let (branch, reference) = branch_of(db, ws, target, branch)?;
    let doc = match (doc, &reference) {
        (Some(d), _) => name("doc", d)?,
        (None, Some(r)) => pick(r).to_string(),
        (None, None) => unreachable!("checked above: a target or a doc is named"),
    };
    Ok(DocAddress {
        branch,
        doc,
        reasoning_ref: reference,
    })
}

/// The plan or task whose canonical branch `branch` is, or was made from (through its bases):
/// `(kind, id)`. `None` for other branches, and for a branch that does not exist.
pub fn owner(db: Db<'_>, ws: &str, branch: &str) -> Result<Option<(&'static str, String)>> {
    let sources = match sources(db, ws, "branch", branch) {
        Ok(s) => s,
        Err(e) if e.0.code == ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(sources.iter().find_map(|(b, _)| {
        let (kind, id) = b.split_once('/')?;
        let (k, id) = target_id("target", id).ok()?;
        (k == kind).then_some((k, id))
    }))
}

/// The refusal of a call that names no document, with the call that works: on a branch that
/// is (or was made from) a plan's or task's branch, `target` with that branch; else the
/// branch with the tool's usual document names.
pub fn unnamed_document(
    db: Db<'_>,
    ws: &str,
    branch: Option<&str>,
    naming: &Naming,
) -> Result<Error> {
    let branch = match branch.filter(|b| !b.trim().is_empty()) {
        Some(b) => name("branch", b)?,
        None => checkout(db, ws)?,
    };
    let fields: Vec<&str> = naming.fields.iter().map(|(f, _)| *f).collect();
    let fields = fields.join(" and ");
    let mut args = serde_json::Map::new();
    args.insert("workspace".into(), json!(ws));
    let why = match owner(db, ws, &branch)? {
        Some((kind, id)) => {
            args.insert("target".into(), json!(id));
            let canonical = reasoning_ref(kind, &id).branch;
            if branch != canonical {
                args.insert("branch".into(), json!(branch));
                format!(
                    "branch {branch:?} was made from {canonical}, so its documents are {id}'s: \
                     name them with target (and the branch)"
                )
            } else {
                format!("branch {branch:?} is {id}'s: name its documents with target")
            }
        }
        None => {
            args.insert("branch".into(), json!(branch));
            for (field, usual) in naming.fields {
                args.insert((*field).into(), json!(usual));
            }
            format!(
                "give target (a plan or task id, for its documents) or {fields} (on branch, or \
                 the checked-out branch)"
            )
        }
    };
    let args = serde_json::Value::Object(args);
    Ok(suggest(
        Error::invalid_field(
            "target",
            format!(
                "this call names no document: {why}; e.g. {} {args} with your other arguments",
                naming.tool
            ),
        ),
        naming.tool,
        args,
    ))
}

/// The graph document of a call between two branches (`graph_diff`, `graph_merge`,
/// `graph_conflicts`): `doc`, or, when absent, `INVALID_REQUEST` with the call that names the
/// graph of the plan or task the first of `branches` belongs to (else `graph`). `call` holds
/// the call's other arguments.
pub fn graph_doc_between(
    db: Db<'_>,
    ws: &str,
    doc: Option<&str>,
    branches: &[&str],
    tool: &str,
    call: serde_json::Value,
) -> Result<String> {
    if let Some(d) = doc.filter(|d| !d.trim().is_empty()) {
        return name("doc", d);
    }
    let mut owner_ref = None;
    for b in branches {
        if let Some((kind, id)) = owner(db, ws, b)? {
            owner_ref = Some((id.clone(), reasoning_ref(kind, &id)));
            break;
        }
    }
    let (why, doc) = match owner_ref {
        Some((id, r)) => (
            format!("the branches are {id}'s, whose graph is {:?}", r.graph_doc),
            r.graph_doc,
        ),
        None => ("name the graph document".to_string(), "graph".to_string()),
    };
    let mut args = match call {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    args.insert("workspace".into(), json!(ws));
    args.insert("doc".into(), json!(doc));
    let args = serde_json::Value::Object(args);
    Err(suggest(
        Error::invalid_field("doc", format!("doc is required: {why}; e.g. {tool} {args}")),
        tool,
        args,
    ))
}

/// Creates a plan's or task's canonical branch if it does not exist yet (a root branch), in
/// the writer job of `ctx`.
pub fn ensure_branch(ctx: &WriteCtx, ws: &str, name: &str, seq: i64, ts_ms: i64) -> Result<()> {
    ctx.db().execute(
        "INSERT INTO reasoning_branches(workspace, name, base_branch, base_seq,
           created_seq, created_at_ms) VALUES (?1, ?2, NULL, NULL, ?3, ?4)
         ON CONFLICT DO NOTHING",
        crate::db_params![ws, name, seq, ts_ms],
    )?;
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
