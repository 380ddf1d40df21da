//! The cross-family toolset (`moss_*`): one call to resume a task, one search over every
//! family, every workspace with its counts. Over REST and MCP.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use crate::reasoning::{chars, ok};

/// A task with, from each family, something of its own: a capsule handed off for it, a note,
/// a decision card, a question card and a memory on its id. Each carries a word of its own.
async fn seed(d: &TestDaemon, ws: &str) {
    ok(
        d,
        "/tasks/create",
        json!({"workspace": ws, "title": "Refund flow",
        "steps": [{"title": "Write the zephyrstep endpoint"}]}),
    )
    .await;
    ok(
        d,
        "/tasks/create",
        json!({"workspace": ws, "title": "Ship refunds", "parent": "PLAN-001"}),
    )
    .await;
    let (s, v) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"workspace": ws, "name": "handoff",
            "task": "TASK-001", "capsule_text": capsule_text("quokkacapsule handoff")})),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    ok(
        d,
        "/reasoning/notes/commit",
        json!({"workspace": ws, "target": "TASK-001",
        "content": "Refunds go through the same interface; marmosetnote"}),
    )
    .await;
    ok(
        d,
        "/reasoning/think/card",
        json!({"workspace": ws, "target": "TASK-001",
        "card": {"id": "d1", "type": "decision", "title": "Use the payments queue"}}),
    )
    .await;
    ok(
        d,
        "/reasoning/think/card",
        json!({"workspace": ws, "target": "TASK-001",
        "card": {"id": "q1", "type": "question", "title": "Partial refunds?"}}),
    )
    .await;
    ok(
        d,
        "/memories",
        json!({"workspace": ws, "content": "User prefers tabs; wombatmemory",
        "context": "TASK-001"}),
    )
    .await;
}

fn ids(section: &Value) -> Vec<String> {
    section
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["title"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn context_for_a_task_gathers_every_family_within_its_budget() {
    let d = TestDaemon::start().await;
    seed(&d, "shop").await;
    let c = ok(
        &d,
        "/context",
        json!({"workspace": "shop", "task": "TASK-001"}),
    )
    .await;
    assert_eq!(c["task"], "TASK-001");
    assert_eq!(c["radar"]["title"], "Ship refunds");
    assert_eq!(ids(&c["handoffs"]), ["handoff"]);
    assert!(
        c["handoffs"][0]["text"]
            .as_str()
            .unwrap()
            .contains("quokkacapsule"),
        "the newest handoff comes with its text: {c}"
    );
    assert_eq!(ids(&c["decisions"]), ["Use the payments queue"]);
    assert_eq!(ids(&c["questions"]), ["Partial refunds?"]);
    assert!(ids(&c["notes"])[0].contains("marmosetnote"), "{c}");
    assert!(ids(&c["memories"])[0].contains("wombatmemory"), "{c}");
    assert!(!c["changes"].as_array().unwrap().is_empty());
    // Every item says how to open it, and the call works.
    for section in [
        "handoffs",
        "decisions",
        "questions",
        "notes",
        "memories",
        "changes",
    ] {
        for item in c[section].as_array().unwrap() {
            let open = &item["open"];
            assert!(open["tool"].is_string(), "{section}: {item}");
        }
    }
    let open = &c["handoffs"][0]["open"];
    assert_eq!(open["tool"], "capsule_fetch");
    let mut mcp = d.mcp().await;
    let fetched = mcp
        .call_tool(open["tool"].as_str().unwrap(), open["arguments"].clone())
        .await;
    assert!(fetched.to_string().contains("quokkacapsule"), "{fetched}");
    let note_open = &c["notes"][0]["open"];
    let shown = mcp
        .call_tool(
            note_open["tool"].as_str().unwrap(),
            note_open["arguments"].clone(),
        )
        .await;
    assert!(shown.to_string().contains("marmosetnote"), "{shown}");

    // The same over MCP, and the focus stands in for a task.
    ok(
        &d,
        "/tasks/focus/set",
        json!({"workspace": "shop", "task": "TASK-001"}),
    )
    .await;
    let over_mcp = mcp
        .call_tool("moss_context", json!({"workspace": "shop"}))
        .await;
    assert!(over_mcp.to_string().contains("wombatmemory"), "{over_mcp}");

    // A hard budget: sections go in the documented order, and the answer says so.
    let small = ok(
        &d,
        "/context",
        json!({"workspace": "shop", "task": "TASK-001", "max_chars": 1500}),
    )
    .await;
    assert!(chars(&small) <= 1500, "{} chars", chars(&small));
    assert_eq!(small["truncated"], true);
    let dropped: Vec<&str> = small["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(dropped.first(), Some(&"changes"), "{small}");
    assert_eq!(
        ids(&small["handoffs"]),
        ["handoff"],
        "handoffs go last: {small}"
    );
}

#[tokio::test]
async fn context_without_a_task_and_of_an_empty_workspace() {
    let d = TestDaemon::start().await;
    seed(&d, "shop").await;
    let c = ok(&d, "/context", json!({"workspace": "shop"})).await;
    assert_eq!(c["task"], Value::Null);
    assert_eq!(ids(&c["handoffs"]), ["handoff"]);
    let open: Vec<String> = ids(&c["open_tasks"]);
    assert!(open.contains(&"Ship refunds".to_string()), "{c}");
    assert_eq!(ids(&c["decisions"]), ["Use the payments queue"]);
    let empty = ok(&d, "/context", json!({"workspace": "nothing-here"})).await;
    assert!(
        empty["hint"].as_str().unwrap().contains("moss_workspaces"),
        "{empty}"
    );
    let (s, v) = d
        .call(
            "POST",
            "/context",
            Some(json!({"workspace": "shop", "task": "TASK-042"})),
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (404, Some("NOT_FOUND")),
        "{v}"
    );
}

#[tokio::test]
async fn search_finds_each_family_in_one_call_with_scores_in_0_1() {
    let d = TestDaemon::start().await;
    seed(&d, "shop").await;
    seed(&d, "other").await;
    for word in [
        "quokkacapsule",
        "marmosetnote",
        "zephyrstep",
        "wombatmemory",
    ] {
        let (s, v) = d
            .call("GET", &format!("/search?query={word}&workspace=shop"), None)
            .await;
        assert_eq!(s, 200, "{v}");
        let items = v["items"].as_array().unwrap();
        assert_eq!(items.len(), 1, "{word}: {v}");
        assert_eq!(items[0]["workspace"], "shop");
        assert!(items[0]["snippet"].as_str().unwrap().contains("<b>"), "{v}");
    }
    let (_, all) = d
        .call(
            "GET",
            "/search?query=quokkacapsule+OR+marmosetnote+OR+zephyrstep+OR+wombatmemory",
            None,
        )
        .await;
    let items = all["items"].as_array().unwrap();
    let families: std::collections::BTreeSet<&str> = items
        .iter()
        .map(|h| h["family"].as_str().unwrap())
        .collect();
    assert_eq!(
        families.into_iter().collect::<Vec<_>>(),
        ["capsule", "memory", "reasoning", "tasks"],
        "{all}"
    );
    for h in items {
        let score = h["score"].as_f64().unwrap();
        assert!(score > 0.0 && score <= 1.0, "{h}");
        assert!(h["open"]["tool"].is_string(), "{h}");
    }
    // Pages: a cursor continues where the last page stopped, each hit once.
    let (_, first) = d
        .call("GET", "/search?query=refunds+OR+handoff&limit=2", None)
        .await;
    let next = first["pagination"]["next_cursor"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, second) = d
        .call(
            "GET",
            &format!("/search?query=refunds+OR+handoff&limit=2&cursor={next}"),
            None,
        )
        .await;
    let a: Vec<&Value> = first["items"].as_array().unwrap().iter().collect();
    let b: Vec<&Value> = second["items"].as_array().unwrap().iter().collect();
    assert!(
        a.iter().all(|x| !b.contains(x)),
        "pages overlap: {first} {second}"
    );
    // Families narrow it, and a bad one is named.
    let (_, only) = d
        .call(
            "GET",
            "/search?query=refunds&families=memory,reasoning",
            None,
        )
        .await;
    assert!(
        only["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["family"] != "capsule")
    );
    let (s, bad) = d
        .call("GET", "/search?query=x&families=capsules", None)
        .await;
    assert_eq!(s, 400, "{bad}");
    assert_eq!(bad["error"]["details"]["field"], "families", "{bad}");
    // Over MCP.
    let mut mcp = d.mcp().await;
    let v = mcp
        .call_tool(
            "moss_search",
            json!({"query": "wombatmemory", "workspace": "other"}),
        )
        .await;
    assert!(v.to_string().contains("\"family\":\"memory\""), "{v}");
}

#[tokio::test]
async fn workspaces_list_every_family_s_counts() {
    let d = TestDaemon::start().await;
    seed(&d, "shop").await;
    ok(
        &d,
        "/memories",
        json!({"workspace": "solo", "content": "only a memory"}),
    )
    .await;
    let (s, v) = d.call("GET", "/workspaces", None).await;
    assert_eq!(s, 200, "{v}");
    let items = v["items"].as_array().unwrap();
    let shop = items.iter().find(|w| w["workspace"] == "shop").unwrap();
    assert_eq!(
        shop["counts"],
        json!({"capsules": 1, "reasoning": shop["counts"]["reasoning"], "tasks": 2, "memories": 1})
    );
    assert!(shop["counts"]["reasoning"].as_i64().unwrap() >= 3, "{shop}");
    assert!(shop["last_activity"].is_string());
    let solo = items.iter().find(|w| w["workspace"] == "solo").unwrap();
    assert_eq!(
        solo["counts"],
        json!({"capsules": 0, "reasoning": 0, "tasks": 0, "memories": 1})
    );
    let times: Vec<&str> = items
        .iter()
        .map(|w| w["last_activity"].as_str().unwrap())
        .collect();
    assert!(
        times.windows(2).all(|p| p[0] >= p[1]),
        "most recent first: {v}"
    );
}

/// The counts `moss_workspaces` gives follow every write, as they are kept with the items:
/// store, update, soft delete, restore, purge, forget and import, down to a workspace that
/// holds nothing and is no longer listed.
#[tokio::test]
async fn workspace_counts_follow_every_write() {
    let d = TestDaemon::start().await;
    let mut mcp = d.mcp().await;
    let mut call = async |tool: &str, args: Value| {
        let r = mcp.call_tool(tool, args).await;
        assert_eq!(r["isError"], false, "{tool}: {r}");
        r["structuredContent"].clone()
    };
    let counts = async || -> Option<(i64, i64)> {
        let (s, v) = d.call("GET", "/workspaces", None).await;
        assert_eq!(s, 200, "{v}");
        let items = v["items"].as_array().unwrap();
        let w = items.iter().find(|w| w["workspace"] == "tally")?;
        Some((
            w["counts"]["capsules"].as_i64().unwrap(),
            w["counts"]["memories"].as_i64().unwrap(),
        ))
    };
    let at = |name: &str| json!({"workspace": "tally", "name": name});
    for name in ["a", "b"] {
        call(
            "capsule_store",
            json!({"workspace": "tally", "name": name, "capsule_text": capsule_text(name)}),
        )
        .await;
    }
    assert_eq!(counts().await, Some((2, 0)), "stored");
    let mut update = at("a");
    update["title"] = json!("Renamed");
    call("capsule_update", update).await;
    assert_eq!(counts().await, Some((2, 0)), "updated");
    call("capsule_delete", at("a")).await;
    assert_eq!(counts().await, Some((1, 0)), "soft-deleted");
    call("capsule_restore", at("a")).await;
    assert_eq!(counts().await, Some((2, 0)), "restored");
    call("capsule_delete", at("a")).await;
    call("capsule_purge", json!({"workspace": "tally"})).await;
    assert_eq!(counts().await, Some((1, 0)), "purged");
    call(
        "capsule_export",
        json!({"workspace": "tally", "path": "tally.jsonl"}),
    )
    .await;
    call("capsule_delete", at("b")).await;
    assert_eq!(
        counts().await,
        Some((0, 0)),
        "a soft-deleted capsule keeps it listed"
    );
    call("capsule_purge", json!({"workspace": "tally"})).await;
    assert_eq!(counts().await, None, "nothing left");
    call("capsule_import", json!({"path": "tally.jsonl"})).await;
    assert_eq!(counts().await, Some((1, 0)), "imported");
    let mut ids = Vec::new();
    for content in ["first memory", "second memory"] {
        let r = call(
            "memory_store",
            json!({"workspace": "tally", "content": content}),
        )
        .await;
        ids.push(r["memory"]["id"].as_str().unwrap().to_string());
    }
    call(
        "memory_store",
        json!({"workspace": "tally", "content": "first memory"}),
    )
    .await;
    assert_eq!(counts().await, Some((1, 2)), "stored twice is one memory");
    call("memory_forget", json!({"workspace": "tally", "id": ids[0]})).await;
    assert_eq!(counts().await, Some((1, 1)), "forgotten");
}

#[tokio::test]
async fn a_capsule_handed_off_for_a_task_shows_in_its_trace_radar_and_list() {
    let d = TestDaemon::start().await;
    seed(&d, "shop").await;
    // The link comes back on fetch and list, and list filters by it.
    let (_, c) = d
        .call("GET", "/capsules/by-name?workspace=shop&name=handoff", None)
        .await;
    assert_eq!(c["task"], "TASK-001", "{c}");
    let (_, other) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"workspace": "shop", "name": "unrelated",
            "capsule_text": capsule_text("nothing to do with it")})),
        )
        .await;
    assert!(other["id"].is_string(), "{other}");
    let (_, page) = d
        .call("GET", "/capsules?workspace=shop&task=task-001", None)
        .await;
    let names: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["handoff"], "{page}");
    // The handoff is an event of the task's trace.
    let trace = ok(
        &d,
        "/reasoning/show",
        json!({"workspace": "shop", "target": "TASK-001",
        "doc_kind": "trace"}),
    )
    .await;
    let handoffs: Vec<&Value> = trace["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event_type"] == "capsule_handoff")
        .collect();
    assert_eq!(handoffs.len(), 1, "{trace}");
    assert_eq!(handoffs[0]["payload"]["name"], "handoff");
    // The radar lists it and counts the memories on the task's id.
    let radar = ok(
        &d,
        "/tasks/radar",
        json!({"workspace": "shop", "task": "TASK-001"}),
    )
    .await;
    assert_eq!(radar["handoffs"][0]["name"], "handoff", "{radar}");
    assert_eq!(radar["handoffs"][0]["revision"], 1);
    assert_eq!(radar["memories"], 1, "{radar}");
    // An update that sets the task again is another handoff; a clone keeps the link.
    let (s, v) = d
        .call(
            "PUT",
            "/capsules/by-name?workspace=shop&name=unrelated",
            Some(json!({"task": "TASK-001"})),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    let radar = ok(
        &d,
        "/tasks/radar",
        json!({"workspace": "shop", "task": "TASK-001"}),
    )
    .await;
    assert_eq!(
        radar["handoffs"][0]["name"], "unrelated",
        "newest first: {radar}"
    );
    let (s, v) = d
        .call(
            "POST",
            "/capsules/clone",
            Some(json!({"source": {"workspace": "shop",
            "name": "handoff"}, "target": {"name": "handoff-copy"}})),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    let (_, copy) = d
        .call(
            "GET",
            "/capsules/by-name?workspace=shop&name=handoff-copy",
            None,
        )
        .await;
    assert_eq!(copy["task"], "TASK-001", "{copy}");
    // A task that is not the workspace's is refused, naming the call that lists them.
    let (s, v) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"workspace": "shop", "name": "lost",
            "task": "TASK-099", "capsule_text": capsule_text("lost")})),
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (404, Some("NOT_FOUND")),
        "{v}"
    );
    assert_eq!(
        v["error"]["details"]["suggested_call"]["tool"], "tasks_context",
        "{v}"
    );
    assert_eq!(v["error"]["details"]["field"], "task", "{v}");
    // Over MCP, the same store with the link.
    let mut mcp = d.mcp().await;
    let stored = mcp
        .call_tool(
            "capsule_store",
            json!({"workspace": "shop", "name": "over-mcp",
            "task": "TASK-001", "capsule_text": capsule_text("over mcp")}),
        )
        .await;
    assert!(stored.to_string().contains("fetch_key"), "{stored}");
    let c = ok(
        &d,
        "/context",
        json!({"workspace": "shop", "task": "TASK-001"}),
    )
    .await;
    assert_eq!(c["handoffs"][0]["title"], "over-mcp", "{c}");
}

/// An empty capsule_list or capsule_latest of a workspace that holds nothing in any family says
/// so, over REST and MCP; one that holds other families' things, or capsules, has no hint.
#[tokio::test]
async fn capsule_reads_of_an_empty_workspace_hint_at_moss_workspaces() {
    let d = TestDaemon::start().await;
    seed(&d, "shop").await;
    ok(
        &d,
        "/tasks/create",
        json!({"workspace": "plans-only", "title": "Only a plan"}),
    )
    .await;
    for path in [
        "/capsules?workspace=nothing-here",
        "/capsules/latest?workspace=nothing-here",
    ] {
        let (s, v) = d.call("GET", path, None).await;
        assert_eq!(s, 200, "{v}");
        assert!(
            v["hint"]
                .as_str()
                .unwrap_or_default()
                .contains("moss_workspaces"),
            "{path}: {v}"
        );
    }
    for path in [
        "/capsules?workspace=shop",
        "/capsules?workspace=plans-only",
        "/capsules/latest?workspace=Plans-Only",
        "/capsules/latest?workspace=shop",
    ] {
        let (s, v) = d.call("GET", path, None).await;
        assert_eq!((s, v.get("hint")), (200, None), "{path}: {v}");
    }
    let mut mcp = d.mcp().await;
    for tool in ["capsule_list", "capsule_latest"] {
        let v = mcp
            .call_tool(tool, json!({"workspace": "nothing-here"}))
            .await;
        assert!(v.to_string().contains("moss_workspaces"), "{tool}: {v}");
        let v = mcp.call_tool(tool, json!({"workspace": "shop"})).await;
        assert!(!v.to_string().contains("moss_workspaces"), "{tool}: {v}");
    }
}

#[tokio::test]
async fn search_finds_a_task_by_a_snake_case_word() {
    let d = TestDaemon::start().await;
    ok(
        &d,
        "/tasks/create",
        json!({"workspace": "ids", "title": "Rotate the refresh_token",
        "steps": [{"title": "Expire old_session rows"}]}),
    )
    .await;
    ok(
        &d,
        "/tasks/create",
        json!({"workspace": "ids", "title": "Refreshtoken cleanup"}),
    )
    .await;
    let (s, v) = d
        .call("GET", "/search?query=refresh_token&workspace=ids", None)
        .await;
    assert_eq!(s, 200, "{v}");
    let titles: Vec<&str> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        ["Rotate the refresh_token"],
        "the _ is a letter, not a wildcard: {v}"
    );
    let (_, v) = d
        .call("GET", "/search?query=old_session&workspace=ids", None)
        .await;
    assert_eq!(v["items"][0]["kind"], "step", "{v}");
}

/// A family with more hits than a page holds leaves a cursor to the rest, whichever family
/// it is, and the last page leaves none.
#[tokio::test]
async fn search_pages_through_one_family_s_hits() {
    let d = TestDaemon::start().await;
    for i in 0..5 {
        let (s, v) = d
            .call(
                "POST",
                "/capsules",
                Some(json!({"workspace": "pages", "name": format!("c{i}"),
                "capsule_text": capsule_text(&format!("pangolinpage {i}"))})),
            )
            .await;
        assert_eq!(s, 200, "{v}");
        ok(
            &d,
            "/tasks/create",
            json!({"workspace": "pages", "title": format!("Pangolinpage task {i}")}),
        )
        .await;
    }
    for family in ["capsule", "tasks"] {
        let path = format!("/search?query=pangolinpage&families={family}&limit=3");
        let (s, first) = d.call("GET", &path, None).await;
        assert_eq!(s, 200, "{first}");
        assert_eq!(first["items"].as_array().unwrap().len(), 3, "{first}");
        let next = first["pagination"]["next_cursor"]
            .as_str()
            .unwrap_or_else(|| panic!("{family}: 5 hits, 3 shown, no cursor: {first}"))
            .to_string();
        let (_, second) = d.call("GET", &format!("{path}&cursor={next}"), None).await;
        let ids = |v: &Value| -> Vec<String> {
            v["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h["id"].as_str().unwrap().to_string())
                .collect()
        };
        let (a, b) = (ids(&first), ids(&second));
        assert_eq!(b.len(), 2, "{family}: {second}");
        assert!(a.iter().all(|x| !b.contains(x)), "{first} {second}");
        assert!(second["pagination"]["next_cursor"].is_null(), "{second}");
    }
}

/// The task link filters inventory, search and compose as it filters list, and search hits
/// carry it; a malformed task is refused naming the field.
#[tokio::test]
async fn inventory_search_and_compose_filter_by_the_task_link() {
    let d = TestDaemon::start().await;
    seed(&d, "shop").await;
    let (s, v) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"workspace": "shop", "name": "elsewhere",
            "capsule_text": capsule_text("quokkacapsule elsewhere")})),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    let names = |page: &Value| -> Vec<String> {
        page["items"]
            .as_array()
            .unwrap_or_else(|| panic!("{page}"))
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (_, all) = d
        .call("GET", "/capsules/inventory?workspace=shop", None)
        .await;
    assert_eq!(names(&all).len(), 2, "{all}");
    let (_, page) = d
        .call("GET", "/capsules/inventory?task=task-001", None)
        .await;
    assert_eq!(names(&page), ["handoff"], "{page}");
    assert_eq!(page["items"][0]["task"], "TASK-001", "{page}");

    let (_, hits) = d
        .call("GET", "/capsules/search?query=quokkacapsule", None)
        .await;
    assert_eq!(names(&hits).len(), 2, "{hits}");
    let (_, hits) = d
        .call(
            "GET",
            "/capsules/search?query=quokkacapsule&task=TASK-001",
            None,
        )
        .await;
    assert_eq!(names(&hits), ["handoff"], "{hits}");
    assert_eq!(hits["items"][0]["task"], "TASK-001", "{hits}");

    let bundle = ok(
        &d,
        "/capsules/compose",
        json!({"items": [{"workspace": "shop", "task": "TASK-001"}], "format": "json"}),
    )
    .await;
    assert_eq!(bundle["parts_count"], 1, "{bundle}");
    let (s, v) = d
        .call(
            "POST",
            "/capsules/compose",
            Some(json!({"items": [{"name": "handoff", "workspace": "shop", "task": "TASK-001"}]})),
        )
        .await;
    assert_eq!(s, 400, "a ref with a filter field is ambiguous: {v}");
    assert!(
        v["error"]["message"].as_str().unwrap().contains("task"),
        "{v}"
    );

    let (s, v) = d
        .call(
            "GET",
            "/capsules/search?query=quokkacapsule&task=nope",
            None,
        )
        .await;
    assert_eq!(
        (s, v["error"]["details"]["field"].as_str()),
        (400, Some("task")),
        "{v}"
    );
}

/// An export carries the task link; an import keeps it where the workspace holds that plan or
/// task, and otherwise imports the capsule without it and counts it in `unlinked`.
#[tokio::test]
async fn export_carries_the_task_link_and_import_keeps_it_where_the_task_exists() {
    let d = TestDaemon::start().await;
    seed(&d, "shop").await;
    let out = ok(
        &d,
        "/capsules/export",
        json!({"workspace": "shop", "path": "shop.jsonl"}),
    )
    .await;
    let path = out["path"].as_str().unwrap().to_string();
    let text = std::fs::read_to_string(&path).unwrap();
    let record: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["name_raw"] == "handoff")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(record["task"], "TASK-001", "{record}");

    // Here the task exists: the replaced capsule keeps its link.
    let back = ok(
        &d,
        "/capsules/import",
        json!({"path": path, "mode": "replace"}),
    )
    .await;
    assert_eq!(
        (back["imported"].as_i64(), back["unlinked"].as_i64()),
        (Some(1), Some(0)),
        "{back}"
    );
    let (_, c) = d
        .call("GET", "/capsules/by-name?workspace=shop&name=handoff", None)
        .await;
    assert_eq!(c["task"], "TASK-001", "{c}");

    // Another daemon with no such task: imported, without the link, and counted.
    let other = TestDaemon::start().await;
    let file = other.home_path().join("exports").join("shop.jsonl");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, &text).unwrap();
    let back = ok(&other, "/capsules/import", json!({"path": "shop.jsonl"})).await;
    assert_eq!(
        (back["imported"].as_i64(), back["unlinked"].as_i64()),
        (Some(1), Some(1)),
        "{back}"
    );
    let (_, c) = other
        .call("GET", "/capsules/by-name?workspace=shop&name=handoff", None)
        .await;
    assert!(c["task"].is_null(), "{c}");
    assert_eq!(c["name"], "handoff", "{c}");
}

/// tasks_context and memory_recall of a workspace that holds nothing say so with the hint, over
/// REST and MCP, within a small max_chars; a workspace that holds something gets none.
#[tokio::test]
async fn tasks_context_and_memory_recall_of_an_empty_workspace_hint_at_moss_workspaces() {
    let d = TestDaemon::start().await;
    seed(&d, "shop").await;
    let hinted = |v: &Value| {
        v["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("moss_workspaces")
    };
    let v = ok(
        &d,
        "/tasks/context",
        json!({"workspace": "nothing-here", "max_chars": 400}),
    )
    .await;
    assert!(hinted(&v), "{v}");
    assert!(chars(&v) <= 400, "{v}");
    let v = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "nothing-here", "query": "tabs"}),
    )
    .await;
    assert!(hinted(&v), "{v}");
    // A workspace that holds things: no hint, even where the answer is empty.
    let v = ok(&d, "/tasks/context", json!({"workspace": "shop"})).await;
    assert!(v.get("hint").is_none(), "{v}");
    let v = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "shop", "query": "nowhereword"}),
    )
    .await;
    assert!(v.get("hint").is_none(), "{v}");
    let mut mcp = d.mcp().await;
    let v = mcp
        .call_tool("tasks_context", json!({"workspace": "nothing-here"}))
        .await;
    assert!(v.to_string().contains("moss_workspaces"), "{v}");
    let v = mcp
        .call_tool(
            "memory_recall",
            json!({"workspace": "nothing-here", "query": "tabs"}),
        )
        .await;
    assert!(v.to_string().contains("moss_workspaces"), "{v}");
}
