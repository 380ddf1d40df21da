//! REST: resource routers merged into one app, the error envelope as a response, `/health`;
//! `daemon` holds `/status` and `/shutdown`.
//!
//! Handlers are thin: decode, call the domain operation, encode. Errors become
//! `{"error":{code,message,status,details}}` with the code's HTTP status.

pub mod capsules;
pub mod daemon;
pub mod json;
pub mod openapi;
pub mod progress;

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use moss_client::{ErrorCode, ErrorEnvelope, Health, ToolList};

use crate::capsule::Capsules;
use crate::config::Config;
use crate::error::Error;
use crate::progress::ProgressRegistry;
pub use daemon::DaemonInfo;

/// What every handler and tool can reach.
#[derive(Debug)]
pub struct App {
    pub capsules: Capsules,
    pub config: Arc<Config>,
    pub daemon: DaemonInfo,
    /// Progress of running requests that sent `X-Moss-Progress`.
    pub progress: ProgressRegistry,
}

/// Shared handle on [`App`]; cloned per request, so it is one reference count.
#[derive(Clone, Debug)]
pub struct AppState(pub Arc<App>);

impl std::ops::Deref for AppState {
    type Target = App;

    fn deref(&self) -> &App {
        &self.0
    }
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(ErrorEnvelope { error: self.0 })).into_response()
    }
}

/// The REST routes (without `/mcp` and without the guard; see [`crate::server`]).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/health", get(health))
        .route("/tools", get(tools))
        .route("/status", get(daemon::status))
        .route("/shutdown", post(daemon::shutdown))
        .route("/openapi.json", get(openapi::serve))
        .merge(capsules::routes())
        .merge(progress::routes())
        .fallback(fallback)
        .method_not_allowed_fallback(method_not_allowed)
}

#[utoipa::path(
    get,
    path = "/health",
    tag = "daemon",
    operation_id = "health",
    security(()),
    responses((status = 200, description = "The daemon is up; needs no token", body = Health))
)]
pub async fn health() -> Json<Health> {
    Json(Health {
        status: "ok".into(),
        version: moss_client::VERSION.into(),
    })
}

#[utoipa::path(
    get,
    path = "/tools",
    tag = "daemon",
    operation_id = "tools",
    responses(
        (status = 200, description = "Every MCP tool and whether the config enables it", body = ToolList),
        (status = "4XX", description = "Error envelope", body = ErrorEnvelope)
    )
)]
pub async fn tools(axum::extract::State(s): axum::extract::State<AppState>) -> Json<ToolList> {
    Json(crate::mcp::tools::catalog(&s))
}

/// A known route asked with a method it does not take. axum adds the `Allow` header.
async fn method_not_allowed(req: axum::extract::Request) -> Error {
    Error::invalid(format!(
        "{} is not allowed on {}: the response's Allow header lists the methods it takes \
         (see proto-docs/openapi.json)",
        req.method(),
        req.uri().path()
    ))
}

async fn fallback(req: axum::extract::Request) -> Error {
    Error::new(
        ErrorCode::NotFound,
        format!(
            "no route for {} {}; see proto-docs/ for the routes",
            req.method(),
            req.uri().path()
        ),
    )
}
