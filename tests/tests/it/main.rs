//! The end-to-end suites, linked as one test binary (the daemon is linked once, not once per
//! suite), one module per area, as in ripgrep's `tests/tests.rs`.
//!
//! Run one area with a filter on its module path:
//! `cargo test -p moss-tests --test it search::`, `… --test it capsules::fetch::`.

mod append;
mod backup;
mod bulk;
mod capsules;
mod compose;
mod concurrency;
mod daemon_routes;
mod history;
mod limits;
mod mcp;
mod memory;
mod memory_sources;
mod proto_docs;
mod ranking;
mod reasoning;
mod search;
mod security;
mod smoke;
mod swarm;
mod tasks;
mod tools;
mod transfer;
mod transfer_figures;
mod util;
