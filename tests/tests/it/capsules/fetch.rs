//! Fetching one capsule by id or name, soft-deleted capsules, ambiguous addresses,
//! and `fetch_many`.

use moss_client::ErrorCode;
use moss_client::capsule::{CapsuleRef, FetchManyRequest};
use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use super::{assert_no_text, ids, store, store_named};
use crate::util::expect_error;

// ---------------------------------------------------------------------------------------------
// fetch

#[tokio::test]
async fn fetch_by_id_and_by_name_with_peek() {
    let d = TestDaemon::start().await;
    let r = store(
        &d,
        json!({"workspace": "startupA", "name": "auth", "title": "Auth + sessions",
               "tags": ["auth", "sessions"], "source": "claude-code",
               "capsule_text": capsule_text("auth")}),
    )
    .await;
    let id = r["id"].as_str().unwrap();
    let (s, by_id) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert_eq!(s, 200, "{by_id}");
    let (s, by_name) = d
        .call(
            "GET",
            "/capsules/by-name?workspace=startupA&name=auth",
            None,
        )
        .await;
    assert_eq!(s, 200, "{by_name}");
    assert_eq!(by_id, by_name);
    for key in [
        "id",
        "workspace",
        "workspace_norm",
        "name",
        "name_norm",
        "title",
        "capsule_text",
        "capsule_chars",
        "tokens_estimate",
        "tags",
        "source",
        "created_at",
        "updated_at",
        "fetch_key",
    ] {
        assert!(by_id.get(key).is_some(), "fetch lacks {key}: {by_id}");
    }
    assert_eq!(by_id["capsule_text"], capsule_text("auth"));
    assert_eq!(
        by_id["fetch_key"],
        json!({"moss_capsule": "auth", "moss_workspace": "startupA"})
    );

    // include_text=true is the default; false is a peek.
    for path in [
        format!("/capsules/{id}?include_text=false"),
        "/capsules/by-name?workspace=startupA&name=auth&include_text=false".to_string(),
    ] {
        let (s, peek) = d.call("GET", &path, None).await;
        assert_eq!(s, 200, "{peek}");
        assert!(peek.get("capsule_text").is_none(), "{peek}");
        assert_eq!(peek["capsule_chars"], by_id["capsule_chars"]);
        assert_eq!(peek["tokens_estimate"], by_id["tokens_estimate"]);
        assert_eq!(peek["fetch_key"], by_id["fetch_key"]);
    }
    let (_, full) = d
        .call("GET", &format!("/capsules/{id}?include_text=true"), None)
        .await;
    assert_eq!(full, by_id);

    // Missing capsules are 404 NOT_FOUND, by id and by name.
    let (s, b) = d
        .call("GET", "/capsules/01ARZ3NDEKTSV4RRFFQ69G5FAV", None)
        .await;
    expect_error(s, &b, "NOT_FOUND", 404);
    let (s, b) = d
        .call(
            "GET",
            "/capsules/by-name?workspace=startupA&name=nope",
            None,
        )
        .await;
    expect_error(s, &b, "NOT_FOUND", 404);
    let (s, b) = d.call("GET", "/capsules/by-name?name=auth", None).await;
    expect_error(s, &b, "NOT_FOUND", 404);
    // An unknown query parameter is refused, not ignored.
    let (s, b) = d
        .call("GET", &format!("/capsules/{id}?include_txt=false"), None)
        .await;
    expect_error(s, &b, "INVALID_REQUEST", 400);
}

#[tokio::test]
async fn fetch_sees_soft_deleted_capsules_only_with_include_deleted() {
    let d = TestDaemon::start().await;
    let id = store_named(&d, "w", "gone").await;
    let (s, _) = d.call("DELETE", &format!("/capsules/{id}"), None).await;
    assert_eq!(s, 200);
    for path in [
        format!("/capsules/{id}"),
        "/capsules/by-name?workspace=w&name=gone".to_string(),
    ] {
        let (s, b) = d.call("GET", &path, None).await;
        expect_error(s, &b, "NOT_FOUND", 404);
        let sep = if path.contains('?') { '&' } else { '?' };
        let (s, c) = d
            .call("GET", &format!("{path}{sep}include_deleted=true"), None)
            .await;
        assert_eq!(s, 200, "{c}");
        assert_eq!(c["id"], id.as_str());
        assert!(c["deleted_at"].is_i64(), "{c}");
        assert_eq!(c["capsule_text"], capsule_text("gone"));
    }
    // With several deleted capsules under one name, by name sees the most recently changed one;
    // the older one stays reachable by id.
    let second = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"workspace": "w", "name": "gone", "capsule_text": capsule_text("2")})),
        )
        .await
        .1["id"]
        .as_str()
        .unwrap()
        .to_string();
    d.call("DELETE", &format!("/capsules/{second}"), None).await;
    let (_, c) = d
        .call(
            "GET",
            "/capsules/by-name?workspace=w&name=gone&include_deleted=true",
            None,
        )
        .await;
    assert_eq!(c["id"], second.as_str());
    let (_, c) = d
        .call("GET", &format!("/capsules/{id}?include_deleted=true"), None)
        .await;
    assert_eq!(c["capsule_text"], capsule_text("gone"));
}

#[tokio::test]
async fn a_soft_deleted_capsule_404_says_what_each_operation_can_do() {
    let d = TestDaemon::start().await;
    let id = store_named(&d, "w", "gone").await;
    d.call("DELETE", &format!("/capsules/{id}"), None).await;
    let cases: Vec<(&str, String, Option<Value>, &str)> = vec![
        (
            "GET",
            format!("/capsules/{id}"),
            None,
            "set include_deleted to read it",
        ),
        (
            "PUT",
            format!("/capsules/{id}"),
            Some(json!({"title": "x"})),
            "cannot be changed",
        ),
        (
            "POST",
            "/capsules/append".to_string(),
            Some(json!({"id": id, "section": "Progress", "content": "more"})),
            "cannot be changed",
        ),
        ("DELETE", format!("/capsules/{id}"), None, "deleted already"),
        (
            "POST",
            "/capsules/compose".to_string(),
            Some(json!({"items": [{"id": id}]})),
            "only active capsules",
        ),
    ];
    for (method, path, body, hint) in cases {
        let (s, b) = d.call(method, &path, body).await;
        let e = expect_error(s, &b, "NOT_FOUND", 404);
        let message = e["message"].as_str().unwrap();
        assert!(
            message.contains("soft-deleted") && message.contains(hint),
            "{method} {path}: {b}"
        );
    }
}

#[tokio::test]
async fn id_and_name_together_are_ambiguous() {
    let d = TestDaemon::start().await;
    let id = store_named(&d, "w", "auth").await;
    let cases: Vec<(&str, String, Option<Value>)> = vec![
        ("GET", format!("/capsules/{id}?workspace=w&name=auth"), None),
        ("GET", format!("/capsules/by-name?id={id}&name=auth"), None),
        (
            "PUT",
            format!("/capsules/{id}"),
            Some(json!({"name": "auth", "title": "x"})),
        ),
        (
            "PUT",
            format!("/capsules/{id}?workspace=w&name=auth"),
            Some(json!({"title": "x"})),
        ),
        (
            "PUT",
            format!("/capsules/{id}?name=auth"),
            Some(json!({"title": "x"})),
        ),
        (
            "PUT",
            "/capsules/by-name?workspace=w&name=auth".to_string(),
            Some(json!({"id": id, "title": "x"})),
        ),
        ("DELETE", format!("/capsules/{id}?name=auth"), None),
        (
            "DELETE",
            format!("/capsules/by-name?id={id}&name=auth"),
            None,
        ),
    ];
    for (method, path, body) in cases {
        let (s, b) = d.call(method, &path, body).await;
        expect_error(s, &b, "AMBIGUOUS_ADDRESSING", 400);
    }
    // Nothing was changed or deleted.
    let (s, c) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert_eq!(s, 200);
    assert_eq!(c["title"], "auth");
    // No address at all is an invalid request.
    let (s, b) = d.call("GET", "/capsules/by-name?workspace=w", None).await;
    expect_error(s, &b, "INVALID_REQUEST", 400);
    // So is a query parameter the route does not take.
    for method in ["GET", "PUT", "DELETE"] {
        let body = (method == "PUT").then(|| json!({"title": "x"}));
        let (s, b) = d
            .call(method, &format!("/capsules/{id}?bogus=1"), body)
            .await;
        let e = expect_error(s, &b, "INVALID_REQUEST", 400);
        assert!(e["message"].as_str().unwrap().contains("bogus"), "{b}");
    }
    let (_, c) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert_eq!(c["title"], "auth");
}

#[tokio::test]
async fn a_method_a_route_does_not_take_is_an_error_envelope() {
    let d = TestDaemon::start().await;
    let id = store_named(&d, "w", "auth").await;
    for (method, path) in [
        ("PATCH", format!("/capsules/{id}")),
        ("GET", "/capsules/fetch-many".to_string()),
    ] {
        let (s, b) = d.call(method, &path, None).await;
        let e = expect_error(s, &b, "INVALID_REQUEST", 400);
        let message = e["message"].as_str().unwrap();
        assert!(message.contains(method) && message.contains(&path), "{b}");
    }
}

// ---------------------------------------------------------------------------------------------
// fetch_many

#[tokio::test]
async fn fetch_many_returns_found_items_in_order_and_errors_for_the_rest() {
    let d = TestDaemon::start().await;
    let a = store_named(&d, "phinn", "pr-123-base").await;
    let b = store_named(&d, "phinn", "pr-123-design").await;
    let gone = store_named(&d, "phinn", "gone").await;
    d.call("DELETE", &format!("/capsules/{gone}"), None).await;
    let missing_id = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    let body = json!({"items": [
        {"workspace": "phinn", "name": "pr-123-design"},
        {"id": missing_id},
        {"id": a},
        {"workspace": "phinn", "name": "missing"},
        {"workspace": "phinn", "name": "gone"},
        {"id": a, "name": "pr-123-base"},
    ]});
    let (s, r) = d
        .call("POST", "/capsules/fetch-many", Some(body.clone()))
        .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(ids(&r), vec![b.clone(), a.clone()], "request order: {r}");
    for item in r["items"].as_array().unwrap() {
        assert!(item["capsule_text"].is_string(), "text by default: {item}");
        assert!(item["fetch_key"]["moss_capsule"].is_string(), "{item}");
    }
    let errors = r["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 4, "{r}");
    assert_eq!(errors[0]["ref"], json!({"id": missing_id}));
    assert_eq!(errors[0]["code"], "NOT_FOUND");
    assert!(errors[0]["message"].as_str().unwrap().contains(missing_id));
    assert_eq!(
        errors[1]["ref"],
        json!({"workspace": "phinn", "name": "missing"})
    );
    assert_eq!(errors[1]["code"], "NOT_FOUND");
    assert!(
        errors[1]["message"]
            .as_str()
            .unwrap()
            .contains("phinn/missing"),
        "{r}"
    );
    assert_eq!(
        errors[2]["ref"],
        json!({"workspace": "phinn", "name": "gone"})
    );
    assert_eq!(errors[2]["code"], "NOT_FOUND");
    assert_eq!(errors[3]["code"], "AMBIGUOUS_ADDRESSING");
    for e in errors {
        let mut keys: Vec<_> = e.as_object().unwrap().keys().cloned().collect();
        keys.sort();
        assert_eq!(keys, ["code", "message", "ref"], "{e}");
    }

    // Summaries only, and deleted capsules eligible on request.
    let (s, r) = d
        .call(
            "POST",
            "/capsules/fetch-many",
            Some(json!({"items": [{"id": a}, {"id": gone}],
                        "include_text": false, "include_deleted": true})),
        )
        .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(ids(&r), vec![a.clone(), gone.clone()]);
    assert_no_text(&r);
    assert!(r["items"][1]["deleted_at"].is_i64());
    assert_eq!(r["errors"], json!([]));

    // The typed client decodes the same thing.
    let typed = d
        .client
        .capsules()
        .fetch_many(&FetchManyRequest {
            items: vec![CapsuleRef::by_id(&a), CapsuleRef::by_name("PHINN", "nope")],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(typed.items.len(), 1);
    assert_eq!(typed.errors[0].code, ErrorCode::NotFound);
    assert_eq!(
        typed.errors[0].reference,
        CapsuleRef::by_name("PHINN", "nope")
    );
}

#[tokio::test]
async fn fetch_many_takes_at_most_fifty_refs() {
    let d = TestDaemon::start().await;
    let id = store_named(&d, "w", "one").await;
    let fifty: Vec<Value> = (0..50).map(|_| json!({"id": id})).collect();
    let (s, r) = d
        .call(
            "POST",
            "/capsules/fetch-many",
            Some(json!({"items": fifty})),
        )
        .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["items"].as_array().unwrap().len(), 50);
    let fifty_one: Vec<Value> = (0..51).map(|_| json!({"id": id})).collect();
    let (s, r) = d
        .call(
            "POST",
            "/capsules/fetch-many",
            Some(json!({"items": fifty_one})),
        )
        .await;
    let e = expect_error(s, &r, "INVALID_REQUEST", 400);
    assert!(e["message"].as_str().unwrap().contains("50"), "{r}");
    let (s, r) = d
        .call("POST", "/capsules/fetch-many", Some(json!({"items": []})))
        .await;
    expect_error(s, &r, "INVALID_REQUEST", 400);
    let (s, r) = d
        .call("POST", "/capsules/fetch-many", Some(json!({})))
        .await;
    let e = expect_error(s, &r, "INVALID_REQUEST", 400);
    assert!(e["message"].as_str().unwrap().contains("items"), "{r}");
}
