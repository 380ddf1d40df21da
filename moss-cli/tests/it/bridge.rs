//! `moss mcp`, the stdio bridge, as a black box against a daemon started in-process: one
//! JSON-RPC message per stdin line in, one per stdout line out, nothing for notifications.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

/// Feeds `lines` to `moss mcp` against `d`, closes stdin, and returns what it printed.
async fn bridge(d: &TestDaemon, token: &str, lines: Vec<Value>) -> Output {
    let addr = d.daemon.addr.to_string();
    let home = d.home_path().to_path_buf();
    let token = token.to_string();
    tokio::task::spawn_blocking(move || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_moss"))
            .arg("mcp")
            .env("MOSS_ADDR", addr)
            .env("MOSS_HOME", home)
            .env("MOSS_TOKEN", token)
            .env("MOSS_NO_AUTOSTART", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("moss mcp runs");
        let mut stdin = child.stdin.take().unwrap();
        for line in lines {
            writeln!(stdin, "{line}").unwrap();
        }
        drop(stdin);
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

fn stdout_messages(out: &Output) -> Vec<Value> {
    assert!(
        out.status.success(),
        "moss mcp failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}")))
        .collect()
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "bridge-test", "version": "0"}}})
}

fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_gets_one_line_and_notifications_get_none() {
    let d = TestDaemon::start().await;
    let workspace = "bridge-ws";
    let out = bridge(
        &d,
        &d.token,
        vec![
            initialize(),
            initialized(),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": "store", "method": "tools/call", "params": {
                "name": "capsule_store",
                "arguments": {"capsule_text": capsule_text("via the bridge"),
                              "workspace": workspace, "name": "b"}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 99}}),
        ],
    )
    .await;
    let messages = stdout_messages(&out);
    let ids: Vec<&Value> = messages.iter().map(|m| &m["id"]).collect();
    assert_eq!(
        messages.len(),
        3,
        "one line per request, none per notification: {ids:?}"
    );
    let by_id = |id: Value| {
        messages
            .iter()
            .find(|m| m["id"] == id)
            .unwrap_or_else(|| panic!("no answer to {id}: {messages:?}"))
    };
    assert_eq!(by_id(json!(1))["result"]["serverInfo"]["name"], "moss");
    let tools = by_id(json!(2))["result"]["tools"]
        .as_array()
        .unwrap()
        .clone();
    assert!(
        tools.iter().any(|t| t["name"] == "capsule_fetch"),
        "{tools:?}"
    );
    assert!(
        tools.len() <= 15 && !tools.iter().any(|t| t["name"] == "capsule_purge"),
        "the bridge serves core unless --toolsets says otherwise: {tools:?}"
    );
    let stored = &by_id(json!("store"))["result"];
    assert_eq!(stored["isError"], false, "{stored}");

    // The store went to the daemon.
    let (status, body) = d
        .call(
            "GET",
            &format!("/capsules/by-name?workspace={workspace}&name=b&include_text=true"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body["capsule_text"]
            .as_str()
            .unwrap()
            .contains("via the bridge")
    );
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_and_bad_lines_become_json_rpc_errors() {
    let d = TestDaemon::start().await;
    let out = bridge(
        &d,
        "not-the-token",
        vec![initialize(), json!("ignored"), initialized()],
    )
    .await;
    let mut messages = stdout_messages(&out);
    // `"ignored"` is JSON but no message the daemon takes; the wrong token fails initialize.
    let init = messages.remove(0);
    assert_eq!(init["id"], 1, "{init}");
    let message = init["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("401") && message.contains(&d.daemon.addr.to_string()),
        "{init}"
    );
    assert!(
        messages.is_empty(),
        "what answers no request stays off stdout: {messages:?}"
    );

    let out = bridge(&d, &d.token, vec![]).await;
    assert!(stdout_messages(&out).is_empty(), "no input, no output");
    let garbage = tokio::task::spawn_blocking({
        let addr = d.daemon.addr.to_string();
        let token = d.token.clone();
        move || {
            let mut child = Command::new(env!("CARGO_BIN_EXE_moss"))
                .arg("mcp")
                .env("MOSS_ADDR", addr)
                .env("MOSS_TOKEN", token)
                .env("MOSS_NO_AUTOSTART", "1")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            writeln!(child.stdin.take().unwrap(), "{{not json").unwrap();
            child.wait_with_output().unwrap()
        }
    })
    .await
    .unwrap();
    let messages = stdout_messages(&garbage);
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert_eq!(messages[0]["error"]["code"], -32700, "{messages:?}");
    assert_eq!(messages[0]["id"], Value::Null);
    d.stop().await;
}

/// Runs `moss <args>` against `d` and returns what it printed.
async fn moss(d: &TestDaemon, args: &[&str]) -> Output {
    let addr = d.daemon.addr.to_string();
    let home = d.home_path().to_path_buf();
    let token = d.token.clone();
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_moss"))
            .args(&args)
            .env("MOSS_ADDR", addr)
            .env("MOSS_HOME", home)
            .env("MOSS_TOKEN", token)
            .env("MOSS_NO_AUTOSTART", "1")
            .output()
            .expect("moss runs")
    })
    .await
    .unwrap()
}

/// `moss mcp config codex` connects Codex to the core toolset; `--toolsets` changes it, and a
/// toolset the daemon does not serve is refused naming the ones it does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_config_connects_to_core_unless_told_otherwise() {
    let d = TestDaemon::start().await;
    let base = format!("http://{}/mcp", d.daemon.addr);
    let out = moss(&d, &["mcp", "config", "codex"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("url = \"{base}?toolsets=core\"")),
        "{text}"
    );
    let out = moss(&d, &["mcp", "config", "codex", "--toolsets", "core,memory"]).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("url = \"{base}?toolsets=core,memory\"")),
        "{text}"
    );
    let out = moss(&d, &["mcp", "config", "codex", "--toolsets", "kore"]).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("\"kore\"") && err.contains("core") && err.contains("all"),
        "{err}"
    );
    d.stop().await;
}
