//! `/tasks/…` routes: plans and tasks. Each is `POST /tasks/<operation>` with the
//! operation's JSON request, the tool name's words after `tasks_` as the path (`tasks_create` is
//! `POST /tasks/create`), a thin adapter over the same domain call as the MCP tool.

use axum::Json;
use axum::extract::State;
use moss_client::tasks::*;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::json::Body;
use crate::app::AppState;
use crate::error::Result;

/// The `/tasks` routes, each documented in the OpenAPI document.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create))
        .routes(routes!(decompose))
        .routes(routes!(define))
        .routes(routes!(note))
        .routes(routes!(verify))
        .routes(routes!(done))
        .routes(routes!(edit))
        .routes(routes!(context))
        .routes(routes!(delta))
        .routes(routes!(focus_get))
        .routes(routes!(focus_set))
        .routes(routes!(focus_clear))
        .routes(routes!(radar))
}

#[utoipa::path(
    post,
    path = "/tasks/create",
    tag = "tasks",
    operation_id = "tasks_create",
    request_body = TasksCreateRequest,
    responses((status = 200, description = "tasks_create", body = TaskMutation))
)]
pub async fn create(
    State(s): State<AppState>,
    Body(req): Body<TasksCreateRequest>,
) -> Result<Json<TaskMutation>> {
    s.tasks.create(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/tasks/decompose",
    tag = "tasks",
    operation_id = "tasks_decompose",
    request_body = TasksDecomposeRequest,
    responses((status = 200, description = "tasks_decompose", body = TaskMutation))
)]
pub async fn decompose(
    State(s): State<AppState>,
    Body(req): Body<TasksDecomposeRequest>,
) -> Result<Json<TaskMutation>> {
    s.tasks.decompose(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/tasks/define",
    tag = "tasks",
    operation_id = "tasks_define",
    request_body = TasksDefineRequest,
    responses((status = 200, description = "tasks_define", body = TaskMutation))
)]
pub async fn define(
    State(s): State<AppState>,
    Body(req): Body<TasksDefineRequest>,
) -> Result<Json<TaskMutation>> {
    s.tasks.define(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/tasks/note",
    tag = "tasks",
    operation_id = "tasks_note",
    request_body = TasksNoteRequest,
    responses((status = 200, description = "tasks_note", body = TaskMutation))
)]
pub async fn note(
    State(s): State<AppState>,
    Body(req): Body<TasksNoteRequest>,
) -> Result<Json<TaskMutation>> {
    s.tasks.note(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/tasks/verify",
    tag = "tasks",
    operation_id = "tasks_verify",
    request_body = TasksVerifyRequest,
    responses((status = 200, description = "tasks_verify", body = TaskMutation))
)]
pub async fn verify(
    State(s): State<AppState>,
    Body(req): Body<TasksVerifyRequest>,
) -> Result<Json<TaskMutation>> {
    s.tasks.verify(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/tasks/done",
    tag = "tasks",
    operation_id = "tasks_done",
    request_body = TasksDoneRequest,
    responses((status = 200, description = "tasks_done", body = TaskMutation))
)]
pub async fn done(
    State(s): State<AppState>,
    Body(req): Body<TasksDoneRequest>,
) -> Result<Json<TaskMutation>> {
    s.tasks.done(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/tasks/edit",
    tag = "tasks",
    operation_id = "tasks_edit",
    request_body = TasksEditRequest,
    responses((status = 200, description = "tasks_edit", body = TaskMutation))
)]
pub async fn edit(
    State(s): State<AppState>,
    Body(req): Body<TasksEditRequest>,
) -> Result<Json<TaskMutation>> {
    s.tasks.edit(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/tasks/context",
    tag = "tasks",
    operation_id = "tasks_context",
    request_body = TasksContextRequest,
    responses((status = 200, description = "tasks_context", body = TasksContextResponse))
)]
pub async fn context(
    State(s): State<AppState>,
    Body(req): Body<TasksContextRequest>,
) -> Result<Json<TasksContextResponse>> {
    s.tasks.context(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/tasks/delta",
    tag = "tasks",
    operation_id = "tasks_delta",
    request_body = TasksDeltaRequest,
    responses((status = 200, description = "tasks_delta", body = TasksDeltaResponse))
)]
pub async fn delta(
    State(s): State<AppState>,
    Body(req): Body<TasksDeltaRequest>,
) -> Result<Json<TasksDeltaResponse>> {
    s.tasks.delta(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/tasks/focus/get",
    tag = "tasks",
    operation_id = "tasks_focus_get",
    request_body = TasksFocusRequest,
    responses((status = 200, description = "tasks_focus_get", body = TasksFocusResponse))
)]
pub async fn focus_get(
    State(s): State<AppState>,
    Body(req): Body<TasksFocusRequest>,
) -> Result<Json<TasksFocusResponse>> {
    s.tasks.focus_get(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/tasks/focus/set",
    tag = "tasks",
    operation_id = "tasks_focus_set",
    request_body = TasksFocusSetRequest,
    responses((status = 200, description = "tasks_focus_set", body = TasksFocusResponse))
)]
pub async fn focus_set(
    State(s): State<AppState>,
    Body(req): Body<TasksFocusSetRequest>,
) -> Result<Json<TasksFocusResponse>> {
    s.tasks.focus_set(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/tasks/focus/clear",
    tag = "tasks",
    operation_id = "tasks_focus_clear",
    request_body = TasksFocusRequest,
    responses((status = 200, description = "tasks_focus_clear", body = TasksFocusResponse))
)]
pub async fn focus_clear(
    State(s): State<AppState>,
    Body(req): Body<TasksFocusRequest>,
) -> Result<Json<TasksFocusResponse>> {
    s.tasks.focus_clear(req).await.map(Json)
}

#[utoipa::path(
    post,
    path = "/tasks/radar",
    tag = "tasks",
    operation_id = "tasks_radar",
    request_body = TasksRadarRequest,
    responses((status = 200, description = "tasks_radar", body = TasksRadarResponse))
)]
pub async fn radar(
    State(s): State<AppState>,
    Body(req): Body<TasksRadarRequest>,
) -> Result<Json<TasksRadarResponse>> {
    s.tasks.radar(req).await.map(Json)
}
