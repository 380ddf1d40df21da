//! JSON decoding shared by every edge (REST bodies, MCP arguments): a bad value is an
//! `INVALID_REQUEST` whose message and `details.field` name the offending field.

use serde::de::DeserializeOwned;

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

#[cfg(test)]
mod tests {
    use super::*;
    use moss_client::ErrorCode;

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
