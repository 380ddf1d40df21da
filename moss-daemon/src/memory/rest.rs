//! The memory family's hand-written REST route: ending a session, which is no tool. Its tools'
//! routes (`POST /memories`, `POST /memories/recall`, …) come from the op table.

use axum::Json;
use axum::extract::{Path, State};
use serde::Serialize;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;
use crate::error::Result;

/// The routes that are no tool, each documented in the OpenAPI document.
pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(end_session))
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
