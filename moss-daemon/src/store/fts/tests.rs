//! The indexer's tests: pacing, passes, upgrades of the index file, rounds over sources.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tokio::sync::watch;

use super::indexing::{PASS_SIZE, READ_CHUNK, run};
use super::plan::{Plan, applied_seq, prepare_index, table_exists};
use super::wake::{Hurry, Pace, Wake};
use super::*;

/// The capsules of `moss.db` as a source, as the capsule family declares it: the store's
/// tests index the tables its migrations create.
pub(crate) static CAPSULES: Source = Source {
    name: "capsules",
    table: "capsules",
    queue: "capsules_fts_queue",
    columns: &["title", "capsule_text"],
    fts: "capsules_fts",
    tokenizer: "porter unicode61 remove_diacritics 2",
    code_aware: true,
    inherits_single_watermark: true,
};

/// The capsules source as builds without stemming declared it.
static UNSTEMMED_CAPSULES: Source = Source {
    name: "capsules",
    table: "capsules",
    queue: "capsules_fts_queue",
    columns: &["title", "capsule_text"],
    fts: "capsules_fts",
    tokenizer: "unicode61 remove_diacritics 2",
    code_aware: true,
    inherits_single_watermark: true,
};

/// The memories of `moss.db` as a source: a second source for the store's tests.
pub(crate) static MEMORIES: Source = Source {
    name: "memories",
    table: "memories",
    queue: "memories_fts_queue",
    columns: &["content", "contexts_text", "slot"],
    fts: "memories_fts",
    tokenizer: "porter unicode61 remove_diacritics 2",
    code_aware: false,
    inherits_single_watermark: false,
};

/// A migrated main database holding `n` capsules (so `n` queue entries), and an index file
/// whose capsules source is empty with a watermark of 0.
fn setup(n: i64) -> (tempfile::TempDir, Connection, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("moss.db");
    let mut main = Connection::open(&db).unwrap();
    crate::store::migrations::migrate(&mut main, crate::schema::MIGRATIONS).unwrap();
    add_capsules(&main, 1, n);
    let mut fts = Connection::open(index_path(&db)).unwrap();
    prepare_index(&mut fts, &[Plan::new(&CAPSULES)]).unwrap();
    fts.execute(
        "INSERT INTO indexer_sources(source, applied_seq, layout) VALUES ('capsules', 0, ?1)",
        [Plan::new(&CAPSULES).layout],
    )
    .unwrap();
    (dir, main, fts)
}

fn add_capsules(main: &Connection, from: i64, to: i64) {
    main.execute(
        "WITH RECURSIVE n(i) AS (SELECT ?1 UNION ALL SELECT i + 1 FROM n WHERE i < ?2)
         INSERT INTO capsules(id, workspace_raw, workspace_norm, title, capsule_text,
           capsule_chars, tokens_estimate, created_at, updated_at, seq)
         SELECT 'c' || i, 'w', 'w', 'T' || i, 'word' || i || ' common', 10, 2, 1, 1, i FROM n",
        [from, to],
    )
    .unwrap();
}

/// A wake for tests: no writer commits during a step, so the pace never rests.
fn wake() -> Wake {
    Wake::new(false)
}

fn pass(main: &Connection, fts: &mut Connection) -> rusqlite::Result<(i64, bool)> {
    let wake = wake();
    super::indexing::pass(main, fts, &Plan::new(&CAPSULES), &Pace { wake: &wake })
}

fn watermark(fts: &Connection) -> Option<i64> {
    applied_seq(fts, CAPSULES.name).unwrap()
}

/// A step during which the writer committed text changes is followed by a rest three times
/// its length; a step without one is not.
#[test]
fn the_indexer_rests_after_a_step_only_while_writes_arrive() {
    let wake = wake();
    let pace = Pace { wake: &wake };
    let started = Instant::now();
    pace.step(|| std::thread::sleep(Duration::from_millis(50)));
    let idle = started.elapsed();
    let started = Instant::now();
    pace.step(|| {
        std::thread::sleep(Duration::from_millis(50));
        wake.queued.fetch_add(1, Ordering::Release);
    });
    let busy = started.elapsed();
    assert!(busy >= Duration::from_millis(200), "rested: {busy:?}");
    assert!(
        idle < busy,
        "no rest without a commit: {idle:?} against {busy:?}"
    );
}

/// A search that starts waiting, or the writer closing, ends a rest at once.
#[test]
fn a_waiting_search_or_the_writer_closing_ends_a_rest() {
    for end in ["search", "close"] {
        let wake = Arc::new(wake());
        let (tx, rx) = std::sync::mpsc::channel();
        let (resting_tx, resting_rx) = std::sync::mpsc::channel();
        let resting = {
            let wake = wake.clone();
            std::thread::spawn(move || {
                let pace = Pace { wake: &wake };
                let started = Instant::now();
                resting_tx.send(()).unwrap();
                pace.rest(Duration::from_secs(300));
                tx.send(started.elapsed()).unwrap();
            })
        };
        let hurry = Hurry {
            wake: wake.clone(),
            indexer: resting.thread().clone(),
        };
        // Counted from when the rest began (the thread may start late on a loaded machine),
        // so a rest that lasts until the search or the close lasts at least this long.
        resting_rx.recv().unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let guard = (end == "search").then(|| hurry.start());
        if end == "close" {
            wake.closed.store(true, Ordering::Release);
            resting.thread().unpark();
        }
        let rested = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("the rest did not end when the {end} came"));
        assert!(rested >= Duration::from_millis(100), "{end}: {rested:?}");
        drop(guard);
        assert_eq!(wake.waiting.load(Ordering::Acquire), 0);
        resting.join().unwrap();
    }
}

fn hits_in(fts: &Connection, table: &str, q: &str) -> i64 {
    fts.query_row(
        &format!("SELECT count(*) FROM {table} WHERE {table} MATCH ?1"),
        [q],
        |r| r.get(0),
    )
    .unwrap()
}

fn hits(fts: &Connection, q: &str) -> i64 {
    hits_in(fts, "capsules_fts", q)
}

/// A pass reads the queue chunk by chunk into one transaction, up to `PASS_SIZE` entries,
/// and says whether more is queued; the next pass takes the rest.
#[test]
fn passes_index_the_queue_in_chunks_up_to_the_pass_size() {
    let n = PASS_SIZE + READ_CHUNK + 7;
    let (_dir, main, mut fts) = setup(n);
    let (applied, more) = pass(&main, &mut fts).unwrap();
    assert_eq!((applied, more), (PASS_SIZE, true));
    assert_eq!(watermark(&fts), Some(PASS_SIZE));
    assert_eq!(hits(&fts, "common"), PASS_SIZE);
    let (applied, more) = pass(&main, &mut fts).unwrap();
    assert_eq!((applied, more), (n, false));
    assert_eq!(hits(&fts, "common"), n);
    assert_eq!(hits(&fts, &format!("word{n}")), 1);
    // Nothing queued: the watermark stays.
    assert_eq!(pass(&main, &mut fts).unwrap(), (n, false));
    assert_eq!(watermark(&fts), Some(n));
}

/// A queue ending exactly on a chunk boundary is caught up in one pass.
#[test]
fn a_queue_ending_on_a_chunk_boundary_is_caught_up() {
    let (_dir, main, mut fts) = setup(2 * READ_CHUNK);
    assert_eq!(pass(&main, &mut fts).unwrap(), (2 * READ_CHUNK, false));
    assert_eq!(hits(&fts, "common"), 2 * READ_CHUNK);
}

/// A changed or deleted row replaces or leaves its index entry; a title may be NULL.
#[test]
fn updates_and_deletes_follow_the_rows() {
    let (_dir, main, mut fts) = setup(3);
    main.execute_batch(
        "UPDATE capsules SET title = NULL, capsule_text = 'replaced' WHERE id = 'c1';
         DELETE FROM capsules WHERE id = 'c2';",
    )
    .unwrap();
    assert_eq!(pass(&main, &mut fts).unwrap(), (5, false));
    assert_eq!(
        (
            hits(&fts, "replaced"),
            hits(&fts, "word1"),
            hits(&fts, "word2")
        ),
        (1, 0, 0)
    );
    assert_eq!((hits(&fts, "common"), hits(&fts, "T3")), (1, 1));
}

/// An index file of a build that had one source, its FTS5 table as that build created it
/// (unstemmed), with a row no rebuild would produce, and a watermark of 4 of the 5 capsules.
fn single_source_file() -> (tempfile::TempDir, Connection, Connection) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("moss.db");
    let mut main = Connection::open(&db).unwrap();
    crate::store::migrations::migrate(&mut main, crate::schema::MIGRATIONS).unwrap();
    add_capsules(&main, 1, 5);
    let fts = Connection::open(index_path(&db)).unwrap();
    fts.execute_batch(
        "CREATE VIRTUAL TABLE IF NOT EXISTS capsules_fts USING fts5(
           title, capsule_text,
           tokenize = 'unicode61 remove_diacritics 2'
         );
         CREATE TABLE IF NOT EXISTS indexer_state (
           id          INTEGER PRIMARY KEY CHECK (id = 1),
           applied_seq INTEGER NOT NULL
         );
         INSERT INTO capsules_fts(rowid, title, capsule_text) VALUES (99, 't', 'keptmarker');
         INSERT INTO indexer_state(id, applied_seq) VALUES (1, 4);",
    )
    .unwrap();
    (dir, main, fts)
}

/// The index file of a build that had one source kept its watermark in `indexer_state`: it
/// becomes the capsules source's, with the layout that file was built with, and the index is
/// kept while the source has that layout. A source whose columns or tokenizer changed since
/// its table was built is rebuilt.
#[test]
fn an_index_file_from_before_sources_keeps_its_watermark() {
    let (_dir, main, mut fts) = single_source_file();
    let plans = [Plan::new(&UNSTEMMED_CAPSULES)];
    let pass = |main: &Connection, fts: &mut Connection| {
        let wake = wake();
        super::indexing::pass(main, fts, &plans[0], &Pace { wake: &wake })
    };
    prepare_index(&mut fts, &plans).unwrap();
    assert!(!table_exists(&fts, "indexer_state").unwrap());
    assert_eq!(watermark(&fts), Some(4));
    // The pass applies what came after the watermark, and keeps the rest.
    assert_eq!(pass(&main, &mut fts).unwrap(), (5, false));
    assert_eq!(
        (
            hits(&fts, "keptmarker"),
            hits(&fts, "word5"),
            hits(&fts, "word1")
        ),
        (1, 1, 0),
        "not rebuilt"
    );
    // Reopening changes nothing.
    prepare_index(&mut fts, &plans).unwrap();
    assert_eq!(watermark(&fts), Some(5));
    assert_eq!(hits(&fts, "keptmarker"), 1);

    // Built with other columns: dropped, and rebuilt by the next pass.
    fts.execute(
        "UPDATE indexer_sources SET layout = 'capsule_text' WHERE source = 'capsules'",
        [],
    )
    .unwrap();
    prepare_index(&mut fts, &plans).unwrap();
    assert_eq!(watermark(&fts), None);
    assert_eq!(pass(&main, &mut fts).unwrap(), (5, false));
    assert_eq!((hits(&fts, "keptmarker"), hits(&fts, "common")), (0, 5));
    assert_eq!(watermark(&fts), Some(5));
}

/// An index built without stemming (the single-source file, or a source's table built with
/// the unstemmed tokenizer) is rebuilt once with the stemming one, and then a word finds its
/// other forms; reopening after that keeps the rebuilt index.
#[test]
fn an_unstemmed_index_is_rebuilt_once_and_then_matches_word_forms() {
    let stemmed = [Plan::new(&CAPSULES)];
    // The single-source file.
    let (_dir, main, mut fts) = single_source_file();
    prepare_index(&mut fts, &stemmed).unwrap();
    assert_eq!(watermark(&fts), None, "to be rebuilt");
    assert_eq!(pass(&main, &mut fts).unwrap(), (5, false));
    assert_eq!((hits(&fts, "keptmarker"), hits(&fts, "common")), (0, 5));

    // A multi-source file whose capsules table was built unstemmed.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("moss.db");
    let mut main = Connection::open(&db).unwrap();
    crate::store::migrations::migrate(&mut main, crate::schema::MIGRATIONS).unwrap();
    let mut fts = Connection::open(index_path(&db)).unwrap();
    main.execute(
        "INSERT INTO capsules(id, workspace_raw, workspace_norm, title, capsule_text,
           capsule_chars, tokens_estimate, created_at, updated_at, seq)
         VALUES ('r', 'w', 'w', 'Refunds', 'the tabs were merged', 10, 2, 1, 1, 1)",
        [],
    )
    .unwrap();
    let unstemmed = [Plan::new(&UNSTEMMED_CAPSULES)];
    prepare_index(&mut fts, &unstemmed).unwrap();
    let wake = wake();
    super::indexing::pass(&main, &mut fts, &unstemmed[0], &Pace { wake: &wake }).unwrap();
    assert_eq!((hits(&fts, "tabs"), hits(&fts, "tab")), (1, 0));
    prepare_index(&mut fts, &stemmed).unwrap();
    assert_eq!(watermark(&fts), None, "to be rebuilt");
    assert_eq!(pass(&main, &mut fts).unwrap(), (1, false));
    for q in [
        "tab",
        "tabs",
        "refund",
        "merging",
        "merge",
        "tab*",
        "\"tabs were merged\"",
    ] {
        assert_eq!(hits(&fts, q), 1, "{q}");
    }
    // Once only: reopening keeps the rebuilt index and its watermark.
    prepare_index(&mut fts, &stemmed).unwrap();
    assert_eq!(watermark(&fts), Some(1));
    assert_eq!(hits(&fts, "tab"), 1);
}

/// A second source, described by one descriptor over a table with its queue and triggers,
/// gets its own FTS5 table and watermark; the thread serves both in rounds until neither
/// has more, including a rebuild of one while the other follows its queue.
#[test]
fn the_indexer_serves_every_source_in_rounds() {
    static NOTES: Source = Source {
        name: "notes",
        table: "notes",
        queue: "notes_fts_queue",
        columns: &["body"],
        fts: "notes_fts",
        tokenizer: "unicode61",
        code_aware: false,
        inherits_single_watermark: false,
    };
    let n = PASS_SIZE + 5;
    let (dir, main, mut fts) = setup(n);
    main.execute_batch(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);
         CREATE TABLE notes_fts_queue (seq INTEGER PRIMARY KEY, doc INTEGER NOT NULL);
         INSERT INTO notes(body) VALUES ('before the queue existed');
         CREATE TRIGGER notes_fts_insert AFTER INSERT ON notes BEGIN
           INSERT INTO notes_fts_queue(doc) VALUES (new.rowid);
         END;
         INSERT INTO notes(body) VALUES ('queued note');",
    )
    .unwrap();
    let plans: Vec<Plan> = [&CAPSULES, &NOTES].into_iter().map(Plan::new).collect();
    prepare_index(&mut fts, &plans).unwrap();
    let sources: Vec<Indexed> = plans
        .into_iter()
        .map(|plan| {
            let applied = applied_seq(&fts, plan.source.name).unwrap().unwrap_or(0);
            let queued = main.query_row(&plan.queue_end, [], |r| r.get(0)).unwrap();
            Indexed {
                plan,
                position: Arc::new(Position {
                    applied: AtomicI64::new(applied),
                    queued: AtomicI64::new(queued),
                    held: AtomicI64::new(i64::MAX),
                }),
                progress: watch::channel(applied).0,
            }
        })
        .collect();
    let positions: Vec<Arc<Position>> = sources.iter().map(|s| s.position.clone()).collect();
    // The writer has closed: the thread catches up with everything, then returns.
    let wake = Wake::new(true);
    wake.closed.store(true, Ordering::Release);
    std::thread::spawn(move || run(main, fts, &wake, &sources))
        .join()
        .unwrap();
    let fts = Connection::open(index_path(&dir.path().join("moss.db"))).unwrap();
    assert_eq!(hits(&fts, "common"), n);
    assert_eq!(
        (
            hits_in(&fts, "notes_fts", "existed"),
            hits_in(&fts, "notes_fts", "queued")
        ),
        (1, 1),
        "the new source was built from every row"
    );
    assert_eq!(
        (watermark(&fts), applied_seq(&fts, "notes").unwrap()),
        (Some(n), Some(1))
    );
    assert_eq!(positions[0].applied.load(Ordering::Acquire), n);
    assert_eq!(positions[1].applied.load(Ordering::Acquire), 1);
}
