//! Plans and tasks over REST and MCP: the walk-through, checkpoint gating, revisions, events
//! in the trace and the graph, pagination of context and delta, focus and radar.

use std::collections::HashSet;

use moss_tests::TestDaemon;
use serde_json::{Value, json};

use crate::reasoning::{chars, fails, ok};

async fn delta_all(d: &TestDaemon, ws: &str, limit: i64) -> Vec<Value> {
    let (mut out, mut since) = (Vec::new(), Value::Null);
    loop {
        let page = ok(
            d,
            "/tasks/delta",
            json!({"workspace": ws, "since": since, "limit": limit}),
        )
        .await;
        out.extend(page["events"].as_array().unwrap().iter().cloned());
        if !page["has_more"].as_bool().unwrap() {
            return out;
        }
        since = page["next_cursor"].clone();
    }
}

#[tokio::test]
async fn a_plan_and_a_task_from_creation_to_a_finished_step() {
    let d = TestDaemon::start().await;
    let ws = "walk";
    let plan = ok(
        &d,
        "/tasks/create",
        json!({"workspace": ws, "title": "Ship v2", "contract": "v2 is live"}),
    )
    .await;
    assert_eq!(
        (plan["item"]["id"].as_str(), plan["item"]["kind"].as_str()),
        (Some("PLAN-001"), Some("plan"))
    );
    assert_eq!(plan["event"]["type"], "plan_created");
    let task = ok(&d, "/tasks/create", json!({"workspace": ws, "title": "Migrate the schema", "parent": "PLAN-001",
        "description": "Add the new tables", "steps": [{"title": "Write the migration", "success_criteria": ["applies twice"], "tests": ["cargo test migrations"]}]})).await;
    assert_eq!(task["item"]["id"], "TASK-001");
    assert_eq!(task["item"]["revision"], 1);
    assert_eq!(
        task["reasoning_ref"],
        json!({"branch": "task/TASK-001", "notes_doc": "notes", "graph_doc": "TASK-001-graph", "trace_doc": "TASK-001-trace"})
    );
    assert_eq!(task["steps"][0]["path"], "s:0");
    let dec = ok(&d, "/tasks/decompose", json!({"workspace": ws, "task": "TASK-001", "steps": [{"title": "Backfill"}, {"title": "Drop the old table"}], "expected_revision": 1})).await;
    assert_eq!(dec["item"]["revision"], 2);
    let paths: Vec<&str> = dec["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["s:1", "s:2"]);
    let sub = ok(&d, "/tasks/decompose", json!({"workspace": ws, "task": "TASK-001", "parent": "s:1", "steps": [{"title": "Batch 1"}]})).await;
    assert_eq!(sub["steps"][0]["path"], "s:1.s:0");

    // Done is gated on both checkpoints, and the refusal carries the call that confirms them.
    let e = fails(
        &d,
        "/tasks/done",
        json!({"workspace": ws, "task": "TASK-001", "path": "s:0"}),
        409,
        "CHECKPOINTS_UNCONFIRMED",
    )
    .await;
    let call = e["details"]["suggested_call"].clone();
    assert_eq!(call["tool"], "tasks_verify");
    assert_eq!(
        call["arguments"]["checkpoints"],
        json!({"criteria": {"confirmed": true}, "tests": {"confirmed": true}})
    );
    ok(&d, "/tasks/verify", call["arguments"].clone()).await;
    // New criteria reset that checkpoint.
    let def = ok(&d, "/tasks/define", json!({"workspace": ws, "task": "TASK-001", "path": "s:0", "success_criteria": ["applies twice", "is reversible"]})).await;
    assert_eq!(
        (
            def["steps"][0]["criteria_confirmed"].as_bool(),
            def["steps"][0]["tests_confirmed"].as_bool()
        ),
        (Some(false), Some(true))
    );
    let e = fails(
        &d,
        "/tasks/done",
        json!({"workspace": ws, "task": "TASK-001", "path": "s:0"}),
        409,
        "CHECKPOINTS_UNCONFIRMED",
    )
    .await;
    assert_eq!(e["details"]["missing"], json!(["criteria"]));
    ok(&d, "/tasks/verify", json!({"workspace": ws, "task": "TASK-001", "step_id": "STEP-0001", "checkpoints": {"criteria": {"confirmed": true}}})).await;
    ok(&d, "/tasks/note", json!({"workspace": ws, "task": "TASK-001", "step_id": "STEP-0001", "note": "applied on a copy of prod"})).await;
    let done = ok(
        &d,
        "/tasks/done",
        json!({"workspace": ws, "task": "TASK-001", "step_id": "STEP-0001"}),
    )
    .await;
    assert_eq!(done["steps"][0]["status"], "done");
    assert_eq!(done["event"]["type"], "step_done");
    // A parent step waits for its sub-steps.
    ok(&d, "/tasks/verify", json!({"workspace": ws, "task": "TASK-001", "path": "s:1", "checkpoints": {"criteria": {"confirmed": true}, "tests": {"confirmed": true}}})).await;
    fails(
        &d,
        "/tasks/done",
        json!({"workspace": ws, "task": "TASK-001", "path": "s:1"}),
        409,
        "CONFLICT",
    )
    .await;

    // The radar.
    let radar = ok(
        &d,
        "/tasks/radar",
        json!({"workspace": ws, "task": "TASK-001"}),
    )
    .await;
    assert_eq!(radar["radar"]["now"], "Task TASK-001: Migrate the schema");
    assert_eq!(radar["radar"]["why"], "Add the new tables");
    assert_eq!(
        (
            radar["steps"]["total"].as_i64(),
            radar["steps"]["done"].as_i64(),
            radar["steps"]["open"].as_i64()
        ),
        (Some(4), Some(1), Some(3))
    );
    assert_eq!(radar["steps"]["first_open"]["path"], "s:1");
    assert!(
        radar["radar"]["next"][0].as_str().unwrap().contains("s:1"),
        "{radar}"
    );

    // Every mutation is in the trace exactly once, with its event id, in order.
    let events: Vec<Value> = delta_all(&d, ws, 3)
        .await
        .into_iter()
        .filter(|e| e["task_id"] == "TASK-001")
        .collect();
    let trace = ok(
        &d,
        "/reasoning/show",
        json!({"workspace": ws, "target": "TASK-001", "doc_kind": "trace", "limit": 200}),
    )
    .await;
    let mut traced: Vec<String> = trace["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            assert_eq!(e["kind"], "event");
            e["source_event_id"].as_str().unwrap().to_string()
        })
        .collect();
    traced.reverse();
    let ids: Vec<String> = events
        .iter()
        .map(|e| e["event_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(traced, ids);
    assert_eq!(
        ids.len(),
        9,
        "create, 2 decompose, verify, define, verify, note, done, verify"
    );
    // The note is also in the task's notes.
    let notes = ok(
        &d,
        "/reasoning/show",
        json!({"workspace": ws, "target": "TASK-001"}),
    )
    .await;
    assert_eq!(notes["entries"][0]["content"], "applied on a copy of prod");

    // The graph projection: the task node, step nodes with their status, contains edges.
    let g = ok(
        &d,
        "/reasoning/graph/query",
        json!({"workspace": ws, "target": "TASK-001", "limit": 200}),
    )
    .await;
    let status = |id: &str| {
        g["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["id"] == id)
            .map(|n| n["status"].clone())
    };
    assert_eq!(status("task:TASK-001"), Some(json!("open")));
    assert_eq!(status("step:STEP-0001"), Some(json!("done")));
    assert_eq!(status("step:STEP-0004"), Some(json!("open")));
    let contains: HashSet<(String, String)> = g["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["from"].as_str().unwrap().into(),
                e["to"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(contains.contains(&("task:TASK-001".into(), "step:STEP-0001".into())));
    assert!(
        contains.contains(&("step:STEP-0002".into(), "step:STEP-0004".into())),
        "{contains:?}"
    );
    let v = ok(
        &d,
        "/reasoning/graph/validate",
        json!({"workspace": ws, "target": "TASK-001"}),
    )
    .await;
    assert_eq!(v["ok"], true);
    // Export: the target, its ref, the newest trace and notes, bounded.
    let export = ok(
        &d,
        "/reasoning/export",
        json!({"workspace": ws, "target": "TASK-001", "trace_limit": 3}),
    )
    .await;
    assert_eq!(export["target"]["id"], "TASK-001");
    assert_eq!(export["trace"]["entries"].as_array().unwrap().len(), 3);
    assert_eq!(export["notes"]["entries"].as_array().unwrap().len(), 1);
    let small = ok(
        &d,
        "/reasoning/export",
        json!({"workspace": ws, "target": "TASK-001", "max_chars": 1200}),
    )
    .await;
    assert!(chars(&small) <= 1200 && small["truncated"] == true);

    // The plan's own trace has its creation; edits land there too.
    ok(
        &d,
        "/tasks/edit",
        json!({"workspace": ws, "task": "PLAN-001", "description": "Q3", "expected_revision": 1}),
    )
    .await;
    let plan_trace = ok(
        &d,
        "/reasoning/show",
        json!({"workspace": ws, "target": "PLAN-001", "doc_kind": "trace"}),
    )
    .await;
    let types: Vec<&str> = plan_trace["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event_type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["item_edited", "plan_created"]);
    d.stop().await;
}

#[tokio::test]
async fn a_stale_revision_writes_nothing() {
    let d = TestDaemon::start().await;
    let ws = "rev";
    ok(&d, "/tasks/create", json!({"workspace": ws, "title": "P"})).await;
    ok(
        &d,
        "/tasks/create",
        json!({"workspace": ws, "title": "T", "parent": "PLAN-001", "steps": [{"title": "s"}]}),
    )
    .await;
    let before = delta_all(&d, ws, 100).await.len();
    let trace_before = ok(
        &d,
        "/reasoning/show",
        json!({"workspace": ws, "target": "TASK-001", "doc_kind": "trace"}),
    )
    .await["entries"]
        .as_array()
        .unwrap()
        .len();
    for (path, body) in [
        (
            "/tasks/decompose",
            json!({"workspace": ws, "task": "TASK-001", "steps": [{"title": "x"}], "expected_revision": 7}),
        ),
        (
            "/tasks/define",
            json!({"workspace": ws, "task": "TASK-001", "path": "s:0", "title": "y", "expected_revision": 0}),
        ),
        (
            "/tasks/edit",
            json!({"workspace": ws, "task": "TASK-001", "title": "z", "expected_revision": 2}),
        ),
        (
            "/tasks/verify",
            json!({"workspace": ws, "task": "TASK-001", "path": "s:0", "checkpoints": {"tests": {"confirmed": true}}, "expected_revision": 5}),
        ),
    ] {
        let e = fails(&d, path, body, 409, "CONFLICT").await;
        assert_eq!(e["details"]["current_revision"], 1, "{path}: {e}");
        assert!(e["details"]["expected_revision"].is_i64());
    }
    assert_eq!(delta_all(&d, ws, 100).await.len(), before, "no event");
    let trace_after = ok(
        &d,
        "/reasoning/show",
        json!({"workspace": ws, "target": "TASK-001", "doc_kind": "trace"}),
    )
    .await["entries"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(trace_after, trace_before, "no trace entry");
    let radar = ok(
        &d,
        "/tasks/radar",
        json!({"workspace": ws, "task": "TASK-001"}),
    )
    .await;
    assert_eq!(
        (
            radar["target"]["revision"].as_i64(),
            radar["target"]["title"].as_str()
        ),
        (Some(1), Some("T"))
    );
    assert_eq!(radar["steps"]["total"], 1);
    d.stop().await;
}

#[tokio::test]
async fn context_and_delta_pages_visit_every_item_once() {
    let d = TestDaemon::start().await;
    let ws = "pages";
    ok(&d, "/tasks/create", json!({"workspace": ws, "title": "P"})).await;
    for i in 0..12 {
        ok(
            &d,
            "/tasks/create",
            json!({"workspace": ws, "title": format!("T{i}"), "parent": "PLAN-001"}),
        )
        .await;
    }
    let (mut ids, mut cursor) = (Vec::new(), Value::Null);
    loop {
        let page = ok(
            &d,
            "/tasks/context",
            json!({"workspace": ws, "limit": 5, "cursor": cursor}),
        )
        .await;
        ids.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["id"].as_str().unwrap().to_string()),
        );
        if !page["pagination"]["has_more"].as_bool().unwrap() {
            break;
        }
        cursor = page["pagination"]["next_cursor"].clone();
    }
    assert_eq!(ids.len(), 13);
    assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 13);
    assert_eq!(
        (ids[0].as_str(), ids[12].as_str()),
        ("TASK-012", "PLAN-001")
    );
    // Under a tight budget too.
    let (mut n, mut cursor) = (0, Value::Null);
    loop {
        let page = ok(
            &d,
            "/tasks/context",
            json!({"workspace": ws, "limit": 50, "cursor": cursor, "max_chars": 1200}),
        )
        .await;
        assert!(chars(&page) <= 1200);
        n += page["items"].as_array().unwrap().len();
        if !page["pagination"]["has_more"].as_bool().unwrap() {
            break;
        }
        cursor = page["pagination"]["next_cursor"].clone();
    }
    assert_eq!(n, 13);
    let events = delta_all(&d, ws, 4).await;
    assert_eq!(events.len(), 13);
    let mut sorted = events.clone();
    sorted.sort_by(|a, b| a["event_id"].as_str().cmp(&b["event_id"].as_str()));
    assert_eq!(sorted, events, "ascending");
    let (mut n, mut since) = (0, Value::Null);
    loop {
        let page = ok(
            &d,
            "/tasks/delta",
            json!({"workspace": ws, "since": since, "max_chars": 700}),
        )
        .await;
        assert!(chars(&page) <= 700);
        n += page["events"].as_array().unwrap().len();
        if !page["has_more"].as_bool().unwrap() {
            break;
        }
        since = page["next_cursor"].clone();
    }
    assert_eq!(n, 13);
    let last = ok(
        &d,
        "/tasks/delta",
        json!({"workspace": ws, "since": events[12]["event_id"]}),
    )
    .await;
    assert_eq!(
        (
            last["events"].as_array().unwrap().len(),
            &last["next_cursor"]
        ),
        (0, &events[12]["event_id"])
    );
    fails(
        &d,
        "/tasks/delta",
        json!({"workspace": ws, "since": "yesterday"}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    d.stop().await;
}

#[tokio::test]
async fn focus_radar_and_bad_targets() {
    let d = TestDaemon::start().await;
    let ws = "focus";
    let e = fails(
        &d,
        "/tasks/radar",
        json!({"workspace": ws}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(e["details"]["suggested_call"]["tool"], "tasks_context");
    let e = fails(
        &d,
        "/tasks/focus/set",
        json!({"workspace": ws, "task": "TASK-404"}),
        404,
        "NOT_FOUND",
    )
    .await;
    assert_eq!(e["details"]["suggested_call"]["tool"], "tasks_context");
    fails(
        &d,
        "/tasks/create",
        json!({"workspace": ws, "title": "orphan", "kind": "task"}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    fails(
        &d,
        "/tasks/create",
        json!({"workspace": ws, "title": "T", "parent": "PLAN-001"}),
        404,
        "NOT_FOUND",
    )
    .await;
    ok(
        &d,
        "/tasks/create",
        json!({"workspace": ws, "title": "P", "steps": [{"title": "a"}]}),
    )
    .await;
    let f = ok(
        &d,
        "/tasks/focus/set",
        json!({"workspace": ws, "task": "plan-001"}),
    )
    .await;
    assert_eq!(f["focus"], "PLAN-001");
    assert_eq!(
        ok(&d, "/tasks/focus/get", json!({"workspace": ws})).await["focus"],
        "PLAN-001"
    );
    let radar = ok(&d, "/tasks/radar", json!({"workspace": ws})).await;
    assert_eq!(
        (radar["target"]["id"].as_str(), radar["focus"].as_str()),
        (Some("PLAN-001"), Some("PLAN-001"))
    );
    assert_eq!(radar["reasoning_ref"]["branch"], "plan/PLAN-001");
    let c = ok(&d, "/tasks/focus/clear", json!({"workspace": ws})).await;
    assert_eq!(
        (c["focus"].clone(), c["previous"].clone()),
        (Value::Null, json!("PLAN-001"))
    );
    fails(
        &d,
        "/tasks/done",
        json!({"workspace": ws, "task": "PLAN-001", "step_id": "STEP-0009"}),
        404,
        "NOT_FOUND",
    )
    .await;
    fails(
        &d,
        "/tasks/done",
        json!({"workspace": ws, "task": "PLAN-001", "step_id": "STEP-0001", "path": "s:0"}),
        400,
        "AMBIGUOUS_ADDRESSING",
    )
    .await;
    // The canonical branch is listed and readable by target.
    let list = ok(&d, "/reasoning/branch/list", json!({"workspace": ws})).await;
    assert_eq!(list["branches"][0]["name"], "plan/PLAN-001");
    d.stop().await;
}

/// A task with 200 steps: the radar stays one bounded screen.
#[tokio::test]
async fn the_radar_of_a_large_task_is_bounded() {
    let d = TestDaemon::start().await;
    let ws = "big";
    ok(&d, "/tasks/create", json!({"workspace": ws, "title": "P"})).await;
    let steps: Vec<Value> = (0..200)
        .map(|i| json!({"title": format!("step {i}"), "success_criteria": ["ok"]}))
        .collect();
    ok(
        &d,
        "/tasks/create",
        json!({"workspace": ws, "title": "T", "parent": "PLAN-001", "steps": steps}),
    )
    .await;
    for i in 0..5 {
        ok(&d, "/tasks/define", json!({"workspace": ws, "task": "TASK-001", "path": format!("s:{i}"), "blockers": [format!("waiting on {}", "x".repeat(200))]})).await;
    }
    let radar = ok(
        &d,
        "/tasks/radar",
        json!({"workspace": ws, "task": "TASK-001", "max_chars": 1500}),
    )
    .await;
    assert!(chars(&radar) <= 1500);
    assert_eq!(radar["steps"]["total"], 200);
    assert_eq!(radar["truncated"], true);
    d.stop().await;
}

#[tokio::test]
async fn the_family_works_over_mcp_and_the_client() {
    let d = TestDaemon::start().await;
    let mut mcp = d.mcp_with_toolsets("tasks").await;
    let names: Vec<String> = mcp
        .list_tools()
        .await
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let registered: Vec<&str> = moss_daemon::family::family("tasks")
        .unwrap()
        .tools
        .iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, registered);
    let r = mcp
        .call_tool("tasks_create", json!({"workspace": "m", "title": "P"}))
        .await;
    assert_eq!(r["structuredContent"]["item"]["id"], "PLAN-001", "{r}");
    let r = mcp.call_tool("tasks_create", json!({"workspace": "m", "title": "T", "parent": "PLAN-001", "steps": [{"title": "s"}]})).await;
    assert_eq!(r["isError"], false);
    let r = mcp
        .call_tool(
            "tasks_done",
            json!({"workspace": "m", "task": "TASK-001", "path": "s:0"}),
        )
        .await;
    assert_eq!(r["isError"], true);
    assert_eq!(
        r["structuredContent"]["error"]["code"],
        "CHECKPOINTS_UNCONFIRMED"
    );
    let radar = d
        .client
        .tasks()
        .radar(&moss_client::tasks::TasksRadarRequest {
            workspace: "m".into(),
            task: Some("TASK-001".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(radar.reasoning_ref.trace_doc, "TASK-001-trace");
    assert_eq!(radar.steps.open, 1);
    d.stop().await;
}
