//! What `moss` prints: tables for people, and a stdout its reader closed early.

use std::process::{Command, Stdio};

use moss_tests::{TestDaemon, capsule_text};

use crate::cli::{json, moss, moss_with_env, stderr};

/// A zone two hours east of UTC, as a POSIX TZ string (no time zone database needed).
const TZ: (&str, &str) = ("TZ", "XST-2");

/// `--format table` for an answer of each family: nested objects as `key: value` lines, lists
/// of objects as tables, times in the local zone; never JSON in a cell, never unix seconds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_of_every_family_show_nested_fields_and_local_times() {
    let d = TestDaemon::start().await;
    let text = capsule_text("tables");
    json(
        &moss(
            &d,
            &["store", "--name", "auth", "--workspace", "p"],
            Some(&text),
        )
        .await,
    );
    let capsule = json(&moss(&d, &["fetch", "--name", "auth", "--workspace", "p"], None).await);
    json(
        &moss(
            &d,
            &["tasks", "create", "-w", "shop", "title=Checkout"],
            None,
        )
        .await,
    );
    let task = json(
        &moss(
            &d,
            &[
                "tasks",
                "create",
                "-w",
                "shop",
                "title=Payment API",
                "parent=PLAN-001",
                r#"steps:=[{"title":"Define the interface","success_criteria":["covers refunds"]}]"#,
            ],
            None,
        )
        .await,
    );
    json(
        &moss(
            &d,
            &[
                "mem",
                "store",
                "content=Last edit broke tests",
                "context=auth.py",
            ],
            None,
        )
        .await,
    );

    let calls: [&[&str]; 5] = [
        &["fetch", "--name", "auth", "--workspace", "p"],
        &["tasks", "radar", "-w", "shop", "task=TASK-001"],
        &[
            "reason",
            "show",
            "-w",
            "shop",
            "target=TASK-001",
            "doc_kind=trace",
        ],
        &["mem", "recall", "query=auth.py", "explain:=true"],
        &["stats"],
    ];
    let unix_times = [
        capsule["created_at"].to_string(),
        task["event"]["ts"].to_string(),
        task["event"]["ts_ms"].to_string(),
    ];
    for args in calls {
        let mut args = args.to_vec();
        args.extend(["--format", "table"]);
        let out = moss_with_env(&d, &args, None, &[TZ]).await;
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let table = String::from_utf8_lossy(&out.stdout);
        for raw in ["{\"", "\":", "[{"] {
            assert!(!table.contains(raw), "{args:?}: JSON ({raw}) in\n{table}");
        }
        for t in &unix_times {
            assert!(
                !table.contains(t.as_str()),
                "{args:?}: unix time {t} in\n{table}"
            );
        }
        assert!(
            table.contains("+02:00"),
            "{args:?}: no local time in\n{table}"
        );
    }
    let radar = moss_with_env(
        &d,
        &[
            "tasks",
            "radar",
            "-w",
            "shop",
            "task=TASK-001",
            "--format",
            "table",
        ],
        None,
        &[TZ],
    )
    .await;
    let radar = String::from_utf8_lossy(&radar.stdout);
    assert!(radar.contains("branch: task/TASK-001"), "{radar}");
}

/// An empty read of a workspace that holds nothing says so in a table too, for every family.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_of_an_empty_workspace_carry_the_hint() {
    let d = TestDaemon::start().await;
    let calls: [&[&str]; 4] = [
        &["list", "-w", "nothing-here"],
        &["latest", "-w", "nothing-here"],
        &["tasks", "context", "-w", "nothing-here"],
        &["mem", "recall", "-w", "nothing-here", "query=tabs"],
    ];
    for args in calls {
        let mut args = args.to_vec();
        args.extend(["--format", "table"]);
        let out = moss(&d, &args, None).await;
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let table = String::from_utf8_lossy(&out.stdout);
        assert!(table.contains("moss_workspaces"), "{args:?}:\n{table}");
    }
}

/// `moss … | head`: a reader that closes stdout early ends the command quietly, exit 0, instead
/// of a panic (exit 101) on the closed pipe.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_ends_the_command_quietly() {
    let d = TestDaemon::start().await;
    for args in [
        &["tools"][..],
        &["completions", "bash"],
        &["tools", "--format", "table"],
        &["inventory"],
    ] {
        let (addr, home) = (d.daemon.addr.to_string(), d.home_path().to_path_buf());
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let out = tokio::task::spawn_blocking(move || {
            let mut child = Command::new(env!("CARGO_BIN_EXE_moss"))
                .args(&args)
                .env("MOSS_ADDR", addr)
                .env("MOSS_HOME", home)
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // The reader is gone before the first line is written, as `head` after its lines.
            drop(child.stdout.take());
            (args, child.wait_with_output().unwrap())
        })
        .await
        .unwrap();
        let (args, out) = out;
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
    }
}
