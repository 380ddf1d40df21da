//! `capsule_search` over REST and MCP: ranking, filters, snippets, errors.

mod filters;
mod index;
mod query;
mod ranking;
mod snippets;

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use crate::util::store;

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

/// `GET /capsules/search?query=…` plus extra already-encoded parameters (`&workspace=w`).
async fn search_with(d: &TestDaemon, query: &str, extra: &str) -> (u16, Value) {
    d.call(
        "GET",
        &format!("/capsules/search?query={}{extra}", encode(query)),
        None,
    )
    .await
}

/// A search that must succeed; returns the page.
async fn page(d: &TestDaemon, query: &str, extra: &str) -> Value {
    let (status, page) = search_with(d, query, extra).await;
    assert_eq!(status, 200, "{query} {extra}: {page}");
    page
}

/// The names of the hits of a successful search, sorted (for filter tests, where rank is not
/// the point).
async fn hit_names(d: &TestDaemon, query: &str, extra: &str) -> Vec<String> {
    let mut n = names(&page(d, query, extra).await);
    n.sort();
    n
}

/// A thin capsule (allow_thin) whose whole text is `text`.
async fn store_thin(d: &TestDaemon, name: &str, text: &str) -> String {
    store(
        d,
        json!({"name": name, "capsule_text": text, "allow_thin": true}),
    )
    .await
}

/// Three capsules sharing the word "kiwi", spread over workspaces, tags and orchestration fields.
async fn store_filter_fixture(d: &TestDaemon) {
    store(
        d,
        json!({"workspace": "alpha", "name": "a", "tags": ["x"], "run_id": "r1",
               "phase": "design", "role": "writer", "capsule_text": capsule_text("kiwi a")}),
    )
    .await;
    store(
        d,
        json!({"workspace": "beta", "name": "b", "tags": ["y"], "run_id": "r1",
               "phase": "review", "role": "writer", "capsule_text": capsule_text("kiwi b")}),
    )
    .await;
    store(
        d,
        json!({"workspace": "alpha", "name": "c", "tags": ["x", "y"], "run_id": "r2",
               "phase": "design", "role": "reviewer", "capsule_text": capsule_text("kiwi c")}),
    )
    .await;
}
