//! Every tool of the registry (`moss_daemon::family::FAMILIES`) on every face: served over MCP,
//! documented in the OpenAPI document, and a subcommand of the `moss` binary. It lives with the
//! CLI's tests because only they can run the real `moss`; the daemon is the in-process one.
//!
//! The CLI's rule: a family's tool `<prefix>_<verb_words>` is the subcommand
//! `moss [<group>] <verb-words>`, where the capsule family's verbs sit at the top level and each
//! other family has its group ([`cli_group`]).

use std::collections::{BTreeSet, HashSet};
use std::process::Command;

use moss_daemon::family::FAMILIES;
use moss_tests::TestDaemon;
use serde_json::Value;

/// The CLI group a family's subcommands sit under: `Some(None)` for the top level, `None` when
/// the family has no entry here yet.
fn cli_group(family: &str) -> Option<Option<&'static str>> {
    match family {
        "capsule" => Some(None),
        "reasoning" => Some(Some("reason")),
        "tasks" => Some(Some("tasks")),
        "memory" => Some(Some("mem")),
        "moss" => Some(None),
        _ => None,
    }
}

/// The subcommand path the CLI's rule gives `tool` of `family`, e.g. `branchmind_think_card`
/// of `reasoning` → `reason think-card`.
fn cli_path(family: &str, tool: &str) -> Option<String> {
    let group = cli_group(family)?;
    let (_, verb) = tool.split_once('_')?;
    // `moss search` is the capsule search, so the search over every family is `moss find`.
    let verb = match tool {
        "moss_search" => "find".to_string(),
        _ => verb.replace('_', "-"),
    };
    Some(match group {
        Some(g) => format!("{g} {verb}"),
        None => verb,
    })
}

/// `moss <path> --help`'s subcommand names (the `Commands:` section, `help` left out).
fn subcommands_of(path: &str) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_moss"))
        .args(path.split_whitespace())
        .arg("--help")
        .env("MOSS_NO_AUTOSTART", "1")
        .env("NO_COLOR", "1")
        .output()
        .expect("moss runs");
    assert!(
        out.status.success(),
        "moss {path} --help: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let help = String::from_utf8(out.stdout).expect("help is UTF-8");
    help.lines()
        .skip_while(|l| l.trim_end() != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        // A command's line is indented two spaces; a wrapped description, more.
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

/// Every command path of the `moss` binary (`"fetch"`, `"reason think-card"`, …), walking the
/// clap tree through `--help`, one level's commands in parallel.
fn cli_paths() -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    let mut level: Vec<String> = subcommands_of("");
    while !level.is_empty() {
        all.extend(level.iter().cloned());
        level = std::thread::scope(|s| {
            let children: Vec<_> = level
                .iter()
                .map(|path| {
                    s.spawn(move || {
                        subcommands_of(path)
                            .into_iter()
                            .map(|c| format!("{path} {c}"))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            children
                .into_iter()
                .flat_map(|c| c.join().expect("the walk's thread"))
                .collect()
        });
    }
    all
}

/// What `tool` lacks in the client: an entry in one of moss-client's op tables, which is what
/// gives the client handle its method (a generated one, or a hand-written one the table checks
/// at build time).
fn client_method_gaps(tool: &str) -> Vec<String> {
    let tables = [
        moss_client::capsule::OPS,
        moss_client::reasoning::OPS,
        moss_client::tasks::OPS,
        moss_client::memory::OPS,
        moss_client::moss::OPS,
    ];
    match tables
        .iter()
        .flat_map(|t| t.iter())
        .find(|op| op.tool == tool)
    {
        Some(op) if !op.client_method.is_empty() => Vec::new(),
        _ => vec![format!(
            "{tool}: no entry in a moss-client op table, so no client method"
        )],
    }
}

/// The operations `/openapi.json` documents, by `operationId`.
fn documented_operations(openapi: &Value) -> HashSet<String> {
    openapi["paths"]
        .as_object()
        .expect("paths")
        .values()
        .flat_map(|methods| methods.as_object().expect("a path's methods").values())
        .filter_map(|op| op["operationId"].as_str())
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_is_served_documented_and_a_subcommand() {
    let d = TestDaemon::start().await;
    let served: HashSet<String> = d
        .mcp()
        .await
        .list_tools()
        .await
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let (status, openapi) = d.call("GET", "/openapi.json", None).await;
    assert_eq!(status, 200, "{openapi}");
    let documented = documented_operations(&openapi);
    let commands = tokio::task::spawn_blocking(cli_paths).await.unwrap();

    let mut gaps = Vec::new();
    let mut walked = 0;
    for family in FAMILIES {
        for tool in family.tools {
            walked += 1;
            let name = tool.name;
            if !served.contains(name) {
                gaps.push(format!("{name}: not served over MCP (tools/list of /mcp)"));
            }
            // A tool served by several routes (by id, by name) documents each one as
            // `<tool>_by_<key>`.
            let by = format!("{name}_by_");
            if !documented
                .iter()
                .any(|op| op == name || op.starts_with(&by))
            {
                gaps.push(format!(
                    "{name}: no documented REST operation in /openapi.json (operationId \
                     \"{name}\" or \"{by}…\")"
                ));
            }
            match cli_path(family.name, name) {
                Some(path) if commands.contains(&path) => {}
                Some(path) => gaps.push(format!("{name}: no CLI subcommand `moss {path}`")),
                None => gaps.push(format!(
                    "{name}: the {} family has no CLI group in this test's `cli_group`",
                    family.name
                )),
            }
            gaps.extend(client_method_gaps(name));
        }
    }
    assert!(walked > 0, "the registry lists no tools");
    assert!(
        gaps.is_empty(),
        "tools missing a face:\n{}",
        gaps.join("\n")
    );
}

/// The other way round: every subcommand of a family's group is one of its tools, so the CLI
/// holds no route to an operation the daemon does not serve.
#[test]
fn every_subcommand_of_a_family_group_is_a_tool() {
    let mut strays = Vec::new();
    for family in FAMILIES {
        let Some(Some(group)) = cli_group(family.name) else {
            continue;
        };
        let tools: HashSet<String> = family
            .tools
            .iter()
            .filter_map(|t| cli_path(family.name, t.name))
            .collect();
        for sub in subcommands_of(group) {
            let path = format!("{group} {sub}");
            if !tools.contains(&path) {
                strays.push(format!(
                    "`moss {path}` is no tool of the {} family",
                    family.name
                ));
            }
        }
    }
    assert!(strays.is_empty(), "{}", strays.join("\n"));
}
