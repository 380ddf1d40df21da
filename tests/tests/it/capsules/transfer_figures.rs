//! Export and import at scale: 100,000 capsules of about 2 KB. Ignored by default; run with
//! `cargo test --release -p moss-tests --test it transfer_figures -- --ignored --nocapture`.
//!
//! Prints the time of each step, the file size, and the process's peak resident memory during
//! each step (the daemon runs in this process; the peak is reset before each step).

use std::io::{BufWriter, Write};
use std::time::Instant;

use moss_tests::{TestDaemon, capsule_text};
use serde_json::json;

const N: usize = 100_000;

/// Peak resident set size since the last [`reset_peak`], in MiB (Linux; 0 elsewhere).
fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// A ~2 KB capsule text.
fn text(i: usize) -> String {
    let mut t = capsule_text(&format!("capsule {i}"));
    while t.len() < 2_000 {
        t.push_str(&format!(
            "- note {i}: the cache key includes the tenant id\n"
        ));
    }
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "figures: 100,000 capsules; run in release with --ignored --nocapture"]
async fn export_and_import_100k_capsules() {
    let config = json!({"max_import_bytes": 1024 * 1024 * 1024});
    let a = TestDaemon::start_with_config(Some(config.clone())).await;
    let seed_file = a.home_path().join("exports").join("seed.jsonl");
    {
        let mut w = BufWriter::new(std::fs::File::create(&seed_file).unwrap());
        for i in 0..N {
            let rec = json!({
                "id": format!("01SEED{i:020}"),
                "workspace_raw": format!("ws-{}", i % 10),
                "name_raw": format!("capsule-{i}"),
                "title": format!("Capsule {i}"),
                "capsule_text": text(i),
                "tags": ["bench", format!("t{}", i % 7)],
                "source": "bench",
                "created_at": 1_700_000_000 + i as i64,
                "updated_at": 1_700_000_000 + i as i64,
                "deleted_at": null,
            });
            serde_json::to_writer(&mut w, &rec).unwrap();
            w.write_all(b"\n").unwrap();
        }
        w.flush().unwrap();
    }
    let seed_bytes = std::fs::metadata(&seed_file).unwrap().len();

    reset_peak();
    let t = Instant::now();
    let (s, r) = a
        .call(
            "POST",
            "/capsules/import",
            Some(json!({"path": "seed.jsonl"})),
        )
        .await;
    let import_a = t.elapsed();
    let import_a_rss = peak_rss_mib();
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["imported"], N);

    reset_peak();
    let t = Instant::now();
    let (s, r) = a
        .call(
            "POST",
            "/capsules/export",
            Some(json!({"path": "all.jsonl"})),
        )
        .await;
    let export = t.elapsed();
    let export_rss = peak_rss_mib();
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["count"], N);
    let exported = a.home_path().join("exports").join("all.jsonl");
    let export_bytes = std::fs::metadata(&exported).unwrap().len();

    let b = TestDaemon::start_with_config(Some(config)).await;
    std::fs::rename(&exported, b.home_path().join("exports").join("all.jsonl")).unwrap();
    a.stop().await;
    reset_peak();
    let t = Instant::now();
    let (s, r) = b
        .call(
            "POST",
            "/capsules/import",
            Some(json!({"path": "all.jsonl"})),
        )
        .await;
    let import_b = t.elapsed();
    let import_b_rss = peak_rss_mib();
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["imported"], N);

    // The default cap refuses a file this size.
    let c = TestDaemon::start().await;
    std::fs::copy(
        b.home_path().join("exports").join("all.jsonl"),
        c.home_path().join("exports").join("all.jsonl"),
    )
    .unwrap();
    let (s, r) = c
        .call(
            "POST",
            "/capsules/import",
            Some(json!({"path": "all.jsonl"})),
        )
        .await;
    assert_eq!(s, 413, "{r}");
    assert_eq!(r["error"]["code"], "FILE_TOO_LARGE");

    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    println!("capsules: {N} (~2 KB of text each)");
    println!("seed file: {:.1} MiB", mib(seed_bytes));
    println!(
        "import into an empty store: {:.2} s ({:.0} capsules/s), peak RSS {import_a_rss:.0} MiB",
        import_a.as_secs_f64(),
        N as f64 / import_a.as_secs_f64()
    );
    println!(
        "export: {:.2} s ({:.0} capsules/s, {:.1} MiB/s), file {:.1} MiB, peak RSS {export_rss:.0} MiB",
        export.as_secs_f64(),
        N as f64 / export.as_secs_f64(),
        mib(export_bytes) / export.as_secs_f64(),
        mib(export_bytes)
    );
    println!(
        "re-import of the export into a new store: {:.2} s ({:.0} capsules/s), peak RSS {import_b_rss:.0} MiB",
        import_b.as_secs_f64(),
        N as f64 / import_b.as_secs_f64()
    );
    b.stop().await;
    c.stop().await;
}
