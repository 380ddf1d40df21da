//! Progress while an export or import runs, over REST and MCP, and a client going away.

use moss_tests::TestDaemon;
use serde_json::{Value, json};

use super::{count_all, export_ok, exports, files_in, seed};

#[tokio::test]
async fn progress_is_published_under_the_requested_id_while_the_request_runs() {
    let d = TestDaemon::start().await;
    seed(&d, 1_500).await;
    let client = d.client.clone();
    let task = tokio::spawn(async move {
        client
            .capsules()
            .export(
                &moss_client::capsule::ExportRequest {
                    path: Some("p.jsonl".into()),
                    include_deleted: Some(true),
                    ..Default::default()
                },
                Some("job-1"),
            )
            .await
    });
    let mut seen = Vec::new();
    while !task.is_finished() {
        if let Ok(p) = d.client.progress("job-1").await {
            seen.push(p);
        }
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    let r = task.await.unwrap().unwrap();
    assert_eq!(r.count, 1_500);
    eprintln!("{} progress reports seen", seen.len());
    assert!(!seen.is_empty(), "the export ran long enough to be polled");
    for p in &seen {
        match p.phase.as_str() {
            "starting" => assert_eq!((p.done, p.total), (0, 0), "{p:?}"),
            "exporting" => assert!(p.total == 1_500 && p.done <= p.total, "{p:?}"),
            other => panic!("unexpected phase {other}: {p:?}"),
        }
    }
    assert!(
        seen.windows(2)
            .all(|w| w[0].phase != "exporting" || w[1].done >= w[0].done),
        "progress only grows: {seen:?}"
    );
    // After the request, the id is gone and reusable.
    let e = d.client.progress("job-1").await.unwrap_err();
    assert_eq!(e.code(), Some(moss_client::ErrorCode::NotFound));
    let (s, b) = d.call("GET", "/progress/bad%20id", None).await;
    assert_eq!(s, 404, "{b}");
    // A malformed id in the header is refused before any work.
    let resp = d
        .http()
        .post(d.url("/capsules/export"))
        .bearer_auth(&d.token)
        .header("x-moss-progress", "no/slashes")
        .json(&json!({"path": "q.jsonl"}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 400);
    assert!(!exports(&d).join("q.jsonl").exists());
}

#[tokio::test]
async fn mcp_calls_with_a_progress_token_get_progress_notifications() {
    let d = TestDaemon::start().await;
    seed(&d, 300).await;
    let mut mcp = d.mcp().await;
    let (r, messages) = mcp
        .request_with_messages(
            "tools/call",
            json!({"name": "capsule_export", "arguments": {"path": "p.jsonl"},
                   "_meta": {"progressToken": "tok-1"}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], false, "{r}");
    let count = r["result"]["structuredContent"]["count"].as_u64().unwrap();
    let progress: Vec<&Value> = messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .collect();
    assert!(!progress.is_empty(), "{messages:?}");
    for p in &progress {
        assert_eq!(p["params"]["progressToken"], "tok-1", "{p}");
    }
    let last = &progress.last().unwrap()["params"];
    assert_eq!(
        last["progress"].as_f64(),
        Some(count as f64),
        "the final count is sent: {last}"
    );
    assert_eq!(last["total"].as_f64(), Some(count as f64), "{last}");
    assert!(
        last["message"].as_str().unwrap().starts_with("exporting:"),
        "{last}"
    );
    let values: Vec<f64> = progress
        .iter()
        .map(|p| p["params"]["progress"].as_f64().unwrap())
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");

    // Without a token, no notifications.
    let (_, messages) = mcp
        .request_with_messages(
            "tools/call",
            json!({"name": "capsule_export", "arguments": {"path": "q.jsonl"}}),
        )
        .await;
    assert!(
        messages
            .iter()
            .all(|m| m["method"] != "notifications/progress"),
        "{messages:?}"
    );
}

/// Runs `op` with progress id `id` on a task and drops the request once the report shows
/// `phase` under way. Returns whether the drop happened before the request completed.
async fn drop_mid_phase(
    d: &TestDaemon,
    op: &'static str,
    body: Value,
    id: &str,
    phase: &str,
) -> bool {
    let http = d.http();
    let url = d.url(&format!("/capsules/{op}"));
    let token = d.token.clone();
    let header_id = id.to_string();
    let task = tokio::spawn(async move {
        http.post(url)
            .bearer_auth(token)
            .header("x-moss-progress", header_id)
            .json(&body)
            .send()
            .await
            .map(|r| r.status().as_u16())
    });
    loop {
        if task.is_finished() {
            return false;
        }
        if let Ok(p) = d.client.progress(id).await
            && p.phase == phase
            && p.done > 0
            && p.done < p.total
        {
            task.abort();
            return task.await.is_err_and(|e| e.is_cancelled());
        }
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

/// Returns once the writer has finished the jobs queued before this call: it runs its jobs in
/// order and answers a write only after its transaction commits. The write is a memory, so it
/// changes no capsule count, and a new one each time, so it is never a no-op.
async fn writer_caught_up(d: &TestDaemon) {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (s, r) = d
        .call(
            "POST",
            "/memories",
            Some(json!({"content": format!("a write queued behind the others ({n})")})),
        )
        .await;
    assert_eq!(s, 200, "{r}");
}

/// Waits until the daemon has noticed: the progress id is released when the request ends.
async fn until_released(d: &TestDaemon, id: &str) {
    moss_tests::wait_until(
        &format!("progress {id} to be released"),
        std::time::Duration::from_secs(10),
        || async { d.client.progress(id).await.is_err() },
    )
    .await
}

#[tokio::test]
async fn a_client_going_away_cancels_export_and_rolls_back_import() {
    let d = TestDaemon::start().await;
    seed(&d, 3_000).await;
    let ex = exports(&d);
    std::fs::write(ex.join("keep.jsonl"), "old backup\n").unwrap();
    export_ok(&d, json!({"path": "all.jsonl", "include_deleted": true})).await;
    let mut before = count_all(&d).await;

    let mut export_dropped = false;
    let mut import_dropped = false;
    for attempt in 0..5 {
        if !export_dropped {
            let id = format!("exp-{attempt}");
            let body = json!({"path": "keep.jsonl", "include_deleted": true});
            if drop_mid_phase(&d, "export", body, &id, "exporting").await {
                until_released(&d, &id).await;
                // The job stops at its next row and removes its temporary file.
                let mut files = files_in(&ex);
                for _ in 0..400 {
                    if files.len() == 2 {
                        break;
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                    files = files_in(&ex);
                }
                if std::fs::read_to_string(ex.join("keep.jsonl")).unwrap() == "old backup\n" {
                    assert_eq!(
                        files,
                        ["all.jsonl", "keep.jsonl"],
                        "no temporary file remains"
                    );
                    export_dropped = true;
                } else {
                    // The export finished just before the drop reached it; try again.
                    std::fs::write(ex.join("keep.jsonl"), "old backup\n").unwrap();
                }
            }
        }
        if !import_dropped {
            let id = format!("imp-{attempt}");
            let body = json!({"path": "all.jsonl", "mode": "rename"});
            if drop_mid_phase(&d, "import", body, &id, "importing").await {
                until_released(&d, &id).await;
                // The writer job stops at its next record and rolls back.
                writer_caught_up(&d).await;
                let now = count_all(&d).await;
                if now == before {
                    import_dropped = true;
                } else {
                    // The import committed just before the drop reached it: all of it.
                    assert_eq!(now, before + 3_000, "all of the import or none of it");
                    before = now;
                }
            }
        }
        if export_dropped && import_dropped {
            break;
        }
    }
    assert!(
        export_dropped,
        "an export was dropped mid-way in 5 attempts"
    );
    assert!(
        import_dropped,
        "an import was dropped mid-way in 5 attempts"
    );
}
