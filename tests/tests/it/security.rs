//! The guard in front of REST and MCP: bearer token, Host and Origin checks (DNS rebinding and
//! cross-site defences), the request body cap, and the 404 envelope for unknown routes.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const MCP_INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// Sends a request with exactly the headers given (no token unless passed); (status, JSON).
async fn send(
    d: &TestDaemon,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<String>,
) -> (u16, Value) {
    let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
    let mut rb = d.http().request(m, d.url(path));
    for (k, v) in headers {
        rb = rb.header(*k, *v);
    }
    if let Some(b) = body {
        rb = rb.header("content-type", "application/json").body(b);
    }
    let resp = rb.send().await.expect("request");
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn mcp_headers(auth: &str) -> Vec<(&str, &str)> {
    vec![
        ("authorization", auth),
        ("accept", "application/json, text/event-stream"),
    ]
}

fn expect_error(status: u16, body: &Value, code: &str, http: u16) -> String {
    assert_eq!(status, http, "expected {code}: {body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["error"]["status"], http, "{body}");
    body["error"]["message"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn requests_without_the_token_are_401_naming_the_token_file() {
    let d = TestDaemon::start().await;
    let token_file = d.home_path().join("token");
    assert_eq!(
        std::fs::read_to_string(&token_file).unwrap().trim(),
        d.token,
        "the token lives in $MOSS_HOME/token"
    );
    let token_path = token_file.display().to_string();
    let store_body = json!({"capsule_text": capsule_text("x")}).to_string();
    let cases: Vec<(&str, &str, Option<String>)> = vec![
        ("GET", "/capsules", None),
        ("POST", "/capsules", Some(store_body.clone())),
        ("GET", "/capsules/inventory", None),
        ("GET", "/capsules/latest", None),
        ("DELETE", "/capsules/by-name?name=x", None),
        ("POST", "/mcp", Some(MCP_INIT.to_string())),
    ];
    for (method, path, body) in cases {
        let headers: &[(&str, &str)] = if path == "/mcp" {
            &[("accept", "application/json, text/event-stream")]
        } else {
            &[]
        };
        let (s, b) = send(&d, method, path, headers, body).await;
        let message = expect_error(s, &b, "UNAUTHORIZED", 401);
        assert!(
            message.contains(&token_path),
            "{method} {path}: message does not name {token_path}: {message}"
        );
    }
    // Nothing was stored.
    let (_, inv) = d.call("GET", "/capsules/inventory", None).await;
    assert_eq!(inv["pagination"]["total"], 0);
}

#[tokio::test]
async fn a_wrong_or_malformed_token_is_401() {
    let d = TestDaemon::start().await;
    let wrong = format!("Bearer {}x", d.token);
    let short = format!("Bearer {}", &d.token[..d.token.len() - 1]);
    let basic = format!("Basic {}", d.token);
    for auth in [
        wrong.as_str(),
        short.as_str(),
        basic.as_str(),
        "Bearer ",
        "Bearer",
    ] {
        let (s, b) = send(&d, "GET", "/capsules", &[("authorization", auth)], None).await;
        expect_error(s, &b, "UNAUTHORIZED", 401);
        let (s, b) = send(
            &d,
            "POST",
            "/mcp",
            &mcp_headers(auth),
            Some(MCP_INIT.to_string()),
        )
        .await;
        expect_error(s, &b, "UNAUTHORIZED", 401);
    }
    let good = format!("Bearer {}", d.token);
    let (s, b) = send(&d, "GET", "/capsules", &[("authorization", &good)], None).await;
    assert_eq!(s, 200, "{b}");
}

#[tokio::test]
async fn health_needs_no_token() {
    let d = TestDaemon::start().await;
    let (s, b) = send(&d, "GET", "/health", &[], None).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["status"], "ok");
    assert_eq!(b["version"], moss_client::VERSION);
    // Even a wrong token does not matter for /health.
    let (s, _) = send(
        &d,
        "GET",
        "/health",
        &[("authorization", "Bearer nope")],
        None,
    )
    .await;
    assert_eq!(s, 200);
}

#[tokio::test]
async fn a_foreign_host_is_403_everywhere() {
    let d = TestDaemon::start().await;
    let auth = format!("Bearer {}", d.token);
    let port = d.daemon.addr.port();
    let evil_port = format!("evil.example:{port}");
    let rebind = format!("127.0.0.1.evil.example:{port}");
    let lan = format!("192.168.1.10:{port}");
    for host in [
        "evil.example",
        evil_port.as_str(),
        rebind.as_str(),
        lan.as_str(),
    ] {
        for (method, path, body) in [
            ("GET", "/capsules", None),
            (
                "POST",
                "/capsules",
                Some(json!({"capsule_text": capsule_text("x")}).to_string()),
            ),
            ("GET", "/health", None),
            ("POST", "/mcp", Some(MCP_INIT.to_string())),
        ] {
            let mut headers = mcp_headers(&auth);
            headers.push(("host", host));
            let (s, b) = send(&d, method, path, &headers, body).await;
            let message = expect_error(s, &b, "FORBIDDEN", 403);
            assert!(message.contains("Host"), "{message}");
        }
        // Without a token too: Host is checked first.
        let (s, b) = send(&d, "GET", "/capsules", &[("host", host)], None).await;
        expect_error(s, &b, "FORBIDDEN", 403);
    }
    let (_, inv) = d.call("GET", "/capsules/inventory", None).await;
    assert_eq!(
        inv["pagination"]["total"], 0,
        "the refused store stored nothing"
    );

    // Loopback names pass.
    let localhost = format!("localhost:{port}");
    let v4 = format!("127.0.0.1:{port}");
    let v6 = format!("[::1]:{port}");
    for host in [localhost.as_str(), v4.as_str(), v6.as_str(), "localhost"] {
        let (s, b) = send(
            &d,
            "GET",
            "/capsules",
            &[("authorization", &auth), ("host", host)],
            None,
        )
        .await;
        assert_eq!(s, 200, "{host}: {b}");
    }
}

#[tokio::test]
async fn a_foreign_origin_is_403_and_a_loopback_origin_passes() {
    let d = TestDaemon::start().await;
    let auth = format!("Bearer {}", d.token);
    for origin in [
        "http://evil.example",
        "https://evil.example:3000",
        "http://localhost.evil.example",
        "http://localhost@evil.example",
        "null",
        "file://localhost",
    ] {
        let mut headers = mcp_headers(&auth);
        headers.push(("origin", origin));
        let (s, b) = send(&d, "GET", "/capsules", &headers, None).await;
        let message = expect_error(s, &b, "FORBIDDEN", 403);
        assert!(message.contains("Origin"), "{message}");
        let (s, b) = send(&d, "POST", "/mcp", &headers, Some(MCP_INIT.to_string())).await;
        expect_error(s, &b, "FORBIDDEN", 403);
        let (s, b) = send(
            &d,
            "POST",
            "/capsules",
            &headers,
            Some(json!({"capsule_text": capsule_text("x")}).to_string()),
        )
        .await;
        expect_error(s, &b, "FORBIDDEN", 403);
    }
    let (_, inv) = d.call("GET", "/capsules/inventory", None).await;
    assert_eq!(inv["pagination"]["total"], 0);

    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1:5173",
        "https://localhost",
        "http://[::1]:8080",
    ] {
        let mut headers = mcp_headers(&auth);
        headers.push(("origin", origin));
        let (s, b) = send(&d, "GET", "/capsules", &headers, None).await;
        assert_eq!(s, 200, "{origin}: {b}");
        let (s, b) = send(&d, "POST", "/mcp", &headers, Some(MCP_INIT.to_string())).await;
        assert_eq!(s, 200, "{origin}: {b}");
    }
}

#[tokio::test]
async fn a_body_over_the_cap_is_413_request_too_large() {
    let d = TestDaemon::start_with_config(Some(json!({"max_body_bytes": 2048}))).await;
    let auth = format!("Bearer {}", d.token);
    let big =
        json!({"capsule_text": capsule_text(&"x".repeat(4000)), "allow_thin": true}).to_string();
    assert!(big.len() > 2048);
    let (s, b) = send(
        &d,
        "POST",
        "/capsules",
        &[("authorization", &auth)],
        Some(big),
    )
    .await;
    let message = expect_error(s, &b, "REQUEST_TOO_LARGE", 413);
    assert!(message.contains("2048"), "{message}");
    assert_eq!(b["error"]["details"]["max_bytes"], 2048, "{b}");

    let big_mcp = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                         "params": {"name": "capsule_store",
                                    "arguments": {"capsule_text": "y".repeat(4000)}}})
    .to_string();
    let (s, b) = send(&d, "POST", "/mcp", &mcp_headers(&auth), Some(big_mcp)).await;
    expect_error(s, &b, "REQUEST_TOO_LARGE", 413);

    let big_update = json!({"title": "t".repeat(3000)}).to_string();
    let (s, b) = send(
        &d,
        "PUT",
        "/capsules/by-name?name=x",
        &[("authorization", &auth)],
        Some(big_update),
    )
    .await;
    expect_error(s, &b, "REQUEST_TOO_LARGE", 413);

    // Under the cap is fine, and nothing of the refused requests was stored.
    let (s, b) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"name": "small", "capsule_text": capsule_text("s")})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let (_, inv) = d.call("GET", "/capsules/inventory", None).await;
    assert_eq!(inv["pagination"]["total"], 1);
}

/// Sends `body` with `Transfer-Encoding: chunked` (no Content-Length); returns the raw response.
async fn send_chunked(d: &TestDaemon, path: &str, extra_headers: &str, body: &str) -> String {
    let mut chunked = String::new();
    for chunk in body.as_bytes().chunks(1000) {
        chunked.push_str(&format!("{:x}\r\n", chunk.len()));
        chunked.push_str(std::str::from_utf8(chunk).unwrap());
        chunked.push_str("\r\n");
    }
    chunked.push_str("0\r\n\r\n");
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\n{extra_headers}Transfer-Encoding: chunked\r\n\
         Connection: close\r\n\r\n{chunked}",
        d.token
    );
    let mut stream = tokio::net::TcpStream::connect(d.daemon.addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    // The server may answer and close before reading the whole body; what it sent is enough.
    let _ = stream.read_to_end(&mut response).await;
    String::from_utf8_lossy(&response).into_owned()
}

#[tokio::test]
async fn a_chunked_body_over_the_cap_is_413_too() {
    // No Content-Length: the cap is enforced while the body is read.
    let d = TestDaemon::start_with_config(Some(json!({"max_body_bytes": 2048}))).await;
    let body = json!({"capsule_text": "z".repeat(5000), "allow_thin": true}).to_string();
    let response = send_chunked(&d, "/capsules", "", &body).await;
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert!(response.contains("REQUEST_TOO_LARGE"), "{response}");

    let mcp = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "capsule_store",
                                "arguments": {"capsule_text": "y".repeat(5000)}}})
    .to_string();
    let response = send_chunked(
        &d,
        "/mcp",
        "Accept: application/json, text/event-stream\r\n",
        &mcp,
    )
    .await;
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert!(response.contains("REQUEST_TOO_LARGE"), "{response}");

    let (_, inv) = d.call("GET", "/capsules/inventory", None).await;
    assert_eq!(inv["pagination"]["total"], 0);

    // Chunked bodies under the cap are served as usual, on both faces.
    let small = json!({"name": "chunked", "capsule_text": capsule_text("c")}).to_string();
    let response = send_chunked(&d, "/capsules", "", &small).await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    let response = send_chunked(
        &d,
        "/mcp",
        "Accept: application/json, text/event-stream\r\n",
        MCP_INIT,
    )
    .await;
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.contains("serverInfo"), "{response}");
    let (_, inv) = d.call("GET", "/capsules/inventory", None).await;
    assert_eq!(inv["pagination"]["total"], 1);
}

#[tokio::test]
async fn unknown_routes_are_a_404_envelope() {
    let d = TestDaemon::start().await;
    for (method, path) in [
        ("GET", "/nope"),
        ("GET", "/capsules/a/b"),
        ("POST", "/v1/capsules"),
        ("GET", "/"),
    ] {
        let (s, b) = d.call(method, path, None).await;
        let message = expect_error(s, &b, "NOT_FOUND", 404);
        assert!(message.contains(path), "{message}");
    }
    // Unknown routes are behind the token like everything else.
    let (s, b) = send(&d, "GET", "/nope", &[], None).await;
    expect_error(s, &b, "UNAUTHORIZED", 401);
}

/// Sends `head` (request line and headers, without the blank line) and `body` as raw bytes on
/// a new connection; returns (status, JSON body, raw response).
async fn raw(d: &TestDaemon, head: &[u8], body: &str) -> (u16, Value, String) {
    let mut request = head.to_vec();
    request.extend_from_slice(
        format!(
            "\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    );
    let mut stream = tokio::net::TcpStream::connect(d.daemon.addr).await.unwrap();
    stream.write_all(&request).await.unwrap();
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response).await;
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let json = serde_json::from_str(body).unwrap_or(Value::Null);
    (status, json, text)
}

/// Host and Origin are parsed strictly: an authority with anything after the IPv6 literal, an
/// unclosed literal, a second Host header, a Host that is not ASCII and the authority of an
/// absolute-form target are all checked, and each wrong one is a 403 envelope.
#[tokio::test]
async fn malformed_hosts_and_origins_are_403() {
    let d = TestDaemon::start().await;
    let token = d.token.clone();
    let auth =
        |rest: &str| format!("GET /capsules HTTP/1.1\r\nAuthorization: Bearer {token}\r\n{rest}");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("IPv6 literal with a name after it", auth("Host: [::1]evil.com").into_bytes()),
        ("unclosed IPv6 literal", auth("Host: [::1").into_bytes()),
        ("port with a name", auth("Host: localhost:80evil").into_bytes()),
        ("two Host headers", auth("Host: localhost\r\nHost: evil.com").into_bytes()),
        ("two loopback Host headers", auth("Host: localhost\r\nHost: 127.0.0.1").into_bytes()),
        (
            "Origin with a name after the IPv6 literal",
            auth("Host: localhost\r\nOrigin: http://[::1]evil.com").into_bytes(),
        ),
        (
            "Origin with a path",
            auth("Host: localhost\r\nOrigin: http://localhost/evil").into_bytes(),
        ),
        (
            "non-ASCII Host with an absolute-form target",
            [
                format!(
                    "GET http://evil.com/capsules HTTP/1.1\r\nAuthorization: Bearer {token}\r\nHost: "
                )
                .as_bytes(),
                "l\u{f6}calhost".as_bytes(),
            ]
            .concat(),
        ),
        (
            "non-ASCII Host with a loopback absolute-form target",
            [
                format!(
                    "GET http://localhost/capsules HTTP/1.1\r\nAuthorization: Bearer {token}\r\nHost: "
                )
                .as_bytes(),
                "l\u{f6}calhost".as_bytes(),
            ]
            .concat(),
        ),
        (
            "absolute-form target naming another host",
            format!(
                "GET http://evil.com/capsules HTTP/1.1\r\nAuthorization: Bearer {token}\r\nHost: localhost"
            )
            .into_bytes(),
        ),
    ];
    for (what, head) in cases {
        let (s, b, text) = raw(&d, &head, "").await;
        assert_eq!(s, 403, "{what}: {text}");
        expect_error(s, &b, "FORBIDDEN", 403);
    }
    // Well-formed loopback requests pass, absolute-form included.
    for head in [
        auth("Host: [::1]"),
        auth("Host: localhost\r\nOrigin: http://[::1]:3000"),
        format!(
            "GET http://127.0.0.1/capsules HTTP/1.1\r\nAuthorization: Bearer {token}\r\nHost: 127.0.0.1"
        ),
    ] {
        let (s, _, text) = raw(&d, head.as_bytes(), "").await;
        assert_eq!(s, 200, "{head}: {text}");
    }
}

/// Refusals made below the routes, by axum's extractors and by the MCP transport, are the
/// error envelope like every other; a body that is not JSON-RPC is a 400 naming the body, not
/// a 415.
#[tokio::test]
async fn every_refusal_is_the_json_envelope() {
    let d = TestDaemon::start().await;
    let auth = format!("Bearer {}", d.token);
    let json_ct = ("content-type", "application/json");
    let accept = ("accept", "application/json, text/event-stream");
    let a = ("authorization", auth.as_str());
    // (what, method, path, headers, body, code, status)
    type Case<'a> = (
        &'a str,
        &'a str,
        &'a str,
        Vec<(&'a str, &'a str)>,
        Option<&'a str>,
        &'a str,
        u16,
    );
    let cases: Vec<Case> = vec![
        (
            "malformed JSON-RPC",
            "POST",
            "/mcp",
            vec![a, accept, json_ct],
            Some("{not json"),
            "INVALID_REQUEST",
            400,
        ),
        (
            "a JSON value that is not JSON-RPC",
            "POST",
            "/mcp",
            vec![a, accept, json_ct],
            Some("[1,2]"),
            "INVALID_REQUEST",
            400,
        ),
        (
            "no content type",
            "POST",
            "/mcp",
            vec![a, accept],
            Some(MCP_INIT),
            "INVALID_REQUEST",
            400,
        ),
        (
            "no accept",
            "POST",
            "/mcp",
            vec![a, json_ct],
            Some(MCP_INIT),
            "INVALID_REQUEST",
            400,
        ),
        (
            "unknown session",
            "POST",
            "/mcp",
            vec![a, accept, json_ct, ("mcp-session-id", "nope")],
            Some(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#),
            "NOT_FOUND",
            404,
        ),
        (
            "GET without a session",
            "GET",
            "/mcp",
            vec![a, ("accept", "text/event-stream")],
            None,
            "INVALID_REQUEST",
            400,
        ),
        (
            "wrong method on /mcp",
            "PUT",
            "/mcp",
            vec![a, accept, json_ct],
            Some(MCP_INIT),
            "INVALID_REQUEST",
            400,
        ),
        (
            "wrong method on a route",
            "PATCH",
            "/capsules/search",
            vec![a],
            None,
            "INVALID_REQUEST",
            400,
        ),
        (
            "unknown route",
            "GET",
            "/nope",
            vec![a],
            None,
            "NOT_FOUND",
            404,
        ),
    ];
    for (what, method, path, headers, body, code, status) in cases {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut rb = d.http().request(m, d.url(path));
        for (k, v) in &headers {
            rb = rb.header(*k, *v);
        }
        if let Some(b) = body {
            rb = rb.body(b.to_string());
        }
        let resp = rb.send().await.unwrap();
        let s = resp.status().as_u16();
        let ct = resp
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let text = resp.text().await.unwrap();
        let b: Value = serde_json::from_str(&text)
            .unwrap_or_else(|_| panic!("{what}: not JSON ({s}, {ct}): {text}"));
        assert!(ct.starts_with("application/json"), "{what}: {ct}");
        assert_eq!(s, status, "{what}: {b}");
        expect_error(s, &b, code, status);
    }
}
