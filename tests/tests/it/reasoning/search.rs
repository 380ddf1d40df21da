//! Search over a workspace's notes and cards.

use moss_tests::TestDaemon;
use serde_json::json;

use super::{fails, note, ok};

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
    // The status lists the FTS5 indexer's sources; PostgreSQL has no indexer (its words are a
    // generated column, current in the writing transaction), so its list is empty.
    if std::env::var("MOSS_TEST_ENGINE").as_deref() != Ok("postgres") {
        let st = d.call("GET", "/status", None).await.1;
        assert!(
            st["index"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["source"] == "reasoning"),
            "{st}"
        );
    }
    d.stop().await;
}
