//! `proto-docs/` is generated from the code; this test fails when the checked-in files are stale.
//! Regenerate with `MOSS_UPDATE_PROTO_DOCS=1 cargo test -p moss-tests --test it proto_docs`.

use std::path::PathBuf;

use moss_client::ErrorCode;
use serde_json::{Value, json};

fn proto_docs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../proto-docs")
}

fn mcp_tools() -> String {
    let tools: Vec<Value> = moss_daemon::family::tools()
        .map(|(f, t)| {
            json!({"name": t.name, "family": f.name, "description": t.description, "inputSchema": (t.schema)()})
        })
        .collect();
    serde_json::to_string_pretty(&json!({ "tools": tools })).unwrap() + "\n"
}

fn error_codes() -> String {
    let mut out = String::from(
        "# Error codes\n\nEvery failure is `{\"error\":{\"code\",\"message\",\"status\",\"details\"}}` \
         with the HTTP status of its code (REST), or an `isError: true` tool result carrying the \
         same envelope (MCP).\n\n| Code | Status | When |\n|------|--------|------|\n",
    );
    for code in ErrorCode::ALL {
        out.push_str(&format!(
            "| {} | {} | {} |\n",
            code.as_str(),
            code.status(),
            code.meaning()
        ));
    }
    out
}

fn openapi() -> String {
    serde_json::to_string_pretty(&moss_daemon::api::openapi::document()).unwrap() + "\n"
}

#[test]
fn checked_in_proto_docs_match_the_code() {
    let files = [
        ("openapi.json", openapi()),
        ("mcp-tools.json", mcp_tools()),
        ("error-codes.md", error_codes()),
    ];
    let update = std::env::var_os("MOSS_UPDATE_PROTO_DOCS").is_some();
    let mut stale = Vec::new();
    for (name, generated) in files {
        let path = proto_docs().join(name);
        if update {
            std::fs::write(&path, &generated).unwrap();
            continue;
        }
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current != generated {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "proto-docs/{stale:?} is stale; regenerate with \
         MOSS_UPDATE_PROTO_DOCS=1 cargo test -p moss-tests --test it proto_docs"
    );
}

/// The daemon serves the same document at `GET /openapi.json` (behind the token).
#[tokio::test]
async fn the_daemon_serves_the_openapi_document() {
    let d = moss_tests::TestDaemon::start().await;
    let (status, served) = d.call("GET", "/openapi.json", None).await;
    assert_eq!(status, 200, "{served}");
    let expected: Value = serde_json::from_str(&openapi()).unwrap();
    assert_eq!(served, expected);
    let anonymous = d.http().get(d.url("/openapi.json")).send().await.unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
    d.stop().await;
}
