//! What `moss` prints: tables for people, and a stdout its reader closed early.

use std::process::{Command, Stdio};

use moss_tests::TestDaemon;

use crate::cli::stderr;

/// `moss … | head`: a reader that closes stdout early ends the command quietly, exit 0, instead
/// of a panic (exit 101) on the closed pipe.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_ends_the_command_quietly() {
    let d = TestDaemon::start().await;
    for args in [
        &["tools"][..],
        &["completions", "bash"],
        &["tools", "--format", "table"],
        &["inventory"],
    ] {
        let (addr, home) = (d.daemon.addr.to_string(), d.home_path().to_path_buf());
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let out = tokio::task::spawn_blocking(move || {
            let mut child = Command::new(env!("CARGO_BIN_EXE_moss"))
                .args(&args)
                .env("MOSS_ADDR", addr)
                .env("MOSS_HOME", home)
                .env("NO_COLOR", "1")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            // The reader is gone before the first line is written, as `head` after its lines.
            drop(child.stdout.take());
            (args, child.wait_with_output().unwrap())
        })
        .await
        .unwrap();
        let (args, out) = out;
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{args:?}");
    }
}
