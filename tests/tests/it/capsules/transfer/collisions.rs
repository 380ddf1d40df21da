//! The collision matrix: a record whose id or name is taken, in each import mode.

use moss_tests::TestDaemon;
use serde_json::{Value, json};

use super::{
    by_name, count_all, counts, delete, expect_error, exports, import, import_ok, record, store,
    write_jsonl,
};

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
