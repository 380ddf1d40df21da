//! Lua sources run in runner processes, never in the daemon: `mossd --lua-runner`, one process
//! per source run, kept alive while the source has event handlers.
//!
//! Why a process and not a thread: a thread cannot be stopped from outside, and Lua's C
//! functions (a backtracking pattern, `string.rep("", 1e18)`) and a `pcall` that swallows the
//! time-limit error all run past an instruction hook. A process can be killed, with everything
//! it started (it leads its own process group, `git` included), and the kernel bounds what it
//! takes: its address space (`RLIMIT_AS`: the Lua cap and room for the host's own allocations)
//! and its CPU time (`RLIMIT_CPU`, a backstop should the daemon be gone). Nothing a source does
//! can grow the daemon, block one of its threads, or outlive its time limit by more than
//! [`grace`].
//!
//! The protocol is one JSON object per line. The daemon starts the runner and sends `start`
//! (the source's code and [`RunCtx`]); the runner answers `hello` first, then asks `call`s
//! (`recall`, and `forget` as a dry run) that the daemon answers, logs `print` lines, and ends
//! the run with `done`: its error, or the writes to apply and the events it handles. For a
//! source with handlers, each `event` gets its own `done`. The daemon applies writes only
//! after a `done` without error; a runner that is killed writes nothing.

use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

use super::Memories;
use super::lua::{Answer, Call, Host, Link, RunCtx, Writes, describe, time_limit_message};

/// The argument that makes `mossd` a runner.
pub const RUNNER_FLAG: &str = "--lua-runner";
/// Runner and daemon must be the same build of this protocol and of the sandbox: the
/// version, and a hash of the two files that make the runner (a test binary that finds a
/// `mossd` built before a change to them is told to rebuild it).
const PROTOCOL: &str = concat!("moss-lua-runner/1 ", env!("CARGO_PKG_VERSION"));
const SANDBOX_HASH: u64 = fnv1a(
    include_bytes!("runner.rs"),
    fnv1a(include_bytes!("lua.rs"), 0xcbf29ce484222325),
);

/// FNV-1a, in a const context.
const fn fnv1a(bytes: &[u8], mut hash: u64) -> u64 {
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(0x100000001b3);
        i += 1;
    }
    hash
}

fn protocol() -> String {
    format!("{PROTOCOL} {SANDBOX_HASH:016x}")
}
/// Room the runner's address space keeps beyond twice the Lua cap, for the process itself.
const ADDRESS_SPACE_HEADROOM: u64 = 128 * 1024 * 1024;
/// How long a runner may take to say hello.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// From the daemon to a runner.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum ToRunner {
    Start {
        ctx: RunCtx,
        code: String,
        chunk: String,
    },
    Event {
        event: String,
        data: Value,
        session: Option<String>,
    },
    Answer {
        answer: Answer,
    },
}

/// From a runner to the daemon.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
enum FromRunner {
    Hello { protocol: String },
    Call { call: Call },
    Log { line: String },
    Done(Done),
}

/// The end of a run or of an event's handlers.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Done {
    /// The run's error (file and line); `None` when it succeeded.
    pub error: Option<String>,
    /// What to write: nothing when the run failed; for an event, what its successful
    /// handlers stored and forgot.
    pub writes: Writes,
    /// After a run: the events it handles, with how many handlers each.
    pub events: Vec<(String, usize)>,
    /// After an event: the handlers that ran, and the errors of those that failed.
    pub ran: usize,
    pub errors: Vec<String>,
}

/// How long past its time limit a source runs before its runner is killed: the instruction
/// hook stops Lua code at the limit itself, with its file and line; this is for the rest.
pub fn grace(time: Duration) -> Duration {
    Duration::from_millis(100) + time / 10
}

// ---- the runner's side ----

fn send(msg: &FromRunner) {
    let mut out = std::io::stdout().lock();
    let mut line = serde_json::to_vec(msg).expect("messages serialize");
    line.push(b'\n');
    // A closed pipe means the daemon is gone: the runner ends at its next read.
    let _ = out.write_all(&line).and_then(|()| out.flush());
}

fn receive() -> Option<ToRunner> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => serde_json::from_str(&line).ok(),
    }
}

/// A `print` line, to the daemon's log.
pub fn log(line: &str) {
    send(&FromRunner::Log {
        line: line.to_string(),
    });
}

/// Bounds what this process may take: its address space (the Lua cap twice over, for the
/// host's copies, and room for the process), CPU time for the next `units` time limits, and
/// its life (it dies with the daemon).
fn limit_self(ctx: &RunCtx, units: usize) {
    #[cfg(target_os = "linux")]
    {
        use rustix::process::{Resource, Rlimit, Signal, set_parent_process_death_signal};
        let _ = set_parent_process_death_signal(Some(Signal::KILL));
        let page = rustix::param::page_size() as u64;
        let mapped = std::fs::read_to_string("/proc/self/statm")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
            * page;
        let cap = mapped + 2 * ctx.memory_bytes as u64 + ADDRESS_SPACE_HEADROOM;
        let _ = rustix::process::setrlimit(
            Resource::As,
            Rlimit {
                current: Some(cap),
                maximum: Some(cap),
            },
        );
    }
    cpu_limit(ctx, units);
}

/// `RLIMIT_CPU` at the CPU time used so far plus `units` time limits and a second: only the
/// soft limit moves (the hard one stays open, so it can move again for the next event).
fn cpu_limit(ctx: &RunCtx, units: usize) {
    #[cfg(unix)]
    {
        use rustix::process::{Resource, Rlimit};
        let used = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
        let budget = ctx.time() * units.max(1) as u32;
        let secs = used.tv_sec as u64 + budget.as_secs() + 2;
        let _ = rustix::process::setrlimit(
            Resource::Cpu,
            Rlimit {
                current: Some(secs),
                maximum: None,
            },
        );
    }
}

/// The runner's main: one source, its run, then its events until the daemon hangs up.
pub fn runner_main() -> std::process::ExitCode {
    send(&FromRunner::Hello {
        protocol: protocol(),
    });
    let Some(ToRunner::Start { ctx, code, chunk }) = receive() else {
        return std::process::ExitCode::FAILURE;
    };
    limit_self(&ctx, 1);
    let link: Link = std::rc::Rc::new(|call| {
        send(&FromRunner::Call { call });
        match receive() {
            Some(ToRunner::Answer { answer }) => answer,
            _ => Answer::Error("the daemon did not answer".into()),
        }
    });
    let host = match Host::new(ctx.clone(), link) {
        Ok(h) => h,
        Err(e) => {
            send(&FromRunner::Done(Done {
                error: Some(describe(&e)),
                ..Done::default()
            }));
            return std::process::ExitCode::SUCCESS;
        }
    };
    let (error, writes, events) = match host.run(&code, &chunk) {
        Ok(w) => (None, w, host.events()),
        Err(e) => (Some(describe(&e)), Writes::default(), Vec::new()),
    };
    let stay = error.is_none() && !events.is_empty();
    send(&FromRunner::Done(Done {
        error,
        writes,
        events: events.clone(),
        ..Done::default()
    }));
    if !stay {
        return std::process::ExitCode::SUCCESS;
    }
    while let Some(msg) = receive() {
        let ToRunner::Event {
            event,
            data,
            session,
        } = msg
        else {
            continue;
        };
        let handlers = events
            .iter()
            .find(|(e, _)| *e == event)
            .map_or(1, |(_, n)| *n);
        cpu_limit(&ctx, handlers);
        let (writes, ran, errors) = host.handle(&event, &data, session);
        send(&FromRunner::Done(Done {
            writes,
            ran,
            errors,
            ..Done::default()
        }));
    }
    std::process::ExitCode::SUCCESS
}

// ---- the daemon's side ----

/// The program runners are started from: `MOSS_LUA_RUNNER` when set, this executable when it
/// is `mossd`, else a `mossd` beside it or one directory up (a test binary in
/// `target/debug/deps/` finds `target/debug/mossd`).
fn program() -> Result<std::path::PathBuf, String> {
    if let Some(p) = std::env::var_os("MOSS_LUA_RUNNER") {
        return Ok(p.into());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find mossd: {e}"))?;
    if exe.file_stem().is_some_and(|s| s == "mossd") {
        return Ok(exe);
    }
    let dir = exe.parent().unwrap_or(std::path::Path::new("."));
    for candidate in [dir.join("mossd"), dir.parent().unwrap_or(dir).join("mossd")] {
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    Err(format!(
        "cannot find mossd to run Lua sources (looked beside {}); set MOSS_LUA_RUNNER to its path",
        exe.display()
    ))
}

/// A runner process, from the daemon's side. Dropping it kills the runner and what it started.
pub struct Runner {
    child: tokio::process::Child,
    stdin: ChildStdin,
    out: BufReader<ChildStdout>,
    /// The last bytes the runner wrote to stderr (a Rust abort says why there).
    stderr: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    ctx: RunCtx,
    /// Longest message read from it: its memory cap and room for framing.
    max_message: usize,
}

impl std::fmt::Debug for Runner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runner")
            .field("pid", &self.child.id())
            .field("source", &self.ctx.name)
            .finish()
    }
}

impl Runner {
    /// Starts a runner for `ctx`'s source and sends it its code.
    pub async fn start(ctx: RunCtx, code: String, chunk: String) -> Result<Runner, String> {
        let program = program()?;
        let mut cmd = tokio::process::Command::new(&program);
        // The rest of the arguments only say, in `ps`, which source a runner runs.
        let root = ctx
            .root
            .as_deref()
            .map_or("-".into(), |r| r.display().to_string());
        cmd.arg(RUNNER_FLAG)
            .args([ctx.workspace.as_str(), root.as_str(), ctx.name.as_str()])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start the Lua runner {}: {e}", program.display()))?;
        let stdin = child.stdin.take().expect("piped");
        let out = BufReader::new(child.stdout.take().expect("piped"));
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        if let Some(mut err) = child.stderr.take() {
            let tail = stderr.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                    t.extend_from_slice(&buf[..n]);
                    let excess = t.len().saturating_sub(4096);
                    t.drain(..excess);
                }
            });
        }
        let max_message = ctx.memory_bytes + 1024 * 1024;
        let mut runner = Runner {
            child,
            stdin,
            out,
            stderr,
            ctx,
            max_message,
        };
        match tokio::time::timeout(START_TIMEOUT, runner.read()).await {
            Ok(Ok(FromRunner::Hello { protocol: p })) if p == protocol() => {}
            Ok(Ok(FromRunner::Hello { protocol: p })) => {
                return Err(format!(
                    "the Lua runner {} is another build ({p}; this daemon is {}): rebuild it (cargo build --bins)",
                    program.display(),
                    protocol()
                ));
            }
            Ok(Err(e)) => return Err(runner.ended(e).await),
            _ => {
                return Err(format!(
                    "the Lua runner {} did not start",
                    program.display()
                ));
            }
        }
        let start = ToRunner::Start {
            ctx: runner.ctx.clone(),
            code,
            chunk,
        };
        runner.write(&start).await?;
        Ok(runner)
    }

    async fn write(&mut self, msg: &ToRunner) -> Result<(), String> {
        let mut line = serde_json::to_vec(msg).map_err(|e| e.to_string())?;
        line.push(b'\n');
        self.stdin
            .write_all(&line)
            .await
            .map_err(|e| format!("the Lua runner stopped reading: {e}"))
    }

    /// The next message; `Err` with what went wrong when there is none.
    async fn read(&mut self) -> Result<FromRunner, String> {
        let mut line = Vec::new();
        let n = (&mut self.out)
            .take(self.max_message as u64)
            .read_until(b'\n', &mut line)
            .await
            .map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("ended".into());
        }
        if !line.ends_with(b"\n") {
            return Err(format!("sent a message over {} bytes", self.max_message));
        }
        serde_json::from_slice(&line).map_err(|e| format!("sent a bad message: {e}"))
    }

    /// Why the runner stopped, once it has: killed by the CPU limit or the address-space
    /// limit reads as the source's time or memory limit.
    async fn ended(&mut self, what: String) -> String {
        self.kill();
        let status = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        let stderr = {
            let t = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
            String::from_utf8_lossy(&t).into_owned()
        };
        if stderr.contains("memory allocation") || stderr.contains("out of memory") {
            return "out of memory: the source went over its memory cap".into();
        }
        #[cfg(unix)]
        if let Ok(Ok(status)) = &status {
            use std::os::unix::process::ExitStatusExt;
            match status.signal() {
                Some(s) if s == libc::SIGXCPU => return time_limit_message(self.ctx.time()),
                Some(s) if s == libc::SIGABRT || s == libc::SIGSEGV => {
                    return "out of memory: the source went over its memory cap".into();
                }
                _ => {}
            }
        }
        let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
        match last {
            Some(l) => format!("the Lua runner {what}: {}", l.trim()),
            None => format!("the Lua runner {what}"),
        }
    }

    /// Reads until the run (or the event) is done, answering its calls; kills the runner
    /// when it goes past `handlers` time limits and the grace. The daemon's time answering a
    /// call is not the source's.
    pub async fn done(&mut self, memories: &Memories, handlers: usize) -> Result<Done, String> {
        let limit = self.ctx.time() * handlers.max(1) as u32;
        let mut deadline = Instant::now() + limit + grace(self.ctx.time());
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = match tokio::time::timeout(left, self.read()).await {
                Err(_) => {
                    self.kill();
                    let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
                    return Err(format!("{}: {}", self.ctx.name, time_limit_message(limit)));
                }
                Ok(Err(e)) => return Err(self.ended(e).await),
                Ok(Ok(m)) => m,
            };
            match msg {
                FromRunner::Done(d) => return Ok(d),
                FromRunner::Log { line } => tracing::info!("{line}"),
                FromRunner::Hello { .. } => {}
                FromRunner::Call { call } => {
                    let started = Instant::now();
                    let answer = serve(memories, &self.ctx, call).await;
                    deadline += started.elapsed();
                    self.write(&ToRunner::Answer { answer }).await?;
                }
            }
        }
    }

    /// Sends an event to the source's handlers; [`Runner::done`] reads their outcome.
    pub async fn event(
        &mut self,
        event: &str,
        data: &Value,
        session: Option<String>,
    ) -> Result<(), String> {
        self.write(&ToRunner::Event {
            event: event.to_string(),
            data: data.clone(),
            session,
        })
        .await
    }

    /// Kills the runner and everything in its process group.
    pub fn kill(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self
            .child
            .id()
            .and_then(|p| rustix::process::Pid::from_raw(p as i32))
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.child.start_kill();
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Answers a runner's call, in the source's workspace whatever it asked for.
async fn serve(memories: &Memories, ctx: &RunCtx, call: Call) -> Answer {
    match call {
        Call::Recall(mut req) => {
            req.workspace = Some(ctx.workspace.clone());
            match memories.recall(req).await {
                Ok(r) => Answer::Recall(r),
                Err(e) => Answer::Error(e.0.message),
            }
        }
        Call::Forget(mut req) => {
            req.workspace = Some(ctx.workspace.clone());
            req.dry_run = Some(true);
            match memories.forget(req).await {
                Ok(r) => Answer::Forget(r),
                Err(e) => Answer::Error(e.0.message),
            }
        }
    }
}
