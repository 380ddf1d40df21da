//! The daemon's error type: an [`ErrorBody`] on its way to the wire.
//!
//! Domain code builds errors with the constructors here; storage errors convert with `?` and
//! become `INTERNAL`, logged with their cause while the client gets a generic message.

use moss_client::{ErrorBody, ErrorCode};
use serde_json::Value;

/// An error that reaches the client as the envelope of its code.
#[derive(Debug, Clone, thiserror::Error)]
#[error("[{}] {}", .0.code, .0.message)]
pub struct Error(pub ErrorBody);

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error(ErrorBody::new(code, message))
    }

    pub fn with_details(self, details: Value) -> Self {
        Error(self.0.with_details(details))
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::InvalidRequest, message)
    }

    /// `INVALID_REQUEST` about one field, named in `details.field` for programs to act on.
    pub fn invalid_field(field: &str, message: impl Into<String>) -> Self {
        Error::invalid(message).with_details(serde_json::json!({ "field": field }))
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Error::new(ErrorCode::NotFound, message)
    }

    /// An unexpected failure: logged here with its cause, answered with a generic message.
    pub fn internal(context: &str, cause: impl std::fmt::Display) -> Self {
        tracing::error!("{context}: {cause}");
        Error::new(
            ErrorCode::Internal,
            format!("internal error while {context}; the daemon log has the details"),
        )
    }

    pub fn code(&self) -> ErrorCode {
        self.0.code
    }

    /// `STORAGE_FULL`: the disk is full. Logged (a log on the same disk drops the line, see
    /// [`crate::log`]); the client is told what still works.
    pub fn storage_full(what: &str, cause: impl std::fmt::Display) -> Self {
        tracing::warn!("{what}: the disk is full: {cause}");
        Error::new(
            ErrorCode::StorageFull,
            format!(
                "the disk is full: {what} failed and was not done. Writes are refused until space \
                 is freed on the disk holding it; reads go on, and writes resume without a restart"
            ),
        )
    }

    /// An I/O failure on `path`: `STORAGE_FULL` when the disk is full, otherwise internal.
    pub fn io(what: &str, path: &std::path::Path, e: std::io::Error) -> Self {
        let what = format!("{what} {}", path.display());
        match e.raw_os_error() {
            Some(libc::ENOSPC) | Some(libc::EDQUOT) => Error::storage_full(&what, e),
            Some(libc::ENAMETOOLONG) => Error::invalid_field(
                "path",
                format!("{what} failed: the path or a name in it is too long; use a shorter one"),
            ),
            _ => Error::internal(&what, e),
        }
    }
}

/// Whether SQLite failed because the disk (or quota) is full.
pub fn is_disk_full(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DiskFull)
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        if is_disk_full(&e) {
            return Error::storage_full("writing to the database", e);
        }
        Error::internal("accessing the database", e)
    }
}

impl From<r2d2::Error> for Error {
    fn from(e: r2d2::Error) -> Self {
        Error::internal("waiting for a read connection", e)
    }
}

/// An error that carries one suggested next call in `details.suggested_call`, next to the
/// details it already has.
pub fn suggest(err: Error, tool: &str, arguments: serde_json::Value) -> Error {
    let mut details = match err.0.details.clone() {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    details.insert(
        "suggested_call".into(),
        serde_json::json!({ "tool": tool, "arguments": arguments }),
    );
    err.with_details(serde_json::Value::Object(details))
}
