//! The capsule family's suites. The eight core operations over the `/capsules` REST routes,
//! rule by rule (store, fetch, fetch_many, update, delete, latest, list and inventory), share the
//! helpers below; the other operations have a suite each.

mod append;
mod bulk;
mod compose;
mod fetch;
mod history;
mod listing;
mod search;
mod store;
mod swarm;
mod transfer;
mod transfer_figures;
mod update_delete;

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

/// `POST /capsules`, asserting success.
async fn store(d: &TestDaemon, body: Value) -> Value {
    let (status, resp) = d.call("POST", "/capsules", Some(body.clone())).await;
    assert_eq!(status, 200, "store {body}: {resp}");
    resp
}

/// A named capsule in `workspace` with marker text; returns its id.
async fn store_named(d: &TestDaemon, workspace: &str, name: &str) -> String {
    let r = store(
        d,
        json!({"workspace": workspace, "name": name, "capsule_text": capsule_text(name)}),
    )
    .await;
    r["id"].as_str().unwrap().to_string()
}

fn is_ulid(id: &str) -> bool {
    id.len() == 26
        && id
            .chars()
            .all(|c| c.is_ascii_digit() || (c.is_ascii_uppercase() && !"ILOU".contains(c)))
}

/// The millisecond timestamp in a ULID's first 10 characters (Crockford base32).
fn ulid_millis(id: &str) -> u64 {
    const ALPHABET: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    id[..10]
        .chars()
        .fold(0, |acc, c| acc * 32 + ALPHABET.find(c).unwrap() as u64)
}

fn ids(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

fn assert_no_text(page: &Value) {
    for item in page["items"].as_array().unwrap() {
        assert!(
            item.get("capsule_text").is_none(),
            "summary has text: {item}"
        );
    }
}
