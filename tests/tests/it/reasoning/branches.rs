//! Branches of branches: each sees its bases as of its cutoff, and merging notes copies each once.

use moss_tests::TestDaemon;
use serde_json::{Value, json};

use super::{branch, note, ok};

fn contents(v: &Value) -> Vec<String> {
    v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn a_branch_of_a_branch_sees_each_base_as_of_its_cutoff() {
    let d = TestDaemon::start().await;
    let ws = "views";
    ok(&d, "/reasoning/init", json!({"workspace": ws})).await;
    note(&d, ws, "main", "n1").await;
    let b1 = branch(&d, ws, "b1", "main").await;
    assert_eq!(b1["base_branch"], "main");
    note(&d, ws, "main", "n2").await;
    note(&d, ws, "b1", "b1a").await;
    branch(&d, ws, "b2", "b1").await;
    note(&d, ws, "b1", "b1b").await;
    note(&d, ws, "main", "n3").await;
    note(&d, ws, "b2", "b2a").await;

    let show = |b: &'static str| {
        ok(
            &d,
            "/reasoning/show",
            json!({"workspace": ws, "branch": b, "doc": "notes"}),
        )
    };
    assert_eq!(contents(&show("b2").await), ["b2a", "b1a", "n1"]);
    assert_eq!(contents(&show("b1").await), ["b1b", "b1a", "n1"]);
    assert_eq!(contents(&show("main").await), ["n3", "n2", "n1"]);

    // Directional diff: what `to` sees that `from` does not.
    let diff = |from: &str, to: &str| {
        ok(
            &d,
            "/reasoning/diff",
            json!({"workspace": ws, "from": from, "to": to}),
        )
    };
    assert_eq!(contents(&diff("main", "b2").await), ["b2a", "b1a"]);
    assert_eq!(contents(&diff("b2", "main").await), ["n3", "n2"]);
    assert_eq!(contents(&diff("b1", "b2").await), ["b2a"]);

    // Tail pagination: every entry once, newest first, with the same fields everywhere.
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let page = ok(
            &d,
            "/reasoning/show",
            json!({"doc": "notes", "workspace": ws, "branch": "b2", "limit": 1, "cursor": cursor}),
        )
        .await;
        assert_eq!(page["pagination"]["limit"], 1);
        assert_eq!(
            page["pagination"]["count"],
            page["entries"].as_array().unwrap().len()
        );
        seen.extend(contents(&page));
        if !page["pagination"]["has_more"].as_bool().unwrap() {
            assert!(page["pagination"]["next_cursor"].is_null());
            break;
        }
        cursor = page["pagination"]["next_cursor"].clone();
    }
    assert_eq!(seen, ["b2a", "b1a", "n1"]);

    // The log spans documents.
    ok(&d, "/reasoning/commit", json!({"workspace": ws, "branch": "b2", "doc": "decisions", "kind": "decision", "content": "d1"})).await;
    let log = ok(
        &d,
        "/reasoning/log",
        json!({"workspace": ws, "branch": "b2"}),
    )
    .await;
    assert_eq!(contents(&log), ["d1", "b2a", "b1a", "n1"]);
    let log = ok(
        &d,
        "/reasoning/log",
        json!({"workspace": ws, "branch": "b2", "kind": "decision"}),
    )
    .await;
    assert_eq!(contents(&log), ["d1"]);

    // Branch list: newest first, main last, the checkout marked.
    ok(
        &d,
        "/reasoning/checkout",
        json!({"workspace": ws, "ref": "b1"}),
    )
    .await;
    let list = ok(&d, "/reasoning/branch/list", json!({"workspace": ws})).await;
    let names: Vec<&str> = list["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b2", "b1", "main"]);
    assert_eq!(list["branches"][1]["current"], true);
    // With no branch, reads and writes use the checkout.
    ok(
        &d,
        "/reasoning/notes/commit",
        json!({"doc": "notes", "workspace": ws, "content": "on checkout"}),
    )
    .await;
    assert_eq!(
        contents(
            &ok(
                &d,
                "/reasoning/show",
                json!({"doc": "notes", "workspace": ws, "limit": 1})
            )
            .await
        ),
        ["on checkout"]
    );
    let status = ok(&d, "/reasoning/status", json!({"workspace": ws})).await;
    assert_eq!(
        (status["checkout"].as_str(), status["branches"].as_i64()),
        (Some("b1"), Some(3))
    );
    d.stop().await;
}

#[tokio::test]
async fn merging_notes_copies_each_once() {
    let d = TestDaemon::start().await;
    let ws = "merge";
    note(&d, ws, "main", "base").await;
    branch(&d, ws, "idea", "main").await;
    note(&d, ws, "idea", "i1").await;
    note(&d, ws, "idea", "i2").await;
    ok(&d, "/reasoning/commit", json!({"workspace": ws, "branch": "idea", "doc": "notes", "kind": "evidence", "content": "not a note"})).await;

    let dry = ok(
        &d,
        "/reasoning/merge",
        json!({"workspace": ws, "from": "idea", "into": "main", "dry_run": true}),
    )
    .await;
    assert_eq!(
        (dry["merged"].as_i64(), dry["dry_run"].as_bool()),
        (Some(2), Some(true))
    );
    let first = ok(
        &d,
        "/reasoning/merge",
        json!({"workspace": ws, "from": "idea", "into": "main"}),
    )
    .await;
    assert_eq!(
        (first["merged"].as_i64(), first["skipped"].as_i64()),
        (Some(2), Some(0))
    );
    let again = ok(
        &d,
        "/reasoning/merge",
        json!({"workspace": ws, "from": "idea", "into": "main"}),
    )
    .await;
    assert_eq!(
        (again["merged"].as_i64(), again["skipped"].as_i64()),
        (Some(0), Some(2))
    );

    let main = ok(
        &d,
        "/reasoning/show",
        json!({"doc": "notes", "workspace": ws, "branch": "main"}),
    )
    .await;
    assert_eq!(contents(&main), ["i2", "i1", "base"]);
    let keys: Vec<&str> = main["entries"].as_array().unwrap()[..2]
        .iter()
        .map(|e| e["source_event_id"].as_str().unwrap())
        .collect();
    assert!(
        keys.iter().all(|k| k.starts_with("merge:idea:")),
        "{keys:?}"
    );
    // Paged merge: one note per call still merges each once.
    branch(&d, ws, "idea2", "main").await;
    for c in ["a", "b", "c"] {
        note(&d, ws, "idea2", c).await;
    }
    let mut cursor = Value::Null;
    let mut merged = 0;
    loop {
        let m = ok(
            &d,
            "/reasoning/merge",
            json!({"workspace": ws, "from": "idea2", "into": "main", "limit": 1, "cursor": cursor}),
        )
        .await;
        merged += m["merged"].as_i64().unwrap();
        if !m["pagination"]["has_more"].as_bool().unwrap() {
            break;
        }
        cursor = m["pagination"]["next_cursor"].clone();
    }
    assert_eq!(merged, 3);
    d.stop().await;
}
