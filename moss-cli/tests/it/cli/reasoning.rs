//! `moss tasks` and `moss reason`: a task walked from plan to trace, and the README's what-if
//! walk-through.

use moss_tests::TestDaemon;

use super::{json, moss, stderr};

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
