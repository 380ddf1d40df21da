//! `moss`: every Moss operation as a subcommand, over HTTP to the daemon.
//!
//! - `capsule`: the capsule subcommands (store, fetch, …) and their flags; `search`, `compose`
//!   (compose, append), `bulk` (bulk-delete, bulk-update, purge, tools) and `transfer`
//!   (export, import) hold the rest.
//! - `output`: JSON (default) and table rendering; errors as `[CODE] message`.
//! - `bench`: the load generator behind `moss bench`.
//! - `connect`: address and token resolution.

mod bench;
mod bench_search;
mod bulk;
mod capsule;
mod compose;
mod connect;
mod output;
mod search;
mod transfer;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use output::Format;

/// Moss: memory for AI coding agents. Talks to the daemon (`mossd`) over HTTP.
///
/// Output is JSON by default (for scripts); `--format table` is for people.
/// Errors go to stderr as `[CODE] message` with exit code 1.
///
/// Examples:
///   moss store --name auth < capsule.md
///   moss fetch --name auth
///   moss list --workspace myproject --format table
#[derive(Debug, Parser)]
#[command(name = "moss", version, verbatim_doc_comment, propagate_version = true)]
struct Cli {
    /// Daemon address (host:port).
    #[arg(long, global = true, env = "MOSS_ADDR", default_value = moss_client::DEFAULT_ADDR)]
    addr: String,
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Json)]
    format: Format,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[command(flatten)]
    Capsule(Box<capsule::CapsuleCommand>),
    /// Load-test a running daemon: concurrent stores, fetches by name, and /health.
    ///
    /// Each phase runs for --duration seconds with --clients concurrent clients; the store
    /// phase writes capsules of --size bytes into a fresh workspace, the fetch phase reads them
    /// back by name, the health phase measures the HTTP floor. Ratios compare each operation's
    /// throughput with /health's in the same run.
    ///
    /// Examples:
    ///   moss bench --clients 32 --duration 10 --size 2048
    ///   moss bench --clients 8 --duration 2 --size 512 --json
    ///   moss bench --search --capsules 100000 --clients 4 --duration 10
    #[command(verbatim_doc_comment)]
    Bench(bench::BenchArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("[INTERNAL] cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        let client = connect::client(&cli.addr)?;
        match cli.command {
            Command::Capsule(cmd) => capsule::run(*cmd, &client, cli.format).await,
            Command::Bench(args) => bench::run(args, &client).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", output::error_line(&e));
            ExitCode::FAILURE
        }
    }
}
