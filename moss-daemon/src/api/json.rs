//! Extractors that turn bad input into `INVALID_REQUEST` envelopes naming the field.

use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use moss_client::ErrorCode;
use serde::de::DeserializeOwned;

use super::AppState;
use crate::error::Error;

/// Decodes `T` from JSON bytes, naming the offending field on failure.
pub fn decode<T: DeserializeOwned>(what: &str, bytes: &[u8]) -> Result<T, Error> {
    // Tracking the path costs on every field and matters only for a bad body: decode plainly,
    // and decode a body that fails again, tracking the path, to name the field.
    serde_json::from_slice(bytes).or_else(|plain| {
        let de = &mut serde_json::Deserializer::from_slice(bytes);
        serde_path_to_error::deserialize::<_, T>(de).map_err(|e| invalid_field(what, e))?;
        // The value itself decodes: what the plain decode refused is what follows it.
        Err(Error::invalid(format!(
            "invalid {what}: {}; send one JSON value",
            without_position(&plain.to_string())
        )))
    })
}

/// serde_json appends " at line L column C"; for one-line bodies that is noise.
fn without_position(message: &str) -> &str {
    message.find(" at line ").map_or(message, |i| &message[..i])
}

/// Decodes `T` from a JSON value (MCP arguments), naming the offending field on failure.
pub fn decode_value<T: DeserializeOwned>(what: &str, value: serde_json::Value) -> Result<T, Error> {
    serde_path_to_error::deserialize(value).map_err(|e| invalid_field(what, e))
}

fn invalid_field(what: &str, e: serde_path_to_error::Error<serde_json::Error>) -> Error {
    let path = e.path().to_string();
    let inner = e.inner().to_string();
    let inner = without_position(&inner);
    let root = path == "." || path.is_empty();
    let message = if root {
        format!("invalid {what}: {inner}")
    } else {
        format!("invalid {what}: field `{path}`: {inner}")
    };
    // A missing field is reported at its parent's path; name the field itself.
    let missing = inner
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next());
    let field = match (missing, root) {
        (Some(name), true) => Some(name.to_string()),
        (Some(name), false) => Some(format!("{path}.{name}")),
        (None, true) => None,
        (None, false) => Some(path),
    };
    Error::invalid(message).with_details(serde_json::json!({ "field": field }))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Req {
        name: String,
        #[serde(default)]
        limit: Option<u32>,
    }

    #[test]
    fn decodes_a_good_body() {
        let r: Req = decode("body", br#"{"name":"a","limit":3}"#).unwrap();
        assert_eq!(
            r,
            Req {
                name: "a".into(),
                limit: Some(3)
            }
        );
    }

    #[test]
    fn names_the_bad_field() {
        let e = decode::<Req>("body", br#"{"name":"a","limit":"x"}"#).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRequest);
        assert!(e.0.message.contains("field `limit`"), "{}", e.0.message);
        assert_eq!(e.0.details["field"], "limit");

        let e = decode::<Req>("body", br#"{"limit":1}"#).unwrap_err();
        assert_eq!(e.0.details["field"], "name");
    }

    #[test]
    fn refuses_trailing_characters() {
        let e = decode::<Req>("body", br#"{"name":"a"} {"name":"b"}"#).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidRequest);
        assert!(
            e.0.message.contains("trailing characters"),
            "{}",
            e.0.message
        );
        assert!(!e.0.message.contains(" at line "), "{}", e.0.message);
    }
}
