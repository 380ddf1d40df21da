//! Evidence kept beside a capsule's text.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::json;

use super::{fetch, ok};
use crate::util::{expect_error, store};

#[tokio::test]
async fn evidence_is_kept_beside_the_text_listed_by_fetch_and_bounded() {
    let d = TestDaemon::start().await;
    let snippet = "fn verify(token: &str) -> bool { !token.is_empty() }";
    let plain = store(
        &d,
        json!({"workspace": "e", "name": "plain", "capsule_text": capsule_text("auth")}),
    )
    .await;
    let id = store(
        &d,
        json!({"workspace": "e", "name": "auth", "capsule_text": capsule_text("auth"),
               "evidence": [{"type": "snippet", "ref": "src/auth.rs:10-12", "content": snippet},
                            {"type": "transcript", "ref": "run-7#42"}]}),
    )
    .await;
    // Not counted in the capsule's size; listed without content unless expanded.
    let c = fetch(&d, &id).await;
    assert_eq!(c["capsule_chars"], fetch(&d, &plain).await["capsule_chars"]);
    assert_eq!(
        c["evidence"],
        json!([{"type": "snippet", "ref": "src/auth.rs:10-12", "chars": snippet.len()},
               {"type": "transcript", "ref": "run-7#42", "chars": 0}])
    );
    let (_, x) = d
        .call("GET", &format!("/capsules/{id}?expand_evidence=true"), None)
        .await;
    assert_eq!(x["evidence"][0]["content"], snippet);
    // Summaries never carry it.
    let (_, l) = d.call("GET", "/capsules?workspace=e", None).await;
    assert!(l["items"][0].get("evidence").is_none(), "{l}");

    // Update replaces the list (a version keeps the old one); [] clears it.
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"evidence": [{"type": "log", "ref": "ci#9", "content": "3 passed"}]}),
    )
    .await;
    let c = fetch(&d, &id).await;
    assert_eq!(c["revision"], 2);
    assert_eq!(
        c["evidence"],
        json!([{"type": "log", "ref": "ci#9", "chars": 8}])
    );
    let (_, v) = d
        .call(
            "GET",
            &format!("/capsules/{id}?version=-1&expand_evidence=true"),
            None,
        )
        .await;
    assert_eq!(v["evidence"][0]["content"], snippet, "{v}");
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"evidence": []}),
    )
    .await;
    assert!(fetch(&d, &id).await.get("evidence").is_none());

    // Bounds name the item and field; nothing is written.
    let long = "x".repeat(4_001);
    for (evidence, field) in [
        (
            json!([{"type": "snippet", "ref": "a", "content": long}]),
            "evidence[0].content",
        ),
        (
            json!([{"type": "snippet", "ref": "r".repeat(501)}]),
            "evidence[0].ref",
        ),
        (json!([{"type": "", "ref": "a"}]), "evidence[0].type"),
        (
            json!(vec![json!({"type": "log", "ref": "a"}); 21]),
            "evidence",
        ),
    ] {
        let (s, e) = d
            .call(
                "POST",
                "/capsules",
                Some(json!({"workspace": "e", "name": "over", "capsule_text": capsule_text("x"), "evidence": evidence})),
            )
            .await;
        assert_eq!(
            expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
            field
        );
    }
    let (s, _) = d
        .call("GET", "/capsules/by-name?workspace=e&name=over", None)
        .await;
    assert_eq!(s, 404);
    // At the bounds: 20 items of 4,000 characters on a capsule of any size.
    let full = json!(vec![
        json!({"type": "snippet", "ref": "a", "content": "y".repeat(4_000)});
        20
    ]);
    store(&d, json!({"workspace": "e", "name": "full", "capsule_text": capsule_text("x"), "evidence": full})).await;

    // Clone, export and import carry it; a replace without evidence drops it.
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"evidence": [{"type": "snippet", "ref": "src/a.rs:1", "content": "a"}]}),
    )
    .await;
    let h = ok(
        &d,
        "POST",
        "/capsules/clone",
        json!({"source": {"id": id}, "target": {"name": "auth-copy"}}),
    )
    .await;
    let copy = fetch(&d, h["id"].as_str().unwrap()).await;
    assert_eq!(copy["evidence"][0]["ref"], "src/a.rs:1");
    ok(
        &d,
        "POST",
        "/capsules/export",
        json!({"workspace": "e", "path": "e.jsonl"}),
    )
    .await;
    store(&d, json!({"workspace": "e", "name": "auth", "mode": "replace", "capsule_text": capsule_text("again")})).await;
    assert!(fetch(&d, &id).await.get("evidence").is_none());
    let r = ok(
        &d,
        "POST",
        "/capsules/import",
        json!({"path": "e.jsonl", "mode": "replace"}),
    )
    .await;
    assert_eq!(
        (r["replaced"].as_i64(), r["skipped"].as_i64()),
        (Some(4), Some(0)),
        "{r}"
    );
    let (_, x) = d
        .call("GET", &format!("/capsules/{id}?expand_evidence=true"), None)
        .await;
    assert_eq!(x["evidence"][0]["content"], "a", "{x}");

    // Over MCP.
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool("capsule_fetch", json!({"id": id, "expand_evidence": true}))
        .await;
    assert_eq!(r["structuredContent"]["evidence"][0]["content"], "a", "{r}");
    d.stop().await;
}
