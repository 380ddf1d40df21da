//! `capsule_append` over REST and MCP: exact section matching, placeholder
//! replacement, appending with a blank line, addressing, limits, and concurrent appends.

use moss_tests::TestDaemon;
use serde_json::{Value, json};

use crate::util::{expect_error, message, store};

/// A capsule with the six required sections, some holding placeholders, and a custom one.
const BASE: &str = "## Objective\nShip auth\n\
## Current status\n(pending)\n\
## Decisions\n- use JWT\n\
## Next actions\nTBD\n\
## Key locations\nN/A\n\
## Open questions\n-\n\
## Design Reviews\nnone\n";

/// The named capsule `feat/auth` holding `BASE`; returns its id.
async fn store_base(d: &TestDaemon) -> String {
    store(
        d,
        json!({"workspace": "feat", "name": "auth", "capsule_text": BASE}),
    )
    .await
}

/// `POST /capsules/append`.
async fn append(d: &TestDaemon, body: Value) -> (u16, Value) {
    d.call("POST", "/capsules/append", Some(body)).await
}

/// An append that must succeed.
async fn append_ok(d: &TestDaemon, body: Value) -> Value {
    let (status, resp) = append(d, body.clone()).await;
    assert_eq!(status, 200, "append {body}: {resp}");
    resp
}

/// The capsule by id (including deleted ones).
async fn fetch(d: &TestDaemon, id: &str) -> Value {
    let (s, c) = d
        .call("GET", &format!("/capsules/{id}?include_deleted=true"), None)
        .await;
    assert_eq!(s, 200, "{c}");
    c
}

async fn text_of(d: &TestDaemon, id: &str) -> String {
    fetch(d, id).await["capsule_text"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The body under the header line `header` (up to the next `#` header), trimmed.
fn section(text: &str, header: &str) -> String {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with('#') {
            inside = line == header;
            continue;
        }
        if inside {
            out.push(line);
        }
    }
    out.join("\n").trim().to_string()
}

// ---------------------------------------------------------------------------------------------
// placeholders and appending

#[tokio::test]
async fn each_placeholder_body_is_replaced() {
    // A body that is only `(pending)`, `TBD`, `N/A`, `-` or `none` is replaced entirely.
    let d = TestDaemon::start().await;
    let id = store_base(&d).await;
    for (section_name, header) in [
        ("Current status", "## Current status"),
        ("Next actions", "## Next actions"),
        ("Key locations", "## Key locations"),
        ("Open questions", "## Open questions"),
        ("Design Reviews", "## Design Reviews"),
    ] {
        let content = format!("filled {section_name}");
        let r = append_ok(
            &d,
            json!({"id": id, "section": section_name, "content": content}),
        )
        .await;
        assert_eq!(r["replaced"], true, "{section_name}: {r}");
        assert_eq!(r["section_hit"], header);
        let t = text_of(&d, &id).await;
        assert_eq!(section(&t, header), content, "{t}");
    }
    // The sections not targeted are untouched, in their order.
    let t = text_of(&d, &id).await;
    assert_eq!(section(&t, "## Objective"), "Ship auth");
    assert_eq!(section(&t, "## Decisions"), "- use JWT");
    let headers: Vec<&str> = t.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        headers,
        [
            "## Objective",
            "## Current status",
            "## Decisions",
            "## Next actions",
            "## Key locations",
            "## Open questions",
            "## Design Reviews"
        ]
    );
    assert!(!t.contains("(pending)") && !t.contains("TBD") && !t.contains("N/A"));
}

#[tokio::test]
async fn real_content_gets_the_new_content_after_a_blank_line() {
    let d = TestDaemon::start().await;
    let id = store_base(&d).await;
    let r = append_ok(
        &d,
        json!({"id": id, "section": "Decisions", "content": "- use Redis for sessions"}),
    )
    .await;
    assert_eq!(r["replaced"], false, "{r}");
    assert_eq!(r["section_hit"], "## Decisions");
    let t = text_of(&d, &id).await;
    assert_eq!(
        section(&t, "## Decisions"),
        "- use JWT\n\n- use Redis for sessions"
    );
    assert!(
        t.contains("- use JWT\n\n- use Redis for sessions\n## Next actions\nTBD")
            || t.contains("- use JWT\n\n- use Redis for sessions\n\n## Next actions\nTBD"),
        "the next section follows unchanged: {t:?}"
    );

    // After a placeholder was replaced, the next append appends.
    let r = append_ok(
        &d,
        json!({"id": id, "section": "Design Reviews", "content": "round 1: ok"}),
    )
    .await;
    assert_eq!(r["replaced"], true);
    let r = append_ok(
        &d,
        json!({"id": id, "section": "Design Reviews", "content": "round 2: ok"}),
    )
    .await;
    assert_eq!(r["replaced"], false);
    let t = text_of(&d, &id).await;
    assert_eq!(
        section(&t, "## Design Reviews"),
        "round 1: ok\n\nround 2: ok",
        "the last section appends too: {t:?}"
    );
    assert_eq!(
        fetch(&d, &id).await["capsule_chars"],
        t.chars().count(),
        "the size follows the text"
    );
}

#[tokio::test]
async fn a_placeholder_surrounded_by_blank_space_is_still_a_placeholder() {
    let d = TestDaemon::start().await;
    let id = store(
        &d,
        json!({"capsule_text": "## Risks\n\n   TBD  \n\n## Notes\nkept", "allow_thin": true}),
    )
    .await;
    let r = append_ok(
        &d,
        json!({"id": id, "section": "Risks", "content": "- none known"}),
    )
    .await;
    assert_eq!(r["replaced"], true, "{r}");
    let t = text_of(&d, &id).await;
    assert_eq!(section(&t, "## Risks"), "- none known", "{t:?}");
    assert_eq!(section(&t, "## Notes"), "kept");
}

#[tokio::test]
async fn an_append_landing_exactly_on_the_limit_fits() {
    // Only a result that exceeds capsule_max_chars is refused.
    let d = TestDaemon::start_with_config(Some(json!({"capsule_max_chars": 300}))).await;
    let id = store_base(&d).await;
    // Measure what a further append adds besides the content (the separator), then fill up
    // exactly.
    append_ok(
        &d,
        json!({"id": id, "section": "Decisions", "content": "- a"}),
    )
    .await;
    let before = fetch(&d, &id).await["capsule_chars"].as_i64().unwrap();
    append_ok(
        &d,
        json!({"id": id, "section": "Decisions", "content": "- b"}),
    )
    .await;
    let after = fetch(&d, &id).await["capsule_chars"].as_i64().unwrap();
    let overhead = after - before - 3;
    let fill = usize::try_from(300 - after - overhead).unwrap();
    let (s, body) = append(
        &d,
        json!({"id": id, "section": "Decisions", "content": "é".repeat(fill + 1)}),
    )
    .await;
    expect_error(s, &body, "CAPSULE_TOO_LARGE", 413);
    append_ok(
        &d,
        json!({"id": id, "section": "Decisions", "content": "é".repeat(fill)}),
    )
    .await;
    assert_eq!(fetch(&d, &id).await["capsule_chars"], 300);
}

// ---------------------------------------------------------------------------------------------
// section matching

#[tokio::test]
async fn sections_match_exactly_ignoring_case_only() {
    let d = TestDaemon::start().await;
    let id = store_base(&d).await;
    // Case does not matter; the hit is the header as written.
    let r = append_ok(
        &d,
        json!({"id": id, "section": "CURRENT STATUS", "content": "in review"}),
    )
    .await;
    assert_eq!(r["section_hit"], "## Current status");
    let r = append_ok(
        &d,
        json!({"id": id, "section": "design reviews", "content": "looks good"}),
    )
    .await;
    assert_eq!(r["section_hit"], "## Design Reviews");

    // No synonyms, no partial names.
    let before = text_of(&d, &id).await;
    for wrong in [
        "Status",
        "Decision",
        "Next",
        "Open questions / risks",
        "Objectives",
    ] {
        let (s, body) = append(&d, json!({"id": id, "section": wrong, "content": "x"})).await;
        let e = expect_error(s, &body, "INVALID_REQUEST", 400);
        let m = message(&e);
        assert!(m.contains(wrong), "names the section asked for: {m}");
        for available in ["Objective", "Current status", "Decisions", "Design Reviews"] {
            assert!(m.contains(available), "lists {available:?}: {m}");
        }
    }
    assert_eq!(
        text_of(&d, &id).await,
        before,
        "failed appends change nothing"
    );
}

#[tokio::test]
async fn a_capsule_without_markdown_sections_is_refused() {
    // Markdown required: a JSON capsule has no sections to append to.
    let d = TestDaemon::start().await;
    let json_text = json!({
        "objective": "ship", "current status": "ok", "decisions": "jwt",
        "next actions": "merge", "key locations": "src/", "open questions": "none"
    })
    .to_string();
    let id = store(&d, json!({"capsule_text": json_text, "allow_thin": true})).await;
    let (s, body) = append(
        &d,
        json!({"id": id, "section": "decisions", "content": "more"}),
    )
    .await;
    expect_error(s, &body, "INVALID_REQUEST", 400);
    assert_eq!(text_of(&d, &id).await, json_text);
}

// ---------------------------------------------------------------------------------------------
// request errors and limits

#[tokio::test]
async fn empty_content_or_section_is_refused() {
    let d = TestDaemon::start().await;
    let id = store_base(&d).await;
    for content in ["", "   ", "\n\t\n"] {
        let (s, body) = append(
            &d,
            json!({"id": id, "section": "Decisions", "content": content}),
        )
        .await;
        let e = expect_error(s, &body, "INVALID_REQUEST", 400);
        assert!(message(&e).contains("content"), "{e}");
    }
    let (s, body) = append(&d, json!({"id": id, "content": "x"})).await;
    let e = expect_error(s, &body, "INVALID_REQUEST", 400);
    assert!(message(&e).contains("section"), "{e}");
    let (s, body) = append(&d, json!({"id": id, "section": "Decisions"})).await;
    let e = expect_error(s, &body, "INVALID_REQUEST", 400);
    assert!(message(&e).contains("content"), "{e}");
    assert_eq!(text_of(&d, &id).await, BASE);
}

#[tokio::test]
async fn a_result_over_the_limit_is_capsule_too_large() {
    let d = TestDaemon::start_with_config(Some(json!({"capsule_max_chars": 250}))).await;
    let id = store_base(&d).await;
    let room = 250 - BASE.chars().count();
    let (s, body) = append(
        &d,
        json!({"id": id, "section": "Decisions", "content": "é".repeat(room + 10)}),
    )
    .await;
    let e = expect_error(s, &body, "CAPSULE_TOO_LARGE", 413);
    assert_eq!(e["details"]["max_chars"], 250, "{e}");
    assert_eq!(text_of(&d, &id).await, BASE, "nothing written");
    // Something small still fits.
    append_ok(
        &d,
        json!({"id": id, "section": "Decisions", "content": "- ok"}),
    )
    .await;
}

// ---------------------------------------------------------------------------------------------
// addressing

#[tokio::test]
async fn addressing_by_id_or_name_and_the_fetch_key() {
    let d = TestDaemon::start().await;
    let id = store_base(&d).await;
    // By workspace + name (normalized), the fetch key names the capsule as written.
    let r = append_ok(
        &d,
        json!({"workspace": "FEAT", "name": " Auth ", "section": "Decisions", "content": "- a"}),
    )
    .await;
    assert_eq!(r["id"], id.as_str());
    assert_eq!(
        r["fetch_key"],
        json!({"moss_capsule": "auth", "moss_workspace": "feat"})
    );
    // By id: the same fetch key.
    let r = append_ok(
        &d,
        json!({"id": id, "section": "Decisions", "content": "- b"}),
    )
    .await;
    assert_eq!(
        r["fetch_key"],
        json!({"moss_capsule": "auth", "moss_workspace": "feat"})
    );

    // An unnamed capsule: no fetch_key at all.
    let unnamed = store(&d, json!({"capsule_text": BASE})).await;
    let r = append_ok(
        &d,
        json!({"id": unnamed, "section": "Decisions", "content": "- c"}),
    )
    .await;
    assert_eq!(r["id"], unnamed.as_str());
    assert!(r.get("fetch_key").is_none(), "{r}");
    assert_eq!(
        r.as_object().unwrap().len(),
        6,
        "id, section_hit, replaced, sections, revision, updated_at: {r}"
    );

    // Both modes at once are ambiguous; neither is invalid.
    let (s, body) = append(
        &d,
        json!({"id": id, "workspace": "feat", "name": "auth", "section": "Decisions", "content": "x"}),
    )
    .await;
    expect_error(s, &body, "AMBIGUOUS_ADDRESSING", 400);
    let (s, body) = append(&d, json!({"section": "Decisions", "content": "x"})).await;
    expect_error(s, &body, "INVALID_REQUEST", 400);
}

#[tokio::test]
async fn missing_or_deleted_capsules_are_not_found() {
    let d = TestDaemon::start().await;
    let id = store_base(&d).await;
    let (s, body) = append(
        &d,
        json!({"workspace": "feat", "name": "nope", "section": "Decisions", "content": "x"}),
    )
    .await;
    expect_error(s, &body, "NOT_FOUND", 404);
    let (s, _) = d.call("DELETE", &format!("/capsules/{id}"), None).await;
    assert_eq!(s, 200);
    for addr in [
        json!({"id": id}),
        json!({"workspace": "feat", "name": "auth"}),
    ] {
        let mut body = addr.clone();
        body["section"] = json!("Decisions");
        body["content"] = json!("x");
        let (s, resp) = append(&d, body).await;
        expect_error(s, &resp, "NOT_FOUND", 404);
    }
    assert_eq!(text_of(&d, &id).await, BASE);
}

#[tokio::test]
async fn append_bumps_updated_at() {
    let d = TestDaemon::start().await;
    let id = store_base(&d).await;
    let before = fetch(&d, &id).await;
    // Timestamps are unix seconds: the append must come in a later second.
    moss_tests::wait_past_second(before["updated_at"].as_i64().unwrap()).await;
    append_ok(
        &d,
        json!({"id": id, "section": "Decisions", "content": "- later"}),
    )
    .await;
    let after = fetch(&d, &id).await;
    assert!(
        after["updated_at"].as_i64() > before["updated_at"].as_i64(),
        "{before} -> {after}"
    );
    assert_eq!(after["created_at"], before["created_at"]);
}

// ---------------------------------------------------------------------------------------------
// concurrency

#[tokio::test]
async fn concurrent_appends_to_one_section_all_land_once() {
    let d = TestDaemon::start().await;
    let id = store_base(&d).await;
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..20 {
        let (url, token, id) = (d.url("/capsules/append"), d.token.clone(), id.clone());
        tasks.spawn(async move {
            let resp = reqwest::Client::new()
                .post(url)
                .bearer_auth(token)
                .json(&json!({"id": id, "section": "Current status",
                              "content": format!("line number {i:02}")}))
                .send()
                .await
                .unwrap();
            let status = resp.status().as_u16();
            let body: Value = resp.json().await.unwrap();
            assert_eq!(status, 200, "append {i}: {body}");
            body["replaced"].as_bool().unwrap()
        });
    }
    let replaced: Vec<bool> = tasks.join_all().await;
    assert_eq!(
        replaced.iter().filter(|r| **r).count(),
        1,
        "exactly one append replaced the (pending) placeholder: {replaced:?}"
    );
    let t = text_of(&d, &id).await;
    let body = section(&t, "## Current status");
    for i in 0..20 {
        assert_eq!(
            body.matches(&format!("line number {i:02}")).count(),
            1,
            "line {i} in {body:?}"
        );
    }
    assert!(!body.contains("(pending)"), "{body:?}");
    assert_eq!(
        body.lines().filter(|l| !l.is_empty()).count(),
        20,
        "{body:?}"
    );
    assert_eq!(section(&t, "## Decisions"), "- use JWT");
}

// ---------------------------------------------------------------------------------------------
// MCP

#[tokio::test]
async fn capsule_append_over_mcp() {
    let d = TestDaemon::start().await;
    let id = store_base(&d).await;
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool(
            "capsule_append",
            json!({"workspace": "feat", "name": "auth", "section": "Decisions", "content": "- mcp"}),
        )
        .await;
    assert_eq!(r["isError"], false, "{r}");
    let updated_at = r["structuredContent"]["updated_at"].clone();
    assert!(updated_at.is_i64(), "{r}");
    assert_eq!(
        r["structuredContent"],
        json!({"id": id, "fetch_key": {"moss_capsule": "auth", "moss_workspace": "feat"},
               "section_hit": "## Decisions", "replaced": false,
               "sections": [{"section_hit": "## Decisions", "replaced": false}],
               "revision": 2, "updated_at": updated_at})
    );
    let r = mcp
        .call_tool(
            "capsule_append",
            json!({"id": id, "section": "Status", "content": "x"}),
        )
        .await;
    assert_eq!(r["isError"], true, "{r}");
    assert_eq!(r["structuredContent"]["error"]["code"], "INVALID_REQUEST");
}
