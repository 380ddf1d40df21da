//! Updating (fields, optimistic `if_updated_at`) and soft deletion.

use moss_client::capsule::{FetchRequest, UpdateRequest};
use moss_tests::{TestDaemon, capsule_text};
use serde_json::json;

use super::{ids, store, store_named};
use crate::util::expect_error;

// ---------------------------------------------------------------------------------------------
// update

#[tokio::test]
async fn update_edits_fields_but_never_the_address() {
    let d = TestDaemon::start().await;
    let r = store(
        &d,
        json!({"workspace": "startupA", "name": "auth", "title": "Auth", "tags": ["a"],
               "source": "claude-code", "run_id": "r1", "phase": "design", "role": "writer",
               "capsule_text": capsule_text("v1")}),
    )
    .await;
    let id = r["id"].as_str().unwrap().to_string();
    let (_, before) = d.call("GET", &format!("/capsules/{id}"), None).await;

    // By name (the by-name route), every editable field.
    let (s, h) = d
        .call(
            "PUT",
            "/capsules/by-name?workspace=STARTUPA&name=Auth",
            Some(json!({"capsule_text": capsule_text("v2 longer text here"),
                        "title": "Auth + sessions (updated)", "tags": ["auth", "jwt"],
                        "source": "codex", "run_id": "r2", "phase": "impl", "role": "coder"})),
        )
        .await;
    assert_eq!(s, 200, "{h}");
    assert_eq!(h["id"], id.as_str());
    assert_eq!(
        h["fetch_key"],
        json!({"moss_capsule": "auth", "moss_workspace": "startupA"})
    );
    let (_, after) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert_eq!(after["capsule_text"], capsule_text("v2 longer text here"));
    assert_eq!(after["title"], "Auth + sessions (updated)");
    assert_eq!(after["tags"], json!(["auth", "jwt"]));
    assert_eq!(after["source"], "codex");
    assert_eq!(after["run_id"], "r2");
    assert_eq!(after["phase"], "impl");
    assert_eq!(after["role"], "coder");
    assert!(after["capsule_chars"].as_i64() > before["capsule_chars"].as_i64());
    assert!(after["tokens_estimate"].as_i64() > before["tokens_estimate"].as_i64());
    for key in [
        "id",
        "workspace",
        "workspace_norm",
        "name",
        "name_norm",
        "created_at",
    ] {
        assert_eq!(after[key], before[key], "update changed {key}");
    }
    assert!(after["updated_at"].as_i64() >= before["updated_at"].as_i64());

    // By id, one field at a time; the others are kept. "" and [] clear.
    let (s, _) = d
        .call(
            "PUT",
            &format!("/capsules/{id}"),
            Some(json!({"title": "Only title"})),
        )
        .await;
    assert_eq!(s, 200);
    let (_, c) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert_eq!(c["title"], "Only title");
    assert_eq!(c["capsule_text"], after["capsule_text"]);
    assert_eq!(c["tags"], after["tags"]);
    let (s, _) = d
        .call(
            "PUT",
            &format!("/capsules/{id}"),
            Some(json!({"tags": [], "source": "", "phase": ""})),
        )
        .await;
    assert_eq!(s, 200);
    let (_, c) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert!(c.get("tags").is_none(), "{c}");
    assert!(c.get("source").is_none(), "{c}");
    assert!(c.get("phase").is_none(), "{c}");
    assert_eq!(c["role"], "coder");

    // Still addressable under the same name; no capsule was added.
    let (s, c) = d
        .call(
            "GET",
            "/capsules/by-name?workspace=startupA&name=auth",
            None,
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(c["id"], id.as_str());
    let (_, page) = d.call("GET", "/capsules/inventory", None).await;
    assert_eq!(page["pagination"]["total"], 1);

    // The typed client's by-id and by-name paths.
    let h = d
        .client
        .capsules()
        .update(&UpdateRequest {
            id: Some(id.clone()),
            source: Some("typed".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(h.id, id);
    let h = d
        .client
        .capsules()
        .update(&UpdateRequest {
            workspace: Some("startupa".into()),
            name: Some("AUTH".into()),
            role: Some("typed-role".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(h.id, id);
    let c = d
        .client
        .capsules()
        .fetch(&FetchRequest {
            id: Some(id.clone()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(c.source.as_deref(), Some("typed"));
    assert_eq!(c.role.as_deref(), Some("typed-role"));
}

#[tokio::test]
async fn update_refuses_no_fields_missing_and_deleted_capsules() {
    let d = TestDaemon::start().await;
    let id = store_named(&d, "w", "auth").await;
    for body in [
        json!({}),
        json!({"allow_thin": true}),
        json!({"if_updated_at": 1}),
    ] {
        let (s, b) = d.call("PUT", &format!("/capsules/{id}"), Some(body)).await;
        let e = expect_error(s, &b, "INVALID_REQUEST", 400);
        assert!(e["message"].as_str().unwrap().contains("no fields"), "{b}");
    }
    // Addressing keys are not editable fields: they route (and conflict with the path).
    let (s, b) = d
        .call(
            "PUT",
            "/capsules/by-name?workspace=w&name=auth",
            Some(json!({"workspace": "elsewhere"})),
        )
        .await;
    assert_eq!(s, 400, "{b}");
    let (s, b) = d
        .call(
            "PUT",
            &format!("/capsules/{id}"),
            Some(json!({"nmae": "x"})),
        )
        .await;
    expect_error(s, &b, "INVALID_REQUEST", 400);

    let (s, b) = d
        .call(
            "PUT",
            "/capsules/01ARZ3NDEKTSV4RRFFQ69G5FAV",
            Some(json!({"title": "x"})),
        )
        .await;
    expect_error(s, &b, "NOT_FOUND", 404);
    let (s, b) = d
        .call(
            "PUT",
            "/capsules/by-name?workspace=w&name=nope",
            Some(json!({"title": "x"})),
        )
        .await;
    expect_error(s, &b, "NOT_FOUND", 404);

    // Soft-deleted capsules cannot be updated, by id or by name.
    d.call("DELETE", &format!("/capsules/{id}"), None).await;
    let (s, b) = d
        .call(
            "PUT",
            &format!("/capsules/{id}"),
            Some(json!({"title": "x"})),
        )
        .await;
    expect_error(s, &b, "NOT_FOUND", 404);
    let (s, b) = d
        .call(
            "PUT",
            "/capsules/by-name?workspace=w&name=auth",
            Some(json!({"title": "x"})),
        )
        .await;
    expect_error(s, &b, "NOT_FOUND", 404);
    let (_, c) = d
        .call("GET", &format!("/capsules/{id}?include_deleted=true"), None)
        .await;
    assert_eq!(c["title"], "auth", "the deleted capsule is untouched");
}

#[tokio::test]
async fn update_with_if_updated_at_is_optimistic() {
    let d = TestDaemon::start().await;
    let id = store_named(&d, "w", "auth").await;
    let (_, c) = d.call("GET", &format!("/capsules/{id}"), None).await;
    let at = c["updated_at"].as_i64().unwrap();
    let (s, b) = d
        .call(
            "PUT",
            &format!("/capsules/{id}"),
            Some(json!({"title": "stale", "if_updated_at": at - 1})),
        )
        .await;
    let e = expect_error(s, &b, "CONFLICT", 409);
    assert_eq!(e["details"]["updated_at"], at, "{b}");
    assert_eq!(e["details"]["expected"], at - 1, "{b}");
    let (_, c) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert_eq!(c["title"], "auth", "a conflicting update changes nothing");
    let (s, b) = d
        .call(
            "PUT",
            &format!("/capsules/{id}"),
            Some(json!({"title": "fresh", "if_updated_at": at})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let (_, c) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert_eq!(c["title"], "fresh");
}

// ---------------------------------------------------------------------------------------------
// delete

#[tokio::test]
async fn delete_is_soft_frees_the_name_and_shows_as_latest() {
    let d = TestDaemon::start().await;
    let a = store_named(&d, "w", "a").await;
    let b = store_named(&d, "w", "b").await;
    let (s, r) = d.call("DELETE", &format!("/capsules/{a}"), None).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r, json!({"deleted": true, "id": a}));

    // Gone for ordinary reads, still there with include_deleted.
    let (s, _) = d.call("GET", &format!("/capsules/{a}"), None).await;
    assert_eq!(s, 404);
    let (_, c) = d
        .call("GET", &format!("/capsules/{a}?include_deleted=true"), None)
        .await;
    let deleted_at = c["deleted_at"].as_i64().unwrap();
    assert_eq!(c["updated_at"], deleted_at, "delete bumps updated_at");
    assert!(c["updated_at"].as_i64() >= c["created_at"].as_i64());

    // latest: the deletion is the newest change, but only visible with include_deleted.
    let (_, l) = d.call("GET", "/capsules/latest?workspace=w", None).await;
    assert_eq!(l["item"]["id"], b.as_str());
    let (_, l) = d
        .call(
            "GET",
            "/capsules/latest?workspace=w&include_deleted=true",
            None,
        )
        .await;
    assert_eq!(l["item"]["id"], a.as_str(), "{l}");
    assert!(l["item"]["deleted_at"].is_i64());

    // list / inventory hide it by default.
    let (_, page) = d.call("GET", "/capsules?workspace=w", None).await;
    assert_eq!(ids(&page), vec![b.clone()]);
    let (_, page) = d
        .call("GET", "/capsules?workspace=w&include_deleted=true", None)
        .await;
    assert_eq!(ids(&page), vec![a.clone(), b.clone()]);
    let (_, inv) = d.call("GET", "/capsules/inventory", None).await;
    assert_eq!(ids(&inv), vec![b.clone()]);
    let (_, inv) = d
        .call("GET", "/capsules/inventory?include_deleted=true", None)
        .await;
    assert_eq!(inv["pagination"]["total"], 2);

    // Deleting again is 404; the name is free.
    let (s, r) = d.call("DELETE", &format!("/capsules/{a}"), None).await;
    expect_error(s, &r, "NOT_FOUND", 404);
    let again = store_named(&d, "w", "a").await;
    assert_ne!(again, a);
}

#[tokio::test]
async fn delete_by_name_route() {
    let d = TestDaemon::start().await;
    let id = store_named(&d, "Startup A", "Auth").await;
    let (s, r) = d
        .call(
            "DELETE",
            "/capsules/by-name?workspace=startup%20a&name=AUTH",
            None,
        )
        .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r, json!({"deleted": true, "id": id}));
    // By name, delete touches only active capsules.
    let (s, r) = d
        .call(
            "DELETE",
            "/capsules/by-name?workspace=startup%20a&name=auth",
            None,
        )
        .await;
    expect_error(s, &r, "NOT_FOUND", 404);
    // Default workspace when omitted.
    let other = store_named(&d, "default", "x").await;
    let (s, r) = d.call("DELETE", "/capsules/by-name?name=x", None).await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["id"], other.as_str());
    // Without a name there is nothing to delete.
    let (s, r) = d
        .call("DELETE", "/capsules/by-name?workspace=w", None)
        .await;
    expect_error(s, &r, "INVALID_REQUEST", 400);
    // Two capsules of the same name: the deleted one stays deleted, the active one is hit.
    let first = store_named(&d, "w", "dup").await;
    d.call("DELETE", &format!("/capsules/{first}"), None).await;
    let second = store_named(&d, "w", "dup").await;
    let (s, r) = d
        .call("DELETE", "/capsules/by-name?workspace=w&name=dup", None)
        .await;
    assert_eq!(s, 200);
    assert_eq!(r["id"], second.as_str());
}
