//! The Lua sandbox a source runs in, and the API it sees.
//!
//! A source is Lua 5.4 with the `table`, `string`, `math`, `utf8` and `coroutine` libraries only:
//! no `io`, `os`, `package` or `debug`, and no `load`, `loadfile`, `dofile`, `require` or
//! `string.dump`. Its state has a memory cap, and every run (and every event handler call) a
//! time limit enforced by an instruction hook. Files are read only under the project root.
//!
//! The API: `store(content, opts)`, `recall(query_or_table)`, `forget(query_or_table)`,
//! `template(...)`, `moss.on(event, fn)`, `git.log{limit=…}`, `toml.parse(path)`,
//! `json.decode(s)`, `fs.read(path)`, `fs.exists(path)`, `config`, and `print` (to the daemon's
//! log). During a run, `store` collects; the run's memories replace the source's previous ones
//! in one transaction when it succeeds. In an event handler, `store` writes at once.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::{
    Function, HookTriggers, Lua, LuaOptions, LuaSerdeExt, StdLib, Table, Value as LuaValue,
    Variadic, VmState,
};
use moss_client::memory::{
    Contexts, MemoryForgetRequest, MemoryRecallRequest, MemoryStoreRequest, Recalled,
};
use serde_json::Value;

use super::{Memories, NewMemory, check};

/// Largest file `fs.read` and `toml.parse` read.
const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// Most commits `git.log` returns.
const MAX_COMMITS: usize = 1000;

/// What a source may use.
#[derive(Debug, Clone)]
pub struct Limits {
    pub memory_bytes: usize,
    pub time: Duration,
}

/// What a source runs against.
#[derive(Clone)]
pub struct Env {
    pub memories: Memories,
    pub handle: tokio::runtime::Handle,
    pub workspace: String,
    /// The project root, canonical; `None` for a run without one (no file access).
    pub root: Option<PathBuf>,
    pub name: String,
    pub limits: Limits,
}

/// Where `store` goes.
enum Sink {
    /// A run: collected, written when it succeeds.
    Buffer(Vec<NewMemory>),
    /// An event handler: written at once; memories without `persist` belong to `session`.
    Direct {
        session: Option<String>,
        stored: usize,
    },
}

/// One source's Lua state.
pub struct Host {
    lua: Lua,
    sink: Rc<RefCell<Sink>>,
    deadline: Rc<Cell<Instant>>,
    env: Env,
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

impl Host {
    /// A fresh sandboxed state with the API.
    pub fn new(env: Env) -> mlua::Result<Host> {
        let lua = Lua::new_with(
            StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::UTF8 | StdLib::COROUTINE,
            LuaOptions::new(),
        )?;
        lua.set_memory_limit(env.limits.memory_bytes)?;
        let deadline = Rc::new(Cell::new(Instant::now() + env.limits.time));
        let d = deadline.clone();
        let time = env.limits.time;
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(1000),
            move |_, _| {
                if Instant::now() > d.get() {
                    Err(lua_err(format!(
                        "time limit: the source ran longer than {} ms",
                        time.as_millis()
                    )))
                } else {
                    Ok(VmState::Continue)
                }
            },
        )?;
        let host = Host {
            lua,
            sink: Rc::new(RefCell::new(Sink::Buffer(Vec::new()))),
            deadline,
            env,
        };
        host.install()?;
        Ok(host)
    }

    fn install(&self) -> mlua::Result<()> {
        let lua = &self.lua;
        let g = lua.globals();
        for name in ["dofile", "loadfile", "load", "require", "collectgarbage"] {
            g.set(name, LuaValue::Nil)?;
        }
        if let Ok(string) = g.get::<Table>("string") {
            string.set("dump", LuaValue::Nil)?;
        }
        let name = self.env.name.clone();
        g.set(
            "print",
            lua.create_function(move |lua, args: Variadic<LuaValue>| {
                let tostring: Function = lua.globals().get("tostring")?;
                let mut parts = Vec::new();
                for a in args {
                    parts.push(tostring.call::<String>(a)?);
                }
                tracing::info!("[{name}] {}", parts.join("\t"));
                Ok(())
            })?,
        )?;

        // store(content, opts)
        let (sink, env) = (self.sink.clone(), self.env.clone());
        g.set(
            "store",
            lua.create_function(move |lua, (content, opts): (String, Option<Table>)| {
                let mut req = MemoryStoreRequest {
                    content,
                    workspace: Some(env.workspace.clone()),
                    ..Default::default()
                };
                if let Some(o) = opts {
                    req.context = match o.get::<LuaValue>("context")? {
                        LuaValue::Nil => None,
                        LuaValue::String(s) => Some(Contexts::One(s.to_str()?.to_string())),
                        LuaValue::Table(t) => Some(Contexts::Many(t.sequence_values::<String>().collect::<mlua::Result<_>>()?)),
                        other => return Err(lua_err(format!("store: opts.context must be a string or a list, not {}", other.type_name()))),
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
                let mut sink = sink.borrow_mut();
                match &mut *sink {
                    Sink::Buffer(items) => {
                        if req.persist == Some(false) {
                            return Err(lua_err("store: persist=false belongs in an event handler (a run has no session)"));
                        }
                        let m = check(&req, env.memories.config().memory.max_content_chars, Some(env.name.clone()))
                            .map_err(|e| lua_err(format!("store: {}", e.0.message)))?;
                        items.push(m);
                    }
                    Sink::Direct { session, stored } => {
                        if req.persist.is_none() && session.is_some() {
                            req.persist = Some(false);
                        }
                        req.session = session.clone();
                        env.handle
                            .block_on(env.memories.store_from_source(req, &env.name))
                            .map_err(|e| lua_err(format!("store: {}", e.0.message)))?;
                        *stored += 1;
                    }
                }
                Ok(())
            })?,
        )?;

        // recall(query_or_table)
        let (sink, env) = (self.sink.clone(), self.env.clone());
        g.set(
            "recall",
            lua.create_function(move |lua, q: LuaValue| {
                let mut req = MemoryRecallRequest {
                    workspace: Some(env.workspace.clone()),
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
                if let Sink::Direct { session, .. } = &*sink.borrow() {
                    req.session = session.clone();
                }
                let r = env
                    .handle
                    .block_on(env.memories.recall(req))
                    .map_err(|e| lua_err(format!("recall: {}", e.0.message)))?;
                recall_list(lua, &r.items)
            })?,
        )?;

        // forget(query_or_table)
        let env = self.env.clone();
        g.set(
            "forget",
            lua.create_function(move |_, q: LuaValue| {
                let mut req = MemoryForgetRequest {
                    workspace: Some(env.workspace.clone()),
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
                let r = env
                    .handle
                    .block_on(env.memories.forget(req))
                    .map_err(|e| lua_err(format!("forget: {}", e.0.message)))?;
                Ok(r.count)
            })?,
        )?;

        // template(...): concatenation, nil and empty parts skipped.
        g.set(
            "template",
            lua.create_function(|lua, args: Variadic<LuaValue>| {
                let tostring: Function = lua.globals().get("tostring")?;
                let mut out = String::new();
                for a in args {
                    if a.is_nil() {
                        continue;
                    }
                    out.push_str(&tostring.call::<String>(a)?);
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
        let root = self.env.root.clone();
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
        toml_t.set(
            "parse",
            lua.create_function(move |lua, path: String| {
                let text = read_file(r.as_deref(), &path)?;
                let v: toml::Value = toml::from_str(&text)
                    .map_err(|e| lua_err(format!("toml.parse({path:?}): {e}")))?;
                let json = serde_json::to_value(v).map_err(lua_err)?;
                lua.to_value(&json)
            })?,
        )?;
        g.set("toml", toml_t)?;
        let json_t = lua.create_table()?;
        json_t.set(
            "decode",
            lua.create_function(|lua, s: String| {
                let v: Value =
                    serde_json::from_str(&s).map_err(|e| lua_err(format!("json.decode: {e}")))?;
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
        config.set("workspace", self.env.workspace.clone())?;
        config.set("root", root.as_ref().map(|p| p.display().to_string()))?;
        config.set("source", self.env.name.clone())?;
        let mc = &self.env.memories.config().memory;
        let m = lua.create_table()?;
        m.set("max_content_chars", mc.max_content_chars)?;
        m.set("recency_half_life_days", mc.recency_half_life_days)?;
        config.set("memory", m)?;
        g.set("config", config)?;
        Ok(())
    }

    /// Runs a source's code: its `store` calls are collected.
    pub fn run(&self, code: &str, chunk: &str) -> mlua::Result<Vec<NewMemory>> {
        self.deadline.set(Instant::now() + self.env.limits.time);
        *self.sink.borrow_mut() = Sink::Buffer(Vec::new());
        self.lua.load(code).set_name(format!("@{chunk}")).exec()?;
        match std::mem::replace(&mut *self.sink.borrow_mut(), Sink::Buffer(Vec::new())) {
            Sink::Buffer(items) => Ok(items),
            Sink::Direct { .. } => Ok(Vec::new()),
        }
    }

    /// The events the source registered handlers for.
    pub fn events(&self) -> Vec<String> {
        let Ok(handlers) = self.lua.named_registry_value::<Table>("moss_handlers") else {
            return Vec::new();
        };
        let mut out: Vec<String> = handlers
            .pairs::<String, Table>()
            .filter_map(|p| p.ok().map(|(k, _)| k))
            .collect();
        out.sort();
        out
    }

    /// Calls the handlers of `event` with `data`; returns the memories they stored and the
    /// errors of those that failed.
    pub fn handle(
        &self,
        event: &str,
        data: &Value,
        session: Option<String>,
    ) -> (usize, Vec<String>) {
        let mut errors = Vec::new();
        *self.sink.borrow_mut() = Sink::Direct { session, stored: 0 };
        let handlers: Option<Table> = self
            .lua
            .named_registry_value::<Table>("moss_handlers")
            .ok()
            .and_then(|h| h.get::<Option<Table>>(event).ok().flatten());
        if let Some(list) = handlers {
            let arg = self.lua.to_value(data).unwrap_or(LuaValue::Nil);
            for f in list.sequence_values::<Function>().flatten() {
                self.deadline.set(Instant::now() + self.env.limits.time);
                if let Err(e) = f.call::<()>(arg.clone()) {
                    errors.push(describe(&e));
                }
            }
        }
        let stored = match std::mem::replace(&mut *self.sink.borrow_mut(), Sink::Buffer(Vec::new()))
        {
            Sink::Direct { stored, .. } => stored,
            Sink::Buffer(_) => 0,
        };
        (stored, errors)
    }
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

fn read_file(root: Option<&Path>, path: &str) -> mlua::Result<String> {
    let p = resolve(root, path)?;
    let len = std::fs::metadata(&p)
        .map_err(|e| lua_err(format!("{path:?}: {e}")))?
        .len();
    if len > MAX_FILE_BYTES {
        return Err(lua_err(format!(
            "{path:?} is {len} bytes; sources read files up to {MAX_FILE_BYTES}"
        )));
    }
    std::fs::read_to_string(&p).map_err(|e| lua_err(format!("{path:?}: {e}")))
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

fn git_log(root: Option<&Path>, limit: usize) -> mlua::Result<Vec<Commit>> {
    let root = root.ok_or_else(|| lua_err("git.log: this run has no project root"))?;
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args([
            "log",
            "-n",
            &limit.to_string(),
            "--name-only",
            "--format=%x1e%H%x1f%an%x1f%at%x1f%B%x1f",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| lua_err(format!("git.log: cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(lua_err(format!(
            "git.log: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("git failed")
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
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
