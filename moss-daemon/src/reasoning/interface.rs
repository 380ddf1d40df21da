//! What the reasoning family offers other families, and the only path by which they reach it.
//!
//! Plans and tasks (`crate::tasks`) keep their trace and graph in reasoning documents: each
//! mutation writes its event into the item's trace document and projects the item into its
//! graph document, inside the same writer job. They stay two families (two toolsets, two
//! folders) that talk through one interface each, this module and `tasks::interface`, rather
//! than one folder: the tasks toolset can be served, disabled and read on its own, and each
//! side's private helpers can change without the other noticing. The moss-daemon test
//! `imports.rs` checks that no family reaches into another outside these modules.

/// Workspaces, targets (`TASK-001`) and branches.
pub mod refs {
    pub use crate::reasoning::refs::{ALL, ensure_branch, reasoning_ref, target_id, workspace};
}

/// Entries of documents (an item's trace), and the pages of reads over them.
pub mod docs {
    pub use crate::reasoning::docs::{NewEntry, insert_entry, keep_page, page_of};
}

/// Nodes and edges of a graph document (an item's projection).
pub mod graph {
    pub use crate::reasoning::graph::{edge, node, upsert_edge_if_changed, upsert_node_if_changed};
}
