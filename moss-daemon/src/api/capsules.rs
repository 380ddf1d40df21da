//! `/capsules` routes (seed 003 "REST API"), each a thin adapter over [`Capsules`](crate::capsule::Capsules).

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::{Json, Router};
use moss_client::*;
use serde::Deserialize;

use super::AppState;
use super::json::{Body, Params};
use super::progress::requested_id;
use crate::cancel::Cancel;
use crate::error::{Error, Result};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/capsules", post(store).get(list))
        .route("/capsules/fetch-many", post(fetch_many))
        .route("/capsules/latest", get(latest))
        .route("/capsules/inventory", get(inventory))
        .route("/capsules/search", get(search))
        .route("/capsules/compose", post(compose))
        .route("/capsules/append", post(append))
        .route("/capsules/bulk-delete", post(bulk_delete))
        .route("/capsules/bulk-update", post(bulk_update))
        .route("/capsules/purge", post(purge))
        .route("/capsules/export", post(export))
        .route("/capsules/import", post(import))
        .route(
            "/capsules/by-name",
            get(fetch_by_name)
                .put(update_by_name)
                .delete(delete_by_name),
        )
        .route(
            "/capsules/{id}",
            get(fetch_by_id).put(update_by_id).delete(delete_by_id),
        )
}

/// Query of the by-name write routes.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct NameQuery {
    /// Workspace of the named capsule (default "default").
    workspace: Option<String>,
    /// Capsule name.
    name: Option<String>,
}

impl NameQuery {
    /// Puts the query's workspace and name, where given, over a request body's.
    fn apply(self, workspace: &mut Option<String>, name: &mut Option<String>) {
        if self.workspace.is_some() {
            *workspace = self.workspace;
        }
        if self.name.is_some() {
            *name = self.name;
        }
    }
}

#[utoipa::path(
    post,
    path = "/capsules",
    tag = "capsules",
    operation_id = "capsule_store",
    request_body = StoreRequest,
    responses((status = 200, description = "capsule_store: the stored capsule's id and fetch key", body = CapsuleHandle), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn store(
    State(s): State<AppState>,
    Body(req): Body<StoreRequest>,
) -> Result<Json<CapsuleHandle>> {
    s.capsules.store(req).await.map(Json)
}

#[utoipa::path(
    get,
    path = "/capsules/{id}",
    tag = "capsules",
    operation_id = "capsule_fetch_by_id",
    params(("id" = String, Path, description = "Capsule id"), FetchRequest),
    responses((status = 200, description = "capsule_fetch by id", body = Capsule), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn fetch_by_id(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Params(mut req): Params<FetchRequest>,
) -> Result<Json<Capsule>> {
    if req.id.is_some() {
        return Err(Error::invalid(
            "the id goes in the path, not in the query string",
        ));
    }
    req.id = Some(id);
    s.capsules.fetch(req).await.map(Json)
}

#[utoipa::path(
    get,
    path = "/capsules/by-name",
    tag = "capsules",
    operation_id = "capsule_fetch_by_name",
    params(FetchRequest),
    responses((status = 200, description = "capsule_fetch by workspace and name", body = Capsule), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn fetch_by_name(
    State(s): State<AppState>,
    Params(req): Params<FetchRequest>,
) -> Result<Json<Capsule>> {
    if req.name.is_none() && req.id.is_none() {
        return Err(Error::invalid(
            "GET /capsules/by-name needs ?name=… (and optionally &workspace=…)",
        ));
    }
    s.capsules.fetch(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/capsules/fetch-many",
    tag = "capsules",
    operation_id = "capsule_fetch_many",
    request_body = FetchManyRequest,
    responses((status = 200, description = "capsule_fetch_many: found capsules and per-ref errors", body = FetchManyResponse), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn fetch_many(
    State(s): State<AppState>,
    Body(req): Body<FetchManyRequest>,
) -> Result<Json<FetchManyResponse>> {
    s.capsules.fetch_many(req).await.map(Json)
}

#[utoipa::path(
    put,
    path = "/capsules/{id}",
    tag = "capsules",
    operation_id = "capsule_update_by_id",
    request_body = UpdateRequest,
    params(("id" = String, Path, description = "Capsule id"), NameQuery),
    responses((status = 200, description = "capsule_update by id", body = CapsuleHandle), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn update_by_id(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Params(q): Params<NameQuery>,
    Body(mut req): Body<UpdateRequest>,
) -> Result<Json<CapsuleHandle>> {
    if req.id.as_ref().is_some_and(|b| *b != id) {
        return Err(Error::invalid(format!(
            "the body's id {:?} differs from the path's {id:?}; ids cannot be changed",
            req.id.unwrap_or_default()
        )));
    }
    req.id = Some(id);
    // A name in the query next to the path's id is refused as ambiguous, as on GET and DELETE.
    q.apply(&mut req.workspace, &mut req.name);
    s.capsules.update(req).await.map(Json)
}

#[utoipa::path(
    put,
    path = "/capsules/by-name",
    tag = "capsules",
    operation_id = "capsule_update_by_name",
    request_body = UpdateRequest,
    params(NameQuery),
    responses((status = 200, description = "capsule_update by workspace and name (in the query)", body = CapsuleHandle), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn update_by_name(
    State(s): State<AppState>,
    Params(q): Params<NameQuery>,
    Body(mut req): Body<UpdateRequest>,
) -> Result<Json<CapsuleHandle>> {
    q.apply(&mut req.workspace, &mut req.name);
    s.capsules.update(req).await.map(Json)
}

#[utoipa::path(
    delete,
    path = "/capsules/{id}",
    tag = "capsules",
    operation_id = "capsule_delete_by_id",
    params(("id" = String, Path, description = "Capsule id"), NameQuery),
    responses((status = 200, description = "capsule_delete by id", body = DeleteResponse), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn delete_by_id(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Params(q): Params<NameQuery>,
) -> Result<Json<DeleteResponse>> {
    let req = DeleteRequest {
        id: Some(id),
        workspace: q.workspace,
        name: q.name,
    };
    s.capsules.delete(req).await.map(Json)
}

#[utoipa::path(
    delete,
    path = "/capsules/by-name",
    tag = "capsules",
    operation_id = "capsule_delete_by_name",
    params(DeleteRequest),
    responses((status = 200, description = "capsule_delete by workspace and name", body = DeleteResponse), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn delete_by_name(
    State(s): State<AppState>,
    Params(req): Params<DeleteRequest>,
) -> Result<Json<DeleteResponse>> {
    s.capsules.delete(req).await.map(Json)
}

#[utoipa::path(
    get,
    path = "/capsules/latest",
    tag = "capsules",
    operation_id = "capsule_latest",
    params(LatestRequest),
    responses((status = 200, description = "capsule_latest: the newest capsule as item, or null", body = LatestResponse), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn latest(
    State(s): State<AppState>,
    Params(req): Params<LatestRequest>,
) -> Result<Json<LatestResponse>> {
    s.capsules.latest(req).await.map(Json)
}

#[utoipa::path(
    get,
    path = "/capsules",
    tag = "capsules",
    operation_id = "capsule_list",
    params(ListRequest),
    responses((status = 200, description = "capsule_list: one workspace's summaries", body = CapsulePage), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn list(
    State(s): State<AppState>,
    Params(req): Params<ListRequest>,
) -> Result<Json<CapsulePage>> {
    s.capsules.list(req).await.map(Json)
}

#[utoipa::path(
    get,
    path = "/capsules/inventory",
    tag = "capsules",
    operation_id = "capsule_inventory",
    params(InventoryRequest),
    responses((status = 200, description = "capsule_inventory: summaries across workspaces", body = CapsulePage), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn inventory(
    State(s): State<AppState>,
    Params(req): Params<InventoryRequest>,
) -> Result<Json<CapsulePage>> {
    s.capsules.inventory(req).await.map(Json)
}

#[utoipa::path(
    get,
    path = "/capsules/search",
    tag = "capsules",
    operation_id = "capsule_search",
    params(SearchRequest),
    responses((status = 200, description = "capsule_search: ranked hits with snippets", body = SearchPage), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn search(
    State(s): State<AppState>,
    Params(req): Params<SearchRequest>,
) -> Result<Json<SearchPage>> {
    s.capsules.search(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/capsules/compose",
    tag = "capsules",
    operation_id = "capsule_compose",
    request_body = ComposeRequest,
    responses((status = 200, description = "capsule_compose: the bundle", body = ComposeResponse), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn compose(
    State(s): State<AppState>,
    Body(req): Body<ComposeRequest>,
) -> Result<Json<ComposeResponse>> {
    s.capsules.compose(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/capsules/append",
    tag = "capsules",
    operation_id = "capsule_append",
    request_body = AppendRequest,
    responses((status = 200, description = "capsule_append: the section hit", body = AppendResponse), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn append(
    State(s): State<AppState>,
    Body(req): Body<AppendRequest>,
) -> Result<Json<AppendResponse>> {
    s.capsules.append(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/capsules/bulk-delete",
    tag = "capsules",
    operation_id = "capsule_bulk_delete",
    request_body = BulkDeleteRequest,
    responses((status = 200, description = "capsule_bulk_delete: how many were soft-deleted", body = BulkDeleteResponse), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn bulk_delete(
    State(s): State<AppState>,
    Body(req): Body<BulkDeleteRequest>,
) -> Result<Json<BulkDeleteResponse>> {
    s.capsules.bulk_delete(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/capsules/bulk-update",
    tag = "capsules",
    operation_id = "capsule_bulk_update",
    request_body = BulkUpdateRequest,
    responses((status = 200, description = "capsule_bulk_update: how many were updated", body = BulkUpdateResponse), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn bulk_update(
    State(s): State<AppState>,
    Body(req): Body<BulkUpdateRequest>,
) -> Result<Json<BulkUpdateResponse>> {
    s.capsules.bulk_update(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/capsules/purge",
    tag = "capsules",
    operation_id = "capsule_purge",
    request_body = PurgeRequest,
    responses((status = 200, description = "capsule_purge: how many were deleted for good", body = PurgeResponse), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn purge(
    State(s): State<AppState>,
    Body(req): Body<PurgeRequest>,
) -> Result<Json<PurgeResponse>> {
    s.capsules.purge(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/capsules/export",
    tag = "capsules",
    operation_id = "capsule_export",
    request_body = ExportRequest,
    params(("x-moss-progress" = Option<String>, Header, description = "Progress id to poll with GET /progress/{id} while the export runs")),
    responses((status = 200, description = "capsule_export: the file written and how many capsules it holds", body = ExportResponse), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md); 400 INVALID_REQUEST with details.rule for a refused path, 499 CANCELLED when the client went away (no file is left behind)", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn export(
    State(s): State<AppState>,
    headers: HeaderMap,
    Body(req): Body<ExportRequest>,
) -> Result<Json<ExportResponse>> {
    let (progress, _registration) = s.progress.register(requested_id(&headers)?)?;
    let (cancel, guard) = Cancel::new();
    let result = s.capsules.export(req, cancel, progress).await;
    guard.disarm();
    result.map(Json)
}

#[utoipa::path(
    post,
    path = "/capsules/import",
    tag = "capsules",
    operation_id = "capsule_import",
    request_body = ImportRequest,
    params(("x-moss-progress" = Option<String>, Header, description = "Progress id to poll with GET /progress/{id} while the import runs")),
    responses((status = 200, description = "capsule_import: how many records were imported, replaced, renamed and skipped", body = ImportResponse), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md): 400 INVALID_RECORD naming the line and field, 409 on a collision in mode error, 413 FILE_TOO_LARGE, 499 CANCELLED; nothing is written on any error", body = ErrorEnvelope), (status = "5XX", description = "Internal error or shutting down", body = ErrorEnvelope))
)]
pub async fn import(
    State(s): State<AppState>,
    headers: HeaderMap,
    Body(req): Body<ImportRequest>,
) -> Result<Json<ImportResponse>> {
    let (progress, _registration) = s.progress.register(requested_id(&headers)?)?;
    let (cancel, guard) = Cancel::new();
    let result = s.capsules.import(req, cancel, progress).await;
    guard.disarm();
    result.map(Json)
}
