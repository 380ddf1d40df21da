//! Typed async client for the daemon's REST routes: [`Client`] holds the connection and the
//! daemon's own routes; each memory's operations sit on its own handle ([`Client::capsules`],
//! [`Client::reasoning`], [`Client::tasks`], [`Client::memories`]).

mod capsules;
mod memories;

use std::time::Duration;

use reqwest::Method;
use reqwest::RequestBuilder;
use serde::de::DeserializeOwned;

use crate::daemon::{
    DaemonStatus, Health, PROGRESS_HEADER, ProgressReport, ShutdownResponse, ToolList,
};
use crate::error::{ErrorBody, ErrorCode, ErrorEnvelope};
use crate::op::{self, Op};

pub use capsules::Capsules;
pub use memories::Memories;

/// The reasoning memory's operations of a [`Client`] ([`Client::reasoning`]), one method per
/// entry of [`crate::reasoning::OPS`]. Cheap: a reference.
#[derive(Debug, Clone, Copy)]
pub struct Reasoning<'a> {
    pub(crate) client: &'a Client,
}

/// The cross-family operations of a [`Client`] ([`Client::moss`]), one method per entry of
/// [`crate::moss::OPS`]. Cheap: a reference.
#[derive(Debug, Clone, Copy)]
pub struct Moss<'a> {
    pub(crate) client: &'a Client,
}

/// The plans and tasks operations of a [`Client`] ([`Client::tasks`]), one method per entry of
/// [`crate::tasks::OPS`]. Cheap: a reference.
#[derive(Debug, Clone, Copy)]
pub struct Tasks<'a> {
    pub(crate) client: &'a Client,
}

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The daemon answered with an error envelope.
    #[error("[{}] {}", .0.code, .0.message)]
    Api(ErrorBody),
    /// No daemon answers at the address.
    #[error("no Moss daemon answers at {addr}: {source}")]
    Unreachable {
        addr: String,
        #[source]
        source: reqwest::Error,
    },
    /// The connection failed mid-request, or the answer could not be read.
    #[error("request to {addr} failed: {source}")]
    Transport {
        addr: String,
        #[source]
        source: reqwest::Error,
    },
    /// The address is not a `host:port` (or `http://host:port`) a request can go to.
    #[error(
        "invalid daemon address {addr:?}: {reason}; give host:port, e.g. 127.0.0.1:6677 \
         (--addr or MOSS_ADDR)"
    )]
    InvalidAddress { addr: String, reason: String },
    /// The daemon answered something that is not what this client expects.
    #[error("unexpected answer from the daemon (HTTP {status}): {body}")]
    Unexpected { status: u16, body: String },
}

impl ClientError {
    /// The error code, when the daemon sent one.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            ClientError::Api(body) => Some(body.code),
            _ => None,
        }
    }

    /// The daemon's error body, when it sent one.
    pub fn body(&self) -> Option<&ErrorBody> {
        match self {
            ClientError::Api(body) => Some(body),
            _ => None,
        }
    }
}

/// A handle on one daemon. Cheap to clone; clones share the connection pool.
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    addr: String,
    token: Option<String>,
}

impl Client {
    /// A client for the daemon at `addr` (`host:port`, or a full `http://` URL).
    pub fn new(addr: &str, token: Option<String>) -> Result<Self, ClientError> {
        let base = if addr.starts_with("http://") || addr.starts_with("https://") {
            addr.trim_end_matches('/').to_string()
        } else {
            format!("http://{addr}")
        };
        let invalid = |reason: String| ClientError::InvalidAddress {
            addr: addr.to_string(),
            reason,
        };
        let url = reqwest::Url::parse(&base).map_err(|e| invalid(e.to_string()))?;
        if url.host_str().is_none_or(str::is_empty) {
            return Err(invalid("no host".into()));
        }
        if url.path() != "/" || url.query().is_some() {
            return Err(invalid("a path or query is not part of an address".into()));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .pool_max_idle_per_host(64)
            .build()
            .map_err(|source| ClientError::Transport {
                addr: addr.to_string(),
                source,
            })?;
        Ok(Client {
            http,
            base,
            addr: addr.to_string(),
            token,
        })
    }

    /// The address this client talks to.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The base URL, e.g. `http://127.0.0.1:6677`.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    pub(crate) fn request(&self, method: Method, path: &str) -> RequestBuilder {
        let req = self.http.request(method, format!("{}{}", self.base, path));
        match &self.token {
            Some(token) => req.bearer_auth(token),
            None => req,
        }
    }

    pub(crate) async fn send<T: DeserializeOwned>(
        &self,
        req: RequestBuilder,
    ) -> Result<T, ClientError> {
        let resp = req.send().await.map_err(|source| {
            if source.is_connect() {
                ClientError::Unreachable {
                    addr: self.addr.clone(),
                    source,
                }
            } else {
                ClientError::Transport {
                    addr: self.addr.clone(),
                    source,
                }
            }
        })?;
        let status = resp.status();
        let bytes = resp
            .bytes()
            .await
            .map_err(|source| ClientError::Transport {
                addr: self.addr.clone(),
                source,
            })?;
        if status.is_success() {
            return serde_json::from_slice(&bytes).map_err(|e| ClientError::Unexpected {
                status: status.as_u16(),
                body: format!("{e}: {}", String::from_utf8_lossy(&bytes)),
            });
        }
        match serde_json::from_slice::<ErrorEnvelope>(&bytes) {
            Ok(env) => Err(ClientError::Api(env.error)),
            Err(_) => Err(ClientError::Unexpected {
                status: status.as_u16(),
                body: String::from_utf8_lossy(&bytes).into_owned(),
            }),
        }
    }

    /// `GET /health` (needs no token).
    pub async fn health(&self) -> Result<Health, ClientError> {
        self.send(self.request(Method::GET, "/health")).await
    }

    /// The daemon's address, version, pid, database and uptime: `GET /status`.
    pub async fn status(&self) -> Result<DaemonStatus, ClientError> {
        self.send(self.request(Method::GET, "/status")).await
    }

    /// The capsule memory's operations.
    pub fn capsules(&self) -> Capsules<'_> {
        Capsules { client: self }
    }

    /// The reasoning memory's operations (`branchmind_*`).
    pub fn reasoning(&self) -> Reasoning<'_> {
        Reasoning { client: self }
    }

    /// The associative memory's operations (`memory_*`).
    pub fn memories(&self) -> Memories<'_> {
        Memories { client: self }
    }

    /// The cross-family operations (`moss_*`): workspaces, one search, the resume call.
    pub fn moss(&self) -> Moss<'_> {
        Moss { client: self }
    }

    /// The plans and tasks operations (`tasks_*`).
    pub fn tasks(&self) -> Tasks<'_> {
        Tasks { client: self }
    }

    /// Sends one operation by its table entry: the request as the JSON body (`POST`, `PUT`) or
    /// as the query string (`GET`, `DELETE`).
    pub(crate) async fn call<O: Op>(&self, req: &O::Request) -> Result<O::Response, ClientError> {
        let spec = O::SPEC;
        let rb = match spec.method {
            op::Method::Get => self.request(Method::GET, spec.path).query(req),
            op::Method::Delete => self.request(Method::DELETE, spec.path).query(req),
            op::Method::Post => self.request(Method::POST, spec.path).json(req),
            op::Method::Put => self.request(Method::PUT, spec.path).json(req),
        };
        self.send(rb).await
    }

    /// `POST path` with a JSON body: the shape of every reasoning and tasks route, and what
    /// the CLI sends for a request it assembled itself.
    pub async fn post<Req: serde::Serialize + ?Sized, Resp: DeserializeOwned>(
        &self,
        path: &str,
        req: &Req,
    ) -> Result<Resp, ClientError> {
        self.send(self.request(Method::POST, path).json(req)).await
    }

    /// Asks the daemon to shut down gracefully (as SIGTERM does): `POST /shutdown`. It answers
    /// before it stops; the port closes once in-flight requests have drained.
    pub async fn shutdown(&self) -> Result<ShutdownResponse, ClientError> {
        self.send(self.request(Method::POST, "/shutdown")).await
    }

    /// `POST /ui/login-code`: a one-time sign-in address of the web UI (`moss ui`).
    pub async fn ui_login_code(&self) -> Result<crate::daemon::LoginCodeResponse, ClientError> {
        self.send(self.request(Method::POST, "/ui/login-code"))
            .await
    }

    /// `POST /backup`: a consistent snapshot of the whole store into one file.
    pub async fn backup(
        &self,
        req: &crate::daemon::BackupRequest,
    ) -> Result<crate::daemon::BackupResponse, ClientError> {
        self.post("/backup", req).await
    }

    /// `POST /migrate`: copies the whole store into another database (PostgreSQL or a new
    /// SQLite file).
    pub async fn migrate(
        &self,
        req: &crate::daemon::MigrateRequest,
    ) -> Result<crate::daemon::MigrateResponse, ClientError> {
        self.post("/migrate", req).await
    }

    /// `GET /progress/{id}`: the progress of the running request that sent `X-Moss-Progress: id`
    /// (404 NOT_FOUND before it starts and after it ends).
    pub async fn progress(&self, id: &str) -> Result<ProgressReport, ClientError> {
        self.send(self.request(Method::GET, &format!("/progress/{}", path_segment(id))))
            .await
    }

    /// This API as an OpenAPI 3.1 document: `GET /openapi.json` (the schemas of every
    /// request, e.g. which fields take a list).
    pub async fn openapi(&self) -> Result<serde_json::Value, ClientError> {
        self.send(self.request(Method::GET, "/openapi.json")).await
    }

    /// The MCP tools and whether the config enables them: `GET /tools`.
    pub async fn tools(&self) -> Result<ToolList, ClientError> {
        self.send(self.request(Method::GET, "/tools")).await
    }
}

pub(crate) fn with_progress(rb: RequestBuilder, progress: Option<&str>) -> RequestBuilder {
    match progress {
        Some(id) => rb.header(PROGRESS_HEADER, id),
        None => rb,
    }
}

/// Percent-encodes one path segment (ids are ULIDs, but imported ids may be anything).
pub(crate) fn path_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_are_percent_encoded() {
        assert_eq!(
            path_segment("01ARZ3NDEKTSV4RRFFQ69G5FAV"),
            "01ARZ3NDEKTSV4RRFFQ69G5FAV"
        );
        assert_eq!(path_segment("a/b c"), "a%2Fb%20c");
    }

    #[test]
    fn addresses_become_base_urls() {
        let c = Client::new("127.0.0.1:6677", None).unwrap();
        assert_eq!(c.base_url(), "http://127.0.0.1:6677");
        let c = Client::new("http://localhost:1/", None).unwrap();
        assert_eq!(c.base_url(), "http://localhost:1");
    }

    #[test]
    fn bad_addresses_are_refused_with_the_fix() {
        for (addr, why) in [
            ("127.0.0.1:78210", "invalid port"),
            ("127.0.0.1:6677/moss", "path"),
            (":6677", "host"),
        ] {
            let e = Client::new(addr, None).unwrap_err().to_string();
            assert!(
                e.contains(addr)
                    && e.contains(why)
                    && e.contains("127.0.0.1:6677 (--addr or MOSS_ADDR)"),
                "{addr}: {e}"
            );
        }
    }
}
