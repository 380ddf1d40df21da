//! MCP over streamable HTTP at `/mcp` (rmcp). Tools are listed from the family registry
//! ([`crate::family`]) and dispatched to the same domain operations as REST. A failed call is a
//! tool result with `isError: true` whose text and `structuredContent` are the error envelope,
//! including bad arguments (which would otherwise be a bare JSON-RPC -32602).
//!
//! A connection is served the tools of the config's `toolsets`, or fewer: `/mcp?toolsets=a,b`
//! narrows them to the union of those toolsets (families, `core`, `all`;
//! [`toolsets_from_query`], checked before rmcp sees the request). The session keeps the set its
//! `initialize` asked for; its `instructions` are composed from it and say how to reach the rest.

pub mod schema;
pub mod sessions;

use std::sync::{Arc, OnceLock};

use moss_client::daemon::{ToolInfo, ToolList};
use moss_client::{ErrorCode, ErrorEnvelope};
use rmcp::model::*;
use rmcp::service::{Peer, RequestContext};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::app::AppState;
use crate::error::{Error, Result};
use crate::family::{self, Toolsets};
use crate::progress::Progress;

/// One MCP session's handler. Sessions share the daemon's state.
#[derive(Clone)]
pub struct MossMcp {
    state: AppState,
    /// The tools this session is served, fixed by its `initialize` request's URL.
    toolsets: Arc<OnceLock<Toolsets>>,
}

impl MossMcp {
    /// The session's tools: those its `initialize` asked for, else those this request's URL
    /// asks for, else every tool the config serves.
    fn toolsets(&self, context: &RequestContext<RoleServer>) -> Toolsets {
        if let Some(t) = self.toolsets.get() {
            return t.clone();
        }
        requested(context).unwrap_or_else(|| self.state.toolsets.clone())
    }
}

/// The toolsets the guard in front of `/mcp` read from this request's query, if it had any.
fn requested(context: &RequestContext<RoleServer>) -> Option<Toolsets> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Toolsets>())
        .cloned()
}

impl ServerHandler for MossMcp {
    fn get_info(&self) -> ServerConfig {
        let toolsets = self.toolsets.get().unwrap_or(&self.state.toolsets);
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("moss", moss_client::VERSION))
            .with_instructions(toolsets.instructions(&self.state.toolsets))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<InitializeResult, McpError> {
        let toolsets = requested(&context).unwrap_or_else(|| self.state.toolsets.clone());
        let _ = self.toolsets.set(toolsets);
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(listed(
            &self.state,
            &self.toolsets(&context),
        )))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let args = Value::Object(request.arguments.unwrap_or_default());
        let args = match family::tool(&name) {
            Some((_, t)) => with_session(t, args, &context),
            None => args,
        };
        let outcome = match callable(&self.state, &self.toolsets(&context), &name) {
            Err(e) => Err(e),
            Ok(tool) => {
                let token = context
                    .meta
                    .get_progress_token()
                    .or_else(|| request.meta.as_ref().and_then(|m| m.get_progress_token()));
                let progress = match token {
                    Some(_) => Progress::tracked(),
                    None => Progress::none(),
                };
                let stop = CancellationToken::new();
                let notifier = token.map(|t| {
                    tokio::spawn(notify_progress(
                        context.peer.clone(),
                        t,
                        progress.clone(),
                        stop.clone(),
                    ))
                });
                let r = tokio::select! {
                    r = (tool.handler)(self.state.clone(), args, progress) => r,
                    _ = context.ct.cancelled() => Err(Error::new(
                        ErrorCode::Cancelled,
                        format!("{name} cancelled by the client"),
                    )),
                };
                // The last report goes out before the result.
                stop.cancel();
                if let Some(n) = notifier {
                    let _ = n.await;
                }
                r
            }
        };
        Ok(match outcome {
            Ok(value) => result_of(value, false),
            Err(e) => error_result(e),
        }
        .into())
    }

    /// rmcp hands over as a custom request any request it does not know, and a `tools/call`
    /// whose params do not decode, which would then be answered "method not found". That is a
    /// tool error naming the bad field instead, like a bad argument.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CustomResult, McpError> {
        let method = request.method.as_str();
        if method == "tools/call" {
            let result = error_result(malformed_call(request.params.as_ref()));
            let value = serde_json::to_value(result)
                .map_err(|e| McpError::internal_error(e.to_string(), None))?;
            return Ok(CustomResult(value));
        }
        Err(McpError::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!(
                "method {method:?} is not served here; Moss serves tools (tools/list, tools/call)"
            ),
            None,
        ))
    }
}

/// The envelope of `e` as a tool result with `isError: true`.
fn error_result(e: Error) -> CallToolResult {
    let env = serde_json::to_value(ErrorEnvelope { error: e.0 }).unwrap_or(Value::Null);
    result_of(env, true)
}

/// `INVALID_REQUEST` naming what is wrong with the params of a `tools/call` that did not decode.
fn malformed_call(params: Option<&Value>) -> Error {
    let kind = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let (field, message) = match params {
        None => (
            "params",
            "tools/call needs params {name, arguments}".to_string(),
        ),
        Some(Value::Object(o)) => match (o.get("name"), o.get("arguments")) {
            (None, _) => (
                "name",
                "tools/call needs `name`, the tool to call (see tools/list)".to_string(),
            ),
            (Some(n), _) if !n.is_string() => (
                "name",
                format!(
                    "tools/call `name` must be a string naming a tool, got {}",
                    kind(n)
                ),
            ),
            (_, Some(a)) if !a.is_object() && !a.is_null() => (
                "arguments",
                format!(
                    "tools/call `arguments` must be an object of the tool's arguments, got {}",
                    kind(a)
                ),
            ),
            _ => (
                "params",
                "tools/call params do not decode; send {name, arguments}".to_string(),
            ),
        },
        Some(p) => (
            "params",
            format!(
                "tools/call params must be an object {{name, arguments}}, got {}",
                kind(p)
            ),
        ),
    };
    Error::invalid_field(field, message)
}

/// Sends `notifications/progress` for `token` every 250 ms while the report changes, and once
/// more when `stop` is cancelled (the call ended), so the final count is always sent. MCP wants
/// `progress` to only grow, so each phase continues where the previous one's total ended; the
/// message names the phase and its own counts.
async fn notify_progress(
    peer: Peer<RoleServer>,
    token: ProgressToken,
    progress: Progress,
    stop: CancellationToken,
) {
    let mut last: Option<moss_client::daemon::ProgressReport> = None;
    let mut offset = 0u64;
    let mut tick = tokio::time::interval(std::time::Duration::from_millis(250));
    let mut stopping = false;
    loop {
        if stopping {
            return;
        }
        tokio::select! {
            _ = tick.tick() => {}
            () = stop.cancelled() => stopping = true,
        }
        let Some(report) = progress.report() else {
            return;
        };
        if last.as_ref() == Some(&report) || report.phase.is_empty() {
            continue;
        }
        if let Some(prev) = &last
            && prev.phase != report.phase
        {
            offset += prev.total.max(prev.done);
        }
        let mut param =
            ProgressNotificationParam::new(token.clone(), (offset + report.done) as f64)
                .with_message(format!(
                    "{}: {} of {}",
                    report.phase, report.done, report.total
                ));
        if report.total > 0 {
            param = param.with_total((offset + report.total) as f64);
        }
        if peer.notify_progress(param).await.is_err() {
            return;
        }
        last = Some(report);
    }
}

/// A tool result whose text and structured content are the same JSON object.
fn result_of(value: Value, is_error: bool) -> CallToolResult {
    let value = match value {
        Value::Object(_) => value,
        other => serde_json::json!({ "result": other }),
    };
    if is_error {
        CallToolResult::structured_error(value)
    } else {
        CallToolResult::structured(value)
    }
}

/// Answers a session's end (`DELETE /mcp`) with 204 No Content instead of rmcp's 202
/// Accepted: the session is closed by then, and the official Python SDK warns "Session
/// termination failed: 202" on every disconnect otherwise (it expects 200 or 204).
///
/// A session's end also ends its memory session: its non-persistent memories go.
pub async fn session_end_no_content(
    axum::extract::State(state): axum::extract::State<AppState>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let delete = req.method() == axum::http::Method::DELETE;
    let session = req
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(memory_session);
    let mut resp = next.run(req).await;
    if delete && resp.status().is_success() {
        if let Some(s) = session {
            let memories = state.memories.clone();
            tokio::spawn(async move { memories.end_session(&s).await });
        }
        if resp.status() == axum::http::StatusCode::ACCEPTED {
            *resp.status_mut() = axum::http::StatusCode::NO_CONTENT;
        }
    }
    resp
}

/// The memory session of an MCP session.
pub fn memory_session(mcp_session_id: &str) -> String {
    format!("mcp:{mcp_session_id}")
}

/// A call on a connection belongs to its session unless it names one, for the tools that take a
/// `session`.
fn with_session(
    tool: &family::Tool,
    mut args: Value,
    context: &RequestContext<RoleServer>,
) -> Value {
    if !tool.takes_session() {
        return args;
    }
    let id = context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.headers.get("mcp-session-id"))
        .and_then(|v| v.to_str().ok());
    if let (Some(id), Value::Object(map)) = (id, &mut args)
        && !map.contains_key("session")
    {
        map.insert("session".into(), Value::String(memory_session(id)));
    }
    args
}

/// The `/mcp` service. Host/Origin/auth are checked by the guard in front of it, so rmcp's own
/// Host allow-list is turned off (one implementation of the rule). Its sessions are the
/// daemon's bounded [`sessions::McpSessions`].
pub fn service(
    state: AppState,
    shutdown: CancellationToken,
) -> StreamableHttpService<MossMcp, sessions::McpSessions> {
    let sessions = state.daemon.mcp_sessions.clone();
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_cancellation_token(shutdown)
        .with_max_request_body_bytes(state.config.max_body_bytes);
    StreamableHttpService::new(
        move || {
            Ok(MossMcp {
                state: state.clone(),
                toolsets: Arc::new(OnceLock::new()),
            })
        },
        sessions,
        config,
    )
}

/// The tools/list entries of `toolsets` that the config leaves enabled.
fn listed(state: &AppState, toolsets: &Toolsets) -> Vec<Tool> {
    family::tools()
        .filter(|(f, t)| toolsets.contains(t.name) && !state.config.tool_disabled(f.name, t.name))
        .map(|(_, t)| Tool::new(t.name, t.description, (t.schema)()))
        .collect()
}

/// The tool `name`, if this connection may call it: a tool it is not served, or one the config
/// disables, is refused with what to do about it.
fn callable(state: &AppState, toolsets: &Toolsets, name: &str) -> Result<&'static family::Tool> {
    let Some((family, tool)) = family::tool(name) else {
        return Err(Error::invalid_field(
            "name",
            format!("unknown tool {name:?}; tools/list shows the available tools"),
        ));
    };
    if !toolsets.contains(name) {
        return Err(Error::invalid_field(
            "name",
            format!(
                "tool {name:?} is in the toolsets {}, which this connection is not served (it \
                 has: {}); connect to /mcp?toolsets={},{} to use it",
                family::toolsets_of(name).join(", "),
                toolsets.names().join(", "),
                toolsets.names().join(","),
                family.name
            ),
        ));
    }
    if state.config.tool_disabled(family.name, name) {
        return Err(Error::invalid_field(
            "name",
            format!(
                "tool {name:?} is disabled by this daemon's configuration (disabled_tools / \
                 disabled_types)"
            ),
        ));
    }
    Ok(tool)
}

/// Every tool with its family, its toolsets and whether the config enables it (`GET /tools`,
/// `moss tools`).
pub fn catalog(state: &AppState) -> ToolList {
    ToolList {
        tools: family::tools()
            .map(|(f, t)| ToolInfo {
                name: t.name.into(),
                family: f.name.into(),
                toolsets: family::toolsets_of(t.name)
                    .into_iter()
                    .map(String::from)
                    .collect(),
                description: t.description.into(),
                enabled: state.toolsets.contains(t.name)
                    && !state.config.tool_disabled(f.name, t.name),
            })
            .collect(),
    }
}

/// Reads `?toolsets=a,b` of a request to `/mcp`, narrows the served tools to the union of those
/// toolsets and hands the result to the session (as a request extension rmcp passes on). An unknown toolset, or one
/// the daemon does not serve, is a 400 naming it and listing the valid ones, before any MCP
/// exchange.
pub async fn toolsets_from_query(
    axum::extract::State(state): axum::extract::State<AppState>,
    mut req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let params = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(req.uri())
        .map(|q| q.0)
        .unwrap_or_default();
    let requested = params
        .into_iter()
        .filter(|(k, _)| k == "toolsets")
        .map(|(_, v)| v)
        .reduce(|a, b| format!("{a},{b}"));
    if let Some(requested) = requested {
        match state.toolsets.narrow(&requested) {
            Ok(toolsets) => {
                req.extensions_mut().insert(toolsets);
            }
            Err(e) => return e.into_response(),
        }
    }
    next.run(req).await
}
