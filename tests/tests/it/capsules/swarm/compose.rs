//! Section-pivoted and filter-based compose over a run's capsules.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use super::{fetch, ok, swarm};
use crate::util::{expect_error, message, store};

#[tokio::test]
async fn a_section_pivot_groups_findings_with_attribution_in_encounter_order() {
    let d = TestDaemon::start().await;
    swarm(&d).await;
    let r = ok(
        &d,
        "POST",
        "/capsules/compose",
        json!({
            "items": [{"run_id": "pr-42"}],
            "pivot": "section",
            "sections": ["Open questions", "Decisions"],
            "include_attribution": true
        }),
    )
    .await;
    assert_eq!(
        r["bundle_text"],
        "## Decisions\n\n\
         **security-findings** (security-reviewer):\n- parameterize the user query\n\n\
         **perf-findings** (performance-reviewer):\n- N+1 in the user listing\n- index created_at\n\n\
         ## Open questions\n\n\
         **security-findings** (security-reviewer):\n- is /admin meant to be open?\n\n\
         **docs-findings**:\n- who reviews the docs?\n",
        "{}",
        r["bundle_text"].as_str().unwrap()
    );
    assert_eq!(r["parts_count"], 3);

    // Attribution without pivot: inside each capsule's block.
    let r = ok(
        &d,
        "POST",
        "/capsules/compose",
        json!({"items": [{"workspace": "pr", "name": "perf-findings"}], "sections": ["Decisions"], "include_attribution": true}),
    )
    .await;
    assert_eq!(
        r["bundle_text"],
        "## perf-findings\n\n**perf-findings** (performance-reviewer):\n\n## Decisions\n- N+1 in the user listing\n- index created_at\n"
    );

    // JSON cannot be pivoted.
    let (s, e) = d
        .call(
            "POST",
            "/capsules/compose",
            Some(json!({"items": [{"run_id": "pr-42"}], "pivot": "section", "format": "json"})),
        )
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "pivot"
    );

    // Stored, a pivot is a thin capsule: accepted without the six sections.
    let r = ok(
        &d,
        "POST",
        "/capsules/compose",
        json!({
            "items": [{"run_id": "pr-42"}],
            "pivot": "section",
            "sections": ["Decisions"],
            "store_as": {"workspace": "pr", "name": "pr-42-decisions"}
        }),
    )
    .await;
    let stored = fetch(&d, r["stored"]["id"].as_str().unwrap()).await;
    assert!(
        stored["capsule_text"]
            .as_str()
            .unwrap()
            .starts_with("## Decisions\n\n- parameterize")
    );

    // Over MCP, the same.
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool(
            "capsule_compose",
            json!({"items": [{"run_id": ["pr-41", "pr-42"]}], "pivot": "section", "sections": ["Decisions"]}),
        )
        .await;
    assert_eq!(r["isError"], false, "{r}");
    let text = r["structuredContent"]["bundle_text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.ends_with("- index created_at\n\n- unrelated\n"),
        "{text}"
    );
    d.stop().await;
}

/// The display names of a json bundle, in order.
fn part_names(r: &Value) -> Vec<String> {
    let doc: Value = serde_json::from_str(r["bundle_text"].as_str().unwrap()).unwrap();
    doc["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["display_name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn filter_items_expand_oldest_first_at_their_position_and_are_bounded() {
    let d = TestDaemon::start().await;
    swarm(&d).await;
    let compose = |items: Value| json!({"items": items, "format": "json"});
    // [ref, filter, ref]: the filter's capsules in creation order, at its place.
    let r = ok(
        &d,
        "POST",
        "/capsules/compose",
        compose(json!([
            {"workspace": "pr", "name": "other-run"},
            {"run_id": "pr-42", "role": "performance-reviewer"},
            {"workspace": "pr", "run_id": "pr-42"},
            {"workspace": "pr", "name": "docs-findings"}
        ])),
    )
    .await;
    assert_eq!(
        part_names(&r),
        [
            "other-run",
            "perf-findings",
            "security-findings",
            "perf-findings",
            "docs-findings",
            "docs-findings"
        ]
    );
    // A filter matching nothing is skipped; a ref that misses fails the whole compose.
    let r = ok(
        &d,
        "POST",
        "/capsules/compose",
        compose(json!([{"run_id": "nobody"}, {"workspace": "pr", "name": "other-run"}])),
    )
    .await;
    assert_eq!(part_names(&r), ["other-run"]);
    let (s, e) = d
        .call(
            "POST",
            "/capsules/compose",
            Some(compose(
                json!([{"run_id": "pr-42"}, {"workspace": "pr", "name": "missing"}]),
            )),
        )
        .await;
    expect_error(s, &e, "NOT_FOUND", 404);
    // Ambiguous and empty items.
    let (s, e) = d
        .call(
            "POST",
            "/capsules/compose",
            Some(compose(
                json!([{"workspace": "pr", "name": "other-run", "run_id": "pr-42"}]),
            )),
        )
        .await;
    let e = expect_error(s, &e, "INVALID_REQUEST", 400);
    assert!(message(&e).contains("ambiguous"), "{e}");
    let (s, e) = d
        .call("POST", "/capsules/compose", Some(compose(json!([{}]))))
        .await;
    expect_error(s, &e, "INVALID_REQUEST", 400);

    // More than 50 once expanded.
    for i in 0..48 {
        store(
            &d,
            json!({"workspace": "big", "run_id": "many", "capsule_text": capsule_text(&format!("m{i}"))}),
        )
        .await;
    }
    let (s, e) = d
        .call(
            "POST",
            "/capsules/compose",
            Some(compose(json!([{"run_id": "many"}, {"run_id": "pr-42"}]))),
        )
        .await;
    let e = expect_error(s, &e, "INVALID_REQUEST", 400);
    assert_eq!(e["details"]["expanded_count"], 51, "{e}");
    // Exactly 50 is fine.
    let r = ok(
        &d,
        "POST",
        "/capsules/compose",
        json!({"items": [{"run_id": "many"}, {"workspace": "pr", "name": "docs-findings"}, {"workspace": "pr", "name": "other-run"}], "sections": ["Objective"]}),
    )
    .await;
    assert_eq!(r["parts_count"], 50);
    d.stop().await;
}
