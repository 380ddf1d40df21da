//! Moss wire types and client.
//!
//! - [`error`]: the error codes, their HTTP statuses, and the `{"error":{...}}` envelope.
//! - [`capsule`], [`reasoning`], [`tasks`], [`memory`]: requests and responses of the
//!   `capsule_*`, `branchmind_*`, `tasks_*` and `memory_*` operations (one module per family).
//! - [`moss`]: the cross-family operations (`moss_*`): workspaces, one search, the resume call.
//! - [`search`]: what every search shares: its mode (keyword, semantic, hybrid) and how a
//!   hit's rank is explained.
//! - [`op`]: how a family declares its operations once (tool, route, types, description).
//! - `fields`: `wire_struct!`, which writes the field groups requests share (caps, paging, run)
//!   once.
//! - [`daemon`]: the daemon's own routes: health, status, shutdown, the tool list, progress.
//! - `client` (feature `http`, on by default): a typed async client over the REST routes, with a
//!   handle per family (`client.capsules()`).
//!
//! The daemon depends on this crate for its wire types, so what it sends is exactly what the
//! client decodes.

// Field doc comments are also the descriptions agents read in the tools' input schemas, and
// they write placeholders as plain text (`rename (<name>-1)`, `<workspace>-<time>.jsonl`):
// rustdoc would take those for unclosed HTML tags.
#![allow(rustdoc::invalid_html_tags)]

pub mod capsule;
pub mod daemon;
pub mod error;
mod fields;
pub mod memory;
pub mod moss;
pub mod op;
pub mod reasoning;
pub mod search;
pub mod tasks;

#[cfg(feature = "http")]
mod client;

pub use error::{ErrorBody, ErrorCode, ErrorEnvelope};

#[cfg(feature = "http")]
pub use client::{Client, ClientError};

/// The default address of the daemon.
pub const DEFAULT_ADDR: &str = "127.0.0.1:6677";

/// The crate version, which the daemon and the CLI share.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
