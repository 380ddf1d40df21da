//! The application state every REST handler and MCP tool reaches: the store, one handle per
//! memory, the configuration, the daemon's own facts and the progress registry.

use std::sync::Arc;

use crate::api::DaemonInfo;
use crate::capsule::Capsules;
use crate::config::Config;
use crate::family::Toolsets;
use crate::memory::Memories;
use crate::progress::ProgressRegistry;
use crate::reasoning::Reasoning;
use crate::store::{Source, Store};
use crate::tasks::Tasks;

/// The full-text sources the families declare, handed to the store at open: each family lists
/// its own (`<family>/search_source.rs`); the store knows no other.
pub static SEARCH_SOURCES: &[&Source] = &[
    &crate::capsule::SEARCH_SOURCE,
    &crate::reasoning::search_source::SEARCH_SOURCE,
    &crate::memory::search_source::SEARCH_SOURCE,
    &crate::tasks::search_source::SEARCH_SOURCE,
];

/// The tables embedded for semantic search, as the families declare them (next to their
/// full-text sources, whose queues they share).
pub static EMBED_SOURCES: &[&crate::store::semantic::EmbedSource] = &[
    &crate::capsule::search_source::EMBED_SOURCE,
    &crate::reasoning::search_source::EMBED_SOURCE,
    &crate::memory::search_source::EMBED_SOURCE,
    &crate::tasks::search_source::EMBED_SOURCE,
];

/// What every handler and tool can reach.
#[derive(Debug)]
pub struct App {
    /// The database every memory shares (its sequence, the full-text index's lag).
    pub store: Store,
    /// The capsule memory.
    pub capsules: Capsules,
    /// The reasoning memory.
    pub reasoning: Reasoning,
    /// Plans and tasks.
    pub tasks: Tasks,
    /// The associative memory.
    pub memories: Memories,
    pub config: Arc<Config>,
    /// The tools `/mcp` serves (the config's `toolsets`); a connection may narrow them.
    pub toolsets: Toolsets,
    pub daemon: DaemonInfo,
    /// Progress of running requests that sent `X-Moss-Progress`.
    pub progress: ProgressRegistry,
    /// The web UI's login codes and sessions.
    pub ui: crate::ui::session::Sessions,
}

/// Shared handle on [`App`]; cloned per request, so it is one reference count.
#[derive(Clone, Debug)]
pub struct AppState(pub Arc<App>);

impl std::ops::Deref for AppState {
    type Target = App;

    fn deref(&self) -> &App {
        &self.0
    }
}
