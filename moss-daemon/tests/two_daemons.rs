//! Two `mossd` processes on one PostgreSQL database: what one writes the other reads at once, a
//! watcher on one wakes for a write through the other, and a `kill -9` of one loses no write it
//! acknowledged. Runs where `MOSS_TEST_POSTGRES` names a server (CI starts one); skipped
//! elsewhere.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use moss_client::Client;
use moss_client::capsule::{
    CapsuleRef, FetchManyRequest, FetchRequest, SearchRequest, StoreRequest, WatchEvent,
    WatchRequest,
};
use moss_client::memory::{MemoryRecallRequest, MemoryStoreRequest};

struct Mossd {
    child: Child,
    client: Client,
}

impl Drop for Mossd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A schema of its own on the test server, as a `database` URL; `None` without a server.
fn database() -> Option<String> {
    let url = std::env::var("MOSS_TEST_POSTGRES").ok()?;
    use moss_daemon::store::engine::{Db, postgres};
    let schema = format!(
        "two_daemons_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let conn = postgres::PgConn::connect(&postgres::config(&url).unwrap()).unwrap();
    Db::Postgres(&conn)
        .batch(&format!("CREATE SCHEMA {schema}"))
        .unwrap();
    let sep = if url.contains('?') { '&' } else { '?' };
    Some(format!("{url}{sep}options=-c%20search_path%3D{schema}"))
}

/// Starts mossd on its own home, serving `database`, and returns it once it listens.
fn start(home: &std::path::Path, database: &str) -> Mossd {
    std::fs::write(
        home.join("config.json"),
        serde_json::json!({ "database": database }).to_string(),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mossd"))
        .args(["--addr", "127.0.0.1:0"])
        .env("MOSS_HOME", home)
        .env_remove("MOSS_ADDR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    let token = std::fs::read_to_string(home.join("token")).unwrap();
    let client = Client::new(&addr, Some(token.trim().to_string())).unwrap();
    Mossd { child, client }
}

fn text(s: &str) -> String {
    format!(
        "## Objective\n{s}\n## Current status\ns\n## Decisions\nd\n## Next actions\nn\n\
         ## Key locations\nk\n## Open questions\nq\n"
    )
}

fn store(name: &str, body: &str) -> StoreRequest {
    StoreRequest {
        capsule_text: text(body),
        name: Some(name.to_string()),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_daemons_share_one_database() {
    // The synchronous PostgreSQL client blocks: off the runtime's threads.
    let Some(database) = tokio::task::spawn_blocking(database).await.unwrap() else {
        eprintln!("skipped: MOSS_TEST_POSTGRES is not set");
        return;
    };
    let (home_a, home_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = start(home_a.path(), &database);
    let b = start(home_b.path(), &database);

    // Written through one, read through the other at once: by name, by search, by slot.
    let through_a = a
        .client
        .capsules()
        .store(&store("from-a", "zeppelin moorings"))
        .await
        .unwrap();
    let read = b
        .client
        .capsules()
        .fetch(&FetchRequest {
            name: Some("from-a".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(read.id, through_a.id);
    let found = b
        .client
        .capsules()
        .search(&SearchRequest {
            query: "zeppelin".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(found.items.len(), 1, "{found:?}");
    assert_eq!(found.items[0].id, through_a.id);
    b.client
        .memories()
        .store(&MemoryStoreRequest {
            content: "the staging database is on port 5433".into(),
            slot: Some("staging-db".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let recalled = a
        .client
        .memories()
        .recall(&MemoryRecallRequest {
            slot: Some("staging-db".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(recalled.items.len(), 1, "{recalled:?}");

    // A watcher on B wakes for writes through A: each wake timed from A's acknowledgement.
    let mut cursor = b
        .client
        .capsules()
        .watch(&WatchRequest {
            timeout_ms: Some(0),
            ..Default::default()
        })
        .await
        .unwrap()
        .cursor;
    let mut wakes = Vec::new();
    for i in 0..20 {
        let watcher = b.client.clone();
        let waiting = tokio::spawn(async move {
            let r = watcher
                .capsules()
                .watch(&WatchRequest {
                    since: Some(cursor),
                    timeout_ms: Some(10_000),
                    ..Default::default()
                })
                .await
                .unwrap();
            (r, Instant::now())
        });
        // The watcher is waiting before the write.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let name = format!("wake-{i}");
        a.client.capsules().store(&store(&name, "w")).await.unwrap();
        let acked = Instant::now();
        let (r, woke) = waiting.await.unwrap();
        assert_eq!(r.event, WatchEvent::Created, "{r:?}");
        assert_eq!(r.capsule.as_ref().unwrap().name.as_deref(), Some(&*name));
        cursor = r.cursor;
        wakes.push(woke.saturating_duration_since(acked));
    }
    wakes.sort();
    let median = wakes[wakes.len() / 2];
    println!(
        "watch on B after a write through A: median {:?}, max {:?} ({} writes)",
        median,
        wakes[wakes.len() - 1],
        wakes.len()
    );
    assert!(median < Duration::from_millis(100), "{wakes:?}");

    // kill -9 of A while both take writes: every write either acknowledged is there.
    let acked_so_far = Arc::new(AtomicUsize::new(0));
    let mut writers = Vec::new();
    for t in 0..16 {
        let client = if t % 2 == 0 {
            a.client.clone()
        } else {
            b.client.clone()
        };
        let acked_so_far = acked_so_far.clone();
        writers.push(tokio::spawn(async move {
            let mut acked = Vec::new();
            for i in 0..400 {
                let name = format!("k{t}-{i}");
                match client.capsules().store(&store(&name, "k")).await {
                    Ok(h) => {
                        acked.push((name, h.id));
                        acked_so_far.fetch_add(1, Ordering::Relaxed);
                    }
                    // The killed daemon's clients stop at their first failure.
                    Err(_) if t % 2 == 0 => break,
                    Err(e) => panic!("a write through the daemon left running failed: {e}"),
                }
            }
            acked
        }));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while acked_so_far.load(Ordering::Relaxed) < 200 {
        assert!(Instant::now() < deadline, "no writes acknowledged in 60 s");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut a = a;
    a.child.kill().unwrap();
    a.child.wait().unwrap();
    let mut acked = Vec::new();
    for w in writers {
        acked.extend(w.await.unwrap());
    }
    // Even writers went through A.
    let through_a = acked
        .iter()
        .filter(|(n, _)| n[1..n.find('-').unwrap()].parse::<usize>().unwrap() % 2 == 0)
        .count();
    assert!(through_a > 0, "A acknowledged writes before it was killed");
    for chunk in acked.chunks(50) {
        let got = b
            .client
            .capsules()
            .fetch_many(&FetchManyRequest {
                items: chunk
                    .iter()
                    .map(|(n, _)| CapsuleRef::by_name("default", n.as_str()))
                    .collect(),
                include_text: Some(false),
                include_deleted: None,
            })
            .await
            .unwrap();
        assert!(
            got.errors.is_empty(),
            "acknowledged writes lost: {:?}",
            got.errors
        );
        for (c, (_, id)) in got.items.iter().zip(chunk) {
            assert_eq!(&c.id, id);
        }
    }
    println!(
        "kill -9 of A: {} acknowledged writes ({through_a} through A), all read through B",
        acked.len()
    );

    // A restarted on the same database serves it again.
    drop(a);
    let a = start(home_a.path(), &database);
    let again = a
        .client
        .capsules()
        .fetch(&FetchRequest {
            name: Some("from-a".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(again.id, read.id);
}
