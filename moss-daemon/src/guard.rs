//! The guard in front of every route, REST and MCP alike.
//!
//! A loopback port is reachable by every local process and every web page in a local browser,
//! so each request must (in this order):
//! 1. carry a `Host` that names a loopback address (DNS-rebinding defence) → else 403;
//! 2. carry no `Origin`, or a loopback one (cross-site requests from pages) → else 403;
//! 3. declare a body no larger than the cap → else 413;
//! 4. carry `Authorization: Bearer <token>`, except `GET /health` → else 401.
//!
//! A body without a declared length (chunked) is then read here, up to the cap, so that every
//! route answers an oversized one with the same `REQUEST_TOO_LARGE` envelope (`/mcp` included,
//! whose transport would otherwise answer a plain-text 413).

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::HeaderValue;
use axum::http::header::{AUTHORIZATION, CONTENT_LENGTH, HOST, ORIGIN, TRANSFER_ENCODING};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use moss_client::ErrorCode;

use crate::error::Error;

/// The guard's settings.
#[derive(Debug, Clone)]
pub struct Guard {
    /// `None` when `auth: "none"`.
    pub token: Option<Arc<str>>,
    pub token_path: PathBuf,
    pub max_body_bytes: usize,
    /// Host names accepted besides loopback ones (the bind address, when it is not loopback).
    pub extra_hosts: Vec<String>,
}

pub async fn check(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    crate::memory::note_request();
    if let Err(e) = guard.admit(&req) {
        return e.into_response();
    }
    match guard.bound_chunked_body(req).await {
        Ok(req) => next.run(req).await,
        Err(e) => e.into_response(),
    }
}

impl Guard {
    /// Reads a chunked body (one without `Content-Length`) up to the cap; an oversized one is
    /// 413. Bodies with a declared length were checked against the cap in [`Guard::admit`].
    async fn bound_chunked_body(&self, req: Request) -> Result<Request, Error> {
        if !req.headers().contains_key(TRANSFER_ENCODING) {
            return Ok(req);
        }
        let (mut parts, body) = req.into_parts();
        let bytes = axum::body::to_bytes(body, self.max_body_bytes)
            .await
            .map_err(|_| crate::api::json::too_large(self.max_body_bytes))?;
        parts.headers.remove(TRANSFER_ENCODING);
        parts
            .headers
            .insert(CONTENT_LENGTH, HeaderValue::from(bytes.len()));
        Ok(Request::from_parts(parts, Body::from(bytes)))
    }

    fn admit(&self, req: &Request) -> Result<(), Error> {
        let headers = req.headers();
        let host = headers
            .get(HOST)
            .and_then(|h| h.to_str().ok())
            .or_else(|| req.uri().host());
        match host {
            Some(h) if self.host_allowed(h) => {}
            Some(h) => {
                return Err(forbidden(format!(
                    "Host {h:?} is not a loopback name; Moss answers only requests addressed to \
                     localhost, 127.0.0.1 or [::1]"
                )));
            }
            None => return Err(forbidden("the request has no Host header".into())),
        }
        if let Some(origin) = headers.get(ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !origin_is_loopback(origin) {
                return Err(forbidden(format!(
                    "Origin {origin:?} is not a loopback origin; cross-site requests to Moss are \
                     refused"
                )));
            }
        }
        if let Some(len) = headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok())
            && len > self.max_body_bytes
        {
            return Err(crate::api::json::too_large(self.max_body_bytes));
        }
        let Some(token) = &self.token else {
            return Ok(());
        };
        if req.uri().path() == "/health" {
            return Ok(());
        }
        let presented = headers
            .get(AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| {
                v.strip_prefix("Bearer ")
                    .or_else(|| v.strip_prefix("bearer "))
            })
            .map(str::trim);
        match presented {
            Some(p) if constant_time_eq(p.as_bytes(), token.as_bytes()) => Ok(()),
            Some(_) => Err(self.unauthorized("the bearer token is wrong")),
            None => Err(self.unauthorized("no bearer token")),
        }
    }

    fn unauthorized(&self, why: &str) -> Error {
        Error::new(
            ErrorCode::Unauthorized,
            format!(
                "{why}: send `Authorization: Bearer <token>` with the token in {}",
                self.token_path.display()
            ),
        )
    }

    fn host_allowed(&self, host: &str) -> bool {
        let name = host_name(host);
        is_loopback_name(name)
            || self
                .extra_hosts
                .iter()
                .any(|h| h.eq_ignore_ascii_case(name))
    }
}

fn forbidden(message: String) -> Error {
    Error::new(ErrorCode::Forbidden, message)
}

/// The host part of `host[:port]` or `[v6]:port`.
fn host_name(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match authority.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => authority,
    }
}

/// `localhost`, `*.localhost`, 127.0.0.0/8 and ::1.
pub fn is_loopback_name(name: &str) -> bool {
    let lower = name.trim_end_matches('.').to_ascii_lowercase();
    if lower == "localhost" || lower.ends_with(".localhost") {
        return true;
    }
    lower.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn origin_is_loopback(origin: &str) -> bool {
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return false;
    }
    let authority = rest.split('/').next().unwrap_or("");
    if authority.contains('@') {
        return false;
    }
    is_loopback_name(host_name(authority))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_recognised() {
        for h in [
            "localhost",
            "localhost:6677",
            "127.0.0.1:1",
            "127.3.4.5",
            "[::1]:80",
            "LOCALHOST.",
        ] {
            assert!(is_loopback_name(host_name(h)), "{h}");
        }
        for h in [
            "evil.com",
            "127.0.0.1.evil.com",
            "10.0.0.1:6677",
            "[::2]",
            "localhost.evil.com:1",
        ] {
            assert!(!is_loopback_name(host_name(h)), "{h}");
        }
    }

    #[test]
    fn origins() {
        assert!(origin_is_loopback("http://localhost:3000"));
        assert!(origin_is_loopback("https://127.0.0.1"));
        assert!(origin_is_loopback("http://[::1]:8080"));
        assert!(!origin_is_loopback("null"));
        assert!(!origin_is_loopback("http://evil.com"));
        assert!(!origin_is_loopback("http://localhost@evil.com"));
        assert!(!origin_is_loopback("file://localhost"));
    }

    #[test]
    fn tokens_compare_exactly() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
