//! `POST /backup` and restoring it: every family comes back as it was when backed up.

use std::os::unix::fs::PermissionsExt;

use moss_daemon::MossHome;
use moss_daemon::restore_home;
use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use crate::util::{expect_error, store};

async fn ok(d: &TestDaemon, method: &str, path: &str, body: Value) -> Value {
    let (s, v) = d.call(method, path, Some(body.clone())).await;
    assert_eq!(s, 200, "{method} {path} {body}: {v}");
    v
}

/// What each family holds, read the same way before and after.
pub(crate) async fn state(d: &TestDaemon) -> Value {
    let (_, keep) = d
        .call("GET", "/capsules/by-name?workspace=b&name=keep", None)
        .await;
    let (_, later) = d
        .call("GET", "/capsules/by-name?workspace=b&name=later", None)
        .await;
    let found = ok(
        d,
        "GET",
        "/capsules/search?query=backed%20marker",
        Value::Null,
    )
    .await;
    let notes = ok(
        d,
        "POST",
        "/reasoning/show",
        json!({"workspace": "b", "branch": "main", "doc": "notes"}),
    )
    .await;
    let cards = ok(
        d,
        "POST",
        "/reasoning/graph/query",
        json!({"workspace": "b", "target": "TASK-001", "types": ["hypothesis"]}),
    )
    .await;
    let tasks = ok(d, "POST", "/tasks/context", json!({"workspace": "b"})).await;
    let recalled = ok(
        d,
        "POST",
        "/memories/recall",
        json!({"workspace": "b", "slot": "prefs"}),
    )
    .await;
    let texts = |v: &Value, list: &str, field: &str| -> Vec<Value> {
        v[list]
            .as_array()
            .map(|a| a.iter().map(|x| x[field].clone()).collect())
            .unwrap_or_default()
    };
    json!({
        "keep_deleted": keep.get("deleted_at").cloned(),
        "keep_revision": keep["revision"],
        "later": later.get("id").is_some(),
        "search": found["items"].as_array().map(|a| a.len()),
        "notes": texts(&notes, "entries", "content"),
        "cards": texts(&cards, "nodes", "title"),
        "tasks": tasks.to_string().contains("TASK-002"),
        "memories": texts(&recalled, "items", "content"),
    })
}

/// A capsule, a note, a card, a plan with a task and a memory in workspace `b`: every family.
/// Returns the capsule's id.
pub(crate) async fn seed(d: &TestDaemon) -> String {
    let keep = store(
        d,
        json!({"workspace": "b", "name": "keep", "capsule_text": capsule_text("backed marker")}),
    )
    .await;
    ok(
        d,
        "POST",
        "/reasoning/notes/commit",
        json!({"workspace": "b", "branch": "main", "doc": "notes", "content": "before"}),
    )
    .await;
    ok(
        d,
        "POST",
        "/tasks/create",
        json!({"workspace": "b", "title": "Plan"}),
    )
    .await;
    ok(
        d,
        "POST",
        "/tasks/create",
        json!({"workspace": "b", "title": "Task", "parent": "PLAN-001"}),
    )
    .await;
    ok(d, "POST", "/reasoning/think/card", json!({"workspace": "b", "target": "TASK-001", "card": {"id": "h1", "type": "hypothesis", "title": "backed card"}})).await;
    ok(
        d,
        "POST",
        "/memories",
        json!({"workspace": "b", "content": "tabs, not spaces", "slot": "prefs"}),
    )
    .await;
    keep
}

#[tokio::test]
async fn a_backup_restored_brings_back_every_family_as_it_was() {
    let d = TestDaemon::start().await;
    let keep = seed(&d).await;
    let before = state(&d).await;
    assert_eq!(before["notes"], json!(["before"]), "{before}");
    assert_eq!(before["cards"], json!(["backed card"]));
    assert_eq!(before["memories"], json!(["tabs, not spaces"]));
    assert_eq!(before["search"], json!(1));

    let b = ok(&d, "POST", "/backup", json!({"path": "snap.db"})).await;
    let path = b["path"].as_str().unwrap().to_string();
    assert_eq!(
        path,
        d.home_path().join("exports/snap.db").display().to_string()
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(
        b["sequence"].as_i64().unwrap() > 0 && b["bytes"].as_u64().unwrap() > 0,
        "{b}"
    );
    assert_eq!(b["restore"], format!("moss restore-backup {path}"));
    // The export path rules, with .db.
    for (bad, rule) in [
        ("../x.db", "traversal"),
        ("x.jsonl", "extension"),
        ("a/x.db", "subdirectory"),
    ] {
        let (s, e) = d.call("POST", "/backup", Some(json!({"path": bad}))).await;
        assert_eq!(
            expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["rule"],
            rule,
            "{bad}"
        );
    }
    let default = ok(&d, "POST", "/backup", json!({})).await;
    assert!(
        default["path"]
            .as_str()
            .unwrap()
            .contains("/exports/moss-backup-"),
        "{default}"
    );

    // Change every family.
    ok(&d, "DELETE", &format!("/capsules/{keep}"), Value::Null).await;
    store(
        &d,
        json!({"workspace": "b", "name": "later", "capsule_text": capsule_text("after")}),
    )
    .await;
    ok(
        &d,
        "POST",
        "/reasoning/notes/commit",
        json!({"workspace": "b", "branch": "main", "doc": "notes", "content": "after"}),
    )
    .await;
    ok(&d, "POST", "/reasoning/think/card", json!({"workspace": "b", "target": "TASK-001", "card": {"id": "h2", "type": "hypothesis", "title": "later card"}})).await;
    ok(
        &d,
        "POST",
        "/tasks/create",
        json!({"workspace": "b", "title": "Later", "parent": "PLAN-001"}),
    )
    .await;
    ok(
        &d,
        "POST",
        "/memories/forget",
        json!({"workspace": "b", "slot": "prefs"}),
    )
    .await;
    let changed = state(&d).await;
    assert_ne!(changed, before);
    assert_eq!(changed["tasks"], true);

    if moss_tests::on_postgres() {
        // A PostgreSQL store is never replaced by a file: the message says how to bring a
        // backup's contents there. The backup itself is a SQLite store a daemon serves as it is.
        let err = restore_home(
            &MossHome::at(d.home_path()),
            path.as_ref(),
            moss_daemon::schema::version(),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("moss migrate --to postgres://"),
            "{err}"
        );
        let home = d.stop_keeping_home().await;
        let config = json!({"database": format!("sqlite:{path}")});
        let d = TestDaemon::start_in(home, Some(config)).await;
        assert_eq!(state(&d).await, before);
        d.stop().await;
        return;
    }
    // Refused while a daemon serves the store.
    let err = restore_home(
        &MossHome::at(d.home_path()),
        path.as_ref(),
        moss_daemon::schema::version(),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("already owns this database"),
        "{err}"
    );

    let home = d.stop_keeping_home().await;
    let notice = restore_home(
        &MossHome::at(home.path()),
        path.as_ref(),
        moss_daemon::schema::version(),
    )
    .unwrap();
    let aside = notice
        .split("kept as ")
        .nth(1)
        .and_then(|r| r.split(". ").next())
        .unwrap()
        .to_string();
    assert!(
        notice.contains(&format!("To undo: moss restore-backup {aside}")),
        "{notice}"
    );
    assert!(std::path::Path::new(&aside).is_file(), "{aside}");
    // Not a Moss database: refused, nothing touched.
    std::fs::write(home.path().join("exports/junk.db"), b"not sqlite").unwrap();
    let err = restore_home(
        &MossHome::at(home.path()),
        &home.path().join("exports/junk.db"),
        moss_daemon::schema::version(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("is not a Moss backup"), "{err}");

    let d = TestDaemon::start_in(home, None).await;
    assert_eq!(state(&d).await, before);
    let mode = std::fs::metadata(d.home_path().join("moss.db"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    // And back: the store kept aside is itself a backup.
    let home = d.stop_keeping_home().await;
    restore_home(
        &MossHome::at(home.path()),
        aside.as_ref(),
        moss_daemon::schema::version(),
    )
    .unwrap();
    let d = TestDaemon::start_in(home, None).await;
    assert_eq!(state(&d).await, changed);
    d.stop().await;
}

/// Writes go on while a backup copies, and the file holds one commit's state.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_backup_does_not_stop_writers() {
    let d = std::sync::Arc::new(TestDaemon::start().await);
    for i in 0..300 {
        store(&d, json!({"workspace": "w", "capsule_text": capsule_text(&format!("bulk {i} {}", "x".repeat(2000)))})).await;
    }
    let writer = {
        let d = d.clone();
        tokio::spawn(async move {
            let mut n = 0;
            let start = std::time::Instant::now();
            while start.elapsed() < std::time::Duration::from_millis(1500) {
                store(&d, json!({"workspace": "w2", "capsule_text": capsule_text(&format!("during {n}"))})).await;
                n += 1;
            }
            n
        })
    };
    let mut backups = 0;
    while !writer.is_finished() {
        ok(
            &d,
            "POST",
            "/backup",
            json!({"path": format!("b{backups}.db")}),
        )
        .await;
        backups += 1;
    }
    let written = writer.await.unwrap();
    println!("backup under writes: {backups} backups while {written} stores landed in 1.5 s");
    assert!(
        backups >= 1 && written > 0,
        "{backups} backups, {written} writes"
    );
    std::sync::Arc::try_unwrap(d).ok().unwrap().stop().await;
}
