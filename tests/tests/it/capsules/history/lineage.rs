//! Restore (and its conflicts), lineage walked both ways, and clone.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use super::{fetch, ok};
use crate::util::{expect_error, message, store};

#[tokio::test]
async fn restore_undeletes_and_handles_a_taken_name_in_each_mode() {
    let d = TestDaemon::start().await;
    let old = store(
        &d,
        json!({"workspace": "w", "name": "auth", "capsule_text": capsule_text("old")}),
    )
    .await;
    ok(&d, "DELETE", &format!("/capsules/{old}"), Value::Null).await;
    // Free name: restored by name, active again, one revision more.
    let r = ok(
        &d,
        "POST",
        "/capsules/restore",
        json!({"workspace": "w", "name": "auth"}),
    )
    .await;
    assert_eq!(
        (r["id"].as_str(), r["revision"].as_i64()),
        (Some(old.as_str()), Some(3)),
        "{r}"
    );
    let c = fetch(&d, &old).await;
    assert!(c.get("deleted_at").is_none(), "{c}");
    // Restoring an active capsule is a 400.
    let (s, e) = d
        .call("POST", "/capsules/restore", Some(json!({"id": old})))
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "id"
    );

    // The name taken by a newer capsule.
    ok(&d, "DELETE", &format!("/capsules/{old}"), Value::Null).await;
    let newer = store(
        &d,
        json!({"workspace": "w", "name": "auth", "capsule_text": capsule_text("new")}),
    )
    .await;
    let (s, e) = d
        .call("POST", "/capsules/restore", Some(json!({"id": old})))
        .await;
    let e = expect_error(s, &e, "NAME_ALREADY_EXISTS", 409);
    assert_eq!(e["details"]["id"], newer.as_str(), "names the holder: {e}");
    assert!(message(&e).contains(&newer), "{e}");
    assert!(
        fetch(&d, &old).await.get("deleted_at").is_some(),
        "nothing written"
    );
    // rename: restored beside it.
    let r = ok(
        &d,
        "POST",
        "/capsules/restore",
        json!({"id": old, "mode": "rename"}),
    )
    .await;
    assert_eq!(r["name"], "auth-1", "{r}");
    assert_eq!(fetch(&d, &old).await["name"], "auth-1");
    // replace: the holder goes.
    ok(&d, "DELETE", &format!("/capsules/{old}"), Value::Null).await;
    let other = store(
        &d,
        json!({"workspace": "w", "name": "auth-1", "capsule_text": capsule_text("x")}),
    )
    .await;
    let r = ok(
        &d,
        "POST",
        "/capsules/restore",
        json!({"id": old, "mode": "replace"}),
    )
    .await;
    assert_eq!(r["replaced_id"], other.as_str(), "{r}");
    assert!(fetch(&d, &other).await.get("deleted_at").is_some());
    assert!(fetch(&d, &old).await.get("deleted_at").is_none());
    // Unknown: 404.
    let (s, e) = d
        .call(
            "POST",
            "/capsules/restore",
            Some(json!({"workspace": "w", "name": "never"})),
        )
        .await;
    expect_error(s, &e, "NOT_FOUND", 404);
    // Over MCP.
    ok(&d, "DELETE", &format!("/capsules/{newer}"), Value::Null).await;
    let mut mcp = d.mcp().await;
    let r = mcp.call_tool("capsule_restore", json!({"id": newer})).await;
    assert_eq!(r["isError"], false, "{r}");
    d.stop().await;
}

#[tokio::test]
async fn lineage_is_stored_as_given_and_walked_both_ways() {
    let d = TestDaemon::start().await;
    let research = store(
        &d,
        json!({"workspace": "p", "name": "research", "capsule_text": capsule_text("r")}),
    )
    .await;
    let review = store(
        &d,
        json!({"workspace": "p", "name": "security-review", "capsule_text": capsule_text("s")}),
    )
    .await;
    // A plan based on both (one by name, one by id) and on a capsule that does not exist.
    let plan = store(
        &d,
        json!({"workspace": "p", "name": "plan", "capsule_text": capsule_text("p"), "based_on": [
            {"workspace": "p", "name": "research"}, {"id": review}, {"workspace": "gone", "name": "x"}
        ]}),
    )
    .await;
    let c = fetch(&d, &plan).await;
    assert_eq!(
        c["based_on"][0],
        json!({"workspace": "p", "name": "research"})
    );
    assert_eq!(c["based_on"][1], json!({"id": review}));
    // Summaries carry it too.
    let (_, list) = d.call("GET", "/capsules?workspace=p", None).await;
    let listed = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == plan.as_str())
        .unwrap()
        .clone();
    assert_eq!(listed["based_on"].as_array().unwrap().len(), 3);
    // An implementation based on the plan, by id.
    let imp = store(&d, json!({"workspace": "p", "name": "impl", "capsule_text": capsule_text("i"), "based_on": [{"id": plan}]})).await;

    let (s, l) = d
        .call("GET", "/capsules/lineage?workspace=p&name=plan", None)
        .await;
    assert_eq!(s, 200, "{l}");
    let up: Vec<(i64, Option<&str>)> = l["based_on"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["depth"].as_i64().unwrap(), n["capsule"]["id"].as_str()))
        .collect();
    assert_eq!(
        up,
        [
            (1, Some(research.as_str())),
            (1, Some(review.as_str())),
            (1, None)
        ]
    );
    assert_eq!(l["derived"][0]["capsule"]["id"], imp.as_str());
    assert_eq!(
        l["derived"][0]["ref"],
        json!({"workspace": "p", "name": "impl"})
    );
    // From the research: two steps down, the second via the first.
    let (_, l) = d
        .call("GET", &format!("/capsules/lineage?id={research}"), None)
        .await;
    let down: Vec<(i64, &str, Option<u64>)> = l["derived"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["depth"].as_i64().unwrap(),
                n["capsule"]["id"].as_str().unwrap(),
                n["via"].as_u64(),
            )
        })
        .collect();
    assert_eq!(down, [(1, plan.as_str(), None), (2, imp.as_str(), Some(0))]);
    assert_eq!(l["truncated"], false);
    let (_, l) = d
        .call(
            "GET",
            &format!("/capsules/lineage?id={research}&depth=1"),
            None,
        )
        .await;
    assert_eq!(
        (
            l["derived"].as_array().unwrap().len(),
            l["truncated"].as_bool()
        ),
        (1, Some(true))
    );
    // Update replaces the lineage; [] clears it.
    ok(
        &d,
        "PUT",
        &format!("/capsules/{imp}"),
        json!({"based_on": []}),
    )
    .await;
    assert!(fetch(&d, &imp).await.get("based_on").is_none());
    // A malformed ref is named.
    let (s, e) = d
        .call(
            "POST",
            "/capsules",
            Some(json!({"capsule_text": capsule_text("z"), "based_on": [{"workspace": "p"}]})),
        )
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "based_on[0]"
    );
    let (s, e) = d.call("GET", "/capsules/lineage?id=x&depth=11", None).await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "depth"
    );
    d.stop().await;
}

#[tokio::test]
async fn clone_copies_text_records_its_source_and_applies_overrides() {
    let d = TestDaemon::start().await;
    let src = store(
        &d,
        json!({"workspace": "r", "name": "oauth-research-v1", "run_id": "pr-100", "phase": "research",
               "role": "researcher", "tags": ["oauth"], "capsule_text": capsule_text("oauth")}),
    )
    .await;
    let h = ok(
        &d,
        "POST",
        "/capsules/clone",
        json!({"source": {"workspace": "r", "name": "oauth-research-v1"},
               "target": {"name": "oauth-research-v2", "run_id": "pr-200"},
               "set": {"phase": "plan"}}),
    )
    .await;
    let copy = fetch(&d, h["id"].as_str().unwrap()).await;
    assert_ne!(copy["id"], src.as_str());
    assert_eq!(copy["capsule_text"], capsule_text("oauth"));
    assert_eq!(
        (
            copy["workspace"].as_str(),
            copy["name"].as_str(),
            copy["run_id"].as_str(),
            copy["phase"].as_str(),
            copy["role"].as_str()
        ),
        (
            Some("r"),
            Some("oauth-research-v2"),
            Some("pr-200"),
            Some("plan"),
            Some("researcher")
        )
    );
    assert_eq!(copy["tags"], json!(["oauth"]));
    assert_eq!(
        copy["based_on"],
        json!([{"workspace": "r", "name": "oauth-research-v1"}])
    );
    assert_eq!(copy["revision"], 1);
    // The source's lineage lists the copy.
    let (_, l) = d
        .call("GET", &format!("/capsules/lineage?id={src}"), None)
        .await;
    assert_eq!(l["derived"][0]["capsule"]["id"], copy["id"]);
    // A taken name; a missing source; conflicting run ids.
    let (s, e) = d
        .call("POST", "/capsules/clone", Some(json!({"source": {"id": src}, "target": {"workspace": "r", "name": "oauth-research-v2"}})))
        .await;
    expect_error(s, &e, "NAME_ALREADY_EXISTS", 409);
    let (s, e) = d
        .call(
            "POST",
            "/capsules/clone",
            Some(json!({"source": {"id": "nope"}})),
        )
        .await;
    expect_error(s, &e, "NOT_FOUND", 404);
    let (s, e) = d
        .call(
            "POST",
            "/capsules/clone",
            Some(json!({"source": {"id": src}, "target": {"run_id": "a"}, "set": {"run_id": "b"}})),
        )
        .await;
    assert_eq!(
        expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
        "set.run_id"
    );
    // Over MCP, into another workspace with new tags.
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool("capsule_clone", json!({"source": {"id": src}, "target": {"workspace": "elsewhere"}, "set": {"tags": []}}))
        .await;
    assert_eq!(r["isError"], false, "{r}");
    let c = fetch(&d, r["structuredContent"]["id"].as_str().unwrap()).await;
    assert_eq!(
        (c["workspace"].as_str(), c.get("tags")),
        (Some("elsewhere"), None)
    );
    d.stop().await;
}
