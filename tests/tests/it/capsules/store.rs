//! Storing: modes, field ranges, the typed client, size and lint, normalization of
//! workspaces and names, counts.

use moss_client::ErrorCode;
use moss_client::capsule::{FetchRequest, StoreMode, StoreRequest};
use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use super::{ids, is_ulid, store, store_named, ulid_millis};
use crate::util::expect_error;

// ---------------------------------------------------------------------------------------------
// store

#[tokio::test]
async fn store_answers_a_ulid_and_a_fetch_key() {
    let d = TestDaemon::start().await;
    let named = store(
        &d,
        json!({"workspace": "StartupA", "name": "Auth", "capsule_text": capsule_text("a")}),
    )
    .await;
    let id = named["id"].as_str().unwrap();
    assert!(is_ulid(id), "{id}");
    assert_eq!(
        named["fetch_key"],
        json!({"moss_capsule": "Auth", "moss_workspace": "StartupA"}),
        "named capsules are fetched by workspace + name, as written"
    );

    let unnamed = store(&d, json!({"capsule_text": capsule_text("b")})).await;
    let uid = unnamed["id"].as_str().unwrap();
    assert!(is_ulid(uid), "{uid}");
    assert_ne!(uid, id);
    assert_eq!(unnamed["fetch_key"], json!({"moss_id": uid}));

    // The fetched capsule carries the same fetch key, and the id's time prefix is its creation.
    let (s, c) = d.call("GET", &format!("/capsules/{uid}"), None).await;
    assert_eq!(s, 200, "{c}");
    let created_ms = c["created_at"].as_u64().unwrap() * 1000;
    let id_ms = ulid_millis(uid);
    assert!(
        id_ms + 1000 >= created_ms && id_ms <= created_ms + 2000,
        "ULID time {id_ms} vs created_at {created_ms}"
    );
    assert!(
        ulid_millis(uid) >= ulid_millis(id),
        "ids sort by creation time"
    );
    assert_eq!(c["fetch_key"], json!({"moss_id": uid}));
    assert!(c.get("name").is_none(), "{c}");
    assert!(
        c.get("title").is_none(),
        "an unnamed capsule has no default title: {c}"
    );
}

#[tokio::test]
async fn store_defaults_the_workspace_and_the_title() {
    let d = TestDaemon::start().await;
    let r = store(
        &d,
        json!({"name": "auth", "capsule_text": capsule_text("a")}),
    )
    .await;
    assert_eq!(r["fetch_key"]["moss_workspace"], "default");
    let (s, c) = d
        .call("GET", "/capsules/by-name?workspace=default&name=auth", None)
        .await;
    assert_eq!(s, 200, "{c}");
    assert_eq!(c["workspace"], "default");
    assert_eq!(c["workspace_norm"], "default");
    assert_eq!(c["title"], "auth", "title defaults to the name");
    // Omitting the workspace when fetching also means "default".
    let (s, c2) = d.call("GET", "/capsules/by-name?name=auth", None).await;
    assert_eq!(s, 200, "{c2}");
    assert_eq!(c2["id"], r["id"]);

    let r = store(
        &d,
        json!({"name": "db", "title": "Database", "tags": ["sql", "pg"], "source": "codex",
               "capsule_text": capsule_text("db")}),
    )
    .await;
    let (_, c) = d
        .call(
            "GET",
            &format!("/capsules/{}", r["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(c["title"], "Database");
    assert_eq!(c["tags"], json!(["sql", "pg"]));
    assert_eq!(c["source"], "codex");
    assert_eq!(c["created_at"], c["updated_at"]);
    assert!(c.get("deleted_at").is_none(), "{c}");
}

#[tokio::test]
async fn store_mode_error_refuses_a_taken_name_with_details() {
    let d = TestDaemon::start().await;
    let id = store_named(&d, "StartupA", "auth").await;
    for (ws, name) in [
        ("StartupA", "auth"),
        ("startupa", "AUTH"),
        ("  STARTUPA ", " Auth "),
    ] {
        for mode in [json!(null), json!("error")] {
            let mut body =
                json!({"workspace": ws, "name": name, "capsule_text": capsule_text("x")});
            if !mode.is_null() {
                body["mode"] = mode.clone();
            }
            let (s, b) = d.call("POST", "/capsules", Some(body)).await;
            let e = expect_error(s, &b, "NAME_ALREADY_EXISTS", 409);
            assert_eq!(e["details"]["id"], id.as_str(), "{b}");
            assert!(e["details"]["workspace"].is_string(), "{b}");
            assert!(e["details"]["name"].is_string(), "{b}");
        }
    }
    // The same name in another workspace is a different capsule.
    let other = store_named(&d, "StartupB", "auth").await;
    assert_ne!(other, id);
    // The original is untouched.
    let (_, c) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert_eq!(c["capsule_text"], capsule_text("auth"));
}

#[tokio::test]
async fn store_mode_replace_overwrites_in_place_or_creates() {
    let d = TestDaemon::start().await;
    // Nothing active under the name: replace creates.
    let first = store(
        &d,
        json!({"workspace": "w", "name": "auth", "mode": "replace", "title": "One",
               "tags": ["a"], "capsule_text": capsule_text("one")}),
    )
    .await;
    let id = first["id"].as_str().unwrap().to_string();
    let (_, before) = d.call("GET", &format!("/capsules/{id}"), None).await;

    // Active capsule under the name (spelled differently): overwritten, id kept.
    let second = store(
        &d,
        json!({"workspace": "W", "name": "AUTH", "mode": "replace", "title": "Two",
               "capsule_text": capsule_text("two")}),
    )
    .await;
    assert_eq!(second["id"], id.as_str());
    let (_, after) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert_eq!(after["capsule_text"], capsule_text("two"));
    assert_eq!(after["title"], "Two");
    assert!(
        after.get("tags").is_none(),
        "replace writes the whole capsule: {after}"
    );
    assert_eq!(after["created_at"], before["created_at"]);
    assert!(after["updated_at"].as_i64() >= before["updated_at"].as_i64());
    let (_, page) = d.call("GET", "/capsules?workspace=w", None).await;
    assert_eq!(page["pagination"]["total"], 1, "{page}");

    // A soft-deleted capsule does not take part: replace creates a new one.
    let (s, b) = d.call("DELETE", &format!("/capsules/{id}"), None).await;
    assert_eq!(s, 200, "{b}");
    let third = store(
        &d,
        json!({"workspace": "w", "name": "auth", "mode": "replace",
               "capsule_text": capsule_text("three")}),
    )
    .await;
    let new_id = third["id"].as_str().unwrap();
    assert_ne!(new_id, id, "replace does not revive a deleted capsule");
    let (_, old) = d
        .call("GET", &format!("/capsules/{id}?include_deleted=true"), None)
        .await;
    assert_eq!(
        old["capsule_text"],
        capsule_text("two"),
        "the deleted one is kept"
    );
    assert!(old["deleted_at"].is_i64(), "{old}");
    let (_, active) = d
        .call(
            "GET",
            "/capsules/by-name?workspace=w&name=auth&include_deleted=true",
            None,
        )
        .await;
    assert_eq!(active["id"], new_id, "by name, the active capsule wins");
}

#[tokio::test]
async fn store_rejects_an_unknown_mode_and_a_missing_text() {
    let d = TestDaemon::start().await;
    let (s, b) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"name": "a", "mode": "upsert", "capsule_text": capsule_text("a")})),
        )
        .await;
    let e = expect_error(s, &b, "INVALID_REQUEST", 400);
    assert!(e["message"].as_str().unwrap().contains("mode"), "{b}");
    assert_eq!(e["details"]["field"], "mode");
    let (s, b) = d
        .call("POST", "/capsules", Some(json!({"name": "a"})))
        .await;
    let e = expect_error(s, &b, "INVALID_REQUEST", 400);
    assert!(
        e["message"].as_str().unwrap().contains("capsule_text"),
        "{b}"
    );
    assert_eq!(e["details"]["field"], "capsule_text");
    let (s, b) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"nmae": "a", "capsule_text": capsule_text("a")})),
        )
        .await;
    let e = expect_error(s, &b, "INVALID_REQUEST", 400);
    assert!(e["message"].as_str().unwrap().contains("nmae"), "{b}");
    assert_eq!(e["details"]["field"], "nmae");
}

#[tokio::test]
async fn out_of_range_values_name_their_field_in_details() {
    let d = TestDaemon::start().await;
    let long = "x".repeat(201);
    let mut tags: Vec<String> = vec!["ok".into()];
    tags.push("t".repeat(101));
    let cases: Vec<(&str, String, Option<Value>, &str)> = vec![
        (
            "POST",
            "/capsules".into(),
            Some(json!({"name": "   ", "capsule_text": capsule_text("a")})),
            "name",
        ),
        (
            "POST",
            "/capsules".into(),
            Some(json!({"workspace": " \t ", "name": "a", "capsule_text": capsule_text("a")})),
            "workspace",
        ),
        (
            "POST",
            "/capsules".into(),
            Some(json!({"name": long, "capsule_text": capsule_text("a")})),
            "name",
        ),
        (
            "POST",
            "/capsules".into(),
            Some(json!({"name": "a", "tags": tags, "capsule_text": capsule_text("a")})),
            "tags[1]",
        ),
        ("GET", "/capsules?limit=-1".into(), None, "limit"),
        (
            "GET",
            "/capsules/inventory?offset=-3".into(),
            None,
            "offset",
        ),
    ];
    for (method, path, body, field) in cases {
        let (s, b) = d.call(method, &path, body).await;
        let e = expect_error(s, &b, "INVALID_REQUEST", 400);
        assert_eq!(e["details"]["field"], field, "{method} {path}: {b}");
        assert!(e["message"].as_str().unwrap().contains(field), "{b}");
    }
    // A negative limit's message says what a limit may be, clamping included.
    let (_, b) = d.call("GET", "/capsules?limit=-1", None).await;
    let message = b["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("1 to 100") && message.contains("means 100"),
        "{b}"
    );
}

#[tokio::test]
async fn typed_client_store_and_errors() {
    let d = TestDaemon::start().await;
    let req = StoreRequest {
        capsule_text: capsule_text("typed"),
        workspace: Some("Typed".into()),
        name: Some("one".into()),
        ..Default::default()
    };
    let h = d.client.capsules().store(&req).await.unwrap();
    assert!(is_ulid(&h.id));
    assert_eq!(h.fetch_key.moss_capsule.as_deref(), Some("one"));
    let err = d.client.capsules().store(&req).await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NameAlreadyExists));
    let replaced = d
        .client
        .capsules()
        .store(&StoreRequest {
            mode: Some(StoreMode::Replace),
            ..req.clone()
        })
        .await
        .unwrap();
    assert_eq!(replaced.id, h.id);
    let c = d
        .client
        .capsules()
        .fetch(&FetchRequest {
            workspace: Some("typed".into()),
            name: Some("ONE".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(c.id, h.id);
    assert_eq!(
        c.capsule_text.as_deref(),
        Some(capsule_text("typed").as_str())
    );
}

// ---------------------------------------------------------------------------------------------
// size and lint

#[tokio::test]
async fn too_large_is_413_with_max_and_actual_chars() {
    let d = TestDaemon::start_with_config(Some(json!({"capsule_max_chars": 200}))).await;
    let base = capsule_text("x");
    let n = base.chars().count();
    assert!(n < 200);
    // Exactly at the limit (counted in characters, not bytes) is fine.
    let at_limit = format!("{base}{}", "é".repeat(200 - n));
    assert_eq!(at_limit.chars().count(), 200);
    let r = store(&d, json!({"name": "fits", "capsule_text": at_limit})).await;
    let (_, c) = d
        .call(
            "GET",
            &format!("/capsules/{}", r["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(c["capsule_chars"], 200);

    let over = format!("{base}{}", "y".repeat(201 - n));
    let (s, b) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"name": "big", "capsule_text": over})),
        )
        .await;
    let e = expect_error(s, &b, "CAPSULE_TOO_LARGE", 413);
    assert_eq!(e["details"]["max_chars"], 200, "{b}");
    assert_eq!(e["details"]["actual_chars"], 201, "{b}");

    // Size is checked before the sections: a big thin capsule is too large, not too thin.
    let (s, b) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"capsule_text": "z".repeat(500)})),
        )
        .await;
    let e = expect_error(s, &b, "CAPSULE_TOO_LARGE", 413);
    assert_eq!(e["details"]["actual_chars"], 500);
    // allow_thin does not lift the size limit.
    let (s, b) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"capsule_text": "z".repeat(500), "allow_thin": true})),
        )
        .await;
    expect_error(s, &b, "CAPSULE_TOO_LARGE", 413);

    // Update is size-checked too, and a failed update changes nothing.
    let (s, b) = d
        .call(
            "PUT",
            "/capsules/by-name?name=fits",
            Some(json!({"capsule_text": "w".repeat(300), "allow_thin": true})),
        )
        .await;
    let e = expect_error(s, &b, "CAPSULE_TOO_LARGE", 413);
    assert_eq!(e["details"]["actual_chars"], 300);
    let (_, c) = d.call("GET", "/capsules/by-name?name=fits", None).await;
    assert_eq!(c["capsule_chars"], 200);
    let (_, page) = d.call("GET", "/capsules", None).await;
    assert_eq!(
        page["pagination"]["total"], 1,
        "rejected stores stored nothing"
    );
}

#[tokio::test]
async fn too_thin_is_422_naming_the_missing_sections() {
    let d = TestDaemon::start().await;
    let thin = "## Objective\nx\n## Status\ny\n## Next steps\nz\n## Questions\nq\n";
    let (s, b) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"name": "thin", "capsule_text": thin})),
        )
        .await;
    let e = expect_error(s, &b, "CAPSULE_TOO_THIN", 422);
    assert_eq!(
        e["details"]["missing"],
        json!(["Decisions", "Key locations"]),
        "{b}"
    );

    let (s, b) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"capsule_text": "just some notes"})),
        )
        .await;
    let e = expect_error(s, &b, "CAPSULE_TOO_THIN", 422);
    assert_eq!(
        e["details"]["missing"],
        json!([
            "Objective",
            "Current status",
            "Decisions",
            "Next actions",
            "Key locations",
            "Open questions"
        ])
    );
    let (s, _) = d.call("GET", "/capsules/by-name?name=thin", None).await;
    assert_eq!(s, 404, "a rejected capsule is not stored");

    // allow_thin is the escape hatch, on store and on update.
    let r = store(
        &d,
        json!({"name": "thin", "capsule_text": thin, "allow_thin": true}),
    )
    .await;
    let (s, b) = d
        .call(
            "PUT",
            "/capsules/by-name?name=thin",
            Some(json!({"capsule_text": "still thin"})),
        )
        .await;
    let e = expect_error(s, &b, "CAPSULE_TOO_THIN", 422);
    assert_eq!(e["details"]["missing"].as_array().unwrap().len(), 6);
    let (s, b) = d
        .call(
            "PUT",
            "/capsules/by-name?name=thin",
            Some(json!({"capsule_text": "still thin", "allow_thin": true})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["id"], r["id"]);
    // allow_thin:false is the default behaviour.
    let (s, b) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"capsule_text": thin, "allow_thin": false})),
        )
        .await;
    expect_error(s, &b, "CAPSULE_TOO_THIN", 422);
}

/// Stores `text` and returns the sections it is said to miss (empty when stored).
async fn missing(d: &TestDaemon, text: &str) -> Vec<String> {
    let (s, b) = d
        .call("POST", "/capsules", Some(json!({"capsule_text": text})))
        .await;
    match s {
        200 => Vec::new(),
        422 => b["error"]["details"]["missing"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect(),
        _ => panic!("unexpected {s}: {b}"),
    }
}

#[tokio::test]
async fn lint_accepts_markdown_colon_and_json_with_synonyms() {
    let d = TestDaemon::start().await;
    let accepted = [
        // Markdown headers, any level, any case, synonyms.
        "# OBJECTIVE\na\n## current STATUS\nb\n### Decisions / constraints\nc\n\
         ## Next Actions\nd\n## Key locations\ne\n###### open questions / risks\nf\n",
        "## Goal\na\n## State\nb\n## Constraints\nc\n## Next steps\nd\n## Files\ne\n## Risks\nf\n",
        "## Purpose\na\n## Where we are\nb\n## Choices\nc\n## Action items\nd\n## Paths\ne\n\
         ## Unknowns\nf\n",
        "## Objective\na\n## Status\nb\n## Decisions/constraints\nc\n## TODO\nd\n\
         ## References\ne\n## Open questions/risks\nf\n",
        "## Objective\na\n## Status\nb\n## Decisions\nc\n## Tasks\nd\n## Locations\ne\n\
         ## Questions\nf\n",
        // Colon lines.
        "Objective: ship it\nCurrent status: half\nDecisions: none\nNext actions: more\n\
         Key locations: src/\nOpen questions: none\n",
        "goal: a\nwhere we are: b\nCHOICES: c\ntodo: d\nreferences: e\nunknowns: f\n",
        // Bold and decorated labels, as agents often write them.
        "**Objective:** a\n**Current status:** b\n**Decisions/Constraints:** c\n\
         - Next steps: d\n__Key locations__: e\n## Open questions (and risks)\nf\n",
        "## Objective:\na\n## Status ##\nb\n## Decisions\nc\n## Next actions\nd\n\
         ## Key_locations\ne\n## open-questions\nf\n",
        // JSON keys.
        r#"{"objective": "a", "current_status": "b", "decisions": ["c"],
            "next_actions": ["d"], "key_locations": ["e"], "open_questions": []}"#,
        r#"{"Goal": 1, "Status": 2, "Constraints": 3, "Next steps": 4, "Files": 5,
            "Risks": 6}"#,
    ];
    for text in accepted {
        assert_eq!(missing(&d, text).await, Vec::<String>::new(), "{text}");
    }
    // Formats can be mixed in one capsule.
    let mixed = "## Objective\na\nStatus: b\n## Decisions\nc\nTODO: d\n## Files\ne\nRisks: f\n";
    assert!(missing(&d, mixed).await.is_empty());

    // JSON that lacks keys names them; a JSON value mentioning a section does not count.
    let json_thin = r#"{"objective": "a", "status": "Decisions: next actions: files: risks:"}"#;
    assert_eq!(
        missing(&d, json_thin).await,
        [
            "Decisions",
            "Next actions",
            "Key locations",
            "Open questions"
        ]
    );
}

#[tokio::test]
async fn lint_ignores_headers_inside_fenced_code_blocks() {
    let d = TestDaemon::start().await;
    let text = "## Objective\na\n## Current status\nb\n## Decisions\nc\n## Next actions\nd\n\
                ```markdown\n## Key locations\nKey locations: src/\n```\n\
                ~~~\n## Open questions\nOpen questions: none\n~~~\n";
    assert_eq!(missing(&d, text).await, ["Key locations", "Open questions"]);
    // After the fence closes, headers count again.
    let text = "## Objective\na\n```\n## Current status\n```\n## Current status\nb\n\
                ## Decisions\nc\n## Next actions\nd\n## Key locations\ne\n## Open questions\nf\n";
    assert!(missing(&d, text).await.is_empty());
    // A section word inside prose is not a section.
    let prose = "## Objective\nThe objective and the status and the decisions and next actions, \
                 key locations, open questions are all here in one line.\n";
    assert_eq!(missing(&d, prose).await.len(), 5);
}

// ---------------------------------------------------------------------------------------------
// normalization, counts

#[tokio::test]
async fn workspace_and_name_are_normalized_for_lookup_and_kept_raw_for_display() {
    let d = TestDaemon::start().await;
    let r = store(
        &d,
        json!({"workspace": "  My   Project ", "name": "Auth\tFlow", "capsule_text": capsule_text("n")}),
    )
    .await;
    let id = r["id"].as_str().unwrap();
    let (s, c) = d
        .call(
            "GET",
            "/capsules/by-name?workspace=my%20project&name=AUTH%20%20FLOW",
            None,
        )
        .await;
    assert_eq!(s, 200, "{c}");
    assert_eq!(c["id"], id);
    assert_eq!(c["workspace_norm"], "my project");
    assert_eq!(c["name_norm"], "auth flow");
    assert_eq!(
        c["workspace"], "  My   Project ",
        "display uses the raw form"
    );
    assert_eq!(c["name"], "Auth\tFlow");
    for (ws, name) in [("StartupA", "LOUD_NAME"), ("startupa", "loud_name")] {
        let (s, b) = d
            .call(
                "POST",
                "/capsules",
                Some(json!({"workspace": ws, "name": name, "capsule_text": capsule_text("l")})),
            )
            .await;
        if ws == "StartupA" {
            assert_eq!(s, 200, "{b}");
            let (_, c) = d
                .call(
                    "GET",
                    &format!("/capsules/{}", b["id"].as_str().unwrap()),
                    None,
                )
                .await;
            assert_eq!(c["workspace_norm"], "startupa");
            assert_eq!(c["name_norm"], "loud_name");
        } else {
            expect_error(s, &b, "NAME_ALREADY_EXISTS", 409);
        }
    }
    // Normalized lookups work for every operation that addresses by name.
    let (s, b) = d
        .call(
            "PUT",
            "/capsules/by-name?workspace=MY%20PROJECT&name=auth%20flow",
            Some(json!({"title": "T"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["id"], id);
    let (_, page) = d
        .call("GET", "/capsules?workspace=my%20project", None)
        .await;
    assert_eq!(ids(&page), vec![id.to_string()]);
    let (s, b) = d
        .call(
            "DELETE",
            "/capsules/by-name?workspace=%20my%20PROJECT&name=AUTH%20FLOW",
            None,
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["id"], id);

    // A whitespace-only workspace or name is invalid, not silently "default".
    let (s, b) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"workspace": "   ", "capsule_text": capsule_text("w")})),
        )
        .await;
    expect_error(s, &b, "INVALID_REQUEST", 400);
}

#[tokio::test]
async fn chars_and_tokens_estimate_are_computed() {
    let d = TestDaemon::start().await;
    let cases = [
        ("one two three four five six seven", 7),
        ("a b c d e f g h i j", 10),
        ("  spaced\n\nout\twords  ", 3),
        ("", 0),
    ];
    for (text, words) in cases {
        let r = store(&d, json!({"capsule_text": text, "allow_thin": true})).await;
        let (_, c) = d
            .call(
                "GET",
                &format!("/capsules/{}", r["id"].as_str().unwrap()),
                None,
            )
            .await;
        let expected = (words as f64 * 1.3).ceil() as i64;
        assert_eq!(c["tokens_estimate"], expected, "{text:?}");
        assert_eq!(c["capsule_chars"], text.chars().count(), "{text:?}");
    }
    // Characters, not bytes.
    let r = store(&d, json!({"capsule_text": "ééé ü", "allow_thin": true})).await;
    let (_, c) = d
        .call(
            "GET",
            &format!("/capsules/{}", r["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(c["capsule_chars"], 5);
    assert_eq!(c["tokens_estimate"], 3);
    // The full lint-passing capsule.
    let text = capsule_text("marker");
    let r = store(&d, json!({"capsule_text": text})).await;
    let (_, c) = d
        .call(
            "GET",
            &format!("/capsules/{}", r["id"].as_str().unwrap()),
            None,
        )
        .await;
    let words = text.split_whitespace().count() as f64;
    assert_eq!(c["tokens_estimate"], (words * 1.3).ceil() as i64);
}
