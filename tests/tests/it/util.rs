//! Helpers shared by several suites.

use moss_tests::TestDaemon;
use serde_json::Value;

/// `POST /capsules`, asserting success; returns the id.
pub async fn store(d: &TestDaemon, body: Value) -> String {
    let (status, resp) = d.call("POST", "/capsules", Some(body.clone())).await;
    assert_eq!(status, 200, "store {body}: {resp}");
    resp["id"].as_str().unwrap().to_string()
}

/// Asserts `(status, body)` is the error envelope of `code`; returns `error`.
pub fn expect_error(status: u16, body: &Value, code: &str, http: u16) -> Value {
    assert_eq!(status, http, "expected {code}: {body}");
    let e = &body["error"];
    assert_eq!(e["code"], code, "{body}");
    assert_eq!(e["status"], http, "{body}");
    assert!(
        e["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    e.clone()
}

/// The `message` of an error envelope's `error`.
pub fn message(e: &Value) -> &str {
    e["message"].as_str().unwrap()
}
