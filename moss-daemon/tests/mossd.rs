//! `mossd` as a black box: the first stdout line, the lock on a shared home, refused addresses.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};

struct Mossd(Child);

impl Drop for Mossd {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn mossd(home: &std::path::Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mossd"));
    c.args(args)
        .env("MOSS_HOME", home)
        .env_remove("MOSS_ADDR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// Starts mossd on port 0 and returns it with the address from its first stdout line.
fn start(home: &std::path::Path) -> (Mossd, String) {
    let mut child = mossd(home, &["--addr", "127.0.0.1:0"]).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (Mossd(child), addr)
}

#[test]
fn prints_its_address_and_secures_its_home() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("moss");
    let (_d, addr) = start(&home);
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let mode = |p: &str| {
        std::fs::metadata(home.join(p))
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    };
    assert_eq!(
        std::fs::metadata(&home).unwrap().permissions().mode() & 0o777,
        0o700
    );
    assert_eq!(mode("token"), 0o600);
    assert_eq!(mode("moss.db"), 0o600);
    assert_eq!(mode("moss-fts.db"), 0o600);
    assert_eq!(mode("moss-fts.db-wal"), 0o600);
    let lock = std::fs::read_to_string(home.join("moss.db.lock")).unwrap();
    assert!(lock.contains(&addr), "the lock names the holder: {lock}");
}

#[test]
fn a_second_daemon_on_the_same_home_exits_naming_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let (first, addr) = start(dir.path());
    let out = mossd(dir.path(), &["--addr", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("another Moss daemon already owns this database"),
        "{err}"
    );
    assert!(err.contains(&addr), "names the holder's address: {err}");
    drop(first);
}

#[test]
fn non_loopback_addresses_are_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let out = mossd(dir.path(), &["--addr", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not a loopback address") && err.contains("--allow-non-loopback"),
        "{err}"
    );
}

/// SIGTERM while 32 clients write: the daemon drains, the writer commits what it acknowledged,
/// and after a restart every acknowledged capsule is there with the id it was given.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_under_concurrent_writes_loses_no_acknowledged_write() {
    use moss_client::Client;
    use moss_client::capsule::{CapsuleRef, FetchManyRequest, StoreRequest};

    let dir = tempfile::tempdir().unwrap();
    let (mut d, addr) = start(dir.path());
    let token = std::fs::read_to_string(dir.path().join("token")).unwrap();
    let client = Client::new(&addr, Some(token.trim().to_string())).unwrap();
    let text = "## Objective\no\n## Current status\ns\n## Decisions\nd\n## Next actions\nn\n\
                ## Key locations\nk\n## Open questions\nq\n";
    let acked_so_far = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for t in 0..32 {
        let client = client.clone();
        let acked_so_far = acked_so_far.clone();
        tasks.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            for i in 0..5_000 {
                let req = StoreRequest {
                    capsule_text: text.to_string(),
                    name: Some(format!("t{t}-{i}")),
                    ..Default::default()
                };
                match client.capsules().store(&req).await {
                    Ok(h) => {
                        acked.push((format!("t{t}-{i}"), h.id));
                        acked_so_far.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    Err(_) => break,
                }
            }
            acked
        }));
    }
    // The signal comes while writes are in flight: once the daemon has acknowledged a few
    // rounds of them.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while acked_so_far.load(std::sync::atomic::Ordering::Relaxed) < 4 * 32 {
        assert!(
            std::time::Instant::now() < deadline,
            "no writes acknowledged within 60 s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let pid = d.0.id().to_string();
    let status = tokio::task::spawn_blocking(move || {
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        d.0.wait().unwrap()
    })
    .await
    .unwrap();
    assert!(
        status.success(),
        "mossd exits cleanly on SIGTERM: {status:?}"
    );
    let mut acked = Vec::new();
    for t in tasks {
        acked.extend(t.await.unwrap());
    }
    assert!(
        acked.len() > 32,
        "writes were acknowledged before the signal ({})",
        acked.len()
    );

    let (_d2, addr2) = start(dir.path());
    let client = Client::new(&addr2, Some(token.trim().to_string())).unwrap();
    for chunk in acked.chunks(50) {
        let req = FetchManyRequest {
            items: chunk
                .iter()
                .map(|(n, _)| CapsuleRef::by_name("default", n.as_str()))
                .collect(),
            include_text: Some(false),
            include_deleted: None,
        };
        let got = client.capsules().fetch_many(&req).await.unwrap();
        assert!(
            got.errors.is_empty(),
            "acknowledged writes lost: {:?}",
            got.errors
        );
        for (c, (_, id)) in got.items.iter().zip(chunk) {
            assert_eq!(&c.id, id);
        }
    }
}

/// A field of `/proc/<pid>/status`, in its first unit (kB for memory).
fn proc_status(pid: u32, field: &str) -> u64 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    s.lines()
        .find_map(|l| {
            l.strip_prefix(field)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap()
}

/// CPU ticks (user + system) the process has used.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = stat.rsplit_once(") ").unwrap().1;
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    f[11] + f[12]
}

/// Lua runners (`mossd --lua-runner`) whose parent is `pid`.
fn runners_of(pid: u32) -> usize {
    let parent = pid.to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let ppid = stat
                .rsplit_once(") ")
                .and_then(|(_, r)| r.split_whitespace().nth(1).map(str::to_string));
            let cmd = std::fs::read_to_string(e.path().join("cmdline")).unwrap_or_default();
            ppid.as_deref() == Some(parent.as_str()) && cmd.contains("--lua-runner")
        })
        .count()
}

/// Every hostile source of the sandbox's tests, run three times against the real daemon: each
/// stops at its limit, no runner or spinning thread is left, and the daemon's resident memory
/// ends within 10 MiB of where it was after a first, harmless run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_sources_leave_no_process_thread_or_memory_behind() {
    use moss_client::Client;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("config.json"),
        r#"{"memory": {"lua_time_ms": 200, "lua_memory_mb": 16}}"#,
    )
    .unwrap();
    let (d, addr) = start(dir.path());
    let pid = d.0.id();
    let token = std::fs::read_to_string(dir.path().join("token")).unwrap();
    let client = Client::new(&addr, Some(token.trim().to_string())).unwrap();
    let project = tempfile::tempdir().unwrap();
    let sources = project.path().join(".moss/sources");
    std::fs::create_dir_all(&sources).unwrap();
    let root = project.path().canonicalize().unwrap().display().to_string();
    let run = |client: &Client| {
        let req = serde_json::json!({"workspace": "box", "root": root});
        let client = client.clone();
        async move {
            let r: serde_json::Value = client.post("/memories/sources/run", &req).await.unwrap();
            r
        }
    };
    std::fs::write(sources.join("ok.lua"), "store('fine', {})\n").unwrap();
    run(&client).await;
    let rss_before = proc_status(pid, "VmRSS:");
    let hostile = [
        ("rep.lua", "local s = string.rep('', 1e18)\n"),
        (
            "pattern.lua",
            "string.find(string.rep('a', 40), string.rep('a*', 40) .. 'b')\n",
        ),
        (
            "coroutine.lua",
            "coroutine.wrap(function() while true do end end)()\n",
        ),
        (
            "pcall.lua",
            "while true do pcall(function() while true do end end) end\n",
        ),
        (
            "template.lua",
            "local s = string.rep('x', 1024 * 1024)\nlocal t = {}\nfor i = 1, 200 do t[i] = s end\nlocal out = template(table.unpack(t))\n",
        ),
        (
            "json.lua",
            "local v = json.decode('[' .. string.rep('1,', 2e6) .. '1]')\n",
        ),
        (
            "stores.lua",
            "for i = 1, 30000 do store('memory number ' .. i, {context = 'c' .. i}) end\n",
        ),
    ];
    for (name, code) in hostile {
        std::fs::write(sources.join(name), code).unwrap();
    }
    for _ in 0..3 {
        let r = run(&client).await;
        for (name, _) in hostile {
            let s = r["sources"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == name)
                .unwrap();
            assert_eq!(s["status"], "error", "{s}");
        }
    }
    // Only session.lua's handlers keep a runner; the hostile ones are gone.
    let mut left = usize::MAX;
    for _ in 0..100 {
        left = runners_of(pid);
        if left <= 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(left <= 1, "{left} runners left");
    let cpu = cpu_ticks(pid);
    // The measurement itself: the CPU an idle daemon spends in one second.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let spent = cpu_ticks(pid) - cpu;
    assert!(
        spent < 20,
        "the daemon burned {spent} ticks in an idle second: a thread still spins"
    );
    let rss_after = proc_status(pid, "VmRSS:");
    println!(
        "daemon RSS: {rss_before} kB after a harmless run, {rss_after} kB after 3 runs of {} hostile sources",
        hostile.len()
    );
    assert!(
        rss_after < rss_before + 10 * 1024,
        "the daemon grew from {rss_before} kB to {rss_after} kB"
    );
}
