//! The daemon's lifecycle through the real `moss` and `mossd` binaries: autostart on the first
//! command, `moss daemon status|stop|restart`, `MOSS_NO_AUTOSTART`, start failures, concurrent
//! first commands, and `moss service install` without a service manager.
//!
//! Each test has its own `MOSS_HOME`, `HOME` and free port. Timings are printed (run with
//! `--nocapture` to see them).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Instant;

use serde_json::Value;

/// `mossd` next to `moss`, built once if this test run did not build it (Cargo builds only the
/// binaries of the package under test).
pub(crate) fn mossd() -> &'static Path {
    static MOSSD: OnceLock<PathBuf> = OnceLock::new();
    MOSSD.get_or_init(|| {
        let moss = PathBuf::from(env!("CARGO_BIN_EXE_moss"));
        let mossd = moss.with_file_name("mossd");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        // The workspace's feature set, the one `cargo build` and `cargo test` use: `-p
        // moss-daemon` alone resolves other features and rebuilds half the dependencies.
        build.args(["build", "--workspace", "--bins"]);
        if moss.components().any(|c| c.as_os_str() == "release") {
            build.arg("--release");
        }
        let status = build.status().expect("cargo runs");
        assert!(status.success(), "building mossd failed");
        assert!(
            mossd.exists(),
            "{} missing after the build",
            mossd.display()
        );
        mossd
    })
}

pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A user with an empty home, a Moss home and an address nobody listens on. Stops whatever
/// daemon it started when dropped.
pub(crate) struct Env {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) addr: String,
    /// Prepended to PATH (stand-ins for service managers).
    bin: Option<PathBuf>,
}

impl Env {
    pub(crate) fn new() -> Env {
        mossd();
        Env {
            dir: tempfile::tempdir().unwrap(),
            addr: format!("127.0.0.1:{}", free_port()),
            bin: None,
        }
    }

    pub(crate) fn home(&self) -> PathBuf {
        self.dir.path().join("moss-home")
    }

    fn user_home(&self) -> PathBuf {
        self.dir.path().join("user")
    }

    pub(crate) fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_moss"));
        c.args(args)
            .env("MOSS_ADDR", &self.addr)
            .env("MOSS_HOME", self.home())
            .env("HOME", self.user_home())
            // Not NO_COLOR: output is piped, and that alone must keep it plain.
            .env_remove("NO_COLOR")
            .env_remove("MOSS_TOKEN")
            .env_remove("MOSS_NO_AUTOSTART")
            .env_remove("XDG_CONFIG_HOME")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(bin) = &self.bin {
            let path = std::env::var_os("PATH").unwrap_or_default();
            let mut dirs = vec![bin.clone()];
            dirs.extend(std::env::split_paths(&path));
            c.env("PATH", std::env::join_paths(dirs).unwrap());
        }
        c
    }

    pub(crate) fn moss(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("moss runs")
    }

    pub(crate) fn answers(&self) -> bool {
        std::net::TcpStream::connect(&self.addr).is_ok()
    }

    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.home().join("mossd.log")).unwrap_or_default()
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if self.answers() {
            let _ = self.moss(&["daemon", "stop"]);
        }
    }
}

pub(crate) fn ok_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "moss failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Whether `pid` runs (zombies count as gone).
fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, r)| !r.trim().starts_with('Z'))
    })
}

#[test]
fn first_command_starts_the_daemon_then_status_restart_and_stop_manage_it() {
    let env = Env::new();
    assert!(!env.answers());

    let began = Instant::now();
    let out = env.moss(&["list"]);
    let first = began.elapsed();
    let listed = ok_json(&out);
    assert!(listed["items"].is_array(), "{listed}");
    println!("autostart: first command took {first:?}");
    assert!(env.answers(), "no daemon after the first command");
    assert!(
        env.log().contains("listening on http://"),
        "the daemon's output goes to $MOSS_HOME/mossd.log:\n{}",
        env.log()
    );
    assert!(env.home().join("token").exists());

    let began = Instant::now();
    let _ = ok_json(&env.moss(&["list"]));
    println!("warm command took {:?}", began.elapsed());

    let status = ok_json(&env.moss(&["daemon", "status"]));
    assert_eq!(status["address"], env.addr.as_str(), "{status}");
    assert_eq!(status["version"], env!("CARGO_PKG_VERSION"), "{status}");
    let pid = status["pid"].as_u64().expect("pid");
    assert!(alive(pid), "{status}");
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    assert_eq!(exe.file_name().unwrap(), "mossd", "{}", exe.display());
    let home = env.home().canonicalize().unwrap();
    let db = PathBuf::from(status["db_path"].as_str().unwrap());
    assert!(db.starts_with(&home), "{status}");
    assert!(db.exists(), "{status}");
    assert!(status["uptime_seconds"].as_u64().unwrap() < 120, "{status}");
    let table = env.moss(&["daemon", "status", "--format", "table"]);
    let table_text = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.status.success() && table_text.contains(&pid.to_string()),
        "{table_text}"
    );
    assert!(
        !table_text.contains('\x1b'),
        "no colour when stdout is not a terminal: {table_text:?}"
    );

    let restarted = ok_json(&env.moss(&["daemon", "restart"]));
    let new_pid = restarted["pid"].as_u64().expect("pid");
    assert_ne!(new_pid, pid, "restart kept the old process");
    assert!(!alive(pid), "the old daemon {pid} still runs");
    assert!(alive(new_pid));

    let began = Instant::now();
    let stopped = ok_json(&env.moss(&["daemon", "stop"]));
    let stop_took = began.elapsed();
    println!(
        "daemon stop took {stop_took:?} (daemon says {})",
        stopped["seconds"]
    );
    assert_eq!(stopped["stopped"], true, "{stopped}");
    assert_eq!(stopped["pid"].as_u64(), Some(new_pid), "{stopped}");
    assert!(!env.answers(), "the port still answers after stop");
    assert!(!alive(new_pid), "mossd {new_pid} still runs after stop");
    assert!(
        env.log().contains("shutting down: POST /shutdown"),
        "{}",
        env.log()
    );

    // status never starts a daemon; a second stop has nothing to do.
    let out = env.moss(&["daemon", "status"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).starts_with("[UNAVAILABLE]") && stderr(&out).contains("moss daemon start"),
        "{}",
        stderr(&out)
    );
    assert!(!env.answers());
    let again = ok_json(&env.moss(&["daemon", "stop"]));
    assert_eq!(again["was_running"], false, "{again}");

    // An explicit start works the same way.
    let started = ok_json(&env.moss(&["daemon", "start"]));
    assert!(started["pid"].as_u64().is_some_and(alive), "{started}");
}

#[test]
fn no_autostart_leaves_the_daemon_off_and_says_how_to_start_it() {
    let env = Env::new();
    let out = env
        .cmd(&["fetch", "--name", "x"])
        .env("MOSS_NO_AUTOSTART", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.starts_with("[UNAVAILABLE]"), "{err}");
    for hint in ["MOSS_NO_AUTOSTART", "moss daemon start", "mossd --addr"] {
        assert!(err.contains(hint), "no {hint:?} in: {err}");
    }
    assert!(
        !env.answers(),
        "a daemon was started despite MOSS_NO_AUTOSTART"
    );
    assert!(!env.home().join("mossd.log").exists());
}

#[test]
fn a_failed_start_names_the_log_quotes_it_and_says_how_to_debug() {
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(env.home().join("config.json"), "{ not json").unwrap();
    let out = env.moss(&["list"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    let log = env.home().join("mossd.log");
    assert!(err.starts_with("[UNAVAILABLE]"), "{err}");
    assert!(err.contains(&log.display().to_string()), "{err}");
    assert!(err.contains("config.json"), "the log's last lines: {err}");
    assert!(
        err.contains(&format!("mossd --addr {}", env.addr)),
        "the foreground command: {err}"
    );
    assert!(!env.answers());
}

#[test]
fn twenty_concurrent_first_commands_start_exactly_one_daemon() {
    let env = Env::new();
    let began = Instant::now();
    let children: Vec<_> = (0..20)
        .map(|_| env.cmd(&["fetch", "--name", "missing"]).spawn().unwrap())
        .collect();
    let outputs: Vec<Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect();
    println!("20 concurrent first commands took {:?}", began.elapsed());
    for out in &outputs {
        // Every call reached the daemon: the capsule is missing, the daemon is not.
        assert!(stderr(out).starts_with("[NOT_FOUND]"), "{}", stderr(out));
    }
    let log = env.log();
    let starts = log.matches(" starts ").count();
    assert_eq!(starts, 1, "mossd started {starts} times:\n{log}");
    let announced = log
        .lines()
        .filter(|l| l.starts_with("listening on http://"))
        .count();
    assert_eq!(announced, 1, "{log}");
    let status = ok_json(&env.moss(&["daemon", "status"]));
    let pid = status["pid"].as_u64().unwrap();
    let holder = std::fs::read_to_string(env.home().join("moss.db.lock")).unwrap();
    assert!(
        holder.contains(&format!("pid {pid},")),
        "lock holder {holder:?} vs status pid {pid}"
    );
    let mossds = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let p = e.path();
            std::fs::read_link(p.join("exe")).is_ok_and(|x| x.ends_with("mossd"))
                && std::fs::read(p.join("environ")).is_ok_and(|env_bytes| {
                    let needle = format!("MOSS_HOME={}", env.home().display());
                    env_bytes
                        .split(|b| *b == 0)
                        .any(|kv| kv == needle.as_bytes())
                })
        })
        .count();
    assert_eq!(mossds, 1, "mossd processes serving this home");
}

#[test]
fn service_install_writes_the_unit_with_the_real_binary_and_autostart_defers_to_it() {
    let mut env = Env::new();
    // A stand-in systemctl that records its calls: the unit is inactive, and starting it fails
    // the way it does without a user manager. (The real one must never see this test.)
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let calls = bin.join("systemctl.calls");
    let shim = bin.join("systemctl");
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\ncase \"$*\" in\n  *is-active*) echo inactive; exit 3 ;;\n\
             esac\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n",
            calls.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&shim, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    env.bin = Some(bin);
    let mossd = mossd().canonicalize().unwrap();
    let unit = env.user_home().join(".config/systemd/user/moss.service");

    let out = env.moss(&["service", "install", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains(&format!(
            "ExecStart={} --addr {}",
            mossd.display(),
            env.addr
        )),
        "{printed}"
    );
    assert!(!printed.contains('@'), "a placeholder is left: {printed}");
    assert!(!unit.exists(), "--dry-run wrote {}", unit.display());

    let plist = env.moss(&["service", "install", "--dry-run", "--manager", "launchd"]);
    let plist = String::from_utf8_lossy(&plist.stdout);
    assert!(
        plist.contains(&format!("<string>{}</string>", mossd.display())),
        "{plist}"
    );

    let out = env.moss(&["service", "install", "--no-enable"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains(&unit.display().to_string()), "{said}");
    assert!(said.contains("systemctl --user"), "{said}");
    let written = std::fs::read_to_string(&unit).unwrap();
    assert_eq!(written, printed, "the file is what --dry-run printed");
    assert!(
        written.contains(&format!("ReadWritePaths={}", env.home().display())),
        "{written}"
    );

    // The installed service runs this daemon: moss does not start a second one next to it.
    let out = env.moss(&["list"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("systemctl --user start moss.service")
            && err.contains(&unit.display().to_string()),
        "{err}"
    );
    assert!(!env.answers(), "moss started a daemon next to the service");
    assert!(err.contains("is not running"), "{err}");
    // An explicit start goes through the service manager, which fails here and says why.
    let out = env.moss(&["daemon", "start"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("systemctl --user start moss.service")
            && err.contains("Failed to connect to bus")
            && err.contains(&unit.display().to_string()),
        "{err}"
    );
    assert!(!env.answers(), "moss started a daemon next to the service");
    let called = std::fs::read_to_string(&calls).unwrap();
    assert_eq!(
        called.lines().collect::<Vec<_>>(),
        ["--user is-active moss.service", "--user start moss.service"],
        "{called}"
    );

    let out = env.moss(&["service", "uninstall", "--no-disable"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!unit.exists());
    // Without the service, autostart is back.
    let _ = ok_json(&env.moss(&["list"]));
    assert!(env.answers());

    // A full install with a systemctl that accepts everything (but starts nothing): the daemon
    // moss started is stopped to make way, the manager is told, and moss reports each step.
    std::fs::write(
        &shim,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\ncase \"$*\" in\n  *is-active*) echo inactive; exit 3 ;;\n\
             esac\nexit 0\n",
            calls.display()
        ),
    )
    .unwrap();
    std::fs::remove_file(&calls).unwrap();
    let out = env.moss(&["service", "install"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        !env.answers(),
        "the daemon moss had started still runs: {said}"
    );
    for step in [
        "stopped the daemon moss had started",
        "ran systemctl --user daemon-reload",
        "ran systemctl --user enable --now moss.service",
    ] {
        assert!(said.contains(step), "no {step:?} in: {said}");
    }
    // This systemctl started nothing, and moss says so rather than starting a daemon itself.
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("is not running"), "{}", stderr(&out));
    assert!(unit.exists());
    let out = env.moss(&["service", "uninstall"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!unit.exists());
    let called = std::fs::read_to_string(&calls).unwrap();
    assert_eq!(
        called.lines().collect::<Vec<_>>(),
        [
            "--user daemon-reload",
            "--user enable --now moss.service",
            "--user is-active moss.service",
            "--user disable --now moss.service",
            "--user daemon-reload"
        ],
        "{called}"
    );
}

#[test]
fn a_database_owned_by_a_daemon_elsewhere_is_reported_at_once() {
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    // A daemon run by hand on the same home but another address.
    let mut by_hand = Command::new(mossd())
        .args(["--addr", "127.0.0.1:0"])
        .env("MOSS_HOME", env.home())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(by_hand.stdout.take().unwrap()),
        &mut first,
    )
    .unwrap();
    let other = first
        .trim()
        .strip_prefix("listening on http://")
        .unwrap()
        .to_string();

    let began = Instant::now();
    let out = env.moss(&["list"]);
    let took = began.elapsed();
    let _ = Command::new("kill").arg(by_hand.id().to_string()).status();
    let _ = by_hand.wait();

    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("already owns this database") && err.contains(&other),
        "the holder and its address: {err}"
    );
    assert!(
        took.as_secs() < 10,
        "took {took:?}: a foreign holder is no race to wait out"
    );
    assert!(!env.answers());
}

/// A stand-in daemon that answers every request with `body_for(path)`, as HTTP/1.1 JSON.
fn fake_daemon(body_for: fn(&str) -> String) -> String {
    use std::io::{BufRead, BufReader, Write};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let path = request_line.split(' ').nth(1).unwrap_or("/").to_string();
            let body = body_for(&path);
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    addr
}

#[test]
fn a_daemon_of_another_version_is_used_with_a_warning() {
    let mut env = Env::new();
    env.addr = fake_daemon(|path| match path {
        "/health" => r#"{"status":"ok","version":"0.0.1-older"}"#.into(),
        _ => r#"{"address":"127.0.0.1:1","version":"0.0.1-older","pid":1,"home":"/h",
                 "db_path":"/h/moss.db","started_at":0,"uptime_seconds":5}"#
            .into(),
    });
    let out = env.moss(&["daemon", "start"]);
    let status = ok_json(&out);
    assert_eq!(status["version"], "0.0.1-older", "{status}");
    let err = stderr(&out);
    assert!(
        err.starts_with("warning: ")
            && err.contains("0.0.1-older")
            && err.contains(env!("CARGO_PKG_VERSION"))
            && err.contains("moss daemon restart"),
        "{err}"
    );
    assert_eq!(err.matches("warning:").count(), 1, "warned once: {err}");
    // The stand-in is not stopped by the guard: it is no mossd.
    env.addr = format!("127.0.0.1:{}", free_port());
}

/// `moss args` on a pseudo-terminal (util-linux `script`); what the terminal showed.
#[cfg(target_os = "linux")]
fn on_a_terminal(env: &Env, args: &str, no_color: bool) -> String {
    let c = env.cmd(&[]);
    let line = format!("{} {args}", env!("CARGO_BIN_EXE_moss"));
    let mut script = Command::new("script");
    script.args(["-qec", &line, "/dev/null"]);
    for (k, v) in c.get_envs() {
        match v {
            Some(v) => script.env(k, v),
            None => script.env_remove(k),
        };
    }
    if no_color {
        script.env("NO_COLOR", "1");
    }
    script.env("TERM", "xterm").stdin(Stdio::null());
    let out = script.output().expect("util-linux `script` runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[cfg(target_os = "linux")]
#[test]
fn colour_on_a_terminal_unless_no_color() {
    let env = Env::new();
    let coloured = on_a_terminal(&env, "daemon status", false);
    assert!(
        coloured.contains("\x1b[1;31m[UNAVAILABLE]\x1b[0m"),
        "the error code in red on a terminal: {coloured:?}"
    );
    let plain = on_a_terminal(&env, "daemon status", true);
    assert!(plain.contains("[UNAVAILABLE]"), "{plain:?}");
    assert!(!plain.contains('\x1b'), "NO_COLOR set: {plain:?}");
}

#[cfg(target_os = "linux")]
#[test]
fn a_long_import_draws_its_progress_on_a_terminal() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let exports = env.home().join("exports");
    std::fs::create_dir_all(&exports).unwrap();
    std::fs::set_permissions(&exports, std::fs::Permissions::from_mode(0o700)).unwrap();
    // Enough records (about 7.5 MB) that the import outlasts a few of the CLI's 250 ms polls.
    let body = "x".repeat(900);
    let mut file =
        String::from("{\"_moss_export\":true,\"schema_version\":\"1.0\",\"exported_at\":0}\n");
    for i in 0..8_000 {
        let record = serde_json::json!({
            "id": format!("01PROGRESS{i:016}"),
            "workspace_raw": "progress",
            "name_raw": format!("c{i}"),
            "capsule_text": format!("{body} {i}"),
            "created_at": 1,
            "updated_at": 1,
        });
        file.push_str(&record.to_string());
        file.push('\n');
    }
    std::fs::write(exports.join("big.jsonl"), file).unwrap();
    let shown = on_a_terminal(&env, "import --path big.jsonl", true);
    assert!(
        shown.contains("checking: ") || shown.contains("importing: "),
        "a progress line on the terminal: {shown:?}"
    );
    assert!(
        shown.contains("%)"),
        "done/total with a percentage: {shown:?}"
    );
    assert!(
        shown.contains("\"imported\": 8000"),
        "then the result: {shown:?}"
    );
}

#[test]
fn the_stdio_bridge_starts_the_daemon_it_forwards_to() {
    use std::io::Write;
    let env = Env::new();
    let mut child = env
        .cmd(&["mcp"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("moss mcp runs");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"0"}}}}}}"#
    )
    .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(answer["result"]["serverInfo"]["name"], "moss", "{answer}");
    assert!(
        env.answers(),
        "the bridge's daemon keeps running for the next client"
    );
    assert!(env.home().join("token").exists());
}

/// `moss backup` while the daemon serves, a change, then `moss restore-backup`: the daemon is
/// stopped, the backup swapped in, and the next command sees the backed-up store.
#[test]
fn backup_then_restore_backup_brings_the_store_back() {
    let env = Env::new();
    let stored = |name: &str| {
        let mut c = env.cmd(&["store", "--workspace", "bk", "--name", name]);
        c.stdin(Stdio::piped());
        let mut child = c.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(
                b"## Objective\nx\n## Current status\nx\n## Decisions\nx\n## Next actions\nx\n\
                  ## Key locations\nx\n## Open questions\nx\n",
            )
            .unwrap();
        ok_json(&child.wait_with_output().unwrap())
    };
    stored("before");
    let b = ok_json(&env.moss(&["backup", "snap.db"]));
    let path = b["path"].as_str().unwrap().to_string();
    assert!(path.ends_with("/exports/snap.db"), "{b}");
    stored("after");
    let out = env.moss(&["restore-backup", &path]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains("To undo: moss restore-backup "), "{said}");
    assert!(!env.answers(), "the daemon was stopped for the swap");
    let listed = ok_json(&env.moss(&["list", "--workspace", "bk"]));
    let names: Vec<&str> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["before"], "{listed}");
    let missing = env.moss(&["restore-backup", "nope.db"]);
    assert!(!missing.status.success());
    assert!(
        stderr(&missing).contains("does not exist"),
        "{}",
        stderr(&missing)
    );
}
