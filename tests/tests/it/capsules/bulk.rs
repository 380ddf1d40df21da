//! Operations over many capsules over REST and MCP: bulk delete, bulk update and purge.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use crate::util::expect_error;

/// `POST /capsules`, asserting success; returns the id.
async fn store(d: &TestDaemon, body: Value) -> String {
    let mut body = body;
    if body.get("capsule_text").is_none() {
        body["capsule_text"] = json!(capsule_text("bulk"));
    }
    let (status, resp) = d.call("POST", "/capsules", Some(body.clone())).await;
    assert_eq!(status, 200, "store {body}: {resp}");
    resp["id"].as_str().unwrap().to_string()
}

/// `POST /capsules/<op>` with `body`.
async fn post(d: &TestDaemon, op: &str, body: Value) -> (u16, Value) {
    d.call("POST", &format!("/capsules/{op}"), Some(body)).await
}

/// A call that must succeed.
async fn post_ok(d: &TestDaemon, op: &str, body: Value) -> Value {
    let (status, resp) = post(d, op, body.clone()).await;
    assert_eq!(status, 200, "{op} {body}: {resp}");
    resp
}

async fn is_active(d: &TestDaemon, id: &str) -> bool {
    let (s, _) = d.call("GET", &format!("/capsules/{id}"), None).await;
    s == 200
}

async fn delete(d: &TestDaemon, id: &str) {
    let (s, b) = d.call("DELETE", &format!("/capsules/{id}"), None).await;
    assert_eq!(s, 200, "{b}");
}

/// Capsules spread over workspaces, tags, names and orchestration fields.
struct Fixture {
    /// project, tags [stale], run r1, phase design, role writer, name "feat-auth"
    p_stale: String,
    /// project, tags [stale, keep], run r1, phase review, role writer, name "Feat-DB"
    p_stale2: String,
    /// project, tags [fresh], run r2, phase design, role reviewer, name "fix-login"
    p_fresh: String,
    /// other, tags [stale], run r1, phase design, role writer, name "feat-x"
    o_stale: String,
}

async fn fixture(d: &TestDaemon) -> Fixture {
    Fixture {
        p_stale: store(
            d,
            json!({"workspace": "project", "name": "feat-auth", "tags": ["stale"],
                   "run_id": "r1", "phase": "design", "role": "writer"}),
        )
        .await,
        p_stale2: store(
            d,
            json!({"workspace": "project", "name": "Feat-DB", "tags": ["stale", "keep"],
                   "run_id": "r1", "phase": "review", "role": "writer"}),
        )
        .await,
        p_fresh: store(
            d,
            json!({"workspace": "project", "name": "fix-login", "tags": ["fresh"],
                   "run_id": "r2", "phase": "design", "role": "reviewer"}),
        )
        .await,
        o_stale: store(
            d,
            json!({"workspace": "other", "name": "feat-x", "tags": ["stale"],
                   "run_id": "r1", "phase": "design", "role": "writer"}),
        )
        .await,
    }
}

impl Fixture {
    fn all(&self) -> [&String; 4] {
        [&self.p_stale, &self.p_stale2, &self.p_fresh, &self.o_stale]
    }
}

/// Which of the fixture's capsules are still active, as a bit per capsule in `all()` order.
async fn active(d: &TestDaemon, f: &Fixture) -> [bool; 4] {
    let mut out = [false; 4];
    for (i, id) in f.all().into_iter().enumerate() {
        out[i] = is_active(d, id).await;
    }
    out
}

// ---------------------------------------------------------------------------------------------
// bulk delete

#[tokio::test]
async fn bulk_delete_needs_a_non_empty_filter() {
    // No filter, or only empty/whitespace filters → 400, nothing deleted.
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    for body in [
        json!({}),
        json!({"workspace": ""}),
        json!({"workspace": "   "}),
        json!({"tag": " ", "name_prefix": "", "run_id": "\t", "phase": "  ", "role": ""}),
    ] {
        let (s, b) = post(&d, "bulk-delete", body.clone()).await;
        let e = expect_error(s, &b, "INVALID_REQUEST", 400);
        assert!(
            e["message"].as_str().unwrap().contains("filter"),
            "{body}: {e}"
        );
    }
    assert_eq!(active(&d, &f).await, [true; 4]);
    let (s, b) = post(&d, "bulk-delete", json!({"colour": "red"})).await;
    expect_error(s, &b, "INVALID_REQUEST", 400);
}

#[tokio::test]
async fn bulk_delete_ands_the_filters_and_reports_them() {
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    let r = post_ok(
        &d,
        "bulk-delete",
        json!({"workspace": "project", "tag": "stale"}),
    )
    .await;
    assert_eq!(
        r,
        json!({"deleted": 2,
               "message": "Soft-deleted 2 capsules matching workspace=\"project\", tag=\"stale\""})
    );
    assert_eq!(active(&d, &f).await, [false, false, true, true]);
}

#[tokio::test]
async fn bulk_delete_by_each_filter() {
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    let r = post_ok(&d, "bulk-delete", json!({"role": "reviewer"})).await;
    assert_eq!(r["deleted"], 1);
    assert_eq!(active(&d, &f).await, [true, true, false, true]);
    let r = post_ok(&d, "bulk-delete", json!({"phase": "review"})).await;
    assert_eq!(r["deleted"], 1);
    assert_eq!(active(&d, &f).await, [true, false, false, true]);
    let r = post_ok(
        &d,
        "bulk-delete",
        json!({"run_id": "r1", "workspace": "other"}),
    )
    .await;
    assert_eq!(r["deleted"], 1);
    assert_eq!(active(&d, &f).await, [true, false, false, false]);
    let r = post_ok(&d, "bulk-delete", json!({"tag": "stale"})).await;
    assert_eq!(r["deleted"], 1);
    assert_eq!(active(&d, &f).await, [false; 4]);
}

#[tokio::test]
async fn bulk_delete_name_prefix_ignores_case() {
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    let r = post_ok(
        &d,
        "bulk-delete",
        json!({"workspace": "project", "name_prefix": "FEAT-"}),
    )
    .await;
    assert_eq!(r["deleted"], 2, "feat-auth and Feat-DB: {r}");
    assert_eq!(active(&d, &f).await, [false, false, true, true]);
}

#[tokio::test]
async fn name_prefix_and_tag_are_literal_not_patterns() {
    // A prefix is a prefix and a tag is a whole tag: `%` and `_` match only themselves.
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    let lit = store(&d, json!({"name": "fe_t", "tags": ["50%"]})).await;
    for body in [
        json!({"name_prefix": "%"}),
        json!({"name_prefix": "_"}),
        json!({"name_prefix": "fe%"}),
        json!({"tag": "%"}),
        json!({"tag": "stal"}),
        json!({"tag": "sta_e"}),
        json!({"tag": "5%"}),
    ] {
        let r = post_ok(&d, "bulk-update", {
            let mut b = body.clone();
            b["set_role"] = json!("hit");
            b
        })
        .await;
        assert_eq!(r["updated"], 0, "{body} matched: {r}");
    }
    let r = post_ok(&d, "bulk-delete", json!({"name_prefix": "FE_"})).await;
    assert_eq!(r["deleted"], 1, "only the literal fe_t: {r}");
    assert!(!is_active(&d, &lit).await);
    assert_eq!(active(&d, &f).await, [true; 4]);
}

#[tokio::test]
async fn bulk_delete_filters_use_normalized_workspaces() {
    // Lookup uses the normalized workspace (trimmed, lowercased).
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    let r = post_ok(&d, "bulk-delete", json!({"workspace": "  PROJECT "})).await;
    assert_eq!(r["deleted"], 3, "{r}");
    assert_eq!(active(&d, &f).await, [false, false, false, true]);
}

#[tokio::test]
async fn bulk_delete_touches_only_active_capsules() {
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    delete(&d, &f.p_stale).await;
    let deleted_at = d.fetch_any(&f.p_stale).await.unwrap()["deleted_at"].clone();
    assert!(deleted_at.is_i64());
    // Timestamps are unix seconds: a second deletion would show in a later second.
    moss_tests::wait_past_second(deleted_at.as_i64().unwrap()).await;
    let r = post_ok(&d, "bulk-delete", json!({"tag": "stale"})).await;
    assert_eq!(
        r["deleted"], 2,
        "the already-deleted one is not counted: {r}"
    );
    assert_eq!(
        d.fetch_any(&f.p_stale).await.unwrap()["deleted_at"],
        deleted_at,
        "an already-deleted capsule keeps its deletion time"
    );
    // Nothing left to match: 0, not an error.
    let r = post_ok(&d, "bulk-delete", json!({"tag": "stale"})).await;
    assert_eq!(r["deleted"], 0, "{r}");
    let r = post_ok(&d, "bulk-delete", json!({"workspace": "nowhere"})).await;
    assert_eq!(r["deleted"], 0, "{r}");
    assert!(r["message"].as_str().unwrap().contains("nowhere"), "{r}");
}

#[tokio::test]
async fn bulk_deleted_capsules_stay_readable_with_include_deleted() {
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    post_ok(&d, "bulk-delete", json!({"workspace": "other"})).await;
    let (s, b) = d
        .call("GET", &format!("/capsules/{}", f.o_stale), None)
        .await;
    expect_error(s, &b, "NOT_FOUND", 404);
    let c = d.fetch_any(&f.o_stale).await.expect("still there");
    assert_eq!(c["capsule_text"], capsule_text("bulk"));
    assert!(c["deleted_at"].is_i64(), "{c}");
    assert_eq!(c["updated_at"], c["deleted_at"], "delete bumps updated_at");
    // The name is free again: soft-deleted capsules don't hold names.
    store(&d, json!({"workspace": "other", "name": "feat-x"})).await;
}

// ---------------------------------------------------------------------------------------------
// bulk update

#[tokio::test]
async fn bulk_update_needs_a_filter_and_a_set_field() {
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    for body in [
        json!({"set_phase": "x"}),
        json!({"workspace": " ", "set_phase": "x"}),
        json!({"workspace": "project"}),
        json!({}),
    ] {
        let (s, b) = post(&d, "bulk-update", body.clone()).await;
        expect_error(s, &b, "INVALID_REQUEST", 400);
    }
    let c = d.fetch_any(&f.p_stale).await.unwrap();
    assert_eq!(c["phase"], "design", "nothing changed");
}

#[tokio::test]
async fn bulk_update_sets_fields_and_reports_it() {
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    let r = post_ok(
        &d,
        "bulk-update",
        json!({"workspace": "project", "set_phase": "archived"}),
    )
    .await;
    assert_eq!(
        r,
        json!({"updated": 3,
               "message": "Updated 3 capsules matching workspace=\"project\"; set phase=\"archived\""})
    );
    for id in [&f.p_stale, &f.p_stale2, &f.p_fresh] {
        assert_eq!(d.fetch_any(id).await.unwrap()["phase"], "archived");
    }
    assert_eq!(d.fetch_any(&f.o_stale).await.unwrap()["phase"], "design");

    // AND of filters; several set fields; the message names them all.
    let r = post_ok(
        &d,
        "bulk-update",
        json!({"run_id": "r1", "tag": "stale", "set_role": "auditor", "set_tags": ["old"]}),
    )
    .await;
    assert_eq!(r["updated"], 3, "{r}");
    let m = r["message"].as_str().unwrap();
    for part in [
        "Updated 3 capsules",
        "run_id=\"r1\"",
        "tag=\"stale\"",
        "role=\"auditor\"",
        "tags",
        "old",
    ] {
        assert!(m.contains(part), "{part:?} missing from {m:?}");
    }
    for id in [&f.p_stale, &f.p_stale2, &f.o_stale] {
        let c = d.fetch_any(id).await.unwrap();
        assert_eq!(c["role"], "auditor");
        assert_eq!(c["tags"], json!(["old"]), "tags replaced, not merged: {c}");
    }
    let c = d.fetch_any(&f.p_fresh).await.unwrap();
    assert_eq!(c["role"], "reviewer");
    assert_eq!(c["tags"], json!(["fresh"]));

    // Filtering on a field and setting it in one call.
    let r = post_ok(
        &d,
        "bulk-update",
        json!({"phase": "archived", "name_prefix": "fix", "set_phase": "done"}),
    )
    .await;
    assert_eq!(r["updated"], 1, "{r}");
    assert_eq!(d.fetch_any(&f.p_fresh).await.unwrap()["phase"], "done");
}

#[tokio::test]
async fn bulk_update_empty_values_clear_fields() {
    // "" clears phase/role, [] clears tags.
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    let r = post_ok(
        &d,
        "bulk-update",
        json!({"workspace": "other", "set_phase": "", "set_role": "", "set_tags": []}),
    )
    .await;
    assert_eq!(r["updated"], 1, "{r}");
    let c = d.fetch_any(&f.o_stale).await.unwrap();
    assert!(c.get("phase").is_none(), "phase cleared: {c}");
    assert!(c.get("role").is_none(), "role cleared: {c}");
    assert!(
        c.get("tags").is_none() || c["tags"] == json!([]),
        "tags cleared: {c}"
    );
    assert_eq!(c["run_id"], "r1", "fields not set are kept");
    // The cleared capsule no longer matches filters on the cleared values.
    let r = post_ok(&d, "bulk-update", json!({"tag": "stale", "set_phase": "x"})).await;
    assert_eq!(r["updated"], 2, "{r}");
    assert!(
        d.fetch_any(&f.o_stale)
            .await
            .unwrap()
            .get("phase")
            .is_none()
    );
}

#[tokio::test]
async fn bulk_update_bumps_updated_at_and_skips_deleted_capsules() {
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    delete(&d, &f.p_stale2).await;
    let before = d.fetch_any(&f.p_stale).await.unwrap();
    let deleted_before = d.fetch_any(&f.p_stale2).await.unwrap();
    // Timestamps are unix seconds: the update must come in a later second than both.
    let latest = [
        &before["updated_at"],
        &deleted_before["updated_at"],
        &deleted_before["deleted_at"],
    ]
    .iter()
    .filter_map(|t| t.as_i64())
    .max()
    .unwrap();
    moss_tests::wait_past_second(latest).await;
    let r = post_ok(
        &d,
        "bulk-update",
        json!({"workspace": "project", "tag": "stale", "set_phase": "shipped"}),
    )
    .await;
    assert_eq!(r["updated"], 1, "the deleted one is not counted: {r}");
    let after = d.fetch_any(&f.p_stale).await.unwrap();
    assert_eq!(after["phase"], "shipped");
    assert!(
        after["updated_at"].as_i64() > before["updated_at"].as_i64(),
        "{before} -> {after}"
    );
    assert_eq!(
        d.fetch_any(&f.p_stale2).await.unwrap(),
        deleted_before,
        "a deleted capsule is untouched"
    );
    let r = post_ok(
        &d,
        "bulk-update",
        json!({"workspace": "nowhere", "set_phase": "x"}),
    )
    .await;
    assert_eq!(r["updated"], 0, "no match is not an error: {r}");
}

// ---------------------------------------------------------------------------------------------
// purge

#[tokio::test]
async fn purge_removes_only_soft_deleted_capsules_for_good() {
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    delete(&d, &f.p_stale).await;
    delete(&d, &f.o_stale).await;
    let r = post_ok(&d, "purge", json!({})).await;
    assert_eq!(
        r,
        json!({"purged": 2, "message": "Permanently deleted 2 capsules"})
    );
    assert!(
        d.fetch_any(&f.p_stale).await.is_none(),
        "gone even with include_deleted"
    );
    assert!(d.fetch_any(&f.o_stale).await.is_none());
    assert!(is_active(&d, &f.p_stale2).await);
    assert!(is_active(&d, &f.p_fresh).await);
    // Not listed anywhere any more.
    let (_, inv) = d
        .call("GET", "/capsules/inventory?include_deleted=true", None)
        .await;
    assert_eq!(inv["pagination"]["total"], 2, "{inv}");
    // Nothing left to purge.
    let r = post_ok(&d, "purge", json!({})).await;
    assert_eq!(r["purged"], 0);
}

#[tokio::test]
async fn purge_by_workspace() {
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    delete(&d, &f.p_stale).await;
    delete(&d, &f.o_stale).await;
    let r = post_ok(&d, "purge", json!({"workspace": "Other"})).await;
    assert_eq!(r["purged"], 1, "{r}");
    assert!(d.fetch_any(&f.o_stale).await.is_none());
    assert!(
        d.fetch_any(&f.p_stale).await.is_some(),
        "other workspace kept"
    );
}

#[tokio::test]
async fn purge_older_than_days() {
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    delete(&d, &f.p_stale).await;
    delete(&d, &f.p_fresh).await;
    // Deleted just now: not older than a year.
    let r = post_ok(&d, "purge", json!({"older_than_days": 365})).await;
    assert_eq!(r["purged"], 0, "{r}");
    assert!(d.fetch_any(&f.p_stale).await.is_some());
    // Negative is refused.
    let (s, b) = post(&d, "purge", json!({"older_than_days": -1})).await;
    let e = expect_error(s, &b, "INVALID_REQUEST", 400);
    assert!(
        e["message"].as_str().unwrap().contains("older_than_days"),
        "{e}"
    );
    let (s, b) = post(&d, "purge", json!({"older_than_days": "week"})).await;
    expect_error(s, &b, "INVALID_REQUEST", 400);
    assert!(d.fetch_any(&f.p_stale).await.is_some());
    // 0 days: every deleted capsule.
    let r = post_ok(&d, "purge", json!({"older_than_days": 0})).await;
    assert_eq!(r["purged"], 2, "{r}");
    assert!(d.fetch_any(&f.p_fresh).await.is_none());
    assert!(is_active(&d, &f.o_stale).await);
}

// ---------------------------------------------------------------------------------------------
// MCP

#[tokio::test]
async fn bulk_tools_over_mcp() {
    let d = TestDaemon::start().await;
    let f = fixture(&d).await;
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool(
            "capsule_bulk_update",
            json!({"workspace": "other", "set_phase": "x"}),
        )
        .await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["updated"], 1);
    let r = mcp
        .call_tool("capsule_bulk_delete", json!({"workspace": "other"}))
        .await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["deleted"], 1);
    let r = mcp.call_tool("capsule_purge", json!({})).await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["purged"], 1, "{r}");
    assert!(
        r["structuredContent"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Permanently deleted 1 capsule"),
        "{r}"
    );
    assert!(d.fetch_any(&f.o_stale).await.is_none());
    for (tool, args) in [
        ("capsule_bulk_delete", json!({})),
        ("capsule_bulk_update", json!({"workspace": "project"})),
        ("capsule_purge", json!({"older_than_days": -3})),
    ] {
        let r = mcp.call_tool(tool, args).await;
        assert_eq!(r["isError"], true, "{tool}: {r}");
        assert_eq!(r["structuredContent"]["error"]["code"], "INVALID_REQUEST");
    }
    assert_eq!(active(&d, &f).await, [true, true, true, false]);
}
