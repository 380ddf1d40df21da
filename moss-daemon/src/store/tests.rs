use super::*;

/// The sources the store's tests serve: two tables its migrations create.
static SOURCES: &[&Source] = &[&fts::tests::CAPSULES, &fts::tests::MEMORIES];

fn open(durability: Durability) -> (Store, StoreThreads, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let opts = StoreOptions {
        durability,
        read_pool_size: 2,
        read_pool_idle: 1,
        search_tokenizer: Default::default(),
        search_sources: SOURCES,
        model_dir: None,
        embed_sources: &[],
        migrations: crate::schema::MIGRATIONS,
        migrations_postgres: crate::schema::MIGRATIONS_POSTGRES,
    };
    let (store, threads) = Store::open(&dir.path().join("moss.db"), &opts).unwrap();
    (store, threads, dir)
}

async fn pragma(store: &Store, name: &'static str) -> String {
    store
        .writer
        .run(move |c| {
            Ok(c.query_row(&format!("PRAGMA {name}"), [], |r| {
                r.get::<_, rusqlite::types::Value>(0)
            })?)
        })
        .await
        .map(|v| format!("{v:?}"))
        .unwrap()
}

#[tokio::test]
async fn durability_sets_synchronous_and_the_journal_is_wal() {
    let (store, threads, _dir) = open(Durability::Full);
    assert_eq!(pragma(&store, "synchronous").await, "Integer(2)", "FULL");
    assert_eq!(pragma(&store, "journal_mode").await, "Text(\"wal\")");
    store.writer.close().await;
    threads.join();
    let (store, threads, _dir) = open(Durability::Normal);
    assert_eq!(pragma(&store, "synchronous").await, "Integer(1)", "NORMAL");
    store.writer.close().await;
    threads.join();
}

/// How many times a statement with `LIMIT ?1` was prepared again over three runs with
/// different limits on `conn` (0 when plans do not depend on bound values).
fn reprepares(conn: &Connection) -> rusqlite::Result<i32> {
    let mut stmt = conn.prepare("SELECT seq FROM capsules ORDER BY seq LIMIT ?1")?;
    for limit in 1..=3 {
        stmt.query_map([limit], |r| r.get::<_, i64>(0))?
            .for_each(drop);
    }
    Ok(stmt.get_status(rusqlite::StatementStatus::RePrepare))
}

#[tokio::test]
async fn a_bound_limit_does_not_prepare_the_statement_again() {
    let (store, threads, _dir) = open(Durability::Normal);
    let writer = store.writer.run(|c| Ok(reprepares(c)?)).await.unwrap();
    let reader = store.readers.run(|c| Ok(reprepares(c)?)).await.unwrap();
    assert_eq!((writer, reader), (0, 0), "re-prepares on (writer, reader)");
    // The same statement on a connection without the setting is prepared each run: the
    // check above can fail.
    let bare = Connection::open_in_memory().unwrap();
    bare.execute_batch("CREATE TABLE capsules(seq INTEGER)")
        .unwrap();
    assert_eq!(reprepares(&bare).unwrap(), 3);
    store.writer.close().await;
    threads.join();
}

/// Writes through the writer; the indexer follows; a deleted index file is rebuilt.
#[tokio::test]
async fn the_indexer_follows_writes_and_rebuilds_a_missing_index() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("moss.db");
    let opts = StoreOptions {
        durability: Durability::Normal,
        read_pool_size: 1,
        read_pool_idle: 1,
        search_tokenizer: Default::default(),
        search_sources: SOURCES,
        model_dir: None,
        embed_sources: &[],
        migrations: crate::schema::MIGRATIONS,
        migrations_postgres: crate::schema::MIGRATIONS_POSTGRES,
    };
    async fn write(store: &Store, sql: &'static str) -> i64 {
        store
            .writer
            .run(move |c| {
                c.execute_batch(sql)?;
                Ok(c.query_row(
                    "SELECT coalesce(max(seq), 0) FROM capsules_fts_queue",
                    [],
                    |r| r.get(0),
                )?)
            })
            .await
            .unwrap()
    }
    async fn caught_up(store: &Store, seq: i64) {
        assert!(
            store
                .index_reached(&fts::tests::CAPSULES, seq, Duration::from_secs(5))
                .await,
            "the indexer did not reach {seq}"
        );
    }
    let hits = |q: &str| -> i64 {
        let c = Connection::open(fts::index_path(&db)).unwrap();
        c.query_row(
            "SELECT count(*) FROM capsules_fts WHERE capsules_fts MATCH ?1",
            [q],
            |r| r.get(0),
        )
        .unwrap()
    };
    let (store, threads) = Store::open(&db, &opts).unwrap();
    let s = write(
        &store,
        "INSERT INTO capsules(id, workspace_raw, workspace_norm, title, capsule_text,
           capsule_chars, tokens_estimate, created_at, updated_at, seq)
         VALUES ('a', 'w', 'w', 'Alpha', 'redis cache', 11, 3, 1, 1, 1),
                ('b', 'w', 'w', 'Beta', 'kafka', 5, 1, 1, 1, 2);",
    )
    .await;
    caught_up(&store, s).await;
    assert_eq!((hits("redis"), hits("alpha"), hits("kafka")), (1, 1, 1));
    let s = write(
        &store,
        "UPDATE capsules SET capsule_text = 'postgres' WHERE id = 'a';",
    )
    .await;
    caught_up(&store, s).await;
    assert_eq!((hits("redis"), hits("postgres")), (0, 1));
    let s = write(&store, "DELETE FROM capsules WHERE id = 'b';").await;
    caught_up(&store, s).await;
    assert_eq!(hits("kafka"), 0);
    // The writer trims what the indexer applied.
    write(&store, "UPDATE capsules SET phase = 'p' WHERE id = 'a';").await;
    let left: i64 = store
        .writer
        .run(|c| Ok(c.query_row("SELECT count(*) FROM capsules_fts_queue", [], |r| r.get(0))?))
        .await
        .unwrap();
    assert_eq!(left, 1, "all applied entries but the newest are trimmed");
    // A change after a full trim still gets a sequence above the watermark.
    let s = write(
        &store,
        "INSERT INTO capsules(id, workspace_raw, workspace_norm, title, capsule_text,
           capsule_chars, tokens_estimate, created_at, updated_at, seq)
         VALUES ('c', 'w', 'w', 'Gamma', 'zookeeper', 9, 1, 1, 1, 3);",
    )
    .await;
    assert!(
        store
            .index_reached(&fts::tests::CAPSULES, s, Duration::from_secs(5))
            .await
    );
    assert_eq!(hits("zookeeper"), 1);
    store.writer.close().await;
    threads.join();

    std::fs::remove_file(fts::index_path(&db)).unwrap();
    let _ = std::fs::remove_file(fts::index_path(&db).with_extension("db-wal"));
    let (store, threads) = Store::open(&db, &opts).unwrap();
    for _ in 0..500 {
        if Connection::open(fts::index_path(&db))
            .unwrap()
            .query_row(
                "SELECT count(*) FROM indexer_sources WHERE source = 'capsules'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap_or(0)
            == 1
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(
        (
            hits("postgres"),
            hits("kafka"),
            hits("alpha"),
            hits("zookeeper")
        ),
        (1, 0, 1, 1),
        "rebuilt"
    );
    store.writer.close().await;
    threads.join();
}

/// Closing the store stops the indexer only once it holds the writer's last commits.
#[tokio::test]
async fn the_indexer_catches_up_before_it_stops() {
    let (store, threads, dir) = open(Durability::Normal);
    for i in 0..20 {
        let sql = format!(
            "INSERT INTO capsules(id, workspace_raw, workspace_norm, capsule_text,
               capsule_chars, tokens_estimate, created_at, updated_at, seq)
             VALUES ('c{i}', 'w', 'w', 'closing{i}', 9, 1, 1, 1, {i})"
        );
        store
            .writer
            .run(move |c| Ok(c.execute_batch(&sql)?))
            .await
            .unwrap();
    }
    store.writer.close().await;
    // Joined on a thread of its own, with a bound, so that an indexer that never hears the
    // writer stop fails this test instead of hanging it.
    let (joined, done) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        threads.join();
        let _ = joined.send(());
    });
    done.recv_timeout(std::time::Duration::from_secs(30))
        .expect("the store's threads stopped");
    let fts = Connection::open(fts::index_path(&dir.path().join("moss.db"))).unwrap();
    let indexed: i64 = fts
        .query_row(
            "SELECT count(*) FROM capsules_fts WHERE capsules_fts MATCH 'closing19'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexed, 1, "the last write is in the index");
}

/// A wait for the index keeps the indexer from resting for as long as it lasts, however it
/// ends; a wait already satisfied does not.
#[tokio::test]
async fn waiting_for_the_index_keeps_the_indexer_from_resting() {
    let (store, threads, _dir) = open(Durability::Normal);
    let hurry = store.index.as_ref().unwrap().hurry().clone();
    assert!(
        store
            .index_reached(&fts::tests::CAPSULES, 0, Duration::from_secs(5))
            .await
    );
    assert_eq!(hurry.waiting(), 0, "nothing to wait for");
    let search = {
        let store = store.clone();
        tokio::spawn(async move {
            store
                .index_reached(&fts::tests::CAPSULES, i64::MAX, Duration::from_secs(300))
                .await
        })
    };
    let started = std::time::Instant::now();
    while hurry.waiting() == 0 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "the wait never reached the indexer"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    search.abort();
    let _ = search.await;
    assert_eq!(hurry.waiting(), 0, "a cancelled wait lets the indexer rest");
    assert!(
        !store
            .index_reached(&fts::tests::CAPSULES, i64::MAX, Duration::from_millis(50))
            .await
    );
    assert_eq!(
        hurry.waiting(),
        0,
        "a wait that timed out lets the indexer rest"
    );
    store.writer.close().await;
    threads.join();
}

/// A capsule row carrying the next number of the sequence; returns the number.
async fn insert_capsule(store: &Store, id: &'static str) -> i64 {
    store
        .writer
        .run(move |w| {
            let seq = w.next_seq();
            w.execute(
                "INSERT INTO capsules(id, workspace_raw, workspace_norm, capsule_text,
                   capsule_chars, tokens_estimate, created_at, updated_at, seq)
                 VALUES (?1, 'w', 'w', 'text', 4, 1, 1, 1, ?2)",
                rusqlite::params![id, seq],
            )?;
            Ok(seq)
        })
        .await
        .unwrap()
}

/// Once every row that carried a number is gone, even across a restart, a new write still
/// gets a number above every one handed out before (it was seeded from the rows' highest).
#[tokio::test]
async fn the_sequence_never_goes_down_after_a_purge_and_a_restart() {
    let (store, threads, dir) = open(Durability::Normal);
    let mut issued = Vec::new();
    for id in ["a", "b", "c"] {
        issued.push(insert_capsule(&store, id).await);
    }
    let failed: Result<()> = store
        .writer
        .run(|w| {
            w.next_seq();
            Err(Error::invalid("rolled back"))
        })
        .await;
    assert!(failed.is_err());
    assert!(issued.windows(2).all(|p| p[0] < p[1]), "{issued:?}");
    store
        .writer
        .run(|w| Ok(w.execute("DELETE FROM capsules", [])?))
        .await
        .unwrap();
    store.writer.close().await;
    threads.join();

    let opts = StoreOptions {
        durability: Durability::Normal,
        read_pool_size: 1,
        read_pool_idle: 1,
        search_tokenizer: Default::default(),
        search_sources: SOURCES,
        model_dir: None,
        embed_sources: &[],
        migrations: crate::schema::MIGRATIONS,
        migrations_postgres: crate::schema::MIGRATIONS_POSTGRES,
    };
    let (store, threads) = Store::open(&dir.path().join("moss.db"), &opts).unwrap();
    let left: i64 = store
        .readers
        .run(|c| Ok(c.query_row("SELECT count(*) FROM capsules", [], |r| r.get(0))?))
        .await
        .unwrap();
    assert_eq!(left, 0, "every capsule is gone");
    let next = insert_capsule(&store, "d").await;
    assert!(
        next > issued[2] + 1,
        "{next} after {issued:?} and a rolled-back number"
    );
    store.writer.close().await;
    threads.join();
}

/// The store reports each source's lag: every source before a write, the capsules source
/// after one.
#[tokio::test]
async fn index_lag_reports_each_source() {
    let (store, threads, _dir) = open(Durability::Normal);
    let lag = store.index_lag();
    let expected: Vec<IndexLag> = SOURCES
        .iter()
        .map(|s| IndexLag {
            source: s.name,
            queued: 0,
            applied: 0,
        })
        .collect();
    assert_eq!(lag, expected);
    assert_eq!(
        lag.iter().map(|l| l.source).collect::<Vec<_>>(),
        ["capsules", "memories"]
    );
    assert_eq!(lag[0].behind(), 0);
    insert_capsule(&store, "a").await;
    let queued = store.index_queued(&fts::tests::CAPSULES);
    assert!(queued > 0, "the write is queued for the index");
    assert!(
        store
            .index_reached(&fts::tests::CAPSULES, queued, Duration::from_secs(5))
            .await
    );
    let lag = store.index_lag();
    assert_eq!(lag.len(), SOURCES.len());
    assert_eq!(
        (lag[0].source, lag[0].queued, lag[0].behind()),
        ("capsules", queued, 0)
    );
    assert!(lag[0].applied >= queued);
    assert_eq!(store.index_behind(&fts::tests::CAPSULES), 0);
    store.writer.close().await;
    threads.join();
}

#[tokio::test]
async fn readers_cannot_write() {
    let (store, threads, _dir) = open(Durability::Normal);
    let r = store
        .readers
        .run(|c| {
            c.execute("DELETE FROM capsules", [])?;
            Ok(())
        })
        .await;
    assert!(r.is_err(), "a read connection refused the write");
    store.writer.close().await;
    threads.join();
}

/// A store on PostgreSQL: two daemons on one database, searching by the generated column,
/// each seeing the other's writes at once and woken by them.
mod postgres_engine {
    use super::*;
    use crate::store::engine::postgres::testing::Scratch;
    use crate::store::migrations::Migration;

    static NOTES: Source = Source {
        name: "notes",
        table: "notes",
        queue: "notes_fts_queue",
        columns: &["title", "body"],
        fts: "notes_fts",
        tokenizer: "porter unicode61 remove_diacritics 2",
        code_aware: false,
        inherits_single_watermark: false,
    };

    static TABLES: &[Migration] = &[Migration {
        version: 2,
        sql: "
        CREATE TABLE notes (rowid BIGINT GENERATED BY DEFAULT AS IDENTITY UNIQUE,
                            id TEXT PRIMARY KEY, title TEXT, body TEXT NOT NULL,
                            seq BIGINT NOT NULL);
        CREATE TABLE notes_fts_queue (seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
                                      doc BIGINT NOT NULL);
        CREATE FUNCTION notes_queued() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO notes_fts_queue(doc) VALUES (new.rowid); RETURN NULL; END $$;
        CREATE TRIGGER notes_queued AFTER INSERT ON notes
          FOR EACH ROW EXECUTE FUNCTION notes_queued();",
    }];

    static SOURCES: &[&Source] = &[&NOTES];
    static LISTS: &[&[Migration]] = &[migrations::STORE_POSTGRES, TABLES];

    fn options() -> StoreOptions {
        StoreOptions {
            durability: Durability::Normal,
            read_pool_size: 2,
            read_pool_idle: 1,
            search_tokenizer: Default::default(),
            search_sources: SOURCES,
            model_dir: None,
            embed_sources: &[],
            migrations: &[],
            migrations_postgres: LISTS,
        }
    }

    fn url(scratch: &Scratch) -> String {
        // The scratch schema, as a daemon would be given it: in the URL's options.
        let schema = scratch.schema();
        let base = std::env::var("MOSS_TEST_POSTGRES").unwrap();
        let sep = if base.contains('?') { '&' } else { '?' };
        format!("{base}{sep}options=-c%20search_path%3D{schema}")
    }

    fn open(scratch: &Scratch) -> (Store, StoreThreads) {
        let url = url(scratch);
        std::thread::scope(|s| {
            s.spawn(|| Store::open_postgres(&url, None, &options(), &std::env::temp_dir()).unwrap())
                .join()
                .unwrap()
        })
    }

    async fn add(store: &Store, id: &'static str, title: &'static str, body: &'static str) {
        store
            .writer
            .run(move |c| {
                let seq = c.next_seq();
                c.db().execute(
                    "INSERT INTO notes(id, title, body, seq) VALUES (?1, ?2, ?3, ?4)",
                    crate::db_params![id, title, body, seq],
                )?;
                c.changed(&NOTES);
                Ok(())
            })
            .await
            .unwrap();
    }

    async fn search(store: &Store, query: &str) -> Vec<String> {
        let tsq = crate::store::engine::tsquery::to_tsquery(query).unwrap();
        store
            .readers
            .run_db(move |db| {
                Ok(db.query_map(
                    "SELECT id FROM notes
                     WHERE moss_words @@ to_tsquery('moss_english', ?1)
                     ORDER BY ts_rank_cd(moss_words, to_tsquery('moss_english', ?1)) DESC, id",
                    crate::db_params![tsq.as_str()],
                    |r| r.get(0),
                )?)
            })
            .await
            .unwrap()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_daemons_share_one_database() {
        let Some(scratch) = Scratch::new() else {
            return;
        };
        let (a, threads_a) = open(&scratch);
        let (b, threads_b) = open(&scratch);
        assert_eq!(a.engine(), engine::Engine::Postgres);
        let mut woken = b.writer.commits(&NOTES);
        woken.borrow_and_update();
        add(&a, "n1", "Auth middleware", "validates JWT refresh tokens").await;
        tokio::time::timeout(Duration::from_secs(5), woken.changed())
            .await
            .expect("daemon B is woken by daemon A's write")
            .unwrap();
        // No index to wait for: the write is searchable through the other daemon at once.
        assert_eq!(search(&b, "refresh token").await, ["n1"]);
        add(&b, "n2", "Tokens", "the token cache expires after an hour").await;
        assert_eq!(
            search(&a, "token*").await,
            ["n2", "n1"],
            "title weighs more"
        );
        assert_eq!(search(&a, "auth NOT cache").await, ["n1"]);
        assert!(b.index_reached(&NOTES, i64::MAX, Duration::ZERO).await);
        // The queues the triggers fill keep their newest entries, for the embedders of every
        // daemon (see `engine::queues`): these two, untrimmed.
        let (queued, trimmed): (i64, i64) = a
            .readers
            .run_db(|db| {
                Ok((
                    db.query_one("SELECT count(*) FROM notes_fts_queue", &[], |r| r.get(0))?,
                    engine::queues::trimmed(db, "notes")?,
                ))
            })
            .await
            .unwrap();
        assert_eq!((queued, trimmed), (2, 0));
        // A read connection does not write.
        let refused = a
            .readers
            .run_db(|db| Ok(db.execute("DELETE FROM notes", &[])?))
            .await;
        assert!(refused.is_err());
        for (store, threads) in [(a, threads_a), (b, threads_b)] {
            store.writer.close().await;
            tokio::task::spawn_blocking(move || threads.join())
                .await
                .unwrap();
        }
    }

    /// A read connection the server dropped while it sat in the pool is found broken and
    /// replaced before a read takes it (a connection idle past `VALIDATE_AFTER_IDLE` is tested
    /// first), so a server restart costs no read.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_read_connection_the_server_dropped_is_replaced_before_a_read_takes_it() {
        let Some(scratch) = Scratch::new() else {
            return;
        };
        let name = format!("moss-test-{}", ulid::Ulid::generate());
        let mut config = scratch.config.clone();
        config.application_name(&name);
        let pool =
            tokio::task::spawn_blocking(move || ReadPool::open_postgres(&config, 1, 1, None))
                .await
                .unwrap()
                .unwrap();
        let one =
            || pool.run_db(|db| Ok(db.query_one("SELECT 1::bigint", &[], |r| r.get::<i64>(0))?));
        assert_eq!(one().await.unwrap(), 1);
        let admin = scratch.config.clone();
        let killed: i64 = tokio::task::spawn_blocking(move || {
            let conn = engine::postgres::PgConn::connect(&admin).unwrap();
            engine::Db::Postgres(&conn)
                .query_one(
                    "SELECT count(pg_terminate_backend(pid))::bigint FROM pg_stat_activity
                     WHERE application_name = ?1",
                    crate::db_params![name.as_str()],
                    |r| r.get(0),
                )
                .unwrap()
        })
        .await
        .unwrap();
        assert_eq!(killed, 1, "the pool's one connection");
        tokio::time::sleep(engine::postgres::VALIDATE_AFTER_IDLE + Duration::from_millis(200))
            .await;
        assert_eq!(one().await.unwrap(), 1, "read on a new connection");
    }

    #[test]
    fn a_bad_url_is_refused_with_how_to_write_it() {
        let e = Store::open_postgres("postgres://u@h:port/db", None, &options(), Path::new("."))
            .unwrap_err();
        assert!(e.to_string().contains("postgres://USER"), "{e}");
    }

    /// Reads on a replica (`database_read`) see this store's acknowledged writes at once: each
    /// read waits for the replica to replay the writer's last commit. Runs where
    /// `MOSS_TEST_POSTGRES_REPLICA` names a streaming replica of `MOSS_TEST_POSTGRES` (CI
    /// starts one).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reads_on_a_replica_see_this_daemon_s_writes() {
        let Some(replica) = std::env::var("MOSS_TEST_POSTGRES_REPLICA")
            .ok()
            .filter(|v| !v.is_empty())
        else {
            eprintln!("MOSS_TEST_POSTGRES_REPLICA is unset: skipping the replica test");
            return;
        };
        let Some(scratch) = Scratch::new() else {
            return;
        };
        let url = url(&scratch);
        let sep = if replica.contains('?') { '&' } else { '?' };
        let read_url = format!(
            "{replica}{sep}options=-c%20search_path%3D{}",
            scratch.schema()
        );
        let (store, threads) = std::thread::scope(|s| {
            s.spawn(|| {
                Store::open_postgres(&url, Some(&read_url), &options(), &std::env::temp_dir())
                    .unwrap()
            })
            .join()
            .unwrap()
        });
        // The replica is a replica: it refuses writes, and is in recovery.
        let in_recovery: bool = store
            .readers
            .run_db(|db| Ok(db.query_one("SELECT pg_is_in_recovery()", &[], |r| r.get(0))?))
            .await
            .unwrap();
        assert!(in_recovery, "MOSS_TEST_POSTGRES_REPLICA is not a replica");
        let started = std::time::Instant::now();
        for i in 0..200 {
            let id: &'static str = Box::leak(format!("n{i}").into_boxed_str());
            add(&store, id, "title", "body").await;
            let seen: Option<String> = store
                .readers
                .run_db(move |db| {
                    Ok(db.query_opt(
                        "SELECT id FROM notes WHERE id = ?1",
                        crate::db_params![id],
                        |r| r.get(0),
                    )?)
                })
                .await
                .unwrap();
            assert_eq!(
                seen.as_deref(),
                Some(id),
                "write {i} not read back on the replica"
            );
        }
        println!(
            "200 writes each read back through the replica: {:?} per write and read",
            started.elapsed() / 200
        );
        drop(store);
        threads.join();
    }
}
