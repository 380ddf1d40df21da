//! Plans and tasks: numbered items with a tree of checkpoint-gated steps.
//!
//! Every mutation runs as one writer job that checks `expected_revision`, changes the item,
//! increments its revision, records the event, writes the event into the item's trace document
//! (idempotently, by `event_id`) and projects the item into its graph document (a `task:` node,
//! `step:` nodes with their status, `contains` edges). A failure anywhere writes nothing.
//!
//! [`Tasks`] holds one method per operation; [`family`] registers the tools and routes.
//!
//! - [`items`]: event ids, loading an item and its step tree, addressing a step, the
//!   revision check and the focus;
//! - [`mutations`]: the input rules of a change, the writer job every mutation runs (event,
//!   trace entry, graph projection) and the operations that change an item;
//! - [`views`]: the reads (context, delta, radar), the focus operations, and how the reads
//!   fit a budget.

pub mod family;
pub mod interface;
pub mod items;
pub mod migrations;
pub mod mutations;
pub mod search_source;
pub mod views;

pub use items::{event_id, load_item};
pub use mutations::ingest;

use std::sync::Arc;

use crate::config::Config;
use crate::store::Store;

/// Most steps one call creates.
pub const MAX_NEW_STEPS: usize = 200;
/// Most steps under one item.
pub const MAX_STEPS: i64 = 2000;
/// Longest description, contract or note.
pub const MAX_TEXT_CHARS: usize = 16_384;
/// Most criteria, tests or blockers on a step, and the longest of each.
const MAX_LIST: usize = 50;
const MAX_LIST_ITEM_CHARS: usize = 1000;

/// The plans and tasks operations over one store.
#[derive(Debug, Clone)]
pub struct Tasks {
    store: Store,
    config: Arc<Config>,
}

impl Tasks {
    pub fn new(store: Store, config: Arc<Config>) -> Tasks {
        Tasks { store, config }
    }
}
