//! Think cards: idempotent, atomic and typed.

use moss_tests::TestDaemon;
use serde_json::json;

use super::{fails, ids, ok, query};

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
