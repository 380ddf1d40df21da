//! `capsule_export` and `capsule_import` over REST and MCP, one module per behaviour: the round
//! trip, the collision matrix, all-or-nothing imports and the size caps, the path rules and file
//! modes, progress and cancellation.

mod collisions;
mod paths;
mod progress;
mod refusals;
mod round_trip;

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

fn record(id: &str, name: &str, text: &str) -> Value {
    json!({"id": id, "workspace_raw": "w", "name_raw": name, "capsule_text": text,
           "created_at": 100, "updated_at": 200, "deleted_at": null})
}

fn counts(r: &Value) -> (i64, i64, i64) {
    (
        r["imported"].as_i64().unwrap(),
        r["replaced"].as_i64().unwrap(),
        r["renamed"].as_i64().unwrap(),
    )
}
