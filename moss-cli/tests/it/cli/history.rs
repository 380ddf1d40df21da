//! A capsule's history from the CLI: lineage, clone, restore, versions and diff.

use moss_tests::{TestDaemon, capsule_text};

use super::{json, moss, stderr};

/// History verbs: lineage on store, clone, lineage both ways, restore with rename, safe search.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_verbs_clone_lineage_restore_and_safe_search() {
    let d = TestDaemon::start().await;
    let research = json(
        &moss(
            &d,
            &["store", "--name", "research", "--workspace", "h"],
            Some(&capsule_text("pr-123 notes")),
        )
        .await,
    );
    json(
        &moss(
            &d,
            &[
                "store",
                "--name",
                "plan",
                "--workspace",
                "h",
                "--based-on",
                "research",
            ],
            Some(&capsule_text("plan")),
        )
        .await,
    );
    let copy = json(
        &moss(
            &d,
            &[
                "clone",
                "--from-name",
                "plan",
                "--from-workspace",
                "h",
                "--name",
                "plan-v2",
                "--phase",
                "review",
            ],
            None,
        )
        .await,
    );
    assert_eq!(copy["revision"], 1);
    let lineage = json(&moss(&d, &["lineage", "--workspace", "h", "--name", "plan"], None).await);
    assert_eq!(lineage["based_on"][0]["capsule"]["id"], research["id"]);
    assert_eq!(lineage["derived"][0]["capsule"]["name"], "plan-v2");

    json(
        &moss(
            &d,
            &["delete", "--workspace", "h", "--name", "research"],
            None,
        )
        .await,
    );
    json(
        &moss(
            &d,
            &["store", "--name", "research", "--workspace", "h"],
            Some(&capsule_text("again")),
        )
        .await,
    );
    let taken = moss(&d, &["restore", research["id"].as_str().unwrap()], None).await;
    assert!(
        stderr(&taken).contains("NAME_ALREADY_EXISTS"),
        "{}",
        stderr(&taken)
    );
    let restored = json(
        &moss(
            &d,
            &[
                "restore",
                research["id"].as_str().unwrap(),
                "--mode",
                "rename",
            ],
            None,
        )
        .await,
    );
    assert_eq!(restored["name"], "research-1");

    let hits = json(
        &moss(
            &d,
            &[
                "search",
                "pr-123",
                "--safe",
                "--no-count",
                "--workspace",
                "h",
            ],
            None,
        )
        .await,
    );
    assert_eq!(hits["items"][0]["name"], "research-1", "{hits}");
    assert!(hits["pagination"].get("total").is_none());
    d.stop().await;
}

/// Versions and diff from the CLI: an update keeps the previous text, fetch --version reads it,
/// diff --lines shows the change.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn versions_fetch_version_and_diff() {
    let d = TestDaemon::start().await;
    json(
        &moss(
            &d,
            &["store", "--name", "auth", "--workspace", "v"],
            Some(&capsule_text("first")),
        )
        .await,
    );
    json(
        &moss(
            &d,
            &["update", "--name", "auth", "--workspace", "v"],
            Some(&capsule_text("second")),
        )
        .await,
    );
    let versions = json(
        &moss(
            &d,
            &["versions", "--name", "auth", "--workspace", "v"],
            None,
        )
        .await,
    );
    assert_eq!(versions["versions"][0]["revision"], 1, "{versions}");
    let before = json(
        &moss(
            &d,
            &[
                "fetch",
                "--name",
                "auth",
                "--workspace",
                "v",
                "--at-version",
                "-1",
            ],
            None,
        )
        .await,
    );
    assert!(before["capsule_text"].as_str().unwrap().contains("first"));
    let diff = json(
        &moss(
            &d,
            &[
                "diff",
                "--name",
                "auth",
                "--workspace",
                "v",
                "--at-version",
                "-1",
                "--to-name",
                "auth",
                "--lines",
            ],
            None,
        )
        .await,
    );
    assert_eq!(diff["sections"]["Objective"], "modified", "{diff}");
    assert!(
        diff["diffs"]["Objective"]
            .as_str()
            .unwrap()
            .contains("+second")
    );
    d.stop().await;
}

/// `moss fetch --version -1` is the capsule's previous version (it printed the CLI's version and
/// exited 0), and `--content "- rotate keys?"` is content (clap took it for a flag).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_version_is_the_capsules_and_a_leading_hyphen_is_content() {
    let d = TestDaemon::start().await;
    let at = ["--workspace", "v", "--name", "auth"];
    json(
        &moss(
            &d,
            &[&["store"][..], &at].concat(),
            Some(&capsule_text("first")),
        )
        .await,
    );
    json(
        &moss(
            &d,
            &[&["update"][..], &at].concat(),
            Some(&capsule_text("second")),
        )
        .await,
    );

    let previous = json(
        &moss(
            &d,
            &[&["fetch"][..], &at, &["--version", "-1"]].concat(),
            None,
        )
        .await,
    );
    assert_eq!(previous["revision"], 1, "{previous}");
    assert!(previous["capsule_text"].as_str().unwrap().contains("first"));
    let diff = json(
        &moss(
            &d,
            &[
                &["diff"][..],
                &at,
                &["--version", "-1", "--to-name", "auth"],
            ]
            .concat(),
            None,
        )
        .await,
    );
    assert!(diff.get("sections").is_some(), "{diff}");
    let top = moss(&d, &["--version"], None).await;
    assert!(
        String::from_utf8_lossy(&top.stdout).starts_with("moss "),
        "moss --version is the CLI's"
    );

    let appended = moss(
        &d,
        &[
            &["append"][..],
            &at,
            &["--section", "Open questions", "--content", "- rotate keys?"],
        ]
        .concat(),
        None,
    )
    .await;
    json(&appended);
    let now = json(&moss(&d, &[&["fetch"][..], &at].concat(), None).await);
    assert!(
        now["capsule_text"]
            .as_str()
            .unwrap()
            .contains("- rotate keys?"),
        "{now}"
    );
}
