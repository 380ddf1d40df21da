//! The OpenAPI 3.1 document of the REST routes, derived from the routers themselves (a route
//! registered through [`super::router`] is documented by its `#[utoipa::path]`) and the wire
//! types of `moss-client`. Served at `GET /openapi.json` and checked in as
//! `proto-docs/openapi.json` (a test fails when that copy is stale).

use axum::Json;
use moss_client::ErrorEnvelope;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{RefOr, ResponseBuilder, content::ContentBuilder};
use utoipa::{Modify, OpenApi, PartialSchema, ToSchema};

use crate::family::FAMILIES;

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
    modifiers(&BearerToken),
    security(("bearer" = [])),
    tags(
        (name = "daemon", description = "Health, status, shutdown, the MCP tool list and progress reports")
    )
)]
struct ApiDoc;

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

/// The responses every route shares, declared once: any route may answer the error envelope
/// with a 4xx (bad input, a refused Host or Origin, a missing token) or a 5xx (an internal
/// error, or the daemon shutting down). A route that says more about its 4xx keeps its own.
fn add_shared_responses(doc: &mut utoipa::openapi::OpenApi) {
    let envelope = || {
        ContentBuilder::new()
            .schema(Some(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(
                ErrorEnvelope::name(),
            ))))
            .build()
    };
    let shared = [
        (
            "4XX",
            "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)",
        ),
        ("5XX", "Internal error or shutting down"),
    ];
    for item in doc.paths.paths.values_mut() {
        for op in [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ]
        .into_iter()
        .flatten()
        {
            for (status, description) in shared {
                op.responses
                    .responses
                    .entry(status.to_string())
                    .or_insert_with(|| {
                        RefOr::T(
                            ResponseBuilder::new()
                                .description(description)
                                .content("application/json", envelope())
                                .build(),
                        )
                    });
            }
        }
    }
    let components = doc.components.get_or_insert_with(Default::default);
    components
        .schemas
        .entry(ErrorEnvelope::name().to_string())
        .or_insert_with(ErrorEnvelope::schema);
}

/// The document, with the daemon's version, every registered route and a tag per family.
pub fn document() -> utoipa::openapi::OpenApi {
    let (_, routes) = super::router().split_for_parts();
    let mut doc = ApiDoc::openapi().merge_from(routes);
    add_shared_responses(&mut doc);
    let tags = doc.tags.get_or_insert_with(Vec::new);
    for family in FAMILIES {
        tags.push(
            TagBuilder::new()
                .name(family.name)
                .description(Some(family.summary))
                .build(),
        );
    }
    doc.info.version = moss_client::VERSION.to_string();
    doc
}

#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "daemon",
    operation_id = "openapi",
    responses((status = 200, description = "This document: every REST route with its request and response schemas"))
)]
pub async fn serve() -> Json<utoipa::openapi::OpenApi> {
    Json(document())
}
