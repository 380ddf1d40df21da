//! The one way a daemon stops. SIGTERM, SIGINT, `POST /shutdown` and
//! [`RunningDaemon::shutdown`](crate::RunningDaemon::shutdown) all call [`Shutdown::trigger`];
//! the server task in [`crate::server`] waits on it, then drains in-flight requests (capped),
//! lets the writer commit what it holds, closes the database and releases the lock.

use tokio_util::sync::CancellationToken;

/// A handle that starts the daemon's graceful shutdown. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Shutdown {
    token: CancellationToken,
}

impl Shutdown {
    pub fn new() -> Shutdown {
        Shutdown::default()
    }

    /// Starts the shutdown, logging why; later calls are no-ops.
    pub fn trigger(&self, why: &str) {
        if !self.token.is_cancelled() {
            tracing::info!("shutting down: {why}");
        }
        self.token.cancel();
    }

    pub fn is_triggered(&self) -> bool {
        self.token.is_cancelled()
    }

    /// Resolves once the shutdown has been triggered.
    pub async fn triggered(&self) {
        self.token.cancelled().await
    }

    /// The token the server and the MCP sessions watch.
    pub fn token(&self) -> CancellationToken {
        self.token.clone()
    }

    /// Triggers the shutdown on the first SIGTERM or SIGINT (what `mossd` runs).
    pub fn on_signals(&self) -> std::io::Result<()> {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut int = signal(SignalKind::interrupt())?;
        let this = self.clone();
        tokio::spawn(async move {
            tokio::select! {
                _ = term.recv() => this.trigger("SIGTERM"),
                _ = int.recv() => this.trigger("SIGINT"),
                _ = this.triggered() => {}
            }
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_trigger_wakes_every_waiter_once() {
        let s = Shutdown::new();
        let waiter = tokio::spawn({
            let s = s.clone();
            async move { s.triggered().await }
        });
        assert!(!s.is_triggered());
        s.trigger("test");
        s.trigger("again");
        waiter.await.unwrap();
        assert!(s.is_triggered());
        assert!(s.token().is_cancelled());
    }
}
