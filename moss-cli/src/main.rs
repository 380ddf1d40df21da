//! `moss`: every Moss operation as a subcommand, over HTTP to the daemon.
//!
//! - `capsule`: the capsule family's subcommand group (store, fetch, …, flattened at the top
//!   level); `search`, `compose` (compose, append), `bulk` (bulk-delete, bulk-update, purge)
//!   and `transfer` (export, import) hold the rest; `capsule_args` what they share (the
//!   address, the orchestration flags, stdin). A family's group is one `Subcommand` enum
//!   with its `run`, and one variant of `Command`.
//! - `output`: JSON (default), or each response type's own table (`Render`); errors as
//!   `[CODE] message`.
//! - `ops`: the reasoning, tasks and memory groups (`moss reason …`, `moss tasks …`, `moss mem …`),
//!   one subcommand per
//!   operation, the request assembled from `key=value` fields (`fields`: a field given twice).
//! - `bench/`: the load generator behind `moss bench`, a file per workload; `scratch`: the
//!   daemon of its own it measures unless told to measure the running one.
//! - `connect`: address and token resolution; `autostart`: starting the daemon on demand.
//! - `probe`: what answers at an address (and `Unavailable`); `mossd`: the binary and home
//!   `moss` starts the daemon with; `stop`: stopping it and waiting until it is gone. The
//!   commands that start, stop or install the daemon share these instead of each other.
//! - `lifecycle` (`moss daemon …`), `service` (`moss service …`), `bridge` (`moss mcp`, the
//!   stdio bridge) and `mcp_config` (`moss mcp config …`).
//! - `workspace`: which workspace a command acts on (-w, MOSS_WORKSPACE, the project's
//!   `.moss/config.json`, the family's default), the same rule for every group.

mod across;
mod autostart;
mod backup;
mod bench;
mod bridge;
mod bulk;
mod capsule;
mod capsule_args;
mod compose;
mod connect;
mod fields;
mod history;
mod lifecycle;
mod mcp_config;
mod mossd;
mod new;
mod ops;
mod output;
mod probe;
mod scratch;
mod search;
mod service;
mod stop;
mod swarm;
mod transfer;
mod ui;
mod workspace;

use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

use output::Format;

/// Moss: memory for AI coding agents. Talks to the daemon (`mossd`) over HTTP.
///
/// Output is JSON by default (for scripts); `--format table` is for people.
/// Errors go to stderr as `[CODE] message` with exit code 1.
///
/// When no daemon answers at --addr, the first command starts one in the background
/// (log: $MOSS_HOME/mossd.log) and goes on; MOSS_NO_AUTOSTART=1 turns that off.
///
/// Workspace: -w NAME, else $MOSS_WORKSPACE, else the `workspace` key of the nearest
/// `.moss/config.json` above the working directory, else the family's default ("default"
/// for capsules and memories; reasoning and tasks require one). -v prints which was used.
///
/// Examples:
///   moss store --name auth < capsule.md
///   moss fetch --name auth
///   moss list -w myproject --format table
///   moss daemon status
#[derive(Debug, Parser)]
// No `propagate_version`: a subcommand's `--version` is its own (`moss fetch --version -1`, a
// capsule's earlier version), never the CLI's; `moss --version` prints the CLI's.
#[command(name = "moss", version, verbatim_doc_comment)]
struct Cli {
    /// Daemon address (host:port).
    #[arg(long, global = true, env = "MOSS_ADDR", default_value = moss_client::DEFAULT_ADDR)]
    addr: String,
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// Say on stderr which workspace the command used and where it came from.
    #[arg(short, long, global = true)]
    verbose: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    #[command(flatten)]
    Capsule(Box<capsule::CapsuleCommand>),
    /// Load-test a daemon: concurrent stores, fetches by name, and /health.
    ///
    /// The benchmark starts a daemon of its own (a scratch home inside $MOSS_HOME with a copy
    /// of its config.json, on a free port), and stops and deletes it afterwards: your store is
    /// left as it was. --against-running measures the daemon at --addr instead, and keeps what
    /// the benchmark wrote there (e.g. a --search corpus, reused by the next run).
    ///
    /// Each phase runs for --duration seconds with --clients concurrent clients; the store
    /// phase writes capsules of --size bytes into a fresh workspace, the fetch phase reads them
    /// back by name, the health phase measures the HTTP floor. Ratios compare each operation's
    /// throughput with /health's in the same run.
    ///
    /// Examples:
    ///   moss bench --clients 32 --duration 10 --size 2048
    ///   moss bench --clients 8 --duration 2 --size 512 --json
    ///   moss bench --against-running --search --capsules 100000   # keeps the corpus
    ///   moss bench --search --capsules 100000 --clients 4 --duration 10
    ///   moss bench --search --cross-family --items 100000 --duration 10   # moss_search, moss_context
    ///   moss bench --reasoning --clients 32 --duration 10
    ///   moss bench --memory --memories 100000 --clients 32 --duration 10
    ///   moss bench --against-running --semantic --memories 100000 --semantic-capsules 1000
    ///   moss bench --watch --clients 32 --duration 10 --watch-rate 200
    ///   moss bench --replace 50 --clients 32 --duration 10   # stores overwrite, keep versions
    ///   moss bench --append --replace 50 --duration 10       # then append to those capsules
    #[command(verbatim_doc_comment)]
    Bench(bench::BenchArgs),
    /// The reasoning memory: notes and trace, branches, the graph, think cards.
    ///
    /// Every subcommand takes -w WORKSPACE and the request's fields as key=value (string),
    /// key:=json (number, boolean, array, object) or key=@file (@- for stdin). The field names
    /// are the branchmind_* tools' (see `moss tools`).
    ///
    /// Examples:
    ///   moss reason notes-commit -w myproject target=TASK-001 content="Chose WAL"
    ///   moss reason show -w myproject target=TASK-001 doc_kind=trace limit:=5
    ///   moss reason think-next -w myproject target=TASK-001
    #[command(verbatim_doc_comment, subcommand)]
    Reason(ops::ReasonCommand),
    /// Plans and tasks: checkpoint-gated steps whose every change lands in the trace.
    ///
    /// Every subcommand takes -w WORKSPACE and the request's fields as key=value (string),
    /// key:=json (number, boolean, array, object) or key=@file (@- for stdin). The field names
    /// are the tasks_* tools' (see `moss tools`).
    ///
    /// Examples:
    ///   moss tasks create -w myproject title="Ship v2"
    ///   moss tasks create -w myproject title="Migrate" parent=PLAN-001 steps:='[{"title":"Write it"}]'
    ///   moss tasks radar -w myproject task=TASK-001
    #[command(verbatim_doc_comment, subcommand)]
    Tasks(ops::TasksCommand),
    /// The associative memory: knowledge attached to contexts, recalled by one ranked query.
    ///
    /// Every subcommand takes the tool's fields as key=value (string), key:=json (number,
    /// boolean, array, object) or key=@file (@- for stdin); -w WORKSPACE (default "default").
    ///
    /// Examples:
    ///   moss mem store content="User prefers tabs" context=formatting slot=preferences
    ///   moss mem recall query="about auth.py"
    ///   moss mem recall slot=preferences
    #[command(verbatim_doc_comment, subcommand)]
    Mem(ops::MemCommand),
    /// Back up the whole store (capsules, reasoning, tasks, memories) while the daemon serves.
    ///
    /// A consistent snapshot into one SQLite file (0600). PATH follows the export path rules:
    /// a bare name goes to ~/.moss/exports/, it must end in .db. Default:
    /// `~/.moss/exports/moss-backup-<timestamp>.db`. Put it back with `moss restore-backup`.
    ///
    /// Examples:
    ///   moss backup
    ///   moss backup before-upgrade.db
    #[command(verbatim_doc_comment)]
    Backup {
        /// The file to write (ends in .db).
        path: Option<String>,
    },
    /// Copy the whole store (every family, with its ids, sequence numbers and versions) into
    /// another database, to move between engines: a PostgreSQL database, or a new SQLite file.
    /// The target is brought to the daemon's schema and must hold no rows; the copy is one
    /// transaction, from one snapshot, checked by counting every table and comparing a sample
    /// of rows. The daemon goes on serving from its own store: point a daemon at the copy
    /// with `"database"` in ~/.moss/config.json (the answer's "next" says how).
    ///
    /// Examples:
    ///   moss migrate --to postgres://moss@db.internal:5432/moss
    ///   moss migrate --to sqlite:moss-copy.db
    #[command(verbatim_doc_comment)]
    Migrate {
        /// postgres://USER:PASSWORD@HOST:PORT/DATABASE (password and port optional), or
        /// sqlite:PATH (ends in .db; a bare name goes to ~/.moss/exports/; must not exist yet).
        #[arg(long)]
        to: String,
    },
    /// Put a backup in place of the store: stops the daemon, checks the file is a Moss
    /// database, keeps the current store aside (`moss.db.before-restore-<timestamp>`) and swaps
    /// the backup in. The message says how to undo it.
    ///
    /// Examples:
    ///   moss restore-backup ~/.moss/exports/moss-backup-2026-01-31T120000.db
    #[command(verbatim_doc_comment)]
    RestoreBackup {
        /// The backup file (`moss backup` printed its path).
        path: String,
    },
    /// Open Moss in a browser: prints a one-time sign-in address of the web UI (valid five
    /// minutes); the browser that opens it gets a session cookie, never the token.
    ///
    /// Examples:
    ///   moss ui --open
    ///   moss ui            # print the address only, e.g. to open it in another browser
    #[command(verbatim_doc_comment)]
    Ui {
        /// Also open it in the default browser.
        #[arg(long)]
        open: bool,
    },
    /// Start, stop, restart the daemon, or show its status.
    ///
    /// Examples:
    ///   moss daemon status
    ///   moss daemon restart
    #[command(verbatim_doc_comment, subcommand)]
    Daemon(lifecycle::DaemonCommand),
    /// Run the daemon as a user service (systemd or launchd).
    ///
    /// Examples:
    ///   moss service install
    ///   moss service install --dry-run
    ///   moss service uninstall
    #[command(verbatim_doc_comment, subcommand)]
    Service(service::ServiceCommand),
    Mcp(mcp_config::McpArgs),
    /// List the daemon's MCP tools: family, toolsets, and whether the config serves them.
    ///
    /// A toolset is a named list of tools: each family, `core` (what an agent needs to resume,
    /// find, remember and hand off) and `all`. `moss mcp --toolsets core,memory` and
    /// `/mcp?toolsets=core,memory` serve their union; `moss mcp` serves core by default.
    ///
    /// Examples:
    ///   moss tools --format table
    #[command(verbatim_doc_comment)]
    Tools,
    /// Every workspace, with what each family holds in it and its last activity.
    ///
    /// Examples:
    ///   moss workspaces
    ///   moss workspaces --format table
    #[command(verbatim_doc_comment)]
    Workspaces,
    /// Search everything remembered, in one ranked list: capsules, reasoning notes and cards,
    /// plans, tasks and steps, memories (the moss_search tool).
    ///
    /// Examples:
    ///   moss find refunds
    ///   moss find "retry policy" -w myproject --families capsule,reasoning
    ///   moss find 'auth*' --limit 5
    #[command(verbatim_doc_comment)]
    Find(across::FindArgs),
    /// Where the work stands, in one call: a task's radar, handoffs, open questions, decisions,
    /// notes, memories and the last changes (the moss_context tool).
    ///
    /// Examples:
    ///   moss context -w myproject
    ///   moss context -w myproject --task TASK-001 --query "refund flow" --max-chars 6000
    #[command(verbatim_doc_comment)]
    Context(across::ContextArgs),
    /// Print a shell completion script.
    ///
    /// Examples:
    ///   moss completions bash > ~/.local/share/bash-completion/completions/moss
    ///   moss completions zsh > ~/.zfunc/_moss       # with fpath+=(~/.zfunc) in ~/.zshrc
    ///   moss completions fish > ~/.config/fish/completions/moss.fish
    #[command(verbatim_doc_comment)]
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
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
    let addr = cli.addr;
    workspace::set_verbose(cli.verbose);
    let result = runtime.block_on(async {
        match cli.command {
            Command::Capsule(cmd) => {
                let client = autostart::ensure_running(&addr).await?;
                capsule::run(*cmd, &client, cli.format).await
            }
            Command::Reason(cmd) => {
                let client = autostart::ensure_running(&addr).await?;
                cmd.run(&client, cli.format).await
            }
            Command::Tasks(cmd) => {
                let client = autostart::ensure_running(&addr).await?;
                cmd.run(&client, cli.format).await
            }
            Command::Mem(cmd) => {
                let client = autostart::ensure_running(&addr).await?;
                cmd.run(&client, cli.format).await
            }
            Command::Bench(args) => bench::run_command(args, &addr).await,
            Command::Backup { path } => backup::backup(&addr, path, cli.format).await,
            Command::RestoreBackup { path } => backup::restore(&addr, &path).await,
            Command::Migrate { to } => backup::migrate(&addr, to, cli.format).await,
            Command::Ui { open } => ui::run(&addr, open).await,
            Command::Daemon(cmd) => lifecycle::run(cmd, &addr, cli.format).await,
            Command::Service(cmd) => service::run_command(cmd, &addr).await,
            Command::Mcp(args) => mcp_config::run(args, &addr).await,
            Command::Workspaces => {
                let client = autostart::ensure_running(&addr).await?;
                across::workspaces(&client, cli.format).await
            }
            Command::Find(args) => {
                let client = autostart::ensure_running(&addr).await?;
                across::find(&client, args, cli.format).await
            }
            Command::Context(args) => {
                let client = autostart::ensure_running(&addr).await?;
                across::context(&client, args, cli.format).await
            }
            Command::Tools => {
                let client = autostart::ensure_running(&addr).await?;
                output::print(&client.tools().await?, cli.format)
            }
            Command::Completions { shell } => {
                let mut script = Vec::new();
                clap_complete::generate(shell, &mut Cli::command(), "moss", &mut script);
                output::out!("{}", String::from_utf8_lossy(&script))
            }
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // `moss … | head`: the reader has what it wanted; like `cat`, stop without a word.
        Err(e) if e.is::<output::StdoutClosed>() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", output::paint_error(&output::error_line(&e)));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subcommand, at every depth, shows an example in its `--help`.
    #[test]
    fn every_subcommand_help_has_an_example() {
        fn walk(cmd: &mut clap::Command, path: &str, missing: &mut Vec<String>, seen: &mut usize) {
            let help = cmd.render_long_help().to_string();
            *seen += 1;
            if !help.contains("Example") {
                missing.push(path.to_string());
            }
            for sub in cmd.get_subcommands_mut() {
                if sub.get_name() == "help" {
                    continue;
                }
                let path = format!("{path} {}", sub.get_name());
                walk(sub, &path, missing, seen);
            }
        }
        let mut cli = Cli::command();
        cli.build();
        let (mut missing, mut seen) = (Vec::new(), 0);
        walk(&mut cli, "moss", &mut missing, &mut seen);
        assert!(seen > 25, "walked only {seen} commands");
        assert!(missing.is_empty(), "--help without an example: {missing:?}");
    }

    #[test]
    fn completions_name_the_subcommands() {
        for shell in [
            clap_complete::Shell::Bash,
            clap_complete::Shell::Zsh,
            clap_complete::Shell::Fish,
        ] {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "moss", &mut out);
            let script = String::from_utf8(out).unwrap();
            for sub in ["fetch", "daemon", "service", "completions"] {
                assert!(script.contains(sub), "{shell}: no {sub}");
            }
        }
    }
}
