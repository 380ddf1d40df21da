//! The associative memory over REST and MCP: the documented examples, upserts, ranking, sessions,
//! bounded forgets, templates. Its Lua sources and the ranking measured on a fixture have their
//! own suites.

mod ranking;
mod sources;

use moss_tests::TestDaemon;
use serde_json::{Value, json};

use crate::reasoning::{fails, ok};

async fn store(d: &TestDaemon, body: Value) -> Value {
    ok(d, "/memories", body).await
}

async fn recall(d: &TestDaemon, body: Value) -> Value {
    ok(d, "/memories/recall", body).await
}

fn contents(v: &Value) -> Vec<String> {
    v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn the_examples_store_recall_by_query_and_by_slot() {
    let d = TestDaemon::start().await;
    let prefs = store(
        &d,
        json!({"content": "User prefers tabs", "context": "formatting", "slot": "preferences"}),
    )
    .await;
    assert_eq!(
        (
            prefs["created"].as_bool(),
            prefs["memory"]["workspace"].as_str()
        ),
        (Some(true), Some("default"))
    );
    store(
        &d,
        json!({"content": "Last edit broke tests", "context": "auth.py", "weight": 0.8}),
    )
    .await;
    store(&d, json!({"content": "Be concise", "slot": "system"})).await;
    store(
        &d,
        json!({"content": "Payments retry three times", "context": "src/payments"}),
    )
    .await;

    // "about auth.py" finds the memory whose context is auth.py, though its text never says so.
    let r = recall(&d, json!({"query": "about auth.py", "explain": true})).await;
    assert_eq!(contents(&r), ["Last edit broke tests"], "{r}");
    assert_eq!(r["items"][0]["explain"]["context_match"], "exact");
    let r = recall(&d, json!({"slot": "preferences"})).await;
    assert_eq!(contents(&r), ["User prefers tabs"]);
    // A path finds memories on its parent directories, less specifically than exact ones.
    store(&d, json!({"content": "Webhook signatures are checked twice", "context": "src/payments/stripe/webhook.py"})).await;
    let r = recall(
        &d,
        json!({"query": "src/payments/stripe/webhook.py", "explain": true}),
    )
    .await;
    assert_eq!(
        contents(&r),
        [
            "Webhook signatures are checked twice",
            "Payments retry three times"
        ],
        "{r}"
    );
    assert_eq!(r["items"][1]["explain"]["context_match"], "parent");
    assert!(r["items"][0]["score"].as_f64() > r["items"][1]["score"].as_f64());
    // No match: an empty list and a reason, not filler.
    let r = recall(&d, json!({"query": "kubernetes ingress"})).await;
    assert_eq!(r["items"], json!([]));
    assert!(r["reason"].as_str().unwrap().contains("kubernetes"), "{r}");
    let e = fails(&d, "/memories/recall", json!({}), 400, "INVALID_REQUEST").await;
    assert_eq!(e["details"]["field"], "query");
    d.stop().await;
}

#[tokio::test]
async fn storing_the_same_knowledge_again_updates_it() {
    let d = TestDaemon::start().await;
    let a = store(&d, json!({"content": "Use ruff, not flake8", "context": ["lint", "python"], "tags": ["tooling"]})).await;
    let b = store(&d, json!({"content": "Use ruff, not flake8", "context": ["python", "LINT"], "weight": 2.0, "metadata": {"by": "ci"}})).await;
    assert_eq!(b["created"], false);
    assert_eq!(b["memory"]["id"], a["memory"]["id"]);
    assert_eq!(b["updated"], json!(["weight", "tags", "metadata"]));
    assert_eq!(b["memory"]["weight"], 2.0);
    // Another slot is other knowledge.
    let c = store(&d, json!({"content": "Use ruff, not flake8", "context": ["lint", "python"], "slot": "conventions"})).await;
    assert_eq!(c["created"], true);
    for (body, field) in [
        (json!({"content": ""}), "content"),
        (json!({"content": "x", "weight": 0}), "weight"),
        (json!({"content": "x", "weight": 1000}), "weight"),
        (json!({"content": "x", "metadata": "nope"}), "metadata"),
        (json!({"content": "x", "colour": "red"}), "colour"),
        (json!({"content": "x", "persist": false}), "session"),
    ] {
        let e = fails(&d, "/memories", body.clone(), 400, "INVALID_REQUEST").await;
        assert_eq!(e["details"]["field"], field, "{body}: {e}");
    }
    d.stop().await;
}

#[tokio::test]
async fn ranking_weighs_relevance_weight_recency_and_breadth() {
    let d = TestDaemon::start().await;
    // Same words, different weight: the heavier first.
    store(
        &d,
        json!({"content": "Deploys go through the staging cluster first", "weight": 0.5}),
    )
    .await;
    store(
        &d,
        json!({"content": "Deploys must pass the staging smoke tests", "weight": 3.0}),
    )
    .await;
    let r = recall(&d, json!({"query": "staging deploys"})).await;
    assert_eq!(contents(&r)[0], "Deploys must pass the staging smoke tests");
    // A broad memory (many contexts) loses to a specific one.
    store(&d, json!({"content": "Generic note on style", "context": ["api.py", "db.py", "ui.py", "cli.py", "log.py"]})).await;
    store(
        &d,
        json!({"content": "The API handlers are async", "context": "api.py"}),
    )
    .await;
    let r = recall(&d, json!({"query": "api.py", "explain": true})).await;
    assert_eq!(
        contents(&r),
        ["The API handlers are async", "Generic note on style"]
    );
    let broad = &r["items"][1]["explain"];
    assert!(broad["specificity"].as_f64().unwrap() < 0.7, "{broad}");
    // The global workspace is included unless the caller opts out.
    store(
        &d,
        json!({"content": "User prefers dark mode", "slot": "preferences", "workspace": "global"}),
    )
    .await;
    store(&d, json!({"content": "Project uses 4-space indents", "slot": "preferences", "workspace": "shop"})).await;
    let r = recall(&d, json!({"slot": "preferences", "workspace": "shop"})).await;
    assert_eq!(r["items"].as_array().unwrap().len(), 2);
    let r = recall(
        &d,
        json!({"slot": "preferences", "workspace": "shop", "include_global": false}),
    )
    .await;
    assert_eq!(contents(&r), ["Project uses 4-space indents"]);
    d.stop().await;
}

#[tokio::test]
async fn a_query_forget_is_bounded_and_reports_what_it_removed() {
    let d = TestDaemon::start().await;
    for i in 0..15 {
        store(&d, json!({"content": format!("Release note {i}: shipped the cart page"), "context": "release", "slot": "notes"})).await;
    }
    store(&d, json!({"content": "A user likes apples"})).await;
    // forget("a") must never wipe the store.
    let e = fails(
        &d,
        "/memories/forget",
        json!({"query": "a"}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(e["details"]["field"], "query");
    let e = fails(
        &d,
        "/memories/forget",
        json!({"context": "release"}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(
        (
            e["details"]["field"].as_str(),
            e["details"]["matched"].as_i64()
        ),
        (Some("confirm"), Some(15))
    );
    let dry = ok(
        &d,
        "/memories/forget",
        json!({"slot": "notes", "dry_run": true}),
    )
    .await;
    assert_eq!(dry["count"], 15);
    assert_eq!(
        recall(&d, json!({"slot": "notes", "limit": 100})).await["items"]
            .as_array()
            .unwrap()
            .len(),
        15
    );
    let gone = ok(
        &d,
        "/memories/forget",
        json!({"slot": "notes", "confirm": true}),
    )
    .await;
    assert_eq!(gone["count"], 15);
    assert_eq!(
        recall(&d, json!({"slot": "notes"})).await["items"],
        json!([])
    );
    // By query: only strong matches, and exactly those are reported.
    let apples = ok(
        &d,
        "/memories/forget",
        json!({"query": "user likes apples"}),
    )
    .await;
    assert_eq!(apples["removed"][0]["content"], "A user likes apples");
    assert_eq!(apples["count"], 1);
    let one = store(&d, json!({"content": "temp"})).await;
    let by_id = ok(&d, "/memories/forget", json!({"id": one["memory"]["id"]})).await;
    assert_eq!(by_id["count"], 1);
    fails(
        &d,
        "/memories/forget",
        json!({"id": one["memory"]["id"]}),
        404,
        "NOT_FOUND",
    )
    .await;
    fails(&d, "/memories/forget", json!({}), 400, "INVALID_REQUEST").await;
    d.stop().await;
}

#[tokio::test]
async fn session_memories_are_seen_by_their_session_only_and_end_with_it() {
    let d = TestDaemon::start().await;
    store(&d, json!({"content": "Currently editing auth.py", "context": "session", "persist": false, "session": "s1"})).await;
    let own = recall(&d, json!({"query": "editing auth.py", "session": "s1"})).await;
    assert_eq!(contents(&own), ["Currently editing auth.py"]);
    assert_eq!(
        recall(&d, json!({"query": "editing auth.py", "session": "s2"})).await["items"],
        json!([])
    );
    assert_eq!(
        recall(&d, json!({"query": "editing auth.py"})).await["items"],
        json!([])
    );
    let (s, v) = d.call("DELETE", "/memories/sessions/s1", None).await;
    assert_eq!((s, v["removed"].as_i64()), (200, Some(1)), "{v}");
    assert_eq!(
        recall(&d, json!({"query": "editing auth.py", "session": "s1"})).await["items"],
        json!([])
    );

    // Over MCP a connection is its own session, ended when the client closes it.
    let mut mcp = d.mcp_with_toolsets("memory").await;
    let r = mcp
        .call_tool(
            "memory_store",
            json!({"content": "Looking at the cart", "persist": false}),
        )
        .await;
    assert_eq!(r["isError"], false, "{r}");
    let sid = r["structuredContent"]["memory"]["session"].clone();
    assert!(sid.as_str().unwrap().starts_with("mcp:"), "{r}");
    let r = mcp
        .call_tool("memory_recall", json!({"query": "cart"}))
        .await;
    assert_eq!(
        r["structuredContent"]["items"][0]["content"],
        "Looking at the cart"
    );
    let mut other = d.mcp_with_toolsets("memory").await;
    let r = other
        .call_tool("memory_recall", json!({"query": "cart"}))
        .await;
    assert_eq!(r["structuredContent"]["items"], json!([]));
    let named = json!({"query": "cart", "session": sid});
    let r = other.call_tool("memory_recall", named.clone()).await;
    assert_eq!(
        r["structuredContent"]["items"][0]["content"], "Looking at the cart",
        "a caller naming the session sees its memories while it lasts: {r}"
    );
    mcp.end().await;
    // Its memories go with it, even for a caller naming that session. The memory session ends
    // just after the DELETE is answered, so the test polls for it.
    moss_tests::wait_until(
        "the ended session's memories to go",
        std::time::Duration::from_secs(10),
        || async { recall(&d, named.clone()).await["items"] == json!([]) },
    )
    .await;
    d.stop().await;
}

/// A restart ends every session of a daemon that owns its store; on PostgreSQL, where other
/// daemons may be serving sessions on the same database, only those idle past
/// `session_ttl_seconds`.
#[tokio::test]
async fn a_restart_ends_the_sessions_it_may_end() {
    let d = TestDaemon::start().await;
    store(
        &d,
        json!({"content": "Currently editing auth.py", "persist": false, "session": "s1"}),
    )
    .await;
    let home = d.stop_keeping_home().await;
    let d = TestDaemon::start_in(home, None).await;
    let left = recall(&d, json!({"query": "editing auth.py", "session": "s1"})).await;
    if moss_tests::on_postgres() {
        assert_eq!(contents(&left), ["Currently editing auth.py"], "{left}");
    } else {
        assert_eq!(left["items"], json!([]), "{left}");
    }
    // Idle past the time to live, it ends at the next start on either engine.
    let home = d.stop_keeping_home().await;
    let d = TestDaemon::start_in(home, Some(json!({"memory": {"session_ttl_seconds": 1}}))).await;
    let d = {
        tokio::time::sleep(std::time::Duration::from_millis(2100)).await;
        let home = d.stop_keeping_home().await;
        TestDaemon::start_in(home, None).await
    };
    let left = recall(&d, json!({"query": "editing auth.py", "session": "s1"})).await;
    assert_eq!(left["items"], json!([]), "{left}");
    d.stop().await;
}

#[tokio::test]
async fn templates_render_slots_recalls_and_vars() {
    let d = TestDaemon::start_with_config(Some(json!({"memory": {
        "template": ["<system>\n", {"slot": "system"}, "</system>\n", "<context>\n", {"slot": "context"}, "</context>"],
        "templates": {"task": ["Context:\n", {"recall": "about auth.py"}, "\nTask: ", {"var": "task"}]}
    }}))).await;
    store(&d, json!({"content": "Be concise", "slot": "system"})).await;
    store(
        &d,
        json!({"content": "Last edit broke tests", "context": "auth.py"}),
    )
    .await;
    let r = ok(&d, "/memories/render", json!({"template": "default"})).await;
    assert_eq!(
        r["text"],
        "<system>\n- Be concise\n</system>\n<context>\n</context>"
    );
    assert_eq!(r["warnings"].as_array().unwrap().len(), 1, "{r}");
    assert!(r["warnings"][0].as_str().unwrap().contains("\"context\""));
    let r = ok(
        &d,
        "/memories/render",
        json!({"template": "task", "vars": {"task": "fix the login"}}),
    )
    .await;
    assert_eq!(
        r["text"],
        "Context:\n- Last edit broke tests\n\nTask: fix the login"
    );
    let r = ok(
        &d,
        "/memories/render",
        json!({"template": ["A", {"var": "missing"}, "B"], "max_chars": 1}),
    )
    .await;
    assert_eq!(
        (r["text"].as_str(), r["truncated"].as_bool()),
        (Some("…"), Some(true))
    );
    fails(
        &d,
        "/memories/render",
        json!({"template": "nope"}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    d.stop().await;
}

/// Over MCP, the tools without a `session` argument are not given one.
#[tokio::test]
async fn memory_tools_without_a_session_work_over_mcp() {
    let d = TestDaemon::start().await;
    let mut mcp = d.mcp_with_toolsets("memory").await;
    for (tool, args) in [
        ("memory_sources", json!({})),
        ("memory_sources_run", json!({})),
        ("memory_forget", json!({"slot": "none", "dry_run": true})),
        (
            "memory_event",
            json!({"event": "file_opened", "data": {"file": "a.py"}}),
        ),
    ] {
        let r = mcp.call_tool(tool, args).await;
        assert_eq!(r["isError"], false, "{tool}: {r}");
    }
    d.stop().await;
}

/// Recency counts from the latest store or recall: storing known knowledge again makes it recent
/// (an upsert moves `updated_at`), and a recall's own record (`recalled_at`) leaves `updated_at`
/// alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storing_known_knowledge_again_makes_it_recent() {
    use moss_client::memory::{Contexts, MemoryRecallRequest, MemoryStoreRequest};
    use moss_daemon::memory::Memories;
    use std::sync::Arc;

    let dir = tempfile::tempdir().unwrap();
    let (db, threads) = moss_daemon::schema::open_default(&dir.path().join("moss.db")).unwrap();
    let mem = Memories::new(
        db.clone(),
        Arc::new(moss_daemon::config::Config::default()),
        dir.path().to_path_buf(),
    );
    let req = |content: &str, weight: f64| MemoryStoreRequest {
        content: content.into(),
        context: Some(Contexts::One("deploy".into())),
        weight: Some(weight),
        ..Default::default()
    };
    let again = "Deploys go through the staging cluster first";
    let other = "Deploys need a green build";
    let a = mem.store(req(again, 1.0)).await.unwrap();
    let b = mem.store(req(other, 1.1)).await.unwrap();
    // Both stored sixty days ago.
    let old = moss_daemon::store::now() - 60 * 86_400;
    db.writer
        .run(move |ctx| {
            ctx.db().execute(
                "UPDATE memories SET created_at = ?1, updated_at = ?1",
                moss_daemon::db_params![old],
            )?;
            Ok(())
        })
        .await
        .unwrap();
    // Stored again today: the same knowledge, now recent.
    let stored = mem.store(req(again, 1.0)).await.unwrap();
    assert_eq!((stored.created, &stored.memory.id), (false, &a.memory.id));
    let recall = || {
        mem.recall(MemoryRecallRequest {
            context: Some("deploy".into()),
            explain: Some(true),
            ..Default::default()
        })
    };
    let r = recall().await.unwrap();
    let recency = |id: &str| {
        let item = r.items.iter().find(|i| i.memory.id == id).unwrap();
        item.explain.as_ref().unwrap().recency
    };
    assert!(recency(&a.memory.id) > 0.99, "{r:?}");
    assert!(recency(&b.memory.id) < 0.86, "{r:?}");
    assert_eq!(r.items[0].memory.content, again, "{r:?}");
    assert_eq!(r.items[0].memory.created_at, old, "{r:?}");

    // The recall is recorded as recalled_at; updated_at stays the latest store.
    let b_id = b.memory.id.clone();
    let (recalled_at, updated_at) = moss_tests::wait_for(
        "the recall to be recorded",
        std::time::Duration::from_secs(10),
        || {
            let id = b_id.clone();
            let readers = &db.readers;
            async move {
                let row: (Option<i64>, i64) = readers
                    .run_db(move |db| {
                        Ok(db.query_one(
                            "SELECT recalled_at, updated_at FROM memories WHERE id = ?1",
                            moss_daemon::db_params![&id],
                            |r| Ok((r.get(0)?, r.get(1)?)),
                        )?)
                    })
                    .await
                    .unwrap();
                row.0.is_some().then_some(row)
            }
        },
    )
    .await;
    assert!(recalled_at.is_some_and(|t| t > old), "{recalled_at:?}");
    assert_eq!(updated_at, old);
    // And a recall counts as much as a store.
    let r = recall().await.unwrap();
    assert!(
        r.items
            .iter()
            .all(|i| i.explain.as_ref().unwrap().recency > 0.99),
        "{r:?}"
    );
    db.writer.close().await;
    threads.join();
}

/// With both `context` and `query`, the context's memories are ranked by the query: one that
/// holds the query's words comes before one that does not; `context` alone lists them as before.
#[tokio::test]
async fn a_query_ranks_within_a_context() {
    let d = TestDaemon::start().await;
    store(&d, json!({"content": "Sessions expire after 30 minutes", "context": "src/auth.py", "weight": 2.0})).await;
    store(
        &d,
        json!({"content": "Passwords are hashed with argon2", "context": "src/auth.py"}),
    )
    .await;
    store(
        &d,
        json!({"content": "Auth tokens are signed with the KMS key", "context": "src"}),
    )
    .await;
    store(
        &d,
        json!({"content": "Passwords of service accounts rotate monthly", "context": "infra"}),
    )
    .await;

    let r = recall(
        &d,
        json!({"context": "src/auth.py", "query": "how are passwords hashed", "explain": true}),
    )
    .await;
    assert_eq!(
        contents(&r),
        [
            "Passwords are hashed with argon2",
            "Sessions expire after 30 minutes",
            "Auth tokens are signed with the KMS key"
        ],
        "{r}"
    );
    let (hit, miss) = (&r["items"][0]["explain"], &r["items"][1]["explain"]);
    assert!(hit["text"].as_f64().unwrap() > 0.5, "{hit}");
    assert_eq!(miss["text"], 0.0, "{miss}");
    assert!(
        hit["relevance"].as_f64() > miss["relevance"].as_f64(),
        "{r}"
    );
    assert_eq!(hit["context_match"], "exact");

    // The context alone: its memories by weight, relevance 1 for the exact ones.
    let r = recall(&d, json!({"context": "src/auth.py", "explain": true})).await;
    assert_eq!(
        contents(&r),
        [
            "Sessions expire after 30 minutes",
            "Passwords are hashed with argon2",
            "Auth tokens are signed with the KMS key"
        ],
        "{r}"
    );
    assert_eq!(r["items"][0]["explain"]["relevance"], 1.0);
    assert_eq!(r["items"][1]["explain"]["relevance"], 1.0);
    d.stop().await;
}

/// A forget by id reaches only the workspace it names: another workspace's memory, or a
/// `global` one when `global` is not named, is not found and stays.
#[tokio::test]
async fn a_forget_by_id_stays_in_its_workspace() {
    let d = TestDaemon::start().await;
    let a = store(
        &d,
        json!({"content": "Shop A ships from Leeds", "workspace": "shop-a"}),
    )
    .await;
    let g = store(
        &d,
        json!({"content": "User prefers dark mode", "workspace": "global"}),
    )
    .await;
    let (a_id, g_id) = (
        a["memory"]["id"].as_str().unwrap(),
        g["memory"]["id"].as_str().unwrap(),
    );
    for (body, ws) in [
        (json!({"id": a_id, "workspace": "shop-b"}), "shop-b"),
        (json!({"id": a_id}), "default"),
        (json!({"ids": [a_id], "workspace": "shop-b"}), "shop-b"),
        (json!({"id": g_id}), "default"),
        (json!({"id": g_id, "workspace": "shop-a"}), "shop-a"),
    ] {
        let e = fails(&d, "/memories/forget", body.clone(), 404, "NOT_FOUND").await;
        let id = body["id"].as_str().or(body["ids"][0].as_str()).unwrap();
        assert_eq!(
            (
                e["details"]["id"].as_str(),
                e["details"]["workspace"].as_str()
            ),
            (Some(id), Some(ws)),
            "{body}: {e}"
        );
        let msg = e["message"].as_str().unwrap();
        assert!(msg.contains(id) && msg.contains(ws), "{body}: {msg}");
    }
    // The answer says where the memory is.
    let e = fails(
        &d,
        "/memories/forget",
        json!({"id": a_id, "workspace": "shop-b"}),
        404,
        "NOT_FOUND",
    )
    .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("in workspace \"shop-a\""),
        "{e}"
    );
    // Both are still there.
    let r = recall(&d, json!({"query": "Leeds", "workspace": "shop-a"})).await;
    assert_eq!(contents(&r), ["Shop A ships from Leeds"]);
    let r = recall(&d, json!({"query": "dark mode"})).await;
    assert_eq!(contents(&r), ["User prefers dark mode"]);
    // Named, they go.
    let gone = ok(
        &d,
        "/memories/forget",
        json!({"id": a_id, "workspace": "shop-a"}),
    )
    .await;
    assert_eq!(gone["removed"][0]["id"], a_id);
    let gone = ok(
        &d,
        "/memories/forget",
        json!({"id": g_id, "workspace": "global"}),
    )
    .await;
    assert_eq!(gone["removed"][0]["id"], g_id);
    d.stop().await;
}
