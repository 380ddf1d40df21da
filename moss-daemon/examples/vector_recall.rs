//! How much of the full comparison a search over many passages keeps when it shortlists by the
//! components' signs first (`Vectors::nearest` against `Vectors::nearest_exact`), on a real
//! store's vectors and questions made of its own memories, and how long each takes.
//!
//! ```text
//! cargo run --release -p moss-daemon --example vector_recall -- MOSS_HOME MODEL_DIR [questions]
//! ```
//!
//! Reads the memories' vectors from `MOSS_HOME/moss-vectors.db` (the model must be the one they
//! were made with) and, for questions, the first words of memories picked evenly from
//! `MOSS_HOME/moss.db`. Prints, for 10 and 100 items asked, the share of the exact answer's
//! items the shortlisted answer holds (recall), and each search's p50 and p95. Run it on a
//! store the daemon is not writing to.

use std::path::PathBuf;
use std::time::Instant;

use moss_daemon::store::semantic::Model;
use moss_daemon::store::semantic::vectors::{Quantized, Vectors};
use rusqlite::{Connection, OpenFlags};

fn main() {
    let mut args = std::env::args().skip(1);
    let usage = "usage: vector_recall MOSS_HOME MODEL_DIR [questions]";
    let home = PathBuf::from(args.next().expect(usage));
    let model = Model::load(&PathBuf::from(args.next().expect(usage))).expect("the model loads");
    let questions: usize = args.next().map_or(200, |n| n.parse().expect(usage));
    let open = |name: &str| {
        Connection::open_with_flags(home.join(name), OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap_or_else(|e| panic!("opening {name}: {e}"))
    };
    let mut vectors = Vectors::new(model.dims);
    {
        let file = open("moss-vectors.db");
        let mut stmt = file
            .prepare("SELECT doc, chunk, workspace, v FROM vectors WHERE source = 'memories'")
            .expect("the vectors table");
        let mut rows = stmt.query([]).expect("reading vectors");
        while let Some(r) = rows.next().expect("a row") {
            let blob: Vec<u8> = r.get(3).expect("v");
            if let Some(q) = Quantized::from_blob(&blob) {
                let ws: String = r.get(2).expect("workspace");
                vectors.add(r.get(0).expect("doc"), r.get(1).expect("chunk"), &ws, &q);
            }
        }
    }
    let texts: Vec<String> = {
        let db = open("moss.db");
        let count: i64 = db
            .query_row("SELECT count(*) FROM memories", [], |r| r.get(0))
            .expect("memories");
        let step = (count / questions as i64).max(1);
        let mut stmt = db
            .prepare("SELECT content FROM memories WHERE rid % ?1 = 0 LIMIT ?2")
            .expect("memories");
        stmt.query_map(rusqlite::params![step, questions as i64], |r| {
            r.get::<_, String>(0)
        })
        .expect("memories")
        .map(|c| {
            c.expect("content")
                .split_whitespace()
                .take(6)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
    };
    println!(
        "{} passages of {} items, {} questions",
        vectors.len(),
        vectors.items(),
        texts.len()
    );
    let asked: Vec<Vec<f32>> = texts
        .iter()
        .map(|t| model.embed(&[t.as_str()]).expect("embedding").remove(0))
        .collect();
    let pct = |v: &mut Vec<f64>, p: usize| {
        v.sort_by(f64::total_cmp);
        v[(v.len() * p / 100).min(v.len() - 1)]
    };
    for k in [10, 100] {
        let (mut exact_ms, mut short_ms, mut kept, mut total) = (Vec::new(), Vec::new(), 0, 0);
        for q in &asked {
            let t = Instant::now();
            let exact = vectors.nearest_exact(q, None, k, 0.0);
            exact_ms.push(t.elapsed().as_secs_f64() * 1e3);
            let t = Instant::now();
            let short = vectors.nearest(q, None, k, 0.0);
            short_ms.push(t.elapsed().as_secs_f64() * 1e3);
            total += exact.len();
            kept += exact
                .iter()
                .filter(|e| short.iter().any(|s| s.doc == e.doc))
                .count();
        }
        println!(
            "k {k:>3}: recall {:.4} ({kept} of {total}); exact p50 {:.2} ms p95 {:.2} ms; \
             shortlisted p50 {:.2} ms p95 {:.2} ms",
            kept as f64 / total.max(1) as f64,
            pct(&mut exact_ms, 50),
            pct(&mut exact_ms, 95),
            pct(&mut short_ms, 50),
            pct(&mut short_ms, 95),
        );
    }
}
