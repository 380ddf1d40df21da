//! `moss daemon start|stop|status|restart`.

use anyhow::Context;
use clap::Subcommand;
use moss_client::ClientError;
use moss_client::daemon::DaemonStatus;

use crate::autostart;
use crate::connect;
use crate::output::{Format, print};
use crate::probe::{Probe, Unavailable, probe};
use crate::service;
use crate::stop::stop;

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
            if let Probe::Up(h) = probe(&client).await {
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
