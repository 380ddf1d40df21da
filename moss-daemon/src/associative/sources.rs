//! Lua sources: discovery, runs, their status, and the event handlers they register.
//!
//! Sources are `*.lua` files in `$MOSS_HOME/sources/` (every workspace) and, when a caller
//! names a project root, in `<root>/.moss/sources/`, plus the builtin `session.lua`, `git.lua`
//! and `toml.lua` (project sources a file of the same name overrides; their text is in
//! `moss-daemon/sources/`, to copy and edit). Each run is a fresh sandboxed Lua state on its own
//! thread ([`super::lua`]); what it stores replaces the source's previous memories in one
//! writer job when it succeeds, and nothing is written when it fails. A source that registered
//! handlers keeps its state on its thread, which runs them on events until the source runs
//! again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use moss_client::memory::{
    MemoryEventRequest, MemoryEventResponse, MemorySourcesRequest, MemorySourcesResponse,
    MemorySourcesRunRequest, SourceStatus,
};
use rusqlite::params;
use serde_json::Value;
use tokio::sync::oneshot;

use super::lua::{Env, Host, Limits, describe};
use super::{Memories, NewMemory, delete_rids, upsert, workspace};
use crate::error::{Error, Result};
use crate::store::now;

/// The builtin sources: name and text.
pub const BUILTIN: [(&str, &str); 3] = [
    ("session.lua", include_str!("../../sources/session.lua")),
    ("git.lua", include_str!("../../sources/git.lua")),
    ("toml.lua", include_str!("../../sources/toml.lua")),
];
/// Largest source file.
const MAX_SOURCE_BYTES: u64 = 256 * 1024;
/// Most sources one run starts.
const MAX_SOURCES: usize = 64;

/// One source file.
#[derive(Debug, Clone)]
struct SourceFile {
    name: String,
    path: String,
    code: std::result::Result<String, String>,
}

/// A message to a source's thread.
struct EventMsg {
    event: String,
    data: Value,
    session: Option<String>,
    reply: oneshot::Sender<(usize, Vec<String>)>,
}

/// A source whose state lives on, for its handlers.
struct HostHandle {
    events: Vec<String>,
    tx: mpsc::Sender<EventMsg>,
}

/// Statuses and live handlers, by (workspace, root, source name).
#[derive(Default)]
pub struct SourcesState {
    statuses: BTreeMap<(String, String, String), SourceStatus>,
    hosts: BTreeMap<(String, String, String), HostHandle>,
}

impl std::fmt::Debug for SourcesState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourcesState")
            .field("statuses", &self.statuses.len())
            .field("hosts", &self.hosts.len())
            .finish()
    }
}

/// The root a request names: absolute, an existing directory, canonical.
fn root(value: Option<&str>) -> Result<Option<PathBuf>> {
    let Some(r) = value.map(str::trim).filter(|r| !r.is_empty()) else {
        return Ok(None);
    };
    let p = Path::new(r);
    if !p.is_absolute() {
        return Err(Error::invalid_field(
            "root",
            format!("root must be an absolute path, got {r:?}"),
        ));
    }
    let canon = p
        .canonicalize()
        .map_err(|e| Error::invalid_field("root", format!("root {r:?}: {e}")))?;
    if !canon.is_dir() {
        return Err(Error::invalid_field(
            "root",
            format!("root {r:?} is not a directory"),
        ));
    }
    Ok(Some(canon))
}

fn lua_files(dir: &Path) -> Vec<SourceFile> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<SourceFile> = entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "lua"))
        .map(|e| {
            let path = e.path();
            let code = match std::fs::symlink_metadata(&path) {
                Ok(m) if m.file_type().is_symlink() => {
                    Err("a source may not be a symbolic link".to_string())
                }
                Ok(m) if m.len() > MAX_SOURCE_BYTES => Err(format!(
                    "{} bytes; a source is at most {MAX_SOURCE_BYTES}",
                    m.len()
                )),
                Ok(_) => std::fs::read_to_string(&path).map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            SourceFile {
                name: e.file_name().to_string_lossy().into_owned(),
                path: path.display().to_string(),
                code,
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The sources of a workspace and root: the home's, then the project's (a project file
/// overrides a home one of the same name), then the builtins the project does not override.
fn discover(home: &Path, root: Option<&Path>) -> Vec<SourceFile> {
    let mut by_name: BTreeMap<String, SourceFile> = BTreeMap::new();
    for f in lua_files(&home.join("sources")) {
        by_name.insert(f.name.clone(), f);
    }
    if let Some(root) = root {
        for (name, code) in BUILTIN {
            by_name.entry(name.to_string()).or_insert(SourceFile {
                name: name.to_string(),
                path: format!("builtin:{name}"),
                code: Ok(code.to_string()),
            });
        }
        for f in lua_files(&root.join(".moss").join("sources")) {
            by_name.insert(f.name.clone(), f);
        }
    }
    by_name.into_values().take(MAX_SOURCES).collect()
}

/// What a run's thread reports.
struct Outcome {
    result: std::result::Result<Vec<NewMemory>, String>,
    events: Vec<String>,
    tx: Option<mpsc::Sender<EventMsg>>,
}

/// Runs one source on its own thread; if it registers handlers the thread stays to run them.
fn spawn_run(env: Env, file: SourceFile) -> oneshot::Receiver<Outcome> {
    let (done, rx) = oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name(format!("moss-lua-{}", file.name))
        .spawn(move || {
            let code = match file.code {
                Ok(c) => c,
                Err(e) => {
                    let _ = done.send(Outcome {
                        result: Err(e),
                        events: Vec::new(),
                        tx: None,
                    });
                    return;
                }
            };
            let host = match Host::new(env) {
                Ok(h) => h,
                Err(e) => {
                    let _ = done.send(Outcome {
                        result: Err(describe(&e)),
                        events: Vec::new(),
                        tx: None,
                    });
                    return;
                }
            };
            let result = host.run(&code, &file.name).map_err(|e| describe(&e));
            let events = if result.is_ok() {
                host.events()
            } else {
                Vec::new()
            };
            if events.is_empty() {
                let _ = done.send(Outcome {
                    result,
                    events,
                    tx: None,
                });
                return;
            }
            let (tx, inbox) = mpsc::channel::<EventMsg>();
            if done
                .send(Outcome {
                    result,
                    events,
                    tx: Some(tx),
                })
                .is_err()
            {
                return;
            }
            // Handlers run here until the source runs again (its sender is dropped).
            while let Ok(msg) = inbox.recv() {
                let r = host.handle(&msg.event, &msg.data, msg.session);
                let _ = msg.reply.send(r);
            }
        });
    if let Err(e) = spawned {
        tracing::error!("cannot start a thread for a Lua source: {e}");
    }
    rx
}

impl Memories {
    fn limits(&self) -> Limits {
        let m = &self.config().memory;
        Limits {
            memory_bytes: m.lua_memory_mb.saturating_mul(1024 * 1024),
            time: Duration::from_millis(m.lua_time_ms),
        }
    }

    /// `memory_sources`.
    pub async fn sources(&self, req: MemorySourcesRequest) -> Result<MemorySourcesResponse> {
        let ws = workspace(req.workspace.as_deref())?;
        let root = root(req.root.as_deref())?;
        let root_key = root
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let files = discover(&self.home, root.as_deref());
        let state = self.sources.lock().unwrap_or_else(|e| e.into_inner());
        let sources = files
            .into_iter()
            .map(|f| {
                state
                    .statuses
                    .get(&(ws.clone(), root_key.clone(), f.name.clone()))
                    .cloned()
                    .unwrap_or(SourceStatus {
                        name: f.name,
                        path: f.path,
                        workspace: ws.clone(),
                        root: root.as_ref().map(|p| p.display().to_string()),
                        status: "never".into(),
                        last_run_at: None,
                        duration_ms: None,
                        items: 0,
                        handlers: Vec::new(),
                        error: None,
                    })
            })
            .collect();
        Ok(MemorySourcesResponse { sources })
    }

    /// `memory_sources_run`: runs the sources (or the one named) and reports each.
    pub async fn sources_run(&self, req: MemorySourcesRunRequest) -> Result<MemorySourcesResponse> {
        let ws = workspace(req.workspace.as_deref())?;
        let root = root(req.root.as_deref())?;
        let root_key = root
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let mut files = discover(&self.home, root.as_deref());
        if let Some(name) = req.name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
            files.retain(|f| f.name == name);
            if files.is_empty() {
                return Err(
                    Error::not_found(format!("no source {name:?} (see memory_sources)"))
                        .with_details(serde_json::json!({ "field": "name" })),
                );
            }
        }
        let limits = self.limits();
        let handle = tokio::runtime::Handle::current();
        // Start them all, then collect: sources run in parallel, each on its thread.
        let mut running = Vec::new();
        for f in files {
            let env = Env {
                memories: self.clone(),
                handle: handle.clone(),
                workspace: ws.clone(),
                root: root.clone(),
                name: f.name.clone(),
                limits: limits.clone(),
            };
            let started = Instant::now();
            running.push((f.name.clone(), f.path.clone(), started, spawn_run(env, f)));
        }
        let mut out = Vec::new();
        for (name, path, started, rx) in running {
            let outcome = tokio::time::timeout(limits.time + Duration::from_secs(10), rx).await;
            let (result, events, tx) = match outcome {
                Ok(Ok(o)) => (o.result, o.events, o.tx),
                Ok(Err(_)) => (
                    Err("the source's thread ended without a result".to_string()),
                    Vec::new(),
                    None,
                ),
                Err(_) => (
                    Err("the source did not finish in time (blocked outside Lua)".to_string()),
                    Vec::new(),
                    None,
                ),
            };
            let (status, items, error) = match result {
                Ok(items) => match self.replace_source(&ws, &name, items).await {
                    Ok(n) => ("ok", n as i64, None),
                    Err(e) => (
                        "error",
                        0,
                        Some(format!("{name}: storing its memories: {}", e.0.message)),
                    ),
                },
                Err(e) => ("error", 0, Some(e)),
            };
            if let Some(e) = &error {
                tracing::warn!("memory source {path} ({ws}): {e}");
            }
            let s = SourceStatus {
                name: name.clone(),
                path,
                workspace: ws.clone(),
                root: root.as_ref().map(|p| p.display().to_string()),
                status: status.into(),
                last_run_at: Some(now()),
                duration_ms: Some(started.elapsed().as_millis() as i64),
                items,
                handlers: events.clone(),
                error,
            };
            let mut state = self.sources.lock().unwrap_or_else(|e| e.into_inner());
            let key = (ws.clone(), root_key.clone(), name);
            if status == "ok" {
                // The new state's handlers replace the old; a failed run keeps the old ones.
                match tx {
                    Some(tx) => {
                        state.hosts.insert(key.clone(), HostHandle { events, tx });
                    }
                    None => {
                        state.hosts.remove(&key);
                    }
                }
            }
            state.statuses.insert(key, s.clone());
            out.push(s);
        }
        Ok(MemorySourcesResponse { sources: out })
    }

    /// Replaces a source's persistent memories in a workspace by `items`, in one writer job.
    async fn replace_source(&self, ws: &str, name: &str, items: Vec<NewMemory>) -> Result<usize> {
        let (ws, name) = (ws.to_string(), name.to_string());
        self.store
            .writer
            .run(move |ctx| {
                let rids: Vec<i64> = ctx
                    .prepare_cached("SELECT rid FROM memories WHERE workspace = ?1 AND source = ?2 AND session = ''")?
                    .query_map(params![ws, name], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?;
                delete_rids(ctx, &rids)?;
                for mut m in items {
                    m.workspace = ws.clone();
                    m.source = Some(name.clone());
                    upsert(ctx, &m)?;
                }
                let n: i64 = ctx
                    .prepare_cached("SELECT count(*) FROM memories WHERE workspace = ?1 AND source = ?2 AND session = ''")?
                    .query_row(params![ws, name], |r| r.get(0))?;
                Ok(n as usize)
            })
            .await
    }

    /// `memory_event`: the handlers of the workspace's (and root's) sources for `event`.
    pub async fn event(&self, req: MemoryEventRequest) -> Result<MemoryEventResponse> {
        let ws = workspace(req.workspace.as_deref())?;
        let root = root(req.root.as_deref())?;
        let root_key = root
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let event = req.event.trim().to_string();
        if event.is_empty() || event.len() > 100 {
            return Err(Error::invalid_field(
                "event",
                "event must be a name of 1 to 100 characters, e.g. \"file_opened\"",
            ));
        }
        let session = super::session(req.session.as_deref())?;
        let data = req.data.unwrap_or(Value::Null);
        let mut waiting = Vec::new();
        {
            let state = self.sources.lock().unwrap_or_else(|e| e.into_inner());
            for ((w, r, name), host) in &state.hosts {
                if *w == ws && *r == root_key && host.events.contains(&event) {
                    let (reply, rx) = oneshot::channel();
                    let msg = EventMsg {
                        event: event.clone(),
                        data: data.clone(),
                        session: session.clone(),
                        reply,
                    };
                    if host.tx.send(msg).is_ok() {
                        waiting.push((name.clone(), rx));
                    }
                }
            }
        }
        let limit = self.limits().time + Duration::from_secs(10);
        let (mut handled, mut stored, mut errors) = (0, 0, Vec::new());
        for (name, rx) in waiting {
            match tokio::time::timeout(limit, rx).await {
                Ok(Ok((n, errs))) => {
                    handled += 1;
                    stored += n as i64;
                    errors.extend(errs);
                }
                _ => errors.push(format!("{name}: its handler did not finish in time")),
            }
        }
        Ok(MemoryEventResponse {
            event,
            handled,
            stored,
            errors,
        })
    }
}
