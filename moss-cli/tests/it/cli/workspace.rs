//! Where a verb's workspace comes from, and a handoff resumed across workspaces.

use moss_tests::{TestDaemon, capsule_text};

use super::{json, listed, moss, moss_in, moss_run, moss_with_env, stderr};

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
