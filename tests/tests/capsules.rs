//! The eight core capsule operations over REST (seeds 000, 001; routes from seed 003):
//! store, fetch, fetch_many, update, delete, latest, list and inventory, rule by rule.

use moss_client::{
    CapsuleRef, ErrorCode, FetchManyRequest, FetchRequest, InventoryRequest, ListRequest,
    StoreMode, StoreRequest, UpdateRequest,
};
use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

/// `POST /capsules`, asserting success.
async fn store(d: &TestDaemon, body: Value) -> Value {
    let (status, resp) = d.call("POST", "/capsules", Some(body.clone())).await;
    assert_eq!(status, 200, "store {body}: {resp}");
    resp
}

/// A named capsule in `workspace` with marker text; returns its id.
async fn store_named(d: &TestDaemon, workspace: &str, name: &str) -> String {
    let r = store(
        d,
        json!({"workspace": workspace, "name": name, "capsule_text": capsule_text(name)}),
    )
    .await;
    r["id"].as_str().unwrap().to_string()
}

/// Asserts `(status, body)` is the error envelope of `code`; returns `error`.
fn expect_error(status: u16, body: &Value, code: &str, http: u16) -> Value {
    assert_eq!(status, http, "expected {code}: {body}");
    let e = &body["error"];
    assert_eq!(e["code"], code, "{body}");
    assert_eq!(e["status"], http, "{body}");
    assert!(
        e["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
    e.clone()
}

fn is_ulid(id: &str) -> bool {
    id.len() == 26
        && id
            .chars()
            .all(|c| c.is_ascii_digit() || (c.is_ascii_uppercase() && !"ILOU".contains(c)))
}

/// The millisecond timestamp in a ULID's first 10 characters (Crockford base32).
fn ulid_millis(id: &str) -> u64 {
    const ALPHABET: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    id[..10]
        .chars()
        .fold(0, |acc, c| acc * 32 + ALPHABET.find(c).unwrap() as u64)
}

fn ids(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect()
}

fn assert_no_text(page: &Value) {
    for item in page["items"].as_array().unwrap() {
        assert!(
            item.get("capsule_text").is_none(),
            "summary has text: {item}"
        );
    }
}

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
    let h = d.client.store(&req).await.unwrap();
    assert!(is_ulid(&h.id));
    assert_eq!(h.fetch_key.moss_capsule.as_deref(), Some("one"));
    let err = d.client.store(&req).await.unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NameAlreadyExists));
    let replaced = d
        .client
        .store(&StoreRequest {
            mode: Some(StoreMode::Replace),
            ..req.clone()
        })
        .await
        .unwrap();
    assert_eq!(replaced.id, h.id);
    let c = d
        .client
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
            "include_deleted:true to read it",
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

// ---------------------------------------------------------------------------------------------
// latest

#[tokio::test]
async fn latest_is_a_summary_unless_text_is_asked_for() {
    let d = TestDaemon::start().await;
    let (s, l) = d
        .call("GET", "/capsules/latest?workspace=empty", None)
        .await;
    assert_eq!(s, 200, "{l}");
    assert_eq!(l, json!({"item": null}));
    let (_, l) = d.call("GET", "/capsules/latest", None).await;
    assert_eq!(l, json!({"item": null}), "default workspace is empty too");

    let id = store_named(&d, "StartupA", "auth").await;
    let (_, l) = d
        .call("GET", "/capsules/latest?workspace=startupa", None)
        .await;
    let item = &l["item"];
    assert_eq!(item["id"], id.as_str());
    assert!(
        item.get("capsule_text").is_none(),
        "summary by default: {l}"
    );
    for key in [
        "workspace",
        "workspace_norm",
        "name",
        "name_norm",
        "title",
        "created_at",
        "updated_at",
        "capsule_chars",
        "tokens_estimate",
        "fetch_key",
    ] {
        assert!(item.get(key).is_some(), "latest lacks {key}: {l}");
    }
    let (_, l) = d
        .call(
            "GET",
            "/capsules/latest?workspace=startupa&include_text=true",
            None,
        )
        .await;
    assert_eq!(l["item"]["capsule_text"], capsule_text("auth"));
    let (_, l) = d
        .call(
            "GET",
            "/capsules/latest?workspace=startupa&include_text=false",
            None,
        )
        .await;
    assert!(l["item"].get("capsule_text").is_none());
    // Workspace scoped.
    let (_, l) = d
        .call("GET", "/capsules/latest?workspace=other", None)
        .await;
    assert_eq!(l, json!({"item": null}));
    // Only deleted capsules: null, unless include_deleted.
    d.call("DELETE", &format!("/capsules/{id}"), None).await;
    let (_, l) = d
        .call("GET", "/capsules/latest?workspace=startupa", None)
        .await;
    assert_eq!(l, json!({"item": null}));
    let (_, l) = d
        .call(
            "GET",
            "/capsules/latest?workspace=startupa&include_deleted=true",
            None,
        )
        .await;
    assert_eq!(l["item"]["id"], id.as_str());
}

#[tokio::test]
async fn latest_breaks_same_second_ties_by_write_order() {
    let d = TestDaemon::start().await;
    // Many writes land in the same second; the later write must always win.
    let mut last = String::new();
    for i in 0..30 {
        last = store_named(&d, "w", &format!("c{i}")).await;
        let (_, l) = d.call("GET", "/capsules/latest?workspace=w", None).await;
        assert_eq!(l["item"]["id"], last.as_str(), "after store {i}");
    }
    // An update makes an older capsule the latest again.
    let (_, first) = d
        .call("GET", "/capsules/by-name?workspace=w&name=c0", None)
        .await;
    d.call(
        "PUT",
        "/capsules/by-name?workspace=w&name=c0",
        Some(json!({"title": "t"})),
    )
    .await;
    let (_, l) = d.call("GET", "/capsules/latest?workspace=w", None).await;
    assert_eq!(l["item"]["id"], first["id"]);
    // And so does a replace, then a delete (with include_deleted).
    store(
        &d,
        json!({"workspace": "w", "name": "c5", "mode": "replace",
               "capsule_text": capsule_text("again")}),
    )
    .await;
    let (_, l) = d.call("GET", "/capsules/latest?workspace=w", None).await;
    assert_eq!(l["item"]["name"], "c5");
    d.call("DELETE", &format!("/capsules/{last}"), None).await;
    let (_, l) = d
        .call(
            "GET",
            "/capsules/latest?workspace=w&include_deleted=true",
            None,
        )
        .await;
    assert_eq!(l["item"]["id"], last.as_str());
    let (_, l) = d.call("GET", "/capsules/latest?workspace=w", None).await;
    assert_eq!(l["item"]["name"], "c5");
    // list agrees with latest on the order.
    let (_, page) = d.call("GET", "/capsules?workspace=w&limit=3", None).await;
    let names: Vec<_> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["c5", "c0", "c28"]);
}

#[tokio::test]
async fn latest_filters_by_run_phase_and_role() {
    let d = TestDaemon::start().await;
    let mk = |name: &str, run: &str, phase: &str, role: &str| {
        json!({"workspace": "orch", "name": name, "run_id": run, "phase": phase, "role": role,
               "capsule_text": capsule_text(name)})
    };
    store(&d, mk("d1", "run-1", "design", "architect")).await;
    store(&d, mk("i1", "run-1", "impl", "coder")).await;
    store(&d, mk("d2", "run-2", "design", "architect")).await;
    store(&d, mk("r1", "run-1", "review", "reviewer")).await;
    let latest = |q: &'static str| {
        let d = &d;
        async move {
            let (s, l) = d
                .call("GET", &format!("/capsules/latest?workspace=orch{q}"), None)
                .await;
            assert_eq!(s, 200, "{l}");
            l["item"]["name"].as_str().map(str::to_string)
        }
    };
    assert_eq!(latest("").await.as_deref(), Some("r1"));
    assert_eq!(latest("&run_id=run-1").await.as_deref(), Some("r1"));
    assert_eq!(latest("&phase=design").await.as_deref(), Some("d2"));
    assert_eq!(
        latest("&run_id=run-1&phase=design").await.as_deref(),
        Some("d1")
    );
    assert_eq!(latest("&role=coder").await.as_deref(), Some("i1"));
    assert_eq!(
        latest("&run_id=run-2&role=coder").await.as_deref(),
        None,
        "filters are AND-ed"
    );
    assert_eq!(latest("&run_id=run-3").await, None);
    let (_, l) = d
        .call(
            "GET",
            "/capsules/latest?workspace=orch&run_id=run-1&phase=impl&include_text=true",
            None,
        )
        .await;
    assert_eq!(l["item"]["capsule_text"], capsule_text("i1"));
    assert_eq!(l["item"]["run_id"], "run-1");
    assert_eq!(l["item"]["phase"], "impl");
    assert_eq!(l["item"]["role"], "coder");
}

// ---------------------------------------------------------------------------------------------
// list

#[tokio::test]
async fn list_pages_newest_first_without_text() {
    let d = TestDaemon::start().await;
    let mut stored = Vec::new();
    for i in 0..25 {
        stored.push(store_named(&d, "Proj", &format!("c{i:02}")).await);
    }
    store_named(&d, "elsewhere", "x").await;
    let newest_first: Vec<String> = stored.iter().rev().cloned().collect();

    let (s, page) = d.call("GET", "/capsules?workspace=proj", None).await;
    assert_eq!(s, 200, "{page}");
    assert_eq!(page["sort"], "updated_at_desc");
    assert_eq!(
        page["pagination"],
        json!({"limit": 20, "offset": 0, "has_more": true, "total": 25})
    );
    assert_eq!(ids(&page), newest_first[..20]);
    assert_no_text(&page);
    let first = &page["items"][0];
    for key in [
        "id",
        "workspace",
        "workspace_norm",
        "name",
        "name_norm",
        "title",
        "created_at",
        "updated_at",
        "capsule_chars",
        "tokens_estimate",
        "fetch_key",
    ] {
        assert!(first.get(key).is_some(), "summary lacks {key}: {first}");
    }

    let (_, page) = d
        .call("GET", "/capsules?workspace=proj&limit=20&offset=20", None)
        .await;
    assert_eq!(
        page["pagination"],
        json!({"limit": 20, "offset": 20, "has_more": false, "total": 25})
    );
    assert_eq!(ids(&page), newest_first[20..]);

    let (_, page) = d
        .call("GET", "/capsules?workspace=proj&limit=5&offset=5", None)
        .await;
    assert_eq!(ids(&page), newest_first[5..10]);
    assert_eq!(page["pagination"]["has_more"], true);
    assert_eq!(page["pagination"]["total"], 25);

    let (_, page) = d
        .call("GET", "/capsules?workspace=proj&offset=100", None)
        .await;
    assert_eq!(ids(&page), Vec::<String>::new());
    assert_eq!(page["pagination"]["total"], 25);
    assert_eq!(page["pagination"]["has_more"], false);

    // Over the max is clamped to 100, not an error.
    let (s, page) = d
        .call("GET", "/capsules?workspace=proj&limit=1000", None)
        .await;
    assert_eq!(s, 200, "{page}");
    assert_eq!(page["pagination"]["limit"], 100);
    assert_eq!(page["items"].as_array().unwrap().len(), 25);
    // Negative paging is refused.
    let (s, b) = d
        .call("GET", "/capsules?workspace=proj&limit=-1", None)
        .await;
    expect_error(s, &b, "INVALID_REQUEST", 400);
    let (s, b) = d
        .call("GET", "/capsules?workspace=proj&offset=-1", None)
        .await;
    expect_error(s, &b, "INVALID_REQUEST", 400);
    let (s, b) = d
        .call("GET", "/capsules?workspace=proj&limit=lots", None)
        .await;
    expect_error(s, &b, "INVALID_REQUEST", 400);

    // Default workspace when omitted.
    store_named(&d, "default", "d").await;
    let page = d.client.list(&ListRequest::default()).await.unwrap();
    assert_eq!(page.items.len(), 1);
    assert_eq!(page.items[0].workspace, "default");
    assert!(page.items[0].capsule_text.is_none());
}

#[tokio::test]
async fn list_clamps_at_one_hundred() {
    let d = TestDaemon::start().await;
    let mut handles = Vec::new();
    for i in 0..105 {
        let c = d.client.clone();
        handles.push(tokio::spawn(async move {
            c.store(&StoreRequest {
                capsule_text: capsule_text("n"),
                workspace: Some("big".into()),
                name: Some(format!("n{i}")),
                ..Default::default()
            })
            .await
            .unwrap()
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let page = d
        .client
        .list(&ListRequest {
            workspace: Some("big".into()),
            limit: Some(500),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.pagination.limit, 100);
    assert_eq!(page.items.len(), 100);
    assert_eq!(page.pagination.total, 105);
    assert!(page.pagination.has_more);
    // Newest first.
    assert!(
        page.items
            .windows(2)
            .all(|w| w[0].updated_at >= w[1].updated_at)
    );

    // Inventory defaults to 100 and clamps at 500.
    let inv = d
        .client
        .inventory(&InventoryRequest::default())
        .await
        .unwrap();
    assert_eq!(inv.pagination.limit, 100);
    assert_eq!(inv.items.len(), 100);
    assert!(inv.pagination.has_more);
    assert_eq!(inv.pagination.total, 105);
    let inv = d
        .client
        .inventory(&InventoryRequest {
            limit: Some(10_000),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(inv.pagination.limit, 500);
    assert_eq!(inv.items.len(), 105);
    assert!(!inv.pagination.has_more);
    assert!(inv.items.iter().all(|c| c.capsule_text.is_none()));
}

#[tokio::test]
async fn list_filters_by_orchestration_fields_and_deletion() {
    let d = TestDaemon::start().await;
    for (name, run, phase, role) in [
        ("a", "run-1", "design", "architect"),
        ("b", "run-1", "impl", "coder"),
        ("c", "run-2", "impl", "coder"),
        ("d", "run-2", "review", "reviewer"),
    ] {
        store(
            &d,
            json!({"workspace": "o", "name": name, "run_id": run, "phase": phase, "role": role,
                   "capsule_text": capsule_text(name)}),
        )
        .await;
    }
    store_named(&d, "o", "plain").await;
    let names = |page: &Value| -> Vec<String> {
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (_, p) = d
        .call("GET", "/capsules?workspace=o&run_id=run-1", None)
        .await;
    assert_eq!(names(&p), ["b", "a"]);
    assert_eq!(p["pagination"]["total"], 2);
    let (_, p) = d
        .call("GET", "/capsules?workspace=o&phase=impl", None)
        .await;
    assert_eq!(names(&p), ["c", "b"]);
    let (_, p) = d
        .call("GET", "/capsules?workspace=o&phase=impl&run_id=run-2", None)
        .await;
    assert_eq!(names(&p), ["c"]);
    let (_, p) = d
        .call("GET", "/capsules?workspace=o&role=reviewer", None)
        .await;
    assert_eq!(names(&p), ["d"]);
    assert_eq!(p["items"][0]["run_id"], "run-2");
    let (_, p) = d
        .call("GET", "/capsules?workspace=o&role=nobody", None)
        .await;
    assert_eq!(p["pagination"]["total"], 0);
    let (_, p) = d.call("GET", "/capsules?workspace=o", None).await;
    assert_eq!(p["pagination"]["total"], 5);
    assert_no_text(&p);

    d.call("DELETE", "/capsules/by-name?workspace=o&name=c", None)
        .await;
    let (_, p) = d
        .call("GET", "/capsules?workspace=o&phase=impl", None)
        .await;
    assert_eq!(names(&p), ["b"]);
    let (_, p) = d
        .call(
            "GET",
            "/capsules?workspace=o&phase=impl&include_deleted=true",
            None,
        )
        .await;
    assert_eq!(names(&p), ["c", "b"], "the deletion is the newest change");
    assert_no_text(&p);
}

// ---------------------------------------------------------------------------------------------
// inventory

#[tokio::test]
async fn inventory_spans_workspaces_with_filters_and_no_text() {
    let d = TestDaemon::start().await;
    let mk = |ws: &str, name: Option<&str>, tags: Value| {
        let mut v = json!({"workspace": ws, "tags": tags, "capsule_text": capsule_text("i")});
        if let Some(n) = name {
            v["name"] = json!(n);
        }
        v
    };
    let auth = store(
        &d,
        mk("StartupA", Some("auth"), json!(["auth", "sessions"])),
    )
    .await;
    let audit = store(&d, mk("StartupA", Some("Audit-log"), json!(["ops"]))).await;
    let db = store(&d, mk("StartupB", Some("db"), json!(["sql", "auth"]))).await;
    let unnamed = store(&d, mk("StartupB", None, json!([]))).await;
    let id = |v: &Value| v["id"].as_str().unwrap().to_string();

    let (s, inv) = d.call("GET", "/capsules/inventory", None).await;
    assert_eq!(s, 200, "{inv}");
    assert_eq!(inv["sort"], "updated_at_desc");
    assert_eq!(
        inv["pagination"],
        json!({"limit": 100, "offset": 0, "has_more": false, "total": 4})
    );
    assert_eq!(ids(&inv), [id(&unnamed), id(&db), id(&audit), id(&auth)]);
    assert_no_text(&inv);
    assert_eq!(
        inv["items"][0]["fetch_key"],
        json!({"moss_id": id(&unnamed)})
    );

    let q = |query: &'static str| {
        let d = &d;
        async move {
            let (s, inv) = d
                .call("GET", &format!("/capsules/inventory?{query}"), None)
                .await;
            assert_eq!(s, 200, "{query}: {inv}");
            assert_no_text(&inv);
            ids(&inv)
        }
    };
    assert_eq!(q("workspace=startupa").await, [id(&audit), id(&auth)]);
    assert_eq!(q("workspace=%20STARTUPB%20").await, [id(&unnamed), id(&db)]);
    assert_eq!(q("tag=auth").await, [id(&db), id(&auth)]);
    assert_eq!(q("tag=ops").await, [id(&audit)]);
    assert_eq!(q("tag=au").await, Vec::<String>::new(), "tags match whole");
    assert_eq!(q("name_prefix=au").await, [id(&audit), id(&auth)]);
    assert_eq!(q("name_prefix=AUD").await, [id(&audit)]);
    assert_eq!(q("name_prefix=x").await, Vec::<String>::new());
    assert_eq!(q("workspace=startupb&tag=auth").await, [id(&db)]);
    assert_eq!(q("workspace=startupa&tag=sql").await, Vec::<String>::new());
    assert_eq!(q("limit=2").await, [id(&unnamed), id(&db)]);
    assert_eq!(q("limit=2&offset=2").await, [id(&audit), id(&auth)]);
    let (_, inv) = d.call("GET", "/capsules/inventory?limit=2", None).await;
    assert_eq!(
        inv["pagination"],
        json!({"limit": 2, "offset": 0, "has_more": true, "total": 4})
    );

    // Orchestration filters and deletion.
    store(
        &d,
        json!({"workspace": "C", "name": "o", "run_id": "r", "phase": "p", "role": "x",
               "capsule_text": capsule_text("o")}),
    )
    .await;
    assert_eq!(q("run_id=r").await.len(), 1);
    assert_eq!(q("phase=p&role=x").await.len(), 1);
    assert_eq!(q("role=y").await.len(), 0);
    d.call("DELETE", &format!("/capsules/{}", id(&auth)), None)
        .await;
    assert_eq!(q("tag=auth").await, [id(&db)]);
    assert_eq!(
        q("tag=auth&include_deleted=true").await,
        [id(&auth), id(&db)]
    );
    let (s, b) = d.call("GET", "/capsules/inventory?tags=auth", None).await;
    expect_error(s, &b, "INVALID_REQUEST", 400);
}
