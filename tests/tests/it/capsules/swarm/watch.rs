//! Watch: a long poll with a cursor, purges seen as events, and 32 concurrent waiters beside
//! writers.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use super::ok;
use crate::util::{expect_error, store};

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
