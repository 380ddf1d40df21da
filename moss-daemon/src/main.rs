//! `mossd`: the Moss daemon.

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;

use anyhow::Context;
use clap::Parser;
use moss_daemon::{DaemonOptions, MossHome};
use tracing_subscriber::EnvFilter;

/// The Moss memory daemon: owns the database and serves REST and MCP on loopback.
///
/// Examples:
///   mossd                              # 127.0.0.1:6677, data in ~/.moss
///   MOSS_HOME=/tmp/m mossd --addr 127.0.0.1:0
///   MOSS_LOG=debug mossd
///   mossd --database postgres://moss@db.internal/moss   # a store shared by several daemons
#[derive(Debug, Parser)]
#[command(name = "mossd", version, verbatim_doc_comment)]
struct Args {
    /// Address to listen on (port 0 picks a free port; the first stdout line says which).
    #[arg(long, env = "MOSS_ADDR", default_value = moss_client::DEFAULT_ADDR)]
    addr: SocketAddr,
    /// Allow a non-loopback --addr. Anyone who can reach it and has the token can read
    /// everything stored.
    #[arg(long)]
    allow_non_loopback: bool,
    /// Put the backup at PATH (from `moss backup`) in place of the store, then exit: refused
    /// while a daemon serves it; the current store is kept aside, and the message says how to
    /// undo. `moss restore-backup PATH` stops the daemon and runs this.
    #[arg(long, value_name = "PATH")]
    restore_backup: Option<std::path::PathBuf>,
    /// Where the store lives, in place of the config's `database`: `sqlite:/absolute/path`
    /// or `postgres://USER@HOST[:PORT]/DATABASE` (several daemons may serve one PostgreSQL
    /// database). Default: `$MOSS_HOME/moss.db`.
    #[arg(long, env = "MOSS_DATABASE", value_name = "URL")]
    database: Option<String>,
    /// A PostgreSQL replica to read from, in place of the config's `database_read`.
    #[arg(long, env = "MOSS_DATABASE_READ", value_name = "URL")]
    database_read: Option<String>,
}

fn main() -> std::process::ExitCode {
    // A Lua source's runner process (see moss_daemon::memory::runner): no logging, no
    // arguments, no runtime.
    if std::env::args_os()
        .nth(1)
        .is_some_and(|a| a == moss_daemon::memory::runner::RUNNER_FLAG)
    {
        return moss_daemon::memory::runner::runner_main();
    }
    moss_daemon::log::init(
        EnvFilter::try_from_env("MOSS_LOG").unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn")),
        std::io::stderr().is_terminal(),
    );
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // Not eprintln!: it panics when stderr cannot be written (a full disk).
            let _ = writeln!(std::io::stderr(), "mossd: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(backup) = &args.restore_backup {
        let home = MossHome::from_env()?;
        println!(
            "{}",
            moss_daemon::restore_home(&home, backup, moss_daemon::schema::version())?
        );
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("mossd")
        .max_blocking_threads(16)
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let home = MossHome::from_env()?;
        let cwd = std::env::current_dir().unwrap_or_else(|_| home.dir.clone());
        let mut daemon = moss_daemon::start(DaemonOptions {
            home,
            addr: args.addr,
            allow_non_loopback: args.allow_non_loopback,
            cwd,
            database: args.database.clone(),
            database_read: args.database_read.clone(),
        })
        .await?;
        // SIGTERM, SIGINT and `POST /shutdown` trigger the same graceful shutdown. Installed
        // before the address is announced, so a signal sent on seeing it is never fatal.
        daemon
            .shutdown_handle()
            .on_signals()
            .context("cannot install the SIGTERM/SIGINT handlers")?;
        {
            // A stdout that cannot be written (a log file on a full disk) does not stop a
            // daemon that listens: the address is also in the log and in `moss daemon status`.
            let mut out = moss_daemon::log::LossyWriter(std::io::stdout().lock());
            let _ = writeln!(out, "listening on http://{}", daemon.addr);
            let _ = out.flush();
        }
        daemon.wait().await
    })
}
