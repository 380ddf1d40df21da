//! MCP sessions, bounded in number.
//!
//! Each open session holds a worker task and its channels (about 55 KiB), and a client that
//! never ends its sessions (`DELETE /mcp`) leaves them until the idle expiry. So at most
//! `mcp.max_sessions` are open: an `initialize` beyond that ends the session idle the longest
//! first. Evicting rather than refusing (503) keeps the daemon open to a new agent whatever
//! clients before it left behind (a crashed agent, a script that never ends its sessions): the
//! evicted session's client, if it ever comes back, gets 404 for its session id, which the MCP
//! transport specifies as "initialize again", while a refusal would lock every new client out
//! until the abandoned sessions expire.
//!
//! Sessions idle for `mcp.session_idle_seconds` end by themselves (rmcp's keep-alive).

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker, SessionConfig,
};
use rmcp::transport::streamable_http_server::session::{
    RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// The session manager behind `/mcp`: rmcp's in-memory one, with a cap.
#[derive(Debug)]
pub struct McpSessions {
    inner: LocalSessionManager,
    max: usize,
    /// When each open session last had a request.
    last_used: Mutex<HashMap<SessionId, Instant>>,
    evicted: AtomicU64,
}

impl McpSessions {
    /// At most `max` open sessions (at least 1), each ending after `idle` without a request.
    pub fn new(max: usize, idle: Duration) -> McpSessions {
        let mut inner = LocalSessionManager::default();
        inner.session_config = {
            let mut c = SessionConfig::default();
            c.keep_alive = Some(idle);
            c
        };
        McpSessions {
            inner,
            max: max.max(1),
            last_used: Mutex::new(HashMap::new()),
            evicted: AtomicU64::new(0),
        }
    }

    /// Sessions open now.
    pub fn open(&self) -> usize {
        self.lock().len()
    }

    /// The cap.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Sessions ended to make room for new ones, since the daemon started.
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Instant>> {
        self.last_used.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn touch(&self, id: &SessionId) {
        if let Some(t) = self.lock().get_mut(id) {
            *t = Instant::now();
        }
    }

    /// The session idle the longest, taken off the books, when the cap is reached.
    fn take_victim(&self) -> Option<SessionId> {
        let mut map = self.lock();
        if map.len() < self.max {
            return None;
        }
        let id = map
            .iter()
            .min_by_key(|(_, t)| **t)
            .map(|(id, _)| id.clone())?;
        map.remove(&id);
        Some(id)
    }
}

impl SessionManager for McpSessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        while let Some(victim) = self.take_victim() {
            self.evicted.fetch_add(1, Ordering::Relaxed);
            tracing::debug!(
                "MCP session {victim} ended: {} sessions are open, the most \
                 `mcp.max_sessions` allows, and it was idle the longest",
                self.max
            );
            if let Err(e) = SessionManager::close_session(&self.inner, &victim).await {
                tracing::debug!("ending MCP session {victim}: {e}");
            }
        }
        let (id, transport) = SessionManager::create_session(&self.inner).await?;
        self.lock().insert(id.clone(), Instant::now());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.touch(id);
        SessionManager::initialize_session(&self.inner, id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        SessionManager::has_session(&self.inner, id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.lock().remove(id);
        SessionManager::close_session(&self.inner, id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        SessionManager::create_stream(&self.inner, id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.touch(id);
        SessionManager::accept_message(&self.inner, id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        SessionManager::create_standalone_stream(&self.inner, id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        SessionManager::resume(&self.inner, id, last_event_id).await
    }

    async fn restore_session(
        &self,
        _id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        // Sessions live in this process only: an unknown id is 404, as with rmcp's own manager
        // without an external store.
        Ok(RestoreOutcome::NotSupported)
    }
}
