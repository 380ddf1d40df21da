//! `moss mem`: the documented examples, and sources and events run from a project's directory.

use moss_tests::TestDaemon;

use super::{json, moss, moss_in, stderr};

/// `moss mem`: the documented examples, and a project source run from the working directory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mem_group_stores_recalls_and_runs_sources() {
    let d = TestDaemon::start().await;
    let stored = json(
        &moss(
            &d,
            &[
                "mem",
                "store",
                "content=User prefers tabs",
                "context=formatting",
                "slot=preferences",
            ],
            None,
        )
        .await,
    );
    assert_eq!(stored["created"], true);
    json(
        &moss(
            &d,
            &[
                "mem",
                "store",
                "content=Last edit broke tests",
                "context=auth.py",
                "weight:=0.8",
            ],
            None,
        )
        .await,
    );
    let about = json(&moss(&d, &["mem", "recall", "query=about auth.py"], None).await);
    assert_eq!(about["items"][0]["content"], "Last edit broke tests");
    let prefs = json(&moss(&d, &["mem", "recall", "slot=preferences"], None).await);
    assert_eq!(prefs["items"][0]["content"], "User prefers tabs");
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".moss")).unwrap();
    std::fs::write(
        project.path().join(".moss/memory.toml"),
        "[[memory]]\ncontent = \"Be concise\"\nslot = \"system\"\n",
    )
    .unwrap();
    let root = format!("root={}", project.path().canonicalize().unwrap().display());
    let ran = json(&moss(&d, &["mem", "sources-run", &root, "name=toml.lua"], None).await);
    assert_eq!(
        (
            ran["sources"][0]["status"].as_str(),
            ran["sources"][0]["items"].as_i64()
        ),
        (Some("ok"), Some(1)),
        "{ran}"
    );
    let rendered = json(
        &moss(
            &d,
            &[
                "mem",
                "render",
                r#"template:=["<system>\n",{"slot":"system"},"</system>"]"#,
            ],
            None,
        )
        .await,
    );
    assert_eq!(rendered["text"], "<system>\n- Be concise\n</system>");
    let out = moss(&d, &["mem", "forget", "query=a"], None).await;
    assert!(
        stderr(&out).contains("[INVALID_REQUEST]"),
        "{}",
        stderr(&out)
    );
    d.stop().await;
}

/// Run inside a project (here, one of its subdirectories), `moss mem sources-run` and
/// `moss mem event` act on that project without `root=`; an event nothing handles says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mem_sources_and_events_act_on_the_working_directorys_project() {
    let d = TestDaemon::start().await;
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join(".moss/sources")).unwrap();
    std::fs::create_dir_all(project.path().join("src/deep")).unwrap();
    std::fs::write(
        project.path().join(".moss/sources/facts.lua"),
        "store('Deploys go through staging', {context = 'deploy'})\n",
    )
    .unwrap();
    let inside = project.path().join("src/deep");
    let ran = json(&moss_in(&d, Some(&inside), &["mem", "sources-run"], None).await);
    let facts = ran["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "facts.lua")
        .unwrap_or_else(|| panic!("the project's source did not run: {ran}"));
    assert_eq!(facts["status"], "ok", "{ran}");
    let event = [
        "mem",
        "event",
        "event=file_opened",
        r#"data:={"file":"src/auth.py"}"#,
        "session=editor-1",
    ];
    let e = json(&moss_in(&d, Some(&inside), &event, None).await);
    assert_eq!(
        (e["handled"].as_i64(), e["stored"].as_i64()),
        (Some(1), Some(1)),
        "{e}"
    );
    let nothing = json(
        &moss_in(
            &d,
            Some(&inside),
            &["mem", "event", "event=build_failed"],
            None,
        )
        .await,
    );
    assert_eq!(nothing["handled"], 0);
    assert!(
        nothing["reason"]
            .as_str()
            .unwrap()
            .contains("session.lua (file_opened)"),
        "{nothing}"
    );
    d.stop().await;
}
