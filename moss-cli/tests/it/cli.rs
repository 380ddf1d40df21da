//! The `moss` binary as a black box against a real daemon started in-process.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use moss_tests::{TestDaemon, capsule_text};
use serde_json::Value;

/// Runs `moss args…` against `d` with `stdin` piped in.
pub(crate) async fn moss(d: &TestDaemon, args: &[&str], stdin: Option<&str>) -> Output {
    moss_run(d, None, args, stdin, &[]).await
}

/// [`moss`] with more environment variables.
pub(crate) async fn moss_with_env(
    d: &TestDaemon,
    args: &[&str],
    stdin: Option<&str>,
    env: &[(&str, &str)],
) -> Output {
    moss_run(d, None, args, stdin, env).await
}

/// [`moss`] in the working directory `cwd`.
async fn moss_in(
    d: &TestDaemon,
    cwd: Option<&std::path::Path>,
    args: &[&str],
    stdin: Option<&str>,
) -> Output {
    moss_run(d, cwd, args, stdin, &[]).await
}

/// [`moss`] in `cwd` (when given) with more environment variables.
async fn moss_run(
    d: &TestDaemon,
    cwd: Option<&std::path::Path>,
    args: &[&str],
    stdin: Option<&str>,
    env: &[(&str, &str)],
) -> Output {
    let addr = d.daemon.addr.to_string();
    let home = d.home_path().to_path_buf();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let stdin = stdin.map(str::to_string);
    let cwd = cwd.map(std::path::Path::to_path_buf);
    tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_moss"));
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        let mut child = cmd
            .args(&args)
            .env("MOSS_ADDR", addr)
            .env("MOSS_HOME", home)
            .env_remove("MOSS_TOKEN")
            .env_remove("MOSS_WORKSPACE")
            .envs(env)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("moss runs");
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

pub(crate) fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "moss failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_fetch_update_delete_round_trip() {
    let d = TestDaemon::start().await;
    let text = capsule_text("cli round trip");
    let stored = json(
        &moss(
            &d,
            &[
                "store",
                "--name",
                "auth",
                "--workspace",
                "Proj",
                "--tags",
                "a,b",
            ],
            Some(&text),
        )
        .await,
    );
    let id = stored["id"].as_str().unwrap().to_string();
    assert_eq!(stored["fetch_key"]["moss_capsule"], "auth");
    assert_eq!(stored["fetch_key"]["moss_workspace"], "Proj");

    let by_name = json(
        &moss(
            &d,
            &["fetch", "--workspace", "proj", "--name", "AUTH"],
            None,
        )
        .await,
    );
    assert_eq!(by_name["capsule_text"], text.as_str());
    assert_eq!(by_name["tags"], serde_json::json!(["a", "b"]));
    assert_eq!(by_name["source"], "cli");

    let by_id = json(&moss(&d, &["fetch", &id, "--no-text"], None).await);
    assert_eq!(by_id["id"], id.as_str());
    assert!(by_id.get("capsule_text").is_none());

    let updated = json(
        &moss(
            &d,
            &["update", &id, "--title", "New title", "--phase", "review"],
            None,
        )
        .await,
    );
    assert_eq!(updated["id"], id.as_str());
    let after = json(&moss(&d, &["fetch", &id], None).await);
    assert_eq!(after["title"], "New title");
    assert_eq!(after["phase"], "review");
    assert_eq!(
        after["capsule_text"],
        text.as_str(),
        "no stdin leaves the text alone"
    );

    let new_text = capsule_text("updated from stdin");
    json(
        &moss(
            &d,
            &["update", "--workspace", "proj", "--name", "auth"],
            Some(&new_text),
        )
        .await,
    );
    let after = json(&moss(&d, &["fetch", &id], None).await);
    assert_eq!(after["capsule_text"], new_text.as_str());

    let deleted = json(
        &moss(
            &d,
            &["delete", "--workspace", "proj", "--name", "auth"],
            None,
        )
        .await,
    );
    assert_eq!(deleted, serde_json::json!({"deleted": true, "id": id}));
    let gone = moss(&d, &["fetch", &id], None).await;
    assert_eq!(gone.status.code(), Some(1));
    assert!(
        stderr(&gone).starts_with("[NOT_FOUND] "),
        "{}",
        stderr(&gone)
    );
    let kept = json(&moss(&d, &["fetch", &id, "--include-deleted"], None).await);
    assert!(kept["deleted_at"].is_i64());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_one_line_with_the_code_and_exit_1() {
    let d = TestDaemon::start().await;
    let out = moss(
        &d,
        &["store", "--name", "thin"],
        Some("## Objective\nonly this\n"),
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with("[CAPSULE_TOO_THIN] capsule missing required sections: [Current status"),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    let out = moss(&d, &["store", "--name", "x"], None).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("stdin"), "{}", stderr(&out));

    let out = moss(
        &d,
        &["fetch", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--name", "x"],
        None,
    )
    .await;
    assert!(
        stderr(&out).starts_with("[AMBIGUOUS_ADDRESSING]"),
        "{}",
        stderr(&out)
    );

    let text = capsule_text("dup");
    json(&moss(&d, &["store", "--name", "dup"], Some(&text)).await);
    let out = moss(&d, &["store", "--name", "dup"], Some(&text)).await;
    assert!(
        stderr(&out).starts_with("[NAME_ALREADY_EXISTS]"),
        "{}",
        stderr(&out)
    );
    json(
        &moss(
            &d,
            &["store", "--name", "dup", "--mode", "replace"],
            Some(&text),
        )
        .await,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browse_commands_filter_and_render_tables() {
    let d = TestDaemon::start().await;
    for (name, run) in [("a1", "run-1"), ("a2", "run-1"), ("b1", "run-2")] {
        json(
            &moss(
                &d,
                &[
                    "store",
                    "--name",
                    name,
                    "--workspace",
                    "w",
                    "--run-id",
                    run,
                    "--phase",
                    "p",
                    "--role",
                    "r",
                ],
                Some(&capsule_text(name)),
            )
            .await,
        );
    }
    let list = json(&moss(&d, &["list", "--workspace", "w", "--run-id", "run-1"], None).await);
    assert_eq!(list["pagination"]["total"], 2);
    assert_eq!(list["sort"], "updated_at_desc");
    assert_eq!(list["items"][0]["name"], "a2", "newest first");

    let inv = json(
        &moss(
            &d,
            &["inventory", "--name-prefix", "a", "--limit", "1"],
            None,
        )
        .await,
    );
    assert_eq!(inv["items"].as_array().unwrap().len(), 1);
    assert_eq!(inv["pagination"]["has_more"], true);

    let latest = json(
        &moss(
            &d,
            &[
                "latest",
                "--workspace",
                "w",
                "--include-text",
                "--run-id",
                "run-2",
            ],
            None,
        )
        .await,
    );
    assert_eq!(latest["item"]["name"], "b1");
    assert!(
        latest["item"]["capsule_text"]
            .as_str()
            .unwrap()
            .contains("b1")
    );

    let many = json(
        &moss(
            &d,
            &[
                "fetch-many",
                "--workspace",
                "w",
                "--name",
                "a1",
                "--name",
                "nope",
                "--no-text",
            ],
            None,
        )
        .await,
    );
    assert_eq!(many["items"].as_array().unwrap().len(), 1);
    assert_eq!(many["errors"][0]["code"], "NOT_FOUND");

    let table = moss(&d, &["list", "--workspace", "w", "--format", "table"], None).await;
    assert!(table.status.success());
    let t = String::from_utf8_lossy(&table.stdout);
    assert!(
        t.contains("a1") && t.contains("b1") && t.contains("3 of 3"),
        "{t}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_daemon_is_reported_with_what_to_do() {
    let d = TestDaemon::start().await;
    let home = d.home_path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_moss"))
            .args(["list"])
            .env("MOSS_ADDR", "127.0.0.1:9")
            .env("MOSS_HOME", home)
            .env("MOSS_NO_AUTOSTART", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with("[UNAVAILABLE]")
            && err.contains("MOSS_NO_AUTOSTART")
            && err.contains("moss daemon start")
            && err.contains("mossd --addr 127.0.0.1:9"),
        "{err}"
    );
}

#[test]
fn a_malformed_address_is_named_with_the_fix() {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_moss"))
        .args(["--addr", "127.0.0.1:78210", "list"])
        .env("MOSS_HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with("[INVALID_REQUEST] invalid daemon address \"127.0.0.1:78210\"")
            && err.contains("invalid port"),
        "{err}"
    );
    assert!(
        !home.path().join("mossd.log").exists(),
        "no daemon is started for an address that cannot be used"
    );
}

#[test]
fn every_subcommand_has_help_with_examples() {
    for sub in [
        "store",
        "fetch",
        "fetch-many",
        "update",
        "delete",
        "latest",
        "list",
        "inventory",
        "export",
        "import",
        "bench",
        "watch",
        "stats",
        "purge",
        "append",
        "compose",
        "restore",
        "lineage",
        "clone",
        "versions",
        "diff",
        "new",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_moss"))
            .args([sub, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{sub}");
        assert!(
            help.contains("Examples:") && help.contains("moss "),
            "{sub} help has no examples:\n{help}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_reports_figures_as_json() {
    let d = TestDaemon::start().await;
    let out = moss(
        &d,
        &[
            "bench",
            "--against-running",
            "--clients",
            "4",
            "--duration",
            "0.3",
            "--size",
            "1024",
            "--json",
        ],
        None,
    )
    .await;
    let r = json(&out);
    for op in ["store", "fetch", "health"] {
        assert!(r[op]["ops"].as_u64().unwrap() > 0, "{op}: {r}");
        assert_eq!(r[op]["errors"], 0, "{op}: {r}");
        assert!(r[op]["p99_ms"].as_f64().unwrap() >= r[op]["p50_ms"].as_f64().unwrap());
    }
    assert!(r["store_health_ratio"].as_f64().unwrap() > 0.0);
    // The fetch phase started only once the full-text index held every stored capsule.
    assert!(r["index_catch_up_s"].as_f64().unwrap() >= 0.0, "{r}");
    let status = json(&moss(&d, &["daemon", "status"], None).await);
    assert_eq!(status["index_behind"], 0, "{status}");
    assert!(
        r.get("append").is_none(),
        "no append phase unless asked: {r}"
    );
}

/// `--search --cross-family` seeds every family and times moss_search and moss_context; the
/// context task it reads holds its 200 steps, notes, handoffs and memories.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_times_search_and_context_across_families() {
    let d = TestDaemon::start().await;
    let args = [
        "bench",
        "--against-running",
        "--search",
        "--cross-family",
        "--items",
        "480",
        "--clients",
        "2",
        "--duration",
        "0.3",
        "--size",
        "512",
        "--workspace",
        "bench-cross",
        "--json",
    ];
    let r = json(&moss(&d, &args, None).await);
    assert_eq!(r["items"], 480, "{r}");
    for op in ["search_rare", "search_common", "context"] {
        assert!(r[op]["ops"].as_u64().unwrap() > 0, "{op}: {r}");
        assert_eq!(r[op]["errors"], 0, "{op}: {r}");
        assert!(r[op]["p95_ms"].as_f64().unwrap() >= r[op]["p50_ms"].as_f64().unwrap());
    }
    let counts = &r["counts"];
    // 20 handoffs and a quarter of the 108 other items.
    assert_eq!(counts["capsules"], 20 + 27, "{r}");
    assert_eq!(counts["memories"], 100 + 27, "{r}");
    assert!(counts["tasks"].as_u64().unwrap() >= 3, "{r}");
    assert!(counts["reasoning"].as_u64().unwrap() >= 50 + 27, "{r}");
    let shape = &r["context_shape"];
    assert_eq!(shape["steps_total"], 200, "{r}");
    for section in ["handoffs", "notes", "memories"] {
        assert!(shape[section].as_u64().unwrap() > 0, "{section}: {r}");
    }
    // What it wrote is there to read: the context task's handoffs carry its id.
    let task = r["context_task"].as_str().unwrap();
    let found = json(&moss(&d, &["find", "rare7", "-w", "bench-cross"], None).await);
    let families: std::collections::BTreeSet<&str> = found["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["family"].as_str().unwrap())
        .collect();
    assert_eq!(families.len(), 4, "a rare word in every family: {found}");
    let args = [
        "bench",
        "--against-running",
        "--search",
        "--cross-family",
        "--items",
        "10",
    ];
    let too_few = moss(&d, &args, None).await;
    assert!(!too_few.status.success());
    let too_few = stderr(&too_few);
    assert!(too_few.contains("--items 10 is too few"), "{too_few}");
    assert!(task.starts_with("TASK-"), "{r}");
}

/// `moss bench` wrote thousands of capsules into the user's store: it measures a daemon of its
/// own, and the store, its counts and its home are as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_leaves_the_store_as_it_found_it() {
    crate::lifecycle::mossd();
    let d = TestDaemon::start().await;
    json(
        &moss(
            &d,
            &["store", "--name", "mine"],
            Some(&capsule_text("mine")),
        )
        .await,
    );
    let entries = || {
        let mut names: Vec<String> = std::fs::read_dir(d.home_path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let (stats, inventory, files) = (
        json(&moss(&d, &["stats"], None).await),
        json(&moss(&d, &["inventory"], None).await),
        entries(),
    );
    let args = [
        "bench",
        "--clients",
        "2",
        "--duration",
        "0.2",
        "--size",
        "512",
        "--json",
    ];
    let report = json(&moss(&d, &args, None).await);
    assert!(report["store"]["ops"].as_u64().unwrap() > 0, "{report}");
    assert_ne!(report["addr"], d.daemon.addr.to_string(), "{report}");
    assert_eq!(json(&moss(&d, &["stats"], None).await), stats);
    assert_eq!(json(&moss(&d, &["inventory"], None).await), inventory);
    assert_eq!(entries(), files, "the scratch home is deleted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_times_appends_to_the_capsules_it_stored() {
    let d = TestDaemon::start().await;
    let args = [
        "bench",
        "--against-running",
        "--append",
        "--replace",
        "2",
        "--clients",
        "2",
        "--duration",
        "0.3",
        "--size",
        "1024",
        "--workspace",
        "bench-append",
        "--json",
    ];
    let r = json(&moss(&d, &args, None).await);
    assert!(r["append"]["ops"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["append"]["errors"], 0, "{r}");
    let fetched = json(
        &moss(
            &d,
            &["fetch", "--workspace", "bench-append", "--name", "c0-0"],
            None,
        )
        .await,
    );
    let text = fetched["capsule_text"].as_str().unwrap();
    assert!(text.contains("- appended note 0"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_compose_append_bulk_and_purge() {
    let d = TestDaemon::start().await;
    for name in ["sec", "perf"] {
        let text = capsule_text(&format!("{name} review of the redis cache"));
        json(
            &moss(
                &d,
                &[
                    "store",
                    "--name",
                    name,
                    "--workspace",
                    "pr",
                    "--run-id",
                    "r1",
                ],
                Some(&text),
            )
            .await,
        );
    }

    let hits = json(&moss(&d, &["search", "redis", "--workspace", "pr"], None).await);
    assert_eq!(hits["pagination"]["total"], 2, "{hits}");
    assert!(
        hits["items"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("<b>redis</b>")
    );
    let table = moss(&d, &["search", "redis", "--format", "table"], None).await;
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("snippet") && table.contains("score"),
        "{table}"
    );
    let bad = moss(&d, &["search", "\"open"], None).await;
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).starts_with("[INVALID_REQUEST]") && stderr(&bad).contains("--safe"),
        "{}",
        stderr(&bad)
    );
    let safe = json(&moss(&d, &["search", "\"redis", "--safe"], None).await);
    assert_eq!(safe["pagination"]["total"], 2, "{safe}");

    let bundle = json(
        &moss(
            &d,
            &[
                "compose",
                "--workspace",
                "pr",
                "--name",
                "sec",
                "--name",
                "perf",
                "--sections",
                "Objective",
                "--store-as",
                "both",
            ],
            None,
        )
        .await,
    );
    assert_eq!(bundle["parts_count"], 2);
    assert!(
        bundle["bundle_text"]
            .as_str()
            .unwrap()
            .starts_with("## sec\n\n## Objective")
    );
    assert!(bundle["stored"]["id"].is_string());

    let appended = json(
        &moss(
            &d,
            &[
                "append",
                "--workspace",
                "pr",
                "--name",
                "sec",
                "--section",
                "Decisions",
            ],
            Some("- use a TTL of 5 minutes\n"),
        )
        .await,
    );
    assert_eq!(appended["section_hit"], "## Decisions");
    assert_eq!(appended["replaced"], true, "the body was `none yet`");

    let updated = json(
        &moss(
            &d,
            &["bulk-update", "--run-id", "r1", "--set-phase", "archived"],
            None,
        )
        .await,
    );
    assert_eq!(updated["updated"], 2);
    let refused = moss(&d, &["bulk-delete"], None).await;
    assert!(stderr(&refused).starts_with("[INVALID_REQUEST]"));
    let deleted = json(&moss(&d, &["bulk-delete", "--phase", "archived"], None).await);
    assert_eq!(deleted["deleted"], 2);
    let purged = json(&moss(&d, &["purge", "--workspace", "pr"], None).await);
    assert_eq!(purged["purged"], 2);

    let tools = json(&moss(&d, &["tools"], None).await);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"capsule_search") && names.contains(&"capsule_append"));
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_and_import_round_trip_through_the_cli() {
    let d = TestDaemon::start().await;
    for name in ["a", "b"] {
        json(
            &moss(
                &d,
                &["store", "--workspace", "ws", "--name", name],
                Some(&capsule_text(name)),
            )
            .await,
        );
    }
    let out = moss(
        &d,
        &["export", "--workspace", "ws", "--path", "cli.jsonl"],
        None,
    )
    .await;
    assert!(
        stderr(&out).is_empty(),
        "no progress line when stderr is not a terminal: {}",
        stderr(&out)
    );
    let exported = json(&out);
    assert_eq!(exported["count"], 2);
    let file = d.home_path().join("exports").join("cli.jsonl");
    assert_eq!(exported["path"], file.display().to_string());
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 3);

    // Default mode is error: the capsules exist, nothing is imported.
    let refused = moss(&d, &["import", "--path", "cli.jsonl"], None).await;
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).starts_with("[CONFLICT]"),
        "{}",
        stderr(&refused)
    );
    let renamed = json(
        &moss(
            &d,
            &["import", "--path", "cli.jsonl", "--mode", "rename"],
            None,
        )
        .await,
    );
    assert_eq!(
        (&renamed["imported"], &renamed["renamed"]),
        (&2.into(), &2.into())
    );
    let replaced = json(
        &moss(
            &d,
            &["import", "--path", "cli.jsonl", "--mode", "replace"],
            None,
        )
        .await,
    );
    assert_eq!(replaced["replaced"], 2);

    let bad = moss(&d, &["export", "--path", "../out.jsonl"], None).await;
    assert!(!bad.status.success());
    let err = stderr(&bad);
    assert!(
        err.starts_with("[INVALID_REQUEST]") && err.contains(".."),
        "{err}"
    );
    let bad = moss(
        &d,
        &["import", "--path", "cli.jsonl", "--mode", "merge"],
        None,
    )
    .await;
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("replace"), "clap lists the modes");
    d.stop().await;
}

/// `moss tasks` and `moss reason`: a plan, a task, a note from stdin, the trace, a card in the
/// DSL from stdin, and an error naming the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reason_and_tasks_groups_walk_a_task() {
    let d = TestDaemon::start().await;
    let plan = json(&moss(&d, &["tasks", "create", "-w", "cli", "title=Ship v2"], None).await);
    assert_eq!(plan["item"]["id"], "PLAN-001");
    let task = json(
        &moss(
            &d,
            &[
                "tasks",
                "create",
                "-w",
                "cli",
                "title=Migrate",
                "parent=PLAN-001",
                r#"steps:=[{"title":"Write it"}]"#,
            ],
            None,
        )
        .await,
    );
    assert_eq!(task["reasoning_ref"]["branch"], "task/TASK-001");
    let note = json(
        &moss(
            &d,
            &[
                "reason",
                "notes-commit",
                "-w",
                "cli",
                "target=TASK-001",
                "content=@-",
            ],
            Some("Chose WAL:\nreaders never block\n"),
        )
        .await,
    );
    assert_eq!(
        note["entry"]["content"],
        "Chose WAL:\nreaders never block\n"
    );
    // Word forms match, and safe_query takes the query as plain words.
    let found = json(
        &moss(
            &d,
            &[
                "reason",
                "search",
                "-w",
                "cli",
                "query=\"reader blocks",
                "safe_query:=true",
            ],
            None,
        )
        .await,
    );
    assert_eq!(found["hits"].as_array().map(Vec::len), Some(1), "{found}");
    let score = found["hits"][0]["score"].as_f64().unwrap();
    assert!(score > 0.0 && score < 1.0, "{found}");
    let bad = moss(
        &d,
        &["reason", "search", "-w", "cli", "query=\"reader"],
        None,
    )
    .await;
    assert!(
        !bad.status.success() && stderr(&bad).contains("safe_query:=true"),
        "{}",
        stderr(&bad)
    );
    let trace = json(
        &moss(
            &d,
            &[
                "reason",
                "show",
                "-w",
                "cli",
                "target=TASK-001",
                "doc_kind=trace",
                "limit:=1",
            ],
            None,
        )
        .await,
    );
    assert_eq!(trace["entries"][0]["event_type"], "task_created");
    let card = json(
        &moss(
            &d,
            &[
                "reason",
                "think-card",
                "-w",
                "cli",
                "target=TASK-001",
                "card=@-",
            ],
            Some("id: q1\ntype: question\ntitle: Why is p99 up?\n"),
        )
        .await,
    );
    assert_eq!(
        (card["inserted"].as_bool(), card["graph_doc"].as_str()),
        (Some(true), Some("TASK-001-graph"))
    );
    let radar = json(&moss(&d, &["tasks", "radar", "-w", "cli", "task=TASK-001"], None).await);
    assert_eq!(radar["steps"]["open"], 1);
    let out = moss(
        &d,
        &["tasks", "done", "-w", "cli", "task=TASK-001", "path=s:0"],
        None,
    )
    .await;
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("[CHECKPOINTS_UNCONFIRMED]"),
        "{}",
        stderr(&out)
    );
    let out = moss(&d, &["reason", "show", "-w", "cli", "limt:=3"], None).await;
    assert!(stderr(&out).contains("limt"), "{}", stderr(&out));
    let out = moss(&d, &["reason", "show", "limit:=3"], None).await;
    assert!(
        stderr(&out).contains("workspace is required"),
        "{}",
        stderr(&out)
    );
    d.stop().await;
}

/// The README's what-if walk-through, as written: a branch made from a task's branch, a note
/// and a card there (naming the task with `target`), diff, merge back, and the merged card in
/// the task's graph. A card that names no document is refused with the call that works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reason_what_if_walk_through_merges_back_into_the_task() {
    let d = TestDaemon::start().await;
    let run = |args: &'static [&'static str], stdin: Option<&'static str>| moss(&d, args, stdin);
    json(
        &run(
            &["tasks", "create", "-w", "shop", "title=Checkout v2"],
            None,
        )
        .await,
    );
    json(
        &run(
            &[
                "tasks",
                "create",
                "-w",
                "shop",
                "title=Payment API",
                "parent=PLAN-001",
            ],
            None,
        )
        .await,
    );
    let b = json(
        &run(
            &[
                "reason",
                "branch-create",
                "-w",
                "shop",
                "name=try-paypal",
                "from=task/TASK-001",
            ],
            None,
        )
        .await,
    );
    assert_eq!(b["branch"]["base_branch"], "task/TASK-001");

    let refused = run(
        &[
            "reason",
            "think-card",
            "-w",
            "shop",
            "branch=try-paypal",
            "card=@-",
        ],
        Some("id: h-paypal\ntype: hypothesis\ntitle: PayPal fees are lower\n"),
    )
    .await;
    assert!(!refused.status.success());
    let err = stderr(&refused);
    assert!(
        err.starts_with("[INVALID_REQUEST]")
            && err.contains(r#""target":"TASK-001""#)
            && err.contains(r#""branch":"try-paypal""#),
        "{err}"
    );

    let card = json(
        &run(
            &[
                "reason",
                "think-card",
                "-w",
                "shop",
                "target=TASK-001",
                "branch=try-paypal",
                "card=@-",
            ],
            Some("id: h-paypal\ntype: hypothesis\ntitle: PayPal fees are lower\n"),
        )
        .await,
    );
    assert_eq!(
        (card["branch"].as_str(), card["graph_doc"].as_str()),
        (Some("try-paypal"), Some("TASK-001-graph"))
    );
    json(
        &run(
            &[
                "reason",
                "notes-commit",
                "-w",
                "shop",
                "target=TASK-001",
                "branch=try-paypal",
                "content=PayPal: 1.9% against 2.9%",
            ],
            None,
        )
        .await,
    );
    let diff = json(
        &run(
            &[
                "reason",
                "diff",
                "-w",
                "shop",
                "from=task/TASK-001",
                "to=try-paypal",
            ],
            None,
        )
        .await,
    );
    assert_eq!(diff["entries"][0]["content"], "PayPal: 1.9% against 2.9%");
    let gdiff = json(
        &run(
            &[
                "reason",
                "graph-diff",
                "-w",
                "shop",
                "from=task/TASK-001",
                "to=try-paypal",
                "doc=TASK-001-graph",
            ],
            None,
        )
        .await,
    );
    assert_eq!(gdiff["changes"][0]["id"], "h-paypal");
    let merged = json(
        &run(
            &[
                "reason",
                "merge",
                "-w",
                "shop",
                "from=try-paypal",
                "into=task/TASK-001",
            ],
            None,
        )
        .await,
    );
    assert_eq!(merged["merged"], 1);
    let gmerged = json(
        &run(
            &[
                "reason",
                "graph-merge",
                "-w",
                "shop",
                "from=try-paypal",
                "into=task/TASK-001",
                "doc=TASK-001-graph",
            ],
            None,
        )
        .await,
    );
    assert_eq!(
        (
            gmerged["merged"].as_i64(),
            gmerged["conflicts_created"].as_i64()
        ),
        (Some(1), Some(0))
    );

    let graph = json(
        &run(
            &[
                "reason",
                "graph-query",
                "-w",
                "shop",
                "target=TASK-001",
                "include_edges:=false",
            ],
            None,
        )
        .await,
    );
    let card = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == "h-paypal")
        .cloned();
    assert_eq!(
        card.map(|n| n["title"].clone()),
        Some("PayPal fees are lower".into())
    );
    let notes = json(&run(&["reason", "show", "-w", "shop", "target=TASK-001"], None).await);
    assert_eq!(notes["entries"][0]["content"], "PayPal: 1.9% against 2.9%");
    d.stop().await;
}

/// `moss mem`: the documented examples, and a project source run from the working directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mem_group_stores_recalls_and_runs_sources() {
    let d = TestDaemon::start().await;
    let stored = json(
        &moss(
            &d,
            &[
                "mem",
                "store",
                "content=User prefers tabs",
                "context=formatting",
                "slot=preferences",
            ],
            None,
        )
        .await,
    );
    assert_eq!(stored["created"], true);
    json(
        &moss(
            &d,
            &[
                "mem",
                "store",
                "content=Last edit broke tests",
                "context=auth.py",
                "weight:=0.8",
            ],
            None,
        )
        .await,
    );
    let about = json(&moss(&d, &["mem", "recall", "query=about auth.py"], None).await);
    assert_eq!(about["items"][0]["content"], "Last edit broke tests");
    let prefs = json(&moss(&d, &["mem", "recall", "slot=preferences"], None).await);
    assert_eq!(prefs["items"][0]["content"], "User prefers tabs");
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".moss")).unwrap();
    std::fs::write(
        project.path().join(".moss/memory.toml"),
        "[[memory]]\ncontent = \"Be concise\"\nslot = \"system\"\n",
    )
    .unwrap();
    let root = format!("root={}", project.path().canonicalize().unwrap().display());
    let ran = json(&moss(&d, &["mem", "sources-run", &root, "name=toml.lua"], None).await);
    assert_eq!(
        (
            ran["sources"][0]["status"].as_str(),
            ran["sources"][0]["items"].as_i64()
        ),
        (Some("ok"), Some(1)),
        "{ran}"
    );
    let rendered = json(
        &moss(
            &d,
            &[
                "mem",
                "render",
                r#"template:=["<system>\n",{"slot":"system"},"</system>"]"#,
            ],
            None,
        )
        .await,
    );
    assert_eq!(rendered["text"], "<system>\n- Be concise\n</system>");
    let out = moss(&d, &["mem", "forget", "query=a"], None).await;
    assert!(
        stderr(&out).contains("[INVALID_REQUEST]"),
        "{}",
        stderr(&out)
    );
    d.stop().await;
}

/// Run inside a project (here, one of its subdirectories), `moss mem sources-run` and
/// `moss mem event` act on that project without `root=`; an event nothing handles says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mem_sources_and_events_act_on_the_working_directorys_project() {
    let d = TestDaemon::start().await;
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".moss/sources")).unwrap();
    std::fs::create_dir_all(project.path().join("src/deep")).unwrap();
    std::fs::write(
        project.path().join(".moss/sources/facts.lua"),
        "store('Deploys go through staging', {context = 'deploy'})\n",
    )
    .unwrap();
    let inside = project.path().join("src/deep");
    let ran = json(&moss_in(&d, Some(&inside), &["mem", "sources-run"], None).await);
    let facts = ran["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "facts.lua")
        .unwrap_or_else(|| panic!("the project's source did not run: {ran}"));
    assert_eq!(facts["status"], "ok", "{ran}");
    let event = [
        "mem",
        "event",
        "event=file_opened",
        r#"data:={"file":"src/auth.py"}"#,
        "session=editor-1",
    ];
    let e = json(&moss_in(&d, Some(&inside), &event, None).await);
    assert_eq!(
        (e["handled"].as_i64(), e["stored"].as_i64()),
        (Some(1), Some(1)),
        "{e}"
    );
    let nothing = json(
        &moss_in(
            &d,
            Some(&inside),
            &["mem", "event", "event=build_failed"],
            None,
        )
        .await,
    );
    assert_eq!(nothing["handled"], 0);
    assert!(
        nothing["reason"]
            .as_str()
            .unwrap()
            .contains("session.lua (file_opened)"),
        "{nothing}"
    );
    d.stop().await;
}

/// The swarm verbs: guarded multi-section append, a pivoted compose over a run filter, watch
/// with a cursor, stats, and a confirmed run purge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swarm_verbs_append_compose_watch_stats_and_purge_a_run() {
    let d = TestDaemon::start().await;
    let start = json(&moss(&d, &["watch", "--timeout-ms", "0"], None).await);
    assert_eq!(start["event"], "timeout");
    let cursor = start["cursor"].as_i64().unwrap().to_string();
    for (name, role) in [("sec", "security"), ("perf", "perf")] {
        json(
            &moss(
                &d,
                &[
                    "store",
                    "--name",
                    name,
                    "--workspace",
                    "pr",
                    "--run-id",
                    "r42",
                    "--role",
                    role,
                ],
                Some(&capsule_text(name)),
            )
            .await,
        );
    }
    let seen = json(&moss(&d, &["watch", "--run-id", "r42", "--since", &cursor], None).await);
    assert_eq!(
        (seen["event"].as_str(), seen["capsule"]["name"].as_str()),
        (Some("created"), Some("sec"))
    );

    let appended = json(
        &moss(
            &d,
            &[
                "append",
                "--workspace",
                "pr",
                "--name",
                "sec",
                "--if-revision",
                "1",
                "--add",
                "Decisions=- parameterize",
                "--add",
                "Current status=reviewing",
            ],
            None,
        )
        .await,
    );
    assert_eq!(appended["revision"], 2, "{appended}");
    let stale = moss(
        &d,
        &[
            "append",
            "--workspace",
            "pr",
            "--name",
            "sec",
            "--if-revision",
            "1",
            "--section",
            "Decisions",
            "--content",
            "x",
        ],
        None,
    )
    .await;
    assert!(!stale.status.success());
    assert!(stderr(&stale).contains("CONFLICT"), "{}", stderr(&stale));

    let bundle = json(
        &moss(
            &d,
            &[
                "compose",
                "--where",
                "run_id=r42",
                "--pivot",
                "section",
                "--sections",
                "Decisions",
                "--attribution",
            ],
            None,
        )
        .await,
    );
    // "none yet" was a placeholder: replaced in sec, and perf's is left out of the pivot.
    assert_eq!(
        bundle["bundle_text"],
        "## Decisions\n\n**sec** (security):\n- parameterize\n"
    );
    let stats = json(&moss(&d, &["stats", "--workspace", "pr"], None).await);
    assert_eq!(stats["capsule_count"], 2, "{stats}");
    assert_eq!(stats["by_role"]["security"], 1);

    let refused = moss(&d, &["purge", "--run-id", "r42"], None).await;
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("would delete 2 capsules"),
        "{}",
        stderr(&refused)
    );
    let purged = json(&moss(&d, &["purge", "--run-id", "r42", "--confirm"], None).await);
    assert_eq!(purged["purged"], 2);
    d.stop().await;
}

/// History verbs: lineage on store, clone, lineage both ways, restore with rename, safe search.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_verbs_clone_lineage_restore_and_safe_search() {
    let d = TestDaemon::start().await;
    let research = json(
        &moss(
            &d,
            &["store", "--name", "research", "--workspace", "h"],
            Some(&capsule_text("pr-123 notes")),
        )
        .await,
    );
    json(
        &moss(
            &d,
            &[
                "store",
                "--name",
                "plan",
                "--workspace",
                "h",
                "--based-on",
                "research",
            ],
            Some(&capsule_text("plan")),
        )
        .await,
    );
    let copy = json(
        &moss(
            &d,
            &[
                "clone",
                "--from-name",
                "plan",
                "--from-workspace",
                "h",
                "--name",
                "plan-v2",
                "--phase",
                "review",
            ],
            None,
        )
        .await,
    );
    assert_eq!(copy["revision"], 1);
    let lineage = json(&moss(&d, &["lineage", "--workspace", "h", "--name", "plan"], None).await);
    assert_eq!(lineage["based_on"][0]["capsule"]["id"], research["id"]);
    assert_eq!(lineage["derived"][0]["capsule"]["name"], "plan-v2");

    json(
        &moss(
            &d,
            &["delete", "--workspace", "h", "--name", "research"],
            None,
        )
        .await,
    );
    json(
        &moss(
            &d,
            &["store", "--name", "research", "--workspace", "h"],
            Some(&capsule_text("again")),
        )
        .await,
    );
    let taken = moss(&d, &["restore", research["id"].as_str().unwrap()], None).await;
    assert!(
        stderr(&taken).contains("NAME_ALREADY_EXISTS"),
        "{}",
        stderr(&taken)
    );
    let restored = json(
        &moss(
            &d,
            &[
                "restore",
                research["id"].as_str().unwrap(),
                "--mode",
                "rename",
            ],
            None,
        )
        .await,
    );
    assert_eq!(restored["name"], "research-1");

    let hits = json(
        &moss(
            &d,
            &[
                "search",
                "pr-123",
                "--safe",
                "--no-count",
                "--workspace",
                "h",
            ],
            None,
        )
        .await,
    );
    assert_eq!(hits["items"][0]["name"], "research-1", "{hits}");
    assert!(hits["pagination"].get("total").is_none());
    d.stop().await;
}

/// Versions and diff from the CLI: an update keeps the previous text, fetch --version reads it,
/// diff --lines shows the change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_fetch_version_and_diff() {
    let d = TestDaemon::start().await;
    json(
        &moss(
            &d,
            &["store", "--name", "auth", "--workspace", "v"],
            Some(&capsule_text("first")),
        )
        .await,
    );
    json(
        &moss(
            &d,
            &["update", "--name", "auth", "--workspace", "v"],
            Some(&capsule_text("second")),
        )
        .await,
    );
    let versions = json(
        &moss(
            &d,
            &["versions", "--name", "auth", "--workspace", "v"],
            None,
        )
        .await,
    );
    assert_eq!(versions["versions"][0]["revision"], 1, "{versions}");
    let before = json(
        &moss(
            &d,
            &[
                "fetch",
                "--name",
                "auth",
                "--workspace",
                "v",
                "--at-version",
                "-1",
            ],
            None,
        )
        .await,
    );
    assert!(before["capsule_text"].as_str().unwrap().contains("first"));
    let diff = json(
        &moss(
            &d,
            &[
                "diff",
                "--name",
                "auth",
                "--workspace",
                "v",
                "--at-version",
                "-1",
                "--to-name",
                "auth",
                "--lines",
            ],
            None,
        )
        .await,
    );
    assert_eq!(diff["sections"]["Objective"], "modified", "{diff}");
    assert!(
        diff["diffs"]["Objective"]
            .as_str()
            .unwrap()
            .contains("+second")
    );
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_flags_store_expand_and_clear() {
    let d = TestDaemon::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("evidence.json");
    std::fs::write(
        &file,
        r#"[{"type": "snippet", "ref": "src/a.rs:3", "content": "let a = 1;"}]"#,
    )
    .unwrap();
    let file = file.to_str().unwrap();
    json(
        &moss(
            &d,
            &[
                "store",
                "--name",
                "e",
                "--evidence",
                "transcript=run-7#12",
                "--evidence-file",
                file,
            ],
            Some(&capsule_text("evidence")),
        )
        .await,
    );
    let c = json(&moss(&d, &["fetch", "--name", "e"], None).await);
    assert_eq!(c["evidence"][0]["ref"], "run-7#12", "{c}");
    assert_eq!(c["evidence"][1]["chars"], 10, "{c}");
    assert!(c["evidence"][1].get("content").is_none(), "{c}");
    let c = json(&moss(&d, &["fetch", "--name", "e", "--expand-evidence"], None).await);
    assert_eq!(c["evidence"][1]["content"], "let a = 1;", "{c}");
    json(&moss(&d, &["update", "--name", "e", "--clear-evidence"], None).await);
    let c = json(&moss(&d, &["fetch", "--name", "e"], None).await);
    assert!(c.get("evidence").is_none(), "{c}");
    // A file holding [] clears too, as [] does over REST and MCP.
    json(
        &moss(
            &d,
            &["update", "--name", "e", "--evidence", "log=ci#1"],
            None,
        )
        .await,
    );
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "[]").unwrap();
    let empty = empty.to_str().unwrap();
    json(
        &moss(
            &d,
            &["update", "--name", "e", "--evidence-file", empty],
            None,
        )
        .await,
    );
    let c = json(&moss(&d, &["fetch", "--name", "e"], None).await);
    assert!(c.get("evidence").is_none(), "{c}");
    // A flag without `=` is named with the fix.
    let out = moss(
        &d,
        &["update", "--name", "e", "--evidence", "snippet"],
        None,
    )
    .await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("TYPE=REF"), "{}", stderr(&out));
    d.stop().await;
}

/// `moss new`: the editor gets the skeleton; a thin text is refused and the editor reopens with
/// the reason on top; the filled text is stored. The editor here is a script that answers each
/// round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_reopens_the_editor_until_the_capsule_is_stored() {
    let d = TestDaemon::start().await;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("editor.sh");
    let log = dir.path().join("rounds.log");
    let full = capsule_text("written in the editor");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nf=\"$1\"\ncat \"$f\" >> '{log}'\necho '=====' >> '{log}'\n\
             if grep -q 'CAPSULE_TOO_THIN' \"$f\"; then printf '%s' '{full}' > \"$f\"; \
             else printf '## Objective\\nonly this\\n' > \"$f\"; fi\n",
            log = log.display(),
            full = full.replace('\'', "")
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (addr, home) = (d.daemon.addr.to_string(), d.home_path().to_path_buf());
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_moss"))
            .args(["new", "--name", "edited", "--workspace", "n"])
            .env("MOSS_ADDR", addr)
            .env("MOSS_HOME", home)
            .env("EDITOR", &script)
            .env_remove("VISUAL")
            .env_remove("MOSS_TOKEN")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stored = json(&out);
    assert!(
        stderr(&out).contains("CAPSULE_TOO_THIN"),
        "{}",
        stderr(&out)
    );
    let rounds = std::fs::read_to_string(&log).unwrap();
    let rounds: Vec<&str> = rounds.split("=====\n").filter(|r| !r.is_empty()).collect();
    assert_eq!(rounds.len(), 2, "{rounds:?}");
    assert!(
        rounds[0].contains("## Open questions"),
        "the skeleton: {}",
        rounds[0]
    );
    assert!(
        rounds[1].starts_with("<!-- moss: not stored: [CAPSULE_TOO_THIN]"),
        "{}",
        rounds[1]
    );
    let fetched = json(&moss(&d, &["fetch", stored["id"].as_str().unwrap()], None).await);
    assert!(
        fetched["capsule_text"]
            .as_str()
            .unwrap()
            .contains("written in the editor")
    );
    d.stop().await;
}

/// `moss fetch --version -1` is the capsule's previous version (it printed the CLI's version and
/// exited 0), and `--content "- rotate keys?"` is content (clap took it for a flag).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_version_is_the_capsules_and_a_leading_hyphen_is_content() {
    let d = TestDaemon::start().await;
    let at = ["--workspace", "v", "--name", "auth"];
    json(
        &moss(
            &d,
            &[&["store"][..], &at].concat(),
            Some(&capsule_text("first")),
        )
        .await,
    );
    json(
        &moss(
            &d,
            &[&["update"][..], &at].concat(),
            Some(&capsule_text("second")),
        )
        .await,
    );

    let previous = json(
        &moss(
            &d,
            &[&["fetch"][..], &at, &["--version", "-1"]].concat(),
            None,
        )
        .await,
    );
    assert_eq!(previous["revision"], 1, "{previous}");
    assert!(previous["capsule_text"].as_str().unwrap().contains("first"));
    let diff = json(
        &moss(
            &d,
            &[
                &["diff"][..],
                &at,
                &["--version", "-1", "--to-name", "auth"],
            ]
            .concat(),
            None,
        )
        .await,
    );
    assert!(diff.get("sections").is_some(), "{diff}");
    let top = moss(&d, &["--version"], None).await;
    assert!(
        String::from_utf8_lossy(&top.stdout).starts_with("moss "),
        "moss --version is the CLI's"
    );

    let appended = moss(
        &d,
        &[
            &["append"][..],
            &at,
            &["--section", "Open questions", "--content", "- rotate keys?"],
        ]
        .concat(),
        None,
    )
    .await;
    json(&appended);
    let now = json(&moss(&d, &[&["fetch"][..], &at].concat(), None).await);
    assert!(
        now["capsule_text"]
            .as_str()
            .unwrap()
            .contains("- rotate keys?"),
        "{now}"
    );
}

/// `EDITOR=true moss new`: the skeleton saved as it was (six empty sections) stores nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_refuses_the_unedited_skeleton() {
    let d = TestDaemon::start().await;
    let out = moss_with_env(
        &d,
        &["new", "--name", "untouched", "--workspace", "n"],
        None,
        &[("EDITOR", "true"), ("VISUAL", "")],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("skeleton was saved as it was"),
        "{}",
        stderr(&out)
    );
    let listed = json(&moss(&d, &["list", "--workspace", "n"], None).await);
    assert_eq!(listed["items"], serde_json::json!([]), "{listed}");
}

/// `context=a context=b` is both contexts (the last one alone was kept); a field that takes
/// one value, given twice, is refused naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_field_is_a_list_where_the_request_takes_one() {
    let d = TestDaemon::start().await;
    let stored = json(
        &moss(
            &d,
            &[
                "mem",
                "store",
                "content=Rotate keys",
                "context=auth.py",
                "context=keys/",
                "tags=a",
                "tags:=[\"b\"]",
            ],
            None,
        )
        .await,
    );
    assert_eq!(
        stored["memory"]["contexts"],
        serde_json::json!(["auth.py", "keys/"]),
        "{stored}"
    );
    assert_eq!(
        stored["memory"]["tags"],
        serde_json::json!(["a", "b"]),
        "{stored}"
    );

    let twice = moss(&d, &["mem", "store", "content=a", "content=b"], None).await;
    assert_eq!(twice.status.code(), Some(1));
    assert!(
        stderr(&twice).starts_with(
            "[INVALID_REQUEST] content is given 2 times, but POST /memories takes one value"
        ),
        "{}",
        stderr(&twice)
    );
    let task = moss(
        &d,
        &["tasks", "create", "-w", "s", "title=a", "title=b"],
        None,
    )
    .await;
    assert!(
        stderr(&task).contains("title is given 2 times"),
        "{}",
        stderr(&task)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handoff_for_a_task_resumes_with_moss_context_find_and_workspaces() {
    let d = TestDaemon::start().await;
    moss(
        &d,
        &["tasks", "create", "-w", "shop", "title=Refund flow"],
        None,
    )
    .await;
    moss(
        &d,
        &[
            "tasks",
            "create",
            "-w",
            "shop",
            "title=Refunds",
            "parent=PLAN-001",
        ],
        None,
    )
    .await;
    let text = capsule_text("Refunds go through the payments queue");
    let stored = json(
        &moss(
            &d,
            &[
                "store",
                "--workspace",
                "shop",
                "--name",
                "handoff",
                "--task",
                "TASK-001",
            ],
            Some(&text),
        )
        .await,
    );
    assert!(stored["id"].is_string(), "{stored}");
    let listed = json(
        &moss(
            &d,
            &["list", "--workspace", "shop", "--task", "TASK-001"],
            None,
        )
        .await,
    );
    assert_eq!(listed["items"][0]["task"], "TASK-001", "{listed}");
    moss(
        &d,
        &[
            "mem",
            "store",
            "-w",
            "shop",
            "content=User prefers tabs",
            "context=TASK-001",
        ],
        None,
    )
    .await;
    let context = json(&moss(&d, &["context", "-w", "shop", "--task", "TASK-001"], None).await);
    assert_eq!(context["handoffs"][0]["title"], "handoff", "{context}");
    assert!(
        context["memories"].to_string().contains("tabs"),
        "{context}"
    );
    let radar = json(&moss(&d, &["tasks", "radar", "-w", "shop", "task=TASK-001"], None).await);
    assert_eq!(radar["handoffs"][0]["name"], "handoff", "{radar}");
    // One search over every family, with word forms: `tab` finds "tabs".
    let found = json(&moss(&d, &["find", "tab", "-w", "shop"], None).await);
    assert_eq!(found["items"][0]["family"], "memory", "{found}");
    let table = moss(&d, &["workspaces", "--format", "table"], None).await;
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("shop"), "{table}");
}

/// The names of a `moss list` answer.
fn listed(out: &Output) -> Vec<String> {
    let page = json(out);
    page["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {page}"))
        .iter()
        .map(|c| c["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Every group finds its workspace the same way: -w, else MOSS_WORKSPACE, else the nearest
/// `.moss/config.json`'s `workspace`, else the family's default; -v says which it used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workspace_comes_from_the_flag_the_environment_or_the_project() {
    let d = TestDaemon::start().await;
    let text = capsule_text("workspace rule");
    json(&moss(&d, &["store", "-w", "x", "--name", "a"], Some(&text)).await);
    assert_eq!(
        json(&moss(&d, &["fetch", "-w", "x", "--name", "a"], None).await)["name"],
        "a"
    );
    assert!(listed(&moss(&d, &["list"], None).await).is_empty());
    assert_eq!(listed(&moss(&d, &["list", "-w", "x"], None).await), ["a"]);
    let env = [("MOSS_WORKSPACE", "x")];
    let from_env = moss_with_env(&d, &["-v", "list"], None, &env).await;
    assert_eq!(listed(&from_env), ["a"]);
    assert!(
        stderr(&from_env).contains("workspace: x (from MOSS_WORKSPACE)"),
        "{}",
        stderr(&from_env)
    );
    let flag = moss_with_env(&d, &["list", "-w", "default", "--verbose"], None, &env).await;
    assert!(listed(&flag).is_empty());
    assert!(stderr(&flag).contains("workspace: default (from -w)"));
    let dflt = moss(&d, &["list", "-v"], None).await;
    assert!(stderr(&dflt).contains("workspace: default (default)"));

    let project = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".moss")).unwrap();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    let config = root.join(".moss/config.json");
    std::fs::write(&config, r#"{"workspace": "x"}"#).unwrap();
    let inside = root.join("src/deep");
    let found = moss_in(&d, Some(&inside), &["-v", "list"], None).await;
    assert_eq!(listed(&found), ["a"]);
    let said = format!("workspace: x (from {})", config.display());
    assert!(stderr(&found).contains(&said), "{}", stderr(&found));
    let task = json(&moss_in(&d, Some(&inside), &["tasks", "create", "title=T"], None).await);
    assert!(
        task.to_string().contains("TASK-") || task.to_string().contains("PLAN-"),
        "{task}"
    );
    let over = moss_run(
        &d,
        Some(&inside),
        &["-v", "list"],
        None,
        &[("MOSS_WORKSPACE", "y")],
    )
    .await;
    assert!(listed(&over).is_empty());
    assert!(stderr(&over).contains("(from MOSS_WORKSPACE)"));

    std::fs::write(&config, r#"{"workspace": 7}"#).unwrap();
    let bad = moss_in(&d, Some(&inside), &["list"], None).await;
    assert!(!bad.status.success());
    let e = stderr(&bad);
    assert!(
        e.contains(&config.display().to_string()) && e.contains("must be a non-empty string"),
        "{e}"
    );
    std::fs::write(&config, "{oops").unwrap();
    let e = stderr(&moss_in(&d, Some(&inside), &["tasks", "create", "title=U"], None).await);
    assert!(e.contains("config.json is not valid JSON"), "{e}");
    // -w needs no config, even a broken one.
    assert_eq!(
        listed(&moss_in(&d, Some(&inside), &["list", "-w", "x"], None).await),
        ["a"]
    );
    d.stop().await;
}
