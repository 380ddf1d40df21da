//! The capsule verbs: store, fetch, update and delete, browsing, search, compose, append, bulk,
//! purge, export and import, evidence, and fields given more than once.

use moss_tests::{TestDaemon, capsule_text};

use super::{json, moss, stderr};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn store_fetch_update_delete_round_trip() {
    let d = TestDaemon::start().await;
    let text = capsule_text("cli round trip");
    let stored = json(
        &moss(
            &d,
            &[
                "store",
                "--name",
                "auth",
                "--workspace",
                "Proj",
                "--tags",
                "a,b",
            ],
            Some(&text),
        )
        .await,
    );
    let id = stored["id"].as_str().unwrap().to_string();
    assert_eq!(stored["fetch_key"]["moss_capsule"], "auth");
    assert_eq!(stored["fetch_key"]["moss_workspace"], "Proj");

    let by_name = json(
        &moss(
            &d,
            &["fetch", "--workspace", "proj", "--name", "AUTH"],
            None,
        )
        .await,
    );
    assert_eq!(by_name["capsule_text"], text.as_str());
    assert_eq!(by_name["tags"], serde_json::json!(["a", "b"]));
    assert_eq!(by_name["source"], "cli");

    let by_id = json(&moss(&d, &["fetch", &id, "--no-text"], None).await);
    assert_eq!(by_id["id"], id.as_str());
    assert!(by_id.get("capsule_text").is_none());

    let updated = json(
        &moss(
            &d,
            &["update", &id, "--title", "New title", "--phase", "review"],
            None,
        )
        .await,
    );
    assert_eq!(updated["id"], id.as_str());
    let after = json(&moss(&d, &["fetch", &id], None).await);
    assert_eq!(after["title"], "New title");
    assert_eq!(after["phase"], "review");
    assert_eq!(
        after["capsule_text"],
        text.as_str(),
        "no stdin leaves the text alone"
    );

    let new_text = capsule_text("updated from stdin");
    json(
        &moss(
            &d,
            &["update", "--workspace", "proj", "--name", "auth"],
            Some(&new_text),
        )
        .await,
    );
    let after = json(&moss(&d, &["fetch", &id], None).await);
    assert_eq!(after["capsule_text"], new_text.as_str());

    let deleted = json(
        &moss(
            &d,
            &["delete", "--workspace", "proj", "--name", "auth"],
            None,
        )
        .await,
    );
    assert_eq!(deleted, serde_json::json!({"deleted": true, "id": id}));
    let gone = moss(&d, &["fetch", &id], None).await;
    assert_eq!(gone.status.code(), Some(1));
    assert!(
        stderr(&gone).starts_with("[NOT_FOUND] "),
        "{}",
        stderr(&gone)
    );
    let kept = json(&moss(&d, &["fetch", &id, "--include-deleted"], None).await);
    assert!(kept["deleted_at"].is_i64());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browse_commands_filter_and_render_tables() {
    let d = TestDaemon::start().await;
    for (name, run) in [("a1", "run-1"), ("a2", "run-1"), ("b1", "run-2")] {
        json(
            &moss(
                &d,
                &[
                    "store",
                    "--name",
                    name,
                    "--workspace",
                    "w",
                    "--run-id",
                    run,
                    "--phase",
                    "p",
                    "--role",
                    "r",
                ],
                Some(&capsule_text(name)),
            )
            .await,
        );
    }
    let list = json(&moss(&d, &["list", "--workspace", "w", "--run-id", "run-1"], None).await);
    assert_eq!(list["pagination"]["total"], 2);
    assert_eq!(list["sort"], "updated_at_desc");
    assert_eq!(list["items"][0]["name"], "a2", "newest first");

    let inv = json(
        &moss(
            &d,
            &["inventory", "--name-prefix", "a", "--limit", "1"],
            None,
        )
        .await,
    );
    assert_eq!(inv["items"].as_array().unwrap().len(), 1);
    assert_eq!(inv["pagination"]["has_more"], true);

    let latest = json(
        &moss(
            &d,
            &[
                "latest",
                "--workspace",
                "w",
                "--include-text",
                "--run-id",
                "run-2",
            ],
            None,
        )
        .await,
    );
    assert_eq!(latest["item"]["name"], "b1");
    assert!(
        latest["item"]["capsule_text"]
            .as_str()
            .unwrap()
            .contains("b1")
    );

    let many = json(
        &moss(
            &d,
            &[
                "fetch-many",
                "--workspace",
                "w",
                "--name",
                "a1",
                "--name",
                "nope",
                "--no-text",
            ],
            None,
        )
        .await,
    );
    assert_eq!(many["items"].as_array().unwrap().len(), 1);
    assert_eq!(many["errors"][0]["code"], "NOT_FOUND");

    let table = moss(&d, &["list", "--workspace", "w", "--format", "table"], None).await;
    assert!(table.status.success());
    let t = String::from_utf8_lossy(&table.stdout);
    assert!(
        t.contains("a1") && t.contains("b1") && t.contains("3 of 3"),
        "{t}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_compose_append_bulk_and_purge() {
    let d = TestDaemon::start().await;
    for name in ["sec", "perf"] {
        let text = capsule_text(&format!("{name} review of the redis cache"));
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
                    "r1",
                ],
                Some(&text),
            )
            .await,
        );
    }

    let hits = json(&moss(&d, &["search", "redis", "--workspace", "pr"], None).await);
    assert_eq!(hits["pagination"]["total"], 2, "{hits}");
    assert!(
        hits["items"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("<b>redis</b>")
    );
    let table = moss(&d, &["search", "redis", "--format", "table"], None).await;
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("snippet") && table.contains("score"),
        "{table}"
    );
    let bad = moss(&d, &["search", "\"open"], None).await;
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).starts_with("[INVALID_REQUEST]") && stderr(&bad).contains("--safe"),
        "{}",
        stderr(&bad)
    );
    let safe = json(&moss(&d, &["search", "\"redis", "--safe"], None).await);
    assert_eq!(safe["pagination"]["total"], 2, "{safe}");

    let bundle = json(
        &moss(
            &d,
            &[
                "compose",
                "--workspace",
                "pr",
                "--name",
                "sec",
                "--name",
                "perf",
                "--sections",
                "Objective",
                "--store-as",
                "both",
            ],
            None,
        )
        .await,
    );
    assert_eq!(bundle["parts_count"], 2);
    assert!(
        bundle["bundle_text"]
            .as_str()
            .unwrap()
            .starts_with("## sec\n\n## Objective")
    );
    assert!(bundle["stored"]["id"].is_string());

    let appended = json(
        &moss(
            &d,
            &[
                "append",
                "--workspace",
                "pr",
                "--name",
                "sec",
                "--section",
                "Decisions",
            ],
            Some("- use a TTL of 5 minutes\n"),
        )
        .await,
    );
    assert_eq!(appended["section_hit"], "## Decisions");
    assert_eq!(appended["replaced"], true, "the body was `none yet`");

    let updated = json(
        &moss(
            &d,
            &["bulk-update", "--run-id", "r1", "--set-phase", "archived"],
            None,
        )
        .await,
    );
    assert_eq!(updated["updated"], 2);
    let refused = moss(&d, &["bulk-delete"], None).await;
    assert!(stderr(&refused).starts_with("[INVALID_REQUEST]"));
    let deleted = json(&moss(&d, &["bulk-delete", "--phase", "archived"], None).await);
    assert_eq!(deleted["deleted"], 2);
    let purged = json(&moss(&d, &["purge", "--workspace", "pr"], None).await);
    assert_eq!(purged["purged"], 2);

    let tools = json(&moss(&d, &["tools"], None).await);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"capsule_search") && names.contains(&"capsule_append"));
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn export_and_import_round_trip_through_the_cli() {
    let d = TestDaemon::start().await;
    for name in ["a", "b"] {
        json(
            &moss(
                &d,
                &["store", "--workspace", "ws", "--name", name],
                Some(&capsule_text(name)),
            )
            .await,
        );
    }
    let out = moss(
        &d,
        &["export", "--workspace", "ws", "--path", "cli.jsonl"],
        None,
    )
    .await;
    assert!(
        stderr(&out).is_empty(),
        "no progress line when stderr is not a terminal: {}",
        stderr(&out)
    );
    let exported = json(&out);
    assert_eq!(exported["count"], 2);
    let file = d.home_path().join("exports").join("cli.jsonl");
    assert_eq!(exported["path"], file.display().to_string());
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 3);

    // Default mode is error: the capsules exist, nothing is imported.
    let refused = moss(&d, &["import", "--path", "cli.jsonl"], None).await;
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).starts_with("[CONFLICT]"),
        "{}",
        stderr(&refused)
    );
    let renamed = json(
        &moss(
            &d,
            &["import", "--path", "cli.jsonl", "--mode", "rename"],
            None,
        )
        .await,
    );
    assert_eq!(
        (&renamed["imported"], &renamed["renamed"]),
        (&2.into(), &2.into())
    );
    let replaced = json(
        &moss(
            &d,
            &["import", "--path", "cli.jsonl", "--mode", "replace"],
            None,
        )
        .await,
    );
    assert_eq!(replaced["replaced"], 2);

    let bad = moss(&d, &["export", "--path", "../out.jsonl"], None).await;
    assert!(!bad.status.success());
    let err = stderr(&bad);
    assert!(
        err.starts_with("[INVALID_REQUEST]") && err.contains(".."),
        "{err}"
    );
    let bad = moss(
        &d,
        &["import", "--path", "cli.jsonl", "--mode", "merge"],
        None,
    )
    .await;
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("replace"), "clap lists the modes");
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evidence_flags_store_expand_and_clear() {
    let d = TestDaemon::start().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("evidence.json");
    std::fs::write(
        &file,
        r#"[{"type": "snippet", "ref": "src/a.rs:3", "content": "let a = 1;"}]"#,
    )
    .unwrap();
    let file = file.to_str().unwrap();
    json(
        &moss(
            &d,
            &[
                "store",
                "--name",
                "e",
                "--evidence",
                "transcript=run-7#12",
                "--evidence-file",
                file,
            ],
            Some(&capsule_text("evidence")),
        )
        .await,
    );
    let c = json(&moss(&d, &["fetch", "--name", "e"], None).await);
    assert_eq!(c["evidence"][0]["ref"], "run-7#12", "{c}");
    assert_eq!(c["evidence"][1]["chars"], 10, "{c}");
    assert!(c["evidence"][1].get("content").is_none(), "{c}");
    let c = json(&moss(&d, &["fetch", "--name", "e", "--expand-evidence"], None).await);
    assert_eq!(c["evidence"][1]["content"], "let a = 1;", "{c}");
    json(&moss(&d, &["update", "--name", "e", "--clear-evidence"], None).await);
    let c = json(&moss(&d, &["fetch", "--name", "e"], None).await);
    assert!(c.get("evidence").is_none(), "{c}");
    // A file holding [] clears too, as [] does over REST and MCP.
    json(
        &moss(
            &d,
            &["update", "--name", "e", "--evidence", "log=ci#1"],
            None,
        )
        .await,
    );
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, "[]").unwrap();
    let empty = empty.to_str().unwrap();
    json(
        &moss(
            &d,
            &["update", "--name", "e", "--evidence-file", empty],
            None,
        )
        .await,
    );
    let c = json(&moss(&d, &["fetch", "--name", "e"], None).await);
    assert!(c.get("evidence").is_none(), "{c}");
    // A flag without `=` is named with the fix.
    let out = moss(
        &d,
        &["update", "--name", "e", "--evidence", "snippet"],
        None,
    )
    .await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("TYPE=REF"), "{}", stderr(&out));
    d.stop().await;
}

/// `context=a context=b` is both contexts (the last one alone was kept); a field that takes
/// one value, given twice, is refused naming it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_field_is_a_list_where_the_request_takes_one() {
    let d = TestDaemon::start().await;
    let stored = json(
        &moss(
            &d,
            &[
                "mem",
                "store",
                "content=Rotate keys",
                "context=auth.py",
                "context=keys/",
                "tags=a",
                "tags:=[\"b\"]",
            ],
            None,
        )
        .await,
    );
    assert_eq!(
        stored["memory"]["contexts"],
        serde_json::json!(["auth.py", "keys/"]),
        "{stored}"
    );
    assert_eq!(
        stored["memory"]["tags"],
        serde_json::json!(["a", "b"]),
        "{stored}"
    );

    let twice = moss(&d, &["mem", "store", "content=a", "content=b"], None).await;
    assert_eq!(twice.status.code(), Some(1));
    assert!(
        stderr(&twice).starts_with(
            "[INVALID_REQUEST] content is given 2 times, but POST /memories takes one value"
        ),
        "{}",
        stderr(&twice)
    );
    let task = moss(
        &d,
        &["tasks", "create", "-w", "s", "title=a", "title=b"],
        None,
    )
    .await;
    assert!(
        stderr(&task).contains("title is given 2 times"),
        "{}",
        stderr(&task)
    );
}
