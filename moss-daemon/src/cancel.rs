//! Cancellation of long operations when the client goes away.
//!
//! A request's future is dropped when its client disconnects, but work already handed to a
//! blocking thread or to the writer keeps running. [`Cancel::new`] returns a token for that work
//! and a guard for the request's future: when the guard is dropped before [`CancelGuard::disarm`],
//! the token reports cancellation and loops stop at their next check with `499 CANCELLED`.
//! Domain operations make their tokens with [`on_drop`]; REST handlers and MCP tools never
//! make one: dropping the operation's future is all they do.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use moss_client::ErrorCode;

use crate::error::{Error, Result};

/// Checked by long loops, once per item.
#[derive(Debug, Clone, Default)]
pub struct Cancel {
    flag: Arc<AtomicBool>,
}

/// Held by the request's future; dropping it (the client went away) cancels the token.
#[derive(Debug)]
pub struct CancelGuard {
    flag: Option<Arc<AtomicBool>>,
}

impl Cancel {
    /// A token and the guard that cancels it when dropped.
    pub fn new() -> (Cancel, CancelGuard) {
        let flag = Arc::new(AtomicBool::new(false));
        (
            Cancel { flag: flag.clone() },
            CancelGuard { flag: Some(flag) },
        )
    }

    /// A token nothing cancels.
    pub fn never() -> Cancel {
        Cancel::default()
    }

    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::Acquire)
    }

    /// `Err(499 CANCELLED "<operation> cancelled")` once cancelled.
    pub fn check(&self, operation: &str) -> Result<()> {
        if self.is_cancelled() {
            return Err(Error::new(
                ErrorCode::Cancelled,
                format!("{operation} cancelled: the client went away"),
            ));
        }
        Ok(())
    }
}

/// Runs the work `start` makes around a new token, which fires if the returned future is
/// dropped before the work has finished (the client went away).
pub async fn on_drop<T, F>(start: impl FnOnce(Cancel) -> F) -> T
where
    F: Future<Output = T>,
{
    let (cancel, guard) = Cancel::new();
    let out = start(cancel).await;
    guard.disarm();
    out
}

impl CancelGuard {
    /// The work finished: dropping the guard no longer cancels anything.
    pub fn disarm(mut self) {
        self.flag = None;
    }
}

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if let Some(flag) = self.flag.take() {
            flag.store(true, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropping_the_guard_cancels() {
        let (token, guard) = Cancel::new();
        assert!(token.check("import").is_ok());
        drop(guard);
        let e = token.check("import").unwrap_err();
        assert_eq!(e.code(), ErrorCode::Cancelled);
        assert!(e.0.message.starts_with("import cancelled"));
    }

    #[test]
    fn a_disarmed_guard_does_not() {
        let (token, guard) = Cancel::new();
        guard.disarm();
        assert!(!token.is_cancelled());
        assert!(!Cancel::never().is_cancelled());
    }

    #[tokio::test]
    async fn on_drop_cancels_only_work_dropped_before_it_finished() {
        let finished = on_drop(|cancel| async move { cancel }).await;
        assert!(!finished.is_cancelled());
        let (tx, rx) = tokio::sync::oneshot::channel();
        let work = on_drop(|cancel| async move {
            tx.send(cancel).unwrap();
            std::future::pending::<()>().await
        });
        let timeout = std::time::Duration::from_millis(10);
        assert!(tokio::time::timeout(timeout, work).await.is_err());
        assert!(rx.await.unwrap().is_cancelled());
    }
}
