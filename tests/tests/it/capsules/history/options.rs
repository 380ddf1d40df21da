//! The finer bulk and search options: `skip_unchanged`, `safe_query`, `count_total` and snippet
//! bounds.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::json;

use super::{fetch, ok, urlencode};
use crate::util::{expect_error, store};

#[tokio::test]
async fn bulk_update_can_skip_capsules_already_holding_the_values() {
    let d = TestDaemon::start().await;
    let a = store(&d, json!({"workspace": "b", "phase": "done", "tags": ["x"], "capsule_text": capsule_text("a")})).await;
    let b = store(
        &d,
        json!({"workspace": "b", "phase": "wip", "capsule_text": capsule_text("b")}),
    )
    .await;
    let before = fetch(&d, &a).await["revision"].clone();
    let r = ok(
        &d,
        "POST",
        "/capsules/bulk-update",
        json!({"workspace": "b", "set_phase": "done", "skip_unchanged": true}),
    )
    .await;
    assert_eq!(r["updated"], 1, "{r}");
    assert_eq!(fetch(&d, &a).await["revision"], before, "a was left alone");
    assert_eq!(fetch(&d, &b).await["phase"], "done");
    // Several fields: a capsule is skipped only when it holds all of them.
    let r = ok(
        &d,
        "POST",
        "/capsules/bulk-update",
        json!({"workspace": "b", "set_phase": "done", "set_tags": ["x"], "skip_unchanged": true}),
    )
    .await;
    assert_eq!(r["updated"], 1, "only b lacks the tag: {r}");
    // Clearing: only capsules that have a value.
    let r = ok(
        &d,
        "POST",
        "/capsules/bulk-update",
        json!({"workspace": "b", "set_role": "", "skip_unchanged": true}),
    )
    .await;
    assert_eq!(r["updated"], 0, "{r}");
    // Without it, every match is touched.
    let r = ok(
        &d,
        "POST",
        "/capsules/bulk-update",
        json!({"workspace": "b", "set_phase": "done"}),
    )
    .await;
    assert_eq!(r["updated"], 2);
    d.stop().await;
}

#[tokio::test]
async fn safe_query_count_total_and_snippet_bounds() {
    let d = TestDaemon::start().await;
    let text = "## Objective\nFix pr-123 before the release: TODO: fix the \"unbalanced quote parser\
                \n## Current status\nx\n## Decisions\nx\n## Next actions\nx\n## Key locations\nx\n## Open questions\nx\n";
    store(
        &d,
        json!({"workspace": "s", "name": "one", "capsule_text": text}),
    )
    .await;
    for i in 0..5 {
        store(
            &d,
            json!({"workspace": "s", "capsule_text": capsule_text(&format!("common word {i}"))}),
        )
        .await;
    }
    // Raw FTS5 refuses these; safe_query finds the capsule.
    for q in ["pr-123", "TODO: fix", "\"unbalanced"] {
        let path = format!("/capsules/search?workspace=s&query={}", urlencode(q));
        let (s, e) = d.call("GET", &path, None).await;
        if s != 200 {
            expect_error(s, &e, "INVALID_REQUEST", 400);
        }
        let (s, r) = d
            .call("GET", &format!("{path}&safe_query=true"), None)
            .await;
        assert_eq!(s, 200, "{q}: {r}");
        assert_eq!(r["items"][0]["name"], "one", "{q}: {r}");
    }
    let (s, e) = d
        .call(
            "GET",
            "/capsules/search?query=%20-%20%3A&safe_query=true",
            None,
        )
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "query"
    );

    // count_total off: no total, has_more from one more hit.
    let (_, r) = d
        .call(
            "GET",
            "/capsules/search?workspace=s&query=common&limit=2&count_total=false",
            None,
        )
        .await;
    assert_eq!(r["items"].as_array().unwrap().len(), 2);
    assert_eq!(r["pagination"]["has_more"], true);
    assert!(r["pagination"].get("total").is_none(), "{r}");
    let (_, r) = d
        .call(
            "GET",
            "/capsules/search?workspace=s&query=common&limit=5&count_total=false",
            None,
        )
        .await;
    assert_eq!(
        (
            r["items"].as_array().unwrap().len(),
            r["pagination"]["has_more"].as_bool()
        ),
        (5, Some(false))
    );
    let (_, r) = d
        .call(
            "GET",
            "/capsules/search?workspace=s&query=common&limit=2",
            None,
        )
        .await;
    assert_eq!(r["pagination"]["total"], 5);

    // Snippets: shorter on request, bounds named.
    let (_, r) = d
        .call(
            "GET",
            "/capsules/search?workspace=s&query=release&snippet_chars=50&snippet_tokens=8",
            None,
        )
        .await;
    let snippet = r["items"][0]["snippet"].as_str().unwrap();
    let visible = snippet
        .replace("<b>", "")
        .replace("</b>", "")
        .replace("&quot;", "\"");
    assert!(visible.chars().count() <= 52, "{snippet}");
    for (q, field) in [
        ("snippet_chars=49", "snippet_chars"),
        ("snippet_chars=501", "snippet_chars"),
        ("snippet_tokens=0", "snippet_tokens"),
        ("snippet_tokens=129", "snippet_tokens"),
    ] {
        let (s, e) = d
            .call("GET", &format!("/capsules/search?query=x&{q}"), None)
            .await;
        assert_eq!(
            expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
            field
        );
    }
    let (s, _) = d
        .call(
            "GET",
            "/capsules/search?query=release&snippet_tokens=128",
            None,
        )
        .await;
    assert_eq!(s, 200, "128 is accepted (FTS5 gives at most 64)");
    d.stop().await;
}
