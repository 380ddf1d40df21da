//! Output budgets: hard caps, clamped when too small, and paging under them that sees everything.

use moss_tests::TestDaemon;
use serde_json::{Value, json};

use super::{apply, chars, fails, note, ok};

/// A budget below the smallest answer a read can give is clamped to that answer, not refused.
#[tokio::test]
async fn a_tiny_budget_is_clamped_and_says_so() {
    let d = TestDaemon::start().await;
    let ws = "tiny";
    let t = ok(
        &d,
        "/reasoning/think/template",
        json!({"workspace": ws, "type": "hypothesis", "max_chars": 20}),
    )
    .await;
    assert_eq!(
        (t["type"].as_str(), t["truncated"].as_bool()),
        (Some("hypothesis"), Some(true))
    );
    let w = t["budget"]["warning"].as_str().unwrap();
    assert!(w.starts_with("clamped max_chars 20 to "), "{w}");
    assert_eq!(
        t["budget"]["used_chars"].as_u64().unwrap() as usize,
        chars(&t)
    );
    let v = ok(
        &d,
        "/reasoning/graph/validate",
        json!({"workspace": ws, "branch": "main", "doc": "graph", "max_chars": 250, "max_bytes": 1}),
    )
    .await;
    assert_eq!(
        (v["ok"].as_bool(), v["truncated"].as_bool()),
        (Some(true), Some(true)),
        "{v}"
    );
    let w = v["budget"]["warning"].as_str().unwrap();
    assert!(w.contains("max_bytes 1 to "), "{w}");
    // Below 1 is still no budget at all.
    let e = fails(
        &d,
        "/reasoning/think/template",
        json!({"workspace": ws, "type": "hypothesis", "max_chars": 0}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(e["details"]["field"], "max_chars");
    d.stop().await;
}

#[tokio::test]
async fn budgets_are_hard_caps_and_paging_under_them_sees_everything() {
    let d = TestDaemon::start().await;
    let ws = "budget";
    for i in 0..30 {
        let body = format!("note {i}: {}", "lorem ipsum dolor ".repeat(20 + i));
        note(&d, ws, "main", &body).await;
    }
    note(&d, ws, "main", &"é".repeat(3000)).await;
    let ops: Vec<Value> = (0..40).map(|i| json!({"op": "node_upsert", "id": format!("n{i}"), "type": "note", "title": "t", "text": "x".repeat(300)})).collect();
    apply(&d, ws, "main", Value::Array(ops.clone())).await;
    let edges: Vec<Value> = (1..40).map(|i| json!({"op": "edge_upsert", "from": format!("n{i}"), "rel": "next", "to": format!("n{}", i - 1)})).collect();
    apply(&d, ws, "main", Value::Array(edges)).await;

    for max in [600, 1000, 3000, 9000] {
        for (path, body) in [
            (
                "/reasoning/show",
                json!({"doc": "notes", "workspace": ws, "branch": "main", "limit": 200, "max_chars": max}),
            ),
            (
                "/reasoning/log",
                json!({"workspace": ws, "branch": "main", "limit": 200, "max_chars": max}),
            ),
            (
                "/reasoning/graph/query",
                json!({"workspace": ws, "branch": "main", "doc": "graph", "limit": 200, "max_chars": max}),
            ),
            (
                "/reasoning/branch/list",
                json!({"workspace": ws, "max_chars": max}),
            ),
            (
                "/reasoning/think/context",
                json!({"graph_doc": "graph", "workspace": ws, "max_chars": max}),
            ),
            (
                "/reasoning/search",
                json!({"workspace": ws, "query": "lorem", "limit": 50, "max_chars": max}),
            ),
        ] {
            // Measured on the body as sent: a float re-serialized may print differently.
            let raw = d
                .http()
                .post(d.url(path))
                .bearer_auth(&d.token)
                .json(&body)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            let v: Value = serde_json::from_str(&raw).unwrap();
            assert!(v.get("error").is_none(), "{path} at {max}: {raw}");
            let n = raw.chars().count();
            assert!(n <= max, "{path} at {max}: {n} chars");
            assert_eq!(
                v["budget"]["used_chars"].as_u64().unwrap() as usize,
                n,
                "{path}"
            );
            assert_eq!(v["budget"]["max_chars"], max);
        }
        let v = ok(
            &d,
            "/reasoning/show",
            json!({"doc": "notes", "workspace": ws, "branch": "main", "limit": 200, "max_bytes": max}),
        )
        .await;
        assert!(v.to_string().len() <= max, "max_bytes {max}");
    }
    // A budget that cannot hold one entry, even cut, is clamped to that entry with its text
    // cut as far as it goes: the answer says so, and a reader paging with it still moves on.
    let v = ok(
        &d,
        "/reasoning/show",
        json!({"workspace": ws, "branch": "main", "doc": "notes", "max_chars": 256}),
    )
    .await;
    let used = v["budget"]["used_chars"].as_i64().unwrap();
    assert!(used > 256 && used == chars(&v) as i64, "{v}");
    assert_eq!(
        (
            v["truncated"].as_bool(),
            v["entries"].as_array().unwrap().len()
        ),
        (Some(true), 1)
    );
    assert_eq!(v["entries"][0]["content"], "…");
    assert_eq!(
        v["budget"]["warning"],
        format!("clamped max_chars 256 to {used}: the smallest answer this read can give")
    );
    assert!(v["pagination"]["next_cursor"].is_i64(), "{v}");
    // Under a budget, the newest entry (3000 × é) is cut, not dropped, and pages move on.
    let first = ok(
        &d,
        "/reasoning/show",
        json!({"doc": "notes", "workspace": ws, "branch": "main", "max_chars": 500}),
    )
    .await;
    assert_eq!(
        (
            first["truncated"].as_bool(),
            first["entries"][0]["content_truncated"].as_bool()
        ),
        (Some(true), Some(true))
    );
    let (mut seen, mut cursor) = (0, Value::Null);
    loop {
        let page = ok(&d, "/reasoning/show", json!({"doc": "notes", "workspace": ws, "branch": "main", "limit": 10, "max_chars": 1500, "cursor": cursor})).await;
        assert!(chars(&page) <= 1500);
        seen += page["entries"].as_array().unwrap().len();
        if !page["pagination"]["has_more"].as_bool().unwrap() {
            break;
        }
        cursor = page["pagination"]["next_cursor"].clone();
    }
    assert_eq!(seen, 31);
    // Graph: edges go before nodes.
    let g = ok(
        &d,
        "/reasoning/graph/query",
        json!({"doc": "graph", "workspace": ws, "branch": "main", "limit": 10, "max_chars": 4000}),
    )
    .await;
    assert_eq!(g["truncated"], true);
    assert_eq!(g["edges"], json!([]), "edges dropped first");
    // The configured default applies when no max_chars is given.
    let d2 = TestDaemon::start_with_config(Some(json!({"output_max_chars": 2000}))).await;
    for i in 0..20 {
        note(&d2, ws, "main", &format!("{i} {}", "y".repeat(300))).await;
    }
    let v = ok(
        &d2,
        "/reasoning/show",
        json!({"doc": "notes", "workspace": ws, "limit": 200}),
    )
    .await;
    assert!(chars(&v) <= 2000 && v["truncated"] == true, "{}", chars(&v));
    // Lines.
    note(&d2, ws, "main", "a\nb\nc\nd\ne").await;
    let v = ok(
        &d2,
        "/reasoning/show",
        json!({"doc": "notes", "workspace": ws, "max_lines": 3}),
    )
    .await;
    assert!(v["budget"]["used_lines"].as_i64().unwrap() <= 3, "{v}");
    d2.stop().await;
    d.stop().await;
}
