//! `capsule_compose` over REST and MCP: the exact bundle formats, the `sections` filter,
//! display names, all-or-nothing, size limit, `store_as`.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use crate::util::{expect_error, message, store};

/// `POST /capsules/compose`.
async fn compose(d: &TestDaemon, body: Value) -> (u16, Value) {
    d.call("POST", "/capsules/compose", Some(body)).await
}

/// A compose that must succeed.
async fn compose_ok(d: &TestDaemon, body: Value) -> Value {
    let (status, resp) = compose(d, body.clone()).await;
    assert_eq!(status, 200, "compose {body}: {resp}");
    resp
}

/// A lint-passing text without a trailing newline, so the bundle format can be spelled exactly.
fn text(marker: &str) -> String {
    capsule_text(marker).trim_end().to_string()
}

/// `GET /capsules/by-name`, asserting success.
async fn fetch_by_name(d: &TestDaemon, workspace: &str, name: &str) -> Value {
    let (s, c) = d
        .call(
            "GET",
            &format!("/capsules/by-name?workspace={workspace}&name={name}"),
            None,
        )
        .await;
    assert_eq!(s, 200, "{workspace}/{name}: {c}");
    c
}

/// Three capsules: titled, named only (title defaults to the name), unnamed and untitled.
/// Returns their ids.
async fn three(d: &TestDaemon) -> (String, String, String) {
    let a = store(
        d,
        json!({"workspace": "proj", "name": "a", "title": "Alpha Title",
               "capsule_text": text("first, café")}),
    )
    .await;
    let b = store(
        d,
        json!({"workspace": "proj", "name": "b", "capsule_text": text("second")}),
    )
    .await;
    let c = store(d, json!({"capsule_text": text("third")})).await;
    (a, b, c)
}

// ---------------------------------------------------------------------------------------------
// markdown

#[tokio::test]
async fn markdown_bundle_is_exactly_headers_texts_and_rules_in_item_order() {
    // Markdown: `## <display_name>\n\n<text>\n\n---\n\n…`; display name is title > name > id.
    let d = TestDaemon::start().await;
    let (a, _b, c) = three(&d).await;
    let r = compose_ok(
        &d,
        json!({"items": [{"id": a}, {"workspace": "proj", "name": "b"}, {"id": c}]}),
    )
    .await;
    let expected = format!(
        "## Alpha Title\n\n{}\n\n---\n\n## b\n\n{}\n\n---\n\n## {c}\n\n{}",
        text("first, café"),
        text("second"),
        text("third")
    );
    assert_eq!(r["bundle_text"], expected.as_str(), "{r}");
    assert_eq!(r["parts_count"], 3);
    assert_eq!(
        r["bundle_chars"],
        expected.chars().count(),
        "characters, not bytes"
    );
    assert!(r.get("parts").is_none(), "{r}");
    assert!(
        r.get("stored").is_none(),
        "nothing stored without store_as: {r}"
    );

    // The order of the items is the order of the bundle.
    let r = compose_ok(
        &d,
        json!({"items": [{"id": c}, {"workspace": "PROJ", "name": " A "}], "format": "markdown"}),
    )
    .await;
    let expected = format!(
        "## {c}\n\n{}\n\n---\n\n## Alpha Title\n\n{}",
        text("third"),
        text("first, café")
    );
    assert_eq!(r["bundle_text"], expected.as_str(), "{r}");
    assert_eq!(r["parts_count"], 2);
}

#[tokio::test]
async fn a_single_item_bundle_has_no_rule() {
    let d = TestDaemon::start().await;
    let (_a, b, _c) = three(&d).await;
    let r = compose_ok(&d, json!({"items": [{"id": b}]})).await;
    assert_eq!(
        r["bundle_text"],
        format!("## b\n\n{}", text("second")).as_str()
    );
    assert_eq!(r["parts_count"], 1);
}

#[tokio::test]
async fn markdown_bundle_keeps_each_texts_trailing_newline() {
    // Each text is embedded exactly as stored, its trailing newline included, then the
    // `\n\n---\n\n` separator.
    let d = TestDaemon::start().await;
    let (one, two) = (capsule_text("one"), format!("{}\n", capsule_text("two")));
    assert!(one.ends_with("none\n") && two.ends_with("none\n\n"));
    store(&d, json!({"name": "one", "capsule_text": one})).await;
    store(&d, json!({"name": "two", "capsule_text": two})).await;
    let items = json!([{"name": "one"}, {"name": "two"}]);
    let r = compose_ok(&d, json!({"items": items})).await;
    let expected = format!("## one\n\n{one}\n\n---\n\n## two\n\n{two}");
    assert_eq!(r["bundle_text"], expected.as_str(), "{r}");
    assert_eq!(r["bundle_chars"], expected.chars().count());
    assert_eq!(r["parts_count"], 2);

    // The json parts hold the same exact texts.
    let r = compose_ok(&d, json!({"items": items, "format": "json"})).await;
    let doc: Value = serde_json::from_str(r["bundle_text"].as_str().unwrap()).unwrap();
    assert_eq!(doc["parts"][0]["text"], one.as_str());
    assert_eq!(doc["parts"][1]["text"], two.as_str());

    // With `sections`, each kept section is taken as written, its newline included.
    let r = compose_ok(
        &d,
        json!({"items": items, "sections": ["Open questions", "Decisions"]}),
    )
    .await;
    let kept = "## Open questions\nnone\n## Decisions\nnone yet\n";
    let expected = format!(
        "## one\n\n{kept}\n\n---\n\n## two\n\n## Open questions\nnone\n\n## Decisions\nnone yet\n"
    );
    assert_eq!(r["bundle_text"], expected.as_str(), "{r}");
    // Every section in order gives the text back unchanged.
    let all = [
        "Objective",
        "Current status",
        "Decisions",
        "Next actions",
        "Key locations",
        "Open questions",
    ];
    let r = compose_ok(&d, json!({"items": items, "sections": all})).await;
    assert_eq!(
        r["bundle_text"],
        format!("## one\n\n{one}\n\n---\n\n## two\n\n{two}").as_str()
    );
}

#[tokio::test]
async fn an_unnamed_titled_capsule_is_shown_by_its_title() {
    let d = TestDaemon::start().await;
    let id = store(
        &d,
        json!({"title": "Loose notes", "capsule_text": text("loose")}),
    )
    .await;
    let r = compose_ok(&d, json!({"items": [{"id": id}]})).await;
    assert!(
        r["bundle_text"]
            .as_str()
            .unwrap()
            .starts_with("## Loose notes\n\n"),
        "{r}"
    );
}

// ---------------------------------------------------------------------------------------------
// json

/// The `{"parts": […]}` document a json-format compose answers in `bundle_text`.
fn json_parts(r: &Value) -> Vec<Value> {
    let bundle = r["bundle_text"].as_str().expect("bundle_text");
    let doc: Value = serde_json::from_str(bundle).expect("bundle_text is a JSON document");
    assert_eq!(doc.as_object().unwrap().len(), 1, "only parts: {doc}");
    doc["parts"].as_array().expect("parts").clone()
}

#[tokio::test]
async fn json_format_gives_parts_with_display_names() {
    let d = TestDaemon::start().await;
    let (a, b, c) = three(&d).await;
    let r = compose_ok(
        &d,
        json!({"items": [{"id": b}, {"id": a}, {"id": c}], "format": "json"}),
    )
    .await;
    let parts = json_parts(&r);
    assert_eq!(
        parts[0],
        json!({"id": b, "workspace": "proj", "name": "b", "display_name": "b",
               "text": text("second"), "chars": text("second").chars().count()})
    );
    assert_eq!(
        parts[1],
        json!({"id": a, "workspace": "proj", "name": "a", "display_name": "Alpha Title",
               "text": text("first, café"), "chars": text("first, café").chars().count()})
    );
    assert_eq!(
        parts[2],
        json!({"id": c, "workspace": "default", "display_name": c,
               "text": text("third"), "chars": text("third").chars().count()}),
        "an unnamed capsule has no name and is displayed by its id"
    );
    assert_eq!(parts.len(), 3);
    assert_eq!(r["parts_count"], 3);
}

#[tokio::test]
async fn json_format_answers_bundle_text_not_parts_at_the_top_level() {
    // Both formats answer the same fields: bundle_text (for json, the document
    // `{"parts":[…]}` as text), bundle_chars (characters of bundle_text), parts_count.
    let d = TestDaemon::start().await;
    let (a, b, _c) = three(&d).await;
    let items = json!([{"id": a}, {"id": b}]);
    for format in ["markdown", "json"] {
        let r = compose_ok(&d, json!({"items": items, "format": format})).await;
        let mut keys: Vec<&str> = r.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        keys.sort();
        assert_eq!(
            keys,
            ["bundle_chars", "bundle_text", "parts_count"],
            "{format}: {r}"
        );
        let bundle = r["bundle_text"].as_str().unwrap();
        assert_eq!(r["bundle_chars"], bundle.chars().count(), "{format}: {r}");
        assert_eq!(r["parts_count"], 2);
    }
    let r = compose_ok(&d, json!({"items": items, "format": "json"})).await;
    let parts = json_parts(&r);
    assert_eq!(parts[0]["id"], a.as_str());
    assert_eq!(parts[1]["text"], text("second").as_str());

    // The same answer over MCP.
    let mut mcp = d.mcp().await;
    let m = mcp
        .call_tool("capsule_compose", json!({"items": items, "format": "json"}))
        .await;
    assert_eq!(m["isError"], false, "{m}");
    assert_eq!(m["structuredContent"], r);
}

#[tokio::test]
async fn the_size_limit_applies_to_the_json_bundle_text() {
    // The JSON document counts, not only the parts' texts: a part whose markdown bundle is
    // exactly at the limit is over it in json.
    let d = TestDaemon::start_with_config(Some(json!({"capsule_max_chars": 300}))).await;
    let id = store(
        &d,
        json!({"capsule_text": "é".repeat(269), "allow_thin": true}),
    )
    .await;
    let r = compose_ok(&d, json!({"items": [{"id": id}]})).await;
    assert_eq!(r["bundle_chars"], 300, "{r}");
    let (s, body) = compose(&d, json!({"items": [{"id": id}], "format": "json"})).await;
    let e = expect_error(s, &body, "COMPOSE_TOO_LARGE", 413);
    let doc = json!({"parts": [{"id": id, "workspace": "default", "display_name": id,
                                "text": "é".repeat(269), "chars": 269}]});
    assert_eq!(
        e["details"]["actual_chars"],
        doc.to_string().chars().count(),
        "{e}"
    );
}

// ---------------------------------------------------------------------------------------------
// all-or-nothing and request errors

#[tokio::test]
async fn a_missing_item_fails_the_whole_compose_and_is_named() {
    let d = TestDaemon::start().await;
    let (a, _b, _c) = three(&d).await;
    let (s, body) = compose(
        &d,
        json!({"items": [{"id": a}, {"workspace": "proj", "name": "nowhere"}]}),
    )
    .await;
    let e = expect_error(s, &body, "NOT_FOUND", 404);
    assert!(message(&e).contains("nowhere"), "{e}");
    assert!(body.get("bundle_text").is_none(), "{body}");

    let ghost = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    let (s, body) = compose(&d, json!({"items": [{"id": ghost}, {"id": a}]})).await;
    let e = expect_error(s, &body, "NOT_FOUND", 404);
    assert!(message(&e).contains(ghost), "{e}");

    // A soft-deleted capsule is missing too, and store_as stores nothing then.
    let (s, _) = d.call("DELETE", &format!("/capsules/{a}"), None).await;
    assert_eq!(s, 200);
    let (s, body) = compose(
        &d,
        json!({"items": [{"workspace": "proj", "name": "b"}, {"id": a}],
               "store_as": {"name": "bundle"}}),
    )
    .await;
    expect_error(s, &body, "NOT_FOUND", 404);
    let (s, _) = d.call("GET", "/capsules/by-name?name=bundle", None).await;
    assert_eq!(s, 404, "a failed compose stores nothing");
}

#[tokio::test]
async fn items_must_be_one_to_fifty_well_addressed_refs() {
    let d = TestDaemon::start().await;
    let (a, _b, _c) = three(&d).await;
    let (s, body) = compose(&d, json!({"items": []})).await;
    expect_error(s, &body, "INVALID_REQUEST", 400);
    let (s, body) = compose(&d, json!({})).await;
    let e = expect_error(s, &body, "INVALID_REQUEST", 400);
    assert!(message(&e).contains("items"), "{e}");

    let many: Vec<Value> = (0..51).map(|_| json!({"id": a})).collect();
    let (s, body) = compose(&d, json!({"items": many})).await;
    let e = expect_error(s, &body, "INVALID_REQUEST", 400);
    assert!(message(&e).contains("50"), "names the limit: {e}");

    // An id and a name together are ambiguous.
    let (s, body) = compose(
        &d,
        json!({"items": [{"id": a, "workspace": "proj", "name": "a"}]}),
    )
    .await;
    expect_error(s, &body, "AMBIGUOUS_ADDRESSING", 400);

    let (s, body) = compose(&d, json!({"items": [{"id": a}], "format": "html"})).await;
    expect_error(s, &body, "INVALID_REQUEST", 400);
}

// ---------------------------------------------------------------------------------------------
// size

#[tokio::test]
async fn a_bundle_over_the_capsule_limit_is_compose_too_large() {
    // COMPOSE_TOO_LARGE (413) when the composed bundle exceeds capsule_max_chars; each part
    // alone fits.
    let d = TestDaemon::start_with_config(Some(json!({"capsule_max_chars": 300}))).await;
    let body = format!("{}\n{}", text("x"), "y".repeat(150));
    assert!(body.chars().count() < 300);
    let ids = [
        store(&d, json!({"name": "p1", "capsule_text": body})).await,
        store(&d, json!({"name": "p2", "capsule_text": body})).await,
    ];
    let items: Vec<Value> = ids.iter().map(|id| json!({"id": id})).collect();
    let (s, resp) = compose(&d, json!({"items": items})).await;
    expect_error(s, &resp, "COMPOSE_TOO_LARGE", 413);
    let (s, resp) = compose(&d, json!({"items": items, "format": "json"})).await;
    expect_error(s, &resp, "COMPOSE_TOO_LARGE", 413);
    // One part alone fits.
    let r = compose_ok(&d, json!({"items": [items[0]]})).await;
    assert_eq!(r["parts_count"], 1);
}

#[tokio::test]
async fn a_bundle_exactly_at_the_limit_fits() {
    // Only a bundle that exceeds capsule_max_chars is too large.
    let d = TestDaemon::start_with_config(Some(json!({"capsule_max_chars": 300}))).await;
    // An unnamed capsule's part is "## <26-char id>\n\n" (31 characters) plus its text.
    let fits = store(
        &d,
        json!({"capsule_text": "é".repeat(269), "allow_thin": true}),
    )
    .await;
    let over = store(
        &d,
        json!({"capsule_text": "é".repeat(270), "allow_thin": true}),
    )
    .await;
    let r = compose_ok(&d, json!({"items": [{"id": fits}]})).await;
    assert_eq!(r["bundle_chars"], 300, "{r}");
    let (s, body) = compose(&d, json!({"items": [{"id": over}]})).await;
    let e = expect_error(s, &body, "COMPOSE_TOO_LARGE", 413);
    assert_eq!(e["details"]["max_chars"], 300, "{e}");
    assert_eq!(e["details"]["actual_chars"], 301, "{e}");
}

// ---------------------------------------------------------------------------------------------
// store_as

#[tokio::test]
async fn store_as_stores_the_bundle_as_a_capsule() {
    let d = TestDaemon::start().await;
    let (a, b, _c) = three(&d).await;
    let r = compose_ok(
        &d,
        json!({"items": [{"id": a}, {"id": b}],
               "store_as": {"name": "Handoff", "workspace": "Team", "title": "Team handoff",
                            "tags": ["bundle"], "run_id": "r9", "phase": "merge",
                            "role": "leader", "source": "moss-tests"}}),
    )
    .await;
    let stored = &r["stored"];
    let id = stored["id"].as_str().expect("stored.id");
    assert_ne!(id, a);
    assert_eq!(
        stored["fetch_key"],
        json!({"moss_capsule": "Handoff", "moss_workspace": "Team"})
    );
    let c = fetch_by_name(&d, "team", "handoff").await;
    assert_eq!(c["id"], id);
    assert_eq!(c["capsule_text"], r["bundle_text"]);
    assert_eq!(c["capsule_chars"], r["bundle_chars"]);
    assert_eq!(c["title"], "Team handoff");
    assert_eq!(c["tags"], json!(["bundle"]));
    assert_eq!(c["run_id"], "r9");
    assert_eq!(c["phase"], "merge");
    assert_eq!(c["role"], "leader");
    assert_eq!(c["source"], "moss-tests");
}

#[tokio::test]
async fn store_as_follows_the_store_rules() {
    let d = TestDaemon::start().await;
    let (a, b, _c) = three(&d).await;
    // store_as needs a name.
    for store_as in [json!({}), json!({"workspace": "w"})] {
        let (s, body) = compose(&d, json!({"items": [{"id": a}], "store_as": store_as})).await;
        let e = expect_error(s, &body, "INVALID_REQUEST", 400);
        assert!(message(&e).contains("name"), "{e}");
    }
    // JSON has no section headers to lint: json + store_as is refused.
    let (s, body) = compose(
        &d,
        json!({"items": [{"id": a}], "format": "json", "store_as": {"name": "j"}}),
    )
    .await;
    expect_error(s, &body, "INVALID_REQUEST", 400);
    let (s, _) = d.call("GET", "/capsules/by-name?name=j", None).await;
    assert_eq!(s, 404);

    // mode "error" (default) refuses a taken name; "replace" overwrites it in place.
    let first = compose_ok(
        &d,
        json!({"items": [{"id": a}], "store_as": {"name": "bundle"}}),
    )
    .await;
    let (s, body) = compose(
        &d,
        json!({"items": [{"id": b}], "store_as": {"name": "bundle"}}),
    )
    .await;
    expect_error(s, &body, "NAME_ALREADY_EXISTS", 409);
    let second = compose_ok(
        &d,
        json!({"items": [{"id": b}], "store_as": {"name": "bundle", "mode": "replace"}}),
    )
    .await;
    assert_eq!(
        second["stored"]["id"], first["stored"]["id"],
        "replace keeps the id"
    );
    let c = fetch_by_name(&d, "default", "bundle").await;
    assert_eq!(c["capsule_text"], second["bundle_text"]);
}

#[tokio::test]
async fn store_as_lints_the_bundle() {
    // store_as goes through capsule_store, so a bundle of thin capsules is
    // CAPSULE_TOO_THIN unless allow_thin is set.
    let d = TestDaemon::start().await;
    let thin = store(
        &d,
        json!({"name": "thin", "capsule_text": "## Objective\njust this", "allow_thin": true}),
    )
    .await;
    let (s, body) = compose(
        &d,
        json!({"items": [{"id": thin}], "store_as": {"name": "out"}}),
    )
    .await;
    expect_error(s, &body, "CAPSULE_TOO_THIN", 422);
    let (s, _) = d.call("GET", "/capsules/by-name?name=out", None).await;
    assert_eq!(s, 404, "nothing stored");
    let r = compose_ok(
        &d,
        json!({"items": [{"id": thin}], "store_as": {"name": "out", "allow_thin": true}}),
    )
    .await;
    assert!(r["stored"]["id"].is_string(), "{r}");
}

#[tokio::test]
async fn store_as_over_the_limit_is_compose_too_large_and_stores_nothing() {
    let d = TestDaemon::start_with_config(Some(json!({"capsule_max_chars": 300}))).await;
    let body = format!("{}\n{}", text("x"), "y".repeat(150));
    let p1 = store(&d, json!({"name": "p1", "capsule_text": body})).await;
    let p2 = store(&d, json!({"name": "p2", "capsule_text": body})).await;
    let (s, resp) = compose(
        &d,
        json!({"items": [{"id": p1}, {"id": p2}], "store_as": {"name": "big"}}),
    )
    .await;
    expect_error(s, &resp, "COMPOSE_TOO_LARGE", 413);
    let (s, _) = d.call("GET", "/capsules/by-name?name=big", None).await;
    assert_eq!(s, 404);
}

// ---------------------------------------------------------------------------------------------
// sections filter

/// A capsule with the six sections and distinct bodies per section.
fn sectioned(who: &str) -> String {
    format!(
        "## Objective\n{who} objective\n## Current status\n{who} status\n\
         ## Decisions\n- {who} decided\n## Next actions\n- {who} next\n\
         ## Key locations\n{who}/src\n## Open questions\n- {who} wonders"
    )
}

#[tokio::test]
async fn the_sections_filter_keeps_only_the_named_sections() {
    let d = TestDaemon::start().await;
    let sec = store(
        &d,
        json!({"name": "security", "capsule_text": sectioned("sec")}),
    )
    .await;
    let perf = store(
        &d,
        json!({"name": "perf", "capsule_text": "## Objective\nperf objective\n## Decisions\n- perf decided",
               "allow_thin": true}),
    )
    .await;
    let r = compose_ok(
        &d,
        json!({"items": [{"id": sec}, {"id": perf}], "sections": ["decisions", "OPEN QUESTIONS"]}),
    )
    .await;
    let bundle = r["bundle_text"].as_str().unwrap();
    // Both capsules keep their own header; section headers as written, case-insensitive match.
    for kept in [
        "## security",
        "## perf",
        "## Decisions\n- sec decided",
        "## Open questions\n- sec wonders",
        "## Decisions\n- perf decided",
    ] {
        assert!(bundle.contains(kept), "{kept:?} missing from {bundle:?}");
    }
    for dropped in [
        "Objective",
        "objective",
        "Current status",
        "Next actions",
        "Key locations",
        "sec/src",
    ] {
        assert!(!bundle.contains(dropped), "{dropped:?} kept in {bundle:?}");
    }
    assert!(
        bundle.find("## security").unwrap() < bundle.find("## perf").unwrap(),
        "item order kept: {bundle:?}"
    );
    assert_eq!(r["bundle_chars"], bundle.chars().count());

    // Exact header names only: "Decision" is not "Decisions".
    let r = compose_ok(
        &d,
        json!({"items": [{"id": sec}], "sections": ["Decision", "Open questions"]}),
    )
    .await;
    let bundle = r["bundle_text"].as_str().unwrap();
    assert!(!bundle.contains("decided"), "{bundle:?}");
    assert!(bundle.contains("sec wonders"), "{bundle:?}");
}

/// The filter finds sections the way the lint does: a capsule that wrote its next actions as
/// `Next steps:` (a colon line, a synonym the lint accepts) keeps them under "Next actions".
#[tokio::test]
async fn the_sections_filter_matches_sections_as_the_lint_does() {
    let d = TestDaemon::start().await;
    let colons = store(
        &d,
        json!({"name": "colons", "capsule_text": "Objective: ship v2\nStatus: halfway\n\
               Decisions: keep SQLite\nNext steps:\n- migrate the index\n- tell ops\n\
               Files: src/store\nRisks: none yet\n"}),
    )
    .await;
    let synonym = store(
        &d,
        json!({"name": "synonym", "capsule_text": sectioned("syn").replace("## Next actions", "## Next Steps")}),
    )
    .await;
    let r = compose_ok(
        &d,
        json!({"items": [{"id": colons}, {"id": synonym}], "sections": ["Next actions"]}),
    )
    .await;
    let bundle = r["bundle_text"].as_str().unwrap();
    for kept in [
        "Next steps:\n- migrate the index\n- tell ops\n",
        "## Next Steps\n- syn next",
    ] {
        assert!(bundle.contains(kept), "{kept:?} missing from {bundle:?}");
    }
    for dropped in ["ship v2", "keep SQLite", "src/store", "syn decided"] {
        assert!(!bundle.contains(dropped), "{dropped:?} kept in {bundle:?}");
    }
    // Pivoted, both land in one section, titled as the first capsule wrote it.
    let r = compose_ok(
        &d,
        json!({"items": [{"id": colons}, {"id": synonym}], "sections": ["Next actions"], "pivot": "section"}),
    )
    .await;
    assert_eq!(
        r["bundle_text"], "## Next steps\n\n- migrate the index\n- tell ops\n\n- syn next\n",
        "{r}"
    );
}

#[tokio::test]
async fn the_sections_filter_in_json_parts() {
    let d = TestDaemon::start().await;
    let sec = store(
        &d,
        json!({"name": "security", "capsule_text": sectioned("sec")}),
    )
    .await;
    let r = compose_ok(
        &d,
        json!({"items": [{"id": sec}], "sections": ["Decisions"], "format": "json"}),
    )
    .await;
    let part = &json_parts(&r)[0];
    let t = part["text"].as_str().unwrap();
    assert!(t.contains("sec decided"), "{r}");
    assert!(!t.contains("sec objective"), "{r}");
    assert_eq!(part["chars"], t.chars().count());
}

#[tokio::test]
async fn store_as_with_sections_implies_allow_thin() {
    let d = TestDaemon::start().await;
    let sec = store(
        &d,
        json!({"name": "security", "capsule_text": sectioned("sec")}),
    )
    .await;
    let r = compose_ok(
        &d,
        json!({"items": [{"id": sec}], "sections": ["Decisions"],
               "store_as": {"name": "decisions-only"}}),
    )
    .await;
    assert!(r["stored"]["id"].is_string(), "{r}");
    let c = fetch_by_name(&d, "default", "decisions-only").await;
    assert_eq!(c["capsule_text"], r["bundle_text"]);
    assert!(!c["capsule_text"].as_str().unwrap().contains("Objective"));
}

// ---------------------------------------------------------------------------------------------
// MCP

#[tokio::test]
async fn capsule_compose_over_mcp() {
    let d = TestDaemon::start().await;
    let (a, b, _c) = three(&d).await;
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool(
            "capsule_compose",
            json!({"items": [{"id": a}, {"workspace": "proj", "name": "b"}]}),
        )
        .await;
    assert_eq!(r["isError"], false, "{r}");
    let rest = compose_ok(&d, json!({"items": [{"id": a}, {"id": b}]})).await;
    assert_eq!(r["structuredContent"], rest);

    let r = mcp
        .call_tool(
            "capsule_compose",
            json!({"items": [{"id": a}, {"name": "missing"}]}),
        )
        .await;
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["structuredContent"]["error"]["code"], "NOT_FOUND");
    assert_eq!(r["structuredContent"]["error"]["status"], 404);
}
