//! Starting and stopping a daemon: home, config, lock, token, store, listener, routes.
//!
//! [`start`] binds before it returns, so callers (tests, `mossd`) know the address at once and
//! never poll for readiness.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use axum::Router;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::api::{self, DaemonInfo};
use crate::app::{App, AppState};
use crate::capsule::Capsules;
use crate::config::Database;
use crate::config::{Auth, Config};
use crate::connections::Connections;
use crate::family::{self, Toolsets};
use crate::guard::{self, Guard};
use crate::home::{DbLock, MossHome};
use crate::mcp::sessions::McpSessions;
use crate::memory::Memories;
use crate::progress::ProgressRegistry;
use crate::reasoning::Reasoning;
use crate::shutdown::Shutdown;
use crate::store::Store;
use crate::store::backup::restore_into;
use crate::tasks::Tasks;

/// How long in-flight requests may take to finish once shutdown starts.
const DRAIN_CAP: Duration = Duration::from_secs(10);

/// What to start.
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    pub home: MossHome,
    pub addr: SocketAddr,
    /// Permit a non-loopback bind address (still never without a token).
    pub allow_non_loopback: bool,
    /// Where to look for a repo `.moss/config.json`.
    pub cwd: PathBuf,
    /// `--database` and `--database-read`: in place of the home config's `database` and
    /// `database_read` when set.
    pub database: Option<String>,
    pub database_read: Option<String>,
}

impl DaemonOptions {
    /// Loopback on an OS-chosen port: what tests use.
    pub fn ephemeral(home: MossHome) -> Self {
        DaemonOptions {
            cwd: home.dir.clone(),
            home,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            allow_non_loopback: false,
            database: None,
            database_read: None,
        }
    }
}

/// `mossd --restore-backup PATH`: puts the backup in place of the SQLite store the home's
/// config names (its lock held: refused while a daemon serves it), and says what it did and how
/// to undo it. A PostgreSQL store is refused: several daemons may serve it, and the message
/// says how to copy the backup's contents there.
pub fn restore_home(home: &MossHome, backup: &Path, latest: u32) -> anyhow::Result<String> {
    let config = Config::load(&home.dir, &home.dir)?;
    let backup = std::path::absolute(backup).unwrap_or_else(|_| backup.to_path_buf());
    match config.database {
        Database::Home => restore_into(&home.db_path(), &home.lock_path(), &backup, latest),
        Database::Sqlite(path) => {
            let mut lock = path.as_os_str().to_owned();
            lock.push(".lock");
            restore_into(&path, Path::new(&lock), &backup, latest)
        }
        Database::Postgres { url, .. } => bail!(
            "this home's store is the PostgreSQL database {}, which several daemons may serve: \
             a backup is not put in its place. To bring the backup's contents there, serve the \
             backup (mossd --database sqlite:{}) and copy it into an empty database or schema \
             with moss migrate --to postgres://…",
            crate::store::engine::postgres::redact(&url),
            backup.display()
        ),
    }
}

/// A daemon serving in this process.
#[derive(Debug)]
pub struct RunningDaemon {
    pub addr: SocketAddr,
    /// The bearer token, or `None` with `auth: "none"`.
    pub token: Option<String>,
    pub config: Arc<Config>,
    shutdown: Shutdown,
    task: Option<JoinHandle<anyhow::Result<()>>>,
}

impl RunningDaemon {
    /// Asks the daemon to stop (what SIGTERM and `POST /shutdown` do).
    pub fn trigger_shutdown(&self) {
        self.shutdown.trigger("requested by the embedding process");
    }

    /// The handle that stops this daemon (signals and `POST /shutdown` use the same one).
    pub fn shutdown_handle(&self) -> Shutdown {
        self.shutdown.clone()
    }

    /// Stops accepting, drains in-flight requests (capped), commits what the writer holds,
    /// closes the database and releases the lock.
    pub async fn shutdown(mut self) -> anyhow::Result<()> {
        self.trigger_shutdown();
        self.wait().await
    }

    /// Waits until the daemon has stopped (after a shutdown was triggered elsewhere).
    pub async fn wait(&mut self) -> anyhow::Result<()> {
        match self.task.take() {
            Some(task) => task.await.context("the daemon task failed")?,
            None => Ok(()),
        }
    }
}

impl Drop for RunningDaemon {
    fn drop(&mut self) {
        self.shutdown.trigger("the daemon handle was dropped");
    }
}

/// Checks the config's names of tools and families against the registry (the config knows no
/// family): an unknown name in `toolsets`, `disabled_tools` or `disabled_types` is warned about
/// (in `config.warnings`) and left out. Returns the families `/mcp` serves: those `toolsets`
/// names, or every family when it names none it knows.
pub fn check_names(config: &mut Config) -> Toolsets {
    let mut known = Vec::new();
    for name in &config.toolsets {
        match Toolsets::named(&[name]) {
            Ok(_) => known.push(name.clone()),
            Err(e) => config
                .warnings
                .push(format!("toolsets: {e}; it is ignored")),
        }
    }
    let toolsets = if known.is_empty() {
        Toolsets::all()
    } else {
        Toolsets::named(&known).unwrap_or_else(|_| Toolsets::all())
    };
    for tool in &config.disabled_tools {
        if family::tool(tool).is_none() {
            config.warnings.push(format!(
                "disabled_tools names an unknown tool {tool:?}; known tools: {}",
                family::tools()
                    .map(|(_, t)| t.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    for ty in &config.disabled_types {
        if family::family(ty).is_none() {
            config.warnings.push(format!(
                "disabled_types names an unknown family {ty:?}; known families: {}",
                family::family_names().join(", ")
            ));
        }
    }
    toolsets
}

/// Starts a daemon: returns once it is listening.
pub async fn start(opts: DaemonOptions) -> anyhow::Result<RunningDaemon> {
    let mut config = Config::load(&opts.home.dir, &opts.cwd)?;
    if opts.database.is_some() || opts.database_read.is_some() {
        config.database = Database::parse(opts.database.as_deref(), opts.database_read.as_deref())
            .map_err(|e| {
                let e = e.replace("key `database_read`", "--database-read");
                anyhow::anyhow!("{}", e.replace("key `database`", "--database"))
            })?;
    }
    let toolsets = check_names(&mut config);
    if !opts.addr.ip().is_loopback() {
        if !opts.allow_non_loopback {
            bail!(
                "refusing to listen on {}: it is not a loopback address, and Moss holds agents' \
                 context. Use 127.0.0.1, or pass --allow-non-loopback if you really mean it",
                opts.addr
            );
        }
        if config.auth == Auth::None {
            bail!(
                "refusing to listen on non-loopback {} with auth \"none\"",
                opts.addr
            );
        }
    }
    opts.home.ensure_dir()?;
    opts.home.ensure_exports_dir()?;
    for w in &config.warnings {
        tracing::warn!("config: {w}");
    }
    // A SQLite file has one daemon, which its lock file names; a PostgreSQL database has as
    // many as it serves, and arbitrates between them itself.
    let mut lock = match &config.database {
        Database::Home => Some(DbLock::acquire(&opts.home.lock_path())?),
        Database::Sqlite(path) => {
            let mut p = path.as_os_str().to_owned();
            p.push(".lock");
            Some(DbLock::acquire(std::path::Path::new(&p))?)
        }
        Database::Postgres { .. } => None,
    };
    let token = match config.auth {
        Auth::Token => Some(opts.home.ensure_token()?),
        Auth::None => {
            tracing::warn!("auth is \"none\": any local process can read and write capsules");
            None
        }
    };
    let store_options = crate::schema::store_options(&config);
    let (database, (store, store_threads)) = match &config.database {
        Database::Postgres { url, read } => {
            let shown = crate::store::engine::postgres::redact(url);
            let (url, read, home) = (url.clone(), read.clone(), opts.home.dir.clone());
            // Connecting and migrating block: off the runtime's threads.
            let opened = tokio::task::spawn_blocking(move || {
                Store::open_postgres(&url, read.as_deref(), &store_options, &home)
            })
            .await?
            .map_err(|e| anyhow::anyhow!("cannot open {shown}: {e}"))?;
            (shown, opened)
        }
        sqlite => {
            let db_path = match sqlite {
                Database::Sqlite(path) => path.clone(),
                _ => opts.home.db_path(),
            };
            let opened = Store::open(&db_path, &store_options)
                .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", db_path.display()))?;
            (db_path.display().to_string(), opened)
        }
    };
    if config.tokenizer != crate::tokens::Tokenizer::Words {
        // Loading a vocabulary takes a moment: off the first write's path.
        let tokenizer = config.tokenizer;
        std::thread::spawn(move || tokenizer.warm_up());
    }
    let config = Arc::new(config);
    let listener = TcpListener::bind(opts.addr)
        .await
        .with_context(|| format!("cannot listen on {}", opts.addr))?;
    let addr = listener.local_addr()?;
    let shutdown = Shutdown::new();
    let memories = Memories::new(store.clone(), config.clone(), opts.home.dir.clone())
        .stop_on(shutdown.token());
    // No session survives a restart (on PostgreSQL: no idle one; others' daemons serve theirs).
    memories
        .drop_sessions()
        .await
        .map_err(|e| anyhow::anyhow!("dropping the last run's memory sessions: {e}"))?;
    memories.spawn_sweeper(shutdown.token());
    // The home's sources run at start, for the default workspace, and then those of the
    // projects sources ran for before, off the start's path.
    {
        let memories = memories.clone();
        tokio::spawn(async move { memories.rerun_sources_at_start().await });
    }
    let mcp_sessions = Arc::new(McpSessions::new(
        config.mcp.max_sessions(),
        config.mcp.session_idle(),
    ));
    let connections = Arc::new(Connections::new(
        config.http.max_connections(),
        config.http.header_read_timeout(),
    ));
    let state = AppState(Arc::new(App {
        store: store.clone(),
        capsules: Capsules::new(store.clone(), config.clone(), &opts.home)
            .stop_on(shutdown.token()),
        reasoning: Reasoning::new(
            store.clone(),
            config.clone(),
            opts.home.dir.display().to_string(),
        ),
        tasks: Tasks::new(store.clone(), config.clone()),
        memories,
        toolsets,
        config: config.clone(),
        progress: ProgressRegistry::default(),
        ui: Default::default(),
        daemon: DaemonInfo {
            addr,
            home: opts.home.dir.clone(),
            database: database.clone(),
            started: Instant::now(),
            started_at: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64),
            shutdown: shutdown.clone(),
            mcp_sessions,
            connections: connections.clone(),
        },
    }));
    if let Some(lock) = lock.as_mut() {
        lock.describe_holder(&format!(
            "pid {}, listening on http://{addr}",
            std::process::id()
        ))?;
    }

    let guard = Arc::new(Guard {
        token: token.as_deref().map(Arc::from),
        token_path: opts.home.token_path(),
        max_body_bytes: config.max_body_bytes,
        extra_hosts: if addr.ip().is_loopback() {
            Vec::new()
        } else {
            vec![addr.ip().to_string()]
        },
    });
    let app = app(state, guard, shutdown.token().child_token());
    // Said before the first connection is served: the socket is bound and queues
    // connections already, and whoever reads the log after a first answer must find it.
    tracing::info!(
        "listening on http://{addr} (database {database}, config from {:?})",
        config.sources
    );
    let stop = shutdown.clone();
    let trim = crate::alloc::spawn_trim_when_idle();
    let task = tokio::spawn(async move {
        let serve = tokio::spawn(crate::connections::serve(
            listener,
            app,
            connections,
            stop.token(),
        ));
        stop.triggered().await;
        match tokio::time::timeout(DRAIN_CAP, serve).await {
            Ok(r) => r.context("the server task failed")?,
            Err(_) => tracing::warn!(
                "in-flight requests did not finish within {DRAIN_CAP:?}; closing anyway"
            ),
        }
        trim.abort();
        store.writer.close().await;
        tokio::task::spawn_blocking(move || store_threads.join()).await?;
        drop(store);
        drop(lock);
        tracing::info!("stopped");
        Ok(())
    });
    Ok(RunningDaemon {
        addr,
        token,
        config,
        shutdown,
        task: Some(task),
    })
}

/// Every route behind the guard.
pub fn app(
    state: AppState,
    guard: Arc<Guard>,
    shutdown: tokio_util::sync::CancellationToken,
) -> Router {
    let mcp = Router::new()
        .route_service("/mcp", crate::mcp::service(state.clone(), shutdown))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::mcp::session_end_no_content,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::mcp::toolsets_from_query,
        ));
    api::routes()
        .merge(mcp)
        .merge(crate::ui::routes())
        .with_state(state)
        .layer(axum::middleware::from_fn_with_state(guard, guard::check))
        .layer(axum::middleware::from_fn(api::refusals::envelope))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn write(dir: &Path, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("config.json"), text).unwrap();
    }

    /// The config as the daemon loads it: read, then its names checked against the registry.
    fn load(home: &Path) -> (Config, Toolsets) {
        let mut cfg = Config::load(home, home).unwrap();
        let toolsets = check_names(&mut cfg);
        (cfg, toolsets)
    }

    #[test]
    fn unknown_keys_and_names_warn() {
        let home = tempfile::tempdir().unwrap();
        write(
            home.path(),
            r#"{"capsule_max_char": 1, "disabled_tools": ["capsule_nope"], "disabled_types": ["kapsule"]}"#,
        );
        let (cfg, _) = load(home.path());
        assert_eq!(cfg.warnings.len(), 3, "{:?}", cfg.warnings);
        assert!(cfg.warnings[0].contains("capsule_max_char"));
    }

    #[test]
    fn toolsets_default_to_all_and_an_unknown_one_warns() {
        let home = tempfile::tempdir().unwrap();
        assert_eq!(load(home.path()).1, Toolsets::all());
        write(home.path(), r#"{"toolsets": ["capsule", "kapsule"]}"#);
        let (cfg, toolsets) = load(home.path());
        assert_eq!(toolsets.names(), ["capsule"]);
        assert_eq!(cfg.warnings.len(), 1, "{:?}", cfg.warnings);
        assert!(
            cfg.warnings[0].contains("\"kapsule\"") && cfg.warnings[0].contains("capsule"),
            "{:?}",
            cfg.warnings
        );
    }
}
