//! The README's `sh` blocks, run in order as a new user would run them, against a daemon the
//! first command starts (real `moss` and `mossd`, a fresh `HOME` and `MOSS_HOME`).
//!
//! How the README is read:
//! - A block whose lines start with `$ ` is a transcript: those lines are commands (a line
//!   ending in `\` goes on), the others are their output. A command whose output starts with
//!   `[CODE]` must fail with that code on stderr; every other command must succeed.
//! - In any other block, every line is a command (with `\` continuations) and must succeed.
//! - `<!-- readme-test: skip: REASON -->` on the line before a block leaves it out (it
//!   installs things, needs another program, or runs until interrupted); the reason is
//!   required.
//! - `<!-- readme-test: model -->` on the line before a block runs it with the embedding model
//!   from `MOSS_TEST_MODEL_DIR` (and leaves it out without one, outside CI): first the test
//!   does what the README asks of the user, naming the model in `~/.moss/config.json` and
//!   restarting the daemon.
//!
//! Each command runs through `sh -c` in a working directory holding the files the README
//! takes for granted (`capsule.md`, `updated.md`, `plan.md`, `auth.md`, `ev.json`), with
//! `$EDITOR` a script that writes a finished capsule, as a person would in their editor.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use moss_tests::capsule_text;

use crate::lifecycle::{free_port, mossd};

const SKIP: &str = "<!-- readme-test: skip:";
const MODEL: &str = "<!-- readme-test: model -->";

/// Longest a README command may take.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug, PartialEq)]
struct Step {
    /// Line in README.md where the command starts.
    line: usize,
    command: String,
    /// The error code the README shows for it, if it shows one.
    fails_with: Option<String>,
    /// Whether it needs the embedding model configured.
    model: bool,
}

/// The commands of the README's `sh` blocks, in order, and how many blocks were skipped.
fn steps(readme: &str) -> (Vec<Step>, usize) {
    let lines: Vec<&str> = readme.lines().collect();
    let (mut steps, mut skipped) = (Vec::new(), 0);
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != "```sh" {
            i += 1;
            continue;
        }
        let start = i + 1;
        let end = start
            + lines[start..]
                .iter()
                .position(|l| l.trim_end() == "```")
                .unwrap_or_else(|| panic!("README.md:{i}: the sh block is never closed"));
        let marker = if i > 0 { lines[i - 1].trim() } else { "" };
        if let Some(reason) = marker.strip_prefix(SKIP) {
            assert!(
                reason.trim_end_matches("-->").trim().len() > 3,
                "README.md:{i}: a skipped block says why"
            );
            skipped += 1;
        } else {
            let model = marker == MODEL;
            steps.extend(
                block(&lines[start..end], start + 1)
                    .into_iter()
                    .map(|s| Step { model, ..s }),
            );
        }
        i = end + 1;
    }
    (steps, skipped)
}

/// The commands of one block whose first line is README line `first`.
fn block(lines: &[&str], first: usize) -> Vec<Step> {
    let transcript = lines.iter().any(|l| l.starts_with("$ "));
    let mut steps: Vec<Step> = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        let line = lines[k];
        let command = if transcript {
            line.strip_prefix("$ ")
        } else {
            Some(line).filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        };
        let Some(command) = command else {
            // Output: the first line after a command tells whether it failed.
            if let Some(last) = steps.last_mut()
                && last.fails_with.is_none()
                && let Some(code) = line.strip_prefix('[').and_then(|r| r.split_once(']'))
            {
                last.fails_with = Some(code.0.to_string());
            }
            k += 1;
            continue;
        };
        let at = first + k;
        let mut command = command.to_string();
        while command.trim_end().ends_with('\\') && k + 1 < lines.len() {
            k += 1;
            command = format!("{}\n{}", command.trim_end(), lines[k]);
        }
        steps.push(Step {
            line: at,
            command,
            fails_with: None,
            model: false,
        });
        k += 1;
    }
    steps
}

/// A user with an empty home, the README's files in a working directory, and `moss` first on
/// `PATH`. Stops the daemon the README started.
struct User {
    dir: tempfile::TempDir,
    addr: String,
}

impl User {
    fn new() -> User {
        let u = User {
            dir: tempfile::tempdir().unwrap(),
            addr: format!("127.0.0.1:{}", free_port()),
        };
        std::fs::create_dir_all(u.home()).unwrap();
        std::fs::create_dir_all(u.work()).unwrap();
        for (file, marker) in [
            ("capsule.md", "first draft"),
            ("updated.md", "second draft"),
            ("plan.md", "the plan"),
            ("auth.md", "auth with evidence"),
        ] {
            std::fs::write(u.work().join(file), capsule_text(marker)).unwrap();
        }
        std::fs::write(
            u.work().join("ev.json"),
            r#"[{"type": "log", "ref": "ci#88", "content": "3 tests failed"}]"#,
        )
        .unwrap();
        let editor = u.work().join("editor.sh");
        std::fs::write(
            &editor,
            format!(
                "#!/bin/sh\ncat '{}' > \"$1\"\n",
                u.work().join("capsule.md").display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&editor, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        u
    }

    /// Names the model in the user's `config.json` (keeping what else it says) and restarts
    /// the daemon, as the README asks.
    fn configure_model(&self, model: &Path) -> Result<(), String> {
        let path = self.home().join(".moss/config.json");
        let mut config: serde_json::Value = match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{path:?}: {e}"))?,
            Err(_) => serde_json::json!({}),
        };
        config["embeddings"] = serde_json::json!({ "model_dir": model });
        std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| e.to_string())?;
        std::fs::write(&path, config.to_string()).map_err(|e| e.to_string())?;
        let out = self.run("moss daemon restart")?;
        if !out.status.success() {
            return Err(format!(
                "moss daemon restart failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// Runs `command` with `sh -c`, as the user would type it; `Err` when it outlives
    /// [`COMMAND_TIMEOUT`].
    fn run(&self, command: &str) -> Result<Output, String> {
        let bin = Path::new(env!("CARGO_BIN_EXE_moss")).parent().unwrap();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![bin.to_path_buf()];
        dirs.extend(std::env::split_paths(&path));
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(self.work())
            .env("PATH", std::env::join_paths(dirs).unwrap())
            .env("HOME", self.home())
            .env("MOSS_HOME", self.home().join(".moss"))
            .env("MOSS_ADDR", &self.addr)
            .env("EDITOR", self.work().join("editor.sh"))
            .env("NO_COLOR", "1")
            .env_remove("VISUAL")
            .env_remove("MOSS_TOKEN")
            .env_remove("MOSS_WORKSPACE")
            .env_remove("MOSS_NO_AUTOSTART")
            .env_remove("XDG_CONFIG_HOME")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + COMMAND_TIMEOUT;
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("still ran after {COMMAND_TIMEOUT:?}"));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(child.wait_with_output().unwrap())
    }
}

impl Drop for User {
    fn drop(&mut self) {
        if std::net::TcpStream::connect(&self.addr).is_ok() {
            let _ = self.run("moss daemon stop");
        }
    }
}

#[test]
fn readme_blocks_are_read_as_commands_with_their_outcome() {
    let readme = "x\n<!-- readme-test: skip: installs binaries -->\n```sh\ncargo install x\n```\n\
                  ```sh\nmoss list   # all\n# a comment\nmoss fetch \\\n  --name a\n```\n\
                  ```sh\n$ moss a\n{ \"ok\": 1 }\n\n$ moss b \\\n    c=d\n[CONFLICT] no\n$ moss c\n```\n";
    let (steps, skipped) = steps(readme);
    assert_eq!(skipped, 1);
    let got: Vec<(usize, &str, Option<&str>)> = steps
        .iter()
        .map(|s| (s.line, s.command.as_str(), s.fails_with.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            (7, "moss list   # all", None),
            (9, "moss fetch \\\n  --name a", None),
            (13, "moss a", None),
            (16, "moss b \\\n    c=d", Some("CONFLICT")),
            (19, "moss c", None),
        ]
    );
}

/// Every command of the README, in order, ends as the README says.
#[test]
fn readme_commands_run_as_written() {
    mossd();
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let (steps, skipped) = steps(&readme);
    assert!(steps.len() > 50, "only {} commands found", steps.len());
    let user = User::new();
    let started = Instant::now();
    let mut failures = Vec::new();
    let model = steps
        .iter()
        .any(|s| s.model)
        .then(moss_tests::model_dir)
        .flatten();
    let mut configured = false;
    let mut left_out = 0;
    for step in &steps {
        if step.model && !configured {
            let Some(dir) = &model else {
                left_out += 1;
                continue;
            };
            user.configure_model(dir)
                .unwrap_or_else(|e| panic!("README.md:{}: {e}", step.line));
            configured = true;
        }
        let out = match user.run(&step.command) {
            Ok(out) => out,
            Err(why) => {
                failures.push(format!("README.md:{} `{}` {why}", step.line, step.command));
                continue;
            }
        };
        let err = String::from_utf8_lossy(&out.stderr);
        let outcome = match (&step.fails_with, out.status.success()) {
            (None, true) => continue,
            (Some(code), false) if err.starts_with(&format!("[{code}]")) => continue,
            (None, false) => format!("failed ({}): {err}", out.status),
            (Some(code), _) => format!("should fail with [{code}], got {}: {err}", out.status),
        };
        failures.push(format!(
            "README.md:{} `{}` {outcome}",
            step.line, step.command
        ));
    }
    eprintln!(
        "{} README commands in {:.1} s ({skipped} blocks skipped, {left_out} commands left \
         out for want of the model)",
        steps.len() - left_out,
        started.elapsed().as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
