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
}

fn main() -> std::process::ExitCode {
    candle_threads();
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

/// How candle, which runs the embedding model, uses threads; values set by the user are kept.
///
/// - Candle hands the elementwise operations on a large tensor (the activation function,
///   softmax, adding a layer's input) to threads of its own, one per core, started on first use
///   at normal priority; the caller and those threads spin on each other at every operation.
///   The embedder runs at idle priority on a pool of its own, and on a busy machine the spinning
///   took more CPU than it saved (`examples/embed_speed.rs`: with those threads off, the same
///   texts took about half the CPU time). `CANDLE_NUM_THREADS=1`, which candle reads once when
///   it starts them, keeps that work on the calling thread; the matrix products still run on
///   the calling pool.
/// - How many threads a matrix product may use is read at every product: `RAYON_NUM_THREADS`
///   when set, else the count of physical cores, which candle finds by parsing
///   `/proc/cpuinfo` again each time. A question's embedding makes about fifty small products,
///   and those parses were a fifth of its time (`examples/embed_speed.rs query`: p50 13 ms
///   against 10 ms with the variable set). `RAYON_NUM_THREADS` is set to the cores this
///   process may use, the number rayon's pools start with anyway.
#[allow(unsafe_code)]
fn candle_threads() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for (name, value) in [
        ("CANDLE_NUM_THREADS", "1".to_string()),
        ("RAYON_NUM_THREADS", cores.to_string()),
    ] {
        if std::env::var_os(name).is_none() {
            // SAFETY: this is the first statement of main, before any thread is started, so
            // no other thread reads or writes the environment meanwhile.
            unsafe { std::env::set_var(name, value) };
        }
    }
}

fn run() -> anyhow::Result<()> {
    let args = Args::parse();
    if let Some(backup) = &args.restore_backup {
        let home = MossHome::from_env()?;
        println!(
            "{}",
            moss_daemon::store::backup::restore_home(
                &home,
                backup,
                moss_daemon::schema::version()
            )?
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
