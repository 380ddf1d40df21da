//! Export, import and export again, default paths, the MCP tools, and long file names.

use std::path::PathBuf;

use moss_tests::TestDaemon;
use serde_json::{Value, json};

use super::{
    by_name, expect_rule, export, export_ok, exports, files_in, import, import_ok, lines_of,
    mode_of, seed, store,
};

#[tokio::test]
async fn export_import_export_is_byte_identical_apart_from_the_header() {
    const N: usize = 3_000;
    let a = TestDaemon::start().await;
    seed(&a, N).await;
    let r = export_ok(&a, json!({"path": "all.jsonl", "include_deleted": true})).await;
    assert_eq!(r["count"], N, "{r}");
    let first = exports(&a).join("all.jsonl");
    assert_eq!(r["path"], first.display().to_string());
    assert_eq!(r["bytes"], std::fs::metadata(&first).unwrap().len());
    assert_eq!(mode_of(&first), 0o600, "exports are private");
    let lines = lines_of(&first);
    assert_eq!(lines.len(), N + 1, "a header and one line per capsule");
    let header: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(
        lines[0],
        format!(
            r#"{{"_moss_export":true,"schema_version":"1.0","exported_at":{}}}"#,
            r["exported_at"]
        )
    );
    assert_eq!(header["exported_at"], r["exported_at"]);
    let records: Vec<Value> = lines[1..]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = records.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "records are in id order");
    let at = |key: &str| {
        lines[1]
            .find(&format!("\"{key}\":"))
            .unwrap_or_else(|| panic!("{key} missing from {}", lines[1]))
    };
    let order = [
        "id",
        "workspace_raw",
        "workspace_norm",
        "name_raw",
        "name_norm",
        "title",
        "capsule_text",
        "capsule_chars",
        "tokens_estimate",
        "tags",
        "source",
        "run_id",
        "phase",
        "role",
        "created_at",
        "updated_at",
        "deleted_at",
    ];
    assert!(
        order.windows(2).all(|w| at(w[0]) < at(w[1])),
        "every field present, in the order of the `capsules` columns: {}",
        lines[1]
    );
    assert_eq!(records[0].as_object().unwrap().len(), order.len());
    assert!(
        records.iter().any(|r| r["deleted_at"].is_i64()),
        "include_deleted exports soft-deleted capsules"
    );
    assert!(records.iter().all(|r| r["tags"].is_array()));

    // Without include_deleted, only active capsules.
    let active = export_ok(&a, json!({"path": "active.jsonl"})).await;
    assert_eq!(active["count"], N - N.div_ceil(7), "{active}");
    // One workspace, by any spelling of its name.
    let beta = export_ok(
        &a,
        json!({"path": "beta.jsonl", "workspace": "beta  team", "include_deleted": true}),
    )
    .await;
    assert_eq!(beta["count"], N / 3, "{beta}");

    let b = TestDaemon::start().await;
    std::fs::copy(&first, exports(&b).join("all.jsonl")).unwrap();
    let r = import_ok(&b, json!({"path": "all.jsonl"})).await;
    assert_eq!(
        (&r["imported"], &r["replaced"], &r["renamed"], &r["skipped"]),
        (&json!(N), &json!(0), &json!(0), &json!(0)),
        "{r}"
    );
    assert_eq!(r["errors"], json!([]));
    export_ok(&b, json!({"path": "again.jsonl", "include_deleted": true})).await;
    let again = lines_of(&exports(&b).join("again.jsonl"));
    assert_eq!(again.len(), lines.len());
    assert!(again[1..] == lines[1..], "records are byte-identical");
    assert!(again[0].starts_with(r#"{"_moss_export":true,"schema_version":"1.0","exported_at":"#));

    // Imported capsules are fully usable: fetch by name, search, deleted stay deleted.
    let some = &records[10];
    let c = b.fetch_any(some["id"].as_str().unwrap()).await.unwrap();
    assert_eq!(c["capsule_text"], some["capsule_text"]);
    assert_eq!(c["deleted_at"], some["deleted_at"]);
    let named = records
        .iter()
        .find(|r| r["name_raw"].is_string() && r["deleted_at"].is_null())
        .unwrap();
    let c = by_name(
        &b,
        named["workspace_raw"].as_str().unwrap(),
        named["name_raw"].as_str().unwrap(),
    )
    .await
    .expect("an imported name resolves");
    assert_eq!(c["id"], named["id"]);
    let (s, found) = b.call("GET", "/capsules/search?query=quoted", None).await;
    assert_eq!(s, 200, "{found}");
    assert!(
        !found["items"].as_array().unwrap().is_empty(),
        "imported text is indexed: {found}"
    );
}

#[tokio::test]
async fn default_export_paths_are_dated_and_sanitized() {
    let d = TestDaemon::start().await;
    store(&d, "../../etc/evil\u{7}", Some("x"), "evil").await;
    store(&d, "plain", None, "plain").await;
    let r = export_ok(&d, json!({})).await;
    let path = PathBuf::from(r["path"].as_str().unwrap());
    assert_eq!(path.parent().unwrap(), exports(&d));
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("all-") && name.ends_with(".jsonl"),
        "{name}"
    );
    assert_eq!(r["count"], 2);

    let r = export_ok(&d, json!({"workspace": "../../etc/evil\u{7}"})).await;
    assert_eq!(r["count"], 1, "{r}");
    let path = PathBuf::from(r["path"].as_str().unwrap());
    assert_eq!(
        path.parent().unwrap(),
        exports(&d),
        "a workspace name cannot move the file out of the exports directory"
    );
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with("etc_evil-"), "{name}");
    assert!(
        !name.contains("..") && !name.contains('/') && !name.chars().any(char::is_control),
        "{name}"
    );
    assert_eq!(mode_of(&path), 0o600);

    // A second default export in the same second gets its own file.
    let again = export_ok(&d, json!({"workspace": "../../etc/evil\u{7}"})).await;
    assert_ne!(again["path"], r["path"]);
    assert_eq!(
        mode_of(&exports(&d)),
        0o700,
        "the exports directory is private"
    );
}

#[tokio::test]
async fn mcp_tools_export_and_import() {
    let d = TestDaemon::start().await;
    store(&d, "w", Some("a"), "a").await;
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool("capsule_export", json!({"path": "m.jsonl"}))
        .await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["count"], 1, "{r}");
    let r = mcp
        .call_tool("capsule_import", json!({"path": "m.jsonl"}))
        .await;
    assert_eq!(r["isError"], true, "the capsule exists: {r}");
    assert_eq!(r["structuredContent"]["error"]["code"], "CONFLICT", "{r}");
    let r = mcp
        .call_tool(
            "capsule_import",
            json!({"path": "m.jsonl", "mode": "rename"}),
        )
        .await;
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(r["structuredContent"]["renamed"], 1, "{r}");
    let r = mcp
        .call_tool(
            "capsule_import",
            json!({"path": "m.jsonl", "mode": "merge"}),
        )
        .await;
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(
        r["structuredContent"]["error"]["code"], "INVALID_REQUEST",
        "{r}"
    );
}

/// File names up to the system's 255 bytes export and import (the temporary file beside the
/// target must fit that limit too); a longer one is refused as a path, never a 500.
#[tokio::test]
async fn long_file_names_export_and_import_and_too_long_ones_are_400() {
    let d = TestDaemon::start().await;
    store(&d, "w", Some("one"), "long names").await;
    for len in [224, 255] {
        let name = format!("{}.jsonl", "n".repeat(len - ".jsonl".len()));
        let r = export_ok(&d, json!({"path": name})).await;
        assert_eq!(r["count"], 1, "{r}");
        assert!(exports(&d).join(&name).is_file());
        let r = import_ok(&d, json!({"path": name, "mode": "replace"})).await;
        assert_eq!(r["imported"], 1, "{r}");
        assert!(
            files_in(&exports(&d)).iter().all(|f| !f.ends_with(".tmp")),
            "no temporary file is left"
        );
    }
    let name = format!("{}.jsonl", "n".repeat(256 - ".jsonl".len()));
    let (s, b) = export(&d, json!({"path": name})).await;
    expect_rule(s, &b, "file_name");
    let (s, b) = import(&d, json!({"path": name})).await;
    expect_rule(s, &b, "file_name");
}
