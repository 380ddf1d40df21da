//! The reasoning memory over REST and MCP: views of branches of branches, diff and merge,
//! the versioned graph and its 3-way merge, think cards, budgets, search.

use moss_tests::TestDaemon;
use serde_json::{Value, json};

/// `POST path body`, which must answer 200.
pub async fn ok(d: &TestDaemon, path: &str, body: Value) -> Value {
    let (s, v) = d.call("POST", path, Some(body.clone())).await;
    assert_eq!(s, 200, "POST {path} {body}: {v}");
    v
}

/// `POST path body`, which must fail with `status` and `code`; returns the error object.
pub async fn fails(d: &TestDaemon, path: &str, body: Value, status: u16, code: &str) -> Value {
    let (s, v) = d.call("POST", path, Some(body.clone())).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (status, Some(code)),
        "POST {path} {body}: {v}"
    );
    v["error"].clone()
}

async fn note(d: &TestDaemon, ws: &str, branch: &str, content: &str) -> i64 {
    let v = ok(
        d,
        "/reasoning/notes/commit",
        json!({"doc": "notes", "workspace": ws, "branch": branch, "content": content}),
    )
    .await;
    v["entry"]["seq"].as_i64().unwrap()
}

fn contents(v: &Value) -> Vec<String> {
    v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

async fn branch(d: &TestDaemon, ws: &str, name: &str, from: &str) -> Value {
    ok(
        d,
        "/reasoning/branch/create",
        json!({"workspace": ws, "name": name, "from": from}),
    )
    .await["branch"]
        .clone()
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

fn node(id: &str, ty: &str, title: &str) -> Value {
    json!({"op": "node_upsert", "id": id, "type": ty, "title": title})
}

async fn apply(d: &TestDaemon, ws: &str, branch: &str, ops: Value) -> Value {
    ok(
        d,
        "/reasoning/graph/apply",
        json!({"workspace": ws, "branch": branch, "doc": "graph", "ops": ops}),
    )
    .await
}

async fn query(d: &TestDaemon, ws: &str, branch: &str, extra: Value) -> Value {
    let mut body = json!({"workspace": ws, "branch": branch, "doc": "graph"});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    ok(d, "/reasoning/graph/query", body).await
}

fn ids(v: &Value) -> Vec<String> {
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn the_graph_is_versioned_filtered_and_validated() {
    let d = TestDaemon::start().await;
    let ws = "graph";
    let r = apply(&d, ws, "main", json!([
        {"op": "node_upsert", "id": "h1", "type": "hypothesis", "title": "Cache is cold", "tags": ["Perf", "cache", "perf"], "status": "open"},
        {"op": "node_upsert", "id": "q1", "type": "question", "title": "Why slow?", "text": "The p99 doubled"},
        {"op": "node_upsert", "id": "e1", "type": "evidence", "title": "Profile", "tags": ["perf"]},
        {"op": "edge_upsert", "from": "e1", "rel": "supports", "to": "h1"},
        {"op": "edge_upsert", "from": "h1", "rel": "answers", "to": "q1"}
    ])).await;
    assert_eq!(
        r["applied"],
        json!({"nodes_upserted": 3, "nodes_deleted": 0, "edges_upserted": 2, "edges_deleted": 0})
    );

    let all = query(&d, ws, "main", json!({})).await;
    assert_eq!(ids(&all), ["e1", "q1", "h1"], "newest first");
    assert_eq!(
        all["nodes"][2]["tags"],
        json!(["cache", "perf"]),
        "tags normalized"
    );
    assert_eq!(all["edges"].as_array().unwrap().len(), 2);
    assert_eq!(
        ids(&query(&d, ws, "main", json!({"types": ["hypothesis", "question"]})).await),
        ["q1", "h1"]
    );
    assert_eq!(
        ids(&query(&d, ws, "main", json!({"tags_any": ["PERF"]})).await),
        ["e1", "h1"]
    );
    assert_eq!(
        ids(&query(&d, ws, "main", json!({"tags_all": ["perf", "cache"]})).await),
        ["h1"]
    );
    assert_eq!(
        ids(&query(&d, ws, "main", json!({"text": "p99"})).await),
        ["q1"]
    );
    assert_eq!(
        ids(&query(&d, ws, "main", json!({"status": "open"})).await),
        ["h1"]
    );
    // Only edges between returned nodes.
    let two = query(&d, ws, "main", json!({"ids": ["h1", "q1"]})).await;
    let rels: Vec<&str> = two["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["rel"].as_str().unwrap())
        .collect();
    assert_eq!(rels, ["answers"]);
    assert_eq!(
        query(&d, ws, "main", json!({"edges_limit": 0})).await["edges"],
        json!([])
    );

    // A new version moves the node to the front; a tombstone hides it and dangles its edges.
    apply(
        &d,
        ws,
        "main",
        json!([node("h1", "hypothesis", "Cache is cold (v2)")]),
    )
    .await;
    assert_eq!(ids(&query(&d, ws, "main", json!({})).await)[0], "h1");
    let v = ok(
        &d,
        "/reasoning/graph/validate",
        json!({"workspace": ws, "branch": "main", "doc": "graph"}),
    )
    .await;
    assert_eq!(
        (v["ok"].as_bool(), v["stats"]["nodes"].as_i64()),
        (Some(true), Some(3))
    );
    apply(&d, ws, "main", json!([{"op": "node_delete", "id": "q1"}])).await;
    assert_eq!(ids(&query(&d, ws, "main", json!({})).await), ["h1", "e1"]);
    let v = ok(
        &d,
        "/reasoning/graph/validate",
        json!({"workspace": ws, "branch": "main", "doc": "graph"}),
    )
    .await;
    assert_eq!(v["ok"], false);
    assert_eq!(v["errors"][0]["code"], "dangling_edge");
    assert_eq!(v["errors"][0]["missing"], "q1");
    // Errors are bounded by max_errors; error_count still counts them all.
    apply(
        &d,
        ws,
        "main",
        json!([{"op": "edge_upsert", "from": "e1", "rel": "cites", "to": "ghost"}]),
    )
    .await;
    let v = ok(
        &d,
        "/reasoning/graph/validate",
        json!({"workspace": ws, "branch": "main", "doc": "graph", "max_errors": 1}),
    )
    .await;
    assert_eq!(
        (
            v["errors"].as_array().unwrap().len(),
            v["error_count"].as_i64(),
            v["truncated"].as_bool()
        ),
        (1, Some(2), Some(true)),
        "{v}"
    );
    apply(
        &d,
        ws,
        "main",
        json!([{"op": "edge_delete", "from": "e1", "rel": "cites", "to": "ghost"}]),
    )
    .await;

    // Pagination visits every node once.
    let ops: Vec<Value> = (0..25)
        .map(|i| node(&format!("n{i}"), "note", "x"))
        .collect();
    apply(&d, ws, "main", Value::Array(ops)).await;
    let (mut seen, mut cursor) = (Vec::new(), Value::Null);
    loop {
        let page = query(
            &d,
            ws,
            "main",
            json!({"limit": 7, "cursor": cursor, "include_edges": false}),
        )
        .await;
        seen.extend(ids(&page));
        if !page["pagination"]["has_more"].as_bool().unwrap() {
            break;
        }
        cursor = page["pagination"]["next_cursor"].clone();
    }
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!((seen.len(), unique.len()), (27, 27));

    // Atomic: one bad op writes nothing.
    let e = fails(&d, "/reasoning/graph/apply", json!({"doc": "graph", "workspace": ws, "branch": "main", "ops": [node("ok1", "note", "x"), node("bad|id", "note", "x")]}), 400, "INVALID_REQUEST").await;
    assert_eq!(e["details"]["field"], "ops[1].id");
    let e = fails(
        &d,
        "/reasoning/graph/apply",
        json!({"doc": "graph", "workspace": ws, "branch": "main", "ops": [node("step:x", "note", "x")]}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("reserved"), "{e}");
    assert!(ids(&query(&d, ws, "main", json!({"ids": ["ok1"]})).await).is_empty());
    d.stop().await;
}

#[tokio::test]
async fn graph_merges_are_three_way_and_conflicts_are_found_once() {
    let d = TestDaemon::start().await;
    let ws = "gmerge";
    apply(
        &d,
        ws,
        "main",
        json!([
            node("x", "hypothesis", "base"),
            node("y", "question", "base"),
            node("z", "note", "base")
        ]),
    )
    .await;
    branch(&d, ws, "b", "main").await;
    // Changed on both sides differently: x. Only on the branch: y, a new node w, an edge.
    // Only on main: z (stays as main has it). Deleted on the branch: nothing yet.
    apply(&d, ws, "b", json!([node("x", "hypothesis", "theirs"), node("y", "question", "theirs"), node("w", "test", "new"),
        {"op": "edge_upsert", "from": "w", "rel": "supports", "to": "x"}])).await;
    apply(
        &d,
        ws,
        "main",
        json!([node("x", "hypothesis", "ours"), node("z", "note", "ours")]),
    )
    .await;

    // The graph diff from main to b: b's states that differ, newest first.
    let diff = ok(
        &d,
        "/reasoning/graph/diff",
        json!({"doc": "graph", "workspace": ws, "from": "main", "to": "b"}),
    )
    .await;
    let keys: Vec<String> = diff["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| match c["kind"].as_str().unwrap() {
            "node" => c["id"].as_str().unwrap().to_string(),
            _ => format!(
                "{}>{}",
                c["key"]["from"].as_str().unwrap(),
                c["key"]["to"].as_str().unwrap()
            ),
        })
        .collect();
    assert_eq!(
        keys,
        ["w>x", "w", "y", "x", "z"],
        "z: b still sees main's base version"
    );

    // Only into the base.
    branch(&d, ws, "other", "main").await;
    fails(
        &d,
        "/reasoning/graph/merge",
        json!({"doc": "graph", "workspace": ws, "from": "b", "into": "other"}),
        409,
        "MERGE_INTO_NON_BASE",
    )
    .await;

    let dry = ok(
        &d,
        "/reasoning/graph/merge",
        json!({"doc": "graph", "workspace": ws, "from": "b", "into": "main", "dry_run": true}),
    )
    .await;
    assert_eq!(
        (dry["merged"].as_i64(), dry["conflicts_created"].as_i64()),
        (Some(3), Some(1))
    );
    let conflicts = ok(
        &d,
        "/reasoning/graph/conflicts",
        json!({"doc": "graph", "workspace": ws, "into": "main"}),
    )
    .await;
    assert_eq!(
        conflicts["conflicts"],
        json!([]),
        "a dry run writes nothing"
    );

    let first = ok(
        &d,
        "/reasoning/graph/merge",
        json!({"doc": "graph", "workspace": ws, "from": "b", "into": "main"}),
    )
    .await;
    assert_eq!(
        (
            first["merged"].as_i64(),
            first["conflicts_created"].as_i64()
        ),
        (Some(3), Some(1))
    );
    let id = first["conflict_ids"][0].as_str().unwrap().to_string();
    let again = ok(
        &d,
        "/reasoning/graph/merge",
        json!({"doc": "graph", "workspace": ws, "from": "b", "into": "main"}),
    )
    .await;
    assert_eq!(
        (
            again["merged"].as_i64(),
            again["conflicts_created"].as_i64()
        ),
        (Some(0), Some(0))
    );
    assert_eq!(
        again["conflict_ids"],
        json!([id.clone()]),
        "the same conflict, found again"
    );

    let main = query(&d, ws, "main", json!({})).await;
    let title = |id: &str| {
        main["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["id"] == id)
            .map(|n| n["title"].clone())
    };
    assert_eq!(
        (title("x"), title("y"), title("z"), title("w")),
        (
            Some(json!("ours")),
            Some(json!("theirs")),
            Some(json!("ours")),
            Some(json!("new"))
        )
    );

    let shown = ok(
        &d,
        "/reasoning/graph/conflict/show",
        json!({"workspace": ws, "conflict_id": id}),
    )
    .await["conflict"]
        .clone();
    assert_eq!(
        (
            shown["base"]["title"].as_str(),
            shown["theirs"]["title"].as_str(),
            shown["ours"]["title"].as_str()
        ),
        (Some("base"), Some("theirs"), Some("ours"))
    );
    assert_eq!(shown["status"], "open");
    let open = ok(
        &d,
        "/reasoning/graph/conflicts",
        json!({"doc": "graph", "workspace": ws, "into": "main", "status": "open"}),
    )
    .await;
    assert_eq!(open["conflicts"][0]["conflict_id"], id.as_str());

    let r = ok(
        &d,
        "/reasoning/graph/conflict/resolve",
        json!({"workspace": ws, "conflict_id": id, "resolution": "use_from"}),
    )
    .await;
    assert_eq!(
        (r["status"].as_str(), r["applied"].as_bool()),
        (Some("resolved"), Some(true))
    );
    let x = query(&d, ws, "main", json!({"ids": ["x"]})).await;
    assert_eq!(x["nodes"][0]["title"], "theirs");
    let r = ok(
        &d,
        "/reasoning/graph/conflict/resolve",
        json!({"workspace": ws, "conflict_id": id, "resolution": "use_into"}),
    )
    .await;
    assert_eq!(r["applied"], false, "resolving again changes nothing");
    assert_eq!(
        ok(
            &d,
            "/reasoning/graph/merge",
            json!({"doc": "graph", "workspace": ws, "from": "b", "into": "main"})
        )
        .await["merged"],
        0
    );
    fails(
        &d,
        "/reasoning/graph/conflict/show",
        json!({"workspace": ws, "conflict_id": "CONFLICT-nope"}),
        404,
        "NOT_FOUND",
    )
    .await;
    d.stop().await;
}

#[tokio::test]
async fn think_cards_are_idempotent_atomic_and_typed() {
    let d = TestDaemon::start().await;
    let ws = "think";
    let card = json!({"id": "h1", "type": "hypothesis", "title": "The cache is cold", "why": "p99 after deploys"});
    let first = ok(
        &d,
        "/reasoning/think/card",
        json!({"trace_doc": "trace", "graph_doc": "graph", "workspace": ws, "card": card}),
    )
    .await;
    assert_eq!(
        (
            first["inserted"].as_bool(),
            first["graph_applied"]["nodes_upserted"].as_i64()
        ),
        (Some(true), Some(1))
    );
    assert_eq!(
        (
            first["branch"].as_str(),
            first["trace_doc"].as_str(),
            first["graph_doc"].as_str()
        ),
        (Some("main"), Some("trace"), Some("graph"))
    );
    // The same card, as a JSON string and as DSL: nothing new.
    let same = ok(
        &d,
        "/reasoning/think/card",
        json!({"trace_doc": "trace", "graph_doc": "graph", "workspace": ws, "card": card.to_string()}),
    )
    .await;
    assert_eq!(
        (
            same["inserted"].as_bool(),
            same["graph_applied"]["nodes_upserted"].as_i64()
        ),
        (Some(false), Some(0))
    );
    let dsl = ok(&d, "/reasoning/think/card", json!({"trace_doc": "trace", "graph_doc": "graph", "workspace": ws, "card": "id: h1\ntype: hypothesis\ntitle: The cache is cold\nwhy: p99 after deploys"})).await;
    assert_eq!(dsl["inserted"], false);
    let e = fails(&d, "/reasoning/think/card", json!({"trace_doc": "trace", "graph_doc": "graph", "workspace": ws, "card": {"id": "h1", "type": "hypothesis", "title": "Something else"}}), 409, "CONFLICT").await;
    assert_eq!(e["details"]["card_id"], "h1");
    let e = fails(
        &d,
        "/reasoning/think/card",
        json!({"trace_doc": "trace", "graph_doc": "graph", "workspace": ws, "card": {"id": "z", "type": "idea", "title": "t"}}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(e["details"]["supported_types"].as_array().unwrap().len(), 8);

    // A failing edge inside the transaction rolls back the trace entry and the node.
    fails(&d, "/reasoning/think/card", json!({"trace_doc": "trace", "graph_doc": "graph", "workspace": ws, "card": {"id": "t1", "type": "test", "title": "Warm it"}, "supports": ["h1"], "blocks": ["task:TASK-001"]}), 400, "INVALID_REQUEST").await;
    let trace = ok(
        &d,
        "/reasoning/show",
        json!({"workspace": ws, "branch": "main", "doc": "trace"}),
    )
    .await;
    assert_eq!(trace["entries"].as_array().unwrap().len(), 1, "{trace}");
    assert!(ids(&query(&d, ws, "main", json!({"ids": ["t1"]})).await).is_empty());

    // Edges, context and the next card.
    let next = ok(
        &d,
        "/reasoning/think/next",
        json!({"graph_doc": "graph", "workspace": ws}),
    )
    .await;
    assert_eq!(next["next"]["rule"], "frame_missing");
    ok(
        &d,
        "/reasoning/think/card",
        json!({"trace_doc": "trace", "graph_doc": "graph", "workspace": ws, "card": {"id": "f1", "type": "frame", "title": "Make p99 stable"}}),
    )
    .await;
    let next = ok(
        &d,
        "/reasoning/think/next",
        json!({"graph_doc": "graph", "workspace": ws}),
    )
    .await;
    assert_eq!(
        (
            next["next"]["rule"].as_str(),
            next["next"]["about"].as_str()
        ),
        (Some("hypothesis_untested"), Some("h1"))
    );
    let t = ok(&d, "/reasoning/think/card", json!({"trace_doc": "trace", "graph_doc": "graph", "workspace": ws, "card": next["next"]["card"], "supports": next["next"]["supports"]})).await;
    assert_eq!(
        t["graph_applied"],
        json!({"nodes_upserted": 1, "edges_upserted": 1})
    );
    assert_eq!(
        ok(
            &d,
            "/reasoning/think/next",
            json!({"graph_doc": "graph", "workspace": ws})
        )
        .await["next"]["rule"],
        "test_without_evidence"
    );
    let ctx = ok(
        &d,
        "/reasoning/think/context",
        json!({"graph_doc": "graph", "workspace": ws, "limit_cards": 2}),
    )
    .await;
    assert_eq!(ctx["stats"]["cards"], 3);
    assert_eq!(
        ctx["stats"]["by_type"],
        json!({"frame": 1, "hypothesis": 1, "test": 1})
    );
    assert_eq!(ctx["cards"].as_array().unwrap().len(), 2);
    assert_eq!(ctx["cards"][0]["type"], "test");

    let tpl = ok(
        &d,
        "/reasoning/think/template",
        json!({"workspace": ws, "type": "question"}),
    )
    .await;
    assert_eq!(tpl["template"]["type"], "question");
    assert!(tpl["dsl"].as_str().unwrap().contains("type: question"));
    fails(
        &d,
        "/reasoning/think/template",
        json!({"workspace": ws, "type": "nope"}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    d.stop().await;
}

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

/// Serialized length of an answer, in characters.
pub fn chars(v: &Value) -> usize {
    v.to_string().chars().count()
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

#[tokio::test]
async fn search_finds_notes_and_cards_of_the_workspace() {
    let d = TestDaemon::start().await;
    note(
        &d,
        "s1",
        "main",
        "We decided to shard the index by workspace",
    )
    .await;
    ok(&d, "/reasoning/think/card", json!({"trace_doc": "trace", "graph_doc": "graph", "workspace": "s1", "card": {"id": "d1", "type": "decision", "title": "Use zstd compression", "text": "smaller snapshots"}})).await;
    note(&d, "s2", "main", "shard elsewhere").await;
    let r = ok(
        &d,
        "/reasoning/search",
        json!({"workspace": "s1", "query": "shard"}),
    )
    .await;
    assert_eq!(r["hits"].as_array().unwrap().len(), 1);
    assert!(
        r["hits"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("<b>shard</b>"),
        "{r}"
    );
    let r = ok(
        &d,
        "/reasoning/search",
        json!({"workspace": "s1", "query": "zstd"}),
    )
    .await;
    assert_eq!(
        (r["hits"][0]["doc"].as_str(), r["hits"][0]["title"].as_str()),
        (Some("trace"), Some("Use zstd compression"))
    );
    let e = fails(
        &d,
        "/reasoning/search",
        json!({"workspace": "s1", "query": "\"unterminated"}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(e["details"]["field"], "query");
    let st = d.call("GET", "/status", None).await.1;
    assert!(
        st["index"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["source"] == "reasoning"),
        "{st}"
    );
    d.stop().await;
}

#[tokio::test]
async fn the_family_works_over_mcp_and_the_client() {
    let d = TestDaemon::start().await;
    let mut mcp = d.mcp_with_toolsets("reasoning").await;
    let names: Vec<String> = mcp
        .list_tools()
        .await
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let registered: Vec<&str> = moss_daemon::family::family("reasoning")
        .unwrap()
        .tools
        .iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, registered);
    let r = mcp
        .call_tool(
            "branchmind_notes_commit",
            json!({"doc": "notes", "workspace": "m", "content": "over mcp"}),
        )
        .await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["entry"]["content"], "over mcp");
    let r = mcp
        .call_tool(
            "branchmind_show",
            json!({"doc": "notes", "workspace": "m", "branch": "missing"}),
        )
        .await;
    assert_eq!(r["isError"], true);
    assert_eq!(r["structuredContent"]["error"]["code"], "NOT_FOUND");
    let r = mcp
        .call_tool("tasks_context", json!({"workspace": "m"}))
        .await;
    assert_eq!(r["isError"], true, "tasks is not served on this connection");

    let show = d
        .client
        .reasoning()
        .show(&moss_client::reasoning::ShowRequest {
            workspace: "m".into(),
            doc: Some("notes".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(show.entries[0].content.as_deref(), Some("over mcp"));
    assert!(!show.truncated);
    d.stop().await;
}
