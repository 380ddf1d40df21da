//! The family over MCP and through the typed client.

use moss_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn the_family_works_over_mcp_and_the_client() {
    let d = TestDaemon::start().await;
    let mut mcp = d.mcp_with_toolsets("reasoning").await;
    let names: Vec<String> = mcp
        .list_tools()
        .await
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let registered: Vec<&str> = moss_daemon::family::family("reasoning")
        .unwrap()
        .tools
        .iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, registered);
    let r = mcp
        .call_tool(
            "branchmind_notes_commit",
            json!({"doc": "notes", "workspace": "m", "content": "over mcp"}),
        )
        .await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["entry"]["content"], "over mcp");
    let r = mcp
        .call_tool(
            "branchmind_show",
            json!({"doc": "notes", "workspace": "m", "branch": "missing"}),
        )
        .await;
    assert_eq!(r["isError"], true);
    assert_eq!(r["structuredContent"]["error"]["code"], "NOT_FOUND");
    let r = mcp
        .call_tool("tasks_context", json!({"workspace": "m"}))
        .await;
    assert_eq!(r["isError"], true, "tasks is not served on this connection");

    let show = d
        .client
        .reasoning()
        .show(&moss_client::reasoning::ShowRequest {
            workspace: "m".into(),
            doc: Some("notes".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(show.entries[0].content.as_deref(), Some("over mcp"));
    assert!(!show.truncated);
    d.stop().await;
}
