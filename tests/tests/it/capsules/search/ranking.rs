//! What a search finds and in what order, over REST and MCP.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use super::{names, page, search, search_with, store_filter_fixture};
use crate::util::store;

#[tokio::test]
async fn finds_what_was_just_stored_and_ranks_titles_higher() {
    let d = TestDaemon::start().await;
    store(
        &d,
        json!({"name": "body", "title": "Storage notes",
               "capsule_text": capsule_text("we chose redis for the session cache")}),
    )
    .await;
    store(
        &d,
        json!({"name": "title", "title": "Redis rollout",
               "capsule_text": capsule_text("caching layer rollout plan")}),
    )
    .await;
    let (status, page) = search(&d, "redis").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(names(&page), ["title", "body"], "title match ranks first");
    assert_eq!(page["sort"], "relevance");
    assert_eq!(page["pagination"]["total"], 2);
    assert_eq!(page["items"][0]["fetch_key"]["moss_capsule"], "title");
    let snippet = page["items"][1]["snippet"].as_str().unwrap();
    assert!(snippet.contains("<b>redis</b>"), "{snippet}");
    d.stop().await;
}

#[tokio::test]
async fn no_match_is_an_empty_list() {
    let d = TestDaemon::start().await;
    store(
        &d,
        json!({"name": "a", "capsule_text": capsule_text("alpha")}),
    )
    .await;
    let (status, page) = search(&d, "zebra").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["items"], json!([]));
    assert_eq!(page["pagination"]["total"], 0);
    d.stop().await;
}

#[tokio::test]
async fn a_title_match_outranks_a_body_match_whatever_the_store_order() {
    // Title matches weigh 5x the body, so a title hit ranks above a body hit even when the
    // body hit is newer.
    let d = TestDaemon::start().await;
    store(
        &d,
        json!({"name": "in-title", "title": "Kafka migration",
               "capsule_text": capsule_text("queue moves")}),
    )
    .await;
    store(
        &d,
        json!({"name": "in-body", "title": "Notes",
               "capsule_text": capsule_text("we moved the queue to kafka last week")}),
    )
    .await;
    let p = page(&d, "kafka", "").await;
    assert_eq!(names(&p), ["in-title", "in-body"], "{p}");
    // Matching is case-insensitive.
    assert_eq!(names(&page(&d, "KAFKA", "").await).len(), 2);
}

#[tokio::test]
async fn capsule_search_over_mcp_gives_the_same_page() {
    let d = TestDaemon::start().await;
    store_filter_fixture(&d).await;
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool(
            "capsule_search",
            json!({"query": "kiwi", "workspace": "alpha", "limit": 1}),
        )
        .await;
    assert_eq!(r["isError"], false, "{r}");
    let s = &r["structuredContent"];
    assert_eq!(s["sort"], "relevance");
    assert_eq!(
        s["pagination"],
        json!({"limit": 1, "offset": 0, "has_more": true, "total": 2})
    );
    let (_, rest) = search_with(&d, "kiwi", "&workspace=alpha&limit=1").await;
    assert_eq!(s, &rest, "MCP and REST agree");
    let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(&text, s);

    let r = mcp
        .call_tool("capsule_search", json!({"query": "zebra"}))
        .await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["items"], json!([]));

    for args in [
        json!({"query": "\"open"}),
        json!({"query": "x".repeat(1001)}),
        json!({}),
    ] {
        let r = mcp.call_tool("capsule_search", args.clone()).await;
        assert_eq!(r["isError"], true, "{args}: {r}");
        assert_eq!(
            r["structuredContent"]["error"]["code"], "INVALID_REQUEST",
            "{r}"
        );
    }
}
