//! The harness itself: a daemon starts, answers REST and MCP, and stops cleanly.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::json;

#[tokio::test]
async fn rest_and_mcp_answer_the_same_store() {
    let d = TestDaemon::start().await;
    assert_eq!(d.client.health().await.unwrap().status, "ok");
    let (status, body) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"name": "auth", "capsule_text": capsule_text("a")})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool(
            "capsule_fetch",
            json!({"workspace": "default", "name": "AUTH"}),
        )
        .await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["id"], body["id"]);
    d.stop().await;
}
