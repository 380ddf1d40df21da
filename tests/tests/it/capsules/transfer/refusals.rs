//! All-or-nothing: a bad line, an oversized file or line, or a failed export changes nothing.

use std::os::unix::fs::PermissionsExt;

use moss_tests::TestDaemon;
use serde_json::{Value, json};

use super::{
    count_all, expect_error, expect_rule, export, export_ok, exports, files_in, import, import_ok,
    lines_of, mode_of, record, store, write_jsonl,
};

#[tokio::test]
async fn a_bad_line_fails_the_whole_import_naming_line_and_field() {
    let d = TestDaemon::start().await;
    let file = exports(&d).join("bad.jsonl");
    let good = |i: u32| record(&format!("01G{i}"), &format!("g{i}"), "good");
    for (bad_line, field) in [
        (
            json!({"id": "01X", "workspace_raw": "w", "tags": "not-a-list"}),
            "tags",
        ),
        (
            json!({"id": "01X", "workspace_raw": "w", "created_at": "yesterday"}),
            "created_at",
        ),
        (
            json!({"id": "01X", "workspace_raw": "w", "title": "t".repeat(501)}),
            "title",
        ),
        (
            json!({"id": "01X", "workspace_raw": "w".repeat(201)}),
            "workspace_raw",
        ),
    ] {
        write_jsonl(
            &file,
            &[
                json!({"_moss_export": true, "schema_version": "1.0", "exported_at": 1}),
                good(1),
                good(2),
                bad_line,
                good(3),
            ],
        );
        let (s, b) = import(&d, json!({"path": "bad.jsonl"})).await;
        let e = expect_error(s, &b, "INVALID_RECORD", 400);
        assert_eq!(e["details"]["line"], 4, "{field}: {e}");
        assert_eq!(e["details"]["field"], field, "{e}");
        let m = e["message"].as_str().unwrap();
        assert!(m.contains("line 4") && m.contains(field), "{m}");
        assert_eq!(count_all(&d).await, 0, "{field}: nothing imported");
    }

    // Not JSON at all.
    std::fs::write(&file, format!("{}\n{{not json\n", record("01Y", "y", "y"))).unwrap();
    let (s, b) = import(&d, json!({"path": "bad.jsonl"})).await;
    let e = expect_error(s, &b, "INVALID_RECORD", 400);
    assert_eq!(e["details"]["line"], 2, "{e}");
    assert!(d.fetch_any("01Y").await.is_none());

    // A newer major schema version is refused up front.
    write_jsonl(
        &file,
        &[
            json!({"_moss_export": true, "schema_version": "2.0", "exported_at": 1}),
            good(1),
        ],
    );
    let (s, b) = import(&d, json!({"path": "bad.jsonl"})).await;
    let e = expect_error(s, &b, "INVALID_RECORD", 400);
    assert_eq!(e["details"]["field"], "schema_version", "{e}");

    // Records without id or workspace_raw are skipped and reported; the rest import.
    write_jsonl(
        &file,
        &[
            good(1),
            json!({"workspace_raw": "w", "capsule_text": "no id"}),
            json!({"id": "01N"}),
            json!({"id": "01M", "workspace_raw": " \t "}),
            good(2),
        ],
    );
    let b = import_ok(&d, json!({"path": "bad.jsonl", "mode": "replace"})).await;
    assert_eq!(
        (&b["imported"], &b["skipped"]),
        (&json!(2), &json!(3)),
        "{b}"
    );
    let errors = b["errors"].as_array().unwrap();
    let lines: Vec<&Value> = errors.iter().map(|e| &e["line"]).collect();
    assert_eq!(lines, [&json!(2), &json!(3), &json!(4)]);
    assert!(errors.iter().all(|e| e["code"] == "INVALID_RECORD"), "{b}");
}

#[tokio::test]
async fn oversized_files_and_lines_are_refused() {
    let d = TestDaemon::start_with_config(Some(json!({"max_import_bytes": 2_000_000}))).await;
    let file = exports(&d).join("big.jsonl");
    let text = "x".repeat(2_100_000);
    write_jsonl(&file, &[record("01A", "a", &text)]);
    let (s, b) = import(&d, json!({"path": "big.jsonl"})).await;
    let e = expect_error(s, &b, "FILE_TOO_LARGE", 413);
    assert_eq!(e["details"]["max_bytes"], 2_000_000, "{e}");
    assert_eq!(
        e["details"]["actual_bytes"],
        std::fs::metadata(&file).unwrap().len(),
        "{e}"
    );
    assert!(
        e["message"].as_str().unwrap().contains("max_import_bytes"),
        "{e}"
    );

    // Under the file cap, a line far beyond any capsule of capsule_max_chars.
    write_jsonl(
        &file,
        &[
            record("01A", "a", "ok"),
            record("01B", "b", &"y".repeat(1_200_000)),
        ],
    );
    let (s, b) = import(&d, json!({"path": "big.jsonl"})).await;
    let e = expect_error(s, &b, "INVALID_RECORD", 400);
    assert_eq!(e["details"]["line"], 2, "{e}");
    assert!(d.fetch_any("01A").await.is_none(), "all or nothing");

    // The default cap is 25 MB.
    assert_eq!(
        TestDaemon::start().await.daemon.config.max_import_bytes,
        25 * 1024 * 1024
    );
}

#[tokio::test]
async fn a_failed_export_keeps_the_existing_file_and_leaves_no_temporary_file() {
    let d = TestDaemon::start().await;
    store(&d, "w", Some("a"), "a").await;
    let ex = exports(&d);
    std::fs::write(ex.join("keep.jsonl"), "old backup\n").unwrap();
    // Something other than a file at the target is refused and left alone.
    std::fs::create_dir(ex.join("dir.jsonl")).unwrap();
    let (s, b) = export(&d, json!({"path": "dir.jsonl"})).await;
    expect_rule(s, &b, "not_a_file");
    // A bad workspace is refused before anything is written.
    let (s, b) = export(
        &d,
        json!({"path": "keep.jsonl", "workspace": "x".repeat(300)}),
    )
    .await;
    assert_eq!(s, 400, "{b}");
    assert_eq!(
        std::fs::read_to_string(ex.join("keep.jsonl")).unwrap(),
        "old backup\n"
    );
    assert_eq!(
        files_in(&ex),
        ["dir.jsonl", "keep.jsonl"],
        "no temporary files"
    );

    // A successful export replaces the file atomically, 0600 even if it was looser before.
    std::fs::set_permissions(
        ex.join("keep.jsonl"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let r = export_ok(&d, json!({"path": "keep.jsonl"})).await;
    assert_eq!(r["count"], 1);
    assert_eq!(lines_of(&ex.join("keep.jsonl")).len(), 2);
    assert_eq!(mode_of(&ex.join("keep.jsonl")), 0o600);
    assert_eq!(files_in(&ex), ["dir.jsonl", "keep.jsonl"]);

    // Importing a missing file is NOT_FOUND and says where it looked.
    let (s, b) = import(&d, json!({"path": "missing.jsonl"})).await;
    let e = expect_error(s, &b, "NOT_FOUND", 404);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains(&ex.display().to_string()),
        "{e}"
    );
}
