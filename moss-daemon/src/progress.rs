//! Progress of long operations (export, import).
//!
//! A long operation takes a [`Progress`] and reports a phase with its total, then advances. The
//! same handle is read two ways: a REST client names the request with an `X-Moss-Progress: <id>`
//! header and polls `GET /progress/{id}` ([`ProgressRegistry`]); an MCP call that carries a
//! `progressToken` gets `notifications/progress` (see `mcp`). Reporting is a few relaxed atomic
//! stores, so loops report every item.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use moss_client::daemon::ProgressReport;

use crate::error::{Error, Result};

/// Reports in flight at most; more concurrent requests with a progress id are refused.
const MAX_REPORTS: usize = 1024;
/// Longest progress id accepted.
const MAX_ID_CHARS: usize = 64;

#[derive(Debug, Default)]
struct State {
    done: AtomicU64,
    total: AtomicU64,
    phase: Mutex<&'static str>,
}

/// Where an operation reports how far it has got. Cheap to clone; [`Progress::none`] reports
/// nowhere.
#[derive(Debug, Clone, Default)]
pub struct Progress(Option<Arc<State>>);

impl Progress {
    /// A handle nobody reads.
    pub fn none() -> Progress {
        Progress(None)
    }

    /// A handle that [`Progress::report`] reads, not registered anywhere.
    pub fn tracked() -> Progress {
        Progress(Some(Arc::default()))
    }

    /// Starts a phase of `total` units (0 if unknown), with nothing done yet.
    pub fn phase(&self, phase: &'static str, total: u64) {
        if let Some(s) = &self.0 {
            *s.phase.lock().unwrap_or_else(|e| e.into_inner()) = phase;
            s.total.store(total, Ordering::Relaxed);
            s.done.store(0, Ordering::Relaxed);
        }
    }

    /// Sets how many units of the current phase are done.
    pub fn set(&self, done: u64) {
        if let Some(s) = &self.0 {
            s.done.store(done, Ordering::Relaxed);
        }
    }

    /// The current state, if this handle is read by anyone.
    pub fn report(&self) -> Option<ProgressReport> {
        self.0.as_ref().map(|s| ProgressReport {
            done: s.done.load(Ordering::Relaxed),
            total: s.total.load(Ordering::Relaxed),
            phase: s
                .phase
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .to_string(),
        })
    }
}

/// The reports of running requests, by the id their client chose.
#[derive(Debug, Default)]
pub struct ProgressRegistry {
    reports: Mutex<HashMap<String, Arc<State>>>,
}

/// Removes its report from the registry when the request ends (or its client goes away).
#[derive(Debug)]
pub struct Registration<'a> {
    registry: &'a ProgressRegistry,
    id: Option<String>,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.registry.lock().remove(&id);
        }
    }
}

impl ProgressRegistry {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<State>>> {
        self.reports.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A handle published under `id` until the registration is dropped; [`Progress::none`]
    /// without an id. Refuses malformed ids and ids in use.
    pub fn register(&self, id: Option<&str>) -> Result<(Progress, Registration<'_>)> {
        let Some(id) = id else {
            return Ok((
                Progress::none(),
                Registration {
                    registry: self,
                    id: None,
                },
            ));
        };
        let valid = !id.is_empty()
            && id.len() <= MAX_ID_CHARS
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if !valid {
            return Err(Error::invalid(format!(
                "the {} header {id:?} is not a valid progress id: use 1 to {MAX_ID_CHARS} \
                 characters of A-Z, a-z, 0-9, '-' and '_' (a ULID works)",
                moss_client::daemon::PROGRESS_HEADER
            )));
        }
        let mut reports = self.lock();
        if reports.contains_key(id) {
            return Err(Error::invalid(format!(
                "progress id {id:?} is already used by a running request; choose a unique id \
                 (a ULID works)"
            )));
        }
        if reports.len() >= MAX_REPORTS {
            return Err(Error::new(
                moss_client::ErrorCode::Unavailable,
                format!(
                    "{MAX_REPORTS} requests already report progress; retry without the {} \
                     header or later",
                    moss_client::daemon::PROGRESS_HEADER
                ),
            ));
        }
        let state = Arc::new(State::default());
        *state.phase.lock().unwrap_or_else(|e| e.into_inner()) = "starting";
        reports.insert(id.to_string(), state.clone());
        Ok((
            Progress(Some(state)),
            Registration {
                registry: self,
                id: Some(id.to_string()),
            },
        ))
    }

    /// The report published under `id`, while its request runs.
    pub fn get(&self, id: &str) -> Option<ProgressReport> {
        let state = self.lock().get(id).cloned()?;
        Progress(Some(state)).report()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registered_report_is_readable_until_dropped() {
        let registry = ProgressRegistry::default();
        let (p, reg) = registry.register(Some("job-1")).unwrap();
        p.phase("exporting", 10);
        p.set(4);
        let r = registry.get("job-1").unwrap();
        assert_eq!((r.done, r.total, r.phase.as_str()), (4, 10, "exporting"));
        assert!(registry.register(Some("job-1")).is_err(), "ids are unique");
        drop(reg);
        assert!(registry.get("job-1").is_none());
        assert!(registry.register(Some("job-1")).is_ok());
    }

    #[test]
    fn malformed_ids_are_refused_and_no_id_reports_nowhere() {
        let registry = ProgressRegistry::default();
        for bad in ["", "a/b", "ü", &"x".repeat(65)] {
            assert!(registry.register(Some(bad)).is_err(), "{bad:?}");
        }
        let (p, _reg) = registry.register(None).unwrap();
        p.phase("importing", 3);
        assert!(p.report().is_none());
    }
}
