//! The index follows every write.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::json;

use super::{hit_names, page};
use crate::util::store;

#[tokio::test]
async fn the_index_follows_store_update_delete_and_purge() {
    let d = TestDaemon::start().await;
    let id = store(
        &d,
        json!({"name": "fruit", "capsule_text": capsule_text("we picked lychee")}),
    )
    .await;
    // Findable as soon as the store has answered.
    assert_eq!(hit_names(&d, "lychee", "").await, ["fruit"]);

    // After an update of the text, the old words no longer match and the new ones do.
    let (s, b) = d
        .call(
            "PUT",
            &format!("/capsules/{id}"),
            Some(json!({"capsule_text": capsule_text("we picked rambutan")})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert!(hit_names(&d, "lychee", "").await.is_empty());
    assert_eq!(hit_names(&d, "rambutan", "").await, ["fruit"]);

    // A title update is searchable too.
    let (s, b) = d
        .call(
            "PUT",
            &format!("/capsules/{id}"),
            Some(json!({"title": "Persimmon plan"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(hit_names(&d, "persimmon", "").await, ["fruit"]);

    // Deleted: gone unless include_deleted.
    let (s, b) = d.call("DELETE", &format!("/capsules/{id}"), None).await;
    assert_eq!(s, 200, "{b}");
    assert!(hit_names(&d, "rambutan", "").await.is_empty());
    assert_eq!(
        hit_names(&d, "rambutan", "&include_deleted=true").await,
        ["fruit"]
    );

    // Purged: gone entirely.
    let (s, b) = d.call("POST", "/capsules/purge", Some(json!({}))).await;
    assert_eq!(s, 200, "{b}");
    assert!(
        hit_names(&d, "rambutan", "&include_deleted=true")
            .await
            .is_empty()
    );
    // A new capsule under the same name is found, not the purged one.
    store(
        &d,
        json!({"name": "fruit", "capsule_text": capsule_text("rambutan again")}),
    )
    .await;
    let p = page(&d, "rambutan", "&include_deleted=true").await;
    assert_eq!(p["pagination"]["total"], 1, "{p}");
    assert_ne!(p["items"][0]["id"], id.as_str());
}

#[tokio::test]
async fn the_index_follows_append_replace_compose_and_bulk_operations() {
    let d = TestDaemon::start().await;
    let text = "## Notes\nnone\n## Other\nplain";
    let id = store(
        &d,
        json!({"name": "ap", "capsule_text": text, "allow_thin": true}),
    )
    .await;
    // Appended words are searchable at once.
    let (s, b) = d
        .call(
            "POST",
            "/capsules/append",
            Some(json!({"id": id, "section": "Notes", "content": "tamarind"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(hit_names(&d, "tamarind", "").await, ["ap"]);

    // A store with mode "replace" reindexes the capsule it overwrites.
    store(
        &d,
        json!({"name": "ap", "mode": "replace", "capsule_text": "## Notes\nsoursop",
               "allow_thin": true}),
    )
    .await;
    assert!(hit_names(&d, "tamarind", "").await.is_empty());
    assert_eq!(hit_names(&d, "soursop", "").await, ["ap"]);

    // A bundle stored by compose is searchable.
    let (s, b) = d
        .call(
            "POST",
            "/capsules/compose",
            Some(json!({"items": [{"name": "ap"}],
                        "store_as": {"name": "bundle", "allow_thin": true}})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(hit_names(&d, "soursop", "").await, ["ap", "bundle"]);

    // Bulk update changes what the filters see; bulk delete hides.
    let (s, b) = d
        .call(
            "POST",
            "/capsules/bulk-update",
            Some(json!({"name_prefix": "ap", "set_phase": "done"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(hit_names(&d, "soursop", "&phase=done").await, ["ap"]);
    let (s, b) = d
        .call(
            "POST",
            "/capsules/bulk-delete",
            Some(json!({"name_prefix": "bund"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(hit_names(&d, "soursop", "").await, ["ap"]);
    assert_eq!(
        hit_names(&d, "soursop", "&include_deleted=true").await,
        ["ap", "bundle"]
    );
}
