//! The guard in front of every route, REST and MCP alike.
//!
//! A loopback port is reachable by every local process and every web page in a local browser,
//! so each request must (in this order):
//! 1. carry a `Host` that names a loopback address (DNS-rebinding defence) → else 403;
//! 2. carry no `Origin`, or a loopback one (cross-site requests from pages) → else 403;
//! 3. declare a body no larger than the cap → else 413;
//! 4. carry `Authorization: Bearer <token>`, except `GET /health` and the web UI's pages under
//!    `/ui/`, which check their session cookie instead (`POST /ui/login-code` needs the token)
//!    → else 401.
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
    crate::alloc::note_request();
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
        self.check_hosts(req)?;
        if headers.get_all(ORIGIN).iter().count() > 1 {
            return Err(forbidden(
                "the request has more than one Origin header; send one".into(),
            ));
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
        let path = req.uri().path();
        // The web UI's pages check their own session cookie (crate::ui); the code that opens
        // one is an API call like the others.
        if path == "/health" || (crate::ui::is_page(path) && path != "/ui/login-code") {
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

    /// Every name the request is addressed by must be a well-formed loopback authority: the
    /// one `Host` header (a second one is refused, as is one that is not visible ASCII), and the
    /// authority of an absolute-form target (`GET http://host/path`), which HTTP lets override
    /// `Host`.
    fn check_hosts(&self, req: &Request) -> Result<(), Error> {
        let mut hosts = req.headers().get_all(HOST).iter();
        let header = hosts.next();
        if hosts.next().is_some() {
            return Err(forbidden(
                "the request has more than one Host header; send one".into(),
            ));
        }
        let header = match header.map(|h| h.to_str()) {
            Some(Ok(h)) => Some(h),
            Some(Err(_)) => {
                return Err(forbidden(
                    "the Host header is not plain ASCII; Moss answers only requests addressed \
                     to localhost, 127.0.0.1 or [::1]"
                        .into(),
                ));
            }
            None => None,
        };
        let target = req.uri().authority().map(|a| a.as_str());
        if header.is_none() && target.is_none() {
            return Err(forbidden("the request has no Host header".into()));
        }
        for authority in [header, target].into_iter().flatten() {
            if !self.host_allowed(authority) {
                return Err(forbidden(format!(
                    "Host {authority:?} is not a loopback name; Moss answers only requests \
                     addressed to localhost, 127.0.0.1 or [::1]"
                )));
            }
        }
        Ok(())
    }

    fn host_allowed(&self, authority: &str) -> bool {
        let Some(name) = host_name(authority) else {
            return false;
        };
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

/// The host of a well-formed authority, `host[:port]` or `[v6][:port]`; `None` for anything
/// else. A host is an IPv6 literal in brackets, or ASCII letters, digits, `-` and `.`; a port
/// is digits. So `[::1]evil.com`, `[::1`, `::1`, `a@b` and non-ASCII names are not hosts.
fn host_name(authority: &str) -> Option<&str> {
    let (host, port) = match authority.strip_prefix('[') {
        Some(rest) => {
            let (inside, after) = rest.split_once(']')?;
            inside.parse::<std::net::Ipv6Addr>().ok()?;
            let port = match after {
                "" => None,
                _ => Some(after.strip_prefix(':')?),
            };
            (inside, port)
        }
        None => {
            let (host, port) = match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            };
            let name_char = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'.';
            if host.is_empty() || !host.bytes().all(name_char) {
                return None;
            }
            (host, port)
        }
    };
    if let Some(p) = port
        && (p.is_empty() || p.len() > 5 || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    Some(host)
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
    // An origin is scheme://authority, nothing after it.
    host_name(rest).is_some_and(is_loopback_name)
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
            "[::1]",
        ] {
            assert!(host_name(h).is_some_and(is_loopback_name), "{h}");
        }
        for h in [
            "evil.com",
            "127.0.0.1.evil.com",
            "10.0.0.1:6677",
            "[::2]",
            "localhost.evil.com:1",
            "[::1]evil.com",
            "[::1",
            "[::1]:",
            "[::1]:80x",
            "::1",
            "localhost:80:80",
            "localhost evil.com",
            "localhost@evil.com",
            "lo\u{ed}calhost",
            "",
        ] {
            assert!(!host_name(h).is_some_and(is_loopback_name), "{h}");
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
        assert!(!origin_is_loopback("http://[::1]evil.com"));
        assert!(!origin_is_loopback("http://[::1"));
        assert!(!origin_is_loopback("http://localhost/path"));
    }

    #[test]
    fn tokens_compare_exactly() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
    }
}
