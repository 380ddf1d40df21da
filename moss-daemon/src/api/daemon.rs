//! The daemon's own routes behind the token: `GET /status`, `POST /shutdown`, `POST /backup`
//! and `POST /ui/login-code`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Instant;

use axum::Json;
use axum::extract::State;
use moss_client::daemon::{
    BackupRequest, BackupResponse, DaemonStatus, IndexStatus, LoginCodeResponse, MigrateRequest,
    MigrateResponse, ShutdownResponse,
};

use crate::api::json::Body;
use crate::app::AppState;
use crate::error::Result;
use crate::paths::FileKind;
use crate::shutdown::Shutdown;
use crate::store::engine::Db;

/// What `/status` reports and what `/shutdown` triggers.
#[derive(Debug)]
pub struct DaemonInfo {
    pub addr: SocketAddr,
    pub home: PathBuf,
    /// The database, as the log and `/status` show it: a SQLite file's path, or a PostgreSQL URL
    /// without its password.
    pub database: String,
    pub started: Instant,
    /// Unix seconds.
    pub started_at: i64,
    pub shutdown: Shutdown,
    /// The open MCP sessions and their cap.
    pub mcp_sessions: std::sync::Arc<crate::mcp::sessions::McpSessions>,
    /// The open HTTP connections and their cap.
    pub connections: std::sync::Arc<crate::connections::Connections>,
}

#[utoipa::path(
    get,
    path = "/status",
    tag = "daemon",
    operation_id = "status",
    responses(
        (status = 200, description = "Address, version, pid, database, uptime and full-text index lag per source", body = DaemonStatus)
    )
)]
pub async fn status(State(s): State<AppState>) -> Json<DaemonStatus> {
    let d = &s.daemon;
    let index: Vec<IndexStatus> = s
        .store
        .index_lag()
        .into_iter()
        .map(|lag| IndexStatus {
            source: lag.source.into(),
            queued: lag.queued,
            applied: lag.applied,
            behind: lag.behind(),
        })
        .collect();
    Json(DaemonStatus {
        address: d.addr.to_string(),
        version: moss_client::VERSION.into(),
        pid: std::process::id(),
        home: d.home.display().to_string(),
        db_path: d.database.clone(),
        started_at: d.started_at,
        uptime_seconds: d.started.elapsed().as_secs(),
        index_behind: Some(index.iter().map(|i| i.behind).sum()),
        index,
        mcp_sessions: Some(d.mcp_sessions.open() as u64),
        mcp_sessions_max: Some(d.mcp_sessions.max() as u64),
        mcp_sessions_evicted: Some(d.mcp_sessions.evicted()),
        connections: Some(d.connections.open() as u64),
        connections_max: Some(d.connections.max() as u64),
        connections_closed_idle: Some(d.connections.evicted()),
        log_dropped: Some(crate::log::dropped()),
        semantic: Some(s.store.semantic.status()),
    })
}

#[utoipa::path(
    post,
    path = "/shutdown",
    tag = "daemon",
    operation_id = "shutdown",
    responses(
        (status = 200, description = "Graceful shutdown started (as on SIGTERM): the daemon \
            stops accepting, drains in-flight requests, commits and exits", body = ShutdownResponse)
    )
)]
pub async fn shutdown(State(s): State<AppState>) -> Json<ShutdownResponse> {
    // In-flight requests, this one included, are drained before the daemon exits, so the
    // answer still reaches the caller.
    s.daemon.shutdown.trigger("POST /shutdown");
    Json(ShutdownResponse {
        status: "shutting_down".into(),
        pid: std::process::id(),
    })
}

#[utoipa::path(
    post,
    path = "/ui/login-code",
    tag = "daemon",
    operation_id = "ui_login_code",
    responses(
        (status = 200, description = "A one-time sign-in address of the web UI, valid five \
            minutes: opening it in a browser opens a session there (an HttpOnly cookie); the \
            pages never see the bearer token", body = LoginCodeResponse)
    )
)]
pub async fn ui_login_code(State(s): State<AppState>) -> Json<LoginCodeResponse> {
    Json(LoginCodeResponse {
        path: format!("/ui/login?code={}", s.ui.new_code()),
        expires_in_seconds: crate::ui::session::CODE_TTL.as_secs(),
    })
}

#[utoipa::path(
    post,
    path = "/backup",
    tag = "daemon",
    operation_id = "backup",
    request_body = BackupRequest,
    responses(
        (status = 200, description = "A consistent snapshot of the whole store (every family) \
            written to one SQLite file (0600) while the daemon goes on serving; restore it with \
            `moss restore-backup PATH`", body = BackupResponse)
    )
)]
pub async fn backup(
    State(s): State<AppState>,
    Body(req): Body<BackupRequest>,
) -> Result<Json<BackupResponse>> {
    let rules = s
        .config
        .path_rules(&crate::MossHome::at(s.daemon.home.clone()));
    let opts = crate::schema::store_options(&s.config);
    let resp = s
        .store
        .readers
        .run_db(move |db| {
            let at = crate::store::now();
            let target = match req.path.as_deref() {
                Some(p) => rules.check_kind(p, true, FileKind::Backup)?,
                None => {
                    let stamp = chrono::DateTime::from_timestamp(at, 0)
                        .unwrap_or_default()
                        .format("%Y-%m-%dT%H%M%S");
                    rules.check_kind(&format!("moss-backup-{stamp}.db"), true, FileKind::Backup)?
                }
            };
            match db {
                // SQLite's online backup: the file's pages, as of one snapshot.
                Db::Sqlite(conn) => crate::store::backup::backup(conn, &target, at),
                // Another engine's store is copied, table by table, into a new SQLite file.
                db => crate::store::copy::backup_to_sqlite(db, &target, &opts, at),
            }
        })
        .await?;
    Ok(Json(resp))
}

#[utoipa::path(
    post,
    path = "/migrate",
    tag = "daemon",
    operation_id = "migrate",
    request_body = MigrateRequest,
    responses(
        (status = 200, description = "The whole store (every family, ids, sequence numbers and \
            versions) copied into another database, PostgreSQL or a new SQLite file, migrated \
            to this daemon's schema first, from one snapshot, in one transaction, and checked \
            by counting every table and comparing a sample of rows; the daemon goes on serving \
            from its own store", body = MigrateResponse)
    )
)]
pub async fn migrate(
    State(s): State<AppState>,
    Body(req): Body<MigrateRequest>,
) -> Result<Json<MigrateResponse>> {
    let rules = s
        .config
        .path_rules(&crate::MossHome::at(s.daemon.home.clone()));
    let target = crate::store::copy::Target::parse(&req.to, &rules)?;
    let opts = crate::schema::store_options(&s.config);
    let resp = s
        .store
        .readers
        .run_db(move |db| crate::store::copy::migrate(db, &target, &opts))
        .await?;
    Ok(Json(resp))
}
