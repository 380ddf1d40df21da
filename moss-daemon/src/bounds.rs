//! Length bounds of text fields, the same in every memory: handles (workspace, name, source,
//! run_id, phase, role) hold at most 200 characters, titles at most 500. A value over its bound
//! is `400 INVALID_REQUEST` naming the field in `details.field` and giving both lengths.

use crate::error::{Error, Result};

/// Longest workspace, name or other handle, in characters.
pub const MAX_HANDLE_CHARS: usize = 200;
/// Longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 500;

/// Refuses `value` if it has more than `max` characters.
pub fn check_len(field: &str, value: &str, max: usize) -> Result<()> {
    let n = value.chars().count();
    if n > max {
        return Err(Error::invalid_field(
            field,
            format!("{field} is {n} characters long; at most {max} are allowed"),
        ));
    }
    Ok(())
}

/// An optional text field: trimmed; "" and whitespace mean "none".
pub fn optional_text(field: &str, value: Option<&str>, max: usize) -> Result<Option<String>> {
    match value.map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) => {
            check_len(field, v, max)?;
            Ok(Some(v.to_string()))
        }
    }
}

pub fn title(value: Option<&str>) -> Result<Option<String>> {
    optional_text("title", value, MAX_TITLE_CHARS)
}

/// An optional handle such as `source`, `run_id`, `phase` or `role`.
pub fn handle(field: &str, value: Option<&str>) -> Result<Option<String>> {
    optional_text(field, value, MAX_HANDLE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_name_their_field() {
        assert_eq!(
            handle("phase", Some("  plan ")).unwrap(),
            Some("plan".into())
        );
        assert_eq!(handle("phase", Some("   ")).unwrap(), None);
        let e = title(Some(&"t".repeat(501))).unwrap_err();
        assert_eq!(e.0.details["field"], "title");
        assert_eq!(
            e.0.message,
            "title is 501 characters long; at most 500 are allowed"
        );
    }
}
