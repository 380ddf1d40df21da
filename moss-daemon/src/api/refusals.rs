//! Every refusal is the error envelope, whoever made it.
//!
//! The routes answer with [`crate::error::Error`]'s envelope, but some refusals are made below
//! them: axum's extractors (a path segment that does not decode), and above all the MCP
//! transport (rmcp answers a missing `Accept`, a wrong `Content-Type`, an unknown session or a
//! body that is not JSON-RPC in plain text, the last as 415). This layer, the outermost, turns
//! any error response that is not JSON into the envelope: the code that fits its status, and
//! the original text in the message. A body that is not a JSON-RPC message is a 400
//! `INVALID_REQUEST` naming the body (it is bad input, not an unsupported media type).
//!
//! Responses that are already JSON pass untouched: the envelope itself, and the JSON-RPC errors
//! MCP clients read.

use axum::extract::Request;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use moss_client::ErrorCode;

use crate::error::Error;

/// The longest refusal text kept in a message.
const MAX_TEXT: usize = 512;

pub async fn envelope(req: Request, next: Next) -> Response {
    let resp = next.run(req).await;
    if resp.status().as_u16() < 400
        || is_json(resp.headers().get(CONTENT_TYPE))
        || is_html(resp.headers().get(CONTENT_TYPE))
    {
        return resp;
    }
    let status = resp.status();
    let (parts, body) = resp.into_parts();
    let text = axum::body::to_bytes(body, 64 * 1024)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let mut out = refusal(status, &text).into_response();
    // Keep what the refusal said besides its body (Allow, Retry-After, WWW-Authenticate…).
    for (name, value) in parts.headers.iter() {
        if name != CONTENT_TYPE && name != axum::http::header::CONTENT_LENGTH {
            out.headers_mut().append(name.clone(), value.clone());
        }
    }
    out
}

/// The web UI's own error pages, which a browser shows.
fn is_html(content_type: Option<&HeaderValue>) -> bool {
    content_type
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"))
}

fn is_json(content_type: Option<&HeaderValue>) -> bool {
    content_type
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The envelope for a refusal with `status` and plain `text`.
fn refusal(status: StatusCode, text: &str) -> Error {
    let mut said: String = text.chars().take(MAX_TEXT).collect();
    if said.is_empty() {
        said = status
            .canonical_reason()
            .unwrap_or("refused")
            .to_ascii_lowercase();
    }
    let field = |f: &str, message: String| Error::invalid_field(f, message);
    match status.as_u16() {
        // rmcp: the body did not decode as a JSON-RPC message.
        415 if said.starts_with("fail to deserialize") => field(
            "body",
            format!(
                "the body is not a JSON-RPC message ({said}); send one JSON-RPC 2.0 request, \
                 notification or response as JSON"
            ),
        ),
        415 => field(
            "content-type",
            format!("{said}; send `Content-Type: application/json`"),
        ),
        406 => field(
            "accept",
            format!("{said}; send `Accept: application/json, text/event-stream`"),
        ),
        401 => Error::new(ErrorCode::Unauthorized, said),
        403 => Error::new(ErrorCode::Forbidden, said),
        404 if said.contains("Session not found") => Error::not_found(format!(
            "{said}: the MCP session ended (idle too long, evicted to make room for newer \
             sessions, or the daemon restarted); send `initialize` again without a session id"
        )),
        404 => Error::not_found(said),
        405 => Error::invalid(format!(
            "{said}: the response's Allow header lists the methods"
        )),
        408 => Error::invalid(format!("{said}: the request took too long to arrive")),
        413 => Error::new(ErrorCode::RequestTooLarge, said),
        429 | 503 => Error::new(ErrorCode::Unavailable, said),
        s if s < 500 => Error::invalid(said),
        _ => Error::internal("answering a request", said),
    }
}
