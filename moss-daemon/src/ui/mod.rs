//! The web UI under `/ui/`: server-rendered pages (maud, escaped by default), one stylesheet
//! embedded in the binary, no script. Reading needs no JavaScript; changes are plain forms.
//!
//! Every page and form ends in the same domain functions as MCP and REST. Access is by a
//! session cookie opened with a one-time code from `moss ui` ([`session`]); the guard's Host and
//! Origin checks apply as on every route, every form carries the session's CSRF token, and
//! every answer carries a Content-Security-Policy that allows only the daemon's own stylesheet.

mod graph;
pub mod markdown;
mod memories;
mod pages;
pub mod session;
mod tasks;
mod timeline;

use axum::Router;
use axum::extract::{FromRequestParts, Query, State};
use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, COOKIE, LOCATION, REFERRER_POLICY,
    SET_COOKIE, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use maud::{DOCTYPE, Markup, html};
use serde::Deserialize;

use crate::app::AppState;
use session::{COOKIE as SESSION_COOKIE, Session};

/// The pages' one stylesheet.
const STYLE: &str = include_str!("style.css");

/// What a page may load: its own stylesheet, nothing else; no frames, forms only to itself.
const CSP: &str = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; \
                   frame-ancestors 'none'; base-uri 'none'";

/// The UI's routes (behind the guard, which lets `/ui/` through without a bearer token: the
/// pages check their session instead).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/ui", get(|| async { redirect("/ui/") }))
        .route("/ui/", get(pages::home))
        .route("/ui/welcome", get(welcome))
        .route("/ui/login", get(login))
        .route("/ui/assets/style.css", get(style))
        .route("/ui/search", get(pages::search))
        .route("/ui/w/{ws}/capsules", get(pages::capsules))
        .route("/ui/w/{ws}/capsules/{id}", get(pages::capsule))
        .route("/ui/w/{ws}/capsules/{id}/diff", get(pages::diff))
        .route("/ui/w/{ws}/capsules/{id}/delete", post(pages::delete))
        .route("/ui/w/{ws}/capsules/{id}/restore", post(pages::restore))
        .route("/ui/w/{ws}/tasks", get(tasks::list))
        .route("/ui/w/{ws}/tasks/{id}", get(tasks::task))
        .route("/ui/w/{ws}/graph", get(graph::graph))
        .route("/ui/w/{ws}/graph/node", get(graph::node))
        .route("/ui/w/{ws}/graph/resolve", post(graph::resolve))
        .route("/ui/w/{ws}/memories", get(memories::memories))
        .route(
            "/ui/w/{ws}/memories/forget",
            get(memories::forget_preview).post(memories::forget),
        )
        .route("/ui/w/{ws}/timeline", get(timeline::timeline))
        .layer(axum::middleware::map_response(secure))
}

/// Whether the guard lets `path` through without a bearer token: the pages, which check their
/// session cookie themselves.
pub fn is_page(path: &str) -> bool {
    path == "/ui" || path.starts_with("/ui/")
}

/// The headers every UI answer carries.
async fn secure(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    h.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    h.entry(CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    resp
}

/// A 303 to `to`.
fn redirect(to: &str) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(
            LOCATION,
            HeaderValue::from_str(to).unwrap_or(HeaderValue::from_static("/ui/")),
        )],
    )
        .into_response()
}

/// An HTML page.
fn page(status: StatusCode, title: &str, body: Markup) -> Response {
    let doc = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Moss" }
                link rel="stylesheet" href="/ui/assets/style.css";
            }
            body {
                header {
                    a.brand href="/ui/" { "Moss" }
                    form.search action="/ui/search" method="get" {
                        input type="search" name="q" placeholder="Search every family" aria-label="Search";
                        button type="submit" { "Search" }
                    }
                }
                main { (body) }
            }
        }
    };
    (
        status,
        [(CONTENT_TYPE, "text/html; charset=utf-8")],
        doc.into_string(),
    )
        .into_response()
}

/// A page saying what went wrong, in the page's own words.
fn problem(e: crate::error::Error) -> Response {
    let status = StatusCode::from_u16(e.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    page(
        status,
        "Error",
        html! {
            h1 { (status.as_u16()) " " (e.0.code.as_str()) }
            p.error { (e.0.message) }
            p { a href="/ui/" { "Back to the workspaces" } }
        },
    )
}

/// The viewer of a page: an open session, from the cookie. Without one, the page answers a
/// redirect to `/ui/welcome`.
pub struct Viewer(pub Session);

impl FromRequestParts<AppState> for Viewer {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &AppState) -> Result<Self, Response> {
        parts
            .headers
            .get_all(COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(session::cookie_id)
            .and_then(|id| app.ui.get(id))
            .map(Viewer)
            .ok_or_else(|| redirect("/ui/welcome"))
    }
}

/// `/ui/welcome`: what to do without a session.
async fn welcome() -> Response {
    page(
        StatusCode::OK,
        "Sign in",
        html! {
            h1 { "Open Moss in your browser" }
            p { "Run this in a terminal, then open the address it prints (it works once, within five minutes):" }
            pre { "moss ui --open" }
            p { "The page signs you in with a cookie for this browser; it never sees the daemon's token." }
        },
    )
}

#[derive(Deserialize)]
struct LoginQuery {
    #[serde(default)]
    code: String,
}

/// `/ui/login?code=…`: trades a one-time code for a session cookie.
async fn login(State(app): State<AppState>, Query(q): Query<LoginQuery>) -> Response {
    let Some(id) = app.ui.redeem(&q.code) else {
        return page(
            StatusCode::FORBIDDEN,
            "Sign in",
            html! {
                h1 { "This sign-in address does not work" }
                p.error { "It was used already, is older than five minutes, or was never issued." }
                p { "Run " code { "moss ui" } " again for a new one." }
            },
        );
    };
    let mut resp = redirect("/ui/");
    let cookie = format!("{SESSION_COOKIE}={id}; Path=/ui; HttpOnly; SameSite=Strict");
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        resp.headers_mut().insert(SET_COOKIE, v);
    }
    resp
}

/// The stylesheet.
async fn style() -> Response {
    (
        [
            (CONTENT_TYPE, "text/css; charset=utf-8"),
            (CACHE_CONTROL, "max-age=3600"),
        ],
        STYLE,
    )
        .into_response()
}
