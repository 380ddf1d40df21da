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
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::internal("accessing the database", e)
    }
}

impl From<r2d2::Error> for Error {
    fn from(e: r2d2::Error) -> Self {
        Error::internal("waiting for a read connection", e)
    }
}
