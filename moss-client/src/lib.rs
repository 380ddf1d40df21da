//! Moss wire types and client.
//!
//! - [`error`]: the error codes, their HTTP statuses, and the `{"error":{...}}` envelope.
//! - [`capsule`]: requests and responses of the core `capsule_*` operations.
//! - [`search`], [`compose`] (compose and append), [`bulk`] (bulk delete/update, purge, tool
//!   listing), [`transfer`] (export, import, progress reports): the other capsule operations.
//! - [`daemon`]: the daemon's status and shutdown.
//! - `client` (feature `http`, on by default): a typed async client over the REST routes.
//!
//! The daemon depends on this crate for its wire types, so what it sends is exactly what the
//! client decodes.

pub mod bulk;
pub mod capsule;
pub mod compose;
pub mod daemon;
pub mod error;
pub mod search;
pub mod transfer;

#[cfg(feature = "http")]
mod client;

pub use bulk::*;
pub use capsule::*;
pub use compose::*;
pub use daemon::*;
pub use error::{ErrorBody, ErrorCode, ErrorEnvelope};
pub use search::*;
pub use transfer::*;

#[cfg(feature = "http")]
pub use client::{Client, ClientError};

/// The default address of the daemon.
pub const DEFAULT_ADDR: &str = "127.0.0.1:6677";

/// The crate version, which the daemon and the CLI share.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
