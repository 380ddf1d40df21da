//! Optimistic concurrency (revision, updated_at) and the multi-section append.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use super::{fetch, ok, worker_text};
use crate::util::{expect_error, store};

#[tokio::test]
async fn revision_and_updated_at_guard_update_and_append_and_a_conflict_writes_nothing() {
    let d = TestDaemon::start().await;
    let id = store(
        &d,
        json!({"workspace": "w", "name": "auth", "capsule_text": capsule_text("one")}),
    )
    .await;
    let c = fetch(&d, &id).await;
    assert_eq!(c["revision"], 1);
    let updated_at = c["updated_at"].as_i64().unwrap();

    // The right revision: written, and the handle says the new revision.
    let h = ok(
        &d,
        "PUT",
        "/capsules/by-name?workspace=w&name=auth",
        json!({"title": "T2", "if_revision": 1}),
    )
    .await;
    assert_eq!(h["revision"], 2, "{h}");
    // A stale revision: 409 with the current revision and updated_at, nothing written.
    let (s, e) = d
        .call(
            "PUT",
            &format!("/capsules/{id}"),
            Some(json!({"title": "lost", "if_revision": 1})),
        )
        .await;
    let e = expect_error(s, &e, "CONFLICT", 409);
    assert_eq!(e["details"]["revision"], 2, "{e}");
    assert!(e["details"]["updated_at"].is_i64(), "{e}");
    let c = fetch(&d, &id).await;
    assert_eq!(
        (c["title"].as_str(), c["revision"].as_i64()),
        (Some("T2"), Some(2))
    );

    // if_updated_at: a value from the past is a conflict.
    let (s, e) = d
        .call(
            "PUT",
            &format!("/capsules/{id}"),
            Some(json!({"title": "lost", "if_updated_at": updated_at - 1})),
        )
        .await;
    expect_error(s, &e, "CONFLICT", 409);

    // Append takes both guards too.
    let (s, e) = d
        .call(
            "POST",
            "/capsules/append",
            Some(json!({"id": id, "section": "Decisions", "content": "- x", "if_revision": 1})),
        )
        .await;
    let e = expect_error(s, &e, "CONFLICT", 409);
    assert_eq!(e["details"]["revision"], 2);
    let (s, e) = d
        .call(
            "POST",
            "/capsules/append",
            Some(json!({"id": id, "section": "Decisions", "content": "- x", "if_updated_at": 1})),
        )
        .await;
    expect_error(s, &e, "CONFLICT", 409);
    assert_eq!(fetch(&d, &id).await["capsule_text"], capsule_text("one"));
    let r = ok(
        &d,
        "POST",
        "/capsules/append",
        json!({"id": id, "section": "Decisions", "content": "- y", "if_revision": 2}),
    )
    .await;
    assert_eq!(r["revision"], 3, "{r}");
    assert_eq!(r["sections"][0]["section_hit"], "## Decisions");

    // Delete (by name, one writer job) bumps the revision as well.
    ok(
        &d,
        "DELETE",
        "/capsules/by-name?workspace=w&name=auth",
        Value::Null,
    )
    .await;
    assert_eq!(fetch(&d, &id).await["revision"], 4);
    d.stop().await;
}

#[tokio::test]
async fn a_multi_section_append_is_all_or_nothing_and_can_prepend_or_demand_a_placeholder() {
    let d = TestDaemon::start().await;
    let text = worker_text("auth", "- JWT", "(pending)");
    let id = store(&d, json!({"name": "a", "capsule_text": text})).await;
    // One unknown section: 400 naming it, nothing written.
    let (s, e) = d
        .call(
            "POST",
            "/capsules/append",
            Some(json!({"id": id, "sections": [
                {"section": "Current status", "content": "implementing"},
                {"section": "Nope", "content": "x"}
            ]})),
        )
        .await;
    let e = expect_error(s, &e, "INVALID_REQUEST", 400);
    assert_eq!(e["details"]["section"], "Nope");
    let c = fetch(&d, &id).await;
    assert_eq!(
        (c["capsule_text"].as_str(), c["revision"].as_i64()),
        (Some(text.as_str()), Some(1))
    );
    // Too large as a whole: nothing written either.
    let (s, e) = d
        .call(
            "POST",
            "/capsules/append",
            Some(json!({"id": id, "sections": [
                {"section": "Current status", "content": "ok"},
                {"section": "Decisions", "content": "x".repeat(13_000)}
            ]})),
        )
        .await;
    expect_error(s, &e, "CAPSULE_TOO_LARGE", 413);
    assert_eq!(fetch(&d, &id).await["revision"], 1);

    // All good: each section with the placeholder rule, in order.
    let r = ok(
        &d,
        "POST",
        "/capsules/append",
        json!({"id": id, "sections": [
            {"section": "Current status", "content": "implementing"},
            {"section": "Decisions", "content": "- mutex over channel"}
        ]}),
    )
    .await;
    assert_eq!(
        r["sections"],
        json!([
            {"section_hit": "## Current status", "replaced": true},
            {"section_hit": "## Decisions", "replaced": false}
        ])
    );
    assert_eq!(
        (r["section_hit"].as_str(), r["replaced"].as_bool()),
        (Some("## Current status"), Some(true))
    );
    let t = fetch(&d, &id).await["capsule_text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(t.contains("## Current status\nimplementing\n"), "{t}");
    assert!(
        t.contains("## Decisions\n- JWT\n\n- mutex over channel\n"),
        "{t}"
    );

    // Prepend: latest at the top.
    ok(
        &d,
        "POST",
        "/capsules/append",
        json!({"id": id, "section": "Current status", "content": "testing", "position": "prepend"}),
    )
    .await;
    let t = fetch(&d, &id).await["capsule_text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        t.contains("## Current status\ntesting\n\nimplementing\n"),
        "{t}"
    );

    // if_placeholder: the placeholder section is written once, then it is a conflict.
    let first = json!({"id": id, "section": "Open questions", "content": "- who owns it?", "if_placeholder": true});
    ok(&d, "POST", "/capsules/append", first.clone()).await;
    let (s, e) = d.call("POST", "/capsules/append", Some(first)).await;
    let e = expect_error(s, &e, "CONFLICT", 409);
    assert_eq!(e["details"]["section"], "Open questions");
    // Both forms at once, or neither, is a 400 naming the field.
    let (s, e) = d
        .call(
            "POST",
            "/capsules/append",
            Some(json!({"id": id, "section": "x", "content": "y", "sections": [{"section": "x", "content": "y"}]})),
        )
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "sections"
    );
    let (s, e) = d
        .call("POST", "/capsules/append", Some(json!({"id": id})))
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "section"
    );
    d.stop().await;
}
