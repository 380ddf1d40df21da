//! Starting the daemon on demand: when no daemon answers on the configured address, `moss`
//! starts `mossd` detached, waits until `/health` answers, and goes on.
//!
//! Concurrent `moss` calls never start two daemons: the start happens under an exclusive lock on
//! `$MOSS_HOME/mossd.start.lock`, and whoever gets the lock probes again first (someone else may
//! have started it meanwhile). A `mossd` that exits because the address or the database is taken
//! lost a race to another daemon; when that one answers, it is used. When a service manager
//! runs the daemon for this address and home (`moss service install`), `moss` waits for it or
//! says how to start it instead of starting a second one.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::net::SocketAddr;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use moss_client::Client;
use moss_client::daemon::Health;

use crate::connect;
use crate::mossd::{ensure_home, find_mossd};
use crate::output;
use crate::probe::{Probe, Unavailable, probe};
use crate::service;

/// How long a started daemon may take to answer `/health`.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(20);
/// How often a starting daemon is probed.
const POLL: Duration = Duration::from_millis(20);
/// How many lines of the log a start failure quotes.
const LOG_LINES: usize = 15;

/// Whether `MOSS_NO_AUTOSTART` turns autostart off (any value but empty and `0`).
pub fn autostart_disabled() -> bool {
    std::env::var_os("MOSS_NO_AUTOSTART").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Makes sure a daemon answers at `addr`, starting one if needed (unless `MOSS_NO_AUTOSTART`),
/// and returns a client with the token as it is once the daemon runs.
pub async fn ensure_running(addr: &str) -> anyhow::Result<Client> {
    let client = connect::client(addr)?;
    match probe(&client).await {
        Probe::Up(h) => {
            warn_on_version_mismatch(addr, &h);
            return Ok(client);
        }
        Probe::Other(why) => return Err(not_moss(addr, &why)),
        Probe::Down => {}
    }
    if autostart_disabled() {
        return Err(Unavailable(format!(
            "no Moss daemon answers at {addr}, and MOSS_NO_AUTOSTART is set, so moss does not \
             start one. Start it with `moss daemon start` (or `mossd --addr {addr}` in the \
             foreground, or `moss service install` to run it as a service), or unset \
             MOSS_NO_AUTOSTART"
        ))
        .into());
    }
    let home = connect::require_home()?;
    if let Some(svc) = service::managing(addr, &home) {
        let h = svc.wait_for_daemon(addr, &client).await?;
        warn_on_version_mismatch(addr, &h);
        return connect::client(addr);
    }
    let h = start_detached(addr, &home).await?;
    warn_on_version_mismatch(addr, &h);
    // The token may have been created by the daemon just started.
    connect::client(addr)
}

fn not_moss(addr: &str, why: &str) -> anyhow::Error {
    Unavailable(format!(
        "something answers at {addr} but not as a Moss daemon ({why}). Point --addr / MOSS_ADDR \
         at the daemon, or free the port"
    ))
    .into()
}

/// Warns once per process when the daemon runs another version than this CLI.
pub fn warn_on_version_mismatch(addr: &str, h: &Health) {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if h.version != moss_client::VERSION && !WARNED.swap(true, Ordering::Relaxed) {
        output::warn(&format!(
            "moss {} talks to mossd {} at {addr}; after an upgrade restart the daemon with \
             `moss daemon restart`",
            moss_client::VERSION,
            h.version
        ));
    }
}

/// The daemon's log when `moss` starts it.
pub fn log_path(home: &Path) -> PathBuf {
    home.join("mossd.log")
}

fn start_lock_path(home: &Path) -> PathBuf {
    home.join("mossd.start.lock")
}

/// Starts `mossd --addr addr` detached, under the start lock, and waits for `/health`.
pub async fn start_detached(addr: &str, home: &Path) -> anyhow::Result<Health> {
    let sock = connect::socket_addr(addr)?;
    ensure_home(home)?;
    let lock_path = start_lock_path(home);
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(&lock_path)
        .with_context(|| format!("cannot open the start lock {}", lock_path.display()))?;
    // Blocks while another moss starts the daemon; that one gives up after STARTUP_TIMEOUT.
    let lock = tokio::task::spawn_blocking(move || lock.lock().map(|()| lock))
        .await?
        .with_context(|| format!("cannot lock {}", lock_path.display()))?;
    let client = connect::client(addr)?;
    match probe(&client).await {
        // Someone else started it while this call waited for the lock.
        Probe::Up(h) => return Ok(h),
        Probe::Other(why) => return Err(not_moss(addr, &why)),
        Probe::Down => {}
    }
    let mossd = find_mossd()?;
    let log_file = log_path(home);
    let (mut log, log_start) = open_log(&log_file)?;
    writeln!(
        log,
        "--- moss (pid {}) starts {} --addr {sock}",
        std::process::id(),
        mossd.display()
    )?;
    let mut child = Command::new(&mossd)
        .arg("--addr")
        .arg(sock.to_string())
        .env("MOSS_HOME", home)
        .env_remove("MOSS_ADDR")
        // Only $MOSS_HOME/config.json applies, not a `.moss/config.json` above wherever the
        // first command happened to run: the daemon outlives that command and serves them all.
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log.try_clone()?)
        // Its own process group: Ctrl-C in the terminal that ran `moss` does not reach it.
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot run {}", mossd.display()))?;
    let foreground = format!(
        "MOSS_HOME={} {} --addr {sock}",
        shell_word(&home.display().to_string()),
        shell_word(&mossd.display().to_string())
    );
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    // Set once mossd has exited because another daemon holds the port or the database: that
    // one won the race (started by hand, by a service manager, or by a moss without this lock
    // file), so it is waited for instead of reported as a failure.
    let mut exited: Option<std::process::ExitStatus> = None;
    let result = loop {
        if let Probe::Up(h) = probe(&client).await {
            break Ok(h);
        }
        if exited.is_none()
            && let Some(status) = child.try_wait()?
        {
            if !lost_race(&log_file, log_start, sock) {
                break Err(format!("mossd exited ({status}) before answering"));
            }
            exited = Some(status);
        }
        if Instant::now() >= deadline {
            break Err(match exited {
                Some(status) => format!(
                    "mossd exited ({status}) because another process holds the address or the \
                     database, and no Moss daemon answered there within {STARTUP_TIMEOUT:?}"
                ),
                None => {
                    let _ = child.kill();
                    let _ = child.wait();
                    format!(
                        "mossd did not answer /health within {STARTUP_TIMEOUT:?} and was stopped"
                    )
                }
            });
        }
        tokio::time::sleep(POLL).await;
    };
    drop(lock);
    result.map_err(|why| {
        Unavailable(format!(
            "could not start the Moss daemon at {addr}: {why}. Last lines of {}:\n{}\nTo debug, \
             run it in the foreground: {foreground}",
            log_file.display(),
            log_tail(&log_file, log_start)
        ))
        .into()
    })
}

/// Whether the log says, since `from`, that mossd gave up because another daemon won the race
/// for `sock`: the address is in use, or the database's lock is held by a daemon on `sock` (or
/// by one still starting, which has not named its address yet). A database held by a daemon on
/// another address is no race: that is reported at once.
fn lost_race(log: &Path, from: u64, sock: SocketAddr) -> bool {
    let text = std::fs::read(log).unwrap_or_default();
    let from = usize::try_from(from).unwrap_or(0).min(text.len());
    let text = String::from_utf8_lossy(&text[from..]);
    if text.contains("Address already in use") {
        return true;
    }
    text.contains("another Moss daemon already owns")
        && (text.contains(&format!("listening on http://{sock})"))
            || text.contains("owns this database (another process)"))
}

/// Opens the log for appending (0600); returns it with its length before this start.
fn open_log(path: &Path) -> anyhow::Result<(File, u64)> {
    let mut log = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot open the daemon log {}", path.display()))?;
    let start = log.seek(SeekFrom::End(0))?;
    Ok((log, start))
}

/// The last lines the log got since `from`, indented.
fn log_tail(path: &Path, from: u64) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let from = usize::try_from(from).unwrap_or(0).min(text.len());
    let text = String::from_utf8_lossy(&text[from..]);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let shown = &lines[lines.len().saturating_sub(LOG_LINES)..];
    if shown.is_empty() {
        return "    (empty)".into();
    }
    shown
        .iter()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `s` quoted for a POSIX shell when it needs it.
pub fn shell_word(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:=,@%".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_when_needed() {
        assert_eq!(shell_word("/usr/bin/mossd"), "/usr/bin/mossd");
        assert_eq!(shell_word("/a b/c"), "'/a b/c'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }

    #[test]
    fn only_a_daemon_on_the_same_address_counts_as_a_won_race() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("mossd.log");
        let sock: SocketAddr = "127.0.0.1:7000".parse().unwrap();
        let check = |text: &str| {
            std::fs::write(&log, format!("earlier run: Address already in use\n{text}")).unwrap();
            lost_race(
                &log,
                "earlier run: Address already in use\n".len() as u64,
                sock,
            )
        };
        assert!(check(
            "Error: cannot listen on 127.0.0.1:7000: Address already in use (os error 98)"
        ));
        assert!(check(
            "Error: another Moss daemon already owns this database (pid 9, listening on \
             http://127.0.0.1:7000); lock file /h/moss.db.lock."
        ));
        assert!(check(
            "Error: another Moss daemon already owns this database (another process); lock file"
        ));
        assert!(!check(
            "Error: another Moss daemon already owns this database (pid 9, listening on \
             http://127.0.0.1:7001); lock file /h/moss.db.lock."
        ));
        assert!(!check("Error: config.json: expected value at line 1"));
    }

    #[test]
    fn the_log_tail_is_what_this_start_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mossd.log");
        std::fs::write(&path, "old line\n").unwrap();
        let (mut log, start) = open_log(&path).unwrap();
        writeln!(log, "new line\n\nmossd: cannot listen").unwrap();
        let tail = log_tail(&path, start);
        assert_eq!(tail, "    new line\n    mossd: cannot listen");
    }
}
