//! Times as the wire shows them.

/// A Unix time in milliseconds as RFC 3339, UTC, to the millisecond.
pub fn rfc3339_ms(ms: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
}
