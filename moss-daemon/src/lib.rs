//! The Moss daemon as a library: `mossd` is a thin `main` over [`server::start`], and tests
//! start the same daemon in-process.
//!
//! - [`server`]: start/stop a daemon (home, config, lock, token, store, listener).
//! - [`store`]: SQLite: migrations, the writer thread with group commit, the read pool.
//! - [`family`]: the registry of families (a memory's MCP tools and REST routes, registered
//!   once); [`app`]: the state handlers reach, one handle per memory.
//! - [`capsule`], [`reasoning`], [`tasks`], [`memory`] (the associative memory): each memory's
//!   operations, and its family;
//!   [`budget`]: the hard output caps of reasoning and tasks reads; [`read`]: the frame of
//!   those reads (workspace, caps, page, read pool, fit).
//! - What every memory shares, so that none writes it again: [`names`] (workspace and name
//!   normalization), [`bounds`] (length bounds of text fields), [`tags`] (cleaning, storing
//!   and filtering tags), [`page`] (pagination arguments), [`sql_filter`] (`WHERE` clauses
//!   built term by term), [`paths`] (where export and import may touch the file system),
//!   [`search_text`] (full-text query checks and snippets), [`json_field`] (JSON objects stored
//!   as text), [`tokens`] (token counts). A family reaches another only through that family's
//!   `interface` module (`reasoning::interface`, `tasks::interface`).
//! - [`api`]: REST routes; [`mcp`]: the MCP endpoint; [`guard`]: Host/Origin/body/token checks;
//!   [`connections`]: the server loop (connection cap, header-read timeout).
//! - [`config`], [`home`], [`error`]: configuration, `$MOSS_HOME`, the error type; [`log`]:
//!   the log sink, which drops and counts what it cannot write.
//! - [`alloc`]: glibc's arenas, and giving freed memory back when idle.
//! - [`cancel`]: stopping long operations when their client goes away; [`progress`]: how far
//!   they have got.
//! - [`shutdown`]: the one trigger behind SIGTERM, SIGINT and `POST /shutdown`.

pub mod alloc;
pub mod api;
pub mod app;
pub mod bounds;
pub mod budget;
pub mod cancel;
pub mod capsule;
pub mod config;
pub mod connections;
pub mod decode;
pub mod error;
pub mod family;
pub mod guard;
pub mod home;
pub mod json_field;
pub mod log;
pub mod mcp;
pub mod memory;
pub mod moss;
pub mod names;
pub mod page;
pub mod paths;
pub mod progress;
pub mod read;
pub mod reasoning;
pub mod schema;
pub mod search_text;
pub mod server;
pub mod shutdown;
pub mod sql_filter;
pub mod store;
pub mod tags;
pub mod tasks;
pub mod time;
pub mod tokens;
pub mod ui;

pub use home::MossHome;
pub use server::{DaemonOptions, RunningDaemon, restore_home, start};
