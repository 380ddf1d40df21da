//! The OpenAPI 3.1 document of the REST routes, derived from the handlers' `#[utoipa::path]`
//! annotations and the wire types of `moss-client`. Served at `GET /openapi.json` and checked
//! in as `proto-docs/openapi.json` (a test fails when that copy is stale).

use axum::Json;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use super::capsules;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Moss",
        description = "Local memory daemon for AI coding agents. Every route but /health needs \
            `Authorization: Bearer <token>` (the token is in ~/.moss/token). Errors are \
            `{\"error\":{\"code\",\"message\",\"status\",\"details\"}}` with the code's HTTP status.",
        license(name = "MIT OR Apache-2.0")
    ),
    servers((url = "http://127.0.0.1:6677", description = "The default address")),
    paths(
        super::health,
        super::tools,
        super::daemon::status,
        super::daemon::shutdown,
        capsules::store,
        capsules::list,
        capsules::fetch_by_id,
        capsules::fetch_by_name,
        capsules::fetch_many,
        capsules::update_by_id,
        capsules::update_by_name,
        capsules::delete_by_id,
        capsules::delete_by_name,
        capsules::latest,
        capsules::inventory,
        capsules::search,
        capsules::compose,
        capsules::append,
        capsules::bulk_delete,
        capsules::bulk_update,
        capsules::purge,
        capsules::export,
        capsules::import,
        super::progress::progress,
    ),
    modifiers(&BearerToken),
    security(("bearer" = [])),
    tags(
        (name = "capsules", description = "Capsule memory: size-bounded, linted handoffs"),
        (name = "daemon", description = "Health, status, shutdown, the MCP tool list and progress reports")
    )
)]
pub struct ApiDoc;

/// Declares the bearer token every route but `/health` requires.
struct BearerToken;

impl Modify for BearerToken {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)),
        );
    }
}

/// The document, with the daemon's version.
pub fn document() -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    doc.info.version = moss_client::VERSION.to_string();
    doc
}

/// `GET /openapi.json`.
pub async fn serve() -> Json<utoipa::openapi::OpenApi> {
    Json(document())
}
