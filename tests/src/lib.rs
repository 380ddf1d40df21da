//! Test harness: a real daemon started in-process on port 0 in a temporary `MOSS_HOME`, a typed
//! client bound to it, and a minimal MCP-over-HTTP session for tool calls.
//!
//! ```no_run
//! # async fn f() {
//! let d = moss_tests::TestDaemon::start().await;
//! let health = d.client.health().await.unwrap();
//! # }
//! ```
//!
//! Tests wait for a condition by polling it ([`wait_for`], [`wait_until`], [`wait_past_second`]),
//! never by sleeping a fixed time.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use moss_client::Client;
use moss_daemon::{DaemonOptions, MossHome, RunningDaemon};
use serde_json::{Value, json};

/// A daemon serving in this process; stopped and its home deleted on drop.
pub struct TestDaemon {
    pub daemon: RunningDaemon,
    pub client: Client,
    pub base: String,
    pub token: String,
    pub home: tempfile::TempDir,
}

impl TestDaemon {
    pub async fn start() -> TestDaemon {
        Self::start_with_config(None).await
    }

    /// Starts with `$MOSS_HOME/config.json` holding `config`.
    pub async fn start_with_config(config: Option<Value>) -> TestDaemon {
        Self::start_in(tempfile::tempdir().expect("temp dir"), config).await
    }

    /// Starts on `home` (e.g. one a stopped daemon left, see [`TestDaemon::stop_keeping_home`]),
    /// with `config.json` holding `config` when given.
    pub async fn start_in(home: tempfile::TempDir, config: Option<Value>) -> TestDaemon {
        log_when_asked();
        let config = on_test_engine(home.path(), config).await;
        if let Some(cfg) = config {
            std::fs::write(home.path().join("config.json"), cfg.to_string()).unwrap();
        }
        let daemon = moss_daemon::start(DaemonOptions::ephemeral(MossHome::at(home.path())))
            .await
            .expect("daemon starts");
        let token = daemon.token.clone().unwrap_or_default();
        let base = format!("http://{}", daemon.addr);
        let client = Client::new(&daemon.addr.to_string(), Some(token.clone())).unwrap();
        TestDaemon {
            daemon,
            client,
            base,
            token,
            home,
        }
    }

    pub fn home_path(&self) -> &Path {
        self.home.path()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// A raw HTTP client with the bearer token set by each helper below.
    pub fn http(&self) -> reqwest::Client {
        reqwest::Client::new()
    }

    /// `method path` with the token and an optional JSON body; returns (status, JSON body).
    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let m = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let mut rb = self
            .http()
            .request(m, self.url(path))
            .bearer_auth(&self.token);
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let resp = rb.send().await.expect("request");
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, v)
    }

    /// An initialized MCP session.
    pub async fn mcp(&self) -> McpSession {
        McpSession::connect(&self.base, &self.token).await
    }

    /// An initialized MCP session on `/mcp?toolsets=…`.
    pub async fn mcp_with_toolsets(&self, toolsets: &str) -> McpSession {
        McpSession::connect_url(
            format!("{}/mcp?toolsets={toolsets}", self.base),
            &self.token,
        )
        .await
    }

    /// The capsule by id, deleted or not; `None` when it does not exist at all.
    pub async fn fetch_any(&self, id: &str) -> Option<Value> {
        let (s, c) = self
            .call("GET", &format!("/capsules/{id}?include_deleted=true"), None)
            .await;
        match s {
            200 => Some(c),
            404 => None,
            _ => panic!("fetch {id}: {s} {c}"),
        }
    }

    pub async fn stop(self) {
        self.daemon.shutdown().await.expect("clean shutdown");
    }

    /// Stops the daemon and hands back its home, to start another on it.
    pub async fn stop_keeping_home(self) -> tempfile::TempDir {
        self.daemon.shutdown().await.expect("clean shutdown");
        self.home
    }
}

/// With `MOSS_TEST_LOG` set (a filter such as `warn` or `moss_daemon=debug`), the daemons'
/// logs go to the test's output (shown for a failing test, or with `--nocapture`).
fn log_when_asked() {
    if let Ok(filter) = std::env::var("MOSS_TEST_LOG") {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_test_writer()
            .try_init();
    }
}

/// Whether the tests' daemons run on PostgreSQL (`MOSS_TEST_ENGINE=postgres`).
pub fn on_postgres() -> bool {
    std::env::var("MOSS_TEST_ENGINE").as_deref() == Ok("postgres")
}

/// `config` for a daemon on the engine the tests run on: with `MOSS_TEST_ENGINE=postgres`, a
/// `database` naming a schema of its own on the server `MOSS_TEST_POSTGRES` (kept in the home's
/// `config.json`, so a daemon restarted on the home finds its store again).
async fn on_test_engine(home: &Path, config: Option<Value>) -> Option<Value> {
    if !on_postgres() {
        return config;
    }
    // A test that names its own store (a SQLite file, say) keeps it. A home that already names
    // its store (a restart) keeps it too.
    let names_its_store = |c: &Value| c.get("database").is_some();
    let existing = std::fs::read_to_string(home.join("config.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    match &config {
        Some(c) if names_its_store(c) => return config,
        None if existing.as_ref().is_some_and(names_its_store) => return None,
        _ => {}
    }
    let database = match existing.as_ref().and_then(|c| c.get("database")) {
        Some(db) => db.clone(),
        None => json!(
            postgres_schema()
                .await
                .expect("MOSS_TEST_ENGINE=postgres needs MOSS_TEST_POSTGRES (a server's URL)")
        ),
    };
    let mut config = config.or(existing).unwrap_or_else(|| json!({}));
    config["database"] = database;
    Some(config)
}

/// A new, empty schema on the server `MOSS_TEST_POSTGRES` names, as a `database` URL (the
/// schema in its options); `None` without a server.
pub async fn postgres_schema() -> Option<String> {
    let url = std::env::var("MOSS_TEST_POSTGRES")
        .ok()
        .filter(|u| !u.is_empty())?;
    let made = tokio::task::spawn_blocking(move || {
        use moss_daemon::store::engine::{Db, postgres};
        let schema = format!("it_{}", unique_suffix());
        let conn = postgres::PgConn::connect(&postgres::config(&url).unwrap())
            .expect("the test server answers");
        Db::Postgres(&conn)
            .batch(&format!("CREATE SCHEMA {schema}"))
            .unwrap();
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}options=-c%20search_path%3D{schema}")
    })
    .await
    .unwrap();
    Some(made)
}

/// A suffix no other daemon of this run (or an earlier one) has: time and a counter.
fn unique_suffix() -> String {
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    format!("{nanos:x}_{}_{n}", std::process::id())
}

/// Polls `check` until it gives `Some`, and returns that value. The first polls come quickly
/// (1 ms apart), then the pause doubles up to 50 ms. Panics after `timeout`, saying it was
/// waiting for `what`.
pub async fn wait_for<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "still waiting for {what} after {timeout:?}"
        );
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Polls `check` until it holds (see [`wait_for`]); panics after `timeout` naming `what`.
pub async fn wait_until<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    wait_for(what, timeout, || {
        let held = check();
        async move { held.await.then_some(()) }
    })
    .await
}

/// The blocking form of [`wait_for`], for tests that drive the CLI as a process.
pub fn wait_for_blocking<T>(
    what: &str,
    timeout: Duration,
    mut check: impl FnMut() -> Option<T>,
) -> T {
    let deadline = Instant::now() + timeout;
    let mut pause = Duration::from_millis(1);
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "still waiting for {what} after {timeout:?}"
        );
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// The current Unix time in seconds, the unit of the daemon's `created_at` and `updated_at`.
pub fn unix_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("the clock is past 1970")
        .as_secs() as i64
}

/// Returns once the clock has passed the second `t` (a timestamp the daemon wrote), so that the
/// next write gets a later timestamp: at most one second, half a second on average.
pub async fn wait_past_second(t: i64) {
    wait_until(
        &format!("the clock to pass {t}"),
        Duration::from_secs(5),
        || async move { unix_seconds() > t },
    )
    .await
}

/// A capsule text that passes the lint, with a marker to tell capsules apart.
pub fn capsule_text(marker: &str) -> String {
    format!(
        "## Objective\n{marker}\n## Current status\nworking\n## Decisions\nnone yet\n\
         ## Next actions\n- continue\n## Key locations\nsrc/\n## Open questions\nnone\n"
    )
}

/// A minimal MCP client over streamable HTTP: enough to initialize, list and call tools.
pub struct McpSession {
    http: reqwest::Client,
    url: String,
    token: String,
    session: Option<String>,
    next_id: u64,
    /// The `result` of the `initialize` request (server info, capabilities, instructions).
    pub initialize: Value,
}

impl McpSession {
    pub async fn connect(base: &str, token: &str) -> McpSession {
        McpSession::connect_url(format!("{base}/mcp"), token).await
    }

    /// Initializes a session at `url` (the endpoint, with any query).
    pub async fn connect_url(url: String, token: &str) -> McpSession {
        let mut s = McpSession {
            http: reqwest::Client::new(),
            url,
            token: token.to_string(),
            session: None,
            next_id: 1,
            initialize: Value::Null,
        };
        let init = s
            .request(
                "initialize",
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "moss-tests", "version": "0"}
                }),
            )
            .await;
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        s.initialize = init["result"].clone();
        s.notify("notifications/initialized").await;
        s
    }

    async fn post(&self, body: &Value) -> reqwest::Response {
        let mut rb = self
            .http
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(body);
        if let Some(id) = &self.session {
            rb = rb.header("mcp-session-id", id);
        }
        rb.send().await.expect("mcp request")
    }

    /// Ends the session (`DELETE /mcp`); returns the HTTP status.
    pub async fn end(&self) -> u16 {
        let session = self.session.as_deref().expect("a session to end");
        self.http
            .delete(&self.url)
            .bearer_auth(&self.token)
            .header("mcp-protocol-version", "2025-06-18")
            .header("mcp-session-id", session)
            .send()
            .await
            .expect("mcp delete")
            .status()
            .as_u16()
    }

    /// Sends a request and returns the HTTP status only.
    pub async fn request_status(&mut self, method: &str, params: Value) -> u16 {
        let id = self.next_id;
        self.next_id += 1;
        self.post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
            .status()
            .as_u16()
    }

    async fn notify(&self, method: &str) {
        let resp = self
            .post(&json!({"jsonrpc": "2.0", "method": method}))
            .await;
        assert!(resp.status().is_success(), "{method}: {}", resp.status());
    }

    /// Sends a request and returns the JSON-RPC response object (with `result` or `error`).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        self.request_with_messages(method, params).await.0
    }

    /// Sends a request; returns its response and the messages the server sent before it on the
    /// same stream (notifications such as `notifications/progress`).
    pub async fn request_with_messages(
        &mut self,
        method: &str,
        params: Value,
    ) -> (Value, Vec<Value>) {
        let id = self.next_id;
        self.next_id += 1;
        let resp = self
            .post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        if let Some(sid) = resp.headers().get("mcp-session-id") {
            self.session = Some(sid.to_str().unwrap().to_string());
        }
        let is_sse = resp
            .headers()
            .get("content-type")
            .is_some_and(|c| c.to_str().unwrap_or("").starts_with("text/event-stream"));
        let text = resp.text().await.unwrap();
        if !is_sse {
            let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
            return (v, Vec::new());
        }
        let mut before = Vec::new();
        for line in text.lines() {
            if let Some(data) = line.strip_prefix("data:")
                && let Ok(v) = serde_json::from_str::<Value>(data.trim())
            {
                if v.get("id") == Some(&json!(id)) {
                    return (v, before);
                }
                before.push(v);
            }
        }
        panic!("no response to request {id} in: {text}");
    }

    pub async fn list_tools(&mut self) -> Vec<Value> {
        let r = self.request("tools/list", json!({})).await;
        r["result"]["tools"].as_array().cloned().unwrap_or_default()
    }

    /// Calls a tool; returns the `CallToolResult` object.
    pub async fn call_tool(&mut self, name: &str, args: Value) -> Value {
        let r = self
            .request("tools/call", json!({"name": name, "arguments": args}))
            .await;
        r.get("result")
            .cloned()
            .unwrap_or_else(|| panic!("tools/call {name} gave no result: {r}"))
    }
}

/// The files of an embedding model directory.
const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// The embedding model directory `MOSS_TEST_MODEL_DIR` names (`tests/fixtures/model.sh DIR`
/// makes one; `.ci/run` sets it), or `None` when it is unset or empty, which skips a test that
/// needs the model (it says so on stderr). Under `CI` a missing model is a failure, and a
/// directory without the model's files always is.
pub fn model_dir() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("MOSS_TEST_MODEL_DIR").filter(|v| !v.is_empty()) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "MOSS_TEST_MODEL_DIR must name the embedding model under CI (see .ci/run)"
        );
        eprintln!("MOSS_TEST_MODEL_DIR is unset: skipping a test that needs the model");
        return None;
    };
    let dir = PathBuf::from(dir);
    let missing: Vec<&str> = MODEL_FILES
        .iter()
        .copied()
        .filter(|f| !dir.join(f).is_file())
        .collect();
    assert!(
        missing.is_empty(),
        "MOSS_TEST_MODEL_DIR={} lacks {missing:?}: point it at a directory holding \
         {MODEL_FILES:?} (tests/fixtures/model.sh DIR makes one)",
        dir.display()
    );
    Some(dir)
}
