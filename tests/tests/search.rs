//! `capsule_search` (seed 001 §6.9) over REST and MCP: ranking, filters, snippets, errors.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

async fn store(d: &TestDaemon, body: Value) -> String {
    let (status, resp) = d.call("POST", "/capsules", Some(body.clone())).await;
    assert_eq!(status, 200, "store {body}: {resp}");
    resp["id"].as_str().unwrap().to_string()
}

async fn search(d: &TestDaemon, query: &str) -> (u16, Value) {
    d.call(
        "GET",
        &format!("/capsules/search?query={}", encode(query)),
        None,
    )
    .await
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn names(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["name"].as_str().unwrap_or("").to_string())
        .collect()
}

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
async fn bad_queries_are_invalid_requests() {
    let d = TestDaemon::start().await;
    store(
        &d,
        json!({"name": "a", "capsule_text": capsule_text("alpha")}),
    )
    .await;
    for q in ["\"unclosed", "AND", "a:b", "(x"] {
        let (status, body) = search(&d, q).await;
        assert_eq!(status, 400, "{q}: {body}");
        assert_eq!(body["error"]["code"], "INVALID_REQUEST");
        assert!(
            body["error"]["message"].as_str().unwrap().contains("FTS5"),
            "{body}"
        );
    }
    let (status, body) = search(&d, &"x".repeat(1001)).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("1000"));
    let (status, _) = search(&d, &"x".repeat(1000)).await;
    assert_eq!(status, 200);
    d.stop().await;
}
