//! What the engine boundary (`store::engine::Db`) costs on SQLite against rusqlite called
//! directly: the same point lookups and the same range read, both through the statement cache,
//! rounds alternating so that both see the same machine. Prints each round and the medians.
//!
//!   cargo run --release -p moss-daemon --example db_overhead

use std::time::Instant;

use moss_daemon::db_params;
use moss_daemon::store::engine::Db;
use rusqlite::Connection;

const ROWS: i64 = 20_000;
const LOOKUPS: i64 = 200_000;
const RANGES: i64 = 20_000;
const ROUNDS: usize = 7;

fn main() {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE TABLE m (rid INTEGER PRIMARY KEY, id TEXT NOT NULL, workspace TEXT NOT NULL,
                         content TEXT NOT NULL, slot TEXT, weight REAL NOT NULL, seq INTEGER);",
    )
    .unwrap();
    {
        let tx = conn.unchecked_transaction().unwrap();
        let mut ins = tx
            .prepare("INSERT INTO m VALUES (?1, ?2, 'ws', ?3, NULL, ?4, ?1)")
            .unwrap();
        for i in 1..=ROWS {
            ins.execute(rusqlite::params![
                i,
                format!("01J{i:023}"),
                format!("memory number {i}: the auth middleware validates refresh tokens"),
                i as f64 / 7.0
            ])
            .unwrap();
        }
        drop(ins);
        tx.commit().unwrap();
    }
    let db = Db::Sqlite(&conn);
    const POINT: &str = "SELECT id, workspace, content, slot, weight FROM m WHERE rid = ?1";
    const RANGE: &str = "SELECT rid, weight FROM m WHERE rid BETWEEN ?1 AND ?2 ORDER BY rid";
    let mut direct = Vec::new();
    let mut through = Vec::new();
    let mut direct_range = Vec::new();
    let mut through_range = Vec::new();
    for round in 0..ROUNDS {
        let t = Instant::now();
        let mut sum = 0usize;
        for i in 0..LOOKUPS {
            let rid = i % ROWS + 1;
            let row: (String, String, String, Option<String>, f64) = conn
                .prepare_cached(POINT)
                .unwrap()
                .query_row([rid], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })
                .unwrap();
            sum += row.2.len();
        }
        let d = t.elapsed().as_nanos() as f64 / LOOKUPS as f64;
        let t = Instant::now();
        for i in 0..LOOKUPS {
            let rid = i % ROWS + 1;
            let row: (String, String, String, Option<String>, f64) = db
                .query_one(POINT, db_params![rid], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })
                .unwrap();
            sum += row.2.len();
        }
        let b = t.elapsed().as_nanos() as f64 / LOOKUPS as f64;
        let t = Instant::now();
        for i in 0..RANGES {
            let lo = i % (ROWS - 100) + 1;
            let rows: Vec<(i64, f64)> = conn
                .prepare_cached(RANGE)
                .unwrap()
                .query_map([lo, lo + 99], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            sum += rows.len();
        }
        let dr = t.elapsed().as_nanos() as f64 / RANGES as f64;
        let t = Instant::now();
        for i in 0..RANGES {
            let lo = i % (ROWS - 100) + 1;
            let rows: Vec<(i64, f64)> = db
                .query_map(RANGE, db_params![lo, lo + 99], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })
                .unwrap();
            sum += rows.len();
        }
        let br = t.elapsed().as_nanos() as f64 / RANGES as f64;
        println!(
            "round {round}: point lookup {d:.0} ns direct, {b:.0} ns through Db; \
             100-row range {dr:.0} ns direct, {br:.0} ns through Db  (checksum {sum})"
        );
        direct.push(d);
        through.push(b);
        direct_range.push(dr);
        through_range.push(br);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (d, b) = (median(&mut direct), median(&mut through));
    let (dr, br) = (median(&mut direct_range), median(&mut through_range));
    println!(
        "median: point lookup {d:.0} -> {b:.0} ns ({:+.1}%), 100-row range {dr:.0} -> {br:.0} ns ({:+.1}%)",
        (b / d - 1.0) * 100.0,
        (br / dr - 1.0) * 100.0
    );
}
