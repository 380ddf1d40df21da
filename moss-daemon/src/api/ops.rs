//! REST routes built from the op tables: for the `POST /<family>/<op>` families, each tool's
//! route is its table entry's method and path, its body the request type, its answer the
//! response type, documented in the OpenAPI document like a hand-written route.

use std::future::Future;

use axum::Json;
use axum::extract::State;
use moss_client::op::{Method, Op};
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::path::ParameterIn;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, Paths};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::{Ref, RefOr, Required, ResponseBuilder, schema::Schema};
use utoipa::{IntoParams, PartialSchema, ToSchema};
use utoipa_axum::router::UtoipaMethodRouter;

use super::json::{Body, Params};
use crate::app::AppState;
use crate::error::Result;

/// The route of a `GET` operation `O`, tagged with its family: decodes the query string into
/// `O::Request` (an `INVALID_REQUEST` naming it), runs `call`, answers `O::Response`.
pub fn query_route<O, F, Fut>(tag: &'static str, call: F) -> UtoipaMethodRouter<AppState>
where
    O: Op + 'static,
    O::Request: IntoParams + ToSchema,
    O::Response: ToSchema,
    F: Fn(AppState, O::Request) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<O::Response>> + Send + 'static,
{
    let spec = O::SPEC;
    assert!(
        spec.method == Method::Get,
        "{}: a query route serves GET, not {}",
        spec.tool,
        spec.method.as_str()
    );
    let handler = move |State(s): State<AppState>, Params(req): Params<O::Request>| {
        let call = call.clone();
        async move { call(s, req).await.map(Json) }
    };
    let operation = OperationBuilder::new()
        .tag(tag)
        .operation_id(Some(spec.tool))
        .parameters(Some(O::Request::into_params(|| Some(ParameterIn::Query))))
        .response(
            "200",
            ResponseBuilder::new()
                .description(spec.tool)
                .content("application/json", json_ref(O::Response::name())),
        )
        .build();
    let mut paths = Paths::new();
    paths.add_path_operation(spec.path, vec![HttpMethod::Get], operation);
    let mut schemas: Vec<(String, RefOr<Schema>)> =
        vec![(O::Response::name().into(), O::Response::schema())];
    // The parameters refer to the request's nested types by name (`FamilyList`).
    O::Request::schemas(&mut schemas);
    O::Response::schemas(&mut schemas);
    (schemas, paths, axum::routing::get(handler))
}

/// A JSON body whose schema is the named component.
fn json_ref(name: std::borrow::Cow<'static, str>) -> utoipa::openapi::Content {
    ContentBuilder::new()
        .schema(Some(RefOr::Ref(Ref::from_schema_name(name))))
        .build()
}

/// The route of operation `O`, tagged with its family: decodes the JSON body into
/// `O::Request` (an `INVALID_REQUEST` naming the field), runs `call`, answers `O::Response`.
pub fn route<O, F, Fut>(tag: &'static str, call: F) -> UtoipaMethodRouter<AppState>
where
    O: Op + 'static,
    O::Request: ToSchema,
    O::Response: ToSchema,
    F: Fn(AppState, O::Request) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = Result<O::Response>> + Send + 'static,
{
    let spec = O::SPEC;
    let handler = move |State(s): State<AppState>, Body(req): Body<O::Request>| {
        let call = call.clone();
        async move { call(s, req).await.map(Json) }
    };
    let (method_router, http_method) = match spec.method {
        Method::Post => (axum::routing::post(handler), HttpMethod::Post),
        Method::Put => (axum::routing::put(handler), HttpMethod::Put),
        Method::Get | Method::Delete => {
            panic!(
                "{}: a {} route takes its request in the query string: declare it with \
                 tool!(…, rest: query, …)",
                spec.tool,
                spec.method.as_str()
            )
        }
    };
    let operation = OperationBuilder::new()
        .tag(tag)
        .operation_id(Some(spec.tool))
        .request_body(Some(
            RequestBodyBuilder::new()
                .content("application/json", json_ref(O::Request::name()))
                .required(Some(Required::True))
                .build(),
        ))
        .response(
            "200",
            ResponseBuilder::new()
                .description(spec.tool)
                .content("application/json", json_ref(O::Response::name())),
        )
        .build();
    let mut paths = Paths::new();
    paths.add_path_operation(spec.path, vec![http_method], operation);
    let mut schemas: Vec<(String, RefOr<Schema>)> = vec![
        (O::Request::name().into(), O::Request::schema()),
        (O::Response::name().into(), O::Response::schema()),
    ];
    O::Request::schemas(&mut schemas);
    O::Response::schemas(&mut schemas);
    (schemas, paths, method_router)
}
