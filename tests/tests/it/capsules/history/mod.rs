//! A capsule's history and the finer search and bulk options: restore (and its conflicts),
//! lineage both ways, clone, `skip_unchanged`, `safe_query`, `count_total`, snippet bounds and
//! evidence.

mod evidence;
mod lineage;
mod options;
mod tokenizers;
mod versions;

use moss_tests::TestDaemon;
use serde_json::Value;

async fn ok(d: &TestDaemon, method: &str, path: &str, body: Value) -> Value {
    let (s, r) = d.call(method, path, Some(body.clone())).await;
    assert_eq!(s, 200, "{method} {path} {body}: {r}");
    r
}

async fn fetch(d: &TestDaemon, id: &str) -> Value {
    let (s, c) = d
        .call("GET", &format!("/capsules/{id}?include_deleted=true"), None)
        .await;
    assert_eq!(s, 200, "{c}");
    c
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
