//! What every benchmark run uses: the phase driver (`clients` concurrent loops for a duration,
//! each request timed), the figures of one operation, synthetic capsules of a given size, a
//! small random generator, and the wait for the daemon's full-text index.

use std::sync::Arc;
use std::time::{Duration, Instant};

use moss_client::Client;
use serde::Serialize;

use crate::output::outln;

/// Figures for one operation.
#[derive(Debug, Serialize)]
pub struct OpReport {
    pub ops: u64,
    pub errors: u64,
    pub throughput: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
}

impl OpReport {
    /// Figures from individual latencies measured over `elapsed`.
    pub fn from_latencies(mut lat: Vec<Duration>, errors: u64, elapsed: Duration) -> OpReport {
        lat.sort_unstable();
        let pct = |p: f64| -> f64 {
            if lat.is_empty() {
                return 0.0;
            }
            let i = ((lat.len() as f64 * p).ceil() as usize).clamp(1, lat.len()) - 1;
            lat[i].as_secs_f64() * 1000.0
        };
        OpReport {
            ops: lat.len() as u64,
            errors,
            throughput: lat.len() as f64 / elapsed.as_secs_f64().max(1e-9),
            p50_ms: pct(0.50),
            p95_ms: pct(0.95),
            p99_ms: pct(0.99),
            first_error: None,
        }
    }

    /// Prints the operation as a row of a column table: ops, ops/s, p50, p95, p99, errors and
    /// the target (if any), then its first error.
    pub fn print_row(&self, name: &str, width: usize, target: &str) -> anyhow::Result<()> {
        let row = format!(
            "{name:<width$} {:>8} {:>9.0} {:>9.3} {:>9.3} {:>9.3} {:>7}  {target}",
            self.ops, self.throughput, self.p50_ms, self.p95_ms, self.p99_ms, self.errors
        );
        outln!("{}", row.trim_end())?;
        if let Some(e) = &self.first_error {
            outln!("  first error: {e}")?;
        }
        Ok(())
    }

    /// Prints the operation as one line: ops/s, p50, p95, p99, errors and the target (if any).
    pub fn print_line(&self, name: &str, width: usize, target: &str) -> anyhow::Result<()> {
        let line = format!(
            "{name:<width$} {:>9.0}/s  p50 {:>7.2} ms  p95 {:>7.2} ms  p99 {:>7.2} ms  errors {}  \
             {target}",
            self.throughput, self.p50_ms, self.p95_ms, self.p99_ms, self.errors
        );
        outln!("{}", line.trim_end())?;
        Ok(())
    }
}

#[derive(Default)]
struct Samples {
    lat_us: Vec<u32>,
    errors: u64,
    first_error: Option<String>,
}

/// A capsule that passes the lint, padded to exactly `size` bytes with words drawn by `seed`
/// from a synthetic vocabulary of a few thousand terms, so the full-text index does the work
/// real, varied text makes it do (identical texts would flatter it).
pub fn capsule_of_size(size: usize, seed: u64) -> String {
    let mut text = String::from(
        "## Objective\nMeasure Moss.\n## Current status\nRunning.\n## Decisions\nNone.\n\
         ## Next actions\nRead the figures.\n## Key locations\nmoss-cli/src/bench.rs\n\
         ## Open questions\n",
    );
    let floor = text.len();
    push_words(&mut text, size, seed);
    text.truncate(size.max(floor));
    text
}

/// Varied words drawn by `seed` (a line of twelve, then a newline), at least `chars` bytes of
/// them, without a trailing blank.
pub fn words(chars: usize, seed: u64) -> String {
    let mut text = String::with_capacity(chars + 16);
    push_words(&mut text, chars, seed);
    text.truncate(text.trim_end().len());
    text
}

/// Appends words drawn by `seed` until `text` is at least `size` bytes long.
fn push_words(text: &mut String, size: usize, seed: u64) {
    const SYLLABLES: [&str; 16] = [
        "ka", "lo", "mi", "nu", "per", "sta", "tor", "vex", "qui", "ran", "sel", "dor", "fin",
        "gal", "hup", "zer",
    ];
    let mut rng = XorShift(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
    let mut i = 0;
    while text.len() < size {
        let r = rng.next();
        for k in 0..3 {
            text.push_str(SYLLABLES[((r >> (k * 4)) & 15) as usize]);
        }
        text.push(if i % 12 == 11 { '\n' } else { ' ' });
        i += 1;
    }
}

/// Small, fast, good enough to spread fetches over the stored names.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

pub async fn phase<F, Fut>(clients: usize, duration: Duration, op: F) -> (OpReport, Vec<u64>)
where
    F: Fn(usize, u64, &mut XorShift) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send,
{
    let op = Arc::new(op);
    let start = Instant::now();
    let deadline = start + duration;
    let mut tasks = Vec::with_capacity(clients);
    for c in 0..clients {
        let op = op.clone();
        tasks.push(tokio::spawn(async move {
            let mut s = Samples::default();
            let mut rng = XorShift(0x9E37_79B9_7F4A_7C15 ^ (c as u64 + 1));
            let mut n = 0u64;
            while Instant::now() < deadline {
                let t = Instant::now();
                let r = op(c, n, &mut rng).await;
                let us = t.elapsed().as_micros().min(u32::MAX as u128) as u32;
                match r {
                    Ok(()) => {
                        s.lat_us.push(us);
                        n += 1;
                    }
                    Err(e) => {
                        s.errors += 1;
                        s.first_error.get_or_insert(e);
                    }
                }
            }
            (s, n)
        }));
    }
    let mut all = Samples::default();
    let mut per_client = Vec::with_capacity(clients);
    for t in tasks {
        let (s, n) = t.await.expect("bench task");
        all.lat_us.extend(s.lat_us);
        all.errors += s.errors;
        if all.first_error.is_none() {
            all.first_error = s.first_error;
        }
        per_client.push(n);
    }
    let elapsed = start.elapsed().as_secs_f64();
    all.lat_us.sort_unstable();
    let pct = |p: f64| -> f64 {
        if all.lat_us.is_empty() {
            return 0.0;
        }
        let i = ((all.lat_us.len() as f64 * p).ceil() as usize).clamp(1, all.lat_us.len()) - 1;
        all.lat_us[i] as f64 / 1000.0
    };
    let ops = all.lat_us.len() as u64;
    (
        OpReport {
            ops,
            errors: all.errors,
            throughput: ops as f64 / elapsed,
            p50_ms: pct(0.50),
            p95_ms: pct(0.95),
            p99_ms: pct(0.99),
            first_error: all.first_error,
        },
        per_client,
    )
}

/// Waits until the daemon's full-text index holds every write; returns how long that took, or
/// `None` if the daemon does not report its index.
///
/// The indexer mostly rests while stores keep arriving, so after a store phase that saturated
/// the daemon it has most of the phase's writes still to index (about as long again as the
/// phase, at most, on the 2-core development machine): the bound grows with the phase.
pub(crate) async fn index_catch_up(
    client: &Client,
    phase: Duration,
) -> anyhow::Result<Option<f64>> {
    let bound = Duration::from_secs(300) + phase * 3;
    let start = Instant::now();
    loop {
        let status = client.status().await?;
        let Some(behind) = status.index_behind else {
            return Ok(None);
        };
        if behind == 0 {
            return Ok(Some(start.elapsed().as_secs_f64()));
        }
        if start.elapsed() > bound {
            anyhow::bail!(
                "the daemon's full-text index is still {behind} changes behind {} s after the \
                 store phase; see its log ({}/mossd.log, or `journalctl --user -u moss` for the \
                 service)",
                bound.as_secs(),
                status.home
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_capsules_have_the_asked_size() {
        for size in [300, 2048, 8192] {
            let t = capsule_of_size(size, size as u64);
            assert_eq!(t.len(), size);
            assert!(t.contains("## Open questions"));
        }
    }
}
