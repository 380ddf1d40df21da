//! `/memories` routes, each a thin adapter over [`Memories`](crate::memory::Memories).

use axum::Json;
use axum::extract::{Path, State};
use moss_client::memory::*;
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::json::Body;
use crate::app::AppState;
use crate::error::Result;

/// The `/memories` routes, each documented in the OpenAPI document.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(store))
        .routes(routes!(recall))
        .routes(routes!(forget))
        .routes(routes!(render))
        .routes(routes!(end_session))
        .routes(routes!(sources))
        .routes(routes!(sources_run))
        .routes(routes!(event))
}

#[utoipa::path(
    post,
    path = "/memories/sources",
    tag = "memory",
    operation_id = "memory_sources",
    request_body = MemorySourcesRequest,
    responses((status = 200, description = "memory_sources", body = MemorySourcesResponse))
)]
pub async fn sources(
    State(s): State<AppState>,
    Body(req): Body<MemorySourcesRequest>,
) -> Result<Json<MemorySourcesResponse>> {
    s.memories.sources(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/memories/sources/run",
    tag = "memory",
    operation_id = "memory_sources_run",
    request_body = MemorySourcesRunRequest,
    responses((status = 200, description = "memory_sources_run", body = MemorySourcesResponse))
)]
pub async fn sources_run(
    State(s): State<AppState>,
    Body(req): Body<MemorySourcesRunRequest>,
) -> Result<Json<MemorySourcesResponse>> {
    s.memories.sources_run(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/memories/events",
    tag = "memory",
    operation_id = "memory_event",
    request_body = MemoryEventRequest,
    responses((status = 200, description = "memory_event", body = MemoryEventResponse))
)]
pub async fn event(
    State(s): State<AppState>,
    Body(req): Body<MemoryEventRequest>,
) -> Result<Json<MemoryEventResponse>> {
    s.memories.event(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/memories",
    tag = "memory",
    operation_id = "memory_store",
    request_body = MemoryStoreRequest,
    responses((status = 200, description = "memory_store", body = MemoryStoreResponse))
)]
pub async fn store(
    State(s): State<AppState>,
    Body(req): Body<MemoryStoreRequest>,
) -> Result<Json<MemoryStoreResponse>> {
    s.memories.store(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/memories/recall",
    tag = "memory",
    operation_id = "memory_recall",
    request_body = MemoryRecallRequest,
    responses((status = 200, description = "memory_recall", body = MemoryRecallResponse))
)]
pub async fn recall(
    State(s): State<AppState>,
    Body(req): Body<MemoryRecallRequest>,
) -> Result<Json<MemoryRecallResponse>> {
    s.memories.recall(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/memories/forget",
    tag = "memory",
    operation_id = "memory_forget",
    request_body = MemoryForgetRequest,
    responses((status = 200, description = "memory_forget", body = MemoryForgetResponse))
)]
pub async fn forget(
    State(s): State<AppState>,
    Body(req): Body<MemoryForgetRequest>,
) -> Result<Json<MemoryForgetResponse>> {
    s.memories.forget(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/memories/render",
    tag = "memory",
    operation_id = "memory_render",
    request_body = MemoryRenderRequest,
    responses((status = 200, description = "memory_render", body = MemoryRenderResponse))
)]
pub async fn render(
    State(s): State<AppState>,
    Body(req): Body<MemoryRenderRequest>,
) -> Result<Json<MemoryRenderResponse>> {
    s.memories.render(req).await.map(Json)
}

/// What ending a session removed.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SessionEnded {
    pub session: String,
    /// Its non-persistent memories, now gone.
    pub removed: i64,
}

#[utoipa::path(
    delete,
    path = "/memories/sessions/{id}",
    tag = "memory",
    operation_id = "memory_session_end",
    params(("id" = String, Path, description = "The session named in memory_store's `session`")),
    responses((status = 200, description = "The session's non-persistent memories are removed", body = SessionEnded))
)]
pub async fn end_session(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<SessionEnded>> {
    let removed = s.memories.end_session(&id).await?;
    Ok(Json(SessionEnded {
        session: id,
        removed: removed as i64,
    }))
}
