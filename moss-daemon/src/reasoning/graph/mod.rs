//! The versioned graph: nodes keyed by `id`, edges by `(from, rel, to)`. Every change is a new
//! version (a deletion a tombstone) numbered from the store's sequence; a branch's effective
//! graph is the latest version of each key within its sources.
//!
//! - this file: the keys and tags a graph accepts;
//! - [`versions`]: reading and writing versions (the effective state of a key in a view,
//!   writes that skip an unchanged state) and `branchmind_graph_apply`;
//! - [`query`]: reads of a view: `branchmind_graph_query`, `_validate` and `_diff`, and the
//!   card counts of think_context;
//! - [`merge`]: the 3-way merge into a base branch and its conflicts (list, show, resolve).

pub mod merge;
pub mod query;
pub mod versions;

pub use query::{card_filters, count_by_type, cut_node, query_nodes};
pub use versions::{
    all_edges, all_nodes, edge, edge_at, node, node_at, same_edge, same_node,
    upsert_edge_if_changed, upsert_node_if_changed, write_edge, write_node,
};

use crate::error::{Error, Result};

/// Longest node id, type or relation.
pub const MAX_KEY_CHARS: usize = 256;
/// Most operations in one `graph_apply`.
pub const MAX_OPS: usize = 1000;
/// Node id prefixes only the task projection writes.
pub const RESERVED_PREFIXES: [&str; 2] = ["task:", "step:"];

/// A node id: non-empty, at most 256 characters, no control characters, no `|`.
pub fn key(field: &str, value: &str) -> Result<String> {
    let v = value.trim();
    if v.is_empty() {
        return Err(Error::invalid_field(
            field,
            format!("{field} must not be empty"),
        ));
    }
    if v.chars().count() > MAX_KEY_CHARS {
        return Err(Error::invalid_field(
            field,
            format!("{field} is longer than {MAX_KEY_CHARS} characters"),
        ));
    }
    if v.chars().any(|c| c.is_control() || c == '|') {
        return Err(Error::invalid_field(
            field,
            format!("{field} {v:?} holds a control character or `|` (reserved)"),
        ));
    }
    Ok(v.to_string())
}

/// A node id an agent may write: a [`key`] outside the reserved `task:` / `step:` prefixes.
pub fn user_key(field: &str, value: &str) -> Result<String> {
    let v = key(field, value)?;
    if RESERVED_PREFIXES.iter().any(|p| v.starts_with(p)) {
        return Err(Error::invalid_field(
            field,
            format!(
                "{field} {v:?} uses a reserved prefix (task:, step:): the task projection owns those nodes"
            ),
        ));
    }
    Ok(v)
}

/// Tags: trimmed, lowercased, deduplicated, sorted.
pub fn tags(field: &str, value: Option<&[String]>) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for (i, t) in value.unwrap_or_default().iter().enumerate() {
        let t = t.trim().to_lowercase();
        if t.is_empty() {
            continue;
        }
        key(&format!("{field}[{i}]"), &t)?;
        out.push(t);
    }
    out.sort();
    out.dedup();
    if out.len() > crate::tags::MAX_TAGS {
        return Err(Error::invalid_field(
            field,
            format!(
                "{field} has {} tags; at most {} are allowed",
                out.len(),
                crate::tags::MAX_TAGS
            ),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_tags_and_reserved_prefixes() {
        assert!(key("id", "h1").is_ok());
        assert!(key("id", "a|b").is_err());
        assert!(key("id", "").is_err());
        assert!(user_key("id", "task:TASK-001").is_err());
        assert!(key("id", "task:TASK-001").is_ok());
        assert_eq!(
            tags(
                "tags",
                Some(&["B".into(), " a ".into(), "b".into(), "".into()])
            )
            .unwrap(),
            vec!["a", "b"]
        );
    }
}
