//! Many concurrent writers through the typed client: no errors, nothing lost, no id reused.

use std::collections::HashSet;

use moss_client::capsule::{CapsuleRef, FetchManyRequest, StoreRequest};
use moss_tests::{TestDaemon, capsule_text};

const TASKS: usize = 32;
const PER_TASK: usize = 300;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_stores_are_all_kept_with_distinct_ids() {
    let d = TestDaemon::start().await;
    let mut handles = Vec::with_capacity(TASKS);
    for t in 0..TASKS {
        let client = d.client.clone();
        handles.push(tokio::spawn(async move {
            let mut stored = Vec::with_capacity(PER_TASK);
            let mut errors = Vec::new();
            for i in 0..PER_TASK {
                let name = format!("t{t:02}-c{i:03}");
                let req = StoreRequest {
                    capsule_text: capsule_text(&name),
                    workspace: Some(format!("ws{}", t % 4)),
                    name: Some(name.clone()),
                    ..Default::default()
                };
                match client.capsules().store(&req).await {
                    Ok(h) => stored.push((format!("ws{}", t % 4), name, h.id)),
                    Err(e) => errors.push(format!("{name}: {e}")),
                }
            }
            (stored, errors)
        }));
    }
    let mut stored = Vec::with_capacity(TASKS * PER_TASK);
    let mut errors = Vec::new();
    for h in handles {
        let (s, e) = h.await.expect("task");
        stored.extend(s);
        errors.extend(e);
    }
    assert!(
        errors.is_empty(),
        "{} stores failed, e.g. {:?}",
        errors.len(),
        &errors[..errors.len().min(5)]
    );
    assert_eq!(stored.len(), TASKS * PER_TASK);
    let ids: HashSet<&str> = stored.iter().map(|(_, _, id)| id.as_str()).collect();
    assert_eq!(ids.len(), TASKS * PER_TASK, "every store got its own id");
    assert!(ids.iter().all(|id| id.len() == 26));

    // Every capsule is fetchable by name, with the id and text its store returned.
    let mut found = 0;
    for batch in stored.chunks(50) {
        let resp = d
            .client
            .capsules()
            .fetch_many(&FetchManyRequest {
                items: batch
                    .iter()
                    .map(|(ws, name, _)| CapsuleRef::by_name(ws, name))
                    .collect(),
                ..Default::default()
            })
            .await
            .expect("fetch_many");
        assert!(resp.errors.is_empty(), "{:?}", resp.errors);
        assert_eq!(resp.items.len(), batch.len());
        for (c, (ws, name, id)) in resp.items.iter().zip(batch) {
            assert_eq!(&c.id, id);
            assert_eq!(&c.workspace, ws);
            assert_eq!(c.name.as_deref(), Some(name.as_str()));
            assert_eq!(c.capsule_text.as_deref(), Some(capsule_text(name).as_str()));
            found += 1;
        }
    }
    assert_eq!(found, TASKS * PER_TASK);

    // The counts agree.
    let inv = d
        .client
        .capsules()
        .inventory(&moss_client::capsule::InventoryRequest {
            limit: Some(1),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(inv.pagination.total, Some((TASKS * PER_TASK) as i64));
    d.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_stores_of_one_name_have_exactly_one_winner() {
    let d = TestDaemon::start().await;
    let mut handles = Vec::new();
    for t in 0..32 {
        let client = d.client.clone();
        handles.push(tokio::spawn(async move {
            client
                .capsules()
                .store(&StoreRequest {
                    capsule_text: capsule_text(&format!("writer {t}")),
                    name: Some("contested".into()),
                    ..Default::default()
                })
                .await
        }));
    }
    let mut winners = Vec::new();
    let mut conflicts = 0;
    for h in handles {
        match h.await.unwrap() {
            Ok(handle) => winners.push(handle.id),
            Err(e) => {
                assert_eq!(
                    e.code(),
                    Some(moss_client::ErrorCode::NameAlreadyExists),
                    "{e}"
                );
                conflicts += 1;
            }
        }
    }
    assert_eq!(winners.len(), 1, "exactly one store wins the name");
    assert_eq!(conflicts, 31);
    let page = d
        .client
        .capsules()
        .list(&moss_client::capsule::ListRequest::default())
        .await
        .unwrap();
    assert_eq!(page.pagination.total, Some(1));
    assert_eq!(page.items[0].id, winners[0]);

    // With mode "replace", every writer succeeds on the one capsule, which keeps its id.
    let mut handles = Vec::new();
    for t in 0..32 {
        let client = d.client.clone();
        handles.push(tokio::spawn(async move {
            client
                .capsules()
                .store(&StoreRequest {
                    capsule_text: capsule_text(&format!("replacer {t}")),
                    name: Some("contested".into()),
                    mode: Some(moss_client::capsule::StoreMode::Replace),
                    ..Default::default()
                })
                .await
        }));
    }
    for h in handles {
        let handle = h.await.unwrap().expect("replace succeeds");
        assert_eq!(handle.id, winners[0]);
    }
    let page = d
        .client
        .capsules()
        .list(&moss_client::capsule::ListRequest::default())
        .await
        .unwrap();
    assert_eq!(
        page.pagination.total,
        Some(1),
        "replace never duplicates a name"
    );
}
