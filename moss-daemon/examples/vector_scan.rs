//! Times the exact scan of the vector index on its own: p50 and p95 of 50 queries.
//!
//! ```text
//! cargo run --release -p moss-daemon --example vector_scan -- [passages[:asked]...]
//! ```
//!
//! Default: 12,000, 100,000 and 300,000 passages of 384 dimensions, 100 items asked (5,000 for
//! 300,000, as `capsule_search` asks before it filters). The vectors are made here
//! (deterministic) around one direction, as a domain's sentences are, so that nearly every
//! passage is above the similarity floor and the selection of the best has the most to do.

use std::time::Instant;

use moss_daemon::store::semantic::vectors::{Quantized, Vectors};

const DIMS: usize = 384;

/// A deterministic generator (xorshift), so that runs compare.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    }

    /// A unit vector near `around`.
    fn near(&mut self, around: &[f32]) -> Vec<f32> {
        let v: Vec<f32> = around.iter().map(|a| a + 0.6 * self.next()).collect();
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.into_iter().map(|x| x / n).collect()
    }
}

fn main() {
    let sizes: Vec<(usize, usize)> = {
        let args: Vec<String> = std::env::args().skip(1).collect();
        if args.is_empty() {
            vec![(12_000, 100), (100_000, 100), (300_000, 5_000)]
        } else {
            args.iter()
                .map(|a| {
                    let (n, k) = a.split_once(':').unwrap_or((a, "100"));
                    (
                        n.parse().expect("passages: a number"),
                        k.parse().expect("asked: a number"),
                    )
                })
                .collect()
        }
    };
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let centre: Vec<f32> = (0..DIMS).map(|_| rng.next()).collect();
    for (n, k) in sizes {
        let mut v = Vectors::new(DIMS);
        for i in 0..n {
            // Three passages an item, as a capsule's.
            let q = Quantized::from_unit(&rng.near(&centre));
            v.add((i / 3) as i64 + 1, (i % 3) as i64, "bench", &q);
        }
        let queries: Vec<Vec<f32>> = (0..50).map(|_| rng.near(&centre)).collect();
        // Warm up.
        let found = v.nearest(&queries[0], None, k, 0.2).len();
        let mut ms: Vec<f64> = queries
            .iter()
            .map(|q| {
                let t = Instant::now();
                std::hint::black_box(v.nearest(q, None, k, 0.2));
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        println!(
            "{n:>7} passages, {k:>5} asked ({found} found): p50 {:.2} ms, p95 {:.2} ms",
            ms[ms.len() / 2],
            ms[ms.len() * 95 / 100]
        );
    }
}
