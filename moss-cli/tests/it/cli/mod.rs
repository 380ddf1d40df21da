//! The `moss` binary as a black box against a real daemon started in-process, one module per
//! group of verbs; the helpers that run `moss` and read its answer sit here.

mod bench;
mod capsule;
mod editor;
mod errors;
mod history;
mod memory;
mod reasoning;
mod swarm;
mod workspace;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use moss_tests::TestDaemon;
use serde_json::Value;

/// Runs `moss args…` against `d` with `stdin` piped in.
pub(crate) async fn moss(d: &TestDaemon, args: &[&str], stdin: Option<&str>) -> Output {
    moss_run(d, None, args, stdin, &[]).await
}

/// [`moss`] with more environment variables.
pub(crate) async fn moss_with_env(
    d: &TestDaemon,
    args: &[&str],
    stdin: Option<&str>,
    env: &[(&str, &str)],
) -> Output {
    moss_run(d, None, args, stdin, env).await
}

/// [`moss`] in the working directory `cwd`.
async fn moss_in(
    d: &TestDaemon,
    cwd: Option<&std::path::Path>,
    args: &[&str],
    stdin: Option<&str>,
) -> Output {
    moss_run(d, cwd, args, stdin, &[]).await
}

/// [`moss`] in `cwd` (when given) with more environment variables.
async fn moss_run(
    d: &TestDaemon,
    cwd: Option<&std::path::Path>,
    args: &[&str],
    stdin: Option<&str>,
    env: &[(&str, &str)],
) -> Output {
    let addr = d.daemon.addr.to_string();
    let home = d.home_path().to_path_buf();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let stdin = stdin.map(str::to_string);
    let cwd = cwd.map(std::path::Path::to_path_buf);
    tokio::task::spawn_blocking(move || {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_moss"));
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        let mut child = cmd
            .args(&args)
            .env("MOSS_ADDR", addr)
            .env("MOSS_HOME", home)
            .env_remove("MOSS_TOKEN")
            .env_remove("MOSS_WORKSPACE")
            .envs(env)
            .stdin(if stdin.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("moss runs");
        if let Some(text) = stdin {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
        }
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

pub(crate) fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "moss failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The names of a `moss list` answer.
fn listed(out: &Output) -> Vec<String> {
    let page = json(out);
    page["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {page}"))
        .iter()
        .map(|c| c["name"].as_str().unwrap_or_default().to_string())
        .collect()
}
