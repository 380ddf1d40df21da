//! What `moss` says when a call fails or cannot be made, and the help every subcommand carries.

use std::process::{Command, Stdio};

use moss_tests::{TestDaemon, capsule_text};

use super::{json, moss, stderr};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_one_line_with_the_code_and_exit_1() {
    let d = TestDaemon::start().await;
    let out = moss(
        &d,
        &["store", "--name", "thin"],
        Some("## Objective\nonly this\n"),
    )
    .await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with("[CAPSULE_TOO_THIN] capsule missing required sections: [Current status"),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    let out = moss(&d, &["store", "--name", "x"], None).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("stdin"), "{}", stderr(&out));

    let out = moss(
        &d,
        &["fetch", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--name", "x"],
        None,
    )
    .await;
    assert!(
        stderr(&out).starts_with("[AMBIGUOUS_ADDRESSING]"),
        "{}",
        stderr(&out)
    );

    let text = capsule_text("dup");
    json(&moss(&d, &["store", "--name", "dup"], Some(&text)).await);
    let out = moss(&d, &["store", "--name", "dup"], Some(&text)).await;
    assert!(
        stderr(&out).starts_with("[NAME_ALREADY_EXISTS]"),
        "{}",
        stderr(&out)
    );
    json(
        &moss(
            &d,
            &["store", "--name", "dup", "--mode", "replace"],
            Some(&text),
        )
        .await,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_daemon_is_reported_with_what_to_do() {
    let d = TestDaemon::start().await;
    let home = d.home_path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_moss"))
            .args(["list"])
            .env("MOSS_ADDR", "127.0.0.1:9")
            .env("MOSS_HOME", home)
            .env("MOSS_NO_AUTOSTART", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with("[UNAVAILABLE]")
            && err.contains("MOSS_NO_AUTOSTART")
            && err.contains("moss daemon start")
            && err.contains("mossd --addr 127.0.0.1:9"),
        "{err}"
    );
}

#[test]
fn a_malformed_address_is_named_with_the_fix() {
    let home = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_moss"))
        .args(["--addr", "127.0.0.1:78210", "list"])
        .env("MOSS_HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.starts_with("[INVALID_REQUEST] invalid daemon address \"127.0.0.1:78210\"")
            && err.contains("invalid port"),
        "{err}"
    );
    assert!(
        !home.path().join("mossd.log").exists(),
        "no daemon is started for an address that cannot be used"
    );
}

#[test]
fn every_subcommand_has_help_with_examples() {
    for sub in [
        "store",
        "fetch",
        "fetch-many",
        "update",
        "delete",
        "latest",
        "list",
        "inventory",
        "export",
        "import",
        "bench",
        "watch",
        "stats",
        "purge",
        "append",
        "compose",
        "restore",
        "lineage",
        "clone",
        "versions",
        "diff",
        "new",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_moss"))
            .args([sub, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{sub}");
        assert!(
            help.contains("Examples:") && help.contains("moss "),
            "{sub} help has no examples:\n{help}"
        );
    }
}
