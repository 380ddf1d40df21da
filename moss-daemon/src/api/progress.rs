//! `GET /progress/{id}`: how far a running request that sent `X-Moss-Progress: <id>` has got.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use moss_client::ErrorEnvelope;
use moss_client::daemon::{PROGRESS_HEADER, ProgressReport};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;
use crate::error::{Error, Result};

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(progress))
}

/// The progress id a request names in its `X-Moss-Progress` header, if any.
pub fn requested_id(headers: &HeaderMap) -> Result<Option<&str>> {
    match headers.get(PROGRESS_HEADER) {
        None => Ok(None),
        Some(v) => v.to_str().map(Some).map_err(|_| {
            Error::invalid(format!(
                "the {PROGRESS_HEADER} header is not visible ASCII; use a ULID or similar id"
            ))
        }),
    }
}

#[utoipa::path(
    get,
    path = "/progress/{id}",
    tag = "daemon",
    operation_id = "progress",
    params(("id" = String, Path, description = "The id the request sent in its X-Moss-Progress header")),
    responses(
        (status = 200, description = "Progress of the running request: done of total in the current phase", body = ProgressReport),
        (status = "4XX", description = "Error envelope; 404 NOT_FOUND when no running request has that id", body = ErrorEnvelope)
    )
)]
pub async fn progress(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<ProgressReport>> {
    s.progress.get(&id).map(Json).ok_or_else(|| {
        Error::not_found(format!(
            "no running request reports progress as {id:?}: it has not started, has finished, \
             or did not send {PROGRESS_HEADER}"
        ))
    })
}
