//! Capsules for a leader and its workers: optimistic concurrency (revision, updated_at),
//! multi-section append, section-pivoted and filter-based compose, run id lists, run purge,
//! watch (long poll with a cursor, under 32 concurrent waiters and writers) and stats.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use crate::util::{expect_error, message, store};

/// A capsule with the six sections; `decisions` and `questions` fill two of them.
fn worker_text(objective: &str, decisions: &str, questions: &str) -> String {
    format!(
        "## Objective\n{objective}\n## Current status\n(pending)\n## Decisions\n{decisions}\n\
         ## Next actions\n- continue\n## Key locations\nsrc/\n## Open questions\n{questions}\n"
    )
}

async fn fetch(d: &TestDaemon, id: &str) -> Value {
    let (s, c) = d
        .call("GET", &format!("/capsules/{id}?include_deleted=true"), None)
        .await;
    assert_eq!(s, 200, "{c}");
    c
}

async fn ok(d: &TestDaemon, method: &str, path: &str, body: Value) -> Value {
    let (s, r) = d.call(method, path, Some(body.clone())).await;
    assert_eq!(s, 200, "{method} {path} {body}: {r}");
    r
}

#[tokio::test]
async fn revision_and_updated_at_guard_update_and_append_and_a_conflict_writes_nothing() {
    let d = TestDaemon::start().await;
    let id = store(
        &d,
        json!({"workspace": "w", "name": "auth", "capsule_text": capsule_text("one")}),
    )
    .await;
    let c = fetch(&d, &id).await;
    assert_eq!(c["revision"], 1);
    let updated_at = c["updated_at"].as_i64().unwrap();

    // The right revision: written, and the handle says the new revision.
    let h = ok(
        &d,
        "PUT",
        "/capsules/by-name?workspace=w&name=auth",
        json!({"title": "T2", "if_revision": 1}),
    )
    .await;
    assert_eq!(h["revision"], 2, "{h}");
    // A stale revision: 409 with the current revision and updated_at, nothing written.
    let (s, e) = d
        .call(
            "PUT",
            &format!("/capsules/{id}"),
            Some(json!({"title": "lost", "if_revision": 1})),
        )
        .await;
    let e = expect_error(s, &e, "CONFLICT", 409);
    assert_eq!(e["details"]["revision"], 2, "{e}");
    assert!(e["details"]["updated_at"].is_i64(), "{e}");
    let c = fetch(&d, &id).await;
    assert_eq!(
        (c["title"].as_str(), c["revision"].as_i64()),
        (Some("T2"), Some(2))
    );

    // if_updated_at: a value from the past is a conflict.
    let (s, e) = d
        .call(
            "PUT",
            &format!("/capsules/{id}"),
            Some(json!({"title": "lost", "if_updated_at": updated_at - 1})),
        )
        .await;
    expect_error(s, &e, "CONFLICT", 409);

    // Append takes both guards too.
    let (s, e) = d
        .call(
            "POST",
            "/capsules/append",
            Some(json!({"id": id, "section": "Decisions", "content": "- x", "if_revision": 1})),
        )
        .await;
    let e = expect_error(s, &e, "CONFLICT", 409);
    assert_eq!(e["details"]["revision"], 2);
    let (s, e) = d
        .call(
            "POST",
            "/capsules/append",
            Some(json!({"id": id, "section": "Decisions", "content": "- x", "if_updated_at": 1})),
        )
        .await;
    expect_error(s, &e, "CONFLICT", 409);
    assert_eq!(fetch(&d, &id).await["capsule_text"], capsule_text("one"));
    let r = ok(
        &d,
        "POST",
        "/capsules/append",
        json!({"id": id, "section": "Decisions", "content": "- y", "if_revision": 2}),
    )
    .await;
    assert_eq!(r["revision"], 3, "{r}");
    assert_eq!(r["sections"][0]["section_hit"], "## Decisions");

    // Delete (by name, one writer job) bumps the revision as well.
    ok(
        &d,
        "DELETE",
        "/capsules/by-name?workspace=w&name=auth",
        Value::Null,
    )
    .await;
    assert_eq!(fetch(&d, &id).await["revision"], 4);
    d.stop().await;
}

#[tokio::test]
async fn a_multi_section_append_is_all_or_nothing_and_can_prepend_or_demand_a_placeholder() {
    let d = TestDaemon::start().await;
    let text = worker_text("auth", "- JWT", "(pending)");
    let id = store(&d, json!({"name": "a", "capsule_text": text})).await;
    // One unknown section: 400 naming it, nothing written.
    let (s, e) = d
        .call(
            "POST",
            "/capsules/append",
            Some(json!({"id": id, "sections": [
                {"section": "Current status", "content": "implementing"},
                {"section": "Nope", "content": "x"}
            ]})),
        )
        .await;
    let e = expect_error(s, &e, "INVALID_REQUEST", 400);
    assert_eq!(e["details"]["section"], "Nope");
    let c = fetch(&d, &id).await;
    assert_eq!(
        (c["capsule_text"].as_str(), c["revision"].as_i64()),
        (Some(text.as_str()), Some(1))
    );
    // Too large as a whole: nothing written either.
    let (s, e) = d
        .call(
            "POST",
            "/capsules/append",
            Some(json!({"id": id, "sections": [
                {"section": "Current status", "content": "ok"},
                {"section": "Decisions", "content": "x".repeat(13_000)}
            ]})),
        )
        .await;
    expect_error(s, &e, "CAPSULE_TOO_LARGE", 413);
    assert_eq!(fetch(&d, &id).await["revision"], 1);

    // All good: each section with the placeholder rule, in order.
    let r = ok(
        &d,
        "POST",
        "/capsules/append",
        json!({"id": id, "sections": [
            {"section": "Current status", "content": "implementing"},
            {"section": "Decisions", "content": "- mutex over channel"}
        ]}),
    )
    .await;
    assert_eq!(
        r["sections"],
        json!([
            {"section_hit": "## Current status", "replaced": true},
            {"section_hit": "## Decisions", "replaced": false}
        ])
    );
    assert_eq!(
        (r["section_hit"].as_str(), r["replaced"].as_bool()),
        (Some("## Current status"), Some(true))
    );
    let t = fetch(&d, &id).await["capsule_text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(t.contains("## Current status\nimplementing\n"), "{t}");
    assert!(
        t.contains("## Decisions\n- JWT\n\n- mutex over channel\n"),
        "{t}"
    );

    // Prepend: latest at the top.
    ok(
        &d,
        "POST",
        "/capsules/append",
        json!({"id": id, "section": "Current status", "content": "testing", "position": "prepend"}),
    )
    .await;
    let t = fetch(&d, &id).await["capsule_text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        t.contains("## Current status\ntesting\n\nimplementing\n"),
        "{t}"
    );

    // if_placeholder: the placeholder section is written once, then it is a conflict.
    let first = json!({"id": id, "section": "Open questions", "content": "- who owns it?", "if_placeholder": true});
    ok(&d, "POST", "/capsules/append", first.clone()).await;
    let (s, e) = d.call("POST", "/capsules/append", Some(first)).await;
    let e = expect_error(s, &e, "CONFLICT", 409);
    assert_eq!(e["details"]["section"], "Open questions");
    // Both forms at once, or neither, is a 400 naming the field.
    let (s, e) = d
        .call(
            "POST",
            "/capsules/append",
            Some(json!({"id": id, "section": "x", "content": "y", "sections": [{"section": "x", "content": "y"}]})),
        )
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "sections"
    );
    let (s, e) = d
        .call("POST", "/capsules/append", Some(json!({"id": id})))
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "section"
    );
    d.stop().await;
}

/// Three workers of run `pr-42` and one of another run, stored in this order.
async fn swarm(d: &TestDaemon) {
    for (name, role, run, decisions, questions) in [
        (
            "security-findings",
            Some("security-reviewer"),
            "pr-42",
            "- parameterize the user query",
            "- is /admin meant to be open?",
        ),
        (
            "perf-findings",
            Some("performance-reviewer"),
            "pr-42",
            "- N+1 in the user listing\n- index created_at",
            "TBD",
        ),
        (
            "docs-findings",
            None,
            "pr-42",
            "(pending)",
            "- who reviews the docs?",
        ),
        (
            "other-run",
            Some("x"),
            "pr-41",
            "- unrelated",
            "- unrelated",
        ),
    ] {
        let mut body = json!({
            "workspace": "pr",
            "name": name,
            "run_id": run,
            "capsule_text": worker_text(name, decisions, questions),
        });
        if let Some(role) = role {
            body["role"] = json!(role);
        }
        store(d, body).await;
    }
}

#[tokio::test]
async fn a_section_pivot_groups_findings_with_attribution_in_encounter_order() {
    let d = TestDaemon::start().await;
    swarm(&d).await;
    let r = ok(
        &d,
        "POST",
        "/capsules/compose",
        json!({
            "items": [{"run_id": "pr-42"}],
            "pivot": "section",
            "sections": ["Open questions", "Decisions"],
            "include_attribution": true
        }),
    )
    .await;
    assert_eq!(
        r["bundle_text"],
        "## Decisions\n\n\
         **security-findings** (security-reviewer):\n- parameterize the user query\n\n\
         **perf-findings** (performance-reviewer):\n- N+1 in the user listing\n- index created_at\n\n\
         ## Open questions\n\n\
         **security-findings** (security-reviewer):\n- is /admin meant to be open?\n\n\
         **docs-findings**:\n- who reviews the docs?\n",
        "{}",
        r["bundle_text"].as_str().unwrap()
    );
    assert_eq!(r["parts_count"], 3);

    // Attribution without pivot: inside each capsule's block.
    let r = ok(
        &d,
        "POST",
        "/capsules/compose",
        json!({"items": [{"workspace": "pr", "name": "perf-findings"}], "sections": ["Decisions"], "include_attribution": true}),
    )
    .await;
    assert_eq!(
        r["bundle_text"],
        "## perf-findings\n\n**perf-findings** (performance-reviewer):\n\n## Decisions\n- N+1 in the user listing\n- index created_at\n"
    );

    // JSON cannot be pivoted.
    let (s, e) = d
        .call(
            "POST",
            "/capsules/compose",
            Some(json!({"items": [{"run_id": "pr-42"}], "pivot": "section", "format": "json"})),
        )
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "pivot"
    );

    // Stored, a pivot is a thin capsule: accepted without the six sections.
    let r = ok(
        &d,
        "POST",
        "/capsules/compose",
        json!({
            "items": [{"run_id": "pr-42"}],
            "pivot": "section",
            "sections": ["Decisions"],
            "store_as": {"workspace": "pr", "name": "pr-42-decisions"}
        }),
    )
    .await;
    let stored = fetch(&d, r["stored"]["id"].as_str().unwrap()).await;
    assert!(
        stored["capsule_text"]
            .as_str()
            .unwrap()
            .starts_with("## Decisions\n\n- parameterize")
    );

    // Over MCP, the same.
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool(
            "capsule_compose",
            json!({"items": [{"run_id": ["pr-41", "pr-42"]}], "pivot": "section", "sections": ["Decisions"]}),
        )
        .await;
    assert_eq!(r["isError"], false, "{r}");
    let text = r["structuredContent"]["bundle_text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.ends_with("- index created_at\n\n- unrelated\n"),
        "{text}"
    );
    d.stop().await;
}

/// The display names of a json bundle, in order.
fn part_names(r: &Value) -> Vec<String> {
    let doc: Value = serde_json::from_str(r["bundle_text"].as_str().unwrap()).unwrap();
    doc["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["display_name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn filter_items_expand_oldest_first_at_their_position_and_are_bounded() {
    let d = TestDaemon::start().await;
    swarm(&d).await;
    let compose = |items: Value| json!({"items": items, "format": "json"});
    // [ref, filter, ref]: the filter's capsules in creation order, at its place.
    let r = ok(
        &d,
        "POST",
        "/capsules/compose",
        compose(json!([
            {"workspace": "pr", "name": "other-run"},
            {"run_id": "pr-42", "role": "performance-reviewer"},
            {"workspace": "pr", "run_id": "pr-42"},
            {"workspace": "pr", "name": "docs-findings"}
        ])),
    )
    .await;
    assert_eq!(
        part_names(&r),
        [
            "other-run",
            "perf-findings",
            "security-findings",
            "perf-findings",
            "docs-findings",
            "docs-findings"
        ]
    );
    // A filter matching nothing is skipped; a ref that misses fails the whole compose.
    let r = ok(
        &d,
        "POST",
        "/capsules/compose",
        compose(json!([{"run_id": "nobody"}, {"workspace": "pr", "name": "other-run"}])),
    )
    .await;
    assert_eq!(part_names(&r), ["other-run"]);
    let (s, e) = d
        .call(
            "POST",
            "/capsules/compose",
            Some(compose(
                json!([{"run_id": "pr-42"}, {"workspace": "pr", "name": "missing"}]),
            )),
        )
        .await;
    expect_error(s, &e, "NOT_FOUND", 404);
    // Ambiguous and empty items.
    let (s, e) = d
        .call(
            "POST",
            "/capsules/compose",
            Some(compose(
                json!([{"workspace": "pr", "name": "other-run", "run_id": "pr-42"}]),
            )),
        )
        .await;
    let e = expect_error(s, &e, "INVALID_REQUEST", 400);
    assert!(message(&e).contains("ambiguous"), "{e}");
    let (s, e) = d
        .call("POST", "/capsules/compose", Some(compose(json!([{}]))))
        .await;
    expect_error(s, &e, "INVALID_REQUEST", 400);

    // More than 50 once expanded.
    for i in 0..48 {
        store(
            &d,
            json!({"workspace": "big", "run_id": "many", "capsule_text": capsule_text(&format!("m{i}"))}),
        )
        .await;
    }
    let (s, e) = d
        .call(
            "POST",
            "/capsules/compose",
            Some(compose(json!([{"run_id": "many"}, {"run_id": "pr-42"}]))),
        )
        .await;
    let e = expect_error(s, &e, "INVALID_REQUEST", 400);
    assert_eq!(e["details"]["expanded_count"], 51, "{e}");
    // Exactly 50 is fine.
    let r = ok(
        &d,
        "POST",
        "/capsules/compose",
        json!({"items": [{"run_id": "many"}, {"workspace": "pr", "name": "docs-findings"}, {"workspace": "pr", "name": "other-run"}], "sections": ["Objective"]}),
    )
    .await;
    assert_eq!(r["parts_count"], 50);
    d.stop().await;
}

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

/// `GET /capsules/watch` with a query string.
async fn watch(d: &TestDaemon, query: &str) -> Value {
    let (s, r) = d
        .call("GET", &format!("/capsules/watch?{query}"), None)
        .await;
    assert_eq!(s, 200, "{query}: {r}");
    r
}

#[tokio::test]
async fn watch_reports_creates_updates_deletes_and_times_out() {
    let d = TestDaemon::start().await;
    let start = watch(&d, "timeout_ms=0").await;
    assert_eq!(start["event"], "timeout");
    let cursor = start["cursor"].as_i64().unwrap();
    let id = store(
        &d,
        json!({"workspace": "w", "name": "a", "run_id": "r", "capsule_text": capsule_text("a")}),
    )
    .await;
    // Another run's write is not seen by a run filter.
    store(
        &d,
        json!({"workspace": "w", "run_id": "other", "capsule_text": capsule_text("b")}),
    )
    .await;
    let r = watch(&d, &format!("run_id=r&since={cursor}&timeout_ms=5000")).await;
    assert_eq!(
        (r["event"].as_str(), r["capsule"]["id"].as_str()),
        (Some("created"), Some(id.as_str()))
    );
    assert!(r["capsule"].get("capsule_text").is_none(), "a summary: {r}");
    let cursor = r["cursor"].as_i64().unwrap();
    // Nothing new for run r: a timeout keeping a usable cursor.
    let t = watch(&d, &format!("run_id=r&since={cursor}&timeout_ms=50")).await;
    assert_eq!(t["event"], "timeout");
    let cursor = t["cursor"].as_i64().unwrap();
    ok(
        &d,
        "POST",
        "/capsules/append",
        json!({"id": id, "section": "Decisions", "content": "- more"}),
    )
    .await;
    let r = watch(&d, &format!("run_id=r&since={cursor}")).await;
    assert_eq!(r["event"], "updated");
    assert_eq!(r["capsule"]["revision"], 2);
    let cursor = r["cursor"].as_i64().unwrap();
    ok(&d, "DELETE", &format!("/capsules/{id}"), Value::Null).await;
    let r = watch(&d, &format!("workspace=w&name_prefix=A&since={cursor}")).await;
    assert_eq!(r["event"], "deleted");

    // A waiter parked before the write is woken by it.
    let d = Arc::new(d);
    let cursor = r["cursor"].as_i64().unwrap();
    let waiter = {
        let d = d.clone();
        tokio::spawn(async move {
            watch(&d, &format!("phase=late&since={cursor}&timeout_ms=10000")).await
        })
    };
    // Nothing outside the daemon shows a waiter parked, so this pause is the scenario itself: it
    // gives the waiter time to park before the write. Had it not parked yet, it would find the
    // write by its cursor and the assertions below would hold all the same.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let late = store(
        &d,
        json!({"phase": "late", "capsule_text": capsule_text("late")}),
    )
    .await;
    let r = waiter.await.unwrap();
    assert_eq!(r["capsule"]["id"], late.as_str());

    // A waiter that fell behind takes several changes at once, oldest first.
    let all = watch(&d, "since=0&limit=100&timeout_ms=0").await;
    let events = all["events"].as_array().unwrap();
    assert_eq!(events.len(), 3, "{all}");
    assert_eq!(all["cursor"], events[2]["cursor"]);
    assert_eq!(
        events
            .iter()
            .map(|e| e["event"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["created", "deleted", "created"],
        "in change order: the other run's capsule, a (deleted since), late: {all}"
    );
    let two = watch(&d, "since=0&limit=2").await;
    assert_eq!(two["events"].as_array().unwrap().len(), 2);
    assert_eq!(two["cursor"], two["events"][1]["cursor"]);
    let (s, e) = d.call("GET", "/capsules/watch?limit=101", None).await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "limit"
    );

    // Bounds.
    let (s, e) = d
        .call("GET", "/capsules/watch?timeout_ms=300001", None)
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "timeout_ms"
    );
    let (s, e) = d.call("GET", "/capsules/watch?since=-1", None).await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "since"
    );

    // Over MCP.
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool(
            "capsule_watch",
            json!({"since": 0, "phase": "late", "timeout_ms": 1000}),
        )
        .await;
    assert_eq!(r["structuredContent"]["event"], "created", "{r}");
    Arc::try_unwrap(d).ok().unwrap().stop().await;
}

/// A purge is a change a follower sees: a watcher parked on the run is woken, and each purged
/// capsule comes as a `purged` event with its summary, active and soft-deleted ones alike.
#[tokio::test]
async fn a_run_purge_wakes_watchers_with_purged_events() {
    let d = Arc::new(TestDaemon::start().await);
    let mut ids = Vec::new();
    for i in 0..3 {
        ids.push(
            store(
                &d,
                json!({"run_id": "r", "capsule_text": capsule_text(&format!("p{i}"))}),
            )
            .await,
        );
    }
    store(
        &d,
        json!({"run_id": "kept", "capsule_text": capsule_text("kept")}),
    )
    .await;
    ok(&d, "DELETE", &format!("/capsules/{}", ids[0]), Value::Null).await;
    let cursor = watch(&d, "timeout_ms=0").await["cursor"].as_i64().unwrap();
    let waiter = {
        let d = d.clone();
        tokio::spawn(async move {
            watch(
                &d,
                &format!("run_id=r&since={cursor}&limit=10&timeout_ms=10000"),
            )
            .await
        })
    };
    let r = ok(
        &d,
        "POST",
        "/capsules/purge",
        json!({"run_id": "r", "confirm": true}),
    )
    .await;
    assert_eq!(r["purged"], 3);
    let r = waiter.await.unwrap();
    let events = r["events"].as_array().unwrap();
    assert_eq!(r["event"], "purged", "{r}");
    let mut purged: Vec<&str> = events
        .iter()
        .map(|e| {
            assert_eq!(e["event"], "purged", "{r}");
            e["capsule"]["id"].as_str().unwrap()
        })
        .collect();
    purged.sort();
    let mut want: Vec<&str> = ids.iter().map(String::as_str).collect();
    want.sort();
    assert_eq!(purged, want);
    assert_eq!(r["cursor"], events[2]["cursor"]);
    // Nothing more for the run; another run's follower saw nothing.
    let after = r["cursor"].as_i64().unwrap();
    assert_eq!(
        watch(&d, &format!("run_id=r&since={after}&timeout_ms=0")).await["event"],
        "timeout"
    );
    assert_eq!(
        watch(&d, &format!("run_id=kept&since={cursor}&timeout_ms=0")).await["event"],
        "timeout"
    );
    Arc::try_unwrap(d).ok().unwrap().stop().await;
}

/// 32 waiters, each following run `swarm` from the same cursor while 8 writers store 20
/// capsules each: every waiter sees each of the 160 capsules exactly once, in cursor order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_two_waiters_see_every_write_exactly_once_across_calls() {
    const WRITERS: usize = 8;
    const PER_WRITER: usize = 20;
    const WAITERS: usize = 32;
    let d = Arc::new(TestDaemon::start().await);
    let cursor = watch(&d, "timeout_ms=0").await["cursor"].as_i64().unwrap();
    let mut waiters = Vec::new();
    for _ in 0..WAITERS {
        let d = d.clone();
        waiters.push(tokio::spawn(async move {
            let mut seen: Vec<String> = Vec::new();
            let mut since = cursor;
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
            while seen.len() < WRITERS * PER_WRITER && std::time::Instant::now() < deadline {
                let r = watch(&d, &format!("run_id=swarm&since={since}&timeout_ms=2000")).await;
                let next = r["cursor"].as_i64().unwrap();
                assert!(
                    next >= since,
                    "the cursor never goes back: {since} -> {next}"
                );
                since = next;
                if r["event"] == "created" {
                    seen.push(r["capsule"]["id"].as_str().unwrap().to_string());
                } else {
                    assert_eq!(r["event"], "timeout", "{r}");
                }
            }
            seen
        }));
    }
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let d = d.clone();
        writers.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for i in 0..PER_WRITER {
                // Other runs' writes in between must not show.
                store(&d, json!({"run_id": "noise", "capsule_text": capsule_text("noise")})).await;
                ids.push(
                    store(
                        &d,
                        json!({"run_id": "swarm", "capsule_text": capsule_text(&format!("w{w}-{i}"))}),
                    )
                    .await,
                );
            }
            ids
        }));
    }
    let mut written = BTreeSet::new();
    for w in writers {
        written.extend(w.await.unwrap());
    }
    assert_eq!(written.len(), WRITERS * PER_WRITER);
    for w in waiters {
        let seen = w.await.unwrap();
        let mut counts: BTreeMap<&String, usize> = BTreeMap::new();
        for id in &seen {
            *counts.entry(id).or_default() += 1;
        }
        assert!(counts.values().all(|n| *n == 1), "a write seen twice");
        assert_eq!(
            seen.iter().cloned().collect::<BTreeSet<_>>(),
            written,
            "every write seen"
        );
    }
    Arc::try_unwrap(d).ok().unwrap().stop().await;
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
