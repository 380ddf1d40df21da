//! `POST /migrate` (`moss migrate`): a store of every family goes from SQLite to PostgreSQL and
//! back to SQLite, and each copy reads and exports as the original does. Runs where
//! `MOSS_TEST_POSTGRES` names a server.

use moss_tests::TestDaemon;
use serde_json::{Value, json};

use crate::backup::{seed, state};

async fn ok(d: &TestDaemon, method: &str, path: &str, body: Value) -> Value {
    let (s, v) = d.call(method, path, Some(body.clone())).await;
    assert_eq!(s, 200, "{method} {path} {body}: {v}");
    v
}

/// Every capsule of workspace `b`, deleted ones included, as exported (without the header).
async fn export(d: &TestDaemon, name: &str) -> Vec<Value> {
    let r = ok(
        d,
        "POST",
        "/capsules/export",
        json!({"path": format!("{name}.jsonl"), "workspace": "b", "include_deleted": true}),
    )
    .await;
    let path = r["path"].as_str().unwrap_or_else(|| panic!("{r}"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        // The header says when the file was written.
        .filter(|v| v.get("_moss_export").is_none())
        .collect()
}

/// Everything a user reads of the store: each family's state, the export, the counts.
async fn everything(d: &TestDaemon, name: &str) -> Value {
    let workspaces = ok(d, "GET", "/workspaces", Value::Null).await;
    let (s, versions) = d
        .call("GET", "/capsules/versions?workspace=b&name=keep", None)
        .await;
    assert_eq!(s, 200, "{versions}");
    json!({
        "versions": versions,
        "state": state(d).await,
        "export": export(d, name).await,
        "workspaces": workspaces["items"],
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_of_every_family_goes_to_postgres_and_back_to_sqlite_unchanged() {
    let Some(schema) = moss_tests::postgres_schema().await else {
        eprintln!("MOSS_TEST_POSTGRES is unset: skipping");
        return;
    };
    // The original: SQLite (named, so that the engine the tests run on does not move it).
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("moss.db");
    let a = TestDaemon::start_in(
        home,
        Some(json!({"database": format!("sqlite:{}", file.display())})),
    )
    .await;
    let keep = seed(&a).await;
    // A second revision, so that versions travel too, and a deleted capsule.
    ok(
        &a,
        "PUT",
        &format!("/capsules/{keep}"),
        json!({"capsule_text": moss_tests::capsule_text("backed marker, revised")}),
    )
    .await;
    let gone = crate::util::store(
        &a,
        json!({"workspace": "b", "name": "gone", "capsule_text": moss_tests::capsule_text("gone")}),
    )
    .await;
    ok(&a, "DELETE", &format!("/capsules/{gone}"), Value::Null).await;
    let original = everything(&a, "a").await;
    assert_eq!(
        original["export"].as_array().unwrap().len(),
        2,
        "{original}"
    );

    // To PostgreSQL.
    let to_pg = ok(&a, "POST", "/migrate", json!({"to": schema})).await;
    assert!(to_pg["rows"].as_i64().unwrap() > 0, "{to_pg}");
    a.stop().await;
    // Its tables have statistics already (ANALYZE after the copy): PostgreSQL counts rows it
    // has not analyzed as -1.
    let url = schema.clone();
    let reltuples: f64 = tokio::task::spawn_blocking(move || {
        use moss_daemon::store::engine::{Db, postgres};
        let conn = postgres::PgConn::connect(&postgres::config(&url).unwrap()).unwrap();
        Db::Postgres(&conn)
            .query_one(
                "SELECT reltuples::float8 FROM pg_class WHERE oid = 'capsules'::regclass",
                &[],
                |r| r.get(0),
            )
            .unwrap()
    })
    .await
    .unwrap();
    assert!(reltuples >= 1.0, "capsules analyzed: {reltuples}");
    let b = TestDaemon::start_with_config(Some(json!({"database": schema}))).await;
    assert_eq!(everything(&b, "b").await, original);

    // And back to a new SQLite file.
    let back = ok(&b, "POST", "/migrate", json!({"to": "sqlite:back.db"})).await;
    assert_eq!(back["rows"], to_pg["rows"], "{back}");
    assert_eq!(back["sequence"], to_pg["sequence"], "{back}");
    let path = back["to"].as_str().unwrap().to_string();
    let home = b.stop_keeping_home().await;
    let c = TestDaemon::start_in(home, Some(json!({"database": format!("sqlite:{path}")}))).await;
    assert_eq!(everything(&c, "c").await, original);
    // Each copy takes new writes of every family: the numbers the tables hand out (their
    // identities on PostgreSQL, their rowids on SQLite) continue after the copied rows.
    let d = TestDaemon::start_with_config(Some(json!({"database": schema}))).await;
    for e in [&c, &d] {
        write_each_family(e).await;
    }
    c.stop().await;
    d.stop().await;
}

/// One new write of each family, each read back.
async fn write_each_family(d: &TestDaemon) {
    let id = crate::util::store(
        d,
        json!({"workspace": "b", "name": "after", "capsule_text": moss_tests::capsule_text("after")}),
    )
    .await;
    ok(d, "GET", &format!("/capsules/{id}"), Value::Null).await;
    let note = ok(
        d,
        "POST",
        "/reasoning/notes/commit",
        json!({"workspace": "b", "branch": "main", "doc": "notes", "content": "after the move"}),
    )
    .await;
    assert!(note["entry"]["seq"].as_i64().is_some(), "{note}");
    ok(
        d,
        "POST",
        "/tasks/create",
        json!({"workspace": "b", "title": "After", "parent": "PLAN-001"}),
    )
    .await;
    let m = ok(
        d,
        "POST",
        "/memories",
        json!({"workspace": "b", "content": "written after the move"}),
    )
    .await;
    assert!(m["memory"]["id"].is_string(), "{m}");
    let recalled = ok(
        d,
        "POST",
        "/memories/recall",
        json!({"workspace": "b", "query": "move"}),
    )
    .await;
    assert_eq!(
        recalled["items"].as_array().map(Vec::len),
        Some(1),
        "{recalled}"
    );
}
