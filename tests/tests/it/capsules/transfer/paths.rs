//! The path rules: traversal, extensions, subdirectories, foreign directories, allowed paths and
//! symlinks.

use std::path::Path;

use moss_tests::TestDaemon;
use serde_json::json;

use super::{
    count_all, counts, expect_rule, export, export_ok, exports, files_in, import, import_ok,
    mode_of, record, store, write_jsonl,
};

#[tokio::test]
async fn path_rules_refuse_traversal_extensions_subdirectories_and_foreign_directories() {
    let outside = tempfile::tempdir().unwrap();
    let d = TestDaemon::start().await;
    store(&d, "w", Some("a"), "a").await;
    let ex = exports(&d);
    std::fs::create_dir(ex.join("sub")).unwrap();
    write_jsonl(&ex.join("sub/in.jsonl"), &[record("01S", "s", "s")]);
    write_jsonl(&outside.path().join("in.jsonl"), &[record("01O", "o", "o")]);

    let abs = |p: &Path| p.display().to_string();
    let cases = [
        ("../x.jsonl".to_string(), "traversal"),
        (format!("{}/../exports/x.jsonl", abs(&ex)), "traversal"),
        ("x.json".into(), "extension"),
        ("x.jsonl.txt".into(), "extension"),
        ("x".into(), "extension"),
        ("sub/in.jsonl".into(), "subdirectory"),
        (abs(&ex.join("sub/in.jsonl")), "subdirectory"),
        (abs(&outside.path().join("in.jsonl")), "allowed_paths"),
        ("".into(), "empty"),
    ];
    for (path, rule) in &cases {
        let (s, b) = export(&d, json!({"path": path})).await;
        expect_rule(s, &b, rule);
        let (s, b) = import(&d, json!({"path": path})).await;
        expect_rule(s, &b, rule);
    }
    let e = export(&d, json!({"path": "x.json"})).await.1;
    assert!(
        e["error"]["message"].as_str().unwrap().contains("x.jsonl"),
        "the message says how to fix it: {e}"
    );
    let e = export(&d, json!({"path": abs(&outside.path().join("x.jsonl"))}))
        .await
        .1;
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("allowed_paths"),
        "{e}"
    );
    assert_eq!(
        files_in(outside.path()),
        ["in.jsonl"],
        "nothing written outside"
    );
    assert_eq!(count_all(&d).await, 1, "nothing imported");

    // An absolute path directly in the exports directory is fine.
    let r = export_ok(&d, json!({"path": abs(&ex.join("abs.jsonl"))})).await;
    assert_eq!(r["count"], 1);
}

#[tokio::test]
async fn allowed_paths_and_allow_unsafe_paths() {
    let extra = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let d = TestDaemon::start_with_config(Some(json!({
        "allowed_paths": [extra.path()],
    })))
    .await;
    store(&d, "w", Some("a"), "a").await;
    let in_extra = extra.path().join("b.jsonl");
    let r = export_ok(&d, json!({"path": in_extra})).await;
    assert_eq!(r["path"], in_extra.display().to_string());
    assert_eq!(mode_of(&in_extra), 0o600);
    let r = import_ok(&d, json!({"path": in_extra, "mode": "rename"})).await;
    assert_eq!(counts(&r), (1, 0, 1));
    let (s, b) = export(&d, json!({"path": other.path().join("b.jsonl")})).await;
    expect_rule(s, &b, "allowed_paths");
    std::fs::create_dir(extra.path().join("deeper")).unwrap();
    let (s, b) = export(&d, json!({"path": extra.path().join("deeper/b.jsonl")})).await;
    expect_rule(s, &b, "subdirectory");

    // allow_unsafe_paths lifts the directory list only.
    let d = TestDaemon::start_with_config(Some(json!({"allow_unsafe_paths": true}))).await;
    store(&d, "w", Some("a"), "a").await;
    export_ok(&d, json!({"path": other.path().join("b.jsonl")})).await;
    assert_eq!(mode_of(&other.path().join("b.jsonl")), 0o600);
    let (s, b) = export(&d, json!({"path": other.path().join("b.txt")})).await;
    expect_rule(s, &b, "extension");
    let (s, b) = export(
        &d,
        json!({"path": format!("{}/../b.jsonl", other.path().display())}),
    )
    .await;
    expect_rule(s, &b, "traversal");
}

#[tokio::test]
async fn symlinked_files_and_parents_are_refused_even_with_allow_unsafe_paths() {
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.jsonl");
    std::fs::write(&secret, "precious\n").unwrap();
    write_jsonl(&outside.path().join("in.jsonl"), &[record("01O", "o", "o")]);
    let links = tempfile::tempdir().unwrap();
    let link_dir = links.path().join("linked");
    std::os::unix::fs::symlink(outside.path(), &link_dir).unwrap();

    for unsafe_paths in [false, true] {
        let d = TestDaemon::start_with_config(Some(json!({
            "allow_unsafe_paths": unsafe_paths,
            "allowed_paths": [link_dir],
        })))
        .await;
        store(&d, "w", Some("a"), "a").await;
        let link = exports(&d).join("link.jsonl");
        std::os::unix::fs::symlink(&secret, &link).unwrap();
        let (s, b) = export(&d, json!({"path": "link.jsonl"})).await;
        expect_rule(s, &b, "symlink_file");
        let (s, b) = import(&d, json!({"path": "link.jsonl"})).await;
        expect_rule(s, &b, "symlink_file");
        assert_eq!(
            std::fs::read_to_string(&secret).unwrap(),
            "precious\n",
            "the link target is untouched"
        );
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "the link is left alone"
        );

        // A symlinked parent directory, even one listed in allowed_paths.
        let via = link_dir.join("in.jsonl");
        let (s, b) = import(&d, json!({"path": via})).await;
        expect_rule(s, &b, "symlink_parent");
        let (s, b) = export(&d, json!({"path": link_dir.join("new.jsonl")})).await;
        expect_rule(s, &b, "symlink_parent");
        assert!(!outside.path().join("new.jsonl").exists());
        assert_eq!(count_all(&d).await, 1);
    }
}
