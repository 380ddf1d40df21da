//! A capsule's history and the finer search and bulk options: restore (and its conflicts),
//! lineage both ways, clone, `skip_unchanged`, `safe_query`, `count_total`, snippet bounds and
//! evidence.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use crate::util::{expect_error, message, store};

async fn ok(d: &TestDaemon, method: &str, path: &str, body: Value) -> Value {
    let (s, r) = d.call(method, path, Some(body.clone())).await;
    assert_eq!(s, 200, "{method} {path} {body}: {r}");
    r
}

async fn fetch(d: &TestDaemon, id: &str) -> Value {
    let (s, c) = d
        .call("GET", &format!("/capsules/{id}?include_deleted=true"), None)
        .await;
    assert_eq!(s, 200, "{c}");
    c
}

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

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn versions_rotate_at_the_configured_count_and_diff_reads_them() {
    let d = TestDaemon::start_with_config(Some(json!({"capsule_versions": 3}))).await;
    let text = |status: &str| {
        format!(
            "## Objective\nShip auth\n## Current status\n{status}\n## Decisions\n- JWT\n\
             ## Next actions\n- go\n## Key locations\nsrc/\n## Open questions\n- keys?\n"
        )
    };
    let id = store(
        &d,
        json!({"workspace": "v", "name": "auth", "capsule_text": text("s1")}),
    )
    .await;
    // Revisions 2..=6 by update, append, replace and bulk update: each keeps the one before.
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"capsule_text": text("s2"), "phase": "p2"}),
    )
    .await;
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"capsule_text": text("s3")}),
    )
    .await;
    ok(
        &d,
        "POST",
        "/capsules/append",
        json!({"id": id, "section": "Decisions", "content": "- refresh"}),
    )
    .await;
    ok(&d, "POST", "/capsules", json!({"workspace": "v", "name": "auth", "mode": "replace", "capsule_text": text("s5"), "run_id": "r5"})).await;
    ok(
        &d,
        "POST",
        "/capsules/bulk-update",
        json!({"workspace": "v", "set_role": "writer"}),
    )
    .await;
    let (s, v) = d
        .call("GET", "/capsules/versions?workspace=v&name=auth", None)
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        (v["revision"].as_i64(), v["keep"].as_i64()),
        (Some(6), Some(3))
    );
    let revs: Vec<(i64, i64)> = v["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["revision"].as_i64().unwrap(),
                x["version"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        revs,
        [(5, -1), (4, -2), (3, -3)],
        "the newest three earlier revisions: {v}"
    );
    assert_eq!(
        v["versions"][0]["run_id"], "r5",
        "who wrote revision 5: {v}"
    );
    // Fetch by offset and by revision; a revision no longer kept is a 404 saying what is.
    let (_, c) = d
        .call("GET", &format!("/capsules/{id}?version=-3"), None)
        .await;
    assert_eq!(
        (c["revision"].as_i64(), c["phase"].as_str()),
        (Some(3), Some("p2")),
        "{c}"
    );
    assert!(c["capsule_text"].as_str().unwrap().contains("\ns3\n"));
    let (_, c) = d
        .call(
            "GET",
            "/capsules/by-name?workspace=v&name=auth&version=4",
            None,
        )
        .await;
    assert!(
        c["capsule_text"].as_str().unwrap().contains("- refresh"),
        "{c}"
    );
    let (s, e) = d
        .call("GET", &format!("/capsules/{id}?version=2"), None)
        .await;
    let e = expect_error(s, &e, "NOT_FOUND", 404);
    assert_eq!(
        (
            e["details"]["field"].as_str(),
            e["details"]["kept"].as_i64()
        ),
        (Some("version"), Some(3))
    );
    // A delete keeps no version.
    ok(&d, "DELETE", &format!("/capsules/{id}"), Value::Null).await;
    let (_, v) = d
        .call(
            "GET",
            &format!("/capsules/versions?id={id}&include_deleted=true"),
            None,
        )
        .await;
    assert_eq!(v["versions"].as_array().unwrap().len(), 3);
    assert_eq!(v["revision"], 7);

    // Diff across versions: revision 3 against revision 5.
    let r = ok(
        &d,
        "POST",
        "/capsules/diff",
        json!({"a": {"id": id, "version": 3}, "b": {"id": id, "version": 5}, "include_diff": true}),
    )
    .await;
    assert_eq!(
        (r["a_revision"].as_i64(), r["b_revision"].as_i64()),
        (Some(3), Some(5))
    );
    assert_eq!(r["sections"]["Current status"], "modified");
    assert_eq!(r["sections"]["Objective"], "unchanged");
    assert_eq!(r["summary"]["modified_sections"], 1, "{r}");
    assert!(
        r["diffs"]["Current status"]
            .as_str()
            .unwrap()
            .contains("-s3\n+s5"),
        "{r}"
    );
    // Two capsules: added and removed content.
    let other = store(
        &d,
        json!({"workspace": "v", "name": "other", "allow_thin": true,
               "capsule_text": "## Objective\nShip auth\n## Risks\n- skew\n"}),
    )
    .await;
    let r = ok(
        &d,
        "POST",
        "/capsules/diff",
        json!({"a": {"id": id, "version": -1}, "b": {"workspace": "v", "name": "other"}}),
    )
    .await;
    assert_eq!(r["sections"]["Risks"], "added", "{r}");
    assert_eq!(r["sections"]["Decisions"], "removed_content");
    assert!(r.get("diffs").is_none());
    assert_eq!(r["order"][0], "Objective");

    // A purge takes the versions with it.
    ok(&d, "POST", "/capsules/purge", json!({})).await;
    let (s, _) = d
        .call(
            "GET",
            &format!("/capsules/versions?id={id}&include_deleted=true"),
            None,
        )
        .await;
    assert_eq!(s, 404);
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool("capsule_versions", json!({"id": other}))
        .await;
    assert_eq!(r["structuredContent"]["versions"], json!([]), "{r}");
    d.stop().await;
}

#[tokio::test]
async fn versioning_off_keeps_nothing() {
    let d = TestDaemon::start_with_config(Some(json!({"capsule_versions": 0}))).await;
    let id = store(&d, json!({"capsule_text": capsule_text("a")})).await;
    ok(&d, "PUT", &format!("/capsules/{id}"), json!({"title": "b"})).await;
    let (_, v) = d
        .call("GET", &format!("/capsules/versions?id={id}"), None)
        .await;
    assert_eq!(
        (v["versions"].as_array().unwrap().len(), v["keep"].as_i64()),
        (0, Some(0))
    );
    let (s, e) = d
        .call("GET", &format!("/capsules/{id}?version=-1"), None)
        .await;
    expect_error(s, &e, "NOT_FOUND", 404);
    d.stop().await;
}

#[tokio::test]
async fn an_import_in_mode_replace_keeps_the_overwritten_capsule_as_a_version() {
    let d = TestDaemon::start().await;
    let id = store(
        &d,
        json!({"workspace": "x", "name": "a", "capsule_text": capsule_text("exported")}),
    )
    .await;
    ok(
        &d,
        "POST",
        "/capsules/export",
        json!({"workspace": "x", "path": "x.jsonl"}),
    )
    .await;
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"capsule_text": capsule_text("edited")}),
    )
    .await;
    let r = ok(
        &d,
        "POST",
        "/capsules/import",
        json!({"path": "x.jsonl", "mode": "replace"}),
    )
    .await;
    assert_eq!(r["replaced"], 1, "{r}");
    let (_, c) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert!(c["capsule_text"].as_str().unwrap().contains("exported"));
    let (_, c) = d
        .call("GET", &format!("/capsules/{id}?version=-1"), None)
        .await;
    assert!(
        c["capsule_text"].as_str().unwrap().contains("edited"),
        "the overwritten text: {c}"
    );
    d.stop().await;
}

#[tokio::test]
async fn evidence_is_kept_beside_the_text_listed_by_fetch_and_bounded() {
    let d = TestDaemon::start().await;
    let snippet = "fn verify(token: &str) -> bool { !token.is_empty() }";
    let plain = store(
        &d,
        json!({"workspace": "e", "name": "plain", "capsule_text": capsule_text("auth")}),
    )
    .await;
    let id = store(
        &d,
        json!({"workspace": "e", "name": "auth", "capsule_text": capsule_text("auth"),
               "evidence": [{"type": "snippet", "ref": "src/auth.rs:10-12", "content": snippet},
                            {"type": "transcript", "ref": "run-7#42"}]}),
    )
    .await;
    // Not counted in the capsule's size; listed without content unless expanded.
    let c = fetch(&d, &id).await;
    assert_eq!(c["capsule_chars"], fetch(&d, &plain).await["capsule_chars"]);
    assert_eq!(
        c["evidence"],
        json!([{"type": "snippet", "ref": "src/auth.rs:10-12", "chars": snippet.len()},
               {"type": "transcript", "ref": "run-7#42", "chars": 0}])
    );
    let (_, x) = d
        .call("GET", &format!("/capsules/{id}?expand_evidence=true"), None)
        .await;
    assert_eq!(x["evidence"][0]["content"], snippet);
    // Summaries never carry it.
    let (_, l) = d.call("GET", "/capsules?workspace=e", None).await;
    assert!(l["items"][0].get("evidence").is_none(), "{l}");

    // Update replaces the list (a version keeps the old one); [] clears it.
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"evidence": [{"type": "log", "ref": "ci#9", "content": "3 passed"}]}),
    )
    .await;
    let c = fetch(&d, &id).await;
    assert_eq!(c["revision"], 2);
    assert_eq!(
        c["evidence"],
        json!([{"type": "log", "ref": "ci#9", "chars": 8}])
    );
    let (_, v) = d
        .call(
            "GET",
            &format!("/capsules/{id}?version=-1&expand_evidence=true"),
            None,
        )
        .await;
    assert_eq!(v["evidence"][0]["content"], snippet, "{v}");
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"evidence": []}),
    )
    .await;
    assert!(fetch(&d, &id).await.get("evidence").is_none());

    // Bounds name the item and field; nothing is written.
    let long = "x".repeat(4_001);
    for (evidence, field) in [
        (
            json!([{"type": "snippet", "ref": "a", "content": long}]),
            "evidence[0].content",
        ),
        (
            json!([{"type": "snippet", "ref": "r".repeat(501)}]),
            "evidence[0].ref",
        ),
        (json!([{"type": "", "ref": "a"}]), "evidence[0].type"),
        (
            json!(vec![json!({"type": "log", "ref": "a"}); 21]),
            "evidence",
        ),
    ] {
        let (s, e) = d
            .call(
                "POST",
                "/capsules",
                Some(json!({"workspace": "e", "name": "over", "capsule_text": capsule_text("x"), "evidence": evidence})),
            )
            .await;
        assert_eq!(
            expect_error(s, &e, "INVALID_REQUEST", 400)["details"]["field"],
            field
        );
    }
    let (s, _) = d
        .call("GET", "/capsules/by-name?workspace=e&name=over", None)
        .await;
    assert_eq!(s, 404);
    // At the bounds: 20 items of 4,000 characters on a capsule of any size.
    let full = json!(vec![
        json!({"type": "snippet", "ref": "a", "content": "y".repeat(4_000)});
        20
    ]);
    store(&d, json!({"workspace": "e", "name": "full", "capsule_text": capsule_text("x"), "evidence": full})).await;

    // Clone, export and import carry it; a replace without evidence drops it.
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"evidence": [{"type": "snippet", "ref": "src/a.rs:1", "content": "a"}]}),
    )
    .await;
    let h = ok(
        &d,
        "POST",
        "/capsules/clone",
        json!({"source": {"id": id}, "target": {"name": "auth-copy"}}),
    )
    .await;
    let copy = fetch(&d, h["id"].as_str().unwrap()).await;
    assert_eq!(copy["evidence"][0]["ref"], "src/a.rs:1");
    ok(
        &d,
        "POST",
        "/capsules/export",
        json!({"workspace": "e", "path": "e.jsonl"}),
    )
    .await;
    store(&d, json!({"workspace": "e", "name": "auth", "mode": "replace", "capsule_text": capsule_text("again")})).await;
    assert!(fetch(&d, &id).await.get("evidence").is_none());
    let r = ok(
        &d,
        "POST",
        "/capsules/import",
        json!({"path": "e.jsonl", "mode": "replace"}),
    )
    .await;
    assert_eq!(
        (r["replaced"].as_i64(), r["skipped"].as_i64()),
        (Some(4), Some(0)),
        "{r}"
    );
    let (_, x) = d
        .call("GET", &format!("/capsules/{id}?expand_evidence=true"), None)
        .await;
    assert_eq!(x["evidence"][0]["content"], "a", "{x}");

    // Over MCP.
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool("capsule_fetch", json!({"id": id, "expand_evidence": true}))
        .await;
    assert_eq!(r["structuredContent"]["evidence"][0]["content"], "a", "{r}");
    d.stop().await;
}

/// Search with `search_tokenizer: "code"`: paths, snake_case names and dashed ids are words of
/// their own (and their parts no longer are). Changing the setting rebuilds the index at the
/// next start.
#[tokio::test]
async fn the_code_search_tokenizer_keeps_paths_whole_after_a_reindex() {
    let d = TestDaemon::start().await;
    let with_path = store(
        &d,
        json!({"workspace": "c", "name": "path", "capsule_text": capsule_text("see src/auth/session.go and refresh_token_ttl")}),
    )
    .await;
    store(
        &d,
        json!({"workspace": "c", "name": "prose", "capsule_text": capsule_text("the session in src went to auth, then go")}),
    )
    .await;
    let hits = |r: &Value| -> Vec<String> {
        let mut names: Vec<String> = r["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    let search = |q: &str| {
        format!(
            "/capsules/search?workspace=c&safe_query=true&query={}",
            urlencode(q)
        )
    };
    // Default words: the path is four words, found in either capsule in that order or not.
    let (_, r) = d.call("GET", &search("session"), None).await;
    assert_eq!(hits(&r), ["path", "prose"], "{r}");
    let (_, r) = d.call("GET", &search("refresh_token_ttl"), None).await;
    assert_eq!(hits(&r), ["path"], "{r}");

    let home = d.stop_keeping_home().await;
    let d = TestDaemon::start_in(home, Some(json!({"search_tokenizer": "code"}))).await;
    let (_, r) = d.call("GET", &search("src/auth/session.go"), None).await;
    assert_eq!(hits(&r), ["path"], "{r}");
    assert_eq!(r["items"][0]["id"], with_path.as_str());
    let (_, r) = d.call("GET", &search("refresh_token_ttl"), None).await;
    assert_eq!(hits(&r), ["path"], "{r}");
    // Stemmed as a whole word: its plural finds it.
    let (_, r) = d.call("GET", &search("refresh_token_ttls"), None).await;
    assert_eq!(hits(&r), ["path"], "{r}");
    // The trade-off: a part of a path is no longer a word of it.
    let (_, r) = d.call("GET", &search("session"), None).await;
    assert_eq!(hits(&r), ["prose"], "{r}");
    // New writes are cut the same way.
    store(
        &d,
        json!({"workspace": "c", "name": "later", "capsule_text": capsule_text("fixed pr-123 in lib/net.rs")}),
    )
    .await;
    let (_, r) = d.call("GET", &search("pr-123"), None).await;
    assert_eq!(hits(&r), ["later"], "{r}");
    // Memory recall keeps the default words: it splits its query at punctuation.
    ok(
        &d,
        "POST",
        "/memories",
        json!({"content": "fixed pr-123 in lib/net.rs"}),
    )
    .await;
    let r = ok(&d, "POST", "/memories/recall", json!({"query": "pr-123"})).await;
    assert_eq!(
        r["items"][0]["content"], "fixed pr-123 in lib/net.rs",
        "{r}"
    );
    d.stop().await;
}

/// `tokenizer: "cl100k_base"` counts real tokens for every write path.
#[tokio::test]
async fn the_configured_tokenizer_counts_real_tokens() {
    let d = TestDaemon::start_with_config(Some(json!({"tokenizer": "cl100k_base"}))).await;
    let id = store(
        &d,
        json!({"workspace": "t", "name": "tiny", "capsule_text": "tiktoken is great!", "allow_thin": true}),
    )
    .await;
    assert_eq!(fetch(&d, &id).await["tokens_estimate"], 6);
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"capsule_text": "antidisestablishmentarianism", "allow_thin": true}),
    )
    .await;
    assert_eq!(fetch(&d, &id).await["tokens_estimate"], 6);
    // A clone counts its text; an append counts the text it makes (both counted before the
    // writer's job, on the text the job then writes).
    let r = ok(
        &d,
        "POST",
        "/capsules/clone",
        json!({"source": {"id": id}, "target": {"workspace": "t", "name": "copy"}}),
    )
    .await;
    let copy = r["id"].as_str().unwrap().to_string();
    assert_eq!(fetch(&d, &copy).await["tokens_estimate"], 6);
    let cl100k = tiktoken_rs::cl100k_base_singleton();
    let notes = store(
        &d,
        json!({"workspace": "t", "name": "notes", "capsule_text": "## Notes\nfirst line", "allow_thin": true}),
    )
    .await;
    ok(
        &d,
        "POST",
        "/capsules/append",
        json!({"id": notes, "section": "Notes", "content": "antidisestablishmentarianism, 2 + 2 = 4"}),
    )
    .await;
    let after = fetch(&d, &notes).await;
    let text = after["capsule_text"].as_str().unwrap();
    assert!(text.contains("antidisestablishmentarianism"), "{text}");
    assert_eq!(
        after["tokens_estimate"],
        cl100k.count_ordinary(text) as i64,
        "{text}"
    );
    d.stop().await;
    // The default counts words: ceil(3 × 1.3).
    let d = TestDaemon::start().await;
    let id = store(
        &d,
        json!({"workspace": "t", "capsule_text": "tiktoken is great!", "allow_thin": true}),
    )
    .await;
    assert_eq!(fetch(&d, &id).await["tokens_estimate"], 4);
    ok(
        &d,
        "POST",
        "/capsules/export",
        json!({"workspace": "t", "path": "t.jsonl"}),
    )
    .await;
    let file = std::fs::read(d.home_path().join("exports/t.jsonl")).unwrap();
    d.stop().await;
    // An import counts with the importing daemon's tokenizer.
    let d = TestDaemon::start_with_config(Some(json!({"tokenizer": "cl100k_base"}))).await;
    std::fs::create_dir_all(d.home_path().join("exports")).unwrap();
    std::fs::write(d.home_path().join("exports/t.jsonl"), file).unwrap();
    let r = ok(&d, "POST", "/capsules/import", json!({"path": "t.jsonl"})).await;
    assert_eq!(r["imported"], 1, "{r}");
    assert_eq!(fetch(&d, &id).await["tokens_estimate"], 6);
    d.stop().await;
}
