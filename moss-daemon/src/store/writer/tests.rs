use super::*;

fn writer() -> (Writer, WriterThread, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(dir.path().join("t.db")).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; CREATE TABLE t(x INTEGER UNIQUE);
         CREATE TABLE store_sequence(id INTEGER PRIMARY KEY, value INTEGER NOT NULL);
         INSERT INTO store_sequence VALUES (1, 0);",
    )
    .unwrap();
    let (w, t) = Writer::spawn(conn, (), &[&SOURCE_A, &SOURCE_B]).unwrap();
    (w, t, dir)
}

fn reopen(dir: &tempfile::TempDir) -> (Writer, WriterThread) {
    Writer::spawn(Connection::open(dir.path().join("t.db")).unwrap(), (), &[]).unwrap()
}

/// Two sources, for the commit signals (no table of theirs is indexed here).
const fn source(name: &'static str) -> Source {
    Source {
        name,
        table: "t",
        queue: "t_queue",
        columns: &["x"],
        fts: "t_fts",
        tokenizer: "unicode61",
        code_aware: false,
        inherits_single_watermark: false,
    }
}
static SOURCE_A: Source = source("a");
static SOURCE_B: Source = source("b");

/// A job that changes one source moves that source's commit signal, after its batch
/// commits, and leaves the other's alone; a job rolled back after saying so moves it too
/// (a waiter looks once more and finds nothing).
#[tokio::test]
async fn a_change_signals_its_own_source_only() {
    let (w, t, _dir) = writer();
    let mut a = w.commits(&SOURCE_A);
    let mut b = w.commits(&SOURCE_B);
    a.borrow_and_update();
    b.borrow_and_update();
    let taken = w
        .run(|c| {
            c.execute("INSERT INTO t(x) VALUES (1)", [])?;
            c.changed(&SOURCE_B);
            Ok(c.next_seq())
        })
        .await
        .unwrap();
    assert!(!a.has_changed().unwrap(), "a change of b does not wake a");
    assert!(b.has_changed().unwrap());
    assert_eq!(*b.borrow_and_update(), taken);
    w.run(|c| Ok(c.execute("INSERT INTO t(x) VALUES (2)", [])?))
        .await
        .unwrap();
    assert!(
        !a.has_changed().unwrap() && !b.has_changed().unwrap(),
        "a job that changes no source signals none"
    );
    let _: Result<()> = w
        .run(|c| {
            c.changed(&SOURCE_A);
            Err(Error::invalid("rolled back"))
        })
        .await;
    assert!(a.has_changed().unwrap());
    assert!(!b.has_changed().unwrap());
    w.close().await;
    t.join();
}

async fn recorded(w: &Writer) -> i64 {
    w.run(|c| Ok(c.query_row("SELECT value FROM store_sequence", [], |r| r.get(0))?))
        .await
        .unwrap()
}

/// Numbers go up across jobs, batches and restarts; a job that failed, or panicked, keeps
/// the numbers it took from ever being handed out again.
#[tokio::test]
async fn sequence_numbers_are_never_handed_out_twice() {
    let (w, t, dir) = writer();
    let first: i64 = w.run(|c| Ok(c.next_seq())).await.unwrap();
    assert_eq!(first, 1);
    let failed: Result<()> = w
        .run(|c| {
            c.next_seq();
            c.next_seq();
            Err(Error::invalid("rolled back"))
        })
        .await;
    assert!(failed.is_err());
    let panicked: Result<()> = w
        .run(|c| {
            c.next_seq();
            panic!("boom")
        })
        .await;
    assert!(panicked.is_err());
    assert_eq!(recorded(&w).await, 4, "rolled-back numbers are recorded");
    let mut handles = Vec::new();
    for _ in 0..200 {
        let w = w.clone();
        handles.push(tokio::spawn(async move {
            w.run(|c| Ok((c.next_seq(), c.next_seq()))).await.unwrap()
        }));
    }
    let mut seen = Vec::new();
    for h in handles {
        let (a, b) = h.await.unwrap();
        assert_eq!(b, a + 1, "one job's numbers are consecutive");
        seen.extend([a, b]);
    }
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 400, "no number twice");
    assert_eq!((seen[0], seen[399]), (5, 404));
    w.close().await;
    t.join();
    let (w, t) = reopen(&dir);
    assert_eq!(w.run(|c| Ok(c.next_seq())).await.unwrap(), 405);
    w.close().await;
    t.join();
}

/// A batch whose jobs took no number does not write the sequence's row.
#[tokio::test]
async fn a_batch_without_numbers_leaves_the_sequence_row_alone() {
    let (w, t, _dir) = writer();
    w.run(|c| Ok(c.next_seq())).await.unwrap();
    let changes = |w: &Writer| {
        let w = w.clone();
        async move {
            w.run(|c| Ok(c.query_row("SELECT total_changes()", [], |r| r.get::<_, i64>(0))?))
                .await
                .unwrap()
        }
    };
    let before = changes(&w).await;
    w.run(|c| Ok(c.execute("INSERT INTO t(x) VALUES (1)", [])?))
        .await
        .unwrap();
    assert_eq!(changes(&w).await, before + 1, "the insert alone");
    w.close().await;
    t.join();
}

#[tokio::test]
async fn a_failing_job_rolls_back_alone() {
    let (w, t, dir) = writer();
    let mut handles = Vec::new();
    for i in 0..50 {
        let w = w.clone();
        handles.push(tokio::spawn(async move {
            w.run(move |c| {
                c.execute("INSERT INTO t(x) VALUES (?1)", [i % 25])?;
                Ok(())
            })
            .await
        }));
    }
    let mut ok = 0;
    for h in handles {
        if h.await.unwrap().is_ok() {
            ok += 1;
        }
    }
    assert_eq!(ok, 25, "each duplicate fails alone");
    w.close().await;
    t.join();
    let conn = Connection::open(dir.path().join("t.db")).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 25);
}

#[tokio::test]
async fn a_panicking_job_fails_without_taking_the_writer_down() {
    let (w, t, _dir) = writer();
    let r: Result<()> = w
        .run(|c| {
            c.execute("INSERT INTO t(x) VALUES (1)", [])?;
            panic!("boom")
        })
        .await;
    assert_eq!(r.unwrap_err().code(), ErrorCode::Internal);
    let n: i64 = w
        .run(|c| Ok(c.query_row("SELECT count(*) FROM t", [], |r| r.get(0))?))
        .await
        .unwrap();
    assert_eq!(n, 0, "the panicking job's insert was rolled back");
    w.close().await;
    t.join();
}

/// A database that cannot grow (`max_page_count` stands in for a full disk: SQLite answers
/// SQLITE_FULL either way) fails writes with STORAGE_FULL, batch after batch, without
/// stopping the writer, and writes resume as soon as there is room again.
#[tokio::test]
async fn a_full_database_answers_storage_full_and_recovers_without_a_restart() {
    let (w, t, _dir) = writer();
    w.run(|c| Ok(c.execute_batch("CREATE TABLE big(b BLOB)")?))
        .await
        .unwrap();
    let pages: i64 = w
        .run(|c| Ok(c.query_row("PRAGMA page_count", [], |r| r.get(0))?))
        .await
        .unwrap();
    w.run(move |c| Ok(c.execute_batch(&format!("PRAGMA max_page_count = {}", pages + 2))?))
        .await
        .unwrap();
    let insert = |w: &Writer| {
        let w = w.clone();
        async move {
            w.run(|c| {
                c.execute("INSERT INTO big(b) VALUES (zeroblob(64 * 1024))", [])?;
                Ok(())
            })
            .await
        }
    };
    // Several at once, so that the failures land in shared batches too.
    let mut handles = Vec::new();
    for _ in 0..8 {
        let insert = insert(&w);
        handles.push(tokio::spawn(insert));
    }
    for h in handles {
        let e = h.await.unwrap().unwrap_err();
        assert_eq!(e.code(), ErrorCode::StorageFull, "{e}");
        assert!(e.0.message.contains("reads go on"), "{e}");
    }
    // Small writes that fit still go through, and reads are answered.
    w.run(|c| Ok(c.execute("INSERT INTO t(x) VALUES (7)", [])?))
        .await
        .unwrap();
    w.run(|c| Ok(c.execute_batch("PRAGMA max_page_count = 1000000")?))
        .await
        .unwrap();
    insert(&w).await.expect("writes resume once there is room");
    let n: i64 = w
        .run(|c| Ok(c.query_row("SELECT count(*) FROM big", [], |r| r.get(0))?))
        .await
        .unwrap();
    assert_eq!(n, 1);
    w.close().await;
    t.join();
}

#[tokio::test]
async fn writes_after_close_are_unavailable() {
    let (w, t, _dir) = writer();
    w.close().await;
    t.join();
    let r = w.run(|_| Ok(())).await;
    assert_eq!(r.unwrap_err().code(), ErrorCode::Unavailable);
}

/// The writer on PostgreSQL, as several daemons share one database.
mod postgres_engine {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::store::engine::listener::Listener;
    use crate::store::engine::postgres::testing::Scratch;
    use crate::store::migrations::{self, Migration};

    static TABLE: &[Migration] = &[Migration {
        version: 2,
        sql: "CREATE TABLE t (x BIGINT UNIQUE, seq BIGINT NOT NULL, writer BIGINT);",
    }];

    fn database() -> Option<Scratch> {
        let scratch = Scratch::new()?;
        off_runtime(|| {
            migrations::migrate_postgres(&scratch.connect(), &[migrations::STORE_POSTGRES, TABLE])
                .unwrap()
        });
        Some(scratch)
    }

    /// Runs `f` on a thread of its own: the synchronous client blocks, which a thread that
    /// drives async tasks may not.
    fn off_runtime<T: Send>(f: impl FnOnce() -> T + Send) -> T {
        std::thread::scope(|s| s.spawn(f).join().unwrap())
    }

    fn daemon(scratch: &Scratch) -> (Writer, WriterThread) {
        off_runtime(|| Writer::spawn(scratch.connect(), (), &[&SOURCE_A, &SOURCE_B]).unwrap())
    }

    fn insert(w: &Writer, x: i64, writer: i64) -> impl Future<Output = Result<i64>> + 'static {
        let w = w.clone();
        async move {
            w.run(move |c| {
                let seq = c.next_seq();
                c.db().execute(
                    "INSERT INTO t(x, seq, writer) VALUES (?1, ?2, ?3)",
                    crate::db_params![x, seq, writer],
                )?;
                c.changed(&SOURCE_A);
                Ok(seq)
            })
            .await
        }
    }

    /// Two daemons writing at once: every number is handed out once, and numbers commit
    /// in their order. A reader that has seen the highest number N never later finds a
    /// new row numbered below N (what `capsule_watch` and the indexers rely on).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_writers_commit_their_numbers_in_order() {
        let Some(scratch) = database() else { return };
        let (a, ta) = daemon(&scratch);
        let (b, tb) = daemon(&scratch);
        let watching = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let watcher = {
            let conn = scratch.connect();
            let watching = watching.clone();
            std::thread::spawn(move || {
                let db = Db::Postgres(&conn);
                let mut seen = Vec::new();
                while watching.load(std::sync::atomic::Ordering::Acquire) {
                    seen.push(
                        db.query_one("SELECT coalesce(max(seq), 0), count(*) FROM t", &[], |r| {
                            Ok((r.get::<i64>(0)?, r.get::<i64>(1)?))
                        })
                        .unwrap(),
                    );
                }
                seen
            })
        };
        let mut jobs = Vec::new();
        for i in 0..300i64 {
            let (w, n) = if i % 2 == 0 { (&a, 0) } else { (&b, 1) };
            jobs.push(tokio::spawn(insert(w, i, n)));
        }
        let mut numbers = Vec::new();
        for job in jobs {
            numbers.push(job.await.unwrap().unwrap());
        }
        watching.store(false, std::sync::atomic::Ordering::Release);
        let seen = watcher.join().unwrap();
        numbers.sort_unstable();
        numbers.dedup();
        assert_eq!(numbers.len(), 300, "every number handed out once");
        let rows: Vec<i64> = off_runtime(|| {
            Db::Postgres(&scratch.connect())
                .query_map("SELECT seq FROM t ORDER BY seq", &[], |r| r.get(0))
                .unwrap()
        });
        assert_eq!(rows, numbers);
        for (max, count) in &seen {
            let below = rows.iter().filter(|s| *s <= max).count() as i64;
            assert_eq!(
                below, *count,
                "a row numbered at most {max} committed after {max} was seen"
            );
        }
        assert!(seen.len() > 1, "the watcher looked while the writers wrote");
        for w in [&a, &b] {
            w.close().await;
        }
        ta.join();
        tb.join();
    }

    /// A waiter on one daemon wakes for a change written through the other, through
    /// LISTEN/NOTIFY, within 100 ms at the median; a change of another source does not
    /// wake it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_waiter_on_one_daemon_wakes_for_a_change_through_the_other() {
        let Some(scratch) = database() else { return };
        let (a, ta) = daemon(&scratch);
        let (b, tb) = daemon(&scratch);
        let listener = off_runtime(|| Listener::spawn(&scratch.config, b.signals()).unwrap());
        let mut on_b = b.commits(&SOURCE_A);
        let mut other_on_b = b.commits(&SOURCE_B);
        // The listener's first act: every signal raised to the sequence's value.
        tokio::time::sleep(Duration::from_millis(300)).await;
        on_b.borrow_and_update();
        other_on_b.borrow_and_update();
        let mut waits = Vec::new();
        for i in 0..20i64 {
            let started = Instant::now();
            let seq = insert(&a, i, 0).await.unwrap();
            tokio::time::timeout(Duration::from_secs(5), on_b.changed())
                .await
                .expect("daemon B heard daemon A's commit")
                .unwrap();
            waits.push(started.elapsed());
            assert_eq!(*on_b.borrow_and_update(), seq);
        }
        assert!(
            !other_on_b.has_changed().unwrap(),
            "changes of source A do not wake a waiter on source B"
        );
        waits.sort_unstable();
        let median = waits[waits.len() / 2];
        eprintln!(
            "write through A, wake on B: median {median:?}, max {:?}",
            waits[19]
        );
        assert!(median < Duration::from_millis(100), "median {median:?}");
        listener.stop();
        for w in [&a, &b] {
            w.close().await;
        }
        ta.join();
        tb.join();
    }

    /// The server drops the writer's connection: the batch that finds it gone answers
    /// UNAVAILABLE, the next one reconnects and writes; acknowledged writes are all there.
    #[tokio::test]
    async fn the_writer_reconnects_after_the_server_drops_it() {
        let Some(scratch) = database() else { return };
        let (w, t) = daemon(&scratch);
        insert(&w, 1, 0).await.unwrap();
        let pid: i64 = w
            .run(|c| {
                Ok(c.db()
                    .query_one("SELECT pg_backend_pid()::bigint", &[], |r| r.get(0))?)
            })
            .await
            .unwrap();
        off_runtime(|| {
            Db::Postgres(&scratch.connect())
                .query_one(
                    "SELECT pg_terminate_backend(?1::int)::text",
                    crate::db_params![pid],
                    |_| Ok(()),
                )
                .unwrap()
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        let lost = insert(&w, 2, 0).await.unwrap_err();
        assert_eq!(lost.code(), ErrorCode::Unavailable, "{lost}");
        let seq = insert(&w, 3, 0).await.unwrap();
        assert!(seq >= 2, "numbers go on after the reconnection: {seq}");
        let xs: Vec<i64> = off_runtime(|| {
            Db::Postgres(&scratch.connect())
                .query_map("SELECT x FROM t ORDER BY x", &[], |r| r.get(0))
                .unwrap()
        });
        assert_eq!(xs, [1, 3]);
        w.close().await;
        t.join();
    }
}
