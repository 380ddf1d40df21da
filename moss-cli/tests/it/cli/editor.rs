//! `moss new`: the capsule written in the user's editor.

use std::process::{Command, Stdio};

use moss_tests::{TestDaemon, capsule_text};

use super::{json, moss, moss_with_env, stderr};

/// `moss new`: the editor gets the skeleton; a thin text is refused and the editor reopens with
/// the reason on top; the filled text is stored. The editor here is a script that answers each
/// round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_reopens_the_editor_until_the_capsule_is_stored() {
    let d = TestDaemon::start().await;
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("editor.sh");
    let log = dir.path().join("rounds.log");
    let full = capsule_text("written in the editor");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nf=\"$1\"\ncat \"$f\" >> '{log}'\necho '=====' >> '{log}'\n\
             if grep -q 'CAPSULE_TOO_THIN' \"$f\"; then printf '%s' '{full}' > \"$f\"; \
             else printf '## Objective\\nonly this\\n' > \"$f\"; fi\n",
            log = log.display(),
            full = full.replace('\'', "")
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (addr, home) = (d.daemon.addr.to_string(), d.home_path().to_path_buf());
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_moss"))
            .args(["new", "--name", "edited", "--workspace", "n"])
            .env("MOSS_ADDR", addr)
            .env("MOSS_HOME", home)
            .env("EDITOR", &script)
            .env_remove("VISUAL")
            .env_remove("MOSS_TOKEN")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stored = json(&out);
    assert!(
        stderr(&out).contains("CAPSULE_TOO_THIN"),
        "{}",
        stderr(&out)
    );
    let rounds = std::fs::read_to_string(&log).unwrap();
    let rounds: Vec<&str> = rounds.split("=====\n").filter(|r| !r.is_empty()).collect();
    assert_eq!(rounds.len(), 2, "{rounds:?}");
    assert!(
        rounds[0].contains("## Open questions"),
        "the skeleton: {}",
        rounds[0]
    );
    assert!(
        rounds[1].starts_with("<!-- moss: not stored: [CAPSULE_TOO_THIN]"),
        "{}",
        rounds[1]
    );
    let fetched = json(&moss(&d, &["fetch", stored["id"].as_str().unwrap()], None).await);
    assert!(
        fetched["capsule_text"]
            .as_str()
            .unwrap()
            .contains("written in the editor")
    );
    d.stop().await;
}

/// `EDITOR=true moss new`: the skeleton saved as it was (six empty sections) stores nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_refuses_the_unedited_skeleton() {
    let d = TestDaemon::start().await;
    let out = moss_with_env(
        &d,
        &["new", "--name", "untouched", "--workspace", "n"],
        None,
        &[("EDITOR", "true"), ("VISUAL", "")],
    )
    .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("skeleton was saved as it was"),
        "{}",
        stderr(&out)
    );
    let listed = json(&moss(&d, &["list", "--workspace", "n"], None).await);
    assert_eq!(listed["items"], serde_json::json!([]), "{listed}");
}
