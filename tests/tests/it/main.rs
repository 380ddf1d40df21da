//! The end-to-end suites, linked as one test binary (the daemon is linked once, not once per
//! suite), one module per area, as in ripgrep's `tests/tests.rs`.
//!
//! A family's suites sit in its folder (`capsules/`, `reasoning/`, `tasks/`, `memory/`); the
//! suites that cross families (MCP, tools and toolsets, security, limits, concurrency, backup,
//! the daemon's own routes, the generated docs, search across families) sit at the top.
//!
//! Run one area with a filter on its module path:
//! `cargo test -p moss-tests --test it capsules::search::`, `… --test it memory::`.

mod across;
mod backup;
mod capsules;
mod concurrency;
mod cross_family_figures;
mod daemon_routes;
mod fixture;
mod limits;
mod mcp;
mod memory;
mod migrate;
mod proto_docs;
mod reasoning;
mod relevance_figures;
mod security;
mod semantic;
mod smoke;
mod tasks;
mod tools;
mod ui;
mod util;
mod words;
