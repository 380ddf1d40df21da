//! The HTTP server loop: accepting connections, bounded in number and in patience.
//!
//! `axum::serve` has neither a header-read timeout nor a connection cap, so a few hundred
//! connections that never finish their headers held the daemon's file descriptors until it
//! could not accept `/health`. Here:
//!
//! - a client has `http.header_read_timeout_seconds` (default 10) to send a request's headers,
//!   on a new connection and on an idle kept-alive one alike (hyper's `header_read_timeout`),
//!   then the connection is closed;
//! - at most `http.max_connections` connections are open (default 512, lowered to leave
//!   [`FD_RESERVE`] descriptors of the process's limit to the database, the log and the
//!   listener). A connection accepted beyond that closes the open one idle the longest (no
//!   request in progress: waiting for headers, or kept alive between requests), so room is
//!   always kept for a new request. When every open connection is busy, the new one is answered
//!   `503 UNAVAILABLE` with `Retry-After` and closed.
//!
//! Shutdown stops accepting, lets each connection finish its request in progress, and waits
//! for them (the caller caps the wait).

use std::collections::HashMap;
use std::convert::Infallible;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::response::IntoResponse;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::{TokioIo, TokioTimer};
use moss_client::ErrorCode;
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::error::Error;

/// File descriptors left to everything but connections: the database and index files with
/// their WAL and shared memory, the read pool, the lock, the log, the listener, Lua sources.
pub const FD_RESERVE: usize = 64;
/// The fewest connections served, whatever the descriptor limit says.
const MIN_CONNECTIONS: usize = 8;

/// The open connections: how many, which are idle, and the cap.
#[derive(Debug)]
pub struct Connections {
    max: usize,
    header_read_timeout: Duration,
    next_id: AtomicU64,
    open: Mutex<HashMap<u64, Arc<Conn>>>,
    evicted: AtomicU64,
}

/// One open connection.
#[derive(Debug)]
struct Conn {
    /// Requests in progress (from headers read to the response's last byte).
    busy: AtomicUsize,
    /// When it last started or finished a request (or was accepted).
    last_active: Mutex<Instant>,
    /// Cancelled to close it.
    close: CancellationToken,
}

impl Conn {
    fn stamp(&self) {
        *self.last_active.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    fn last_active(&self) -> Instant {
        *self.last_active.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Held while a request is in progress on its connection.
struct Busy(Arc<Conn>);

impl Busy {
    fn start(conn: &Arc<Conn>) -> Busy {
        conn.busy.fetch_add(1, Ordering::AcqRel);
        conn.stamp();
        Busy(conn.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.stamp();
        self.0.busy.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its request counted as in progress until it is sent or dropped
/// (an SSE stream stays busy for as long as it is open).
struct Tracked {
    body: Body,
    _busy: Busy,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Connections {
    /// At most `configured` connections (lowered to fit the descriptor limit), each with
    /// `header_read_timeout` to send a request's headers.
    pub fn new(configured: usize, header_read_timeout: Duration) -> Connections {
        let max = match fd_limit() {
            Some(limit) => configured.min(limit.saturating_sub(FD_RESERVE)),
            None => configured,
        }
        .max(MIN_CONNECTIONS);
        Connections {
            max,
            header_read_timeout,
            next_id: AtomicU64::new(0),
            open: Mutex::new(HashMap::new()),
            evicted: AtomicU64::new(0),
        }
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.lock().len()
    }

    /// The cap in force.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Idle connections closed to make room since the daemon started.
    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Conn>>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a new connection, closing the longest-idle one when the cap is reached;
    /// `None` when every open connection is busy.
    fn admit(&self) -> Option<(u64, Arc<Conn>)> {
        let mut open = self.lock();
        if open.len() >= self.max {
            let victim = open
                .iter()
                .filter(|(_, c)| c.busy.load(Ordering::Acquire) == 0)
                .min_by_key(|(_, c)| c.last_active())
                .map(|(id, _)| *id)?;
            if let Some(c) = open.remove(&victim) {
                c.close.cancel();
                self.evicted.fetch_add(1, Ordering::Relaxed);
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let conn = Arc::new(Conn {
            busy: AtomicUsize::new(0),
            last_active: Mutex::new(Instant::now()),
            close: CancellationToken::new(),
        });
        open.insert(id, conn.clone());
        Some((id, conn))
    }

    fn forget(&self, id: u64) {
        self.lock().remove(&id);
    }

    fn http1(&self) -> hyper::server::conn::http1::Builder {
        let mut b = hyper::server::conn::http1::Builder::new();
        b.timer(TokioTimer::new())
            .header_read_timeout(self.header_read_timeout);
        b
    }
}

/// The process's soft limit on open file descriptors, where it can be read.
fn fd_limit() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Serves `app` on `listener` until `stop` is cancelled, then waits for the open connections
/// to finish their requests in progress.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    connections: Arc<Connections>,
    stop: CancellationToken,
) {
    // Each connection task holds a receiver; `closed()` resolves once every one has ended.
    let (done_tx, done_rx) = tokio::sync::watch::channel(());
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of descriptors (EMFILE) or a connection reset before it was
                    // accepted: pause a moment rather than spin, then go on.
                    tracing::debug!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        // MCP answers in several small SSE writes; with Nagle on, each tool call would wait out
        // the client's delayed ACK (~40 ms).
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {e}");
        }
        let Some((id, conn)) = connections.admit() else {
            tokio::spawn(refuse(tcp, connections.clone()));
            continue;
        };
        let app = app.clone();
        let connections = connections.clone();
        let stop = stop.clone();
        let done = done_rx.clone();
        tokio::spawn(async move {
            serve_one(tcp, app, &connections, &conn, stop).await;
            connections.forget(id);
            drop(done);
        });
    }
    drop(listener);
    drop(done_rx);
    done_tx.closed().await;
}

async fn serve_one(
    tcp: TcpStream,
    app: Router,
    connections: &Connections,
    conn: &Arc<Conn>,
    stop: CancellationToken,
) {
    let on_request = {
        let conn = conn.clone();
        hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
            let busy = Busy::start(&conn);
            let app = app.clone();
            async move {
                let resp = app
                    .oneshot(req.map(Body::new))
                    .await
                    .unwrap_or_else(|e: Infallible| match e {});
                Ok::<_, Infallible>(resp.map(|body| Tracked { body, _busy: busy }))
            }
        })
    };
    let http = connections.http1();
    let mut served = pin!(http.serve_connection(TokioIo::new(tcp), on_request));
    tokio::select! {
        r = served.as_mut() => {
            if let Err(e) = r {
                tracing::debug!("connection ended: {e}");
            }
        }
        // Closed to make room for a new connection while idle: dropping it closes the socket.
        () = conn.close.cancelled() => {}
        () = stop.cancelled() => {
            served.as_mut().graceful_shutdown();
            if let Err(e) = served.await {
                tracing::debug!("connection ended during shutdown: {e}");
            }
        }
    }
}

/// Answers the one request of a connection that came when every open connection was busy.
async fn refuse(tcp: TcpStream, connections: Arc<Connections>) {
    let max = connections.max();
    let answer = hyper::service::service_fn(move |_req: hyper::Request<Incoming>| async move {
        let mut resp = Error::new(
            ErrorCode::Unavailable,
            format!(
                "the daemon is serving {max} connections, the most it allows \
                 (http.max_connections, and the file-descriptor limit), all of them busy; \
                 retry in a moment"
            ),
        )
        .into_response();
        resp.headers_mut().insert(
            axum::http::header::RETRY_AFTER,
            axum::http::HeaderValue::from_static("1"),
        );
        Ok::<_, Infallible>(resp)
    });
    let mut http = connections.http1();
    http.keep_alive(false);
    if let Err(e) = http.serve_connection(TokioIo::new(tcp), answer).await {
        tracing::debug!("refused connection ended: {e}");
    }
}
