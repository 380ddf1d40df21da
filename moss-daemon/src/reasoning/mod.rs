//! The reasoning memory: append-only documents, no-copy branches, a versioned graph with
//! 3-way merges, and think cards.
//!
//! - [`refs`]: workspaces, branch and document names, targets (`TASK-001` → its
//!   `reasoning_ref`), branches and their base chains (the *sources* of a branch's view).
//! - [`branches`]: init, status, creating and listing branches, checkout.
//! - [`docs`]: entries: commit, show, log, diff, merge, export; [`search`]: full-text search.
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

pub mod branches;
pub mod docs;
pub mod family;
pub mod graph;
pub mod interface;
pub mod migrations;
pub mod refs;
pub mod search;
pub mod search_source;
pub mod think;

use std::sync::Arc;

use crate::config::Config;
use crate::store::Store;

// Shared helpers, under the names this family's files reach them by (`super::limit`, …).
use crate::error::suggest;
use crate::json_field::{object_json, parse_json};
use crate::page::{cursor, limit};
use crate::store::now_ms;

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
}

/// Longest entry content or node text, in characters.
pub const MAX_CONTENT_CHARS: usize = 65_536;
