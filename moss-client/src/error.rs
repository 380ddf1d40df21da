//! The error contract: codes, their HTTP statuses, and the envelope every failure travels in.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every error code Moss answers with. The string form is the wire form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub enum ErrorCode {
    /// Both `id` and `workspace`+`name` were given.
    AmbiguousAddressing,
    /// A field is missing, mistyped, unknown or out of range.
    InvalidRequest,
    /// A line of an import file is not a valid capsule record.
    InvalidRecord,
    /// No bearer token, or the wrong one.
    Unauthorized,
    /// A foreign `Host` or `Origin`.
    Forbidden,
    /// The capsule (or route) does not exist, or is soft-deleted.
    NotFound,
    /// An active capsule already holds that name in that workspace.
    NameAlreadyExists,
    /// A precondition such as `if_updated_at` did not hold.
    Conflict,
    /// `capsule_text` is longer than `capsule_max_chars`.
    CapsuleTooLarge,
    /// An import file is larger than the import cap.
    FileTooLarge,
    /// A composed bundle is longer than `capsule_max_chars`.
    ComposeTooLarge,
    /// The request body is larger than the daemon accepts.
    RequestTooLarge,
    /// Required capsule sections are missing.
    CapsuleTooThin,
    /// A graph merge into a branch that is not the source branch's base.
    MergeIntoNonBase,
    /// A step closed before both its checkpoints are confirmed.
    CheckpointsUnconfirmed,
    /// The client went away during a long operation.
    Cancelled,
    /// The daemon is shutting down or overloaded.
    Unavailable,
    /// The disk holding the database is full: writes are refused until space is freed; reads
    /// go on.
    StorageFull,
    /// Anything unexpected; the daemon log has the cause.
    Internal,
}

impl ErrorCode {
    /// All codes, in the order of the error table.
    pub const ALL: [ErrorCode; 19] = [
        ErrorCode::AmbiguousAddressing,
        ErrorCode::InvalidRequest,
        ErrorCode::InvalidRecord,
        ErrorCode::Unauthorized,
        ErrorCode::Forbidden,
        ErrorCode::NotFound,
        ErrorCode::NameAlreadyExists,
        ErrorCode::Conflict,
        ErrorCode::CapsuleTooLarge,
        ErrorCode::FileTooLarge,
        ErrorCode::ComposeTooLarge,
        ErrorCode::RequestTooLarge,
        ErrorCode::CapsuleTooThin,
        ErrorCode::MergeIntoNonBase,
        ErrorCode::CheckpointsUnconfirmed,
        ErrorCode::Cancelled,
        ErrorCode::Unavailable,
        ErrorCode::StorageFull,
        ErrorCode::Internal,
    ];

    /// The HTTP status this code is answered with.
    pub fn status(self) -> u16 {
        match self {
            ErrorCode::AmbiguousAddressing
            | ErrorCode::InvalidRequest
            | ErrorCode::InvalidRecord => 400,
            ErrorCode::Unauthorized => 401,
            ErrorCode::Forbidden => 403,
            ErrorCode::NotFound => 404,
            ErrorCode::NameAlreadyExists
            | ErrorCode::Conflict
            | ErrorCode::MergeIntoNonBase
            | ErrorCode::CheckpointsUnconfirmed => 409,
            ErrorCode::CapsuleTooLarge
            | ErrorCode::FileTooLarge
            | ErrorCode::ComposeTooLarge
            | ErrorCode::RequestTooLarge => 413,
            ErrorCode::CapsuleTooThin => 422,
            ErrorCode::Cancelled => 499,
            ErrorCode::Internal => 500,
            ErrorCode::Unavailable => 503,
            ErrorCode::StorageFull => 507,
        }
    }

    /// The wire form, e.g. `NOT_FOUND`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::AmbiguousAddressing => "AMBIGUOUS_ADDRESSING",
            ErrorCode::InvalidRequest => "INVALID_REQUEST",
            ErrorCode::Unauthorized => "UNAUTHORIZED",
            ErrorCode::Forbidden => "FORBIDDEN",
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::NameAlreadyExists => "NAME_ALREADY_EXISTS",
            ErrorCode::Conflict => "CONFLICT",
            ErrorCode::CapsuleTooLarge => "CAPSULE_TOO_LARGE",
            ErrorCode::FileTooLarge => "FILE_TOO_LARGE",
            ErrorCode::InvalidRecord => "INVALID_RECORD",
            ErrorCode::ComposeTooLarge => "COMPOSE_TOO_LARGE",
            ErrorCode::RequestTooLarge => "REQUEST_TOO_LARGE",
            ErrorCode::CapsuleTooThin => "CAPSULE_TOO_THIN",
            ErrorCode::MergeIntoNonBase => "MERGE_INTO_NON_BASE",
            ErrorCode::CheckpointsUnconfirmed => "CHECKPOINTS_UNCONFIRMED",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::Unavailable => "UNAVAILABLE",
            ErrorCode::StorageFull => "STORAGE_FULL",
            ErrorCode::Internal => "INTERNAL",
        }
    }

    /// When the code is answered, for documentation.
    pub fn meaning(self) -> &'static str {
        match self {
            ErrorCode::AmbiguousAddressing => "Both `id` and `workspace`+`name` were provided",
            ErrorCode::InvalidRequest => {
                "A field is missing, mistyped, unknown or out of range (details.field names it); \
                 also a capsule_compose whose items expand to more than 50 capsules \
                 (details.expanded_count: 400 here, not 422) and a capsule_purge by run_id \
                 without confirm (details.would_purge)"
            }
            ErrorCode::Unauthorized => "Missing or wrong bearer token",
            ErrorCode::Forbidden => "`Host` or `Origin` is not a loopback name",
            ErrorCode::NotFound => {
                "Capsule doesn't exist (or is soft-deleted); or an unknown branch, target, step \
                 or conflict (details.suggested_call names the call that helps)"
            }
            ErrorCode::NameAlreadyExists => {
                "Name collision on capsule_store or capsule_import with mode:\"error\""
            }
            ErrorCode::Conflict => {
                "`if_revision` or `if_updated_at` does not match the capsule's (capsule_update, \
                 capsule_append; details carry the current `revision` and `updated_at`), \
                 capsule_append's `if_placeholder` finds content, an import record collides \
                 with an existing capsule's id, `expected_revision` is not the current \
                 revision, or a card id is reused for a different card"
            }
            ErrorCode::CapsuleTooLarge => "Exceeds `capsule_max_chars`",
            ErrorCode::FileTooLarge => "Import file exceeds max size limit",
            ErrorCode::InvalidRecord => {
                "A line of an import file is not valid JSON, or a field has the wrong type or \
                 is out of range (the message names the line and the field)"
            }
            ErrorCode::ComposeTooLarge => "Composed bundle exceeds `capsule_max_chars`",
            ErrorCode::RequestTooLarge => "Request body exceeds the daemon's body cap",
            ErrorCode::CapsuleTooThin => "Missing required sections",
            ErrorCode::MergeIntoNonBase => {
                "branchmind_graph_merge into a branch that is not `from`'s base branch"
            }
            ErrorCode::CheckpointsUnconfirmed => {
                "tasks_done on a step whose criteria or tests checkpoint is not confirmed \
                 (details.suggested_call is the tasks_verify call)"
            }
            ErrorCode::Cancelled => "Client went away during a long-running operation",
            ErrorCode::Unavailable => {
                "The daemon is shutting down, or holds as many connections as it serves \
                 (Retry-After says when to try again)"
            }
            ErrorCode::StorageFull => {
                "The disk holding the database (or an export's directory) is full: writes are \
                 refused until space is freed, reads go on, and writes resume without a restart"
            }
            ErrorCode::Internal => "Unexpected error",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The body of an error: `{"code","message","status","details"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ErrorBody {
    pub code: ErrorCode,
    pub message: String,
    pub status: u16,
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub details: Value,
}

impl ErrorBody {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorBody {
            code,
            message: message.into(),
            status: code.status(),
            details: Value::Null,
        }
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = details;
        self
    }
}

impl std::fmt::Display for ErrorBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {}", self.code, self.message)
    }
}

impl std::error::Error for ErrorBody {}

/// `{"error": {...}}`, what every failed REST call answers and every failed MCP tool returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ErrorEnvelope {
    pub error: ErrorBody,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_through_their_wire_form() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_string(&code).unwrap();
            assert_eq!(json, format!("\"{}\"", code.as_str()));
            let back: ErrorCode = serde_json::from_str(&json).unwrap();
            assert_eq!(back, code);
        }
    }

    #[test]
    fn each_code_has_its_http_status() {
        assert_eq!(ErrorCode::AmbiguousAddressing.status(), 400);
        assert_eq!(ErrorCode::NotFound.status(), 404);
        assert_eq!(ErrorCode::NameAlreadyExists.status(), 409);
        assert_eq!(ErrorCode::CapsuleTooLarge.status(), 413);
        assert_eq!(ErrorCode::FileTooLarge.status(), 413);
        assert_eq!(ErrorCode::InvalidRecord.status(), 400);
        assert_eq!(ErrorCode::CapsuleTooThin.status(), 422);
        assert_eq!(ErrorCode::Cancelled.status(), 499);
        assert_eq!(ErrorCode::Internal.status(), 500);
        assert_eq!(ErrorCode::StorageFull.status(), 507);
    }

    #[test]
    fn envelope_nests_code_status_and_details_under_error() {
        let env = ErrorEnvelope {
            error: ErrorBody::new(
                ErrorCode::CapsuleTooThin,
                "Capsule missing required sections",
            )
            .with_details(serde_json::json!({"missing": ["Decisions"]})),
        };
        let v = serde_json::to_value(&env).unwrap();
        assert_eq!(v["error"]["code"], "CAPSULE_TOO_THIN");
        assert_eq!(v["error"]["status"], 422);
        assert_eq!(v["error"]["details"]["missing"][0], "Decisions");
    }
}
