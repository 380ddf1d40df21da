//! Summaries: `latest`, `list` and `inventory`.

use moss_client::capsule::{InventoryRequest, ListRequest, StoreRequest};
use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use super::{assert_no_text, ids, store, store_named};
use crate::util::expect_error;

// ---------------------------------------------------------------------------------------------
// latest

#[tokio::test]
async fn latest_is_a_summary_unless_text_is_asked_for() {
    let d = TestDaemon::start().await;
    let (s, l) = d
        .call("GET", "/capsules/latest?workspace=empty", None)
        .await;
    assert_eq!(s, 200, "{l}");
    assert_eq!(l, json!({"item": null, "hint": holds_nothing("empty")}));
    let (_, l) = d.call("GET", "/capsules/latest", None).await;
    assert_eq!(
        l,
        json!({"item": null, "hint": holds_nothing("default")}),
        "default workspace is empty too"
    );

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
    assert_eq!(l, json!({"item": null, "hint": holds_nothing("other")}));
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
    let page = d
        .client
        .capsules()
        .list(&ListRequest::default())
        .await
        .unwrap();
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
            c.capsules()
                .store(&StoreRequest {
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
        .capsules()
        .list(&ListRequest {
            workspace: Some("big".into()),
            limit: Some(500),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.pagination.limit, 100);
    assert_eq!(page.items.len(), 100);
    assert_eq!(page.pagination.total, Some(105));
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
        .capsules()
        .inventory(&InventoryRequest::default())
        .await
        .unwrap();
    assert_eq!(inv.pagination.limit, 100);
    assert_eq!(inv.items.len(), 100);
    assert!(inv.pagination.has_more);
    assert_eq!(inv.pagination.total, Some(105));
    let inv = d
        .client
        .capsules()
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

/// The hint an empty read of a workspace that holds nothing carries.
fn holds_nothing(ws: &str) -> String {
    format!("workspace {ws:?} holds nothing in any family; moss_workspaces lists the ones that do")
}
