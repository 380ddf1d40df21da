//! `moss bench`: its figures, the families it times, and the user's store left as it was.

use moss_tests::{TestDaemon, capsule_text};

use super::{json, moss, stderr};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_reports_figures_as_json() {
    let d = TestDaemon::start().await;
    let out = moss(
        &d,
        &[
            "bench",
            "--against-running",
            "--clients",
            "4",
            "--duration",
            "0.3",
            "--size",
            "1024",
            "--json",
        ],
        None,
    )
    .await;
    let r = json(&out);
    for op in ["store", "fetch", "health"] {
        assert!(r[op]["ops"].as_u64().unwrap() > 0, "{op}: {r}");
        assert_eq!(r[op]["errors"], 0, "{op}: {r}");
        assert!(r[op]["p99_ms"].as_f64().unwrap() >= r[op]["p50_ms"].as_f64().unwrap());
    }
    assert!(r["store_health_ratio"].as_f64().unwrap() > 0.0);
    // The fetch phase started only once the full-text index held every stored capsule.
    assert!(r["index_catch_up_s"].as_f64().unwrap() >= 0.0, "{r}");
    let status = json(&moss(&d, &["daemon", "status"], None).await);
    assert_eq!(status["index_behind"], 0, "{status}");
    assert!(
        r.get("append").is_none(),
        "no append phase unless asked: {r}"
    );
}

/// `--search --cross-family` seeds every family and times moss_search and moss_context; the
/// context task it reads holds its 200 steps, notes, handoffs and memories.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_times_search_and_context_across_families() {
    let d = TestDaemon::start().await;
    let args = [
        "bench",
        "--against-running",
        "--search",
        "--cross-family",
        "--items",
        "480",
        "--clients",
        "2",
        "--duration",
        "0.3",
        "--size",
        "512",
        "--workspace",
        "bench-cross",
        "--json",
    ];
    let r = json(&moss(&d, &args, None).await);
    assert_eq!(r["items"], 480, "{r}");
    for op in ["search_rare", "search_common", "context"] {
        assert!(r[op]["ops"].as_u64().unwrap() > 0, "{op}: {r}");
        assert_eq!(r[op]["errors"], 0, "{op}: {r}");
        assert!(r[op]["p95_ms"].as_f64().unwrap() >= r[op]["p50_ms"].as_f64().unwrap());
    }
    let counts = &r["counts"];
    // 20 handoffs and a quarter of the 108 other items.
    assert_eq!(counts["capsules"], 20 + 27, "{r}");
    assert_eq!(counts["memories"], 100 + 27, "{r}");
    assert!(counts["tasks"].as_u64().unwrap() >= 3, "{r}");
    assert!(counts["reasoning"].as_u64().unwrap() >= 50 + 27, "{r}");
    let shape = &r["context_shape"];
    assert_eq!(shape["steps_total"], 200, "{r}");
    for section in ["handoffs", "notes", "memories"] {
        assert!(shape[section].as_u64().unwrap() > 0, "{section}: {r}");
    }
    // What it wrote is there to read: the context task's handoffs are linked to it by
    // `task`, the way a capsule is handed off for a task.
    let task = r["context_task"].as_str().unwrap();
    let args = [
        "list",
        "-w",
        "bench-cross",
        "--task",
        task,
        "--limit",
        "100",
    ];
    let handoffs = json(&moss(&d, &args, None).await);
    assert_eq!(
        handoffs["items"].as_array().unwrap().len(),
        20,
        "{handoffs}"
    );
    let found = json(&moss(&d, &["find", "rare7", "-w", "bench-cross"], None).await);
    let families: std::collections::BTreeSet<&str> = found["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["family"].as_str().unwrap())
        .collect();
    assert_eq!(families.len(), 4, "a rare word in every family: {found}");
    let args = [
        "bench",
        "--against-running",
        "--search",
        "--cross-family",
        "--items",
        "10",
    ];
    let too_few = moss(&d, &args, None).await;
    assert!(!too_few.status.success());
    let too_few = stderr(&too_few);
    assert!(too_few.contains("--items 10 is too few"), "{too_few}");
    assert!(task.starts_with("TASK-"), "{r}");
}

/// `moss bench` wrote thousands of capsules into the user's store: it measures a daemon of its
/// own, and the store, its counts and its home are as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_leaves_the_store_as_it_found_it() {
    crate::lifecycle::mossd();
    let d = TestDaemon::start().await;
    json(
        &moss(
            &d,
            &["store", "--name", "mine"],
            Some(&capsule_text("mine")),
        )
        .await,
    );
    let entries = || {
        let mut names: Vec<String> = std::fs::read_dir(d.home_path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let (stats, inventory, files) = (
        json(&moss(&d, &["stats"], None).await),
        json(&moss(&d, &["inventory"], None).await),
        entries(),
    );
    let args = [
        "bench",
        "--clients",
        "2",
        "--duration",
        "0.2",
        "--size",
        "512",
        "--json",
    ];
    let report = json(&moss(&d, &args, None).await);
    assert!(report["store"]["ops"].as_u64().unwrap() > 0, "{report}");
    assert_ne!(report["addr"], d.daemon.addr.to_string(), "{report}");
    assert_eq!(json(&moss(&d, &["stats"], None).await), stats);
    assert_eq!(json(&moss(&d, &["inventory"], None).await), inventory);
    assert_eq!(entries(), files, "the scratch home is deleted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_times_appends_to_the_capsules_it_stored() {
    let d = TestDaemon::start().await;
    let args = [
        "bench",
        "--against-running",
        "--append",
        "--replace",
        "2",
        "--clients",
        "2",
        "--duration",
        "0.3",
        "--size",
        "1024",
        "--workspace",
        "bench-append",
        "--json",
    ];
    let r = json(&moss(&d, &args, None).await);
    assert!(r["append"]["ops"].as_u64().unwrap() > 0, "{r}");
    assert_eq!(r["append"]["errors"], 0, "{r}");
    let fetched = json(
        &moss(
            &d,
            &["fetch", "--workspace", "bench-append", "--name", "c0-0"],
            None,
        )
        .await,
    );
    let text = fetched["capsule_text"].as_str().unwrap();
    assert!(text.contains("- appended note 0"), "{text}");
}

/// `--semantic` needs a daemon with an embedding model: without one it says how to get one
/// before writing anything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_semantic_without_a_model_says_what_to_configure() {
    let d = TestDaemon::start().await;
    let args = [
        "bench",
        "--against-running",
        "--semantic",
        "--memories",
        "10",
        "--workspace",
        "bench-sem",
    ];
    let out = moss(&d, &args, None).await;
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("semantic search is off") && err.contains("embeddings.model_dir"),
        "{err}"
    );
    let table = moss(&d, &["workspaces", "--format", "table"], None).await;
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(!table.contains("bench-sem"), "nothing written: {table}");
}
