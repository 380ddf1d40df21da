//! Recall's ranking measured on a labelled fixture (`tests/fixtures/memory_ranking/`): at least
//! 1,000 memories and 60 queries with their best answers judged by hand. Prints precision@5,
//! success@5 and MRR for Moss's ranking and two baselines over the same candidates: plain BM25
//! (the full-text matches in BM25 order) and weight-then-recency (every match, heaviest first,
//! then most recent). Run it with `cargo test -p moss-tests --test it ranking -- --nocapture`
//! to see the table.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use moss_client::memory::{Contexts, MemoryRecallRequest, MemoryStoreRequest};
use moss_daemon::config::Config;
use moss_daemon::memory::search_source::SEARCH_SOURCE as MEMORIES;
use moss_daemon::memory::{Memories, rank};
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
struct FixtureMemory {
    key: String,
    content: String,
    context: Value,
    slot: Option<String>,
    weight: f64,
    age_days: f64,
}

#[derive(Deserialize)]
struct FixtureQuery {
    id: String,
    query: Option<String>,
    context: Option<String>,
    slot: Option<String>,
    relevant: Vec<String>,
}

fn lines<T: for<'de> Deserialize<'de>>(name: &str) -> Vec<T> {
    let path = format!(
        "{}/fixtures/memory_ranking/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}: {e}: {l}")))
        .collect()
}

/// Precision@5, success@5 (a relevant answer in the top 5) and reciprocal rank of one ranking.
fn measure(ranking: &[String], relevant: &[String]) -> (f64, f64, f64) {
    let top: Vec<&String> = ranking.iter().take(5).collect();
    let hits = top.iter().filter(|k| relevant.contains(k)).count();
    let rr = ranking
        .iter()
        .position(|k| relevant.contains(k))
        .map_or(0.0, |i| 1.0 / (i + 1) as f64);
    (hits as f64 / 5.0, if hits > 0 { 1.0 } else { 0.0 }, rr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moss_ranking_beats_bm25_and_weight_then_recency_on_the_fixture() {
    let memories: Vec<FixtureMemory> = lines("memories.jsonl");
    let queries: Vec<FixtureQuery> = lines("queries.jsonl");
    assert!(
        memories.len() >= 1000 && queries.len() >= 50,
        "{} memories, {} queries",
        memories.len(),
        queries.len()
    );

    let dir = tempfile::tempdir().unwrap();
    let (store, threads) = moss_daemon::schema::open_default(&dir.path().join("moss.db")).unwrap();
    let config = Arc::new(Config::default());
    let mem = Memories::new(store.clone(), config.clone(), dir.path().to_path_buf());
    let now = moss_daemon::store::now();
    let mut key_of: HashMap<String, String> = HashMap::new();
    let mut ages: Vec<(String, i64)> = Vec::new();
    for m in &memories {
        let context = match &m.context {
            Value::String(s) => Some(Contexts::One(s.clone())),
            Value::Array(a) => Some(Contexts::Many(
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect(),
            )),
            _ => None,
        };
        let r = mem
            .store(MemoryStoreRequest {
                content: m.content.clone(),
                context,
                slot: m.slot.clone(),
                weight: Some(m.weight),
                workspace: Some("fixture".into()),
                ..Default::default()
            })
            .await
            .unwrap_or_else(|e| panic!("{}: {e}", m.key));
        key_of.insert(r.memory.id.clone(), m.key.clone());
        ages.push((r.memory.id, now - (m.age_days * 86_400.0) as i64));
    }
    store
        .writer
        .run(move |ctx| {
            for (id, at) in &ages {
                ctx.db().execute(
                    "UPDATE memories SET created_at = ?2, updated_at = ?2 WHERE id = ?1",
                    moss_daemon::db_params![id.as_str(), *at],
                )?;
            }
            Ok(())
        })
        .await
        .unwrap();
    let queued = store.index_queued(&MEMORIES);
    assert!(
        store
            .index_reached(&MEMORIES, queued, Duration::from_secs(60))
            .await
    );

    let names = ["moss", "bm25", "weight_then_recency"];
    let mut totals = [(0.0, 0.0, 0.0); 3];
    let mut worst: Vec<(String, f64)> = Vec::new();
    for q in &queries {
        let req = MemoryRecallRequest {
            query: q.query.clone(),
            context: q.context.clone(),
            slot: q.slot.clone(),
            workspace: Some("fixture".into()),
            limit: Some(100),
            ..Default::default()
        };
        let query = rank::Query::from_recall(&req, config.memory.recency_half_life_days).unwrap();
        let (ours, bm25, weighty) = store
            .readers
            .run_db(move |db| {
                let ours: Vec<String> = rank::ranked(db, &query, now)?
                    .scored
                    .into_iter()
                    .map(|(c, _)| c.memory.id)
                    .collect();
                let cands = rank::candidates(db, &query)?;
                let mut bm: Vec<&rank::Candidate> =
                    cands.iter().filter(|c| c.bm25.is_some()).collect();
                bm.sort_by(|a, b| {
                    a.bm25
                        .unwrap()
                        .total_cmp(&b.bm25.unwrap())
                        .then(b.seq.cmp(&a.seq))
                });
                let mut wr: Vec<&rank::Candidate> = cands.iter().collect();
                let last = |c: &rank::Candidate| {
                    c.memory.recalled_at.unwrap_or(0).max(c.memory.updated_at)
                };
                wr.sort_by(|a, b| {
                    b.memory
                        .weight
                        .total_cmp(&a.memory.weight)
                        .then(last(b).cmp(&last(a)))
                        .then(b.seq.cmp(&a.seq))
                });
                Ok((
                    ours,
                    bm.iter().map(|c| c.memory.id.clone()).collect::<Vec<_>>(),
                    wr.iter().map(|c| c.memory.id.clone()).collect::<Vec<_>>(),
                ))
            })
            .await
            .unwrap();
        let keys = |ids: Vec<String>| -> Vec<String> {
            ids.into_iter().map(|id| key_of[&id].clone()).collect()
        };
        for (i, ranking) in [keys(ours), keys(bm25), keys(weighty)].iter().enumerate() {
            let (p, s, rr) = measure(ranking, &q.relevant);
            totals[i].0 += p;
            totals[i].1 += s;
            totals[i].2 += rr;
            if i == 0 {
                worst.push((
                    format!(
                        "{} {:?}: got {:?}",
                        q.id,
                        q.query.as_deref().or(q.slot.as_deref()),
                        &ranking[..ranking.len().min(3)]
                    ),
                    rr,
                ));
            }
        }
    }
    let n = queries.len() as f64;
    println!(
        "ranking on {} memories, {} queries",
        memories.len(),
        queries.len()
    );
    println!("| ranking | precision@5 | success@5 | MRR |");
    println!("| --- | ---: | ---: | ---: |");
    for (i, name) in names.iter().enumerate() {
        println!(
            "| {name} | {:.3} | {:.3} | {:.3} |",
            totals[i].0 / n,
            totals[i].1 / n,
            totals[i].2 / n
        );
    }
    worst.sort_by(|a, b| a.1.total_cmp(&b.1));
    for (w, rr) in worst.iter().take(5) {
        println!("weakest: rr {rr:.2} {w}");
    }
    let mrr = |i: usize| totals[i].2 / n;
    assert!(
        mrr(0) > mrr(1) && mrr(0) > mrr(2),
        "MRR moss {:.3}, bm25 {:.3}, weight/recency {:.3}",
        mrr(0),
        mrr(1),
        mrr(2)
    );
    store.writer.close().await;
    threads.join();
}

#[test]
fn measures_are_the_textbook_ones() {
    let r: Vec<String> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(measure(&r, &["c".into()]), (0.2, 1.0, 1.0 / 3.0));
    assert_eq!(measure(&r, &["f".into()]), (0.0, 0.0, 1.0 / 6.0));
    assert_eq!(measure(&r, &["a".into(), "b".into()]), (0.4, 1.0, 1.0));
}

/// A word more memories hold than `RANKED_MATCHES` is ranked among the newest of them, in a
/// recall and in `moss_search`'s memory hits: the best match by its words, stored before
/// `RANKED_MATCHES` newer ones, is left out; before the cap it came first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_word_in_more_memories_than_the_cap_is_ranked_among_the_newest() {
    let cap = moss_daemon::search_text::RANKED_MATCHES;
    let dir = tempfile::tempdir().unwrap();
    let (store, _threads) = moss_daemon::schema::open_default(&dir.path().join("moss.db")).unwrap();
    let config = Arc::new(Config::default());
    let mem = Memories::new(store.clone(), config.clone(), dir.path().to_path_buf());
    let stored = |content: String| MemoryStoreRequest {
        content,
        workspace: Some("w".into()),
        ..Default::default()
    };
    let oldest = mem
        .store(stored("zebra zebra zebra okapi".into()))
        .await
        .unwrap()
        .memory
        .id;
    for i in 0..cap {
        let text = format!("zebra seen once among many other words of filler number {i}");
        mem.store(stored(text)).await.unwrap();
    }
    let queued = store.index_queued(&MEMORIES);
    assert!(
        store
            .index_reached(&MEMORIES, queued, Duration::from_secs(60))
            .await
    );
    let req = MemoryRecallRequest {
        query: Some("zebra".into()),
        workspace: Some("w".into()),
        limit: Some(100),
        ..Default::default()
    };
    let query = rank::Query::from_recall(&req, config.memory.recency_half_life_days).unwrap();
    let now = moss_daemon::store::now();
    let (recalled, searched) = store
        .readers
        .run_db(move |db| {
            let recalled = rank::recall(db, &query, rank::word_matches(db, &query)?, now)?;
            let searched =
                moss_daemon::memory::interface::search_hits(db, "zebra", Some("w"), 100)?;
            Ok((recalled, searched))
        })
        .await
        .unwrap();
    assert_eq!(recalled.items.len(), 100);
    assert!(
        recalled.items.iter().all(|r| r.memory.id != oldest),
        "the oldest match is past the cap"
    );
    assert_eq!(searched.len(), 100);
    assert!(searched.iter().all(|h| h.id != oldest));
    // A word only the oldest holds still finds it.
    let hits = store
        .readers
        .run_db(|db| moss_daemon::memory::interface::search_hits(db, "okapi", Some("w"), 10))
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].id, oldest);
}
