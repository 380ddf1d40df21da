//! Filters and pagination.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::json;

use super::{encode, hit_names, names, page, search_with, store_filter_fixture};
use crate::util::{expect_error, store};

#[tokio::test]
async fn each_filter_narrows_the_hits() {
    let d = TestDaemon::start().await;
    store_filter_fixture(&d).await;
    assert_eq!(hit_names(&d, "kiwi", "").await, ["a", "b", "c"]);
    assert_eq!(hit_names(&d, "kiwi", "&workspace=alpha").await, ["a", "c"]);
    assert_eq!(hit_names(&d, "kiwi", "&workspace=beta").await, ["b"]);
    assert_eq!(hit_names(&d, "kiwi", "&tag=x").await, ["a", "c"]);
    assert_eq!(hit_names(&d, "kiwi", "&tag=y").await, ["b", "c"]);
    assert_eq!(hit_names(&d, "kiwi", "&run_id=r1").await, ["a", "b"]);
    assert_eq!(hit_names(&d, "kiwi", "&phase=design").await, ["a", "c"]);
    assert_eq!(hit_names(&d, "kiwi", "&role=writer").await, ["a", "b"]);
    assert_eq!(hit_names(&d, "kiwi", "&role=reviewer").await, ["c"]);
    // A filter nothing matches is an empty page, not an error.
    let p = page(&d, "kiwi", "&workspace=gamma").await;
    assert_eq!(p["items"], json!([]));
    assert_eq!(p["pagination"]["total"], 0);
}

#[tokio::test]
async fn the_workspace_filter_uses_the_normalized_workspace() {
    // Lookup uses the normalized form (trimmed, lowercased).
    let d = TestDaemon::start().await;
    store_filter_fixture(&d).await;
    assert_eq!(
        hit_names(&d, "kiwi", &format!("&workspace={}", encode(" ALPHA "))).await,
        ["a", "c"]
    );
}

#[tokio::test]
async fn filters_combine_with_and() {
    let d = TestDaemon::start().await;
    store_filter_fixture(&d).await;
    assert_eq!(hit_names(&d, "kiwi", "&workspace=alpha&tag=y").await, ["c"]);
    assert_eq!(hit_names(&d, "kiwi", "&run_id=r1&tag=y").await, ["b"]);
    assert_eq!(
        hit_names(&d, "kiwi", "&phase=design&role=writer").await,
        ["a"]
    );
    assert_eq!(
        hit_names(
            &d,
            "kiwi",
            "&workspace=alpha&tag=x&run_id=r2&phase=design&role=reviewer"
        )
        .await,
        ["c"]
    );
    assert!(
        hit_names(&d, "kiwi", "&workspace=beta&phase=design")
            .await
            .is_empty()
    );
    // The query itself is ANDed with the filters too.
    assert!(
        hit_names(&d, "kiwi AND zebra", "&workspace=alpha")
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn deleted_capsules_are_found_only_with_include_deleted() {
    let d = TestDaemon::start().await;
    store(
        &d,
        json!({"name": "live", "capsule_text": capsule_text("mango live")}),
    )
    .await;
    let gone = store(
        &d,
        json!({"name": "gone", "capsule_text": capsule_text("mango gone")}),
    )
    .await;
    let (s, b) = d.call("DELETE", &format!("/capsules/{gone}"), None).await;
    assert_eq!(s, 200, "{b}");

    assert_eq!(hit_names(&d, "mango", "").await, ["live"]);
    assert_eq!(
        hit_names(&d, "mango", "&include_deleted=false").await,
        ["live"]
    );
    let p = page(&d, "mango", "&include_deleted=true").await;
    let mut n = names(&p);
    n.sort();
    assert_eq!(n, ["gone", "live"], "{p}");
    assert_eq!(p["pagination"]["total"], 2);
    let hit = p["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "gone")
        .unwrap();
    assert_eq!(hit["id"], gone.as_str());
    assert!(hit["deleted_at"].is_i64(), "a deleted hit says so: {hit}");
}

#[tokio::test]
async fn pages_default_to_20_clamp_at_100_and_report_has_more_and_total() {
    let d = TestDaemon::start().await;
    for i in 0..25 {
        store(
            &d,
            json!({"name": format!("n{i:02}"), "capsule_text": capsule_text("papaya")}),
        )
        .await;
    }
    let first = page(&d, "papaya", "").await;
    assert_eq!(
        first["pagination"],
        json!({"limit": 20, "offset": 0, "has_more": true, "total": 25})
    );
    assert_eq!(first["items"].as_array().unwrap().len(), 20);

    let second = page(&d, "papaya", "&offset=20").await;
    assert_eq!(
        second["pagination"],
        json!({"limit": 20, "offset": 20, "has_more": false, "total": 25})
    );
    assert_eq!(second["items"].as_array().unwrap().len(), 5);
    // The two pages together are every capsule exactly once.
    let mut all = names(&first);
    all.extend(names(&second));
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 25, "pages overlap or miss hits: {all:?}");

    let small = page(&d, "papaya", "&limit=5&offset=5").await;
    assert_eq!(
        small["pagination"],
        json!({"limit": 5, "offset": 5, "has_more": true, "total": 25})
    );
    assert_eq!(names(&small), names(&first)[5..10].to_vec());

    // Over the max is clamped, not refused.
    let big = page(&d, "papaya", "&limit=1000").await;
    assert_eq!(big["pagination"]["limit"], 100);
    assert_eq!(big["items"].as_array().unwrap().len(), 25);

    // Past the end: empty page, still the total.
    let past = page(&d, "papaya", "&offset=40").await;
    assert_eq!(past["items"], json!([]));
    assert_eq!(past["pagination"]["total"], 25);
    assert_eq!(past["pagination"]["has_more"], false);

    // Negative paging is refused.
    for bad in ["&limit=-1", "&offset=-1", "&limit=lots"] {
        let (s, b) = search_with(&d, "papaya", bad).await;
        expect_error(s, &b, "INVALID_REQUEST", 400);
    }
}

#[tokio::test]
async fn the_tag_filter_matches_whole_tags_only() {
    let d = TestDaemon::start().await;
    store(
        &d,
        json!({"name": "a", "tags": ["stale-old", "a%b"], "capsule_text": capsule_text("kiwi")}),
    )
    .await;
    store(
        &d,
        json!({"name": "b", "tags": ["x\"y", "stale"], "capsule_text": capsule_text("kiwi")}),
    )
    .await;
    assert_eq!(hit_names(&d, "kiwi", "&tag=stale").await, ["b"]);
    assert_eq!(hit_names(&d, "kiwi", "&tag=stale-old").await, ["a"]);
    assert_eq!(hit_names(&d, "kiwi", "&tag=a%25b").await, ["a"]);
    assert_eq!(hit_names(&d, "kiwi", "&tag=x%22y").await, ["b"]);
    // SQL wildcards and fragments of tags are not tags.
    for frag in ["%25", "_", "a%25", "stal", "old"] {
        assert!(
            hit_names(&d, "kiwi", &format!("&tag={frag}"))
                .await
                .is_empty(),
            "tag={frag}"
        );
    }
}
