//! A daemon whose disk is full, or whose log cannot be written, stays up: logging drops what it
//! cannot write and counts it, writes answer STORAGE_FULL while reads go on, and writes resume
//! once space is freed, without a restart.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::lifecycle::{Env, mossd, ok_json, stderr};

/// `moss args` with `text` on stdin.
fn moss_with(env: &Env, args: &[&str], text: &str) -> Output {
    let mut child = env
        .cmd(args)
        .stdin(Stdio::piped())
        .spawn()
        .expect("moss runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn capsule(marker: &str) -> String {
    format!(
        "## Objective\n{marker}\n## Current status\n{}\n## Decisions\nnone\n\
         ## Next actions\n- go on\n## Key locations\nsrc/\n## Open questions\nnone\n",
        "filling the disk ".repeat(500)
    )
}

/// `mossd 2>/dev/full` listens, serves, and counts the log lines it could not write.
#[test]
fn a_daemon_whose_stderr_cannot_be_written_serves_and_counts_dropped_lines() {
    let env = Env::new();
    std::fs::create_dir_all(env.home()).unwrap();
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let mut daemon = Command::new(mossd())
        .args(["--addr", &env.addr])
        .env("MOSS_HOME", env.home())
        .env("MOSS_LOG", "debug")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(full)
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(daemon.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(
        first.starts_with("listening on http://"),
        "mossd did not start: {first:?}, exit {:?}",
        daemon.try_wait()
    );
    let stored = moss_with(&env, &["store", "--name", "logged"], &capsule("dev full"));
    ok_json(&stored);
    let status = ok_json(&env.moss(&["daemon", "status"]));
    assert!(
        status["log_dropped"].as_u64().unwrap() > 0,
        "debug lines were written to a full stderr: {status}"
    );
    ok_json(&env.moss(&["daemon", "stop"]));
    let exit = daemon.wait().unwrap();
    assert!(exit.success(), "mossd exited with {exit}");
}

/// Whether this process runs as root (mounting a tmpfs needs it).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().next())
            == Some("0")
    })
}

/// Unmounts on drop.
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Writes zeros into `path` until the disk is full.
fn fill(path: &Path) {
    let mut f = std::fs::File::create(path).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    loop {
        if f.write_all(&chunk).is_err() {
            break;
        }
    }
    // What a whole chunk could not take, byte by byte.
    while f.write_all(&[0]).is_ok() {}
}

/// The daemon's home on a small tmpfs, with its log there too (autostart's `mossd.log`): once
/// the disk is full, writes answer STORAGE_FULL and say reads go on, reads do, and once the
/// filler is removed the next write succeeds, on the same daemon process, with every thread
/// alive (the index catches up). Needs root to mount; skipped with the reason otherwise.
#[test]
fn a_full_disk_refuses_writes_keeps_reads_and_recovers_without_a_restart() {
    if !is_root() {
        println!("skipped: mounting a tmpfs needs root");
        return;
    }
    let env = Env::new();
    let home = env.home();
    std::fs::create_dir_all(&home).unwrap();
    let mount = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs"])
        .arg(&home)
        .output()
        .unwrap();
    if !mount.status.success() {
        println!(
            "skipped: cannot mount a tmpfs here: {}",
            String::from_utf8_lossy(&mount.stderr).trim()
        );
        return;
    }
    let _mounted = Mounted(home.clone());

    let started = ok_json(&env.moss(&["daemon", "start"]));
    let pid = started["pid"].as_u64().unwrap();
    ok_json(&moss_with(
        &env,
        &["store", "--name", "before"],
        &capsule("before"),
    ));

    let filler = home.join("filler");
    fill(&filler);
    let mut refused = None;
    for i in 0..2000 {
        let out = moss_with(
            &env,
            &["store", "--name", &format!("fill-{i}")],
            &capsule("fill"),
        );
        if !out.status.success() {
            refused = Some(stderr(&out));
            break;
        }
    }
    let refused = refused.expect("a write fails once the disk is full");
    assert!(refused.contains("[STORAGE_FULL]"), "{refused}");
    assert!(
        refused.contains("disk is full") && refused.contains("reads go on"),
        "{refused}"
    );
    // Still full: refused again, the same way, and the log on the same disk drops lines (a
    // partly filled last page of the log may take the first few).
    let mut dropped = 0;
    for i in 0..200 {
        let again = moss_with(
            &env,
            &["store", "--name", &format!("again-{i}")],
            &capsule("x"),
        );
        assert!(
            stderr(&again).contains("[STORAGE_FULL]"),
            "{}",
            stderr(&again)
        );
        dropped = ok_json(&env.moss(&["daemon", "status"]))["log_dropped"]
            .as_u64()
            .unwrap();
        if dropped > 0 {
            break;
        }
    }
    assert!(dropped > 0, "the log on the full disk dropped lines");

    // Reads go on.
    let before = ok_json(&env.moss(&["fetch", "--name", "before"]));
    assert!(before["capsule_text"].as_str().unwrap().contains("before"));
    ok_json(&env.moss(&["list"]));

    // Space back: the very next write succeeds, on the same process.
    std::fs::remove_file(&filler).unwrap();
    ok_json(&moss_with(
        &env,
        &["store", "--name", "after"],
        &capsule("after"),
    ));
    let after = ok_json(&env.moss(&["fetch", "--name", "after"]));
    assert!(after["capsule_text"].as_str().unwrap().contains("after"));
    let status = ok_json(&env.moss(&["daemon", "status"]));
    assert_eq!(
        status["pid"].as_u64(),
        Some(pid),
        "the daemon was not restarted"
    );
    // The indexer survived: the index catches up with every write.
    moss_tests::wait_for_blocking("the index to catch up", Duration::from_secs(30), || {
        (ok_json(&env.moss(&["daemon", "status"]))["index_behind"] == 0).then_some(())
    });
    let found = ok_json(&env.moss(&["search", "after"]));
    assert!(
        found["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "after"),
        "{found}"
    );
    ok_json(&env.moss(&["daemon", "stop"]));
}
