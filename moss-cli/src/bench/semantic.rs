//! `moss bench --semantic`: semantic and hybrid search at scale, against a daemon with an
//! embedding model (`embeddings.model_dir`).
//!
//! 1. **The corpus**, in one workspace (a fresh `bench-semantic-<ulid>` unless `--workspace`
//!    is given; what it already holds counts): `--memories` memories of a sentence or two, then
//!    `--semantic-capsules` capsules of `--size` bytes, each written by `--clients` (at least 8)
//!    writers, in English drawn from a small vocabulary of software topics, so that questions
//!    about those topics are near some items and far from others.
//! 2. **Embedding throughput**: after each family's load (and once the full-text index has
//!    caught up), `GET /status` every second until `semantic.behind` is 0; items and passages
//!    embedded per second over that catch-up.
//! 3. **The index's size**: `semantic.memory_bytes`, and the vector file's bytes when the
//!    daemon's home is on this machine.
//! 4. **Query latency, one client**, for `memory_recall`, `moss_search` and `capsule_search`:
//!    `--queries` distinct questions in `hybrid` mode, as many others in `semantic` mode (the
//!    daemon keeps the vectors of recent queries, so a repeated question would not be embedded
//!    again), the semantic ones again (their vectors cached: the scan and the rest of the call
//!    without the query's embedding), and the hybrid ones in `keyword` mode (the keyword part
//!    alone).

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use moss_client::Client;
use moss_client::capsule::{SearchRequest as CapsuleSearch, StoreRequest};
use moss_client::memory::{MemoryRecallRequest, MemoryStoreRequest};
use moss_client::moss::{SearchRequest as MossSearch, WorkspacesRequest};
use moss_client::search::SearchMode;
use serde::Serialize;

use super::load::{OpReport, XorShift, index_catch_up};
use crate::output::outln;

const SUBJECTS: [&str; 24] = [
    "the deploy script",
    "our CI pipeline",
    "the auth service",
    "the billing worker",
    "the search index",
    "the mobile client",
    "the payment gateway",
    "the metrics exporter",
    "the database migration",
    "the cache layer",
    "the release checklist",
    "the onboarding flow",
    "the config loader",
    "the job scheduler",
    "the API gateway",
    "the email sender",
    "the feature flag service",
    "the backup cron job",
    "the websocket server",
    "the image resizer",
    "the rate limiter",
    "the logging agent",
    "the test harness",
    "the admin dashboard",
];
const VERBS: [&str; 16] = [
    "times out on",
    "retries",
    "drops",
    "caches",
    "validates",
    "logs",
    "rejects",
    "duplicates",
    "slowly serializes",
    "silently skips",
    "locks",
    "compresses",
    "encrypts",
    "batches",
    "reorders",
    "leaks memory on",
];
const OBJECTS: [&str; 24] = [
    "large uploads",
    "expired tokens",
    "unicode file names",
    "empty requests",
    "nested JSON payloads",
    "daylight saving changes",
    "concurrent writes",
    "stale sessions",
    "partial refunds",
    "long-running queries",
    "signed cookies",
    "retry storms",
    "bulk imports",
    "webhook callbacks",
    "schema changes",
    "cold starts",
    "user avatars",
    "password resets",
    "invoice exports",
    "rollbacks",
    "tab-indented files",
    "Windows line endings",
    "slow DNS lookups",
    "TLS renewals",
];
const OUTCOMES: [&str; 12] = [
    "so we pinned the previous version",
    "and the fix is to raise the timeout",
    "which we decided to accept for now",
    "so the team prefers a queue in front of it",
    "and a feature flag turns the new path off",
    "so reviews now check for it",
    "until the vendor ships a patch",
    "and the runbook explains the manual workaround",
    "so alerts fire at five percent errors",
    "which broke the nightly build twice",
    "and we chose signed bearer tokens instead",
    "so indentation is enforced by the formatter",
];

/// A sentence drawn by `rng`.
fn sentence(rng: &mut XorShift) -> String {
    let mut pick = |n: usize| (rng.next() % n as u64) as usize;
    let (s, v, o, x) = (
        pick(SUBJECTS.len()),
        pick(VERBS.len()),
        pick(OBJECTS.len()),
        pick(OUTCOMES.len()),
    );
    let subject = SUBJECTS[s];
    let mut first = subject[..1].to_uppercase();
    first.push_str(&subject[1..]);
    format!("{first} {} {} {}.", VERBS[v], OBJECTS[o], OUTCOMES[x])
}

/// Corpus memory `i`: two sentences.
fn memory_text(i: u64) -> String {
    let mut rng = XorShift(i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    format!("{} {}", sentence(&mut rng), sentence(&mut rng))
}

/// Corpus capsule `i`: the usual sections, in sentences, `size` bytes or a sentence more.
fn capsule_text(i: u64, size: usize) -> String {
    let mut rng = XorShift(i.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
    let mut text = String::new();
    let sections = [
        "Objective",
        "Current status",
        "Decisions",
        "Next actions",
        "Key locations",
        "Open questions",
    ];
    let per = (size / sections.len()).max(80);
    for name in sections {
        text.push_str(&format!("## {name}\n"));
        let start = text.len();
        while text.len() - start < per && text.len() < size {
            text.push_str(&sentence(&mut rng));
            text.push(' ');
        }
        text.push('\n');
    }
    text
}

/// `count` distinct questions, the `set`-th batch: no two batches share a question.
fn questions(set: u64, count: usize) -> Vec<String> {
    const FORMS: [&str; 6] = [
        "why {s} {v} {o}",
        "what did we decide when {s} {v} {o}?",
        "is there a workaround for when {s} {v} {o}",
        "we saw that {s} {v} {o}, is that known?",
        "find the note saying {s} {v} {o}",
        "who found out that {s} {v} {o}",
    ];
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(count);
    let mut k = 0u64;
    // Every question of every batch is one index of the product of the lists, so batches are
    // disjoint: batch `set` takes indices `set * count ..`, spread by a multiplier coprime with
    // the product.
    let space = (FORMS.len() * SUBJECTS.len() * VERBS.len() * OBJECTS.len()) as u64;
    while out.len() < count {
        let n = ((set * count as u64 + k) * 7_919) % space;
        k += 1;
        let f = (n % FORMS.len() as u64) as usize;
        let s = (n / FORMS.len() as u64 % SUBJECTS.len() as u64) as usize;
        let v = (n / (FORMS.len() * SUBJECTS.len()) as u64 % VERBS.len() as u64) as usize;
        let o = (n / (FORMS.len() * SUBJECTS.len() * VERBS.len()) as u64) as usize % OBJECTS.len();
        let q = FORMS[f]
            .replace("{s}", SUBJECTS[s])
            .replace("{v}", VERBS[v])
            .replace("{o}", OBJECTS[o]);
        if seen.insert(q.clone()) {
            out.push(q);
        }
    }
    out
}

/// How the embedder caught up after a load.
#[derive(Debug, Serialize)]
struct CatchUp {
    source: String,
    /// Changes still to embed when the measure began.
    behind_at_start: i64,
    seconds: f64,
    /// Items of the source that gained vectors.
    items: u64,
    /// Passages embedded (an item has one per passage of its text).
    passages: u64,
    items_per_s: f64,
    passages_per_s: f64,
}

/// Samples `GET /status` every second until `semantic.behind` is 0, or `bound` passes.
async fn catch_up(client: &Client, source: &str, bound: Duration) -> anyhow::Result<CatchUp> {
    let read = |s: &moss_client::daemon::DaemonStatus| -> anyhow::Result<(i64, u64, u64)> {
        let sem = s
            .semantic
            .as_ref()
            .filter(|m| m.state == "ready")
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "semantic search is not on in this daemon ({}): --semantic needs \
                 embeddings.model_dir in its config.json (see the README, \"Semantic search\")",
                    s.semantic
                        .as_ref()
                        .map_or("absent".to_string(), |m| m.state.clone())
                )
            })?;
        let items = sem
            .sources
            .iter()
            .find(|x| x.source == source)
            .map_or(0, |x| x.items);
        Ok((sem.behind, sem.embedded, items))
    };
    // A daemon that just started loads its vectors from the file first: those are not
    // embedded now, so the measure begins once the model is ready.
    let began = Instant::now();
    let mut status = client.status().await?;
    while status
        .semantic
        .as_ref()
        .is_some_and(|m| m.state == "loading")
    {
        if began.elapsed() > bound {
            anyhow::bail!("the embedding model did not load in {} s", bound.as_secs());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        status = client.status().await?;
    }
    let start = Instant::now();
    let (behind0, embedded0, items0) = read(&status)?;
    let mut last_print = Instant::now();
    let (mut embedded, mut items, mut behind) = (embedded0, items0, behind0);
    while behind > 0 {
        if start.elapsed() > bound {
            anyhow::bail!(
                "the embedder is still {behind} changes behind after {} s ({} passages embedded \
                 meanwhile, {:.1}/s); run again with a larger --semantic-wait or fewer items",
                bound.as_secs(),
                embedded - embedded0,
                (embedded - embedded0) as f64 / start.elapsed().as_secs_f64()
            );
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        (behind, embedded, items) = read(&client.status().await?)?;
        if last_print.elapsed() >= Duration::from_secs(30) {
            last_print = Instant::now();
            let secs = start.elapsed().as_secs_f64();
            eprintln!(
                "  embedding {source}: {behind} behind, {:.1} items/s, {:.1} passages/s",
                (items - items0) as f64 / secs,
                (embedded - embedded0) as f64 / secs
            );
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(CatchUp {
        source: source.to_string(),
        behind_at_start: behind0,
        seconds,
        items: items - items0,
        passages: embedded - embedded0,
        items_per_s: (items - items0) as f64 / seconds.max(1e-9),
        passages_per_s: (embedded - embedded0) as f64 / seconds.max(1e-9),
    })
}

/// Runs `store(i)` for `i` in `have..want` with `writers` concurrent writers.
async fn fill<F, Fut>(have: u64, want: u64, writers: usize, store: F) -> anyhow::Result<f64>
where
    F: Fn(u64) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<()>> + Send,
{
    let start = Instant::now();
    let store = Arc::new(store);
    let next = Arc::new(AtomicU64::new(have));
    let mut tasks = Vec::new();
    for _ in 0..writers {
        let (store, next) = (store.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= want {
                    return Ok::<(), anyhow::Error>(());
                }
                store(i).await?;
                if i.is_multiple_of(10_000) && i > have {
                    eprintln!("  stored {i} / {want}");
                }
            }
        }));
    }
    for t in tasks {
        t.await??;
    }
    Ok(start.elapsed().as_secs_f64())
}

/// The calls timed.
#[derive(Debug, Clone, Copy)]
enum Call {
    Recall,
    Moss,
    Capsules,
}

impl Call {
    fn name(self) -> &'static str {
        match self {
            Call::Recall => "memory_recall",
            Call::Moss => "moss_search",
            Call::Capsules => "capsule_search",
        }
    }

    async fn run(
        self,
        c: &Client,
        ws: &str,
        query: String,
        mode: SearchMode,
    ) -> Result<(), String> {
        let e = |e: moss_client::ClientError| e.to_string();
        match self {
            Call::Recall => c
                .memories()
                .recall(&MemoryRecallRequest {
                    query: Some(query),
                    safe_query: Some(true),
                    workspace: Some(ws.to_string()),
                    mode: Some(mode),
                    ..Default::default()
                })
                .await
                .map(drop)
                .map_err(e),
            Call::Moss => c
                .moss()
                .search(&MossSearch {
                    query,
                    safe_query: Some(true),
                    workspace: Some(ws.to_string()),
                    mode: Some(mode),
                    ..Default::default()
                })
                .await
                .map(drop)
                .map_err(e),
            Call::Capsules => c
                .capsules()
                .search(&CapsuleSearch {
                    query,
                    safe_query: Some(true),
                    workspace: Some(ws.to_string()),
                    mode: Some(mode),
                    ..Default::default()
                })
                .await
                .map(drop)
                .map_err(e),
        }
    }
}

/// One call's latencies, one client.
#[derive(Debug, Serialize)]
struct CallReport {
    call: &'static str,
    /// Distinct questions, each embedded by the daemon.
    hybrid: OpReport,
    semantic: OpReport,
    /// The semantic questions again: their vectors come from the daemon's cache.
    semantic_cached: OpReport,
    /// The hybrid questions in keyword mode: the keyword part alone.
    keyword: OpReport,
}

/// Times `queries` one after another.
async fn time(c: &Client, ws: &str, call: Call, mode: SearchMode, queries: &[String]) -> OpReport {
    let mut lat = Vec::with_capacity(queries.len());
    let mut errors = 0;
    let mut first_error = None;
    let start = Instant::now();
    for q in queries {
        let t = Instant::now();
        match call.run(c, ws, q.clone(), mode).await {
            Ok(()) => lat.push(t.elapsed()),
            Err(e) => {
                errors += 1;
                first_error.get_or_insert(e);
            }
        }
    }
    let mut r = OpReport::from_latencies(lat, errors, start.elapsed());
    r.first_error = first_error;
    r
}

#[derive(Debug, Serialize)]
struct SemanticReport {
    addr: String,
    workspace: String,
    model: Option<String>,
    memories: u64,
    capsules: u64,
    size_bytes: usize,
    fill_memories_s: f64,
    fill_capsules_s: f64,
    /// The embedder's catch-up after each load (absent when nothing was loaded).
    catch_up: Vec<CatchUp>,
    /// Items and passages with vectors, over every source.
    items: u64,
    passages: u64,
    /// `semantic.memory_bytes`.
    memory_bytes: u64,
    /// The vector file (with its write-ahead log), when the daemon's home is on this machine.
    file_bytes: Option<u64>,
    queries: usize,
    calls: Vec<CallReport>,
}

pub struct Sizes {
    pub memories: u64,
    pub capsules: u64,
    pub size: usize,
    pub clients: usize,
    pub queries: usize,
    pub wait: Duration,
}

pub async fn run(
    client: &Client,
    workspace: Option<String>,
    sizes: Sizes,
    json: bool,
) -> anyhow::Result<()> {
    let status = client.status().await?;
    if status.semantic.as_ref().is_none_or(|s| s.state == "off") {
        anyhow::bail!(
            "semantic search is off on the daemon at {}: --semantic needs embeddings.model_dir \
             in its config.json (see the README, \"Semantic search\")",
            client.addr()
        );
    }
    let ws = workspace.unwrap_or_else(|| {
        format!(
            "bench-semantic-{}",
            ulid::Ulid::generate().to_string().to_lowercase()
        )
    });
    let counts = client
        .moss()
        .workspaces(&WorkspacesRequest {})
        .await?
        .items
        .into_iter()
        .find(|w| w.workspace == ws)
        .map(|w| w.counts);
    let (have_m, have_c) = counts.map_or((0, 0), |c| (c.memories as u64, c.capsules as u64));
    let writers = sizes.clients.max(8);
    let mut catch = Vec::new();

    let mut fill_memories_s = 0.0;
    if have_m < sizes.memories {
        eprintln!("storing memories {have_m}..{} in {ws:?}", sizes.memories);
        let (c, w) = (client.clone(), ws.clone());
        fill_memories_s = fill(have_m, sizes.memories, writers, move |i| {
            let (c, w) = (c.clone(), w.clone());
            async move {
                c.memories()
                    .store(&MemoryStoreRequest {
                        content: memory_text(i),
                        workspace: Some(w),
                        ..Default::default()
                    })
                    .await?;
                Ok(())
            }
        })
        .await?;
        index_catch_up(client, Duration::from_secs_f64(fill_memories_s)).await?;
    }
    eprintln!("waiting for the embedder (memories)…");
    catch.push(catch_up(client, "memories", sizes.wait).await?);

    let mut fill_capsules_s = 0.0;
    if have_c < sizes.capsules {
        eprintln!("storing capsules {have_c}..{} in {ws:?}", sizes.capsules);
        let (c, w, size) = (client.clone(), ws.clone(), sizes.size);
        fill_capsules_s = fill(have_c, sizes.capsules, writers, move |i| {
            let (c, w) = (c.clone(), w.clone());
            async move {
                c.capsules()
                    .store(&StoreRequest {
                        capsule_text: capsule_text(i, size),
                        workspace: Some(w),
                        name: Some(format!("sem{i}")),
                        source: Some("moss-bench".into()),
                        ..Default::default()
                    })
                    .await?;
                Ok(())
            }
        })
        .await?;
        index_catch_up(client, Duration::from_secs_f64(fill_capsules_s)).await?;
    }
    eprintln!("waiting for the embedder (capsules)…");
    catch.push(catch_up(client, "capsules", sizes.wait).await?);
    catch.retain(|c| c.behind_at_start > 0);

    let status = client.status().await?;
    let sem = status
        .semantic
        .clone()
        .ok_or_else(|| anyhow::anyhow!("the daemon's status no longer reports semantic search"))?;
    let file = std::path::Path::new(&status.home).join("moss-vectors.db");
    let file_bytes = std::fs::metadata(&file).ok().map(|m| {
        m.len()
            + std::fs::metadata(file.with_file_name("moss-vectors.db-wal")).map_or(0, |w| w.len())
    });

    let mut calls = Vec::new();
    let mut set = 0;
    for call in [Call::Recall, Call::Moss, Call::Capsules] {
        let hybrid_q = questions(set, sizes.queries);
        let semantic_q = questions(set + 1, sizes.queries);
        set += 2;
        eprintln!("timing {}…", call.name());
        let hybrid = time(client, &ws, call, SearchMode::Hybrid, &hybrid_q).await;
        let semantic = time(client, &ws, call, SearchMode::Semantic, &semantic_q).await;
        let semantic_cached = time(client, &ws, call, SearchMode::Semantic, &semantic_q).await;
        let keyword = time(client, &ws, call, SearchMode::Keyword, &hybrid_q).await;
        calls.push(CallReport {
            call: call.name(),
            hybrid,
            semantic,
            semantic_cached,
            keyword,
        });
    }

    let report = SemanticReport {
        addr: client.addr().to_string(),
        workspace: ws,
        model: sem.model.clone(),
        memories: sizes.memories.max(have_m),
        capsules: sizes.capsules.max(have_c),
        size_bytes: sizes.size,
        fill_memories_s,
        fill_capsules_s,
        catch_up: catch,
        items: sem.sources.iter().map(|s| s.items).sum(),
        passages: sem.sources.iter().map(|s| s.passages).sum(),
        memory_bytes: sem.memory_bytes,
        file_bytes,
        queries: sizes.queries,
        calls,
    };
    if json {
        outln!("{}", serde_json::to_string(&report)?)?;
        return Ok(());
    }
    outln!(
        "moss bench --semantic: {} memories and {} capsules of {} bytes in {:?}, daemon at {}",
        report.memories,
        report.capsules,
        report.size_bytes,
        report.workspace,
        report.addr
    )?;
    for c in &report.catch_up {
        outln!(
            "embedding {:<9} {:>8.1} items/s {:>8.1} passages/s  ({} items, {} passages in {:.0} s)",
            c.source,
            c.items_per_s,
            c.passages_per_s,
            c.items,
            c.passages,
            c.seconds
        )?;
    }
    outln!(
        "index: {} items, {} passages; {:.1} MB in memory; vector file {}",
        report.items,
        report.passages,
        report.memory_bytes as f64 / 1e6,
        report
            .file_bytes
            .map_or("not on this machine".to_string(), |b| format!(
                "{:.1} MB",
                b as f64 / 1e6
            ))
    )?;
    outln!(
        "{:<36} {:>8} {:>9} {:>9} {:>9} {:>9} {:>7}",
        "call, mode (one client)",
        "ops",
        "ops/s",
        "p50 ms",
        "p95 ms",
        "p99 ms",
        "errors"
    )?;
    for c in &report.calls {
        for (mode, op, target) in [
            ("hybrid", &c.hybrid, "(target p95 < 25 ms)"),
            ("semantic", &c.semantic, ""),
            ("semantic, query vector cached", &c.semantic_cached, ""),
            ("keyword", &c.keyword, ""),
        ] {
            op.print_row(&format!("{} {mode}", c.call), 36, target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_batches_are_distinct_and_disjoint() {
        let a = questions(0, 200);
        let b = questions(1, 200);
        assert_eq!(a.iter().collect::<HashSet<_>>().len(), 200);
        assert!(a.iter().all(|q| !b.contains(q)), "batches share a question");
    }

    #[test]
    fn corpus_texts_are_sentences_of_the_asked_size() {
        let m = memory_text(7);
        assert!(m.ends_with('.') && m.len() < 300, "{m}");
        let c = capsule_text(7, 2048);
        assert!(c.starts_with("## Objective\n") && c.contains("## Open questions\n"));
        assert!((2048..2048 + 200).contains(&c.len()), "{}", c.len());
    }
}
