//! The database's schema: every family's migrations, gathered for the store, which knows
//! families only through the lists it is handed. The numbers form one global order; a new
//! migration takes the next free number in its family's list.

use crate::store::migrations::{self, Migration};

/// Every migration list, in no particular order (the store orders them by version).
pub static MIGRATIONS: &[&[Migration]] = &[
    migrations::STORE,
    crate::capsule::migrations::MIGRATIONS,
    crate::reasoning::migrations::MIGRATIONS,
    crate::memory::migrations::MIGRATIONS,
    crate::tasks::migrations::MIGRATIONS,
    crate::moss::migrations::MIGRATIONS,
];

/// Every migration list of the PostgreSQL engine, which numbers its own from 1.
pub static MIGRATIONS_POSTGRES: &[&[Migration]] = &[
    migrations::STORE_POSTGRES,
    crate::capsule::migrations::POSTGRES,
    crate::reasoning::migrations::POSTGRES,
    crate::memory::migrations::POSTGRES,
    crate::tasks::migrations::POSTGRES,
    crate::moss::migrations::POSTGRES,
];

/// The options a store is opened with under `config`: every family's full-text sources and
/// migrations.
pub fn store_options(config: &crate::config::Config) -> crate::store::StoreOptions {
    crate::store::StoreOptions {
        durability: config.durability,
        read_pool_size: config.read_pool_size,
        read_pool_idle: config.read_pool_idle,
        search_tokenizer: config.search_tokenizer,
        search_sources: crate::app::SEARCH_SOURCES,
        model_dir: config.embeddings.model_dir.clone(),
        embed_sources: crate::app::EMBED_SOURCES,
        migrations: MIGRATIONS,
        migrations_postgres: MIGRATIONS_POSTGRES,
    }
}

/// The store at `path`, opened (created and migrated) as a daemon of the default configuration
/// opens it: for tests and tools that need the families' tables without a daemon.
pub fn open_default(
    path: &std::path::Path,
) -> crate::error::Result<(crate::store::Store, crate::store::StoreThreads)> {
    crate::store::Store::open(path, &store_options(&crate::config::Config::default()))
}

/// The schema version this build brings a database to.
pub fn version() -> u32 {
    migrations::latest(MIGRATIONS)
}

/// A connection to a new scratch schema on the test server, brought to the daemon's whole
/// PostgreSQL schema (every family, the search columns); `None` (a skip) without a server. For
/// the families' tests of their statements on PostgreSQL.
#[cfg(test)]
pub fn postgres_scratch() -> Option<(
    crate::store::engine::postgres::testing::Scratch,
    crate::store::engine::postgres::PgConn,
)> {
    let scratch = crate::store::engine::postgres::testing::Scratch::new()?;
    let pg = scratch.connect();
    migrations::migrate_postgres_then(&pg, MIGRATIONS_POSTGRES, |db| {
        crate::store::engine::search::ensure_columns(db, crate::app::SEARCH_SOURCES)
    })
    .unwrap();
    Some((scratch, pg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::migrations::migrate;
    use crate::store::migrations::ordered;
    use rusqlite::Connection;

    /// Applies the first `n` migrations, as a database of version `n` has them.
    fn up_to(conn: &Connection, n: usize) {
        for m in &ordered(MIGRATIONS).unwrap()[..n] {
            conn.execute_batch(m.sql).unwrap();
        }
        conn.pragma_update(None, "user_version", n as u32).unwrap();
    }

    /// Every family's PostgreSQL schema applies after the store's, takes the search columns of
    /// every search source, and holds every table and column SQLite's schema has (but the
    /// bookkeeping each engine keeps its own way), so that a copy carries everything.
    #[test]
    fn the_postgres_schema_holds_what_the_sqlite_schema_holds() {
        use crate::store::engine::postgres::testing::Scratch;
        use crate::store::engine::{Db, search};
        let Some(scratch) = Scratch::new() else {
            return;
        };
        let pg = scratch.connect();
        let latest =
            crate::store::migrations::migrate_postgres_then(&pg, MIGRATIONS_POSTGRES, |db| {
                search::ensure_columns(db, crate::app::SEARCH_SOURCES)
            })
            .unwrap();
        assert_eq!(latest, migrations::latest(MIGRATIONS_POSTGRES));
        let mut sqlite = Connection::open_in_memory().unwrap();
        migrate(&mut sqlite, MIGRATIONS).unwrap();
        let lite = Db::Sqlite(&sqlite);
        let tables: Vec<String> = lite
            .query_map(
                "SELECT name FROM sqlite_master WHERE type = 'table'
                   AND name NOT LIKE 'sqlite_%' AND name != 'store_sequence' ORDER BY name",
                &[],
                |r| r.get(0),
            )
            .unwrap();
        let post = Db::Postgres(&pg);
        let mut missing = Vec::new();
        for table in &tables {
            let columns: Vec<String> = lite
                .query_map(
                    "SELECT name FROM pragma_table_info(?1) ORDER BY cid",
                    crate::db_params![table.as_str()],
                    |r| r.get(0),
                )
                .unwrap();
            let there: Vec<String> = post
                .query_map(
                    "SELECT column_name::text FROM information_schema.columns
                     WHERE table_schema = current_schema() AND table_name = ?1",
                    crate::db_params![table.as_str()],
                    |r| r.get(0),
                )
                .unwrap();
            if there.is_empty() {
                missing.push(format!("table {table}"));
                continue;
            }
            for c in columns.iter().filter(|c| !there.contains(c)) {
                missing.push(format!("{table}.{c}"));
            }
        }
        assert!(
            missing.is_empty(),
            "not in the PostgreSQL schema: {missing:?}"
        );
        // The search sources can be searched.
        for source in crate::app::SEARCH_SOURCES {
            post.query_opt(
                &format!(
                    "SELECT 1 FROM {} WHERE {} @@ to_tsquery('{}', 'x') LIMIT 1",
                    source.table,
                    search::WORDS,
                    search::CONFIG
                ),
                &[],
                |_| Ok(()),
            )
            .unwrap();
        }
    }

    #[test]
    fn migrations_apply_once_and_are_idempotent() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut conn, MIGRATIONS).unwrap(), version());
        assert_eq!(migrate(&mut conn, MIGRATIONS).unwrap(), version());
        let v: u32 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, version());
    }

    #[test]
    fn text_changes_are_queued_for_the_indexer() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, MIGRATIONS).unwrap();
        conn.execute(
            "INSERT INTO capsules(id, workspace_raw, workspace_norm, title, capsule_text,
               capsule_chars, tokens_estimate, created_at, updated_at, seq)
             VALUES ('a', 'w', 'w', 'Alpha', 'redis cache', 11, 3, 1, 1, 1)",
            [],
        )
        .unwrap();
        conn.execute("UPDATE capsules SET phase = 'x' WHERE id = 'a'", [])
            .unwrap();
        conn.execute("UPDATE capsules SET capsule_text = 'pg' WHERE id = 'a'", [])
            .unwrap();
        conn.execute("DELETE FROM capsules WHERE id = 'a'", [])
            .unwrap();
        let queued: i64 = conn
            .query_row("SELECT count(*) FROM capsules_fts_queue", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            queued, 3,
            "insert, text update, delete; not the metadata update"
        );
    }

    #[test]
    fn purging_a_capsule_takes_its_versions_and_evidence() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, MIGRATIONS).unwrap();
        for id in ["a", "b"] {
            conn.execute(
                "INSERT INTO capsules(id, workspace_raw, workspace_norm, capsule_text,
                   capsule_chars, tokens_estimate, created_at, updated_at, seq)
                 VALUES (?1, 'w', 'w', 'text', 4, 1, 1, 1, 1)",
                [id],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO capsule_evidence(capsule_id, evidence_json) VALUES (?1, '[]')",
                [id],
            )
            .unwrap();
            conn.execute(
                "INSERT INTO capsule_versions(capsule_id, revision, capsule_text, capsule_chars,
                   tokens_estimate, updated_at) VALUES (?1, 1, 'old', 3, 1, 1)",
                [id],
            )
            .unwrap();
            conn.execute(
                "UPDATE capsules SET versions_json = json_array(last_insert_rowid())
                 WHERE id = ?1",
                [id],
            )
            .unwrap();
        }
        conn.execute("DELETE FROM capsules WHERE id = 'a'", [])
            .unwrap();
        for table in ["capsule_evidence", "capsule_versions"] {
            let left: Vec<String> = conn
                .prepare(&format!("SELECT capsule_id FROM {table}"))
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap();
            assert_eq!(left, ["b"], "{table}");
        }
    }

    #[test]
    fn a_version_10_database_keeps_its_capsule_versions_in_order_in_the_log() {
        let mut conn = Connection::open_in_memory().unwrap();
        up_to(&conn, 10);
        conn.execute_batch(
            "INSERT INTO capsules(id, workspace_raw, workspace_norm, capsule_text, capsule_chars,
               tokens_estimate, created_at, updated_at, seq, revision)
             VALUES ('a', 'w', 'w', 'a now', 5, 2, 1, 9, 1, 4),
                    ('b', 'w', 'w', 'b now', 5, 2, 1, 9, 2, 2),
                    ('c', 'w', 'w', 'c now', 5, 2, 1, 9, 3, 1);
             INSERT INTO capsule_versions(capsule_id, revision, capsule_text, capsule_chars,
               tokens_estimate, updated_at, evidence_json)
             VALUES ('b', 1, 'b one', 5, 2, 1, NULL),
                    ('a', 3, 'a three', 7, 2, 3, x'01'),
                    ('a', 1, 'a one', 5, 2, 1, NULL),
                    ('a', 2, 'a two', 5, 2, 2, NULL),
                    ('gone', 1, 'purged before', 13, 2, 1, NULL);",
        )
        .unwrap();
        assert_eq!(migrate(&mut conn, MIGRATIONS).unwrap(), version());
        let newest_first = |id: &str| -> Vec<(i64, String)> {
            conn.prepare(
                "SELECT v.revision, CAST(v.capsule_text AS TEXT)
                 FROM capsules c, json_each(c.versions_json) j
                 JOIN capsule_versions v ON v.vid = j.value
                 WHERE c.id = ?1 ORDER BY j.key",
            )
            .unwrap()
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
        };
        let a = newest_first("a");
        assert_eq!(
            a,
            [
                (3, "a three".into()),
                (2, "a two".into()),
                (1, "a one".into())
            ]
        );
        assert_eq!(newest_first("b"), [(1, "b one".into())]);
        let c: Option<String> = conn
            .query_row(
                "SELECT versions_json FROM capsules WHERE id = 'c'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(c, None, "a capsule without versions has no list");
        let (rows, evidence): (i64, Vec<u8>) = conn
            .query_row(
                "SELECT (SELECT count(*) FROM capsule_versions), evidence_json
                 FROM capsule_versions WHERE revision = 3",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(
            rows, 4,
            "versions of a capsule already purged are not carried"
        );
        assert_eq!(evidence, [1]);
        let index: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'idx_capsule_versions'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(index, 0, "the list is the index");
        conn.execute("DELETE FROM capsules WHERE id = 'a'", [])
            .unwrap();
        let left: i64 = conn
            .query_row("SELECT count(*) FROM capsule_versions", [], |r| r.get(0))
            .unwrap();
        assert_eq!(left, 1, "purging a takes its three versions, not b's");
    }

    #[test]
    fn a_version_1_database_gets_ascending_time_indexes_and_keeps_its_rows() {
        let mut conn = Connection::open_in_memory().unwrap();
        up_to(&conn, 1);
        conn.execute(
            "INSERT INTO capsules(id, workspace_raw, workspace_norm, capsule_text, capsule_chars,
               tokens_estimate, created_at, updated_at, seq)
             VALUES ('a', 'w', 'w', 'text', 4, 1, 1, 1, 1)",
            [],
        )
        .unwrap();
        assert_eq!(migrate(&mut conn, MIGRATIONS).unwrap(), version());
        for index in [
            "idx_capsules_workspace_updated",
            "idx_capsules_updated",
            "idx_capsules_workspace_name_deleted",
        ] {
            let descending: i64 = conn
                .query_row(
                    &format!("SELECT count(*) FROM pragma_index_xinfo('{index}') WHERE desc"),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(descending, 0, "{index}");
        }
        let id: String = conn
            .query_row(
                "SELECT id FROM capsules WHERE workspace_norm = 'w' ORDER BY updated_at DESC",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(id, "a");
    }

    #[test]
    fn a_version_5_database_keeps_its_memories_findable_by_identity_and_context() {
        let mut conn = Connection::open_in_memory().unwrap();
        up_to(&conn, 5);
        conn.execute_batch(
            "INSERT INTO memories(rid, id, workspace, session, identity, content, contexts_json,
               contexts_text, context_count, weight, seq, created_at, updated_at)
             VALUES (1, 'a', 'w', '', x'01', 'on two files', '[\"A.py\",\"b.py\"]', 'A.py b.py',
                     2, 1.0, 1, 1, 1),
                    (2, 'b', 'w', 's', x'02', 'no context', '[]', '', 0, 1.0, 2, 1, 1);
             INSERT INTO memory_contexts(workspace, context, rid, basename)
             VALUES ('w', 'a.py', 1, 'a.py'), ('w', 'b.py', 1, 'b.py');",
        )
        .unwrap();
        assert_eq!(migrate(&mut conn, MIGRATIONS).unwrap(), version());
        let rows: Vec<(String, String, Vec<u8>, i64)> = conn
            .prepare("SELECT context, session, identity, rid FROM memory_contexts ORDER BY context")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            rows,
            vec![
                (String::new(), "s".to_string(), vec![2], 2),
                ("a.py".to_string(), String::new(), vec![1], 1),
                ("b.py".to_string(), String::new(), vec![1], 1),
            ]
        );
        let identity_index: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'memories_identity'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(identity_index, 0);
    }

    #[test]
    fn the_sequence_starts_at_the_highest_capsule_seq() {
        let mut conn = Connection::open_in_memory().unwrap();
        up_to(&conn, 2);
        conn.execute(
            "INSERT INTO capsules(id, workspace_raw, workspace_norm, capsule_text, capsule_chars,
               tokens_estimate, created_at, updated_at, seq)
             VALUES ('a', 'w', 'w', 'text', 4, 1, 1, 1, 41),
                    ('b', 'w', 'w', 'text', 4, 1, 1, 1, 7)",
            [],
        )
        .unwrap();
        migrate(&mut conn, MIGRATIONS).unwrap();
        let value: i64 = conn
            .query_row("SELECT value FROM store_sequence WHERE id = 1", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(value, 41);
        let mut empty = Connection::open_in_memory().unwrap();
        migrate(&mut empty, MIGRATIONS).unwrap();
        let value: i64 = empty
            .query_row("SELECT value FROM store_sequence", [], |r| r.get(0))
            .unwrap();
        assert_eq!(value, 0, "a new database starts at 0");
    }

    /// The plan of `sql` on a migrated database, one detail per line.
    /// Parameters are left unbound, as the daemon's plans are made without their values.
    fn plan(conn: &Connection, sql: &str) -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let mut rows = stmt.raw_query();
        let mut out = Vec::new();
        while let Some(r) = rows.next().unwrap() {
            out.push(r.get::<_, String>(3).unwrap());
        }
        out.join("\n")
    }

    #[test]
    fn newest_first_pages_read_an_index_without_sorting() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, MIGRATIONS).unwrap();
        let order = "ORDER BY updated_at DESC, seq DESC LIMIT 20";
        for (sql, index) in [
            (
                format!(
                    "SELECT id FROM capsules WHERE workspace_norm = 'w' AND deleted_at IS NULL {order}"
                ),
                "idx_capsules_workspace_updated",
            ),
            (
                format!("SELECT id FROM capsules WHERE deleted_at IS NULL {order}"),
                "idx_capsules_updated",
            ),
        ] {
            let p = plan(&conn, &sql);
            assert!(p.contains(index), "{sql}: {p}");
            assert!(!p.contains("TEMP B-TREE"), "{sql} sorts: {p}");
        }
    }

    /// The newest entries, memories, cards and handoffs of a workspace or task are index
    /// ranges read in order: no sort of the workspace's rows, no scan of its capsules.
    #[test]
    fn newest_of_a_workspace_reads_an_index_without_sorting() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn, MIGRATIONS).unwrap();
        for (sql, index) in [
            (
                "SELECT seq, content FROM reasoning_entries WHERE workspace = ?1
                 ORDER BY seq DESC LIMIT ?2",
                "reasoning_entries_recent",
            ),
            (
                "SELECT seq, content FROM reasoning_entries
                 WHERE workspace = ?1 AND format = 'card'
                   AND json_extract(meta_json, '$.card_type') = ?2
                   AND (?3 IS NULL OR doc LIKE ?3 OR branch = 'task/' || ?4)
                 ORDER BY seq DESC LIMIT ?5",
                "reasoning_entries_cards",
            ),
            (
                "SELECT id, content FROM memories WHERE workspace = ?1 AND session = ''
                 ORDER BY seq DESC LIMIT ?2",
                "memories_recent",
            ),
        ] {
            let p = plan(&conn, sql);
            assert!(p.contains(index), "{sql}: {p}");
            assert!(!p.contains("TEMP B-TREE"), "{sql} sorts: {p}");
        }
        let p = plan(
            &conn,
            "SELECT COUNT(DISTINCT rid) FROM memory_contexts
             WHERE workspace = ?1 AND context = lower(?2)",
        );
        assert!(p.contains("workspace=? AND context=?"), "{p}");
    }

    /// The texts of plans, tasks and steps (the tasks family's full-text and embedding source)
    /// are filled from the rows a database of version 18 already holds, keeping their document
    /// numbers and queueing each for the indexes, and follow every insert, rename and delete
    /// after; the word index they replace is gone.
    #[test]
    fn task_texts_are_backfilled_queued_and_follow_items_and_steps() {
        let mut conn = Connection::open_in_memory().unwrap();
        up_to(&conn, 18);
        conn.execute_batch(
            "INSERT INTO task_items(workspace, id, kind, title, description, revision, seq,
               created_at_ms, updated_at_ms)
             VALUES ('w', 'TASK-001', 'task', 'Refund flow', 'keeps tabs', 1, 1, 1, 1);
             INSERT INTO task_steps(workspace, task, step_id, ordinal, title, criteria_json,
               tests_json, blockers_json)
             VALUES ('w', 'TASK-001', 'STEP-0001', 0, 'Rotate the refresh_token', '[]', '[]',
               '[]');",
        )
        .unwrap();
        let old_docs: Vec<i64> = conn
            .prepare("SELECT doc FROM task_words_map ORDER BY doc")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        migrate(&mut conn, MIGRATIONS).unwrap();
        let texts = |conn: &Connection| -> Vec<(i64, String, String, String)> {
            conn.prepare(
                "SELECT doc, item || '/' || step, title, body FROM task_texts ORDER BY doc",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap()
        };
        let queued = |conn: &Connection| -> Vec<i64> {
            conn.prepare("SELECT doc FROM task_texts_fts_queue ORDER BY seq")
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        let t = |d: i64, k: &str, title: &str, body: &str| {
            (d, k.to_string(), title.to_string(), body.to_string())
        };
        let (item, step) = (old_docs[0], old_docs[1]);
        assert_eq!(
            texts(&conn),
            [
                t(item, "TASK-001/", "Refund flow", "keeps tabs"),
                t(step, "TASK-001/STEP-0001", "Rotate the refresh_token", ""),
            ]
        );
        assert_eq!(queued(&conn), [item, step]);
        let gone: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name LIKE 'task_words%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(gone, 0, "the word index and its triggers are dropped");

        conn.execute_batch(
            "DELETE FROM task_texts_fts_queue;
             INSERT INTO task_steps(workspace, task, step_id, ordinal, title, criteria_json,
               tests_json, blockers_json)
             VALUES ('w', 'TASK-001', 'STEP-0002', 1, 'Deploy it', '[]', '[]', '[]');
             UPDATE task_steps SET title = 'Write the endpoint' WHERE step_id = 'STEP-0001';
             UPDATE task_items SET title = 'Payments', description = NULL WHERE id = 'TASK-001';
             UPDATE task_steps SET done = 1 WHERE step_id = 'STEP-0001';",
        )
        .unwrap();
        let added = step + 1;
        assert_eq!(
            texts(&conn),
            [
                t(item, "TASK-001/", "Payments", ""),
                t(step, "TASK-001/STEP-0001", "Write the endpoint", ""),
                t(added, "TASK-001/STEP-0002", "Deploy it", ""),
            ]
        );
        // A change to another column queues nothing.
        assert_eq!(queued(&conn), [added, step, item]);
        conn.execute("DELETE FROM task_steps WHERE step_id = 'STEP-0002'", [])
            .unwrap();
        assert_eq!(texts(&conn).len(), 2);
        assert_eq!(queued(&conn), [added, step, item, added]);
    }

    /// What `workspace_activity` should hold, grouped from the items themselves: workspace,
    /// family, counted items, newest write (as `moss_workspaces` grouped them before the table).
    fn activity_grouped(conn: &Connection) -> Vec<(String, String, i64, i64)> {
        conn.prepare(
            "SELECT workspace_norm, 'capsules', SUM(deleted_at IS NULL), MAX(updated_at) * 1000
             FROM capsules GROUP BY workspace_norm
             UNION ALL SELECT workspace, 'reasoning', COUNT(*), MAX(ts_ms)
             FROM reasoning_entries GROUP BY workspace
             UNION ALL SELECT workspace, 'tasks', COUNT(*), MAX(updated_at_ms)
             FROM task_items GROUP BY workspace
             UNION ALL SELECT workspace, 'memories', COUNT(*), MAX(updated_at) * 1000
             FROM memories GROUP BY workspace
             ORDER BY 1, 2",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
    }

    fn activity_kept(conn: &Connection) -> Vec<(String, String, i64, i64)> {
        conn.prepare(
            "SELECT workspace, family, counted, last_ms FROM workspace_activity ORDER BY 1, 2",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
    }

    /// The counts per workspace and family are filled from the rows a version 17 database
    /// holds, and follow every insert, update, soft delete, restore, move and delete after.
    #[test]
    fn workspace_activity_is_backfilled_and_follows_every_write() {
        let mut conn = Connection::open_in_memory().unwrap();
        up_to(&conn, 17);
        let capsule = "INSERT INTO capsules(id, workspace_raw, workspace_norm, capsule_text,
               capsule_chars, tokens_estimate, created_at, updated_at, seq, deleted_at)
             VALUES (?1, ?2, ?2, 'text', 4, 1, 1, ?3, ?3, ?4)";
        let entry = "INSERT INTO reasoning_entries(seq, workspace, branch, doc, ts_ms, kind)
             VALUES (?1, ?2, 'main', 'notes', ?3, 'note')";
        let task = "INSERT INTO task_items(workspace, id, kind, title, revision, seq,
               created_at_ms, updated_at_ms) VALUES (?1, ?2, 'task', 'T', 1, 1, 1, ?3)";
        let memory = "INSERT INTO memories(rid, id, workspace, session, identity, content,
               contexts_json, contexts_text, context_count, weight, seq, created_at, updated_at)
             VALUES (?1, ?1, ?2, ?3, randomblob(16), 'm', '[]', '', 0, 1.0, ?1, 1, ?4)";
        let before: [(&str, &str, i64, Option<i64>); 3] = [
            ("a", "w", 5, None),
            ("b", "w", 9, Some(9)),
            ("c", "v", 3, None),
        ];
        for (id, ws, at, deleted) in before {
            conn.execute(capsule, rusqlite::params![id, ws, at, deleted])
                .unwrap();
        }
        conn.execute(entry, rusqlite::params![1, "w", 7000])
            .unwrap();
        conn.execute(task, rusqlite::params!["v", "TASK-001", 8000])
            .unwrap();
        conn.execute(memory, rusqlite::params![1, "w", "", 4])
            .unwrap();
        conn.execute(memory, rusqlite::params![2, "w", "s", 6])
            .unwrap();
        assert_eq!(migrate(&mut conn, MIGRATIONS).unwrap(), version());
        let grouped = activity_grouped(&conn);
        assert_eq!(activity_kept(&conn), grouped);
        assert!(grouped.contains(&("w".into(), "capsules".into(), 1, 9000)));

        let steps = [
            // Stored, updated, soft-deleted, restored, moved to another workspace.
            "INSERT INTO capsules(id, workspace_raw, workspace_norm, capsule_text, capsule_chars,
               tokens_estimate, created_at, updated_at, seq) VALUES ('d', 'w', 'w', 't', 1, 1,
               1, 10, 10)",
            "UPDATE capsules SET capsule_text = 'u', updated_at = 11 WHERE id = 'd'",
            "UPDATE capsules SET deleted_at = 12, updated_at = 12 WHERE id = 'a'",
            "UPDATE capsules SET deleted_at = NULL, updated_at = 13 WHERE id = 'b'",
            "UPDATE capsules SET workspace_norm = 'x', workspace_raw = 'x' WHERE id = 'c'",
            "INSERT INTO reasoning_entries(seq, workspace, branch, doc, ts_ms, kind)
             VALUES (2, 'x', 'main', 'notes', 14000, 'note')",
            "UPDATE task_items SET updated_at_ms = 15000, title = 'U' WHERE id = 'TASK-001'",
            "INSERT INTO memories(rid, id, workspace, session, identity, content, contexts_json,
               contexts_text, context_count, weight, seq, created_at, updated_at)
             VALUES (3, '3', 'v', '', x'03', 'm', '[]', '', 0, 1.0, 3, 1, 16)",
            "UPDATE memories SET weight = 2.0, updated_at = 17 WHERE rid = 1",
            // Purged and forgotten: items older than the newest write of their workspace.
            "DELETE FROM capsules WHERE id = 'a'",
            "DELETE FROM memories WHERE rid = 2",
        ];
        for sql in steps {
            conn.execute(sql, []).unwrap();
            assert_eq!(activity_kept(&conn), activity_grouped(&conn), "after {sql}");
        }
        // The last item of a workspace's family takes its row; a purge of the newest item
        // leaves the last activity where it was.
        conn.execute("DELETE FROM capsules WHERE workspace_norm = 'x'", [])
            .unwrap();
        conn.execute("DELETE FROM memories WHERE rid = 1", [])
            .unwrap();
        let kept = activity_kept(&conn);
        assert!(
            !kept.iter().any(|r| r.0 == "x" && r.1 == "capsules"),
            "{kept:?}"
        );
        assert!(
            !kept.iter().any(|r| r.0 == "w" && r.1 == "memories"),
            "{kept:?}"
        );
        conn.execute("DELETE FROM capsules WHERE id = 'b'", [])
            .unwrap();
        let w = |conn: &Connection| -> (i64, i64) {
            conn.query_row(
                "SELECT counted, last_ms FROM workspace_activity
                 WHERE workspace = 'w' AND family = 'capsules'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap()
        };
        assert_eq!(w(&conn), (1, 13_000), "d counts; b's write stays the last");
    }
}
