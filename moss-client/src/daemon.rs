//! The daemon's own routes: `GET /health`, `GET /status`, `POST /shutdown`, `GET /tools`, and
//! the progress reports long operations publish (`GET /progress/{id}`).

use serde::{Deserialize, Serialize};

/// `GET /status`: where the daemon listens, what it runs, and for how long.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct DaemonStatus {
    /// The address it listens on, `host:port`.
    pub address: String,
    /// The daemon's version (the crate version it was built from).
    pub version: String,
    /// Its process id.
    pub pid: u32,
    /// The `$MOSS_HOME` it serves.
    pub home: String,
    /// Its store: the SQLite database it owns, or the URL of its PostgreSQL database (without
    /// a password).
    pub db_path: String,
    /// When it started, unix seconds.
    pub started_at: i64,
    /// Seconds since it started.
    pub uptime_seconds: u64,
    /// Text changes committed but not yet in the full-text index, summed over its sources
    /// (`index`). The indexer runs at the lowest CPU priority and works at most a quarter of the
    /// time while writes keep arriving, so after a burst of writes it catches up once they stop;
    /// a search waits for the changes committed before it (the indexer then works flat out), at
    /// most 5 s. Absent from daemons older than this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_behind: Option<i64>,
    /// The full-text index, source by source (`capsules`, …). Empty from daemons older than
    /// this field, and on a PostgreSQL store (its words are indexed in the writing
    /// transaction).
    #[serde(default)]
    pub index: Vec<IndexStatus>,
    /// MCP sessions open now. Absent from daemons older than this field (as are the fields
    /// below).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_sessions: Option<u64>,
    /// The most MCP sessions open at once (config `mcp.max_sessions`); an `initialize` beyond
    /// it ends the session idle the longest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_sessions_max: Option<u64>,
    /// MCP sessions ended to make room for new ones since the daemon started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_sessions_evicted: Option<u64>,
    /// HTTP connections open now, this one included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u64>,
    /// The most connections served at once (config `http.max_connections`, lowered to fit the
    /// process's file-descriptor limit); a connection beyond it closes the one idle the longest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections_max: Option<u64>,
    /// Idle connections closed to make room for new ones since the daemon started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections_closed_idle: Option<u64>,
    /// Log lines dropped because they could not be written (a full disk, a closed stderr)
    /// since the daemon started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_dropped: Option<u64>,
    /// Semantic search: whether it is on, its model, and how far its index has come. Absent
    /// from daemons older than this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub semantic: Option<SemanticStatus>,
}

/// Semantic search as the daemon runs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SemanticStatus {
    /// `off` (no `embeddings.model_dir`), `loading`, `ready` or `failed` (see `error`).
    pub state: String,
    /// Why it failed, with what to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The model directory configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_dir: Option<String>,
    /// The model's identity (a digest of its files), recorded with the vectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The vectors' length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<u64>,
    /// Changes committed but not yet embedded, plus rows a rebuild has still to embed, over
    /// every source. Embedding runs at the lowest CPU priority, off the write path.
    pub behind: i64,
    /// Passages embedded since the daemon started.
    pub embedded: u64,
    /// Bytes the vectors take in memory.
    pub memory_bytes: u64,
    /// Source by source.
    #[serde(default)]
    pub sources: Vec<SemanticSourceStatus>,
}

/// How far the embedding index of one source has come.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct SemanticSourceStatus {
    /// The source: `capsules`, `reasoning`, `memories`, `tasks`.
    pub source: String,
    /// Changes not yet embedded, plus rows a rebuild has still to embed.
    pub behind: i64,
    /// Whether the source is being rebuilt (first start, or another model).
    pub rebuilding: bool,
    /// Items with vectors.
    pub items: u64,
    /// Passages with vectors (a long text has several).
    pub passages: u64,
}

/// How far the full-text index of one source (a kind of searchable row) has come.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct IndexStatus {
    /// The source: `capsules`.
    pub source: String,
    /// The position of its newest committed text change (a counter of its changes).
    pub queued: i64,
    /// The position up to which the index holds its changes.
    pub applied: i64,
    /// Text changes committed but not yet in the index: `queued - applied`, never negative.
    pub behind: i64,
}

/// `POST /shutdown`: the daemon has begun a graceful shutdown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ShutdownResponse {
    /// Always `"shutting_down"`: it stops accepting, drains in-flight requests, commits and exits.
    pub status: String,
    /// The process that is stopping.
    pub pid: u32,
}

/// `GET /health`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct Health {
    pub status: String,
    pub version: String,
}

/// One MCP tool as `GET /tools` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ToolInfo {
    pub name: String,
    /// The family it belongs to: `capsule`, …
    pub family: String,
    /// The toolsets it is in (`/mcp?toolsets=`): its family, `core` when it is one of the
    /// core tools, and `all`.
    #[serde(default)]
    pub toolsets: Vec<String>,
    pub description: String,
    /// False when the config's `toolsets` leave it out, or `disabled_tools` or
    /// `disabled_types` turns it off.
    pub enabled: bool,
}

/// `GET /tools`: every tool the daemon knows, in listing order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ToolList {
    pub tools: Vec<ToolInfo>,
}

/// The request header naming a progress report: `GET /progress/{id}` then reads it while the
/// request runs. The id is chosen by the client: 1 to 64 characters of `[A-Za-z0-9_-]`.
pub const PROGRESS_HEADER: &str = "x-moss-progress";

/// `GET /progress/{id}`: how far the request carrying that `X-Moss-Progress` id has got.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct ProgressReport {
    /// Units done in the current phase.
    pub done: u64,
    /// Units in the current phase (0 while unknown).
    pub total: u64,
    /// What is being done: "starting" (waiting for a connection), "exporting" (capsules),
    /// "checking" (bytes of the import file), "importing" (records).
    pub phase: String,
}

/// `POST /backup`: a consistent snapshot of the whole store (every family) into one SQLite file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BackupRequest {
    /// File to write (must end in `.db`). Default: `~/.moss/exports/moss-backup-<timestamp>.db`.
    /// The rules of export paths apply: a bare file name goes to `~/.moss/exports/`; an absolute
    /// path must be directly inside it or a directory of the config's `allowed_paths`; no `..`,
    /// no symlinks. An existing file is replaced atomically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// `POST /migrate`: copy the whole store (every family, with its ids, sequence numbers and
/// versions) into another database, for a move between engines: PostgreSQL
/// (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`) or a new SQLite file (`sqlite:PATH`).
/// The target is migrated to this daemon's schema first and must hold no rows; the copy is one
/// transaction of the target, from one snapshot of the store, checked by counting every table
/// and comparing a sample of rows. The daemon goes on serving from its own store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema, utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct MigrateRequest {
    /// `postgres://…` or `sqlite:PATH`. A SQLite PATH follows the export path rules (a bare
    /// name goes to `~/.moss/exports/`, it must end in `.db`) and must not exist yet.
    pub to: String,
}

/// One table `POST /migrate` copied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct MigratedTable {
    pub table: String,
    /// Rows in the target after the copy (equal to the source's, or the copy fails).
    pub rows: i64,
}

/// What `POST /migrate` copied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct MigrateResponse {
    /// The target (a PostgreSQL URL without its password, or the SQLite file's absolute path).
    pub to: String,
    /// Every table copied, with its rows.
    pub tables: Vec<MigratedTable>,
    /// Rows copied in all.
    pub rows: i64,
    /// Rows read back from the target and compared with the store's.
    pub sampled: i64,
    /// The store's sequence as of the snapshot, carried over.
    pub sequence: i64,
    pub elapsed_ms: u64,
    /// How to use the copy: the `database` setting that points a daemon at it.
    pub next: String,
}

/// What `POST /ui/login-code` gives: a one-time sign-in address of the web UI.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct LoginCodeResponse {
    /// The address to open, relative to the daemon's: `/ui/login?code=…`. It works once.
    pub path: String,
    /// Seconds it stays valid.
    pub expires_in_seconds: u64,
}

/// What `POST /backup` wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(utoipa::ToSchema))]
pub struct BackupResponse {
    /// The file written (absolute, mode 0600).
    pub path: String,
    pub bytes: u64,
    /// The schema version (`PRAGMA user_version`) of the snapshot.
    pub schema_version: u32,
    /// The store's sequence as of the snapshot: every write up to it is in the file.
    pub sequence: i64,
    /// When the snapshot was taken, unix seconds.
    pub backed_up_at: i64,
    /// How to put it back: `moss restore-backup <path>`.
    pub restore: String,
}
