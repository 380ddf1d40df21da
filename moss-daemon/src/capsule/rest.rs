//! The capsule family's REST edge: `/capsules` routes, resource-shaped (`GET /capsules/{id}`,
//! `PUT /capsules/by-name`, …) and so written by hand, each a thin adapter over
//! [`Capsules`](crate::capsule::Capsules) and documented at the op table entry's path.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use moss_client::ErrorEnvelope;
use moss_client::capsule::*;
use serde::Deserialize;

use crate::api::json::{Body, Params};
use crate::api::progress::requested_id;
use crate::app::AppState;
use crate::error::{Error, Result};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The `/capsules` routes, each documented in the OpenAPI document.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(store, list))
        .routes(routes!(fetch_many))
        .routes(routes!(latest))
        .routes(routes!(inventory))
        .routes(routes!(search))
        .routes(routes!(compose))
        .routes(routes!(append))
        .routes(routes!(bulk_delete))
        .routes(routes!(bulk_update))
        .routes(routes!(purge))
        .routes(routes!(watch))
        .routes(routes!(stats))
        .routes(routes!(restore))
        .routes(routes!(lineage))
        .routes(routes!(clone_capsule))
        .routes(routes!(versions))
        .routes(routes!(diff))
        .routes(routes!(export))
        .routes(routes!(import))
        .routes(routes!(fetch_by_name, update_by_name, delete_by_name))
        .routes(routes!(fetch_by_id, update_by_id, delete_by_id))
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
    tag = "capsule",
    operation_id = "capsule_store",
    request_body = StoreRequest,
    responses((status = 200, description = "capsule_store: the stored capsule's id and fetch key", body = CapsuleHandle))
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
    tag = "capsule",
    operation_id = "capsule_fetch_by_id",
    params(("id" = String, Path, description = "Capsule id"), FetchRequest),
    responses((status = 200, description = "capsule_fetch by id", body = Capsule))
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
    tag = "capsule",
    operation_id = "capsule_fetch_by_name",
    params(FetchRequest),
    responses((status = 200, description = "capsule_fetch by workspace and name", body = Capsule))
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
    tag = "capsule",
    operation_id = "capsule_fetch_many",
    request_body = FetchManyRequest,
    responses((status = 200, description = "capsule_fetch_many: found capsules and per-ref errors", body = FetchManyResponse))
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
    tag = "capsule",
    operation_id = "capsule_update_by_id",
    request_body = UpdateRequest,
    params(("id" = String, Path, description = "Capsule id"), NameQuery),
    responses((status = 200, description = "capsule_update by id", body = CapsuleHandle))
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
    tag = "capsule",
    operation_id = "capsule_update_by_name",
    request_body = UpdateRequest,
    params(NameQuery),
    responses((status = 200, description = "capsule_update by workspace and name (in the query)", body = CapsuleHandle))
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
    tag = "capsule",
    operation_id = "capsule_delete_by_id",
    params(("id" = String, Path, description = "Capsule id"), NameQuery),
    responses((status = 200, description = "capsule_delete by id", body = DeleteResponse))
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
    tag = "capsule",
    operation_id = "capsule_delete_by_name",
    params(DeleteRequest),
    responses((status = 200, description = "capsule_delete by workspace and name", body = DeleteResponse))
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
    tag = "capsule",
    operation_id = "capsule_latest",
    params(LatestRequest),
    responses((status = 200, description = "capsule_latest: the newest capsule as item, or null", body = LatestResponse))
)]
pub async fn latest(
    State(s): State<AppState>,
    Params(req): Params<LatestRequest>,
) -> Result<Json<LatestResponse>> {
    crate::moss::interface::capsule_latest(&s, req)
        .await
        .map(Json)
}

#[utoipa::path(
    get,
    path = "/capsules",
    tag = "capsule",
    operation_id = "capsule_list",
    params(ListRequest),
    responses((status = 200, description = "capsule_list: one workspace's summaries", body = CapsulePage))
)]
pub async fn list(
    State(s): State<AppState>,
    Params(req): Params<ListRequest>,
) -> Result<Json<CapsulePage>> {
    crate::moss::interface::capsule_list(&s, req)
        .await
        .map(Json)
}

#[utoipa::path(
    get,
    path = "/capsules/inventory",
    tag = "capsule",
    operation_id = "capsule_inventory",
    params(InventoryRequest),
    responses((status = 200, description = "capsule_inventory: summaries across workspaces", body = CapsulePage))
)]
pub async fn inventory(
    State(s): State<AppState>,
    Params(req): Params<InventoryRequest>,
) -> Result<Json<CapsulePage>> {
    s.capsules.inventory(req).await.map(Json)
}

#[utoipa::path(
    get,
    path = "/capsules/watch",
    tag = "capsule",
    operation_id = "capsule_watch",
    params(WatchRequest),
    responses((status = 200, description = "capsule_watch: the next matching change after `since`, or a timeout", body = WatchResponse))
)]
pub async fn watch(
    State(s): State<AppState>,
    Params(req): Params<WatchRequest>,
) -> Result<Json<WatchResponse>> {
    s.capsules.watch(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/capsules/restore",
    tag = "capsule",
    operation_id = "capsule_restore",
    request_body = RestoreRequest,
    responses((status = 200, description = "capsule_restore: the capsule, active again", body = RestoreResponse))
)]
pub async fn restore(
    State(s): State<AppState>,
    Body(req): Body<RestoreRequest>,
) -> Result<Json<RestoreResponse>> {
    s.capsules.restore(req).await.map(Json)
}

#[utoipa::path(
    get,
    path = "/capsules/lineage",
    tag = "capsule",
    operation_id = "capsule_lineage",
    params(LineageRequest),
    responses((status = 200, description = "capsule_lineage: what it was based on, what was based on it", body = LineageResponse))
)]
pub async fn lineage(
    State(s): State<AppState>,
    Params(req): Params<LineageRequest>,
) -> Result<Json<LineageResponse>> {
    s.capsules.lineage(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/capsules/clone",
    tag = "capsule",
    operation_id = "capsule_clone",
    request_body = CloneRequest,
    responses((status = 200, description = "capsule_clone: the new capsule", body = CapsuleHandle))
)]
pub async fn clone_capsule(
    State(s): State<AppState>,
    Body(req): Body<CloneRequest>,
) -> Result<Json<CapsuleHandle>> {
    s.capsules.clone_capsule(req).await.map(Json)
}

#[utoipa::path(
    get,
    path = "/capsules/versions",
    tag = "capsule",
    operation_id = "capsule_versions",
    params(VersionsRequest),
    responses((status = 200, description = "capsule_versions: the earlier revisions kept, newest first", body = VersionsResponse))
)]
pub async fn versions(
    State(s): State<AppState>,
    Params(req): Params<VersionsRequest>,
) -> Result<Json<VersionsResponse>> {
    s.capsules.versions(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/capsules/diff",
    tag = "capsule",
    operation_id = "capsule_diff",
    request_body = DiffRequest,
    responses((status = 200, description = "capsule_diff: section by section", body = DiffResponse))
)]
pub async fn diff(
    State(s): State<AppState>,
    Body(req): Body<DiffRequest>,
) -> Result<Json<DiffResponse>> {
    s.capsules.diff(req).await.map(Json)
}

#[utoipa::path(
    get,
    path = "/capsules/stats",
    tag = "capsule",
    operation_id = "capsule_stats",
    params(StatsRequest),
    responses((status = 200, description = "capsule_stats: counts, sizes, phases and roles", body = StatsResponse))
)]
pub async fn stats(
    State(s): State<AppState>,
    Params(req): Params<StatsRequest>,
) -> Result<Json<StatsResponse>> {
    s.capsules.stats(req).await.map(Json)
}

#[utoipa::path(
    get,
    path = "/capsules/search",
    tag = "capsule",
    operation_id = "capsule_search",
    params(SearchRequest),
    responses((status = 200, description = "capsule_search: ranked hits with snippets", body = SearchPage))
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
    tag = "capsule",
    operation_id = "capsule_compose",
    request_body = ComposeRequest,
    responses((status = 200, description = "capsule_compose: the bundle", body = ComposeResponse))
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
    tag = "capsule",
    operation_id = "capsule_append",
    request_body = AppendRequest,
    responses((status = 200, description = "capsule_append: the section hit", body = AppendResponse))
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
    tag = "capsule",
    operation_id = "capsule_bulk_delete",
    request_body = BulkDeleteRequest,
    responses((status = 200, description = "capsule_bulk_delete: how many were soft-deleted", body = BulkDeleteResponse))
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
    tag = "capsule",
    operation_id = "capsule_bulk_update",
    request_body = BulkUpdateRequest,
    responses((status = 200, description = "capsule_bulk_update: how many were updated", body = BulkUpdateResponse))
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
    tag = "capsule",
    operation_id = "capsule_purge",
    request_body = PurgeRequest,
    responses((status = 200, description = "capsule_purge: how many were deleted for good", body = PurgeResponse))
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
    tag = "capsule",
    operation_id = "capsule_export",
    request_body = ExportRequest,
    params(("x-moss-progress" = Option<String>, Header, description = "Progress id to poll with GET /progress/{id} while the export runs")),
    responses((status = 200, description = "capsule_export: the file written and how many capsules it holds", body = ExportResponse), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md); 400 INVALID_REQUEST with details.rule for a refused path, 499 CANCELLED when the client went away (no file is left behind)", body = ErrorEnvelope))
)]
pub async fn export(
    State(s): State<AppState>,
    headers: HeaderMap,
    Body(req): Body<ExportRequest>,
) -> Result<Json<ExportResponse>> {
    let (progress, _registration) = s.progress.register(requested_id(&headers)?)?;
    s.capsules.export(req, progress).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/capsules/import",
    tag = "capsule",
    operation_id = "capsule_import",
    request_body = ImportRequest,
    params(("x-moss-progress" = Option<String>, Header, description = "Progress id to poll with GET /progress/{id} while the import runs")),
    responses((status = 200, description = "capsule_import: how many records were imported, replaced, renamed and skipped", body = ImportResponse), (status = "4XX", description = "Error envelope with the code's HTTP status (see proto-docs/error-codes.md): 400 INVALID_RECORD naming the line and field, 409 on a collision in mode error, 413 FILE_TOO_LARGE, 499 CANCELLED; nothing is written on any error", body = ErrorEnvelope))
)]
pub async fn import(
    State(s): State<AppState>,
    headers: HeaderMap,
    Body(req): Body<ImportRequest>,
) -> Result<Json<ImportResponse>> {
    let (progress, _registration) = s.progress.register(requested_id(&headers)?)?;
    s.capsules.import(req, progress).await.map(Json)
}
