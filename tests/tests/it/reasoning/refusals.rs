//! Refused calls say what to call instead: failed preconditions, and reads and writes that name
//! no document.

use moss_tests::TestDaemon;
use serde_json::json;

use super::{branch, fails, ok};

#[tokio::test]
async fn failed_preconditions_suggest_the_next_call() {
    let d = TestDaemon::start().await;
    let ws = "pre";
    let e = fails(
        &d,
        "/reasoning/show",
        json!({"doc": "notes", "workspace": ws, "branch": "nope"}),
        404,
        "NOT_FOUND",
    )
    .await;
    assert_eq!(
        e["details"]["suggested_call"]["tool"],
        "branchmind_branch_list"
    );
    let e = fails(
        &d,
        "/reasoning/notes/commit",
        json!({"workspace": ws, "target": "TASK-009", "content": "x"}),
        404,
        "NOT_FOUND",
    )
    .await;
    assert_eq!(
        e["details"]["suggested_call"],
        json!({"tool": "tasks_context", "arguments": {"workspace": ws}})
    );
    let e = fails(
        &d,
        "/reasoning/show",
        json!({"workspace": ws, "target": "BUG-1"}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(e["details"]["field"], "target");
    let e = fails(
        &d,
        "/reasoning/show",
        json!({"doc": "notes", "workspace": ""}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(e["details"]["field"], "workspace");
    let e = fails(
        &d,
        "/reasoning/show",
        json!({"doc": "notes", "workspace": ws, "max_chars": 0}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(e["details"]["field"], "max_chars");
    fails(
        &d,
        "/reasoning/checkout",
        json!({"workspace": ws, "ref": "ghost"}),
        404,
        "NOT_FOUND",
    )
    .await;
    branch(&d, ws, "dup", "main").await;
    fails(
        &d,
        "/reasoning/branch/create",
        json!({"workspace": ws, "name": "dup"}),
        409,
        "CONFLICT",
    )
    .await;
    fails(
        &d,
        "/reasoning/branch/create",
        json!({"workspace": ws, "name": "task/TASK-001"}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    let e = fails(
        &d,
        "/reasoning/show",
        json!({"doc": "notes", "workspace": ws, "limt": 3}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(e["details"]["field"], "limt");
    d.stop().await;
}

/// Reads and writes name their document (a target, or a doc): a call that names neither is
/// refused with the call that works, never written to a document picked for it.
#[tokio::test]
async fn a_call_that_names_no_document_is_refused_with_the_call_that_works() {
    let d = TestDaemon::start().await;
    let ws = "named";
    for (path, body, tool) in [
        (
            "/reasoning/notes/commit",
            json!({"workspace": ws, "content": "x"}),
            "branchmind_notes_commit",
        ),
        (
            "/reasoning/show",
            json!({"workspace": ws}),
            "branchmind_show",
        ),
        (
            "/reasoning/notes/commit",
            json!({"workspace": ws, "branch": "main", "content": "x"}),
            "branchmind_notes_commit",
        ),
    ] {
        let e = fails(&d, path, body, 400, "INVALID_REQUEST").await;
        let call = &e["details"]["suggested_call"];
        assert_eq!(call["tool"], tool, "{e}");
        assert_eq!(
            call["arguments"],
            json!({"workspace": ws, "branch": "main", "doc": "notes"})
        );
        let message = e["message"].as_str().unwrap();
        assert!(
            message.contains(&format!(
                r#"{tool} {{"branch":"main","doc":"notes","workspace":"named"}}"#
            )),
            "{message}"
        );
    }
    let e = fails(
        &d,
        "/reasoning/think/context",
        json!({"workspace": ws}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(
        e["details"]["suggested_call"]["arguments"]["graph_doc"],
        "graph"
    );
    // Nothing was written to main.
    let shown = ok(
        &d,
        "/reasoning/show",
        json!({"workspace": ws, "branch": "main", "doc": "notes"}),
    )
    .await;
    assert_eq!(shown["entries"], json!([]));

    // On a branch made from a task's branch, the call that works names the task.
    ok(
        &d,
        "/tasks/create",
        json!({"workspace": ws, "title": "Checkout"}),
    )
    .await;
    ok(
        &d,
        "/tasks/create",
        json!({"workspace": ws, "title": "Pay", "parent": "PLAN-001"}),
    )
    .await;
    branch(&d, ws, "try-paypal", "task/TASK-001").await;
    let card = json!({"id": "h1", "type": "hypothesis", "title": "PayPal is cheaper"});
    let e = fails(
        &d,
        "/reasoning/think/card",
        json!({"workspace": ws, "branch": "try-paypal", "card": card}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(
        e["details"]["suggested_call"],
        json!({"tool": "branchmind_think_card", "arguments": {"workspace": ws, "target": "TASK-001", "branch": "try-paypal"}})
    );
    let e = fails(
        &d,
        "/reasoning/graph/merge",
        json!({"workspace": ws, "from": "try-paypal", "into": "task/TASK-001"}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(e["details"]["field"], "doc");
    assert_eq!(
        e["details"]["suggested_call"]["arguments"]["doc"],
        "TASK-001-graph"
    );
    // The suggested calls work.
    let written = ok(
        &d,
        "/reasoning/think/card",
        json!({"workspace": ws, "target": "TASK-001", "branch": "try-paypal", "card": card}),
    )
    .await;
    assert_eq!(
        (written["branch"].as_str(), written["graph_doc"].as_str()),
        (Some("try-paypal"), Some("TASK-001-graph"))
    );
    let merged = ok(&d, "/reasoning/graph/merge", json!({"workspace": ws, "from": "try-paypal", "into": "task/TASK-001", "doc": "TASK-001-graph"})).await;
    assert_eq!(merged["merged"], 1);
    let q = ok(
        &d,
        "/reasoning/graph/query",
        json!({"workspace": ws, "target": "TASK-001", "ids": ["h1"]}),
    )
    .await;
    assert_eq!(q["nodes"][0]["title"], "PayPal is cheaper");
    d.stop().await;
}
