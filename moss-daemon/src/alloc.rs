//! The daemon's use of glibc's allocator: how many arenas, and giving freed memory back.
//!
//! glibc's malloc serves threads from arenas, each behind a lock. With few arenas the request
//! threads, the writer and the full-text indexer (which allocates heavily inside FTS5) queue on
//! the same locks. Capped at two arenas, `moss bench` stored 5,000-6,000 capsules/s; with
//! glibc's default (eight per core) 7,400-8,600/s, the difference being lock waits in `malloc`.
//! The default also leaves more freed memory in the arenas after a burst (resident memory
//! 64-66 MB after the benchmark against ~52 MB with two arenas), and glibc rarely returns it by
//! itself.
//!
//! So the arenas stay at glibc's default and [`spawn_trim_when_idle`] hands freed pages back with
//! `malloc_trim` once requests stop for a moment. Elsewhere (musl, macOS) both are no-ops.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Requests seen, counted by the guard.
static REQUESTS: AtomicU64 = AtomicU64::new(0);
/// Times freed memory was handed back.
static RELEASES: AtomicU64 = AtomicU64::new(0);

/// How long requests must stop before freed memory is handed back.
const QUIET: Duration = Duration::from_secs(1);

/// Counts a request (called by the guard for every request).
pub fn note_request() {
    REQUESTS.fetch_add(1, Ordering::Relaxed);
}

/// Watches the request count; after a burst, once no request has come for `QUIET`, returns
/// freed heap memory to the system (once per burst). Runs until the runtime stops.
pub fn spawn_trim_when_idle() -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut seen = REQUESTS.load(Ordering::Relaxed);
        let mut busy = false;
        let mut tick = tokio::time::interval(QUIET);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            let now = REQUESTS.load(Ordering::Relaxed);
            if now != seen {
                seen = now;
                busy = true;
            } else if busy {
                busy = false;
                let _ = tokio::task::spawn_blocking(release_free_memory).await;
                RELEASES.fetch_add(1, Ordering::Relaxed);
            }
        }
    })
}

/// Returns the free pages of every arena to the system.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn release_free_memory() {
    // SAFETY: malloc_trim takes no pointer and only walks glibc's own arenas under their locks;
    // it is documented as safe to call at any time from any thread. No safe wrapper exists (std,
    // rustix and nix do not expose it).
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_free_memory() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn freed_memory_is_handed_back_once_requests_stop() {
        let trim = spawn_trim_when_idle();
        let before = RELEASES.load(Ordering::Relaxed);
        // A burst: requests during the first tick, then none.
        for _ in 0..10 {
            note_request();
            tokio::time::sleep(QUIET / 5).await;
        }
        let deadline = std::time::Instant::now() + 10 * QUIET;
        while RELEASES.load(Ordering::Relaxed) == before {
            assert!(
                std::time::Instant::now() < deadline,
                "no release after the burst"
            );
            tokio::time::sleep(QUIET / 10).await;
        }
        // Quiet since: no further release.
        let after = RELEASES.load(Ordering::Relaxed);
        tokio::time::sleep(2 * QUIET).await;
        assert_eq!(RELEASES.load(Ordering::Relaxed), after);
        trim.abort();
    }
}
