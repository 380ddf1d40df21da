//! The swarm verbs: guarded append, pivoted compose, watch, stats and run purge.

use moss_tests::{TestDaemon, capsule_text};

use super::{json, moss, stderr};

/// The swarm verbs: guarded multi-section append, a pivoted compose over a run filter, watch
/// with a cursor, stats, and a confirmed run purge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn swarm_verbs_append_compose_watch_stats_and_purge_a_run() {
    let d = TestDaemon::start().await;
    let start = json(&moss(&d, &["watch", "--timeout-ms", "0"], None).await);
    assert_eq!(start["event"], "timeout");
    let cursor = start["cursor"].as_i64().unwrap().to_string();
    for (name, role) in [("sec", "security"), ("perf", "perf")] {
        json(
            &moss(
                &d,
                &[
                    "store",
                    "--name",
                    name,
                    "--workspace",
                    "pr",
                    "--run-id",
                    "r42",
                    "--role",
                    role,
                ],
                Some(&capsule_text(name)),
            )
            .await,
        );
    }
    let seen = json(&moss(&d, &["watch", "--run-id", "r42", "--since", &cursor], None).await);
    assert_eq!(
        (seen["event"].as_str(), seen["capsule"]["name"].as_str()),
        (Some("created"), Some("sec"))
    );

    let appended = json(
        &moss(
            &d,
            &[
                "append",
                "--workspace",
                "pr",
                "--name",
                "sec",
                "--if-revision",
                "1",
                "--add",
                "Decisions=- parameterize",
                "--add",
                "Current status=reviewing",
            ],
            None,
        )
        .await,
    );
    assert_eq!(appended["revision"], 2, "{appended}");
    let stale = moss(
        &d,
        &[
            "append",
            "--workspace",
            "pr",
            "--name",
            "sec",
            "--if-revision",
            "1",
            "--section",
            "Decisions",
            "--content",
            "x",
        ],
        None,
    )
    .await;
    assert!(!stale.status.success());
    assert!(stderr(&stale).contains("CONFLICT"), "{}", stderr(&stale));

    let bundle = json(
        &moss(
            &d,
            &[
                "compose",
                "--where",
                "run_id=r42",
                "--pivot",
                "section",
                "--sections",
                "Decisions",
                "--attribution",
            ],
            None,
        )
        .await,
    );
    // "none yet" was a placeholder: replaced in sec, and perf's is left out of the pivot.
    assert_eq!(
        bundle["bundle_text"],
        "## Decisions\n\n**sec** (security):\n- parameterize\n"
    );
    let stats = json(&moss(&d, &["stats", "--workspace", "pr"], None).await);
    assert_eq!(stats["capsule_count"], 2, "{stats}");
    assert_eq!(stats["by_role"]["security"], 1);

    let refused = moss(&d, &["purge", "--run-id", "r42"], None).await;
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("would delete 2 capsules"),
        "{}",
        stderr(&refused)
    );
    let purged = json(&moss(&d, &["purge", "--run-id", "r42", "--confirm"], None).await);
    assert_eq!(purged["purged"], 2);
    d.stop().await;
}
