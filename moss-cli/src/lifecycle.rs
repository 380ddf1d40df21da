//! `moss daemon start|stop|status|restart`.

use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Subcommand;
use moss_client::ClientError;
use moss_client::daemon::DaemonStatus;
use serde_json::json;

use crate::autostart::{self, Probe, Unavailable};
use crate::connect;
use crate::output::{Format, print};
use crate::service;

/// How long `stop` waits for the daemon to exit: its drain cap (10 s) plus the writer's last
/// commit and closing the database.
const STOP_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, Subcommand)]
pub enum DaemonCommand {
    /// Start the daemon in the background unless one answers already.
    ///
    /// Runs mossd (next to moss, else on PATH) detached, logging to $MOSS_HOME/mossd.log,
    /// and waits until it answers; when `moss service install` set up a user service for this
    /// address and home, starts that service instead. Any other moss command does the same when no daemon
    /// answers, unless MOSS_NO_AUTOSTART=1. Prints the daemon's status.
    ///
    /// Examples:
    ///   moss daemon start
    ///   MOSS_ADDR=127.0.0.1:7000 moss daemon start --format table
    #[command(verbatim_doc_comment)]
    Start,
    /// Stop the daemon gracefully and wait until it has exited.
    ///
    /// Sends POST /shutdown (the same graceful shutdown as SIGTERM: in-flight requests drain,
    /// the writer commits, the database closes) and waits until the port stops answering and
    /// the process is gone.
    ///
    /// Examples:
    ///   moss daemon stop
    #[command(verbatim_doc_comment)]
    Stop,
    /// Address, version, pid, database and uptime of the running daemon (never starts one).
    ///
    /// Examples:
    ///   moss daemon status
    ///   moss daemon status --format table
    #[command(verbatim_doc_comment)]
    Status,
    /// Stop the daemon if it runs, then start it again (e.g. after an upgrade).
    ///
    /// Examples:
    ///   moss daemon restart
    #[command(verbatim_doc_comment)]
    Restart,
}

pub async fn run(cmd: DaemonCommand, addr: &str, format: Format) -> anyhow::Result<()> {
    match cmd {
        DaemonCommand::Start => {
            let client = connect::client(addr)?;
            if let Probe::Up(h) = autostart::probe(&client).await {
                autostart::warn_on_version_mismatch(addr, &h);
                eprintln!("a Moss daemon already answers at {addr}");
            } else {
                start(addr).await?;
            }
            print(&status(addr).await?, format)
        }
        DaemonCommand::Stop => {
            let outcome = stop(addr, true).await?;
            print(&outcome, format)
        }
        DaemonCommand::Status => print(&status(addr).await?, format),
        DaemonCommand::Restart => {
            stop(addr, true).await?;
            start(addr).await?;
            print(&status(addr).await?, format)
        }
    }
}

/// Starts a daemon explicitly: what autostart does, whatever `MOSS_NO_AUTOSTART` says.
async fn start(addr: &str) -> anyhow::Result<()> {
    let home = connect::require_home()?;
    if let Some(svc) = service::managing(addr, &home) {
        // The service owns this daemon: start it through its manager, not next to it.
        let ran = svc.start().with_context(|| {
            format!(
                "the user service installed at {} runs the daemon for {addr}, and starting it \
                 failed; see its log, or remove it with `moss service uninstall`",
                svc.path.display()
            )
        })?;
        eprintln!("ran {ran}");
        svc.wait_for_daemon(addr, &connect::client(addr)?).await?;
        return Ok(());
    }
    let h = autostart::start_detached(addr, &home).await?;
    autostart::warn_on_version_mismatch(addr, &h);
    Ok(())
}

/// `GET /status`, or an error that says how to start the daemon.
async fn status(addr: &str) -> anyhow::Result<DaemonStatus> {
    match connect::client(addr)?.status().await {
        Ok(s) => Ok(s),
        Err(ClientError::Unreachable { .. }) => Err(Unavailable(format!(
            "no Moss daemon answers at {addr}; start one with `moss daemon start` (any other \
             moss command starts it too)"
        ))
        .into()),
        Err(e) => Err(e.into()),
    }
}

/// Stops the daemon at `addr` (if one answers) and waits until it has exited. Returns what
/// `moss daemon stop` prints.
pub async fn stop(addr: &str, say: bool) -> anyhow::Result<serde_json::Value> {
    let client = connect::client(addr)?;
    match autostart::probe(&client).await {
        Probe::Up(_) => {}
        Probe::Down => {
            if say {
                eprintln!("no Moss daemon answers at {addr}; nothing to stop");
            }
            return Ok(json!({"address": addr, "stopped": false, "was_running": false}));
        }
        Probe::Other(why) => bail!("cannot tell what answers at {addr}: {why}"),
    }
    let began = Instant::now();
    let answer = client.shutdown().await?;
    let pid = answer.pid;
    let deadline = began + STOP_TIMEOUT;
    loop {
        let port_closed = matches!(autostart::probe(&client).await, Probe::Down);
        if port_closed && !pid_alive(pid) {
            break;
        }
        if Instant::now() >= deadline {
            return Err(Unavailable(format!(
                "the daemon at {addr} (pid {pid}) was asked to shut down but is still {} after \
                 {STOP_TIMEOUT:?}; see its log ($MOSS_HOME/mossd.log, or `journalctl --user -u \
                 moss` for the service), or end it with `kill {pid}`",
                if port_closed { "running" } else { "answering" }
            ))
            .into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let seconds = began.elapsed().as_secs_f64();
    if say {
        eprintln!("stopped the Moss daemon at {addr} (pid {pid}) in {seconds:.2}s");
    }
    Ok(json!({
        "address": addr,
        "stopped": true,
        "was_running": true,
        "pid": pid,
        "seconds": (seconds * 1000.0).round() / 1000.0,
    }))
}

/// Whether process `pid` still runs (a zombie counts as gone: it has released everything).
fn pid_alive(pid: u32) -> bool {
    let proc_dir = std::path::Path::new("/proc");
    if proc_dir.join("self").exists() {
        return match std::fs::read_to_string(proc_dir.join(pid.to_string()).join("stat")) {
            // The state follows the parenthesised command name.
            Ok(stat) => stat
                .rsplit_once(')')
                .is_none_or(|(_, rest)| !rest.trim_start().starts_with('Z')),
            Err(_) => false,
        };
    }
    std::process::Command::new("kill")
        .args(["-0", &pid.to_string()])
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_an_exited_child_is_not() {
        assert!(pid_alive(std::process::id()));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        assert!(!pid_alive(pid));
    }
}
