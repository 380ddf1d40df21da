//! `/ui/w/{ws}/timeline`: what changed in a workspace, across families, newest first.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;

use super::pages::{crumbs, seg};
use super::{Viewer, page, problem};
use crate::app::AppState;

/// Changes shown from each family (the page shows the newest of them all).
const PER_FAMILY: i64 = 50;

pub async fn timeline(_v: Viewer, State(app): State<AppState>, Path(ws): Path<String>) -> Response {
    let w = crate::names::normalize(&ws);
    let changes = app
        .store
        .readers
        .run_db(move |db| crate::moss::changes(db, &w, PER_FAMILY))
        .await;
    let changes = match changes {
        Ok(c) => c,
        Err(e) => return problem(e),
    };
    page(
        StatusCode::OK,
        &format!("{ws}: timeline"),
        html! {
            (crumbs(&ws, "timeline"))
            h1 { "What changed in " (ws) }
            @if changes.is_empty() { p { "Nothing yet." } }
            ol.timeline {
                @for c in &changes {
                    li {
                        span.meta { (c.updated_at.clone().unwrap_or_default()) " · " (c.kind) " · " }
                        @match c.kind.as_str() {
                            "capsule" => a href={ "/ui/w/" (seg(&ws)) "/capsules/" (seg(&c.id)) } { (c.title) },
                            "plan" | "task" => a href={ "/ui/w/" (seg(&ws)) "/tasks/" (seg(&c.id)) } { (c.title) },
                            _ => (c.title),
                        }
                    }
                }
            }
        },
    )
}
