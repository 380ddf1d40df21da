//! Extractors that turn bad input into `INVALID_REQUEST` envelopes naming the field.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use moss_client::ErrorCode;
use serde::de::DeserializeOwned;

use super::AppState;
use crate::decode::decode;
use crate::error::Error;

/// A JSON body. The body cap is enforced while reading.
pub struct Body<T>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for Body<T> {
    type Rejection = Error;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let limit = state.config.max_body_bytes;
        let bytes = axum::body::to_bytes(req.into_body(), limit)
            .await
            .map_err(|_| too_large(limit))?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return decode("request body", b"{}").map(Body);
        }
        decode("request body", &bytes).map(Body)
    }
}

pub fn too_large(limit: usize) -> Error {
    Error::new(
        ErrorCode::RequestTooLarge,
        format!("request body exceeds {limit} bytes (max_body_bytes); send less per request"),
    )
    .with_details(serde_json::json!({ "max_bytes": limit }))
}

/// Query-string parameters.
pub struct Params<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let query = parts.uri.query().unwrap_or("");
        axum::extract::Query::<T>::try_from_uri(&parts.uri)
            .map(|q| Params(q.0))
            .map_err(|rej| {
                let text = rej.body_text();
                let text = text
                    .strip_prefix("Failed to deserialize query string: ")
                    .unwrap_or(&text)
                    .to_string();
                Error::invalid(format!("invalid query string {query:?}: {text}"))
            })
    }
}
