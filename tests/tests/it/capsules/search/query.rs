//! Query syntax, and the queries refused naming `query`.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::json;

use super::{hit_names, search, search_with, store_thin};
use crate::util::{expect_error, store};

#[tokio::test]
async fn bad_queries_are_invalid_requests() {
    let d = TestDaemon::start().await;
    store(
        &d,
        json!({"name": "a", "capsule_text": capsule_text("alpha")}),
    )
    .await;
    for q in ["\"unclosed", "AND", "a:b", "(x"] {
        let (status, body) = search(&d, q).await;
        assert_eq!(status, 400, "{q}: {body}");
        assert_eq!(body["error"]["code"], "INVALID_REQUEST");
        // PostgreSQL has no FTS5: its message says what its search cannot read instead.
        let engine = if std::env::var("MOSS_TEST_ENGINE").as_deref() == Ok("postgres") {
            "PostgreSQL"
        } else {
            "FTS5"
        };
        assert!(
            body["error"]["message"].as_str().unwrap().contains(engine),
            "{body}"
        );
    }
    let (status, body) = search(&d, &"x".repeat(1001)).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("1000"));
    let (status, _) = search(&d, &"x".repeat(1000)).await;
    assert_eq!(status, 200);
    d.stop().await;
}

#[tokio::test]
async fn phrases_prefixes_and_booleans_follow_fts5() {
    let d = TestDaemon::start().await;
    store_thin(
        &d,
        "phrase",
        "we need user authentication for the admin page",
    )
    .await;
    store_thin(
        &d,
        "split",
        "authentication of each user happens at the gateway",
    )
    .await;
    store_thin(&d, "authz", "authorize calls with scoped tokens").await;
    store_thin(&d, "jwt", "tokens are JWT signed with the rotating key").await;
    store_thin(
        &d,
        "oauth",
        "login goes through OAuth with the corporate idp",
    )
    .await;
    store_thin(&d, "redis", "redis backs the session cache").await;
    store_thin(&d, "redis-old", "redis cache is deprecated here").await;

    // A phrase matches the words adjacent and in order only.
    assert_eq!(
        hit_names(&d, "\"user authentication\"", "").await,
        ["phrase"]
    );
    // Without quotes both words anywhere match.
    assert_eq!(
        hit_names(&d, "user authentication", "").await,
        ["phrase", "split"]
    );
    // A prefix matches every word starting with it.
    assert_eq!(
        hit_names(&d, "auth*", "").await,
        ["authz", "phrase", "split"]
    );
    assert_eq!(hit_names(&d, "JWT OR OAuth", "").await, ["jwt", "oauth"]);
    assert_eq!(
        hit_names(&d, "redis AND cache", "").await,
        ["redis", "redis-old"]
    );
    assert_eq!(hit_names(&d, "redis NOT deprecated", "").await, ["redis"]);
    assert_eq!(
        hit_names(&d, "(JWT OR OAuth) NOT corporate", "").await,
        ["jwt"]
    );
}

#[tokio::test]
async fn a_missing_or_empty_query_is_an_invalid_request() {
    let d = TestDaemon::start().await;
    let (s, b) = d.call("GET", "/capsules/search", None).await;
    let e = expect_error(s, &b, "INVALID_REQUEST", 400);
    assert!(e["message"].as_str().unwrap().contains("query"), "{e}");
    let (s, b) = d.call("GET", "/capsules/search?query=", None).await;
    expect_error(s, &b, "INVALID_REQUEST", 400);
}

#[tokio::test]
async fn a_long_or_malformed_query_says_what_is_wrong() {
    // Over 1000 characters and invalid FTS5 syntax are 400 INVALID_REQUEST, with a
    // message that helps fix the query.
    let d = TestDaemon::start().await;
    store_thin(&d, "a", "alpha").await;
    let (s, b) = search_with(&d, &"ab ".repeat(334), "").await;
    let e = expect_error(s, &b, "INVALID_REQUEST", 400);
    let m = e["message"].as_str().unwrap();
    assert!(m.contains("1000"), "names the limit: {m}");
    // Characters, not bytes: 1000 two-byte characters are fine.
    let (s, b) = search_with(&d, &"é".repeat(1000), "").await;
    assert_eq!(s, 200, "{b}");

    let (s, b) = search_with(&d, "\"unclosed phrase", "").await;
    let e = expect_error(s, &b, "INVALID_REQUEST", 400);
    let m = e["message"].as_str().unwrap();
    assert!(m.contains("\"unclosed phrase"), "quotes the query: {m}");
    assert!(m.len() > 30, "explains the syntax: {m}");
}

/// A query starting with `*` is one of FTS5's special queries, or an error FTS5 reports as an
/// unknown one: either way it is the caller's input, refused with 400 naming `query`, in capsule
/// and reasoning search alike.
#[tokio::test]
async fn a_query_starting_with_a_star_is_400_naming_the_query() {
    let d = TestDaemon::start().await;
    store(
        &d,
        json!({"workspace": "w", "name": "a", "capsule_text": capsule_text("auth")}),
    )
    .await;
    for q in ["*auth", "*", "* auth", "*reads", "*id"] {
        let (s, b) = search(&d, q).await;
        let e = expect_error(s, &b, "INVALID_REQUEST", 400);
        assert_eq!(e["details"]["field"], "query", "{q}: {b}");
        assert!(e["message"].as_str().unwrap().contains("auth*"), "{b}");
        let (s, b) = d
            .call(
                "POST",
                "/reasoning/search",
                Some(json!({"workspace": "w", "query": q})),
            )
            .await;
        let e = expect_error(s, &b, "INVALID_REQUEST", 400);
        assert_eq!(e["details"]["field"], "query", "{q}: {b}");
    }
    // A star after a word is a prefix search, as before.
    let (s, b) = search(&d, "aut*").await;
    assert_eq!(s, 200, "{b}");
}
