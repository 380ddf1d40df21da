//! Configuration: `$MOSS_HOME/config.json` merged with the nearest `.moss/config.json` above the
//! working directory.
//!
//! Merge rules: scalars from the repo file override the global ones when non-zero (non-empty);
//! booleans are OR-ed; arrays are concatenated and deduplicated. Unknown keys are warned about,
//! never fatal; a file that is not valid JSON, or a key of the wrong type, is an error that
//! names the file and the key.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::MossHome;
use crate::paths::PathRules;
pub use crate::store::{Durability, SearchTokenizer};

/// Whether REST and MCP require the bearer token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Auth {
    #[default]
    Token,
    None,
}

/// The effective configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub capsule_max_chars: usize,
    /// Earlier revisions kept per capsule (`capsule_versions`, default 10; 0 keeps none).
    pub capsule_versions: u32,
    /// The output budget of reasoning and tasks reads that give no `max_chars`.
    pub output_max_chars: usize,
    pub allowed_paths: Vec<PathBuf>,
    pub allow_unsafe_paths: bool,
    /// Read connections in the pool (`db_max_open_conns`, 0 = default).
    pub read_pool_size: u32,
    /// Idle read connections kept open (`db_max_idle_conns`, 0 = all of them).
    pub read_pool_idle: u32,
    pub disabled_tools: Vec<String>,
    /// Families whose tools are all disabled.
    pub disabled_types: Vec<String>,
    /// The families `/mcp` serves (`toolsets`; none named: all), as written. The config knows
    /// no family: the daemon checks these names, and `disabled_tools` and `disabled_types`,
    /// against the registry at start (`server::check_names`). A connection may narrow them.
    pub toolsets: Vec<String>,
    pub durability: Durability,
    /// How `tokens_estimate` counts (`tokenizer`: "words", "cl100k_base" or "o200k_base").
    pub tokenizer: crate::tokens::Tokenizer,
    /// How full-text search cuts words (`search_tokenizer`: "default" or "code"); a change
    /// rebuilds the index at the next start.
    pub search_tokenizer: SearchTokenizer,
    pub auth: Auth,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Largest file `capsule_import` reads, in bytes (default 25 MiB).
    pub max_import_bytes: u64,
    /// Files that were read, in merge order.
    pub sources: Vec<PathBuf>,
    /// The associative memory's settings (the `memory` object).
    pub memory: MemoryConfig,
    /// MCP sessions (the `mcp` object).
    pub mcp: McpConfig,
    /// Connections (the `http` object).
    pub http: HttpConfig,
    /// Semantic search (the `embeddings` object).
    pub embeddings: EmbeddingsConfig,
    /// Where the store lives (`database`, `database_read`).
    pub database: Database,
    /// Things worth telling the user at start (unknown keys, unknown tool names).
    pub warnings: Vec<String>,
}

/// The database a daemon keeps its store in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Database {
    /// SQLite at `$MOSS_HOME/moss.db` (no `database` key).
    #[default]
    Home,
    /// SQLite at this path (`database: "sqlite:/path/to/moss.db"`).
    Sqlite(PathBuf),
    /// PostgreSQL (`database: "postgres://…"`), reads from `read` (a replica's URL,
    /// `database_read`) when given.
    Postgres { url: String, read: Option<String> },
}

impl Database {
    /// Parses `database` and `database_read` as written; the error names the key and the forms
    /// it takes.
    pub fn parse(database: Option<&str>, read: Option<&str>) -> Result<Database, String> {
        let postgres = |u: &str| u.starts_with("postgres://") || u.starts_with("postgresql://");
        let db = match database.map(str::trim).filter(|v| !v.is_empty()) {
            None => Database::Home,
            Some(u) if postgres(u) => Database::Postgres {
                url: u.to_string(),
                read: None,
            },
            Some(u) => match u.strip_prefix("sqlite:") {
                Some(path) if Path::new(path).is_absolute() => Database::Sqlite(path.into()),
                Some(path) => {
                    return Err(format!(
                        "key `database`: sqlite:{path} is not an absolute path; write \
                         sqlite:/path/to/moss.db"
                    ));
                }
                None => {
                    return Err(format!(
                        "key `database`: {} is neither postgres://USER@HOST/DATABASE nor \
                         sqlite:/path/to/moss.db",
                        crate::store::engine::postgres::redact(u)
                    ));
                }
            },
        };
        match (db, read.map(str::trim).filter(|v| !v.is_empty())) {
            (db, None) => Ok(db),
            (Database::Postgres { url, .. }, Some(r)) if postgres(r) => Ok(Database::Postgres {
                url,
                read: Some(r.to_string()),
            }),
            (Database::Postgres { .. }, Some(r)) => Err(format!(
                "key `database_read`: {} is not a postgres:// URL",
                crate::store::engine::postgres::redact(r)
            )),
            (_, Some(_)) => Err(
                "key `database_read` needs `database` to be a postgres:// URL (a replica is read \
                 only with PostgreSQL)"
                    .into(),
            ),
        }
    }
}

pub const DEFAULT_CAPSULE_MAX_CHARS: usize = 12_000;
pub const DEFAULT_CAPSULE_VERSIONS: u32 = 10;
/// The most revisions `capsule_versions` may keep.
pub const MAX_CAPSULE_VERSIONS: u32 = 1000;
/// The default output budget of reasoning and tasks reads, in characters.
pub const DEFAULT_OUTPUT_MAX_CHARS: usize = 20_000;
pub const DEFAULT_READ_POOL_SIZE: u32 = 4;
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
pub const DEFAULT_MAX_IMPORT_BYTES: u64 = 25 * 1024 * 1024;

impl Default for Config {
    fn default() -> Self {
        Config {
            capsule_max_chars: DEFAULT_CAPSULE_MAX_CHARS,
            capsule_versions: DEFAULT_CAPSULE_VERSIONS,
            output_max_chars: DEFAULT_OUTPUT_MAX_CHARS,
            allowed_paths: Vec::new(),
            allow_unsafe_paths: false,
            read_pool_size: DEFAULT_READ_POOL_SIZE,
            read_pool_idle: DEFAULT_READ_POOL_SIZE,
            disabled_tools: Vec::new(),
            disabled_types: Vec::new(),
            toolsets: Vec::new(),
            durability: Durability::Normal,
            tokenizer: crate::tokens::Tokenizer::Words,
            search_tokenizer: SearchTokenizer::Default,
            auth: Auth::Token,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_import_bytes: DEFAULT_MAX_IMPORT_BYTES,
            sources: Vec::new(),
            memory: MemoryConfig::default(),
            mcp: McpConfig::default(),
            embeddings: EmbeddingsConfig::default(),
            http: HttpConfig::default(),
            database: Database::Home,
            warnings: Vec::new(),
        }
    }
}

/// The associative memory's settings: the config's `memory` object.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryConfig {
    /// Longest memory content, in characters.
    pub max_content_chars: usize,
    /// Recall's recency half-life, in days.
    pub recency_half_life_days: f64,
    /// How long a session's non-persistent memories outlive its last call, in seconds.
    pub session_ttl_seconds: u64,
    /// A Lua source's memory cap, in MiB.
    pub lua_memory_mb: usize,
    /// A Lua source's time limit per run and per event handler call, in milliseconds.
    pub lua_time_ms: u64,
    /// The template `memory_render` uses by the name `default`.
    pub template: Option<Vec<moss_client::memory::TemplatePart>>,
    /// Named templates.
    pub templates: std::collections::BTreeMap<String, Vec<moss_client::memory::TemplatePart>>,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        MemoryConfig {
            max_content_chars: 8_000,
            recency_half_life_days: 7.0,
            session_ttl_seconds: 86_400,
            lua_memory_mb: 64,
            lua_time_ms: 2_000,
            template: None,
            templates: Default::default(),
        }
    }
}

/// The `mcp` object: how many MCP sessions may be open, and how long an idle one lives.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct McpConfig {
    /// Open sessions at most (`max_sessions`, default 256): an `initialize` beyond that ends the
    /// session idle the longest (see `mcp::sessions`).
    #[serde(default)]
    pub max_sessions: Option<usize>,
    /// A session without a request for this long ends (`session_idle_seconds`, default 300).
    #[serde(default)]
    pub session_idle_seconds: Option<u64>,
}

pub const DEFAULT_MCP_MAX_SESSIONS: usize = 256;
pub const DEFAULT_MCP_SESSION_IDLE_SECONDS: u64 = 300;

impl McpConfig {
    pub fn max_sessions(&self) -> usize {
        self.max_sessions
            .filter(|v| *v > 0)
            .unwrap_or(DEFAULT_MCP_MAX_SESSIONS)
    }

    pub fn session_idle(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.session_idle_seconds
                .filter(|v| *v > 0)
                .unwrap_or(DEFAULT_MCP_SESSION_IDLE_SECONDS),
        )
    }
}

/// The `embeddings` object: the sentence-embedding model semantic search runs, if any.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmbeddingsConfig {
    /// A directory in the Hugging Face layout (`config.json`, `tokenizer.json`,
    /// `model.safetensors`) holding a BERT sentence-embedding model such as all-MiniLM-L6-v2
    /// (`model_dir`). Unset: search ranks by words only.
    #[serde(default)]
    pub model_dir: Option<PathBuf>,
}

/// The `http` object: how many connections are served at once, and how long a client may take
/// to send a request's headers.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
pub struct HttpConfig {
    /// Open connections at most (`max_connections`, default 512, and never more than the
    /// process's file-descriptor limit allows): a connection beyond that closes the one idle
    /// the longest (see `connections`).
    #[serde(default)]
    pub max_connections: Option<usize>,
    /// Seconds a client has to send a request's headers, also on an idle kept-alive connection
    /// (`header_read_timeout_seconds`, default 10).
    #[serde(default)]
    pub header_read_timeout_seconds: Option<u64>,
}

pub const DEFAULT_MAX_CONNECTIONS: usize = 512;
pub const DEFAULT_HEADER_READ_TIMEOUT_SECONDS: u64 = 10;

impl HttpConfig {
    pub fn max_connections(&self) -> usize {
        self.max_connections
            .filter(|v| *v > 0)
            .unwrap_or(DEFAULT_MAX_CONNECTIONS)
    }

    pub fn header_read_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.header_read_timeout_seconds
                .filter(|v| *v > 0)
                .unwrap_or(DEFAULT_HEADER_READ_TIMEOUT_SECONDS),
        )
    }
}

/// The `memory` object as written.
#[derive(Debug, Default, Deserialize)]
struct MemoryFileConfig {
    max_content_chars: Option<usize>,
    recency_half_life_days: Option<f64>,
    session_ttl_seconds: Option<u64>,
    lua_memory_mb: Option<usize>,
    lua_time_ms: Option<u64>,
    template: Option<Vec<moss_client::memory::TemplatePart>>,
    templates: Option<std::collections::BTreeMap<String, Vec<moss_client::memory::TemplatePart>>>,
}

/// One config file as written, every key optional.
#[derive(Debug, Default, Deserialize)]
struct FileConfig {
    capsule_max_chars: Option<usize>,
    capsule_versions: Option<u32>,
    output_max_chars: Option<usize>,
    allowed_paths: Option<Vec<PathBuf>>,
    allow_unsafe_paths: Option<bool>,
    db_max_open_conns: Option<u32>,
    db_max_idle_conns: Option<u32>,
    disabled_tools: Option<Vec<String>>,
    disabled_types: Option<Vec<String>>,
    toolsets: Option<Vec<String>>,
    durability: Option<Durability>,
    tokenizer: Option<crate::tokens::Tokenizer>,
    search_tokenizer: Option<SearchTokenizer>,
    auth: Option<Auth>,
    max_body_bytes: Option<usize>,
    max_import_bytes: Option<u64>,
    memory: Option<MemoryFileConfig>,
    mcp: Option<McpConfig>,
    http: Option<HttpConfig>,
    embeddings: Option<EmbeddingsConfig>,
    database: Option<String>,
    database_read: Option<String>,
}

const KNOWN_KEYS: &[&str] = &[
    "capsule_max_chars",
    "capsule_versions",
    "output_max_chars",
    "allowed_paths",
    "allow_unsafe_paths",
    "db_max_open_conns",
    "db_max_idle_conns",
    "disabled_tools",
    "disabled_types",
    "toolsets",
    "durability",
    "tokenizer",
    "search_tokenizer",
    "auth",
    "max_body_bytes",
    "max_import_bytes",
    "memory",
    "mcp",
    "http",
    "embeddings",
    "database",
    "database_read",
];

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

impl Config {
    /// Loads `<home>/config.json` and the nearest `.moss/config.json` at or above `cwd`.
    pub fn load(home: &Path, cwd: &Path) -> Result<Config, ConfigError> {
        let global = home.join("config.json");
        let repo = find_repo_config(cwd).filter(|p| !same_file(p, &global));
        let mut cfg = Config::default();
        let mut files = Vec::new();
        for path in [Some(global.clone()), repo].into_iter().flatten() {
            if path.is_file() {
                files.push((path.clone(), read_file(&path, &mut cfg.warnings)?));
                cfg.sources.push(path);
            }
        }
        let mut merged = FileConfig::default();
        let mut database = (None, None);
        for (path, mut file) in files {
            let (db, read) = (file.database.take(), file.database_read.take());
            if path == global {
                database = (db, read);
            } else if db.is_some() || read.is_some() {
                // A project's file does not choose where the daemon's memories are kept.
                cfg.warnings.push(format!(
                    "{}: `database` and `database_read` are read from {} only; ignored here",
                    path.display(),
                    global.display()
                ));
            }
            merge(&mut merged, file);
        }
        cfg.database =
            Database::parse(database.0.as_deref(), database.1.as_deref()).map_err(|message| {
                ConfigError::Invalid {
                    path: global.clone(),
                    message,
                }
            })?;
        cfg.apply(merged);
        Ok(cfg)
    }

    fn apply(&mut self, f: FileConfig) {
        if let Some(m) = f.memory {
            let d = &mut self.memory;
            if let Some(v) = m.max_content_chars.filter(|v| *v > 0) {
                d.max_content_chars = v.min(1_000_000);
            }
            if let Some(v) = m
                .recency_half_life_days
                .filter(|v| *v > 0.0 && v.is_finite())
            {
                d.recency_half_life_days = v;
            }
            if let Some(v) = m.session_ttl_seconds.filter(|v| *v > 0) {
                d.session_ttl_seconds = v;
            }
            if let Some(v) = m.lua_memory_mb.filter(|v| *v > 0) {
                d.lua_memory_mb = v.min(4096);
            }
            if let Some(v) = m.lua_time_ms.filter(|v| *v > 0) {
                d.lua_time_ms = v.min(600_000);
            }
            if m.template.is_some() {
                d.template = m.template;
            }
            if let Some(t) = m.templates {
                d.templates = t;
            }
        }
        self.mcp = f.mcp.unwrap_or_default();
        self.http = f.http.unwrap_or_default();
        self.embeddings = f.embeddings.unwrap_or_default();
        if let Some(v) = f.capsule_max_chars.filter(|v| *v > 0) {
            self.capsule_max_chars = v;
        }
        if let Some(v) = f.capsule_versions {
            if v > MAX_CAPSULE_VERSIONS {
                self.warnings.push(format!(
                    "capsule_versions {v} is more than {MAX_CAPSULE_VERSIONS}; keeping \
                     {MAX_CAPSULE_VERSIONS}"
                ));
            }
            self.capsule_versions = v.min(MAX_CAPSULE_VERSIONS);
        }
        if let Some(v) = f.output_max_chars.filter(|v| *v > 0) {
            self.output_max_chars = v.clamp(
                crate::budget::MIN_MAX_CHARS as usize,
                crate::budget::MAX_MAX_CHARS as usize,
            );
        }
        self.allowed_paths = f.allowed_paths.unwrap_or_default();
        self.allow_unsafe_paths = f.allow_unsafe_paths.unwrap_or(false);
        if let Some(v) = f.db_max_open_conns.filter(|v| *v > 0) {
            self.read_pool_size = v;
        }
        self.read_pool_idle = match f.db_max_idle_conns.filter(|v| *v > 0) {
            Some(v) => v.min(self.read_pool_size),
            None => self.read_pool_size,
        };
        self.disabled_tools = f.disabled_tools.unwrap_or_default();
        self.disabled_types = f.disabled_types.unwrap_or_default();
        self.toolsets = f.toolsets.unwrap_or_default();
        self.durability = f.durability.unwrap_or_default();
        self.tokenizer = f.tokenizer.unwrap_or_default();
        self.search_tokenizer = f.search_tokenizer.unwrap_or_default();
        self.auth = f.auth.unwrap_or_default();
        if let Some(v) = f.max_body_bytes.filter(|v| *v > 0) {
            self.max_body_bytes = v;
        }
        if let Some(v) = f.max_import_bytes.filter(|v| *v > 0) {
            self.max_import_bytes = v;
        }
        for p in &self.allowed_paths {
            if !p.is_absolute() {
                self.warnings.push(format!(
                    "allowed_paths entry {} is not absolute and is ignored",
                    p.display()
                ));
            }
        }
        self.allowed_paths.retain(|p| p.is_absolute());
    }

    /// The rules of a daemon's file paths: `$MOSS_HOME/exports/`, and `allowed_paths` and
    /// `allow_unsafe_paths`.
    pub fn path_rules(&self, home: &MossHome) -> PathRules {
        PathRules {
            exports_dir: home.exports_dir(),
            allowed_paths: self.allowed_paths.clone(),
            allow_unsafe_paths: self.allow_unsafe_paths,
        }
    }

    /// Whether `tool` of `family` is switched off by `disabled_tools` or `disabled_types`.
    pub fn tool_disabled(&self, family: &str, tool: &str) -> bool {
        self.disabled_tools.iter().any(|t| t == tool)
            || self.disabled_types.iter().any(|t| t == family)
    }
}

fn find_repo_config(cwd: &Path) -> Option<PathBuf> {
    cwd.ancestors()
        .map(|dir| dir.join(".moss").join("config.json"))
        .find(|p| p.is_file())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

fn read_file(path: &Path, warnings: &mut Vec<String>) -> Result<FileConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: format!("not valid JSON: {e}"),
        })?;
    let Some(obj) = value.as_object() else {
        return Err(ConfigError::Invalid {
            path: path.to_path_buf(),
            message: "the top level must be a JSON object".into(),
        });
    };
    for key in obj.keys() {
        if !KNOWN_KEYS.contains(&key.as_str()) {
            warnings.push(format!(
                "{}: unknown key {key:?} is ignored (known keys: {})",
                path.display(),
                KNOWN_KEYS.join(", ")
            ));
        }
    }
    let known: serde_json::Map<_, _> = obj
        .iter()
        .filter(|(k, _)| KNOWN_KEYS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    serde_path_to_error::deserialize(serde_json::Value::Object(known)).map_err(|e| {
        ConfigError::Invalid {
            path: path.to_path_buf(),
            message: format!("key `{}`: {}", e.path(), e.inner()),
        }
    })
}

fn merge(into: &mut FileConfig, over: FileConfig) {
    fn scalar<T: PartialEq + Default>(into: &mut Option<T>, over: Option<T>) {
        if let Some(v) = over
            && v != T::default()
        {
            *into = Some(v);
        }
    }
    fn list<T: PartialEq>(into: &mut Option<Vec<T>>, over: Option<Vec<T>>) {
        if let Some(items) = over {
            let dst = into.get_or_insert_with(Vec::new);
            for item in items {
                if !dst.contains(&item) {
                    dst.push(item);
                }
            }
        }
    }
    scalar(&mut into.capsule_max_chars, over.capsule_max_chars);
    // 0 is a value here (no versions), not "unset".
    if over.capsule_versions.is_some() {
        into.capsule_versions = over.capsule_versions;
    }
    scalar(&mut into.output_max_chars, over.output_max_chars);
    scalar(&mut into.db_max_open_conns, over.db_max_open_conns);
    scalar(&mut into.db_max_idle_conns, over.db_max_idle_conns);
    scalar(&mut into.max_body_bytes, over.max_body_bytes);
    scalar(&mut into.max_import_bytes, over.max_import_bytes);
    // `memory`: each field of the nearer file wins.
    if let Some(o) = over.memory {
        let m = into.memory.get_or_insert_with(MemoryFileConfig::default);
        m.max_content_chars = o.max_content_chars.or(m.max_content_chars);
        m.recency_half_life_days = o.recency_half_life_days.or(m.recency_half_life_days);
        m.session_ttl_seconds = o.session_ttl_seconds.or(m.session_ttl_seconds);
        m.lua_memory_mb = o.lua_memory_mb.or(m.lua_memory_mb);
        m.lua_time_ms = o.lua_time_ms.or(m.lua_time_ms);
        m.template = o.template.or(m.template.take());
        if let Some(t) = o.templates {
            m.templates.get_or_insert_with(Default::default).extend(t);
        }
    }
    // `mcp` and `http`: each field of the nearer file wins.
    if let Some(o) = over.mcp {
        let m = into.mcp.get_or_insert_with(McpConfig::default);
        m.max_sessions = o.max_sessions.or(m.max_sessions);
        m.session_idle_seconds = o.session_idle_seconds.or(m.session_idle_seconds);
    }
    if let Some(o) = over.http {
        let h = into.http.get_or_insert_with(HttpConfig::default);
        h.max_connections = o.max_connections.or(h.max_connections);
        h.header_read_timeout_seconds = o
            .header_read_timeout_seconds
            .or(h.header_read_timeout_seconds);
    }
    if let Some(o) = over.embeddings {
        let e = into
            .embeddings
            .get_or_insert_with(EmbeddingsConfig::default);
        e.model_dir = o.model_dir.or(e.model_dir.take());
    }
    if over.durability.is_some() {
        into.durability = over.durability;
    }
    if over.tokenizer.is_some() {
        into.tokenizer = over.tokenizer;
    }
    if over.search_tokenizer.is_some() {
        into.search_tokenizer = over.search_tokenizer;
    }
    if over.auth.is_some() {
        into.auth = over.auth;
    }
    into.allow_unsafe_paths = match (into.allow_unsafe_paths, over.allow_unsafe_paths) {
        (Some(a), Some(b)) => Some(a || b),
        (a, b) => a.or(b),
    };
    list(&mut into.allowed_paths, over.allowed_paths);
    list(&mut into.disabled_tools, over.disabled_tools);
    list(&mut into.disabled_types, over.disabled_types);
    list(&mut into.toolsets, over.toolsets);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_takes_a_postgres_url_or_an_absolute_sqlite_path() {
        assert_eq!(Database::parse(None, None).unwrap(), Database::Home);
        assert_eq!(Database::parse(Some("  "), None).unwrap(), Database::Home);
        assert_eq!(
            Database::parse(Some("sqlite:/srv/moss/moss.db"), None).unwrap(),
            Database::Sqlite("/srv/moss/moss.db".into())
        );
        assert_eq!(
            Database::parse(
                Some("postgres://moss@db/moss"),
                Some("postgresql://moss@replica/moss")
            )
            .unwrap(),
            Database::Postgres {
                url: "postgres://moss@db/moss".into(),
                read: Some("postgresql://moss@replica/moss".into())
            }
        );
        let e = Database::parse(Some("sqlite:moss.db"), None).unwrap_err();
        assert!(e.contains("not an absolute path"), "{e}");
        let e = Database::parse(Some("mysql://u:secret@h/db"), None).unwrap_err();
        assert!(e.contains("neither postgres://"), "{e}");
        assert!(!e.contains("secret"), "{e}");
        let e = Database::parse(None, Some("postgres://moss@replica/moss")).unwrap_err();
        assert!(e.contains("database_read"), "{e}");
        let e = Database::parse(Some("postgres://moss@db/moss"), Some("sqlite:/x.db")).unwrap_err();
        assert!(e.contains("database_read"), "{e}");
    }

    #[test]
    fn only_the_home_config_chooses_the_database() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join(".moss")).unwrap();
        std::fs::write(
            repo.path().join(".moss/config.json"),
            r#"{"database": "postgres://evil@elsewhere/db"}"#,
        )
        .unwrap();
        let cfg = Config::load(home.path(), repo.path()).unwrap();
        assert_eq!(cfg.database, Database::Home);
        assert!(
            cfg.warnings.iter().any(|w| w.contains("read from")),
            "{:?}",
            cfg.warnings
        );
        std::fs::write(
            home.path().join("config.json"),
            r#"{"database": "ftp://nowhere"}"#,
        )
        .unwrap();
        let e = Config::load(home.path(), repo.path()).unwrap_err();
        assert!(e.to_string().contains("key `database`"), "{e}");
    }

    fn write(dir: &Path, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("config.json"), text).unwrap();
    }

    #[test]
    fn defaults_apply_without_files() {
        let home = tempfile::tempdir().unwrap();
        let cfg = Config::load(home.path(), home.path()).unwrap();
        assert_eq!(cfg.capsule_max_chars, 12_000);
        assert_eq!(cfg.durability, Durability::Normal);
        assert_eq!(cfg.max_import_bytes, 25 * 1024 * 1024);
        assert!(cfg.sources.is_empty());
    }

    #[test]
    fn repo_overrides_scalars_ors_bools_and_merges_arrays() {
        let home = tempfile::tempdir().unwrap();
        let repo = tempfile::tempdir().unwrap();
        write(
            home.path(),
            r#"{"capsule_max_chars": 5000, "allow_unsafe_paths": true,
                "disabled_tools": ["capsule_purge"], "allowed_paths": ["/a"]}"#,
        );
        write(
            &repo.path().join(".moss"),
            r#"{"capsule_max_chars": 0, "allow_unsafe_paths": false,
                "disabled_tools": ["capsule_purge", "capsule_import"], "allowed_paths": ["/b"]}"#,
        );
        let sub = repo.path().join("src/deep");
        std::fs::create_dir_all(&sub).unwrap();
        let cfg = Config::load(home.path(), &sub).unwrap();
        assert_eq!(cfg.capsule_max_chars, 5000, "zero does not override");
        assert!(cfg.allow_unsafe_paths, "booleans are OR-ed");
        assert_eq!(cfg.disabled_tools, vec!["capsule_purge", "capsule_import"]);
        assert_eq!(
            cfg.allowed_paths,
            vec![PathBuf::from("/a"), PathBuf::from("/b")]
        );
        assert_eq!(cfg.sources.len(), 2);
    }

    #[test]
    fn wrong_types_name_the_key() {
        let home = tempfile::tempdir().unwrap();
        write(home.path(), r#"{"capsule_max_chars": "big"}"#);
        let err = Config::load(home.path(), home.path()).unwrap_err();
        assert!(err.to_string().contains("capsule_max_chars"), "{err}");
    }

    #[test]
    fn disabled_types_disable_their_tools() {
        let cfg = Config {
            disabled_types: vec!["capsule".into()],
            ..Config::default()
        };
        assert!(cfg.tool_disabled("capsule", "capsule_store"));
        let cfg = Config {
            disabled_tools: vec!["capsule_purge".into()],
            ..Config::default()
        };
        assert!(cfg.tool_disabled("capsule", "capsule_purge"));
        assert!(!cfg.tool_disabled("capsule", "capsule_store"));
    }
}
