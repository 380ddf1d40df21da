//! `capsule_export` and `capsule_import` over REST and MCP: the round trip, the collision
//! matrix, all-or-nothing imports, the size caps, the path rules and file modes.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use moss_client::capsule::{DeleteRequest, StoreRequest};
use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

fn exports(d: &TestDaemon) -> PathBuf {
    d.home_path().join("exports")
}

async fn export(d: &TestDaemon, body: Value) -> (u16, Value) {
    d.call("POST", "/capsules/export", Some(body)).await
}

async fn import(d: &TestDaemon, body: Value) -> (u16, Value) {
    d.call("POST", "/capsules/import", Some(body)).await
}

async fn export_ok(d: &TestDaemon, body: Value) -> Value {
    let (s, r) = export(d, body.clone()).await;
    assert_eq!(s, 200, "export {body}: {r}");
    r
}

async fn import_ok(d: &TestDaemon, body: Value) -> Value {
    let (s, r) = import(d, body.clone()).await;
    assert_eq!(s, 200, "import {body}: {r}");
    r
}

/// Asserts `(status, body)` is the error envelope of `code`; returns `error`.
fn expect_error(status: u16, body: &Value, code: &str, http: u16) -> Value {
    assert_eq!(status, http, "expected {code}: {body}");
    let e = &body["error"];
    assert_eq!(e["code"], code, "{body}");
    assert!(
        e["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    e.clone()
}

/// A refused path: 400 INVALID_REQUEST whose `details.rule` is `rule`.
fn expect_rule(status: u16, body: &Value, rule: &str) {
    let e = expect_error(status, body, "INVALID_REQUEST", 400);
    assert_eq!(e["details"]["rule"], rule, "{body}");
    assert_eq!(e["details"]["field"], "path", "{body}");
}

async fn store(d: &TestDaemon, workspace: &str, name: Option<&str>, marker: &str) -> String {
    d.client
        .capsules()
        .store(&StoreRequest {
            capsule_text: capsule_text(marker),
            workspace: Some(workspace.into()),
            name: name.map(str::to_string),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("store {marker}: {e}"))
        .id
}

async fn delete(d: &TestDaemon, id: &str) {
    d.client
        .capsules()
        .delete(&DeleteRequest {
            id: Some(id.into()),
            ..Default::default()
        })
        .await
        .unwrap();
}

/// The active capsule named `name` in `workspace`.
async fn by_name(d: &TestDaemon, workspace: &str, name: &str) -> Option<Value> {
    let (s, c) = d
        .call(
            "GET",
            &format!("/capsules/by-name?workspace={workspace}&name={name}"),
            None,
        )
        .await;
    match s {
        200 => Some(c),
        404 => None,
        _ => panic!("fetch {workspace}/{name}: {s} {c}"),
    }
}

/// Every capsule, deleted ones included.
async fn count_all(d: &TestDaemon) -> usize {
    let (s, r) = d
        .call(
            "GET",
            "/capsules/inventory?include_deleted=true&limit=1",
            None,
        )
        .await;
    assert_eq!(s, 200, "{r}");
    r["pagination"]["total"]
        .as_u64()
        .unwrap_or_else(|| panic!("inventory has a total: {r}")) as usize
}

fn write_jsonl(path: &Path, lines: &[Value]) {
    let mut s = String::new();
    for l in lines {
        s.push_str(&l.to_string());
        s.push('\n');
    }
    std::fs::write(path, s).unwrap();
}

fn lines_of(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn mode_of(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Files other than `keep` in `dir` (temporary files left behind would show here).
fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Stores `n` capsules spread over three workspaces, with names, tags and orchestration
/// fields on some, and soft-deletes every seventh.
async fn seed(d: &TestDaemon, n: usize) {
    let mut ids = Vec::with_capacity(n);
    for chunk in (0..n).collect::<Vec<_>>().chunks(16) {
        let mut tasks = tokio::task::JoinSet::new();
        for &i in chunk {
            let client = d.client.clone();
            tasks.spawn(async move {
                let req = StoreRequest {
                    capsule_text: format!(
                        "{}\nNotes {i}: \"quoted\", tab\t, unicode é ✓, \u{1}\n",
                        capsule_text(&format!("capsule {i}"))
                    ),
                    workspace: Some(["alpha", "Beta Team", "gamma"][i % 3].into()),
                    name: (i % 2 == 0).then(|| format!("Name-{i}")),
                    title: (i % 5 == 0).then(|| format!("Title {i}")),
                    tags: (i % 4 == 0).then(|| vec!["t1".into(), format!("n{}", i % 10)]),
                    source: (i % 3 == 0).then(|| "cli".into()),
                    run_id: (i % 6 == 0).then(|| format!("run-{}", i % 4)),
                    phase: (i % 6 == 0).then(|| "design".into()),
                    role: (i % 6 == 0).then(|| "writer".into()),
                    ..Default::default()
                };
                (i, client.capsules().store(&req).await.unwrap().id)
            });
        }
        while let Some(r) = tasks.join_next().await {
            ids.push(r.unwrap());
        }
    }
    for (i, id) in ids {
        if i % 7 == 0 {
            delete(d, &id).await;
        }
    }
}

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

/// State of every collision case: X = `w/auth`, Y = `w/db`, Z = deleted `w/old`.
struct World {
    d: TestDaemon,
    x: String,
    y: String,
    z: String,
}

async fn world() -> World {
    let d = TestDaemon::start().await;
    let x = store(&d, "w", Some("auth"), "x").await;
    let y = store(&d, "w", Some("db"), "y").await;
    let z = store(&d, "w", Some("old"), "z").await;
    delete(&d, &z).await;
    World { d, x, y, z }
}

fn record(id: &str, name: &str, text: &str) -> Value {
    json!({"id": id, "workspace_raw": "w", "name_raw": name, "capsule_text": text,
           "created_at": 100, "updated_at": 200, "deleted_at": null})
}

/// Imports a fresh record `pre` then `rec` in `mode`.
async fn import_case(w: &World, rec: Value, mode: &str) -> (u16, Value) {
    let pre = record("01PRE", "pre", "pre");
    write_jsonl(&exports(&w.d).join("case.jsonl"), &[pre, rec]);
    import(&w.d, json!({"path": "case.jsonl", "mode": mode})).await
}

/// After a refused import: nothing was written, not even the record before the collision.
async fn assert_untouched(w: &World) {
    assert!(w.d.fetch_any("01PRE").await.is_none(), "all or nothing");
    assert_eq!(count_all(&w.d).await, 3);
    let x = w.d.fetch_any(&w.x).await.unwrap();
    assert_eq!(x["name"], "auth");
    assert!(x["capsule_text"].as_str().unwrap().contains("\nx\n"));
}

fn counts(r: &Value) -> (i64, i64, i64) {
    (
        r["imported"].as_i64().unwrap(),
        r["replaced"].as_i64().unwrap(),
        r["renamed"].as_i64().unwrap(),
    )
}

#[tokio::test]
async fn collision_matrix_error_mode_is_atomic() {
    // No collision.
    let w = world().await;
    let r = import_case(&w, record("01NEW", "new", "n"), "error").await;
    assert_eq!(r.0, 200, "{}", r.1);
    assert_eq!(counts(&r.1), (2, 0, 0));
    // Omitted mode is "error".
    let w = world().await;
    write_jsonl(
        &exports(&w.d).join("case.jsonl"),
        &[record("01PRE", "pre", "pre"), record(&w.x, "other", "t")],
    );
    let (s, b) = import(&w.d, json!({"path": "case.jsonl"})).await;
    let e = expect_error(s, &b, "CONFLICT", 409);
    assert_eq!(e["details"]["line"], 2, "{e}");
    assert_untouched(&w).await;
    // Id collision, active-name collision (any spelling), both on one row, ambiguous.
    type Case = (&'static str, fn(&World) -> Value, &'static str);
    let cases: [Case; 4] = [
        ("id", |w| record(&w.x, "other", "t"), "CONFLICT"),
        (
            "name",
            |_| record("01R", " AUTH ", "t"),
            "NAME_ALREADY_EXISTS",
        ),
        ("id+name", |w| record(&w.x, "auth", "t"), "CONFLICT"),
        ("ambiguous", |w| record(&w.x, "db", "t"), "CONFLICT"),
    ];
    for (label, rec, code) in cases {
        let w = world().await;
        let (s, b) = import_case(&w, rec(&w), "error").await;
        let e = expect_error(s, &b, code, 409);
        let m = e["message"].as_str().unwrap();
        assert!(
            m.contains("replace") && m.contains("rename"),
            "{label}: the message names the fix: {m}"
        );
        assert_untouched(&w).await;
    }
    // A name held only by a soft-deleted capsule, and a deleted record reusing an active name,
    // do not collide.
    for rec in [
        record("01R", "old", "t"),
        json!({"id": "01R", "workspace_raw": "w", "name_raw": "auth", "deleted_at": 5}),
    ] {
        let w = world().await;
        let (s, b) = import_case(&w, rec, "error").await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(counts(&b), (2, 0, 0));
        assert!(w.d.fetch_any("01R").await.is_some());
        assert!(w.d.fetch_any(&w.z).await.is_some(), "Z is untouched");
    }
}

#[tokio::test]
async fn collision_matrix_replace_mode_overwrites_in_place() {
    // Id collision: X is overwritten in place, name and text from the record.
    let w = world().await;
    let (s, b) = import_case(&w, record(&w.x, "renamed", "new text"), "replace").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(counts(&b), (2, 1, 0));
    let x = w.d.fetch_any(&w.x).await.unwrap();
    assert_eq!(
        (
            &x["name"],
            &x["capsule_text"],
            &x["created_at"],
            &x["updated_at"]
        ),
        (
            &json!("renamed"),
            &json!("new text"),
            &json!(100),
            &json!(200)
        )
    );
    assert_eq!(x["name_norm"], "renamed");
    assert_eq!(x["capsule_chars"], 8, "recomputed");
    assert!(by_name(&w.d, "w", "auth").await.is_none());

    // Name collision: the name holder keeps its id, the record's id is not created.
    let w = world().await;
    let (s, b) = import_case(&w, record("01R", "Auth", "by name"), "replace").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(counts(&b), (2, 1, 0));
    assert!(w.d.fetch_any("01R").await.is_none());
    let x = by_name(&w.d, "w", "auth").await.unwrap();
    assert_eq!(
        (&x["id"], &x["capsule_text"]),
        (&json!(w.x), &json!("by name"))
    );

    // Id and name on the same row.
    let w = world().await;
    let (s, b) = import_case(&w, record(&w.x, "auth", "same"), "replace").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(counts(&b), (2, 1, 0));
    assert_eq!(w.d.fetch_any(&w.x).await.unwrap()["capsule_text"], "same");

    // Ambiguous: id matches X, name matches Y.
    let w = world().await;
    let (s, b) = import_case(&w, record(&w.x, "db", "t"), "replace").await;
    let e = expect_error(s, &b, "CONFLICT", 409);
    assert!(e["message"].as_str().unwrap().contains("ambiguous"), "{e}");
    assert_eq!(e["details"]["name_holder"], json!(w.y));
    assert_untouched(&w).await;

    // Replacing a soft-deleted capsule by id restores the record's state.
    let w = world().await;
    let (s, b) = import_case(&w, record(&w.z, "old", "back"), "replace").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(counts(&b), (2, 1, 0));
    let z = w.d.fetch_any(&w.z).await.unwrap();
    assert_eq!(
        (&z["deleted_at"], &z["capsule_text"]),
        (&Value::Null, &json!("back"))
    );

    // No collision inserts.
    let w = world().await;
    let (s, b) = import_case(&w, record("01NEW", "new", "n"), "replace").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(counts(&b), (2, 0, 0));
    assert!(w.d.fetch_any("01NEW").await.is_some());
}

#[tokio::test]
async fn collision_matrix_rename_mode_imports_alongside() {
    // Name collision: suffixed name, record's id kept.
    let w = world().await;
    let (s, b) = import_case(&w, record("01R", "auth", "r"), "rename").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(counts(&b), (2, 0, 1));
    let r = w.d.fetch_any("01R").await.unwrap();
    assert_eq!(
        (&r["name"], &r["name_norm"]),
        (&json!("auth-1"), &json!("auth-1"))
    );
    assert_eq!(
        by_name(&w.d, "w", "auth").await.unwrap()["id"],
        json!(w.x),
        "X keeps its name"
    );

    // Suffixes count up until free, in file order.
    let w = world().await;
    write_jsonl(
        &exports(&w.d).join("case.jsonl"),
        &[
            record("01A", "auth", "a"),
            record("01B", "auth", "b"),
            record("01C", "auth-1", "c"),
        ],
    );
    let b = import_ok(&w.d, json!({"path": "case.jsonl", "mode": "rename"})).await;
    assert_eq!(counts(&b), (3, 0, 3));
    for (id, name) in [("01A", "auth-1"), ("01B", "auth-2"), ("01C", "auth-1-1")] {
        assert_eq!(w.d.fetch_any(id).await.unwrap()["name"], name, "{id}");
    }

    // Id collision: a new id, X untouched.
    let w = world().await;
    let (s, b) = import_case(&w, record(&w.x, "other", "o"), "rename").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(counts(&b), (2, 0, 1));
    let o = by_name(&w.d, "w", "other").await.unwrap();
    assert_ne!(o["id"], json!(w.x));
    assert_eq!(o["capsule_text"], "o");
    assert!(
        w.d.fetch_any(&w.x).await.unwrap()["capsule_text"]
            .as_str()
            .unwrap()
            .contains("\nx\n")
    );

    // Id and name both taken (same row, or two rows): new id and suffixed name.
    for name in ["auth", "db"] {
        let w = world().await;
        let (s, b) = import_case(&w, record(&w.x, name, "both"), "rename").await;
        assert_eq!(s, 200, "{b}");
        assert_eq!(counts(&b), (2, 0, 1));
        let c = by_name(&w.d, "w", &format!("{name}-1")).await.unwrap();
        assert_ne!(c["id"], json!(w.x));
        assert_eq!(count_all(&w.d).await, 5);
    }

    // No collision.
    let w = world().await;
    let (s, b) = import_case(&w, record("01NEW", "new", "n"), "rename").await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(counts(&b), (2, 0, 0));
}

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

#[tokio::test]
async fn progress_is_published_under_the_requested_id_while_the_request_runs() {
    let d = TestDaemon::start().await;
    seed(&d, 1_500).await;
    let client = d.client.clone();
    let task = tokio::spawn(async move {
        client
            .capsules()
            .export(
                &moss_client::capsule::ExportRequest {
                    path: Some("p.jsonl".into()),
                    include_deleted: Some(true),
                    ..Default::default()
                },
                Some("job-1"),
            )
            .await
    });
    let mut seen = Vec::new();
    while !task.is_finished() {
        if let Ok(p) = d.client.progress("job-1").await {
            seen.push(p);
        }
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    let r = task.await.unwrap().unwrap();
    assert_eq!(r.count, 1_500);
    eprintln!("{} progress reports seen", seen.len());
    assert!(!seen.is_empty(), "the export ran long enough to be polled");
    for p in &seen {
        match p.phase.as_str() {
            "starting" => assert_eq!((p.done, p.total), (0, 0), "{p:?}"),
            "exporting" => assert!(p.total == 1_500 && p.done <= p.total, "{p:?}"),
            other => panic!("unexpected phase {other}: {p:?}"),
        }
    }
    assert!(
        seen.windows(2)
            .all(|w| w[0].phase != "exporting" || w[1].done >= w[0].done),
        "progress only grows: {seen:?}"
    );
    // After the request, the id is gone and reusable.
    let e = d.client.progress("job-1").await.unwrap_err();
    assert_eq!(e.code(), Some(moss_client::ErrorCode::NotFound));
    let (s, b) = d.call("GET", "/progress/bad%20id", None).await;
    assert_eq!(s, 404, "{b}");
    // A malformed id in the header is refused before any work.
    let resp = d
        .http()
        .post(d.url("/capsules/export"))
        .bearer_auth(&d.token)
        .header("x-moss-progress", "no/slashes")
        .json(&json!({"path": "q.jsonl"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    assert!(!exports(&d).join("q.jsonl").exists());
}

#[tokio::test]
async fn mcp_calls_with_a_progress_token_get_progress_notifications() {
    let d = TestDaemon::start().await;
    seed(&d, 300).await;
    let mut mcp = d.mcp().await;
    let (r, messages) = mcp
        .request_with_messages(
            "tools/call",
            json!({"name": "capsule_export", "arguments": {"path": "p.jsonl"},
                   "_meta": {"progressToken": "tok-1"}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], false, "{r}");
    let count = r["result"]["structuredContent"]["count"].as_u64().unwrap();
    let progress: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(!progress.is_empty(), "{messages:?}");
    for p in &progress {
        assert_eq!(p["params"]["progressToken"], "tok-1", "{p}");
    }
    let last = &progress.last().unwrap()["params"];
    assert_eq!(
        last["progress"].as_f64(),
        Some(count as f64),
        "the final count is sent: {last}"
    );
    assert_eq!(last["total"].as_f64(), Some(count as f64), "{last}");
    assert!(
        last["message"].as_str().unwrap().starts_with("exporting:"),
        "{last}"
    );
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");

    // Without a token, no notifications.
    let (_, messages) = mcp
        .request_with_messages(
            "tools/call",
            json!({"name": "capsule_export", "arguments": {"path": "q.jsonl"}}),
        )
        .await;
    assert!(
        messages
            .iter()
            .all(|m| m["method"] != "notifications/progress"),
        "{messages:?}"
    );
}

/// Runs `op` with progress id `id` on a task and drops the request once the report shows
/// `phase` under way. Returns whether the drop happened before the request completed.
async fn drop_mid_phase(
    d: &TestDaemon,
    op: &'static str,
    body: Value,
    id: &str,
    phase: &str,
) -> bool {
    let http = d.http();
    let url = d.url(&format!("/capsules/{op}"));
    let token = d.token.clone();
    let header_id = id.to_string();
    let task = tokio::spawn(async move {
        http.post(url)
            .bearer_auth(token)
            .header("x-moss-progress", header_id)
            .json(&body)
            .send()
            .await
            .map(|r| r.status().as_u16())
    });
    loop {
        if task.is_finished() {
            return false;
        }
        if let Ok(p) = d.client.progress(id).await
            && p.phase == phase
            && p.done > 0
            && p.done < p.total
        {
            task.abort();
            return task.await.is_err_and(|e| e.is_cancelled());
        }
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

/// Returns once the writer has finished the jobs queued before this call: it runs its jobs in
/// order and answers a write only after its transaction commits. The write is a memory, so it
/// changes no capsule count, and a new one each time, so it is never a no-op.
async fn writer_caught_up(d: &TestDaemon) {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (s, r) = d
        .call(
            "POST",
            "/memories",
            Some(json!({"content": format!("a write queued behind the others ({n})")})),
        )
        .await;
    assert_eq!(s, 200, "{r}");
}

/// Waits until the daemon has noticed: the progress id is released when the request ends.
async fn until_released(d: &TestDaemon, id: &str) {
    moss_tests::wait_until(
        &format!("progress {id} to be released"),
        std::time::Duration::from_secs(10),
        || async { d.client.progress(id).await.is_err() },
    )
    .await
}

#[tokio::test]
async fn a_client_going_away_cancels_export_and_rolls_back_import() {
    let d = TestDaemon::start().await;
    seed(&d, 3_000).await;
    let ex = exports(&d);
    std::fs::write(ex.join("keep.jsonl"), "old backup\n").unwrap();
    export_ok(&d, json!({"path": "all.jsonl", "include_deleted": true})).await;
    let mut before = count_all(&d).await;

    let mut export_dropped = false;
    let mut import_dropped = false;
    for attempt in 0..5 {
        if !export_dropped {
            let id = format!("exp-{attempt}");
            let body = json!({"path": "keep.jsonl", "include_deleted": true});
            if drop_mid_phase(&d, "export", body, &id, "exporting").await {
                until_released(&d, &id).await;
                // The job stops at its next row and removes its temporary file.
                let mut files = files_in(&ex);
                for _ in 0..400 {
                    if files.len() == 2 {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    files = files_in(&ex);
                }
                if std::fs::read_to_string(ex.join("keep.jsonl")).unwrap() == "old backup\n" {
                    assert_eq!(
                        files,
                        ["all.jsonl", "keep.jsonl"],
                        "no temporary file remains"
                    );
                    export_dropped = true;
                } else {
                    // The export finished just before the drop reached it; try again.
                    std::fs::write(ex.join("keep.jsonl"), "old backup\n").unwrap();
                }
            }
        }
        if !import_dropped {
            let id = format!("imp-{attempt}");
            let body = json!({"path": "all.jsonl", "mode": "rename"});
            if drop_mid_phase(&d, "import", body, &id, "importing").await {
                until_released(&d, &id).await;
                // The writer job stops at its next record and rolls back.
                writer_caught_up(&d).await;
                let now = count_all(&d).await;
                if now == before {
                    import_dropped = true;
                } else {
                    // The import committed just before the drop reached it: all of it.
                    assert_eq!(now, before + 3_000, "all of the import or none of it");
                    before = now;
                }
            }
        }
        if export_dropped && import_dropped {
            break;
        }
    }
    assert!(
        export_dropped,
        "an export was dropped mid-way in 5 attempts"
    );
    assert!(
        import_dropped,
        "an import was dropped mid-way in 5 attempts"
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
