//! Capsules for a leader and its workers: optimistic concurrency (revision, updated_at),
//! multi-section append, section-pivoted and filter-based compose, run id lists, run purge,
//! watch (long poll with a cursor, under 32 concurrent waiters and writers) and stats.

mod compose;
mod guards;
mod runs;
mod watch;

use moss_tests::TestDaemon;
use serde_json::{Value, json};

use crate::util::store;

/// A capsule with the six sections; `decisions` and `questions` fill two of them.
fn worker_text(objective: &str, decisions: &str, questions: &str) -> String {
    format!(
        "## Objective\n{objective}\n## Current status\n(pending)\n## Decisions\n{decisions}\n\
         ## Next actions\n- continue\n## Key locations\nsrc/\n## Open questions\n{questions}\n"
    )
}

async fn fetch(d: &TestDaemon, id: &str) -> Value {
    let (s, c) = d
        .call("GET", &format!("/capsules/{id}?include_deleted=true"), None)
        .await;
    assert_eq!(s, 200, "{c}");
    c
}

async fn ok(d: &TestDaemon, method: &str, path: &str, body: Value) -> Value {
    let (s, r) = d.call(method, path, Some(body.clone())).await;
    assert_eq!(s, 200, "{method} {path} {body}: {r}");
    r
}

/// Three workers of run `pr-42` and one of another run, stored in this order.
async fn swarm(d: &TestDaemon) {
    for (name, role, run, decisions, questions) in [
        (
            "security-findings",
            Some("security-reviewer"),
            "pr-42",
            "- parameterize the user query",
            "- is /admin meant to be open?",
        ),
        (
            "perf-findings",
            Some("performance-reviewer"),
            "pr-42",
            "- N+1 in the user listing\n- index created_at",
            "TBD",
        ),
        (
            "docs-findings",
            None,
            "pr-42",
            "(pending)",
            "- who reviews the docs?",
        ),
        (
            "other-run",
            Some("x"),
            "pr-41",
            "- unrelated",
            "- unrelated",
        ),
    ] {
        let mut body = json!({
            "workspace": "pr",
            "name": name,
            "run_id": run,
            "capsule_text": worker_text(name, decisions, questions),
        });
        if let Some(role) = role {
            body["role"] = json!(role);
        }
        store(d, body).await;
    }
}
