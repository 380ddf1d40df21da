//! JSON objects given in requests (`meta`, `contract_data`, a memory's `data`) and stored as
//! text: the checks on the way in and the parse on the way out, the same for every memory.

use serde_json::Value;

use crate::error::{Error, Result};

/// A JSON object field (`meta`, `contract_data`), serialized for storage.
pub fn object_json(field: &str, value: Option<&Value>) -> Result<Option<String>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v @ Value::Object(_)) => {
            let s = v.to_string();
            if s.len() > MAX_META_BYTES {
                return Err(Error::invalid_field(
                    field,
                    format!(
                        "{field} is {} bytes of JSON; at most {MAX_META_BYTES} are allowed",
                        s.len()
                    ),
                ));
            }
            Ok(Some(s))
        }
        Some(_) => Err(Error::invalid_field(
            field,
            format!("{field} must be a JSON object"),
        )),
    }
}

/// Largest `meta` object, in bytes of JSON.
pub const MAX_META_BYTES: usize = 16 * 1024;
/// Parses stored JSON (written through [`object_json`], so valid).
pub fn parse_json(s: Option<String>) -> Option<Value> {
    s.and_then(|s| serde_json::from_str(&s).ok())
}
