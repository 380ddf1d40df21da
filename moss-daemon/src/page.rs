//! Pagination, the same in every memory. The arguments: `limit` absent or 0 means the listing's
//! default, above its maximum is clamped, and a negative `limit` or `offset` is
//! `400 INVALID_REQUEST` naming the field. The answer says where the page sits in the whole.

use moss_client::capsule::Pagination;

use crate::error::{Error, Result};

/// The `(limit, offset)` of a page request, for a listing with `default` and `max` limits.
pub fn bounds(
    limit: Option<i64>,
    offset: Option<i64>,
    default: i64,
    max: i64,
) -> Result<(i64, i64)> {
    let limit = match limit {
        None | Some(0) => default,
        Some(l) if l < 0 => {
            return Err(Error::invalid_field(
                "limit",
                format!(
                    "limit must not be negative, got {l}: give 1 to {max} (0 or none means \
                     {default}, and more than {max} means {max})"
                ),
            ));
        }
        Some(l) => l.min(max),
    };
    let offset = match offset {
        None => 0,
        Some(o) if o < 0 => {
            return Err(Error::invalid_field(
                "offset",
                format!("offset must be 0 or more, got {o}"),
            ));
        }
        Some(o) => o,
    };
    Ok((limit, offset))
}

/// Where a page of `count` items read at `offset` sits among `total`.
pub fn pagination(limit: i64, offset: i64, count: usize, total: i64) -> Pagination {
    Pagination {
        limit,
        offset,
        has_more: offset + (count as i64) < total,
        total: Some(total),
    }
}

/// A page size: `value` or `default`, within `1..=max`, else `INVALID_REQUEST` naming `field`.
pub fn limit(field: &str, value: Option<i64>, default: i64, max: i64) -> Result<i64> {
    match value {
        None => Ok(default),
        Some(v) if (1..=max).contains(&v) => Ok(v),
        Some(v) => Err(Error::invalid_field(
            field,
            format!("{field} must be between 1 and {max}, got {v}"),
        )),
    }
}

/// A cursor: a positive sequence number.
pub fn cursor(value: Option<i64>) -> Result<Option<i64>> {
    match value {
        Some(v) if v < 1 => Err(Error::invalid_field(
            "cursor",
            format!("cursor must be a sequence number from a previous page's next_cursor, got {v}"),
        )),
        v => Ok(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_default_and_clamp() {
        assert_eq!(bounds(None, None, 20, 100).unwrap(), (20, 0));
        assert_eq!(bounds(Some(1000), Some(5), 20, 100).unwrap(), (100, 5));
        assert_eq!(bounds(Some(0), None, 20, 100).unwrap(), (20, 0));
        for (limit, offset, field) in [(Some(-1), None, "limit"), (None, Some(-1), "offset")] {
            let e = bounds(limit, offset, 20, 100).unwrap_err();
            assert_eq!(e.code(), moss_client::ErrorCode::InvalidRequest);
            assert_eq!(e.0.details["field"], field);
            assert!(e.0.message.starts_with(field), "{}", e.0.message);
        }
    }

    #[test]
    fn a_page_has_more_until_it_reaches_the_total() {
        assert!(pagination(20, 0, 20, 21).has_more);
        assert!(!pagination(20, 1, 20, 21).has_more);
        assert!(!pagination(20, 40, 0, 21).has_more);
    }
}
