//! The reasoning memory over REST and MCP, one module per behaviour: views of branches of
//! branches, diff and merge, the versioned graph and its 3-way merge, think cards, refusals that
//! name the next call, budgets, search. The request helpers here serve the other families' suites
//! too.

mod branches;
mod budgets;
mod graph;
mod mcp;
mod refusals;
mod search;
mod think;

use moss_tests::TestDaemon;
use serde_json::{Value, json};

/// `POST path body`, which must answer 200.
pub async fn ok(d: &TestDaemon, path: &str, body: Value) -> Value {
    let (s, v) = d.call("POST", path, Some(body.clone())).await;
    assert_eq!(s, 200, "POST {path} {body}: {v}");
    v
}

/// `POST path body`, which must fail with `status` and `code`; returns the error object.
pub async fn fails(d: &TestDaemon, path: &str, body: Value, status: u16, code: &str) -> Value {
    let (s, v) = d.call("POST", path, Some(body.clone())).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (status, Some(code)),
        "POST {path} {body}: {v}"
    );
    v["error"].clone()
}

async fn note(d: &TestDaemon, ws: &str, branch: &str, content: &str) -> i64 {
    let v = ok(
        d,
        "/reasoning/notes/commit",
        json!({"doc": "notes", "workspace": ws, "branch": branch, "content": content}),
    )
    .await;
    v["entry"]["seq"].as_i64().unwrap()
}

async fn branch(d: &TestDaemon, ws: &str, name: &str, from: &str) -> Value {
    ok(
        d,
        "/reasoning/branch/create",
        json!({"workspace": ws, "name": name, "from": from}),
    )
    .await["branch"]
        .clone()
}

fn node(id: &str, ty: &str, title: &str) -> Value {
    json!({"op": "node_upsert", "id": id, "type": ty, "title": title})
}

async fn apply(d: &TestDaemon, ws: &str, branch: &str, ops: Value) -> Value {
    ok(
        d,
        "/reasoning/graph/apply",
        json!({"workspace": ws, "branch": branch, "doc": "graph", "ops": ops}),
    )
    .await
}

async fn query(d: &TestDaemon, ws: &str, branch: &str, extra: Value) -> Value {
    let mut body = json!({"workspace": ws, "branch": branch, "doc": "graph"});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    ok(d, "/reasoning/graph/query", body).await
}

fn ids(v: &Value) -> Vec<String> {
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap().to_string())
        .collect()
}

/// Serialized length of an answer, in characters.
pub fn chars(v: &Value) -> usize {
    v.to_string().chars().count()
}
