//! `moss reason …`, `moss tasks …` and `moss mem …`: the reasoning, tasks and memory families'
//! subcommand groups.
//!
//! Each subcommand is one operation, sent as `POST /reasoning/<op>` or `POST /tasks/<op>` with a
//! JSON request assembled from the command line: `-w WORKSPACE`, then the request's fields as
//! `key=value` (a string), `key:=json` (a number, boolean, array or object) or `key=@file` (a
//! file's text; `@-` is stdin), or the whole request with `--json`. The request's field names
//! are the MCP tool's (`moss tools`, `proto-docs/mcp-tools.json`); the daemon checks them and
//! names a bad one.

use std::io::Read;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use moss_client::Client;
use moss_client::op::{Op, OpSpec};
use moss_client::{memory, reasoning as branchmind, tasks};
use serde_json::{Map, Value};

use crate::output::{Format, print};

/// Arguments every reasoning and tasks subcommand takes.
#[derive(Debug, Args)]
pub struct OpArgs {
    /// Workspace (else a workspace= field, MOSS_WORKSPACE, the project's .moss/config.json;
    /// required by reasoning and tasks operations, memories default to "default").
    #[arg(short, long)]
    workspace: Option<String>,
    /// The request's fields: key=value (string), key:=json (number, bool, array, object),
    /// key=@file (a file's text, @- for stdin). A key given twice makes a list where the
    /// field takes one (context=a context=b), and is refused where it does not.
    #[arg(value_name = "FIELD")]
    fields: Vec<String>,
    /// The whole request as a JSON object; FIELDs override its keys.
    #[arg(long, value_name = "OBJECT")]
    json: Option<String>,
}

/// A request as the command line gave it: the object, and the fields given more than once
/// with every value in order (the object holds none of them yet).
#[derive(Debug)]
struct Draft {
    body: Map<String, Value>,
    repeated: Vec<(String, Vec<Value>)>,
}

/// Builds the request object.
fn request(args: OpArgs, require_workspace: bool) -> anyhow::Result<Draft> {
    let mut obj: Map<String, Value> = match args.json.as_deref() {
        None => Map::new(),
        Some(s) => match serde_json::from_str(s).context("--json is not valid JSON")? {
            Value::Object(m) => m,
            _ => bail!("--json must be a JSON object, e.g. --json '{{\"limit\": 5}}'"),
        },
    };
    if let Some(ws) = args.workspace.clone() {
        obj.insert("workspace".into(), Value::String(ws));
    }
    let mut stdin_used = false;
    let mut given: Vec<(String, Vec<Value>)> = Vec::new();
    for field in args.fields {
        let (key, value) = if let Some((k, v)) = field.split_once(":=") {
            let v: Value = serde_json::from_str(v).with_context(|| {
                format!("{k}:= takes JSON, got {v:?}; for a string use {k}={v}")
            })?;
            (k.to_string(), v)
        } else if let Some((k, v)) = field.split_once('=') {
            let v = match v.strip_prefix('@') {
                Some("-") => {
                    if stdin_used {
                        bail!("only one field can read stdin (@-)");
                    }
                    stdin_used = true;
                    let mut s = String::new();
                    std::io::stdin()
                        .read_to_string(&mut s)
                        .context("reading stdin")?;
                    s
                }
                Some(path) => std::fs::read_to_string(path)
                    .with_context(|| format!("reading {path} for {k}"))?,
                None => v.to_string(),
            };
            (k.to_string(), Value::String(v))
        } else {
            bail!("{field:?} is not a field: write key=value, key:=json or key=@file");
        };
        if key.is_empty() {
            bail!("{field:?} has no key before = or :=");
        }
        match given.iter_mut().find(|(k, _)| *k == key) {
            Some((_, values)) => values.push(value),
            None => given.push((key, vec![value])),
        }
    }
    let mut repeated = Vec::new();
    for (key, mut values) in given {
        if values.len() == 1 {
            obj.insert(key, values.pop().unwrap_or_default());
        } else {
            obj.remove(&key);
            repeated.push((key, values));
        }
    }
    match obj.get("workspace") {
        Some(Value::String(ws)) if args.workspace.as_ref() == Some(ws) => {
            crate::workspace::or_default(Some(ws.clone()), "default")?;
        }
        Some(ws) => crate::workspace::report_request(ws.as_str().unwrap_or(&ws.to_string())),
        None if require_workspace => {
            let ws = crate::workspace::required(None)
                .map_err(|e| anyhow::anyhow!("{e} (or a workspace=NAME field)"))?;
            obj.insert("workspace".into(), Value::String(ws));
        }
        None => {
            let ws = crate::workspace::or_default(None, "default")?;
            obj.insert("workspace".into(), Value::String(ws));
        }
    }
    Ok(Draft {
        body: obj,
        repeated,
    })
}

/// Declares a family's subcommands: variant, doc (with an example), and the operation of the
/// family's op table it sends (its route comes from there); and whether a request must name
/// its workspace.
macro_rules! ops {
    ($(#[$enum_doc:meta])* $enum:ident, workspace_required: $ws:literal, [$($(#[$doc:meta])* $variant:ident => $op:ty,)*]) => {
        $(#[$enum_doc])*
        #[derive(Debug, Subcommand)]
        pub enum $enum {
            $(
                $(#[$doc])*
                #[command(verbatim_doc_comment, after_help = sends::<$op>())]
                $variant(OpArgs),
            )*
        }

        impl $enum {
            /// Sends the operation and prints the answer.
            pub async fn run(self, client: &Client, format: Format) -> anyhow::Result<()> {
                let (spec, args) = match self {
                    $($enum::$variant(a) => (<$op as Op>::SPEC, a),)*
                };
                send(client, spec, request(args, $ws)?, format).await
            }
        }
    };
}

ops!(
    /// The reasoning memory's operations (`branchmind_*`).
    ReasonCommand, workspace_required: true, [
    /// Initialize a workspace's reasoning memory (idempotent).
    ///
    /// Example:
    ///   moss reason init -w myproject
    Init => branchmind::BranchmindInit,
    /// Schema version, checkout, branch count and the newest task event.
    ///
    /// Example:
    ///   moss reason status -w myproject
    Status => branchmind::BranchmindStatus,
    /// Append a note to a target's notes or to branch+doc.
    ///
    /// Examples:
    ///   moss reason notes-commit -w myproject target=TASK-001 content="Chose WAL: readers never block"
    ///   git log -1 --format=%B | moss reason notes-commit -w myproject content=@- title="Why"
    NotesCommit => branchmind::BranchmindNotesCommit,
    /// Append an entry of any kind to any branch+doc (source_event_id makes it idempotent).
    ///
    /// Example:
    ///   moss reason commit -w myproject branch=main doc=decisions kind=decision content="Ship v2"
    Commit => branchmind::BranchmindCommit,
    /// Read a document newest first (the effective view on a derived branch).
    ///
    /// Examples:
    ///   moss reason show -w myproject target=TASK-001 doc_kind=trace limit:=5
    ///   moss reason show -w myproject branch=what-if cursor:=120
    Show => branchmind::BranchmindShow,
    /// A branch's entries across all its documents, newest first.
    ///
    /// Example:
    ///   moss reason log -w myproject branch=main kind=decision
    Log => branchmind::BranchmindLog,
    /// Everything to resume a plan or task: target, reasoning_ref, newest notes and trace.
    ///
    /// Example:
    ///   moss reason export -w myproject target=TASK-001 max_chars:=4000
    Export => branchmind::BranchmindExport,
    /// Entries in to's view that are not in from's.
    ///
    /// Example:
    ///   moss reason diff -w myproject from=main to=what-if
    Diff => branchmind::BranchmindDiff,
    /// Copy from's notes that into lacks into into (idempotent).
    ///
    /// Example:
    ///   moss reason merge -w myproject from=what-if into=main dry_run:=true
    Merge => branchmind::BranchmindMerge,
    /// Create a branch from another (no copy: base_branch + base_seq).
    ///
    /// Example:
    ///   moss reason branch-create -w myproject name=what-if from=main
    BranchCreate => branchmind::BranchmindBranchCreate,
    /// List the branches, newest first.
    ///
    /// Example:
    ///   moss reason branch-list -w myproject
    BranchList => branchmind::BranchmindBranchList,
    /// Set the workspace's current branch.
    ///
    /// Example:
    ///   moss reason checkout -w myproject ref=what-if
    Checkout => branchmind::BranchmindCheckout,
    /// Apply graph operations atomically.
    ///
    /// Example:
    ///   moss reason graph-apply -w myproject branch=main doc=graph \
    ///     ops:='[{"op":"node_upsert","id":"h1","type":"hypothesis","title":"Cold cache"}]'
    GraphApply => branchmind::BranchmindGraphApply,
    /// Query the effective graph (filters: ids, types, status, tags_any, tags_all, text).
    ///
    /// Example:
    ///   moss reason graph-query -w myproject target=TASK-001 types:='["step"]'
    GraphQuery => branchmind::BranchmindGraphQuery,
    /// Check that every edge's endpoints are live nodes.
    ///
    /// Example:
    ///   moss reason graph-validate -w myproject target=TASK-001
    GraphValidate => branchmind::BranchmindGraphValidate,
    /// Node and edge states of to's graph that differ from from's.
    ///
    /// Example:
    ///   moss reason graph-diff -w myproject from=main to=what-if
    GraphDiff => branchmind::BranchmindGraphDiff,
    /// 3-way merge of a branch's graph back into its base.
    ///
    /// Example:
    ///   moss reason graph-merge -w myproject from=what-if into=main
    GraphMerge => branchmind::BranchmindGraphMerge,
    /// List a merge destination's graph conflicts.
    ///
    /// Example:
    ///   moss reason graph-conflicts -w myproject into=main status=open
    GraphConflicts => branchmind::BranchmindGraphConflicts,
    /// Show one conflict: base, theirs, ours.
    ///
    /// Example:
    ///   moss reason graph-conflict-show -w myproject conflict_id=CONFLICT-1a2b3c4d5e6f7a8b
    GraphConflictShow => branchmind::BranchmindGraphConflictShow,
    /// Resolve a conflict: use_from or use_into.
    ///
    /// Example:
    ///   moss reason graph-conflict-resolve -w myproject conflict_id=CONFLICT-1a2b3c4d5e6f7a8b resolution=use_from
    GraphConflictResolve => branchmind::BranchmindGraphConflictResolve,
    /// The skeleton of a card type.
    ///
    /// Example:
    ///   moss reason think-template -w myproject type=hypothesis
    ThinkTemplate => branchmind::BranchmindThinkTemplate,
    /// Write a thinking card: a trace entry and a graph node, in one transaction.
    ///
    /// Examples:
    ///   moss reason think-card -w myproject target=TASK-001 \
    ///     card:='{"id":"h1","type":"hypothesis","title":"The cache is cold"}'
    ///   printf 'id: q1\ntype: question\ntitle: Why is p99 up?\n' | moss reason think-card -w myproject card=@-
    ThinkCard => branchmind::BranchmindThinkCard,
    /// The newest cards and counts by type.
    ///
    /// Example:
    ///   moss reason think-context -w myproject target=TASK-001 limit_cards:=10
    ThinkContext => branchmind::BranchmindThinkContext,
    /// The one card to write next.
    ///
    /// Example:
    ///   moss reason think-next -w myproject target=TASK-001
    ThinkNext => branchmind::BranchmindThinkNext,
    /// Full-text search over notes, trace and cards.
    ///
    /// Example:
    ///   moss reason search -w myproject query="wal checkpoint"
    Search => branchmind::BranchmindSearch,
]);

ops!(
    /// Plans and tasks (`tasks_*`).
    TasksCommand, workspace_required: true, [
    /// Create a plan, or a task under a plan (parent=PLAN-###).
    ///
    /// Examples:
    ///   moss tasks create -w myproject title="Ship v2"
    ///   moss tasks create -w myproject title="Migrate" parent=PLAN-001 steps:='[{"title":"Write it"}]'
    Create => tasks::TasksCreate,
    /// Add steps, at the top level or under parent=PATH (e.g. s:0).
    ///
    /// Example:
    ///   moss tasks decompose -w myproject task=TASK-001 steps:='[{"title":"Backfill","success_criteria":["no gaps"]}]'
    Decompose => tasks::TasksDecompose,
    /// Change a step: title, success_criteria, tests, blockers.
    ///
    /// Example:
    ///   moss tasks define -w myproject task=TASK-001 path=s:0 tests:='["cargo test"]'
    Define => tasks::TasksDefine,
    /// Record progress on a step (also a note in the task's notes).
    ///
    /// Example:
    ///   moss tasks note -w myproject task=TASK-001 step_id=STEP-0001 note="passes on CI"
    Note => tasks::TasksNote,
    /// Confirm a step's checkpoints.
    ///
    /// Example:
    ///   moss tasks verify -w myproject task=TASK-001 path=s:0 checkpoints:='{"criteria":{"confirmed":true},"tests":{"confirmed":true}}'
    Verify => tasks::TasksVerify,
    /// Close a step (both checkpoints must be confirmed).
    ///
    /// Example:
    ///   moss tasks done -w myproject task=TASK-001 path=s:0
    Done => tasks::TasksDone,
    /// Change a plan's or task's title, description, contract.
    ///
    /// Example:
    ///   moss tasks edit -w myproject task=PLAN-001 description="Q3 goal" expected_revision:=2
    Edit => tasks::TasksEdit,
    /// The workspace's plans and tasks, newest first.
    ///
    /// Example:
    ///   moss tasks context -w myproject limit:=20
    Context => tasks::TasksContext,
    /// Task events after since, oldest first.
    ///
    /// Example:
    ///   moss tasks delta -w myproject since=evt_0000000000000042
    Delta => tasks::TasksDelta,
    /// The focused plan or task.
    ///
    /// Example:
    ///   moss tasks focus-get -w myproject
    FocusGet => tasks::TasksFocusGet,
    /// Focus a plan or task.
    ///
    /// Example:
    ///   moss tasks focus-set -w myproject task=TASK-001
    FocusSet => tasks::TasksFocusSet,
    /// Clear the focus.
    ///
    /// Example:
    ///   moss tasks focus-clear -w myproject
    FocusClear => tasks::TasksFocusClear,
    /// One screen: now, why, verify, next, blockers, and the reasoning_ref.
    ///
    /// Example:
    ///   moss tasks radar -w myproject task=TASK-001
    Radar => tasks::TasksRadar,
]);

ops!(
    /// The associative memory (`memory_*`).
    MemCommand, workspace_required: false, [
    /// Store a piece of knowledge (the same content, contexts and slot again updates it).
    ///
    /// Examples:
    ///   moss mem store -w myproject content="User prefers tabs" context=formatting slot=preferences
    ///   moss mem store -w myproject content="Last edit broke tests" context:='["auth.py","tests/"]' weight:=0.8
    Store => memory::MemoryStore,
    /// Recall memories by query, slot or context, best first.
    ///
    /// Examples:
    ///   moss mem recall -w myproject query="about auth.py"
    ///   moss mem recall -w myproject slot=preferences explain:=true
    Recall => memory::MemoryRecall,
    /// Remove memories by id(s), query, slot or context (dry_run:=true to look first).
    ///
    /// Examples:
    ///   moss mem forget -w myproject id=01J9Z8…
    ///   moss mem forget -w myproject slot=scratch dry_run:=true
    Forget => memory::MemoryForget,
    /// Render a template from slots, recalls and variables.
    ///
    /// Example:
    ///   moss mem render -w myproject template:='["<system>\n",{"slot":"system"},"</system>\n",{"recall":"about auth.py"}]'
    Render => memory::MemoryRender,
    /// The Lua sources (home and project) and how their last run went.
    ///
    /// The project is the one the working directory is in (the nearest directory up with a
    /// `.moss/` or `.git`), unless root= names another.
    ///
    /// Example:
    ///   moss mem sources
    Sources => memory::MemorySources,
    /// Run the Lua sources again (all, or name=git.lua), for the working directory's project
    /// unless root= names another.
    ///
    /// Examples:
    ///   moss mem sources-run
    ///   moss mem sources-run root=/path/to/project name=git.lua
    SourcesRun => memory::MemorySourcesRun,
    /// Send an event to the handlers of the working directory's project (or root=…).
    ///
    /// Example:
    ///   moss mem event event=file_opened data:='{"file":"src/auth.py"}' session=editor-1
    Event => memory::MemoryEvent,
]);

/// The line under a subcommand's help naming the tool it sends and its route, so that
/// `moss tools` and the tool's description can be found from it.
fn sends<O: Op>() -> String {
    let spec = O::SPEC;
    format!(
        "Sends the tool {} ({} {}); its fields are the tool's (moss tools).",
        spec.tool,
        spec.method.as_str(),
        spec.path
    )
}

/// Sends the request; a field given more than once becomes a list where the route's request
/// takes one (`context=a context=b`), and is refused naming it elsewhere. The memory operations
/// on a project's sources get the working directory's project as `root` unless it is given.
async fn send(client: &Client, spec: OpSpec, draft: Draft, format: Format) -> anyhow::Result<()> {
    let path = spec.path;
    let Draft { mut body, repeated } = draft;
    if !repeated.is_empty() {
        let doc = client.openapi().await.with_context(|| {
            format!(
                "{} is given more than once; to tell whether it takes a list, moss reads the \
                 daemon's GET /openapi.json, which failed",
                repeated[0].0
            )
        })?;
        let lists = crate::fields::list_fields(&doc, path).unwrap_or_default();
        crate::fields::merge(&mut body, repeated, &format!("POST {path}"), &lists)?;
    }
    if PROJECT_OPS.contains(&spec.tool)
        && !body.contains_key("root")
        && let Some(root) = project_root()
    {
        body.insert("root".into(), Value::String(root.display().to_string()));
    }
    let resp: Value = client.post(path, &Value::Object(body)).await?;
    print(&resp, format)
}

/// The memory operations on a project's Lua sources: without `root=`, they act on the project
/// the working directory is in.
const PROJECT_OPS: [&str; 3] = [
    memory::MemorySources::SPEC.tool,
    memory::MemorySourcesRun::SPEC.tool,
    memory::MemoryEvent::SPEC.tool,
];

/// The project the working directory is in: the nearest directory up from it that holds a
/// `.moss/` (other than the Moss home itself) or a `.git`; else the working directory.
fn project_root() -> Option<std::path::PathBuf> {
    let cwd = std::env::current_dir().ok()?.canonicalize().ok()?;
    let home = crate::connect::moss_home().and_then(|h| h.canonicalize().ok());
    let found = cwd.ancestors().find(|dir| {
        let moss = dir.join(".moss");
        (moss.is_dir() && home.as_deref() != moss.canonicalize().ok().as_deref())
            || dir.join(".git").exists()
    });
    Some(found.unwrap_or(&cwd).to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(fields: &[&str], json: Option<&str>) -> OpArgs {
        OpArgs {
            workspace: Some("w".into()),
            fields: fields.iter().map(|s| s.to_string()).collect(),
            json: json.map(str::to_string),
        }
    }

    #[test]
    fn fields_become_a_request() {
        let r = request(
            args(
                &["content=a=b", "limit:=5", "ops:=[1]", "flag:=true"],
                Some(r#"{"limit": 1, "x": "y"}"#),
            ),
            true,
        )
        .unwrap();
        assert_eq!(
            Value::Object(r.body),
            serde_json::json!({"workspace": "w", "content": "a=b", "limit": 5, "ops": [1], "flag": true, "x": "y"})
        );
        assert!(r.repeated.is_empty());
        let twice = request(
            args(
                &["context=a", "slot=s", "context:=[\"b\"]"],
                Some(r#"{"context": "j"}"#),
            ),
            true,
        )
        .unwrap();
        assert_eq!(
            Value::Object(twice.body),
            serde_json::json!({"workspace": "w", "slot": "s"})
        );
        assert_eq!(
            twice.repeated,
            [(
                "context".to_string(),
                vec![serde_json::json!("a"), serde_json::json!(["b"])]
            )]
        );
        assert!(request(args(&["nokey"], None), true).is_err());
        assert!(request(args(&["n:=notjson"], None), true).is_err());
        let none = || OpArgs {
            workspace: None,
            fields: vec![],
            json: None,
        };
        assert!(request(none(), true).is_err());
        assert!(
            request(none(), false).is_ok(),
            "memories default to the default workspace"
        );
    }
}
