//! Lua sources: discovery, runs, their status, and the event handlers they register.
//!
//! Sources are `*.lua` files in `$MOSS_HOME/sources/` (every workspace) and, when a caller
//! names a project root, in `<root>/.moss/sources/`, plus the builtin `session.lua`, `git.lua`
//! and `toml.lua` (project sources a file of the same name overrides; their text is in
//! `moss-daemon/sources/`, to copy and edit). Each run is a runner process ([`super::runner`]).
//!
//! A source's memories belong to its workspace, its name and the project root it ran for. What
//! a run's body stores replaces that body's previous memories for the same root, in one writer
//! job with its `forget`s, when the run succeeds; a failing run writes nothing. What its event
//! handlers store is theirs: a rerun of the body leaves it. A source that registered handlers
//! keeps its runner for them; the runner is started again (its body's writes dropped) after it
//! was stopped at a limit or left idle. The projects a daemon ran sources for are remembered,
//! and their sources run again at start, so that their handlers come back after a restart.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use moss_client::memory::{
    MemoryEventRequest, MemoryEventResponse, MemorySourcesRequest, MemorySourcesResponse,
    MemorySourcesRunRequest, SourceStatus,
};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::lua::{RunCtx, Writes};
use super::runner::Runner;
use super::{Memories, check, delete_rids, upsert, workspace};
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
/// A handlers' runner idle this long is stopped; the next event starts it again.
const HOST_IDLE: Duration = Duration::from_secs(600);
/// Most projects whose sources run again at start, the most recently run first.
const MAX_PROJECTS_AT_START: usize = 32;

/// One source file.
#[derive(Debug, Clone)]
struct SourceFile {
    name: String,
    path: String,
    code: std::result::Result<String, String>,
}

/// Where a source runs: its workspace, the root's key ('' without one), its name.
type Key = (String, String, String);

/// An event for a source's handlers.
struct EventMsg {
    event: String,
    data: Value,
    session: Option<String>,
    reply: oneshot::Sender<EventOutcome>,
}

/// What an event's handlers in one source did.
struct EventOutcome {
    ran: usize,
    stored: usize,
    errors: Vec<String>,
}

/// A source with handlers: the events it handles, and the task that owns its runner.
struct HostHandle {
    events: Vec<(String, usize)>,
    tx: mpsc::Sender<EventMsg>,
}

/// Statuses and live handlers, by (workspace, root, source name).
#[derive(Default)]
pub struct SourcesState {
    statuses: BTreeMap<Key, SourceStatus>,
    hosts: BTreeMap<Key, HostHandle>,
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

/// A successful run of a source's body: its writes, its handlers, and the runner that keeps
/// them.
struct Ran {
    writes: Writes,
    events: Vec<(String, usize)>,
    runner: Option<Runner>,
}

/// Runs a source's body in a runner; keeps the runner when the source handles events.
async fn run_body(
    memories: &Memories,
    ctx: RunCtx,
    code: String,
) -> std::result::Result<Ran, String> {
    let chunk = ctx.name.clone();
    let mut runner = Runner::start(ctx, code, chunk).await?;
    let done = runner.done(memories, 1).await?;
    if let Some(e) = done.error {
        return Err(e);
    }
    Ok(Ran {
        writes: done.writes,
        runner: (!done.events.is_empty()).then_some(runner),
        events: done.events,
    })
}

/// The task that owns a source's handlers' runner: events in, outcomes out. A runner stopped
/// at a limit, or idle for [`HOST_IDLE`], is dropped (killed); the next event starts another,
/// whose body's writes are dropped (the body's memories are already stored).
fn spawn_host(
    memories: Memories,
    key: Key,
    ctx: RunCtx,
    code: String,
    events: Vec<(String, usize)>,
    runner: Runner,
) -> mpsc::Sender<EventMsg> {
    let (tx, mut rx) = mpsc::channel::<EventMsg>(64);
    tokio::spawn(async move {
        let mut runner = Some(runner);
        let stop = memories.stopping().clone();
        loop {
            let next = tokio::select! {
                _ = stop.cancelled() => return,
                next = tokio::time::timeout(HOST_IDLE, rx.recv()) => next,
            };
            let msg = match next {
                Ok(Some(m)) => m,
                Ok(None) => return,
                Err(_) => {
                    runner = None;
                    continue;
                }
            };
            if runner.is_none() {
                match run_body(&memories, ctx.clone(), code.clone()).await {
                    Ok(ran) => runner = ran.runner,
                    Err(e) => {
                        let _ = msg.reply.send(EventOutcome {
                            ran: 0,
                            stored: 0,
                            errors: vec![format!("{}: starting its handlers again: {e}", key.2)],
                        });
                        continue;
                    }
                }
            }
            let Some(r) = runner.as_mut() else {
                let _ = msg.reply.send(EventOutcome {
                    ran: 0,
                    stored: 0,
                    errors: vec![format!(
                        "{}: its handlers are gone after its last run",
                        key.2
                    )],
                });
                continue;
            };
            let handlers = events
                .iter()
                .find(|(e, _)| *e == msg.event)
                .map_or(1, |(_, n)| *n);
            let session = msg.session.clone();
            let done = match r.event(&msg.event, &msg.data, msg.session).await {
                Ok(()) => r.done(&memories, handlers).await,
                Err(e) => Err(e),
            };
            let outcome = match done {
                Ok(d) => {
                    let mut errors = d.errors;
                    let stored = match memories
                        .apply(&key, Origin::Handler(session), d.writes)
                        .await
                    {
                        Ok(n) => n,
                        Err(e) => {
                            errors.push(format!(
                                "{}: storing what it stored: {}",
                                key.2, e.0.message
                            ));
                            0
                        }
                    };
                    EventOutcome {
                        ran: d.ran,
                        stored,
                        errors,
                    }
                }
                Err(e) => {
                    runner = None;
                    EventOutcome {
                        ran: handlers,
                        stored: 0,
                        errors: vec![e],
                    }
                }
            };
            let _ = msg.reply.send(outcome);
        }
    });
    tx
}

/// Who wrote: a run's body (its memories replace the body's earlier ones), or an event
/// handler (with the event's session).
enum Origin {
    Body,
    Handler(Option<String>),
}

impl Memories {
    fn run_ctx(&self, ws: &str, root: Option<&Path>, name: &str) -> RunCtx {
        let m = &self.config().memory;
        RunCtx {
            workspace: ws.to_string(),
            root: root.map(Path::to_path_buf),
            name: name.to_string(),
            memory_bytes: m.lua_memory_mb.saturating_mul(1024 * 1024),
            time_ms: m.lua_time_ms,
            max_content_chars: m.max_content_chars,
            recency_half_life_days: m.recency_half_life_days,
        }
    }

    /// `memory_sources`.
    pub async fn sources(&self, req: MemorySourcesRequest) -> Result<MemorySourcesResponse> {
        let ws = workspace(req.workspace.as_deref())?;
        let root = root(req.root.as_deref())?;
        let root_key = root_key(root.as_deref());
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

    /// The sources that ran for workspace `ws` since the daemon started, for every project
    /// root and for none, the latest run first, at most `limit`: each with its last run, what
    /// it stored and its error.
    pub fn source_runs(&self, ws: &str, limit: usize) -> Vec<SourceStatus> {
        let state = self.sources.lock().unwrap_or_else(|e| e.into_inner());
        let from: Key = (ws.to_string(), String::new(), String::new());
        let mut out: Vec<SourceStatus> = state
            .statuses
            .range(from..)
            .take_while(|(k, _)| k.0 == ws)
            .map(|(_, s)| s.clone())
            .collect();
        out.sort_by(|a, b| {
            b.last_run_at
                .cmp(&a.last_run_at)
                .then_with(|| a.name.cmp(&b.name))
        });
        out.truncate(limit);
        out
    }

    /// `memory_sources_run`: runs the sources (or the one named) and reports each.
    pub async fn sources_run(&self, req: MemorySourcesRunRequest) -> Result<MemorySourcesResponse> {
        let ws = workspace(req.workspace.as_deref())?;
        let root = root(req.root.as_deref())?;
        let root_key = root_key(root.as_deref());
        let all = discover(&self.home, root.as_deref());
        let mut files = all.clone();
        let named = req.name.as_deref().map(str::trim).filter(|n| !n.is_empty());
        if let Some(name) = named {
            files.retain(|f| f.name == name);
            if files.is_empty() {
                return Err(
                    Error::not_found(format!("no source {name:?} (see memory_sources)"))
                        .with_details(serde_json::json!({ "field": "name" })),
                );
            }
        }
        if let Some(r) = &root {
            self.remember_project(&ws, r).await?;
        }
        // Start them all, then collect: sources run in parallel, each in its runner.
        let mut running = Vec::new();
        for f in files {
            let ctx = self.run_ctx(&ws, root.as_deref(), &f.name);
            let me = self.clone();
            let code = f.code.clone();
            let started = Instant::now();
            let task = tokio::spawn(async move {
                let code = code?;
                run_body(&me, ctx, code).await
            });
            running.push((f, started, task));
        }
        let mut out = Vec::new();
        for (f, started, task) in running {
            let key = (ws.clone(), root_key.clone(), f.name.clone());
            let result = task
                .await
                .unwrap_or_else(|e| Err(format!("the source's run failed: {e}")));
            let (status, items, error, host) = match result {
                Ok(ran) => match self.apply(&key, Origin::Body, ran.writes).await {
                    Ok(n) => ("ok", n as i64, None, ran.runner.map(|r| (r, ran.events))),
                    Err(e) => (
                        "error",
                        0,
                        Some(format!("{}: storing its memories: {}", f.name, e.0.message)),
                        None,
                    ),
                },
                Err(e) => ("error", 0, Some(e), None),
            };
            if let Some(e) = &error {
                tracing::warn!("memory source {} ({ws}): {e}", f.path);
            }
            let s = SourceStatus {
                name: f.name.clone(),
                path: f.path.clone(),
                workspace: ws.clone(),
                root: root.as_ref().map(|p| p.display().to_string()),
                status: status.into(),
                last_run_at: Some(now()),
                duration_ms: Some(started.elapsed().as_millis() as i64),
                items,
                handlers: host
                    .as_ref()
                    .map(|(_, ev)| ev.iter().map(|(e, _)| e.clone()).collect())
                    .unwrap_or_default(),
                error,
            };
            let mut state = self.sources.lock().unwrap_or_else(|e| e.into_inner());
            if status == "ok" {
                // The new runner's handlers replace the old; a failed run keeps the old ones.
                match host {
                    Some((runner, events)) => {
                        let ctx = self.run_ctx(&ws, root.as_deref(), &f.name);
                        let code = f.code.clone().unwrap_or_default();
                        let tx = spawn_host(
                            self.clone(),
                            key.clone(),
                            ctx,
                            code,
                            events.clone(),
                            runner,
                        );
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
        if named.is_none() {
            // A source whose file is gone stops handling events, and is no longer listed.
            let mut state = self.sources.lock().unwrap_or_else(|e| e.into_inner());
            let gone = |k: &Key| k.0 == ws && k.1 == root_key && !all.iter().any(|f| f.name == k.2);
            state.hosts.retain(|k, _| !gone(k));
            state.statuses.retain(|k, _| !gone(k));
        }
        Ok(MemorySourcesResponse { sources: out })
    }

    /// Applies a run's or a handler's writes in one writer job: its forgets, then (for a body)
    /// the removal of the body's earlier memories for this root, then its stores. Returns how
    /// many memories the body now has, or how many the handler stored.
    async fn apply(&self, key: &Key, origin: Origin, writes: Writes) -> Result<usize> {
        let (ws, root_key, name) = key.clone();
        let max = self.config().memory.max_content_chars;
        let session = match &origin {
            Origin::Handler(s) => s.clone().unwrap_or_default(),
            Origin::Body => String::new(),
        };
        let body = matches!(origin, Origin::Body);
        let mut items = Vec::with_capacity(writes.stores.len());
        for mut req in writes.stores {
            req.workspace = Some(ws.clone());
            if body {
                req.persist = Some(true);
                req.session = None;
            }
            let mut m = check(&req, max, Some(name.clone()))?;
            m.source_root = root_key.clone();
            m.from_handler = !body;
            self.touch(Some(&m.session));
            items.push(m);
        }
        let forgets = writes.forgets;
        self.store
            .writer
            .run(move |ctx| {
                let db = ctx.db();
                let mut rids = Vec::new();
                for id in &forgets {
                    let rid: Option<i64> = db.query_opt(
                        "SELECT rid FROM memories WHERE id = ?1 AND workspace = ?2
                               AND (session = '' OR session = ?3)",
                        crate::db_params![id, &ws, &session],
                        |r| r.get(0),
                    )?;
                    rids.extend(rid);
                }
                delete_rids(db, &rids)?;
                if body {
                    let rids: Vec<i64> = db.query_map(
                        "SELECT rid FROM memories WHERE workspace = ?1 AND source = ?2
                               AND source_root = ?3 AND from_handler = 0 AND session = ''",
                        crate::db_params![&ws, &name, &root_key],
                        |r| r.get(0),
                    )?;
                    delete_rids(db, &rids)?;
                }
                let stored = items.len();
                for m in &items {
                    upsert(ctx, m)?;
                }
                if !body {
                    return Ok(stored);
                }
                let n: i64 = db.query_one(
                    "SELECT count(*) FROM memories WHERE workspace = ?1 AND source = ?2
                           AND source_root = ?3 AND from_handler = 0 AND session = ''",
                    crate::db_params![&ws, &name, &root_key],
                    |r| r.get(0),
                )?;
                Ok(n as usize)
            })
            .await
    }

    /// Records that sources ran for `root` in `ws`, to run them again at the next start.
    async fn remember_project(&self, ws: &str, root: &Path) -> Result<()> {
        let (ws, root) = (ws.to_string(), root.display().to_string());
        self.store
            .writer
            .run(move |ctx| {
                ctx.db().execute(
                    "INSERT INTO memory_projects(workspace, root, last_run_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT(workspace, root) DO UPDATE SET last_run_at = excluded.last_run_at",
                    crate::db_params![&ws, &root, now()],
                )?;
                Ok(())
            })
            .await
    }

    /// At start: the home's sources for `default`, then the sources of the projects this
    /// daemon ran them for (the most recent `MAX_PROJECTS_AT_START` whose root still
    /// exists), one project after another, so that their handlers are back.
    pub async fn rerun_sources_at_start(&self) {
        let req = MemorySourcesRunRequest::default();
        if let Err(e) = self.sources_run(req).await {
            tracing::warn!("running the memory sources at start: {e}");
        }
        let projects = self
            .store
            .readers
            .run_db(|db| {
                Ok(db.query_map(
                    "SELECT workspace, root FROM memory_projects
                         ORDER BY last_run_at DESC LIMIT ?1",
                    crate::db_params![MAX_PROJECTS_AT_START as i64],
                    |r| Ok((r.get::<String>(0)?, r.get::<String>(1)?)),
                )?)
            })
            .await
            .unwrap_or_default();
        for (ws, root) in projects {
            if !Path::new(&root).is_dir() {
                continue;
            }
            let req = MemorySourcesRunRequest {
                workspace: Some(ws.clone()),
                root: Some(root.clone()),
                ..Default::default()
            };
            if let Err(e) = self.sources_run(req).await {
                tracing::warn!("running the memory sources of {root} ({ws}) at start: {e}");
            }
        }
    }

    /// `memory_event`: the handlers of the workspace's (and root's) sources for `event`.
    pub async fn event(&self, req: MemoryEventRequest) -> Result<MemoryEventResponse> {
        let ws = workspace(req.workspace.as_deref())?;
        let root = root(req.root.as_deref())?;
        let root_key = root_key(root.as_deref());
        let event = req.event.trim().to_string();
        if event.is_empty() || event.len() > 100 {
            return Err(Error::invalid_field(
                "event",
                "event must be a name of 1 to 100 characters, e.g. \"file_opened\"",
            ));
        }
        let session = super::session(req.session.as_deref())?;
        self.touch(session.as_deref());
        let data = req.data.unwrap_or(Value::Null);
        let mut waiting = Vec::new();
        let mut loaded = Vec::new();
        {
            let state = self.sources.lock().unwrap_or_else(|e| e.into_inner());
            for ((w, r, name), host) in &state.hosts {
                if *w != ws || *r != root_key {
                    continue;
                }
                let names: Vec<&str> = host.events.iter().map(|(e, _)| e.as_str()).collect();
                loaded.push(format!("{name} ({})", names.join(", ")));
                if !names.contains(&event.as_str()) {
                    continue;
                }
                let (reply, rx) = oneshot::channel();
                let msg = EventMsg {
                    event: event.clone(),
                    data: data.clone(),
                    session: session.clone(),
                    reply,
                };
                match host.tx.try_send(msg) {
                    Ok(()) => waiting.push((name.clone(), rx)),
                    Err(_) => loaded.push(format!("{name} is busy: too many events queued")),
                }
            }
        }
        let (mut handled, mut stored, mut errors) = (0, 0, Vec::new());
        for (name, rx) in waiting {
            match rx.await {
                Ok(o) => {
                    handled += o.ran as i64;
                    stored += o.stored as i64;
                    errors.extend(o.errors);
                }
                Err(_) => errors.push(format!("{name}: its handlers stopped")),
            }
        }
        let reason = (handled == 0).then(|| {
            let place = match &root {
                Some(r) => format!("workspace {ws:?} and root {}", r.display()),
                None => format!("workspace {ws:?} without a root"),
            };
            if loaded.is_empty() {
                format!(
                    "no source with handlers is loaded for {place}: run the sources first (`moss mem sources-run` in the project, or memory_sources_run with its root)"
                )
            } else {
                format!(
                    "no loaded source handles {event:?} for {place}; loaded: {}",
                    loaded.join("; ")
                )
            }
        });
        Ok(MemoryEventResponse {
            event,
            handled,
            stored,
            errors,
            reason,
        })
    }
}

/// The key of a root in the sources' state and in `memories.source_root`: its path, or ''.
fn root_key(root: Option<&Path>) -> String {
    root.map(|p| p.display().to_string()).unwrap_or_default()
}
