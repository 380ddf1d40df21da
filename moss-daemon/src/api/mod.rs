//! REST: resource routers merged into one app, the error envelope as a response, `/health`;
//! `daemon` holds `/status` and `/shutdown`.
//!
//! Handlers are thin: decode, call the domain operation, encode. Errors become
//! `{"error":{code,message,status,details}}` with the code's HTTP status.

pub mod daemon;
pub mod json;
pub mod openapi;
pub mod ops;
pub mod progress;
pub mod refusals;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use moss_client::daemon::{Health, ToolList};
use moss_client::{ErrorCode, ErrorEnvelope};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;
use crate::error::Error;
use crate::family::FAMILIES;
pub use daemon::DaemonInfo;

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, Json(ErrorEnvelope { error: self.0 })).into_response()
    }
}

/// The REST routes (without `/mcp` and without the guard; see [`crate::server`]): the daemon's
/// own and every family's, each documented in the OpenAPI document ([`openapi::document`]).
pub fn router() -> OpenApiRouter<AppState> {
    let mut router = OpenApiRouter::new()
        .routes(routes!(health))
        .routes(routes!(tools))
        .routes(routes!(daemon::status))
        .routes(routes!(daemon::shutdown))
        .routes(routes!(daemon::backup))
        .routes(routes!(daemon::migrate))
        .routes(routes!(daemon::ui_login_code))
        .routes(routes!(openapi::serve))
        .merge(progress::routes());
    for family in FAMILIES {
        router = router.merge((family.routes)());
        for tool in family.tools {
            if let Some(route) = tool.route {
                router = router.routes(route(family.name));
            }
        }
    }
    router
}

/// [`router`] as an axum router, with the error envelope for unknown routes and methods.
pub fn routes() -> Router<AppState> {
    let (router, _) = router().split_for_parts();
    router
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
        (status = 200, description = "Every MCP tool and whether the config enables it", body = ToolList)
    )
)]
pub async fn tools(axum::extract::State(s): axum::extract::State<AppState>) -> Json<ToolList> {
    Json(crate::mcp::catalog(&s))
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

#[cfg(test)]
mod schema_tests {
    use std::collections::BTreeMap;

    use crate::family::FAMILIES;

    /// Two wire types with one schema name would make one route document the other's body
    /// (two families once each had a `DiffRequest`): every schema name, across the
    /// hand-written routes and the table-built ones, stands for one schema.
    #[test]
    fn a_schema_name_stands_for_one_type() {
        let mut seen: BTreeMap<String, (serde_json::Value, String)> = BTreeMap::new();
        let mut check = |name: String, schema: serde_json::Value, from: String| {
            if let Some((before, first)) = seen.get(&name) {
                assert_eq!(
                    before, &schema,
                    "schema {name} of {from} is not the one of {first}; give one of the two \
                     types #[schema(as = …)]"
                );
            } else {
                seen.insert(name, (schema, from));
            }
        };
        for family in FAMILIES {
            let hand_written = (family.routes)().to_openapi();
            for (name, schema) in hand_written.components.into_iter().flat_map(|c| c.schemas) {
                let from = format!("the {} family's routes", family.name);
                check(name, serde_json::to_value(schema).unwrap(), from);
            }
            for tool in family.tools {
                let Some(route) = tool.route else { continue };
                let (schemas, _, _) = route(family.name);
                for (name, schema) in schemas {
                    check(
                        name,
                        serde_json::to_value(schema).unwrap(),
                        tool.name.into(),
                    );
                }
            }
        }
    }
}
