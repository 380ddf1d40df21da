//! Lua sources: the builtin ones, replacement on rerun, events, and the sandbox.

use std::path::Path;

use moss_tests::TestDaemon;
use serde_json::{Value, json};

use crate::reasoning::ok;

/// A project directory with `.moss/sources/` holding `files`.
fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".moss/sources")).unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn root(dir: &Path) -> String {
    dir.canonicalize().unwrap().display().to_string()
}

fn status<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no source {name}: {v}"))
}

async fn run(d: &TestDaemon, ws: &str, dir: &Path) -> Value {
    ok(
        d,
        "/memories/sources/run",
        json!({"workspace": ws, "root": root(dir)}),
    )
    .await
}

#[tokio::test]
async fn the_builtin_sources_read_toml_and_git_and_handle_events() {
    let d = TestDaemon::start().await;
    let dir = project(&[(
        ".moss/memory.toml",
        "[[memory]]\ncontent = \"User prefers tabs\"\ncontext = \"formatting\"\nslot = \"preferences\"\n\n[[memory]]\ncontent = \"Be concise\"\nslot = \"system\"\nweight = 2.0\n",
    )]);
    // A git repository with a fix commit and another.
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir.path())
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q"]);
    std::fs::write(dir.path().join("auth.py"), "x = 1\n").unwrap();
    git(&["add", "auth.py"]);
    git(&["commit", "-q", "-m", "Fix token refresh race in auth"]);
    std::fs::write(dir.path().join("README.md"), "hi\n").unwrap();
    git(&["add", "README.md"]);
    git(&["commit", "-q", "-m", "Add a readme"]);

    let r = run(&d, "proj", dir.path()).await;
    for name in ["git.lua", "session.lua", "toml.lua"] {
        assert_eq!(status(&r, name)["status"], "ok", "{r}");
        assert!(
            status(&r, name)["path"]
                .as_str()
                .unwrap()
                .starts_with("builtin:")
        );
    }
    assert_eq!(status(&r, "toml.lua")["items"], 2);
    assert_eq!(status(&r, "git.lua")["items"], 1);
    assert_eq!(
        status(&r, "session.lua")["handlers"],
        json!(["file_opened"])
    );

    let prefs = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "proj", "slot": "preferences"}),
    )
    .await;
    assert_eq!(prefs["items"][0]["content"], "User prefers tabs");
    assert_eq!(prefs["items"][0]["source"], "toml.lua");
    let fix = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "proj", "query": "about auth.py"}),
    )
    .await;
    assert_eq!(
        fix["items"][0]["content"], "Fix token refresh race in auth",
        "{fix}"
    );

    // Running again replaces, never duplicates.
    run(&d, "proj", dir.path()).await;
    let all = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "proj", "query": "tabs concise refresh", "limit": 100}),
    )
    .await;
    assert_eq!(all["items"].as_array().unwrap().len(), 3, "{all}");

    // The TOML template of the example, rendered from what toml.lua stored.
    let t = ok(
        &d,
        "/memories/render",
        json!({"workspace": "proj", "template": ["<system>\n", {"slot": "system"}, "</system>"]}),
    )
    .await;
    assert_eq!(t["text"], "<system>\n- Be concise\n</system>");

    // session.lua: an event stores what the session works on, for that session.
    let e = ok(&d, "/memories/events", json!({"workspace": "proj", "root": root(dir.path()), "event": "file_opened", "data": {"file": "src/cart.py"}, "session": "ed-1"})).await;
    assert_eq!(
        (e["handled"].as_i64(), e["stored"].as_i64()),
        (Some(1), Some(1)),
        "{e}"
    );
    let mine = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "proj", "query": "src/cart.py", "session": "ed-1"}),
    )
    .await;
    assert_eq!(mine["items"][0]["content"], "Working on src/cart.py");
    let others = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "proj", "query": "src/cart.py"}),
    )
    .await;
    assert_eq!(others["items"], json!([]));
    let listed = ok(
        &d,
        "/memories/sources",
        json!({"workspace": "proj", "root": root(dir.path())}),
    )
    .await;
    assert_eq!(status(&listed, "git.lua")["status"], "ok");
    d.stop().await;
}

#[tokio::test]
async fn a_project_source_uses_the_api_and_a_failure_writes_nothing() {
    let d = TestDaemon::start().await;
    let dir = project(&[
        (
            ".moss/sources/notes.lua",
            r#"
store("Deploys go through staging", {context = {"deploy", "infra/"}, weight = 2, tags = {"ops"}})
store("Rotate keys quarterly", {context = "security", slot = "rules", metadata = {by = "lead"}})
local data = json.decode('{"k": [1, 2, 3]}')
assert(#data.k == 3)
-- A run sees what was stored before it (its own stores land when it finishes).
local prompt = template("Rules:\n", recall({slot = "rules"}), nil, "")
assert(prompt == "Rules:\n- Never force-push main\n", prompt)
assert(("x" .. recall("force-push")):find("- Never force"), "a recall concatenates as bullets")
assert(config.workspace == "api")
"#,
        ),
        (
            ".moss/sources/broken.lua",
            "store('first', {})\nlocal x = nil\nx.field = 1\n",
        ),
        (".moss/sources/syntax.lua", "store('a', {}\n"),
    ]);
    ok(&d, "/memories", json!({"workspace": "api", "content": "Never force-push main", "context": "git", "slot": "rules"})).await;
    let r = run(&d, "api", dir.path()).await;
    assert_eq!(status(&r, "notes.lua")["status"], "ok", "{r}");
    assert_eq!(status(&r, "notes.lua")["items"], 2);
    let broken = status(&r, "broken.lua");
    assert_eq!(broken["status"], "error");
    assert!(
        broken["error"].as_str().unwrap().contains("broken.lua:3"),
        "{broken}"
    );
    assert!(
        status(&r, "syntax.lua")["error"]
            .as_str()
            .unwrap()
            .contains("syntax.lua"),
        "{r}"
    );
    // The failed run wrote nothing, not even its first store.
    let first = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "api", "query": "first"}),
    )
    .await;
    assert_eq!(first["items"], json!([]));
    let rules = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "api", "slot": "rules"}),
    )
    .await;
    assert_eq!(rules["items"][0]["metadata"], json!({"by": "lead"}));
    d.stop().await;
}

#[tokio::test]
async fn the_sandbox_stops_escapes_runaways_and_hogs() {
    let d = TestDaemon::start_with_config(Some(
        json!({"memory": {"lua_time_ms": 1000, "lua_memory_mb": 16}}),
    ))
    .await;
    let dir = project(&[
        (
            ".moss/sources/exec.lua",
            "os.execute('touch /tmp/moss-pwned')\n",
        ),
        (".moss/sources/io.lua", "local f = io.open('/etc/passwd')\n"),
        (
            ".moss/sources/passwd.lua",
            "store(fs.read('/etc/passwd'), {})\n",
        ),
        (
            ".moss/sources/escape.lua",
            "store(fs.read('../../../../etc/passwd'), {})\n",
        ),
        (".moss/sources/load.lua", "load('return 1')()\n"),
        (".moss/sources/loop.lua", "while true do end\n"),
        (
            ".moss/sources/hog.lua",
            "local t = {}\nfor i = 1, 1e9 do t[i] = string.rep('x', 1024) .. i end\n",
        ),
        (
            ".moss/sources/ok.lua",
            "store('still fine', {context = 'sandbox'})\n",
        ),
    ]);
    let r = run(&d, "box", dir.path()).await;
    let err = |name: &str| status(&r, name)["error"].as_str().unwrap_or("").to_string();
    assert!(
        err("exec.lua").contains("exec.lua:1"),
        "{}",
        err("exec.lua")
    );
    assert!(err("io.lua").contains("io.lua:1"), "{}", err("io.lua"));
    assert!(
        err("passwd.lua").contains("outside the project root"),
        "{}",
        err("passwd.lua")
    );
    assert!(
        err("escape.lua").contains("outside the project root")
            || err("escape.lua").contains("No such file"),
        "{}",
        err("escape.lua")
    );
    assert!(
        err("load.lua").contains("load.lua:1"),
        "{}",
        err("load.lua")
    );
    assert!(
        err("loop.lua").contains("time limit"),
        "{}",
        err("loop.lua")
    );
    assert!(err("hog.lua").contains("memory"), "{}", err("hog.lua"));
    assert!(!Path::new("/tmp/moss-pwned").exists());
    assert_eq!(status(&r, "ok.lua")["status"], "ok");
    // The daemon goes on serving.
    let v = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "box", "query": "still fine"}),
    )
    .await;
    assert_eq!(v["items"][0]["content"], "still fine");
    let (s, _) = d.call("GET", "/health", None).await;
    assert_eq!(s, 200);
    d.stop().await;
}

/// The daemon's child processes (Lua runners), by pid.
fn children() -> Vec<u32> {
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid …: comm may hold spaces, so split after its closing paren.
        let Some((_, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        if rest.split_whitespace().nth(1) == Some(me.as_str()) {
            out.push(e.file_name().to_string_lossy().parse().unwrap_or(0));
        }
    }
    out
}

/// Polls until no Lua runner of these sources of the project at `dir` is left (a killed one is
/// reaped in the background); panics after 10 s naming them. A runner's arguments name its
/// project and source.
async fn no_runner_left(dir: &Path, sources: &[&str]) {
    let root = root(dir);
    let cmdline = |pid: &u32| {
        let c = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let args: Vec<&str> = c.split('\0').collect();
        args.contains(&"--lua-runner")
            && args.contains(&root.as_str())
            && sources.iter().any(|s| args.contains(s))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if !children().iter().any(cmdline) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let left: Vec<String> = children()
        .iter()
        .filter(|p| cmdline(p))
        .map(|p| std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default())
        .collect();
    panic!("Lua runners left behind: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runaway_c_code_pcall_loops_and_coroutines_stop_at_the_time_limit() {
    let d = TestDaemon::start_with_config(Some(
        json!({"memory": {"lua_time_ms": 200, "lua_memory_mb": 16}}),
    ))
    .await;
    let dir = project(&[
        (
            ".moss/sources/rep.lua",
            "store('a', {})\nlocal s = string.rep('', 1e18)\n",
        ),
        (
            ".moss/sources/pattern.lua",
            "string.find(string.rep('a', 40), string.rep('a*', 40) .. 'b')\n",
        ),
        (
            ".moss/sources/coroutine.lua",
            "coroutine.wrap(function() while true do end end)()\n",
        ),
        (
            ".moss/sources/pcall.lua",
            "store('b', {})\nwhile true do pcall(function() while true do end end) end\n",
        ),
        (
            ".moss/sources/handler.lua",
            "moss.on('tick', function() store('c', {}) while true do pcall(function() while true do end end) end end)\n",
        ),
    ]);
    let started = std::time::Instant::now();
    let r = run(&d, "box", dir.path()).await;
    // In parallel, each stopped at 200 ms and a grace of 120 ms: far under the old 12 s.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    for name in ["rep.lua", "pattern.lua", "coroutine.lua", "pcall.lua"] {
        let s = status(&r, name);
        assert_eq!(s["status"], "error", "{s}");
        assert!(s["error"].as_str().unwrap().contains("time limit"), "{s}");
    }
    assert_eq!(status(&r, "handler.lua")["handlers"], json!(["tick"]));
    // A handler past its limit is stopped the same way, and writes nothing; the next event
    // gets a fresh runner and is stopped again, not queued behind the first.
    for _ in 0..2 {
        let started = std::time::Instant::now();
        let e = ok(
            &d,
            "/memories/events",
            json!({"workspace": "box", "root": root(dir.path()), "event": "tick"}),
        )
        .await;
        assert!(
            started.elapsed() < std::time::Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(e["stored"], 0, "{e}");
        assert!(
            e["errors"][0].as_str().unwrap().contains("time limit"),
            "{e}"
        );
    }
    // Nothing the stopped runs stored was kept.
    for q in ["a", "b", "c"] {
        let (_, v) = d
            .call(
                "POST",
                "/memories/forget",
                Some(json!({"workspace": "box", "query": q, "dry_run": true})),
            )
            .await;
        assert_eq!(v["count"].as_i64().unwrap_or(0), 0, "{q}: {v}");
    }
    no_runner_left(
        dir.path(),
        &[
            "rep.lua",
            "pattern.lua",
            "coroutine.lua",
            "pcall.lua",
            "handler.lua",
        ],
    )
    .await;
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_cap_counts_what_the_host_builds_for_a_source() {
    let d = TestDaemon::start_with_config(Some(
        json!({"memory": {"lua_time_ms": 2000, "lua_memory_mb": 16}}),
    ))
    .await;
    let dir = project(&[
        (
            ".moss/sources/template.lua",
            "local s = string.rep('x', 1024 * 1024)\nlocal t = {}\nfor i = 1, 200 do t[i] = s end\nlocal out = template(table.unpack(t))\n",
        ),
        (
            ".moss/sources/json.lua",
            "local v = json.decode('[' .. string.rep('1,', 2e6) .. '1]')\n",
        ),
        (
            ".moss/sources/stores.lua",
            "for i = 1, 30000 do store('memory number ' .. i, {context = 'c' .. i}) end\n",
        ),
        (
            ".moss/sources/big.lua",
            "local s = string.rep('y', 7000)\nfor i = 1, 5000 do store(s .. i, {}) end\n",
        ),
    ]);
    let r = run(&d, "cap", dir.path()).await;
    let err = |name: &str| status(&r, name)["error"].as_str().unwrap_or("").to_string();
    assert!(
        err("template.lua").contains("memory cap"),
        "{}",
        err("template.lua")
    );
    assert!(
        err("json.lua").contains("memory cap"),
        "{}",
        err("json.lua")
    );
    assert!(
        err("stores.lua").contains("at most 10000"),
        "{}",
        err("stores.lua")
    );
    assert!(err("big.lua").contains("memory cap"), "{}", err("big.lua"));
    let (s, _) = d.call("GET", "/health", None).await;
    assert_eq!(s, 200);
    no_runner_left(
        dir.path(),
        &["template.lua", "json.lua", "stores.lua", "big.lua"],
    )
    .await;
    d.stop().await;
}

#[tokio::test]
async fn fs_read_refuses_what_is_not_a_regular_file() {
    let d = TestDaemon::start_with_config(Some(json!({"memory": {"lua_time_ms": 2000}}))).await;
    let dir = project(&[(".moss/sources/fifo.lua", "store(fs.read('pipe'), {})\n")]);
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("pipe"))
        .status()
        .unwrap();
    assert!(made.success());
    let started = std::time::Instant::now();
    let r = run(&d, "fifo", dir.path()).await;
    assert!(
        status(&r, "fifo.lua")["error"]
            .as_str()
            .unwrap()
            .contains("not a regular file"),
        "{r}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    d.stop().await;
}

/// A git repository at `dir` with one commit per message, each touching its own file.
fn git_repo(dir: &Path, messages: &[&str]) {
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["init", "-q"]);
    for (i, m) in messages.iter().enumerate() {
        let file = format!("file{i}.py");
        std::fs::write(dir.join(&file), format!("x = {i}\n")).unwrap();
        git(&["add", &file]);
        git(&["commit", "-q", "-m", m]);
    }
}

#[tokio::test]
async fn git_log_runs_no_program_a_repository_configures() {
    let d = TestDaemon::start().await;
    let dir = project(&[]);
    git_repo(dir.path(), &["Fix the login redirect"]);
    // A commit with a signature, so that a log honouring log.showSignature calls gpg.program.
    let git_out = |args: &[&str], input: Option<&str>| {
        use std::io::Write;
        let mut c = std::process::Command::new("git")
            .arg("-C")
            .arg(dir.path())
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        if let Some(i) = input {
            c.stdin.take().unwrap().write_all(i.as_bytes()).unwrap();
        }
        drop(c.stdin.take());
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let tree = git_out(&["rev-parse", "HEAD^{tree}"], None);
    let parent = git_out(&["rev-parse", "HEAD"], None);
    let commit = format!(
        "tree {tree}\nparent {parent}\nauthor T <t@example.com> 1700000000 +0000\ncommitter T <t@example.com> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n AAAA\n -----END PGP SIGNATURE-----\n\nFix the signed thing\n"
    );
    let id = git_out(
        &["hash-object", "-t", "commit", "-w", "--stdin"],
        Some(&commit),
    );
    git_out(&["update-ref", "HEAD", &id], None);
    let marker = dir.path().join("pwned");
    let script = dir.path().join("evil.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch {}\nexit 1\n", marker.display()),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let s = script.display();
    let mut config = std::fs::OpenOptions::new()
        .append(true)
        .open(dir.path().join(".git/config"))
        .unwrap();
    use std::io::Write;
    write!(
        config,
        "[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {s}\n[core]\n\tfsmonitor = {s}\n\tpager = {s}\n[diff]\n\texternal = {s}\n"
    )
    .unwrap();
    drop(config);
    // What a plain `git log` does with this repository: it runs the program.
    let _ = std::process::Command::new("git")
        .arg("-C")
        .arg(dir.path())
        .args(["log", "-n", "1"])
        .output()
        .unwrap();
    assert!(
        marker.exists(),
        "the fixture's config names a program a plain git log runs"
    );
    std::fs::remove_file(&marker).unwrap();

    let r = run(&d, "repo", dir.path()).await;
    assert_eq!(status(&r, "git.lua")["status"], "ok", "{r}");
    assert_eq!(status(&r, "git.lua")["items"], 2, "{r}");
    assert!(
        !marker.exists(),
        "git.lua ran a program the repository's config names"
    );
    d.stop().await;
}

#[tokio::test]
async fn two_projects_sources_keep_each_others_memories() {
    let d = TestDaemon::start().await;
    let (a, b) = (project(&[]), project(&[]));
    git_repo(a.path(), &["Fix the cart total"]);
    git_repo(b.path(), &["Fix the invoice rounding"]);
    let recall = |q: &'static str| {
        let d = &d;
        async move {
            ok(d, "/memories/recall", json!({"query": q})).await["items"]
                .as_array()
                .unwrap()
                .len()
        }
    };
    let ra = run(&d, "default", a.path()).await;
    let rb = run(&d, "default", b.path()).await;
    assert_eq!(status(&ra, "git.lua")["status"], "ok", "{ra}");
    assert_eq!(status(&rb, "git.lua")["status"], "ok", "{rb}");
    assert_eq!(
        recall("cart total").await,
        1,
        "project b's run erased project a's memory"
    );
    assert_eq!(recall("invoice rounding").await, 1);
    // A rerun replaces only its own project's memories.
    run(&d, "default", a.path()).await;
    assert_eq!(recall("invoice rounding").await, 1);
    assert_eq!(recall("cart total").await, 1);
    d.stop().await;
}

#[tokio::test]
async fn a_failing_run_or_handler_writes_nothing_not_even_its_forgets() {
    let d = TestDaemon::start().await;
    ok(
        &d,
        "/memories",
        json!({"workspace": "f", "content": "keep me", "slot": "keep"}),
    )
    .await;
    let dir = project(&[
        (
            ".moss/sources/run.lua",
            "assert(forget({slot = 'keep'}) == 1)\nstore('half done', {})\nerror('boom')\n",
        ),
        (
            ".moss/sources/handler.lua",
            "moss.on('go', function() forget({slot = 'keep'}) store('handled', {}) error('bang') end)\nmoss.on('go', function() store('second handler', {}) end)\n",
        ),
    ]);
    let r = run(&d, "f", dir.path()).await;
    assert!(
        status(&r, "run.lua")["error"]
            .as_str()
            .unwrap()
            .contains("boom"),
        "{r}"
    );
    let e = ok(
        &d,
        "/memories/events",
        json!({"workspace": "f", "root": root(dir.path()), "event": "go"}),
    )
    .await;
    assert_eq!(
        (e["handled"].as_i64(), e["stored"].as_i64()),
        (Some(2), Some(1)),
        "{e}"
    );
    assert!(e["errors"][0].as_str().unwrap().contains("bang"), "{e}");
    let kept = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "f", "slot": "keep"}),
    )
    .await;
    assert_eq!(kept["items"][0]["content"], "keep me", "{kept}");
    for q in ["half done", "handled"] {
        let v = ok(
            &d,
            "/memories/forget",
            json!({"workspace": "f", "query": q, "dry_run": true}),
        )
        .await;
        assert_eq!(v["count"], 0, "{q}: {v}");
    }
    let v = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "f", "query": "second handler"}),
    )
    .await;
    assert_eq!(v["items"][0]["content"], "second handler", "{v}");
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handlers_and_their_memories_survive_a_restart_and_a_deleted_source_stops() {
    let d = TestDaemon::start().await;
    let dir = project(&[(
        ".moss/sources/notes.lua",
        "store('a body fact', {context = 'facts'})\nmoss.on('note', function(ev) store(ev.text, {context = 'facts', persist = true}) end)\n",
    )]);
    async fn note(d: &TestDaemon, dir: &Path, text: &str) -> Value {
        let body =
            json!({"workspace": "r", "root": root(dir), "event": "note", "data": {"text": text}});
        d.call("POST", "/memories/events", Some(body)).await.1
    }
    run(&d, "r", dir.path()).await;
    let e = note(&d, dir.path(), "a handler fact").await;
    assert_eq!(e["stored"], 1, "{e}");
    let home = d.stop_keeping_home().await;
    let d = TestDaemon::start_in(home, None).await;
    // The project's sources run again at start, in the background: its handler comes back.
    let handled = moss_tests::wait_for(
        "the handler to come back",
        std::time::Duration::from_secs(5),
        || async {
            let e = note(&d, dir.path(), "after the restart").await;
            (e["handled"] == 1).then_some(e)
        },
    )
    .await;
    assert_eq!(handled["stored"], 1, "{handled}");
    let facts = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "r", "context": "facts", "limit": 10}),
    )
    .await;
    let mut contents: Vec<&str> = facts["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    contents.sort();
    assert_eq!(
        contents,
        ["a body fact", "a handler fact", "after the restart"],
        "{facts}"
    );
    // A deleted source stops handling events at the next run, and the reply says why.
    std::fs::remove_file(dir.path().join(".moss/sources/notes.lua")).unwrap();
    run(&d, "r", dir.path()).await;
    let e = note(&d, dir.path(), "too late").await;
    assert_eq!(e["handled"], 0, "{e}");
    assert!(
        e["reason"]
            .as_str()
            .unwrap()
            .contains("session.lua (file_opened)"),
        "{e}"
    );
    d.stop().await;
}
