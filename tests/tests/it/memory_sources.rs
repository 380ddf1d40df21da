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
        json!({"memory": {"lua_time_ms": 300, "lua_memory_mb": 16}}),
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
