//! Times the sentence-embedding model on memory-like texts and capsule passages, in several
//! ways of batching them, and prints texts/s and CPU time per wall time for each.
//!
//! ```text
//! cargo run --release -p moss-daemon --example embed_speed -- /path/to/model [variant...]
//! ```
//!
//! The texts are made here (deterministic): 512 memories of one to four sentences and 64
//! passages of about 1,000 characters, as a capsule is cut. They are embedded as the embedder
//! does, 16 at a time (`one-thread`: on a pool of one thread; `alone`: one text a call, and how
//! far each vector is from the one made in its step). CPU time over wall time shows how much
//! of the machine the run got: divide texts/s by it for texts per CPU-second, the figure that
//! compares runs on a shared machine.

use std::path::PathBuf;
use std::time::Instant;

use moss_daemon::store::semantic::Model;

const SUBJECTS: [&str; 8] = [
    "the api gateway",
    "our billing service",
    "the nightly export job",
    "the login page",
    "the search indexer",
    "the mobile client",
    "the payment webhook",
    "the admin dashboard",
];
const VERBS: [&str; 6] = [
    "times out on",
    "rejects",
    "double-counts",
    "silently drops",
    "mishandles",
    "retries forever on",
];
const OBJECTS: [&str; 10] = [
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
];
const OUTCOMES: [&str; 8] = [
    "so we pinned the previous version",
    "and the fix is to raise the timeout",
    "which we decided to accept for now",
    "so the team prefers a queue in front of it",
    "and a feature flag turns the new path off",
    "until the vendor ships a patch",
    "and the runbook explains the manual workaround",
    "so indentation is enforced by the formatter",
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn sentence(rng: &mut Rng) -> String {
    let s = SUBJECTS[rng.pick(SUBJECTS.len())];
    let v = VERBS[rng.pick(VERBS.len())];
    let o = OBJECTS[rng.pick(OBJECTS.len())];
    let x = OUTCOMES[rng.pick(OUTCOMES.len())];
    format!("{}{} {v} {o} {x}.", s[..1].to_uppercase(), &s[1..])
}

fn memories(n: usize) -> Vec<String> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    (0..n)
        .map(|_| {
            let k = 1 + rng.pick(4);
            (0..k)
                .map(|_| sentence(&mut rng))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn passages(n: usize) -> Vec<String> {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    (0..n)
        .map(|i| {
            let mut t = format!("## Section {i}\n");
            let want = 700 + rng.pick(300);
            while t.len() < want {
                t.push_str(&sentence(&mut rng));
                t.push(' ');
            }
            t
        })
        .collect()
}

/// The process's CPU time (user + system), in seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields 14 and 15 of stat (utime, stime), counted after the command's ')'.
    (ticks(11) + ticks(12)) / 100.0
}

fn time(
    label: &str,
    texts: &[String],
    pool: &rayon::ThreadPool,
    embed: impl Fn(&[&str]) -> Vec<Vec<f32>> + Sync,
) -> Vec<Vec<f32>> {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let cpu = cpu_seconds();
    let started = Instant::now();
    let mut out = Vec::with_capacity(refs.len());
    for step in refs.chunks(16) {
        out.extend(pool.install(|| embed(step)));
    }
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu;
    println!(
        "{label:<36} {:>6.1} texts/s {:>7.2} s  cpu/wall {:.2}  {:>6.1} texts per CPU-second",
        refs.len() as f64 / wall,
        wall,
        cpu / wall,
        refs.len() as f64 / cpu.max(0.01)
    );
    out
}

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .expect("usage: embed_speed MODEL_DIR [variant...]"),
    );
    let only: Vec<String> = args.collect();
    let want = |v: &str| only.is_empty() || only.iter().any(|o| o == v);
    let model = Model::load(&dir).expect("model");
    let mems = memories(512);
    let caps = passages(64);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{} memories (mean {} chars), {} passages (mean {} chars), {threads} threads",
        mems.len(),
        mems.iter().map(String::len).sum::<usize>() / mems.len(),
        caps.len(),
        caps.iter().map(String::len).sum::<usize>() / caps.len()
    );
    let pool = |n: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .expect("pool")
    };
    let pool_n = pool(threads);
    let pool_1 = pool(1);
    // Warm up.
    let _ = model.embed(&mems.iter().take(16).map(String::as_str).collect::<Vec<_>>());
    let embed = |t: &[&str]| model.embed(t).expect("embed");
    let alone = |t: &[&str]| {
        t.iter()
            .flat_map(|x| model.embed(&[x]).expect("embed"))
            .collect()
    };
    if want("query") {
        // Questions as a search embeds them: one at a time, on the caller's thread.
        let questions: Vec<String> = memories(200)
            .iter()
            .map(|m| m.split_whitespace().take(8).collect::<Vec<_>>().join(" "))
            .collect();
        let mut ms: Vec<f64> = questions
            .iter()
            .map(|q| {
                let t = Instant::now();
                model.embed(&[q.as_str()]).expect("embed");
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        println!(
            "questions one at a time: p50 {:.2} ms, p95 {:.2} ms",
            ms[ms.len() / 2],
            ms[ms.len() * 95 / 100]
        );
        if only.iter().all(|o| o == "query") {
            return;
        }
    }
    for (name, texts) in [("memories", &mems), ("passages", &caps)] {
        let steps = time(&format!("{name}: steps of 16"), texts, &pool_n, embed);
        if want("one-thread") {
            time(
                &format!("{name}: steps of 16, 1 thread"),
                texts,
                &pool_1,
                embed,
            );
        }
        if want("alone") {
            let one = time(&format!("{name}: one text a call"), texts, &pool_n, alone);
            let worst = steps
                .iter()
                .zip(&one)
                .map(|(x, y)| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>())
                .fold(1.0f32, f32::min);
            println!("{name}: lowest cosine between a text alone and in its step {worst:.6}");
        }
    }
}
