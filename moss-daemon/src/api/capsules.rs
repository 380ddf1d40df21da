//! `/capsules` routes (seed 003 "REST API"), each a thin adapter over [`Capsules`](crate::capsule::Capsules).

use axum::extract::{Path, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use moss_client::*;
use serde::Deserialize;

use super::AppState;
use super::json::{Body, Params};
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
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NameQuery {
    workspace: Option<String>,
    name: Option<String>,
}

async fn store(
    State(s): State<AppState>,
    Body(req): Body<StoreRequest>,
) -> Result<Json<CapsuleHandle>> {
    s.capsules.store(req).await.map(Json)
}

async fn fetch_by_id(
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

async fn fetch_by_name(
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

async fn fetch_many(
    State(s): State<AppState>,
    Body(req): Body<FetchManyRequest>,
) -> Result<Json<FetchManyResponse>> {
    s.capsules.fetch_many(req).await.map(Json)
}

async fn update_by_id(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Body(mut req): Body<UpdateRequest>,
) -> Result<Json<CapsuleHandle>> {
    if req.id.as_ref().is_some_and(|b| *b != id) {
        return Err(Error::invalid(format!(
            "the body's id {:?} differs from the path's {id:?}; ids cannot be changed",
            req.id.unwrap_or_default()
        )));
    }
    req.id = Some(id);
    s.capsules.update(req).await.map(Json)
}

async fn update_by_name(
    State(s): State<AppState>,
    Params(q): Params<NameQuery>,
    Body(mut req): Body<UpdateRequest>,
) -> Result<Json<CapsuleHandle>> {
    if q.workspace.is_some() {
        req.workspace = q.workspace;
    }
    if q.name.is_some() {
        req.name = q.name;
    }
    s.capsules.update(req).await.map(Json)
}

async fn delete_by_id(
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

async fn delete_by_name(
    State(s): State<AppState>,
    Params(req): Params<DeleteRequest>,
) -> Result<Json<DeleteResponse>> {
    s.capsules.delete(req).await.map(Json)
}

async fn latest(
    State(s): State<AppState>,
    Params(req): Params<LatestRequest>,
) -> Result<Json<LatestResponse>> {
    s.capsules.latest(req).await.map(Json)
}

async fn list(
    State(s): State<AppState>,
    Params(req): Params<ListRequest>,
) -> Result<Json<CapsulePage>> {
    s.capsules.list(req).await.map(Json)
}

async fn inventory(
    State(s): State<AppState>,
    Params(req): Params<InventoryRequest>,
) -> Result<Json<CapsulePage>> {
    s.capsules.inventory(req).await.map(Json)
}

async fn search(
    State(s): State<AppState>,
    Params(req): Params<SearchRequest>,
) -> Result<Json<SearchPage>> {
    s.capsules.search(req).await.map(Json)
}

async fn compose(
    State(s): State<AppState>,
    Body(req): Body<ComposeRequest>,
) -> Result<Json<ComposeResponse>> {
    s.capsules.compose(req).await.map(Json)
}

async fn append(
    State(s): State<AppState>,
    Body(req): Body<AppendRequest>,
) -> Result<Json<AppendResponse>> {
    s.capsules.append(req).await.map(Json)
}

async fn bulk_delete(
    State(s): State<AppState>,
    Body(req): Body<BulkDeleteRequest>,
) -> Result<Json<BulkDeleteResponse>> {
    s.capsules.bulk_delete(req).await.map(Json)
}

async fn bulk_update(
    State(s): State<AppState>,
    Body(req): Body<BulkUpdateRequest>,
) -> Result<Json<BulkUpdateResponse>> {
    s.capsules.bulk_update(req).await.map(Json)
}

async fn purge(
    State(s): State<AppState>,
    Body(req): Body<PurgeRequest>,
) -> Result<Json<PurgeResponse>> {
    s.capsules.purge(req).await.map(Json)
}
