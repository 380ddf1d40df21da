//! The reasoning memory: append-only documents, no-copy branches, a versioned graph with
//! 3-way merges, and think cards.
//!
//! - [`refs`]: workspaces, branch and document names, targets (`TASK-001` → its
//!   `reasoning_ref`), branches and their base chains (the *sources* of a branch's view).
//! - [`docs`]: entries: commit, show, log, diff, merge, export, search.
//! - [`graph`]: versioned nodes and edges: apply, query, validate, diff, merge, conflicts.
//! - [`think`]: card types, templates, cards, context and the next card to write.
//!
//! **Views.** A branch created from another records `base_branch` and `base_seq`. Its view of a
//! document is the base's view up to `base_seq` plus its own entries, recursively (at most
//! [`refs::MAX_BASE_DEPTH`] bases, cycles refused). Nothing is copied: a view is a list of
//! `(branch, cutoff)` sources, and every read is one range query per source.
//!
//! [`Reasoning`] holds one method per operation; REST handlers, MCP tools and CLI subcommands all
//! end here. [`family`] registers the tools and routes.

pub mod docs;
pub mod family;
pub mod graph;
pub mod refs;
pub mod search;
pub mod search_source;
pub mod think;

use std::sync::Arc;

use serde_json::{Value, json};

use crate::budget::Caps;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::store::Store;

/// The reasoning operations over one store.
#[derive(Debug, Clone)]
pub struct Reasoning {
    store: Store,
    config: Arc<Config>,
    /// The directory holding the database (`branchmind_init`'s `storage_dir`).
    storage_dir: String,
}

impl Reasoning {
    pub fn new(store: Store, config: Arc<Config>, storage_dir: String) -> Reasoning {
        Reasoning {
            store,
            config,
            storage_dir,
        }
    }

    /// The caps of a read.
    fn caps(
        &self,
        max_chars: Option<i64>,
        max_bytes: Option<i64>,
        max_lines: Option<i64>,
    ) -> Result<Caps> {
        Caps::new(
            self.config.output_max_chars,
            max_chars,
            max_bytes,
            max_lines,
        )
    }
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// An error that carries one suggested next call in `details.suggested_call`, next to the
/// details it already has.
pub fn suggest(err: Error, tool: &str, arguments: Value) -> Error {
    let mut details = match err.0.details.clone() {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    details.insert(
        "suggested_call".into(),
        json!({ "tool": tool, "arguments": arguments }),
    );
    err.with_details(Value::Object(details))
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
/// Longest entry content or node text, in characters.
pub const MAX_CONTENT_CHARS: usize = 65_536;

/// Parses stored JSON (written by this module, so valid).
pub fn parse_json(s: Option<String>) -> Option<Value> {
    s.and_then(|s| serde_json::from_str(&s).ok())
}
