//! The Moss daemon as a library: `mossd` is a thin `main` over [`server::start`], and tests
//! start the same daemon in-process.
//!
//! - [`server`]: start/stop a daemon (home, config, lock, token, store, listener).
//! - [`store`]: SQLite: migrations, the writer thread with group commit, the read pool.
//! - [`capsule`]: the capsule memory's operations.
//! - [`api`]: REST routes; [`mcp`]: the MCP endpoint; [`guard`]: Host/Origin/body/token checks.
//! - [`config`], [`home`], [`error`]: configuration, `$MOSS_HOME`, the error type.
//! - [`cancel`]: stopping long operations when their client goes away; [`progress`]: how far
//!   they have got.
//! - [`shutdown`]: the one trigger behind SIGTERM, SIGINT and `POST /shutdown`.

pub mod api;
pub mod cancel;
pub mod capsule;
pub mod config;
pub mod error;
pub mod guard;
pub mod home;
pub mod mcp;
pub mod memory;
pub mod progress;
pub mod server;
pub mod shutdown;
pub mod store;

pub use home::MossHome;
pub use server::{DaemonOptions, RunningDaemon, start};
