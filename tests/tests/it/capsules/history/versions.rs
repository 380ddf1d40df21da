//! Versions: rotation at the configured count, diff, versioning off, and imports that replace.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use super::ok;
use crate::util::{expect_error, store};

#[tokio::test]
async fn versions_rotate_at_the_configured_count_and_diff_reads_them() {
    let d = TestDaemon::start_with_config(Some(json!({"capsule_versions": 3}))).await;
    let text = |status: &str| {
        format!(
            "## Objective\nShip auth\n## Current status\n{status}\n## Decisions\n- JWT\n\
             ## Next actions\n- go\n## Key locations\nsrc/\n## Open questions\n- keys?\n"
        )
    };
    let id = store(
        &d,
        json!({"workspace": "v", "name": "auth", "capsule_text": text("s1")}),
    )
    .await;
    // Revisions 2..=6 by update, append, replace and bulk update: each keeps the one before.
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"capsule_text": text("s2"), "phase": "p2"}),
    )
    .await;
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"capsule_text": text("s3")}),
    )
    .await;
    ok(
        &d,
        "POST",
        "/capsules/append",
        json!({"id": id, "section": "Decisions", "content": "- refresh"}),
    )
    .await;
    ok(&d, "POST", "/capsules", json!({"workspace": "v", "name": "auth", "mode": "replace", "capsule_text": text("s5"), "run_id": "r5"})).await;
    ok(
        &d,
        "POST",
        "/capsules/bulk-update",
        json!({"workspace": "v", "set_role": "writer"}),
    )
    .await;
    let (s, v) = d
        .call("GET", "/capsules/versions?workspace=v&name=auth", None)
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        (v["revision"].as_i64(), v["keep"].as_i64()),
        (Some(6), Some(3))
    );
    let revs: Vec<(i64, i64)> = v["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["revision"].as_i64().unwrap(),
                x["version"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        revs,
        [(5, -1), (4, -2), (3, -3)],
        "the newest three earlier revisions: {v}"
    );
    assert_eq!(
        v["versions"][0]["run_id"], "r5",
        "who wrote revision 5: {v}"
    );
    // Fetch by offset and by revision; a revision no longer kept is a 404 saying what is.
    let (_, c) = d
        .call("GET", &format!("/capsules/{id}?version=-3"), None)
        .await;
    assert_eq!(
        (c["revision"].as_i64(), c["phase"].as_str()),
        (Some(3), Some("p2")),
        "{c}"
    );
    assert!(c["capsule_text"].as_str().unwrap().contains("\ns3\n"));
    let (_, c) = d
        .call(
            "GET",
            "/capsules/by-name?workspace=v&name=auth&version=4",
            None,
        )
        .await;
    assert!(
        c["capsule_text"].as_str().unwrap().contains("- refresh"),
        "{c}"
    );
    let (s, e) = d
        .call("GET", &format!("/capsules/{id}?version=2"), None)
        .await;
    let e = expect_error(s, &e, "NOT_FOUND", 404);
    assert_eq!(
        (
            e["details"]["field"].as_str(),
            e["details"]["kept"].as_i64()
        ),
        (Some("version"), Some(3))
    );
    // A delete keeps no version.
    ok(&d, "DELETE", &format!("/capsules/{id}"), Value::Null).await;
    let (_, v) = d
        .call(
            "GET",
            &format!("/capsules/versions?id={id}&include_deleted=true"),
            None,
        )
        .await;
    assert_eq!(v["versions"].as_array().unwrap().len(), 3);
    assert_eq!(v["revision"], 7);

    // Diff across versions: revision 3 against revision 5.
    let r = ok(
        &d,
        "POST",
        "/capsules/diff",
        json!({"a": {"id": id, "version": 3}, "b": {"id": id, "version": 5}, "include_diff": true}),
    )
    .await;
    assert_eq!(
        (r["a_revision"].as_i64(), r["b_revision"].as_i64()),
        (Some(3), Some(5))
    );
    assert_eq!(r["sections"]["Current status"], "modified");
    assert_eq!(r["sections"]["Objective"], "unchanged");
    assert_eq!(r["summary"]["modified_sections"], 1, "{r}");
    assert!(
        r["diffs"]["Current status"]
            .as_str()
            .unwrap()
            .contains("-s3\n+s5"),
        "{r}"
    );
    // Two capsules: added and removed content.
    let other = store(
        &d,
        json!({"workspace": "v", "name": "other", "allow_thin": true,
               "capsule_text": "## Objective\nShip auth\n## Risks\n- skew\n"}),
    )
    .await;
    let r = ok(
        &d,
        "POST",
        "/capsules/diff",
        json!({"a": {"id": id, "version": -1}, "b": {"workspace": "v", "name": "other"}}),
    )
    .await;
    assert_eq!(r["sections"]["Risks"], "added", "{r}");
    assert_eq!(r["sections"]["Decisions"], "removed_content");
    assert!(r.get("diffs").is_none());
    assert_eq!(r["order"][0], "Objective");

    // A purge takes the versions with it.
    ok(&d, "POST", "/capsules/purge", json!({})).await;
    let (s, _) = d
        .call(
            "GET",
            &format!("/capsules/versions?id={id}&include_deleted=true"),
            None,
        )
        .await;
    assert_eq!(s, 404);
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool("capsule_versions", json!({"id": other}))
        .await;
    assert_eq!(r["structuredContent"]["versions"], json!([]), "{r}");
    d.stop().await;
}

#[tokio::test]
async fn versioning_off_keeps_nothing() {
    let d = TestDaemon::start_with_config(Some(json!({"capsule_versions": 0}))).await;
    let id = store(&d, json!({"capsule_text": capsule_text("a")})).await;
    ok(&d, "PUT", &format!("/capsules/{id}"), json!({"title": "b"})).await;
    let (_, v) = d
        .call("GET", &format!("/capsules/versions?id={id}"), None)
        .await;
    assert_eq!(
        (v["versions"].as_array().unwrap().len(), v["keep"].as_i64()),
        (0, Some(0))
    );
    let (s, e) = d
        .call("GET", &format!("/capsules/{id}?version=-1"), None)
        .await;
    expect_error(s, &e, "NOT_FOUND", 404);
    d.stop().await;
}

#[tokio::test]
async fn an_import_in_mode_replace_keeps_the_overwritten_capsule_as_a_version() {
    let d = TestDaemon::start().await;
    let id = store(
        &d,
        json!({"workspace": "x", "name": "a", "capsule_text": capsule_text("exported")}),
    )
    .await;
    ok(
        &d,
        "POST",
        "/capsules/export",
        json!({"workspace": "x", "path": "x.jsonl"}),
    )
    .await;
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"capsule_text": capsule_text("edited")}),
    )
    .await;
    let r = ok(
        &d,
        "POST",
        "/capsules/import",
        json!({"path": "x.jsonl", "mode": "replace"}),
    )
    .await;
    assert_eq!(r["replaced"], 1, "{r}");
    let (_, c) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert!(c["capsule_text"].as_str().unwrap().contains("exported"));
    let (_, c) = d
        .call("GET", &format!("/capsules/{id}?version=-1"), None)
        .await;
    assert!(
        c["capsule_text"].as_str().unwrap().contains("edited"),
        "the overwritten text: {c}"
    );
    d.stop().await;
}
