//! The Lua sandbox a source runs in, and the API it sees. It runs inside a runner process
//! ([`super::runner`]), never in the daemon: the daemon answers its `recall` and `forget`
//! through a [`Link`] and writes what it stored once the run or handler has succeeded.
//!
//! A source is Lua 5.4 with the `table`, `string`, `math`, `utf8` and `coroutine` libraries only:
//! no `io`, `os`, `package` or `debug`, and no `load`, `loadfile`, `dofile`, `require` or
//! `string.dump`. Its state has a memory cap that also counts what the host builds for it
//! (`template` results, decoded JSON, the memories it stored); an instruction hook stops Lua code
//! at the time limit, and the daemon kills the runner when C code (a pattern, `string.rep`) or a
//! `pcall` loop keeps going past it. Files are read only under the project root.
//!
//! The API: `store(content, opts)`, `recall(query_or_table)`, `forget(query_or_table)`,
//! `template(...)`, `moss.on(event, fn)`, `git.log{limit=…}`, `toml.parse(path)`,
//! `json.decode(s)`, `fs.read(path)`, `fs.exists(path)`, `config`, and `print` (to the daemon's
//! log). `store` and `forget` are collected: the daemon applies them in one transaction when the
//! run (or the handler) succeeds, and drops them when it fails.

use std::cell::{Cell, RefCell};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::{
    Function, HookTriggers, Lua, LuaOptions, LuaSerdeExt, StdLib, Table, Value as LuaValue,
    Variadic, VmState,
};
use moss_client::memory::{
    Contexts, MemoryForgetRequest, MemoryForgetResponse, MemoryRecallRequest, MemoryRecallResponse,
    MemoryStoreRequest, Recalled,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::check;

/// Largest file `fs.read` and `toml.parse` read.
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Most commits `git.log` returns, and the most bytes of log it reads.
const MAX_COMMITS: usize = 1000;
const MAX_GIT_LOG_BYTES: u64 = 8 * 1024 * 1024;
/// Most memories one run (or one event) stores.
pub const MAX_STORES: usize = 10_000;
/// How many bytes a decoded JSON value may take per byte of its text, at most: what
/// `json.decode` charges before decoding.
const JSON_EXPANSION: usize = 8;

/// What a run knows of where it runs and what it may use.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunCtx {
    pub workspace: String,
    /// The project root, canonical; `None` for a run without one (no file access).
    pub root: Option<PathBuf>,
    pub name: String,
    pub memory_bytes: usize,
    pub time_ms: u64,
    pub max_content_chars: usize,
    pub recency_half_life_days: f64,
}

impl RunCtx {
    pub fn time(&self) -> Duration {
        Duration::from_millis(self.time_ms)
    }
}

/// A question the sandbox asks the daemon.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "call", rename_all = "snake_case")]
pub enum Call {
    Recall(MemoryRecallRequest),
    /// Always a dry run: the daemon says what would go, the source's writes remove it later.
    Forget(MemoryForgetRequest),
}

/// The daemon's answer to a [`Call`].
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    Recall(MemoryRecallResponse),
    Forget(MemoryForgetResponse),
    Error(String),
}

/// How the sandbox asks the daemon: one call, one answer.
pub type Link = Rc<dyn Fn(Call) -> Answer>;

/// What a run or an event's handlers want written: applied together when they succeed.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Writes {
    pub stores: Vec<MemoryStoreRequest>,
    /// Ids of memories `forget` removes.
    pub forgets: Vec<String>,
}

/// What the memories collected so far cost.
#[derive(Default)]
struct Pending {
    writes: Writes,
    bytes: usize,
    /// The session of the event being handled (`None` during a run).
    session: Option<String>,
    in_handler: bool,
}

/// One source's Lua state.
pub struct Host {
    lua: Lua,
    pending: Rc<RefCell<Pending>>,
    deadline: Rc<Cell<Instant>>,
    ctx: RunCtx,
}

/// A Lua error as a source's status shows it: the first line, which names file and line.
pub fn describe(e: &mlua::Error) -> String {
    let text = match e {
        mlua::Error::MemoryError(_) => {
            "out of memory: the source went over its memory cap".to_string()
        }
        other => other.to_string(),
    };
    let first = text.lines().next().unwrap_or("").trim();
    first
        .strip_prefix("runtime error: ")
        .or_else(|| first.strip_prefix("syntax error: "))
        .unwrap_or(first)
        .to_string()
}

fn lua_err(message: impl std::fmt::Display) -> mlua::Error {
    mlua::Error::runtime(message)
}

/// The message of a source stopped at its time limit.
pub fn time_limit_message(time: Duration) -> String {
    format!(
        "time limit: the source ran longer than {} ms and was stopped",
        time.as_millis()
    )
}

impl Host {
    /// A fresh sandboxed state with the API; `link` answers `recall` and `forget`.
    pub fn new(ctx: RunCtx, link: Link) -> mlua::Result<Host> {
        let lua = Lua::new_with(
            StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::UTF8 | StdLib::COROUTINE,
            LuaOptions::new(),
        )?;
        lua.set_memory_limit(ctx.memory_bytes)?;
        let deadline = Rc::new(Cell::new(Instant::now() + ctx.time()));
        let d = deadline.clone();
        let time = ctx.time();
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(1000),
            move |_, _| {
                if Instant::now() > d.get() {
                    Err(lua_err(time_limit_message(time)))
                } else {
                    Ok(VmState::Continue)
                }
            },
        )?;
        let host = Host {
            lua,
            pending: Rc::default(),
            deadline,
            ctx,
        };
        host.install(link)?;
        Ok(host)
    }

    /// Memory the state may still take.
    fn room(lua: &Lua, cap: usize, pending: &Pending) -> usize {
        cap.saturating_sub(lua.used_memory())
            .saturating_sub(pending.bytes)
    }

    fn install(&self, link: Link) -> mlua::Result<()> {
        let lua = &self.lua;
        let g = lua.globals();
        for name in ["dofile", "loadfile", "load", "require", "collectgarbage"] {
            g.set(name, LuaValue::Nil)?;
        }
        if let Ok(string) = g.get::<Table>("string") {
            string.set("dump", LuaValue::Nil)?;
        }
        let name = self.ctx.name.clone();
        g.set(
            "print",
            lua.create_function(move |lua, args: Variadic<LuaValue>| {
                let tostring: Function = lua.globals().get("tostring")?;
                let mut parts = Vec::new();
                for a in args {
                    parts.push(tostring.call::<String>(a)?);
                }
                let mut line = parts.join("\t");
                crate::budget::cut_text(&mut line, 2000);
                super::runner::log(&format!("[{name}] {line}"));
                Ok(())
            })?,
        )?;

        // A call to the daemon pauses the clock: the source is not charged for the daemon's
        // time.
        let ask = {
            let deadline = self.deadline.clone();
            move |call: Call| {
                let started = Instant::now();
                let answer = link(call);
                deadline.set(deadline.get() + started.elapsed());
                answer
            }
        };
        let ask = Rc::new(ask);

        // store(content, opts)
        let (pending, ctx) = (self.pending.clone(), self.ctx.clone());
        g.set(
            "store",
            lua.create_function(move |lua, (content, opts): (String, Option<Table>)| {
                let mut req = MemoryStoreRequest {
                    content,
                    workspace: Some(ctx.workspace.clone()),
                    ..Default::default()
                };
                if let Some(o) = opts {
                    req.context = match o.get::<LuaValue>("context")? {
                        LuaValue::Nil => None,
                        LuaValue::String(s) => Some(Contexts::One(s.to_str()?.to_string())),
                        LuaValue::Table(t) => Some(Contexts::Many(
                            t.sequence_values::<String>().collect::<mlua::Result<_>>()?,
                        )),
                        other => {
                            return Err(lua_err(format!(
                                "store: opts.context must be a string or a list, not {}",
                                other.type_name()
                            )));
                        }
                    };
                    req.weight = o.get("weight")?;
                    req.slot = o.get("slot")?;
                    req.persist = o.get("persist")?;
                    req.tags = o.get::<Option<Vec<String>>>("tags")?;
                    let meta: LuaValue = o.get("metadata")?;
                    if !meta.is_nil() {
                        req.metadata = Some(lua.from_value::<Value>(meta)?);
                    }
                }
                let mut p = pending.borrow_mut();
                if p.in_handler {
                    if req.persist.is_none() && p.session.is_some() {
                        req.persist = Some(false);
                    }
                    req.session = p.session.clone();
                } else if req.persist == Some(false) {
                    return Err(lua_err(
                        "store: persist=false belongs in an event handler (a run has no session)",
                    ));
                }
                check(&req, ctx.max_content_chars, Some(ctx.name.clone()))
                    .map_err(|e| lua_err(format!("store: {}", e.0.message)))?;
                if p.writes.stores.len() >= MAX_STORES {
                    return Err(lua_err(format!(
                        "store: one run stores at most {MAX_STORES} memories"
                    )));
                }
                let cost = serde_json::to_string(&req).map(|s| s.len()).unwrap_or(0);
                if cost > Self::room(lua, ctx.memory_bytes, &p) {
                    return Err(lua_err(
                        "store: the memories this run stored go over its memory cap",
                    ));
                }
                p.bytes += cost;
                p.writes.stores.push(req);
                Ok(())
            })?,
        )?;

        // recall(query_or_table)
        let (pending, ctx, a) = (self.pending.clone(), self.ctx.clone(), ask.clone());
        g.set(
            "recall",
            lua.create_function(move |lua, q: LuaValue| {
                let mut req = MemoryRecallRequest {
                    workspace: Some(ctx.workspace.clone()),
                    ..Default::default()
                };
                match q {
                    LuaValue::String(s) => req.query = Some(s.to_str()?.to_string()),
                    LuaValue::Table(t) => {
                        req.query = t.get("query")?;
                        req.slot = t.get("slot")?;
                        req.context = t.get("context")?;
                        req.limit = t.get("limit")?;
                    }
                    other => {
                        return Err(lua_err(format!(
                            "recall: give a query string or a table, not {}",
                            other.type_name()
                        )));
                    }
                }
                req.session = pending.borrow().session.clone();
                match a(Call::Recall(req)) {
                    Answer::Recall(r) => recall_list(lua, &r.items),
                    Answer::Error(e) => Err(lua_err(format!("recall: {e}"))),
                    Answer::Forget(_) => Err(lua_err("recall: the daemon answered another call")),
                }
            })?,
        )?;

        // forget(query_or_table): what it matches goes when the run succeeds.
        let (pending, ctx, a) = (self.pending.clone(), self.ctx.clone(), ask.clone());
        g.set(
            "forget",
            lua.create_function(move |_, q: LuaValue| {
                let mut req = MemoryForgetRequest {
                    workspace: Some(ctx.workspace.clone()),
                    ..Default::default()
                };
                match q {
                    LuaValue::String(s) => req.query = Some(s.to_str()?.to_string()),
                    LuaValue::Table(t) => {
                        req.id = t.get("id")?;
                        req.query = t.get("query")?;
                        req.slot = t.get("slot")?;
                        req.context = t.get("context")?;
                        req.confirm = t.get("confirm")?;
                    }
                    other => {
                        return Err(lua_err(format!(
                            "forget: give a query string or a table, not {}",
                            other.type_name()
                        )));
                    }
                }
                req.session = pending.borrow().session.clone();
                req.dry_run = Some(true);
                match a(Call::Forget(req)) {
                    Answer::Forget(r) => {
                        let mut p = pending.borrow_mut();
                        let ids = r.removed.into_iter().map(|f| f.id);
                        p.writes.forgets.extend(ids);
                        Ok(r.count)
                    }
                    Answer::Error(e) => Err(lua_err(format!("forget: {e}"))),
                    Answer::Recall(_) => Err(lua_err("forget: the daemon answered another call")),
                }
            })?,
        )?;

        // template(...): concatenation, nil and empty parts skipped; its result counts
        // against the memory cap before it is built.
        let (pending, cap) = (self.pending.clone(), self.ctx.memory_bytes);
        g.set(
            "template",
            lua.create_function(move |lua, args: Variadic<LuaValue>| {
                let tostring: Function = lua.globals().get("tostring")?;
                let mut out = String::new();
                for a in args {
                    if a.is_nil() {
                        continue;
                    }
                    let part = tostring.call::<mlua::LuaString>(a)?;
                    let part = part.as_bytes();
                    if out.len() + part.len() > Self::room(lua, cap, &pending.borrow()) {
                        return Err(lua_err(
                            "template: its result would go over the source's memory cap",
                        ));
                    }
                    out.push_str(&String::from_utf8_lossy(&part));
                }
                Ok(out)
            })?,
        )?;

        // moss.on(event, fn)
        let moss = lua.create_table()?;
        let handlers = lua.create_table()?;
        lua.set_named_registry_value("moss_handlers", handlers)?;
        moss.set(
            "on",
            lua.create_function(|lua, (event, f): (String, Function)| {
                let handlers: Table = lua.named_registry_value("moss_handlers")?;
                let list: Table = match handlers.get::<Option<Table>>(event.as_str())? {
                    Some(t) => t,
                    None => {
                        let t = lua.create_table()?;
                        handlers.set(event.as_str(), &t)?;
                        t
                    }
                };
                list.push(f)?;
                Ok(())
            })?,
        )?;
        g.set("moss", moss)?;

        // fs, toml, json, git
        let root = self.ctx.root.clone();
        let fs = lua.create_table()?;
        let r = root.clone();
        fs.set(
            "read",
            lua.create_function(move |_, path: String| read_file(r.as_deref(), &path))?,
        )?;
        let r = root.clone();
        fs.set(
            "exists",
            lua.create_function(move |_, path: String| {
                Ok(resolve(r.as_deref(), &path).is_ok_and(|p| p.exists()))
            })?,
        )?;
        g.set("fs", fs)?;
        let toml_t = lua.create_table()?;
        let r = root.clone();
        let (pending, cap) = (self.pending.clone(), self.ctx.memory_bytes);
        toml_t.set(
            "parse",
            lua.create_function(move |lua, path: String| {
                let text = read_file(r.as_deref(), &path)?;
                charge_decode(lua, cap, &pending.borrow(), "toml.parse", text.len())?;
                let v: toml::Value = toml::from_str(&text)
                    .map_err(|e| lua_err(format!("toml.parse({path:?}): {e}")))?;
                let json = serde_json::to_value(v).map_err(lua_err)?;
                lua.to_value(&json)
            })?,
        )?;
        g.set("toml", toml_t)?;
        let json_t = lua.create_table()?;
        let (pending, cap) = (self.pending.clone(), self.ctx.memory_bytes);
        json_t.set(
            "decode",
            lua.create_function(move |lua, s: mlua::LuaString| {
                let s = s.as_bytes();
                charge_decode(lua, cap, &pending.borrow(), "json.decode", s.len())?;
                let v: Value =
                    serde_json::from_slice(&s).map_err(|e| lua_err(format!("json.decode: {e}")))?;
                lua.to_value(&v)
            })?,
        )?;
        g.set("json", json_t)?;
        let git = lua.create_table()?;
        let r = root.clone();
        git.set(
            "is_repo",
            lua.create_function(move |_, ()| {
                Ok(r.as_deref().is_some_and(|r| r.join(".git").exists()))
            })?,
        )?;
        let r = root.clone();
        git.set(
            "log",
            lua.create_function(move |lua, opts: Option<Table>| {
                let limit = match &opts {
                    Some(o) => o.get::<Option<usize>>("limit")?.unwrap_or(100),
                    None => 100,
                }
                .clamp(1, MAX_COMMITS);
                let commits = git_log(r.as_deref(), limit)?;
                let mut items = Vec::with_capacity(commits.len());
                for c in commits {
                    items.push(lua.to_value(&c)?);
                }
                let mut i = 0;
                lua.create_function_mut(move |_, ()| {
                    let next = items.get(i).cloned().unwrap_or(LuaValue::Nil);
                    i += 1;
                    Ok(next)
                })
            })?,
        )?;
        g.set("git", git)?;

        let config = lua.create_table()?;
        config.set("workspace", self.ctx.workspace.clone())?;
        config.set("root", root.as_ref().map(|p| p.display().to_string()))?;
        config.set("source", self.ctx.name.clone())?;
        let m = lua.create_table()?;
        m.set("max_content_chars", self.ctx.max_content_chars)?;
        m.set("recency_half_life_days", self.ctx.recency_half_life_days)?;
        config.set("memory", m)?;
        g.set("config", config)?;
        Ok(())
    }

    /// Runs a source's code; returns what it wants written.
    pub fn run(&self, code: &str, chunk: &str) -> mlua::Result<Writes> {
        self.deadline.set(Instant::now() + self.ctx.time());
        *self.pending.borrow_mut() = Pending::default();
        self.lua.load(code).set_name(format!("@{chunk}")).exec()?;
        Ok(std::mem::take(&mut *self.pending.borrow_mut()).writes)
    }

    /// The events the source registered handlers for, with how many each.
    pub fn events(&self) -> Vec<(String, usize)> {
        let Ok(handlers) = self.lua.named_registry_value::<Table>("moss_handlers") else {
            return Vec::new();
        };
        let mut out: Vec<(String, usize)> = handlers
            .pairs::<String, Table>()
            .filter_map(|p| p.ok().map(|(k, t)| (k, t.raw_len())))
            .collect();
        out.sort();
        out
    }

    /// Calls the handlers of `event` with `data`: the writes of those that succeeded, how many
    /// ran, and the errors of those that failed (whose writes are dropped).
    pub fn handle(
        &self,
        event: &str,
        data: &Value,
        session: Option<String>,
    ) -> (Writes, usize, Vec<String>) {
        let mut errors = Vec::new();
        *self.pending.borrow_mut() = Pending {
            session,
            in_handler: true,
            ..Pending::default()
        };
        let handlers: Option<Table> = self
            .lua
            .named_registry_value::<Table>("moss_handlers")
            .ok()
            .and_then(|h| h.get::<Option<Table>>(event).ok().flatten());
        let mut ran = 0;
        if let Some(list) = handlers {
            let arg = self.lua.to_value(data).unwrap_or(LuaValue::Nil);
            for f in list.sequence_values::<Function>().flatten() {
                ran += 1;
                self.deadline.set(Instant::now() + self.ctx.time());
                let (stores, forgets, bytes) = {
                    let p = self.pending.borrow();
                    (p.writes.stores.len(), p.writes.forgets.len(), p.bytes)
                };
                if let Err(e) = f.call::<()>(arg.clone()) {
                    errors.push(describe(&e));
                    let mut p = self.pending.borrow_mut();
                    p.writes.stores.truncate(stores);
                    p.writes.forgets.truncate(forgets);
                    p.bytes = bytes;
                }
            }
        }
        let writes = std::mem::take(&mut *self.pending.borrow_mut()).writes;
        (writes, ran, errors)
    }
}

/// Refuses to decode `len` bytes of text when what it could grow into does not fit the cap.
fn charge_decode(
    lua: &Lua,
    cap: usize,
    pending: &Pending,
    what: &str,
    len: usize,
) -> mlua::Result<()> {
    if len.saturating_mul(JSON_EXPANSION) > Host::room(lua, cap, pending) {
        return Err(lua_err(format!(
            "{what}: a {len}-byte document is too large for the source's memory cap"
        )));
    }
    Ok(())
}

/// A recall's result as Lua sees it: a list of tables whose `tostring` and `..` render bullet
/// lines (`- content`), so `"Context:\n" .. recall(…)` reads as the prompt it builds.
fn recall_list(lua: &Lua, items: &[Recalled]) -> mlua::Result<Table> {
    let list = lua.create_table()?;
    for r in items {
        let t = lua.create_table()?;
        t.set("id", r.memory.id.clone())?;
        t.set("content", r.memory.content.clone())?;
        t.set("weight", r.memory.weight)?;
        t.set("slot", r.memory.slot.clone())?;
        t.set("contexts", r.memory.contexts.clone())?;
        t.set("score", r.score)?;
        list.push(t)?;
    }
    let rendered = super::render::bullets(items);
    let mt = lua.create_table()?;
    let text = rendered.clone();
    mt.set(
        "__tostring",
        lua.create_function(move |_, _: LuaValue| Ok(text.clone()))?,
    )?;
    mt.set(
        "__concat",
        lua.create_function(|lua, (a, b): (LuaValue, LuaValue)| {
            let tostring: Function = lua.globals().get("tostring")?;
            Ok(format!(
                "{}{}",
                tostring.call::<String>(a)?,
                tostring.call::<String>(b)?
            ))
        })?,
    )?;
    list.set_metatable(Some(mt))?;
    Ok(list)
}

/// `path` inside the project root: relative paths are taken from the root, and the result
/// (after following symlinks) must stay under it.
fn resolve(root: Option<&Path>, path: &str) -> mlua::Result<PathBuf> {
    let root = root.ok_or_else(|| {
        lua_err(format!(
            "{path:?}: this run has no project root, so no file can be read"
        ))
    })?;
    let p = Path::new(path);
    let full = if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    };
    let canon = full
        .canonicalize()
        .map_err(|e| lua_err(format!("{path:?}: {e}")))?;
    if !canon.starts_with(root) {
        return Err(lua_err(format!(
            "{path:?} is outside the project root; sources read only under it"
        )));
    }
    Ok(canon)
}

/// Reads a regular file under the root, up to [`MAX_FILE_BYTES`]. The file is opened without
/// blocking and checked after opening, so a FIFO or a device (or a file swapped for one) is
/// refused instead of waited on.
fn read_file(root: Option<&Path>, path: &str) -> mlua::Result<String> {
    let p = resolve(root, path)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options
        .open(&p)
        .map_err(|e| lua_err(format!("{path:?}: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| lua_err(format!("{path:?}: {e}")))?;
    if !meta.is_file() {
        return Err(lua_err(format!(
            "{path:?} is not a regular file; sources read regular files only"
        )));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(lua_err(format!(
            "{path:?} is {} bytes; sources read files up to {MAX_FILE_BYTES}",
            meta.len()
        )));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| lua_err(format!("{path:?}: {e}")))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(lua_err(format!(
            "{path:?} is over {MAX_FILE_BYTES} bytes; sources read files up to that"
        )));
    }
    String::from_utf8(bytes).map_err(|_| lua_err(format!("{path:?} is not UTF-8 text")))
}

/// One commit, as `git.log` yields it.
#[derive(serde::Serialize)]
struct Commit {
    hash: String,
    message: String,
    author: String,
    time: i64,
    files: Vec<String>,
}

/// Settings that make `git log` run no program a repository's configuration names: the
/// system and user configuration are not read; the repository's own cannot be skipped, so
/// every key that runs a program during a log (signature checks, external diffs, text
/// conversion, pagers, the file system monitor, fetches of missing objects) is overridden on
/// the command line, which wins over any file.
const GIT_SAFE_CONFIG: &[&str] = &[
    "core.fsmonitor=false",
    "core.pager=cat",
    "core.hooksPath=/dev/null",
    "log.showSignature=false",
    "gpg.program=false",
    "gpg.ssh.program=false",
    "gpg.x509.program=false",
    "diff.external=",
    "log.mailmap=false",
    "protocol.allow=never",
    "fetch.recurseSubmodules=false",
    "core.sshCommand=false",
];

fn git_command(root: &Path) -> std::process::Command {
    let mut cmd = std::process::Command::new("git");
    for var in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_EXTERNAL_DIFF",
        "GIT_PAGER",
        "PAGER",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_EXEC_PATH",
        "GIT_ASKPASS",
        "SSH_ASKPASS",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_SYSTEM", "/dev/null")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_OPTIONAL_LOCKS", "0");
    for c in GIT_SAFE_CONFIG {
        cmd.arg("-c").arg(c);
    }
    cmd.arg("--no-pager").arg("-C").arg(root);
    cmd
}

fn git_log(root: Option<&Path>, limit: usize) -> mlua::Result<Vec<Commit>> {
    let root = root.ok_or_else(|| lua_err("git.log: this run has no project root"))?;
    let mut child = git_command(root)
        .args([
            "log",
            "-n",
            &limit.to_string(),
            "--no-show-signature",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
            "--no-mailmap",
            "--name-only",
            "--format=%x1e%H%x1f%an%x1f%at%x1f%B%x1f",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| lua_err(format!("git.log: cannot run git: {e}")))?;
    let mut out = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        stdout
            .take(MAX_GIT_LOG_BYTES)
            .read_to_end(&mut out)
            .map_err(|e| lua_err(format!("git.log: {e}")))?;
    }
    // Past the bound git may still be writing: stop it before reading its errors.
    let truncated = out.len() as u64 >= MAX_GIT_LOG_BYTES;
    if truncated {
        let _ = child.kill();
        if let Some(cut) = out.iter().rposition(|b| *b == 0x1e) {
            out.truncate(cut);
        }
    }
    let mut err = Vec::new();
    if let Some(stderr) = child.stderr.take() {
        let _ = stderr.take(64 * 1024).read_to_end(&mut err);
    }
    let status = child.wait().map_err(|e| lua_err(format!("git.log: {e}")))?;
    if !status.success() && !truncated {
        return Err(lua_err(format!(
            "git.log: {}",
            String::from_utf8_lossy(&err)
                .lines()
                .next()
                .unwrap_or("git failed")
        )));
    }
    let text = String::from_utf8_lossy(&out);
    let mut commits = Vec::new();
    for record in text.split('\u{1e}').filter(|r| !r.trim().is_empty()) {
        let f: Vec<&str> = record.splitn(5, '\u{1f}').collect();
        if f.len() < 5 {
            continue;
        }
        commits.push(Commit {
            hash: f[0].trim().to_string(),
            author: f[1].to_string(),
            time: f[2].trim().parse().unwrap_or(0),
            message: f[3].trim().to_string(),
            files: f[4]
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect(),
        });
    }
    Ok(commits)
}
