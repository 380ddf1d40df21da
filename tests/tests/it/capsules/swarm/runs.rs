//! Run id lists, run purge and stats by phase and role.

use std::collections::BTreeSet;

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use super::ok;
use crate::util::{expect_error, message, store};

#[tokio::test]
async fn run_id_lists_filter_every_listing_and_bulk_operation() {
    let d = TestDaemon::start().await;
    for (name, run) in [("a", "r1"), ("b", "r2"), ("c", "r3"), ("d", "r1")] {
        store(
            &d,
            json!({"workspace": "m", "name": name, "run_id": run, "capsule_text": capsule_text(&format!("needle {name}"))}),
        )
        .await;
    }
    let names = |r: &Value| -> BTreeSet<String> {
        r["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    // Query strings: comma-separated.
    let (_, r) = d
        .call("GET", "/capsules?workspace=m&run_id=r1,r2", None)
        .await;
    assert_eq!(names(&r), set(&["a", "b", "d"]));
    let (_, r) = d
        .call("GET", "/capsules/inventory?run_id=r3,%20r2", None)
        .await;
    assert_eq!(names(&r), set(&["b", "c"]));
    let (_, r) = d
        .call("GET", "/capsules/search?query=needle&run_id=r3,r1", None)
        .await;
    assert_eq!(names(&r), set(&["a", "c", "d"]));
    // JSON bodies: a list.
    let r = ok(
        &d,
        "POST",
        "/capsules/bulk-update",
        json!({"run_id": ["r2", "r3"], "set_phase": "done"}),
    )
    .await;
    assert_eq!(r["updated"], 2, "{r}");
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool(
            "capsule_list",
            json!({"workspace": "m", "run_id": ["r2", "r3"]}),
        )
        .await;
    assert_eq!(names(&r["structuredContent"]), set(&["b", "c"]));
    let r = mcp
        .call_tool("capsule_bulk_delete", json!({"run_id": ["r1"]}))
        .await;
    assert_eq!(r["structuredContent"]["deleted"], 2, "{r}");
    // Too many run ids; a comma inside a stored run id.
    let many: Vec<String> = (0..51).map(|i| format!("r{i}")).collect();
    let (s, e) = d
        .call(
            "POST",
            "/capsules/bulk-delete",
            Some(json!({"run_id": many})),
        )
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "run_id"
    );
    let (s, e) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"run_id": "a,b", "capsule_text": capsule_text("x")})),
        )
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "run_id"
    );
    d.stop().await;
}

#[tokio::test]
async fn a_run_purge_needs_confirm_and_removes_active_and_deleted_capsules_of_the_run_only() {
    let d = TestDaemon::start().await;
    let mut ids = Vec::new();
    for (i, run) in ["done", "done", "done", "keep"].iter().enumerate() {
        ids.push(
            store(
                &d,
                json!({"workspace": "p", "name": format!("c{i}"), "run_id": run, "capsule_text": capsule_text("x")}),
            )
            .await,
        );
    }
    ok(&d, "DELETE", &format!("/capsules/{}", ids[0]), Value::Null).await;
    let (s, e) = d
        .call("POST", "/capsules/purge", Some(json!({"run_id": "done"})))
        .await;
    let e = expect_error(s, &e, "INVALID_REQUEST", 400);
    assert_eq!(
        (
            e["details"]["field"].as_str(),
            e["details"]["would_purge"].as_i64(),
            e["details"]["active"].as_i64()
        ),
        (Some("confirm"), Some(3), Some(2)),
        "{e}"
    );
    assert!(message(&e).contains("would delete 3 capsules"), "{e}");
    for id in &ids {
        assert!(
            d.fetch_any(id).await.is_some(),
            "nothing purged without confirm"
        );
    }
    let (s, e) = d
        .call(
            "POST",
            "/capsules/purge",
            Some(json!({"run_id": "done", "confirm": true, "older_than_days": 1})),
        )
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "older_than_days"
    );
    let r = ok(
        &d,
        "POST",
        "/capsules/purge",
        json!({"run_id": "done", "confirm": true}),
    )
    .await;
    assert_eq!(r["purged"], 3, "{r}");
    for id in &ids[..3] {
        assert!(d.fetch_any(id).await.is_none());
    }
    assert!(d.fetch_any(&ids[3]).await.is_some());
    d.stop().await;
}

#[tokio::test]
async fn stats_count_active_and_deleted_capsules_by_phase_and_role() {
    let d = TestDaemon::start().await;
    let mut ids = Vec::new();
    for (phase, role, run) in [
        (Some("research"), Some("a"), "r1"),
        (Some("research"), None, "r1"),
        (Some("review"), Some("a"), "r2"),
        (None, Some("b"), "r2"),
    ] {
        let mut body = json!({"workspace": "s", "run_id": run, "capsule_text": capsule_text("x")});
        if let Some(p) = phase {
            body["phase"] = json!(p);
        }
        if let Some(r) = role {
            body["role"] = json!(r);
        }
        ids.push(store(&d, body).await);
    }
    store(
        &d,
        json!({"workspace": "elsewhere", "capsule_text": capsule_text("y")}),
    )
    .await;
    ok(&d, "DELETE", &format!("/capsules/{}", ids[3]), Value::Null).await;
    let (s, r) = d.call("GET", "/capsules/stats?workspace=s", None).await;
    assert_eq!(s, 200, "{r}");
    let chars = capsule_text("x").chars().count() as i64;
    assert_eq!(r["capsule_count"], 3, "{r}");
    assert_eq!(r["deleted_count"], 1);
    assert_eq!(r["total_chars"], 3 * chars);
    assert_eq!(r["by_phase"], json!({"research": 2, "review": 1}));
    assert_eq!(r["by_role"], json!({"": 1, "a": 2}));
    let oldest = r["oldest"].as_str().unwrap();
    assert!(oldest.ends_with('Z') && oldest.len() == 20, "{oldest}");
    let (_, r) = d.call("GET", "/capsules/stats?run_id=r2", None).await;
    assert_eq!(
        (r["capsule_count"].as_i64(), r["deleted_count"].as_i64()),
        (Some(1), Some(1))
    );
    let (_, r) = d.call("GET", "/capsules/stats", None).await;
    assert_eq!(r["capsule_count"], 4);
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool("capsule_stats", json!({"workspace": "nothing-here"}))
        .await;
    assert_eq!(
        r["structuredContent"],
        json!({"capsule_count": 0, "total_chars": 0, "by_phase": {}, "by_role": {}, "deleted_count": 0})
    );
    d.stop().await;
}
