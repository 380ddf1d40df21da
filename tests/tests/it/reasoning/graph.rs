//! The versioned graph: filters and validation, and its 3-way merge with conflicts found once.

use moss_tests::TestDaemon;
use serde_json::{Value, json};

use super::{apply, branch, fails, ids, node, ok, query};

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
