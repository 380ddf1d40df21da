//! `moss mcp`: an MCP server over stdio that forwards every JSON-RPC message to the daemon's
//! streamable HTTP endpoint (`/mcp`), for clients that only spawn stdio servers.
//!
//! Each line on stdin is one message. It is POSTed with `Accept: application/json,
//! text/event-stream`, the bearer token, and the `Mcp-Session-Id` and `MCP-Protocol-Version`
//! learned from `initialize`. A JSON answer, or each event of an SSE answer, is written to
//! stdout as one line; a notification answered `202 Accepted` produces nothing. Requests run
//! concurrently (a slow tool call does not hold up a cancellation); `initialize`,
//! notifications and responses are forwarded in order. At end of input the session is deleted.
//! Nothing but JSON-RPC goes to stdout; diagnostics go to stderr.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, RwLock};
use tokio::task::JoinSet;

use crate::{autostart, connect};

const SESSION_HEADER: &str = "mcp-session-id";
const PROTOCOL_HEADER: &str = "mcp-protocol-version";
/// JSON-RPC "internal error": the daemon could not be reached or refused the message.
const INTERNAL_ERROR: i64 = -32603;
const PARSE_ERROR: i64 = -32700;

struct Bridge {
    http: reqwest::Client,
    url: String,
    addr: String,
    token: Option<String>,
    session: RwLock<Option<String>>,
    protocol: RwLock<Option<String>>,
    out: Mutex<tokio::io::Stdout>,
}

/// Runs the bridge until stdin closes.
pub async fn run(addr: &str, toolsets: &[String]) -> anyhow::Result<()> {
    // Starts the daemon if needed (which also creates the token on a first start).
    autostart::ensure_running(addr).await?;
    let bridge = Arc::new(Bridge {
        http: reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()?,
        url: connect::mcp_url(addr, toolsets),
        addr: addr.to_string(),
        token: connect::token()?,
        session: RwLock::new(None),
        protocol: RwLock::new(None),
        out: Mutex::new(tokio::io::stdout()),
    });
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut in_flight = JoinSet::new();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let msg: Value = match serde_json::from_str(&line) {
            Ok(v) => v,
            Err(e) => {
                bridge
                    .write(&error_response(
                        Value::Null,
                        PARSE_ERROR,
                        format!("stdin line is not JSON: {e}"),
                    ))
                    .await;
                continue;
            }
        };
        let concurrent = is_request(&msg) && msg["method"] != "initialize";
        if concurrent {
            let b = bridge.clone();
            in_flight.spawn(async move { b.forward(msg).await });
        } else {
            bridge.forward(msg).await;
        }
        while in_flight.try_join_next().is_some() {}
    }
    while in_flight.join_next().await.is_some() {}
    bridge.end_session().await;
    Ok(())
}

/// A request carries a method and an id; a notification has no id; a response has no method.
fn is_request(msg: &Value) -> bool {
    msg.get("method").is_some() && msg.get("id").is_some_and(|id| !id.is_null())
}

fn error_response(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

impl Bridge {
    /// Writes one message as one line on stdout.
    async fn write(&self, msg: &Value) {
        let mut line = msg.to_string();
        line.push('\n');
        let mut out = self.out.lock().await;
        if out.write_all(line.as_bytes()).await.is_err() || out.flush().await.is_err() {
            // The client closed our stdout; nothing left to answer to.
            std::process::exit(0);
        }
    }

    async fn post(&self, body: String) -> reqwest::Result<reqwest::Response> {
        let mut rb = self
            .http
            .post(&self.url)
            .header(ACCEPT, "application/json, text/event-stream")
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(t) = &self.token {
            rb = rb.bearer_auth(t);
        }
        if let Some(s) = self.session.read().await.as_deref() {
            rb = rb.header(SESSION_HEADER, s);
        }
        if let Some(p) = self.protocol.read().await.as_deref() {
            rb = rb.header(PROTOCOL_HEADER, p);
        }
        rb.send().await
    }

    /// Forwards one message and writes whatever comes back.
    async fn forward(&self, msg: Value) {
        let id = is_request(&msg).then(|| msg["id"].clone());
        let is_init = msg["method"] == "initialize";
        let resp = match self.post(msg.to_string()).await {
            Ok(r) => r,
            Err(e) => {
                return self
                    .fail(
                        id,
                        format!("the Moss daemon at {} did not answer: {e}", self.addr),
                    )
                    .await;
            }
        };
        if let Some(sid) = resp
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
        {
            *self.session.write().await = Some(sid.to_string());
        }
        let status = resp.status();
        if status == StatusCode::ACCEPTED {
            return;
        }
        let is_sse = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|c| c.starts_with("text/event-stream"));
        if !status.is_success() {
            let body = resp.text().await.unwrap_or_default();
            return self.fail(id, self.http_error(status, &body).await).await;
        }
        if is_sse {
            self.relay_sse(resp, is_init).await;
        } else {
            match resp.bytes().await {
                Ok(bytes) => self.relay_json(&bytes, is_init).await,
                Err(e) => {
                    self.fail(id, format!("reading the daemon's answer failed: {e}"))
                        .await
                }
            }
        }
    }

    /// Streams an SSE answer, writing each event's data as it arrives.
    async fn relay_sse(&self, mut resp: reqwest::Response, is_init: bool) {
        let mut buf: Vec<u8> = Vec::new();
        loop {
            match resp.chunk().await {
                Ok(Some(chunk)) => {
                    buf.extend_from_slice(&chunk);
                    while let Some((event, rest)) = split_event(&buf) {
                        self.relay_event(&event, is_init).await;
                        buf = rest;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    eprintln!("moss mcp: the daemon's event stream broke off: {e}");
                    break;
                }
            }
        }
        if !buf.is_empty() {
            self.relay_event(&String::from_utf8_lossy(&buf), is_init)
                .await;
        }
    }

    async fn relay_event(&self, event: &str, is_init: bool) {
        let data = sse_data(event);
        if data.trim().is_empty() {
            return; // priming events and keep-alives carry no message
        }
        self.relay_json(data.as_bytes(), is_init).await;
    }

    async fn relay_json(&self, bytes: &[u8], is_init: bool) {
        let value: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(e) => {
                eprintln!(
                    "moss mcp: the daemon sent something that is not JSON ({e}): {}",
                    String::from_utf8_lossy(bytes)
                );
                return;
            }
        };
        let messages = match value {
            Value::Array(items) => items,
            one => vec![one],
        };
        for m in messages {
            if is_init
                && let Some(v) = m
                    .get("result")
                    .and_then(|r| r.get("protocolVersion"))
                    .and_then(Value::as_str)
            {
                *self.protocol.write().await = Some(v.to_string());
            }
            self.write(&m).await;
        }
    }

    /// A daemon's HTTP error as one sentence.
    async fn http_error(&self, status: StatusCode, body: &str) -> String {
        let detail = serde_json::from_str::<moss_client::ErrorEnvelope>(body)
            .map(|env| format!("[{}] {}", env.error.code, env.error.message))
            .unwrap_or_else(|_| body.trim().to_string());
        if status == StatusCode::NOT_FOUND && self.session.read().await.is_some() {
            return format!(
                "the Moss daemon at {} no longer knows this MCP session (it restarted?); \
                 restart the MCP client to open a new one ({detail})",
                self.addr
            );
        }
        format!(
            "the Moss daemon at {} answered HTTP {status}: {detail}",
            self.addr
        )
    }

    /// Answers a request that could not be forwarded with a JSON-RPC error; for anything else
    /// (nobody awaits an answer) says so on stderr.
    async fn fail(&self, id: Option<Value>, message: String) {
        match id {
            Some(id) => {
                self.write(&error_response(id, INTERNAL_ERROR, message))
                    .await
            }
            None => eprintln!("moss mcp: {message}"),
        }
    }

    /// Deletes the session at end of input, so the daemon frees it at once.
    async fn end_session(&self) {
        let Some(sid) = self.session.read().await.clone() else {
            return;
        };
        let mut rb = self.http.delete(&self.url).header(SESSION_HEADER, sid);
        if let Some(t) = &self.token {
            rb = rb.bearer_auth(t);
        }
        if let Some(p) = self.protocol.read().await.as_deref() {
            rb = rb.header(PROTOCOL_HEADER, p);
        }
        let _ = tokio::time::timeout(Duration::from_secs(2), rb.send()).await;
    }
}

/// Splits the first complete SSE event (ended by a blank line) off `buf`.
fn split_event(buf: &[u8]) -> Option<(String, Vec<u8>)> {
    let mut i = 0;
    while i < buf.len() {
        if buf[i] == b'\n' {
            let next = &buf[i + 1..];
            let skip = if next.starts_with(b"\n") {
                1
            } else if next.starts_with(b"\r\n") {
                2
            } else {
                0
            };
            if skip > 0 {
                let event = String::from_utf8_lossy(&buf[..i]).into_owned();
                return Some((event, buf[i + 1 + skip..].to_vec()));
            }
        }
        i += 1;
    }
    None
}

/// The data of one SSE event: its `data:` lines joined by newlines.
fn sse_data(event: &str) -> String {
    let mut data = Vec::new();
    for line in event.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if let Some(d) = line.strip_prefix("data:") {
            data.push(d.strip_prefix(' ').unwrap_or(d));
        }
    }
    data.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events_are_split_on_blank_lines() {
        let buf = b"id: 1\ndata: {\"a\":1}\n\ndata: {\"b\":\ndata: 2}\r\n\r\npartial";
        let (first, rest) = split_event(buf).unwrap();
        assert_eq!(sse_data(&first), "{\"a\":1}");
        let (second, rest) = split_event(&rest).unwrap();
        assert_eq!(sse_data(&second), "{\"b\":\n2}");
        assert_eq!(rest, b"partial");
        assert!(split_event(&rest).is_none());
    }

    #[test]
    fn requests_notifications_and_responses_are_told_apart() {
        assert!(is_request(&json!({"method": "tools/list", "id": 1})));
        assert!(!is_request(&json!({"method": "notifications/initialized"})));
        assert!(!is_request(&json!({"id": 1, "result": {}})));
    }
}
