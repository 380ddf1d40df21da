//! Numbered schema migrations, applied under `PRAGMA user_version`.
//!
//! Migration N (1-based) brings the schema from version N-1 to N. An existing migration is never
//! edited: a change is a new entry at the end.

use rusqlite::Connection;

use crate::error::{Error, Result};

/// Each entry is one migration's SQL, run in one exclusive transaction with the version bump.
pub const MIGRATIONS: &[&str] = &[
    // 1: the capsule store with its FTS5 index kept in sync by triggers.
    r#"
    CREATE TABLE capsules (
      id              TEXT PRIMARY KEY,
      workspace_raw   TEXT NOT NULL,
      workspace_norm  TEXT NOT NULL,
      name_raw        TEXT,
      name_norm       TEXT,
      title           TEXT,
      capsule_text    TEXT NOT NULL,
      capsule_chars   INTEGER NOT NULL,
      tokens_estimate INTEGER NOT NULL,
      tags_json       TEXT,
      source          TEXT,
      run_id          TEXT,
      phase           TEXT,
      role            TEXT,
      created_at      INTEGER NOT NULL,
      updated_at      INTEGER NOT NULL,
      deleted_at      INTEGER,
      -- Monotonic write sequence: breaks updated_at ties (seconds) in commit order.
      seq             INTEGER NOT NULL
    );

    -- Fast list/latest. Not partial: soft-deleted rows are few (and purgeable), so active-only
    -- queries skip them cheaply, while include_deleted queries use the same index; one index
    -- instead of two on every write. deleted_at is last so counts are index-only.
    CREATE INDEX idx_capsules_workspace_updated
      ON capsules(workspace_norm, updated_at DESC, seq DESC, deleted_at);

    -- Global inventory order.
    CREATE INDEX idx_capsules_updated ON capsules(updated_at DESC, seq DESC, deleted_at);

    -- Unique name handles (excludes soft-deleted).
    CREATE UNIQUE INDEX idx_capsules_workspace_name_norm
      ON capsules(workspace_norm, name_norm)
      WHERE name_norm IS NOT NULL AND deleted_at IS NULL;

    -- Names of soft-deleted capsules (include_deleted fetch by name). Partial, so storing and
    -- updating active capsules never touches it.
    CREATE INDEX idx_capsules_workspace_name_deleted
      ON capsules(workspace_norm, name_norm, updated_at DESC)
      WHERE name_norm IS NOT NULL AND deleted_at IS NOT NULL;

    -- Orchestration queries.
    CREATE INDEX idx_capsules_orchestration
      ON capsules(run_id, phase, role)
      WHERE run_id IS NOT NULL AND deleted_at IS NULL;

    -- Text changes waiting for the full-text indexer (see store::fts), fed by the triggers
    -- below. Only the row's rowid is queued: the indexer reads the row as it is when it indexes.
    -- The writer trims entries the indexer has applied.
    CREATE TABLE capsules_fts_queue (
      seq INTEGER PRIMARY KEY,
      doc INTEGER NOT NULL
    );

    CREATE TRIGGER capsules_fts_insert AFTER INSERT ON capsules BEGIN
      INSERT INTO capsules_fts_queue(doc) VALUES (new.rowid);
    END;

    CREATE TRIGGER capsules_fts_delete AFTER DELETE ON capsules BEGIN
      INSERT INTO capsules_fts_queue(doc) VALUES (old.rowid);
    END;

    -- Only text changes reindex: soft delete and metadata updates leave the index alone.
    CREATE TRIGGER capsules_fts_update AFTER UPDATE OF title, capsule_text ON capsules BEGIN
      INSERT INTO capsules_fts_queue(doc) VALUES (new.rowid);
    END;
    "#,
    // 2: the time-ordered indexes ascend. New rows carry the highest (updated_at, seq), so each
    // insert lands on the rightmost leaf, which SQLite appends to and fills; descending (as
    // migration 1 created them, `updated_at DESC`), every insert landed on the leftmost leaf and
    // split it in half. After 54,000 stores from `moss bench` the two indexes had their pages 50%
    // full and took 1,750 pages; ascending, 87% full and 1,063 pages: fewer pages to write per
    // commit and to cache. "Newest first" reads them backwards, as fast as forwards and without
    // a sort.
    r#"
    DROP INDEX idx_capsules_workspace_updated;
    CREATE INDEX idx_capsules_workspace_updated
      ON capsules(workspace_norm, updated_at, seq, deleted_at);

    DROP INDEX idx_capsules_updated;
    CREATE INDEX idx_capsules_updated ON capsules(updated_at, seq, deleted_at);

    DROP INDEX idx_capsules_workspace_name_deleted;
    CREATE INDEX idx_capsules_workspace_name_deleted
      ON capsules(workspace_norm, name_norm, updated_at)
      WHERE name_norm IS NOT NULL AND deleted_at IS NOT NULL;
    "#,
    // 3: the database's sequence, one row: the highest number the writer has handed out (see
    // store::writer). Every memory takes its ordering numbers from it, and it never goes down:
    // seeding the writer from max(capsules.seq) at each start went back down after a purge.
    r#"
    CREATE TABLE store_sequence (
      id    INTEGER PRIMARY KEY CHECK (id = 1),
      value INTEGER NOT NULL
    );
    INSERT INTO store_sequence(id, value) SELECT 1, coalesce(max(seq), 0) FROM capsules;
    "#,
    // 4: reasoning memory and plans/tasks. Every `seq` is a number of the store's sequence, so
    // entries, graph versions, conflicts, items and events are ordered across the database.
    // Entries and versions are append-only; a branch's view is computed from its base chain
    // (see reasoning::branches), never copied.
    r#"
    CREATE TABLE reasoning_branches (
      workspace     TEXT NOT NULL,
      name          TEXT NOT NULL,
      base_branch   TEXT,
      base_seq      INTEGER,
      created_seq   INTEGER NOT NULL,
      created_at_ms INTEGER NOT NULL,
      PRIMARY KEY (workspace, name)
    ) WITHOUT ROWID;
    CREATE INDEX reasoning_branches_created ON reasoning_branches(workspace, created_seq);

    CREATE TABLE reasoning_checkout (
      workspace TEXT PRIMARY KEY,
      branch    TEXT NOT NULL
    ) WITHOUT ROWID;

    CREATE TABLE reasoning_entries (
      seq             INTEGER PRIMARY KEY,
      workspace       TEXT NOT NULL,
      branch          TEXT NOT NULL,
      doc             TEXT NOT NULL,
      ts_ms           INTEGER NOT NULL,
      kind            TEXT NOT NULL,
      title           TEXT,
      format          TEXT,
      meta_json       TEXT,
      content         TEXT,
      source_event_id TEXT,
      event_type      TEXT,
      task_id         TEXT,
      path            TEXT,
      payload_json    TEXT
    );
    CREATE INDEX reasoning_entries_doc ON reasoning_entries(workspace, branch, doc, seq);
    CREATE INDEX reasoning_entries_branch ON reasoning_entries(workspace, branch, seq);
    CREATE UNIQUE INDEX reasoning_entries_source
      ON reasoning_entries(workspace, branch, doc, source_event_id)
      WHERE source_event_id IS NOT NULL;

    CREATE TABLE reasoning_entries_fts_queue (seq INTEGER PRIMARY KEY, doc INTEGER NOT NULL);
    CREATE TRIGGER reasoning_entries_fts_insert AFTER INSERT ON reasoning_entries
    WHEN new.content IS NOT NULL OR new.title IS NOT NULL BEGIN
      INSERT INTO reasoning_entries_fts_queue(doc) VALUES (new.seq);
    END;
    CREATE TRIGGER reasoning_entries_fts_delete AFTER DELETE ON reasoning_entries BEGIN
      INSERT INTO reasoning_entries_fts_queue(doc) VALUES (old.seq);
    END;

    CREATE TABLE graph_nodes (
      seq       INTEGER PRIMARY KEY,
      workspace TEXT NOT NULL,
      branch    TEXT NOT NULL,
      doc       TEXT NOT NULL,
      id        TEXT NOT NULL,
      ts_ms     INTEGER NOT NULL,
      type      TEXT,
      title     TEXT,
      text      TEXT,
      status    TEXT,
      tags_json TEXT,
      meta_json TEXT,
      deleted   INTEGER NOT NULL
    );
    CREATE INDEX graph_nodes_key ON graph_nodes(workspace, branch, doc, id, seq);
    CREATE INDEX graph_nodes_recent ON graph_nodes(workspace, branch, doc, seq);

    CREATE TABLE graph_edges (
      seq       INTEGER PRIMARY KEY,
      workspace TEXT NOT NULL,
      branch    TEXT NOT NULL,
      doc       TEXT NOT NULL,
      src       TEXT NOT NULL,
      rel       TEXT NOT NULL,
      dst       TEXT NOT NULL,
      ts_ms     INTEGER NOT NULL,
      meta_json TEXT,
      deleted   INTEGER NOT NULL
    );
    CREATE INDEX graph_edges_key ON graph_edges(workspace, branch, doc, src, rel, dst, seq);
    CREATE INDEX graph_edges_recent ON graph_edges(workspace, branch, doc, seq);
    CREATE INDEX graph_edges_dst ON graph_edges(workspace, branch, doc, dst, seq);

    CREATE TABLE graph_conflicts (
      conflict_id    TEXT PRIMARY KEY,
      seq            INTEGER NOT NULL,
      workspace      TEXT NOT NULL,
      from_branch    TEXT NOT NULL,
      into_branch    TEXT NOT NULL,
      doc            TEXT NOT NULL,
      kind           TEXT NOT NULL,
      key            TEXT NOT NULL,
      base_json      TEXT,
      theirs_json    TEXT,
      ours_json      TEXT,
      status         TEXT NOT NULL,
      resolution     TEXT,
      created_at_ms  INTEGER NOT NULL,
      resolved_at_ms INTEGER
    ) WITHOUT ROWID;
    CREATE INDEX graph_conflicts_into ON graph_conflicts(workspace, into_branch, doc, seq);

    CREATE TABLE task_items (
      workspace     TEXT NOT NULL,
      id            TEXT NOT NULL,
      kind          TEXT NOT NULL,
      parent        TEXT,
      title         TEXT NOT NULL,
      description   TEXT,
      contract      TEXT,
      contract_json TEXT,
      revision      INTEGER NOT NULL,
      seq           INTEGER NOT NULL,
      created_at_ms INTEGER NOT NULL,
      updated_at_ms INTEGER NOT NULL,
      PRIMARY KEY (workspace, id)
    ) WITHOUT ROWID;
    CREATE INDEX task_items_seq ON task_items(workspace, seq);

    CREATE TABLE task_counters (
      workspace TEXT NOT NULL,
      kind      TEXT NOT NULL,
      last      INTEGER NOT NULL,
      PRIMARY KEY (workspace, kind)
    ) WITHOUT ROWID;

    CREATE TABLE task_steps (
      workspace          TEXT NOT NULL,
      task               TEXT NOT NULL,
      step_id            TEXT NOT NULL,
      parent_step        TEXT,
      ordinal            INTEGER NOT NULL,
      title              TEXT NOT NULL,
      criteria_json      TEXT NOT NULL,
      tests_json         TEXT NOT NULL,
      blockers_json      TEXT NOT NULL,
      criteria_confirmed INTEGER NOT NULL DEFAULT 0,
      tests_confirmed    INTEGER NOT NULL DEFAULT 0,
      done               INTEGER NOT NULL DEFAULT 0,
      done_at_ms         INTEGER,
      PRIMARY KEY (workspace, task, step_id)
    ) WITHOUT ROWID;

    CREATE TABLE task_events (
      seq          INTEGER PRIMARY KEY,
      workspace    TEXT NOT NULL,
      ts_ms        INTEGER NOT NULL,
      task_id      TEXT NOT NULL,
      path         TEXT,
      type         TEXT NOT NULL,
      payload_json TEXT NOT NULL
    );
    CREATE INDEX task_events_workspace ON task_events(workspace, seq);

    CREATE TABLE task_focus (
      workspace TEXT PRIMARY KEY,
      task      TEXT NOT NULL
    ) WITHOUT ROWID;
    "#,
    // 5: the associative memory. `rid` is the full-text index's document id; `identity` hashes
    // content, contexts and slot (16 bytes of SHA-256), so storing the same knowledge again
    // updates it. Contexts are
    // also rows of `memory_contexts`, normalized, for exact, basename and parent lookups.
    // `session` is '' for persistent memories.
    r#"
    CREATE TABLE memories (
      rid           INTEGER PRIMARY KEY,
      id            TEXT NOT NULL UNIQUE,
      workspace     TEXT NOT NULL,
      session       TEXT NOT NULL DEFAULT '',
      identity      BLOB NOT NULL,
      content       TEXT NOT NULL,
      contexts_json TEXT NOT NULL,
      contexts_text TEXT NOT NULL,
      context_count INTEGER NOT NULL,
      slot          TEXT,
      weight        REAL NOT NULL,
      tags_json     TEXT,
      metadata_json TEXT,
      source        TEXT,
      seq           INTEGER NOT NULL,
      created_at    INTEGER NOT NULL,
      updated_at    INTEGER NOT NULL,
      recalled_at   INTEGER
    );
    CREATE UNIQUE INDEX memories_identity ON memories(workspace, session, identity);
    CREATE INDEX memories_slot ON memories(workspace, slot, weight);
    CREATE INDEX memories_source ON memories(workspace, source) WHERE source IS NOT NULL;
    CREATE INDEX memories_session ON memories(session) WHERE session != '';

    CREATE TABLE memory_contexts (
      workspace TEXT NOT NULL,
      context   TEXT NOT NULL,
      rid       INTEGER NOT NULL,
      basename  TEXT NOT NULL,
      PRIMARY KEY (workspace, context, rid)
    ) WITHOUT ROWID;
    CREATE INDEX memory_contexts_basename ON memory_contexts(workspace, basename);

    CREATE TABLE memories_fts_queue (seq INTEGER PRIMARY KEY, doc INTEGER NOT NULL);
    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
      INSERT INTO memories_fts_queue(doc) VALUES (new.rid);
    END;
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
      INSERT INTO memories_fts_queue(doc) VALUES (old.rid);
    END;
    CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, contexts_text, slot ON memories BEGIN
      INSERT INTO memories_fts_queue(doc) VALUES (new.rid);
    END;
    "#,
    // 6: a memory's identity is looked up in `memory_contexts`, under its smallest normalized
    // context (or '' when it has none), instead of in a unique index of its own: a store then
    // touches one B-tree fewer, and the seek reads the page the insert writes. Rows are deleted
    // by key, never by scanning for a rid.
    r#"
    CREATE TABLE memory_contexts_new (
      workspace TEXT NOT NULL,
      context   TEXT NOT NULL,
      session   TEXT NOT NULL,
      identity  BLOB NOT NULL,
      rid       INTEGER NOT NULL,
      basename  TEXT NOT NULL,
      PRIMARY KEY (workspace, context, session, identity)
    ) WITHOUT ROWID;
    INSERT OR IGNORE INTO memory_contexts_new(workspace, context, session, identity, rid, basename)
      SELECT c.workspace, c.context, m.session, m.identity, c.rid, c.basename
      FROM memory_contexts c JOIN memories m ON m.rid = c.rid;
    INSERT OR IGNORE INTO memory_contexts_new(workspace, context, session, identity, rid, basename)
      SELECT m.workspace, '', m.session, m.identity, m.rid, ''
      FROM memories m WHERE m.rid NOT IN (SELECT rid FROM memory_contexts);
    DROP TABLE memory_contexts;
    ALTER TABLE memory_contexts_new RENAME TO memory_contexts;
    CREATE INDEX memory_contexts_basename ON memory_contexts(workspace, basename);
    DROP INDEX memories_identity;
    "#,
    // 7: a capsule's revision (1 when stored, one more with every change), for precise
    // optimistic concurrency; an index on the sequence, for watchers reading the changes after
    // a cursor; and a covering index for the stats, which never read a capsule's text.
    r#"
    ALTER TABLE capsules ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
    CREATE INDEX idx_capsules_seq ON capsules(seq);
    CREATE INDEX idx_capsules_stats
      ON capsules(workspace_norm, run_id, deleted_at, phase, role, capsule_chars, created_at, updated_at);
    "#,
    // 8: a capsule's lineage, the refs it was based on as given (JSON array), and an index of
    // the capsules that have one, for walking the lineage downwards.
    r#"
    ALTER TABLE capsules ADD COLUMN based_on_json TEXT;
    CREATE INDEX idx_capsules_based_on ON capsules(id) WHERE based_on_json IS NOT NULL;
    "#,
    // 9: earlier revisions of capsules, as they were before each change (the newest
    // `capsule_versions` of each capsule are kept); they go with their capsule when it is
    // purged.
    r#"
    CREATE TABLE capsule_versions (
      capsule_id      TEXT NOT NULL,
      revision        INTEGER NOT NULL,
      title           TEXT,
      capsule_text    TEXT NOT NULL,
      capsule_chars   INTEGER NOT NULL,
      tokens_estimate INTEGER NOT NULL,
      tags_json       TEXT,
      source          TEXT,
      run_id          TEXT,
      phase           TEXT,
      role            TEXT,
      based_on_json   TEXT,
      updated_at      INTEGER NOT NULL
    );
    CREATE UNIQUE INDEX idx_capsule_versions ON capsule_versions(capsule_id, revision);
    CREATE TRIGGER capsule_versions_purge AFTER DELETE ON capsules BEGIN
      DELETE FROM capsule_versions WHERE capsule_id = old.id;
    END;
    "#,
    // 10: evidence kept with a capsule (snippets, transcript refs), beside its row so that
    // changes that leave it alone never rewrite it; versions keep theirs (packed, like texts).
    r#"
    CREATE TABLE capsule_evidence (
      capsule_id    TEXT PRIMARY KEY,
      evidence_json TEXT NOT NULL
    );
    CREATE TRIGGER capsule_evidence_purge AFTER DELETE ON capsules BEGIN
      DELETE FROM capsule_evidence WHERE capsule_id = old.id;
    END;
    ALTER TABLE capsule_versions ADD COLUMN evidence_json BLOB;
    "#,
    // 11: versions as a log. A version is appended under a fresh `vid` (the table's tail, never
    // a page chosen by capsule) and its capsule's row lists the vids it keeps, newest first
    // (`versions_json`), so that keeping one more and dropping the oldest needs no index on
    // `(capsule_id, revision)`. Versions dropped from a list wait in `capsule_versions_dead`
    // to be deleted together. Existing versions keep their order; purging a capsule takes the
    // versions its list names.
    r#"
    ALTER TABLE capsules ADD COLUMN versions_json TEXT;
    CREATE TABLE capsule_versions_log (
      vid             INTEGER PRIMARY KEY,
      capsule_id      TEXT NOT NULL,
      revision        INTEGER NOT NULL,
      title           TEXT,
      capsule_text    BLOB NOT NULL,
      capsule_chars   INTEGER NOT NULL,
      tokens_estimate INTEGER NOT NULL,
      tags_json       TEXT,
      source          TEXT,
      run_id          TEXT,
      phase           TEXT,
      role            TEXT,
      based_on_json   TEXT,
      updated_at      INTEGER NOT NULL,
      evidence_json   BLOB
    );
    INSERT INTO capsule_versions_log(capsule_id, revision, title, capsule_text, capsule_chars,
      tokens_estimate, tags_json, source, run_id, phase, role, based_on_json, updated_at,
      evidence_json)
    SELECT v.capsule_id, v.revision, v.title, v.capsule_text, v.capsule_chars,
      v.tokens_estimate, v.tags_json, v.source, v.run_id, v.phase, v.role, v.based_on_json,
      v.updated_at, v.evidence_json
    FROM capsule_versions v JOIN capsules c ON c.id = v.capsule_id
    ORDER BY v.capsule_id, v.revision;
    UPDATE capsules SET versions_json = (
      SELECT json_group_array(vid ORDER BY revision DESC) FROM capsule_versions_log l
      WHERE l.capsule_id = capsules.id)
    WHERE id IN (SELECT capsule_id FROM capsule_versions_log);
    DROP TRIGGER capsule_versions_purge;
    DROP TABLE capsule_versions;
    ALTER TABLE capsule_versions_log RENAME TO capsule_versions;
    CREATE TABLE capsule_versions_dead (
      n          INTEGER PRIMARY KEY,
      vid        INTEGER NOT NULL,
      capsule_id TEXT NOT NULL
    );
    CREATE TRIGGER capsule_versions_purge AFTER DELETE ON capsules
    WHEN old.versions_json IS NOT NULL BEGIN
      DELETE FROM capsule_versions
      WHERE vid IN (SELECT value FROM json_each(old.versions_json))
        AND capsule_id = old.id;
    END;
    "#,
    // 12: a Lua source's memories are keyed by the project root it ran for (`source_root`, ''
    // without one) and by whether its body or one of its event handlers stored them, so that a
    // rerun of a project's source replaces only that project's body memories. The projects a
    // daemon has run sources for are kept, to run them again (and get their handlers back)
    // after a restart.
    r#"
    ALTER TABLE memories ADD COLUMN source_root TEXT NOT NULL DEFAULT '';
    ALTER TABLE memories ADD COLUMN from_handler INTEGER NOT NULL DEFAULT 0;
    DROP INDEX memories_source;
    CREATE INDEX memories_source ON memories(workspace, source, source_root)
      WHERE source IS NOT NULL;
    CREATE TABLE memory_projects (
      workspace   TEXT NOT NULL,
      root        TEXT NOT NULL,
      last_run_at INTEGER NOT NULL,
      PRIMARY KEY (workspace, root)
    ) WITHOUT ROWID;
    "#,
    // 13: purged capsules, for capsule_watch: a purge writes each capsule's summary here under
    // a fresh sequence number before deleting it, so a follower learns it is gone. The columns
    // are the capsule summary's, so the watch filter applies to both tables alike.
    r#"
    CREATE TABLE capsule_purged (
      seq            INTEGER PRIMARY KEY,
      purged_at      INTEGER NOT NULL,
      id             TEXT NOT NULL,
      workspace_raw  TEXT NOT NULL,
      workspace_norm TEXT NOT NULL,
      name_raw       TEXT,
      name_norm      TEXT,
      title          TEXT,
      capsule_chars  INTEGER,
      tokens_estimate INTEGER,
      tags_json      TEXT,
      source         TEXT,
      run_id         TEXT,
      phase          TEXT,
      role           TEXT,
      created_at     INTEGER,
      updated_at     INTEGER,
      deleted_at     INTEGER,
      revision       INTEGER,
      based_on_json  TEXT
    );
    CREATE INDEX idx_capsule_purged_at ON capsule_purged(purged_at);
    "#,
    // 14: a capsule handed off for a plan or task names it (`task`, PLAN-### or TASK-### of the
    // capsule's workspace), so the task's handoffs are one index range.
    r#"
    ALTER TABLE capsules ADD COLUMN task TEXT;
    ALTER TABLE capsule_purged ADD COLUMN task TEXT;
    CREATE INDEX idx_capsules_task ON capsules(workspace_norm, task, updated_at DESC, seq DESC)
      WHERE task IS NOT NULL AND deleted_at IS NULL;
    "#,
];

/// Brings the database up to the latest schema. Refuses a database newer than this build.
pub fn migrate(conn: &mut Connection) -> Result<u32> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)?;
    let current: u32 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let latest = MIGRATIONS.len() as u32;
    if current > latest {
        return Err(Error::internal(
            "opening the database",
            format!(
                "the database schema is version {current}, newer than this mossd understands \
                 ({latest}); upgrade mossd"
            ),
        ));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        tx.execute_batch(sql)
            .map_err(|e| Error::internal(&format!("applying migration {}", i + 1), e))?;
        tx.pragma_update(None, "user_version", (i + 1) as u32)?;
    }
    tx.commit()?;
    Ok(latest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_apply_once_and_are_idempotent() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), MIGRATIONS.len() as u32);
        assert_eq!(migrate(&mut conn).unwrap(), MIGRATIONS.len() as u32);
        let v: u32 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, MIGRATIONS.len() as u32);
    }

    #[test]
    fn text_changes_are_queued_for_the_indexer() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
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
        migrate(&mut conn).unwrap();
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
        for sql in &MIGRATIONS[..10] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 10).unwrap();
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
        assert_eq!(migrate(&mut conn).unwrap(), MIGRATIONS.len() as u32);
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
        conn.execute_batch(MIGRATIONS[0]).unwrap();
        conn.pragma_update(None, "user_version", 1).unwrap();
        conn.execute(
            "INSERT INTO capsules(id, workspace_raw, workspace_norm, capsule_text, capsule_chars,
               tokens_estimate, created_at, updated_at, seq)
             VALUES ('a', 'w', 'w', 'text', 4, 1, 1, 1, 1)",
            [],
        )
        .unwrap();
        assert_eq!(migrate(&mut conn).unwrap(), MIGRATIONS.len() as u32);
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
        for sql in &MIGRATIONS[..5] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 5).unwrap();
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
        assert_eq!(migrate(&mut conn).unwrap(), MIGRATIONS.len() as u32);
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
        for sql in &MIGRATIONS[..2] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", 2).unwrap();
        conn.execute(
            "INSERT INTO capsules(id, workspace_raw, workspace_norm, capsule_text, capsule_chars,
               tokens_estimate, created_at, updated_at, seq)
             VALUES ('a', 'w', 'w', 'text', 4, 1, 1, 1, 41),
                    ('b', 'w', 'w', 'text', 4, 1, 1, 1, 7)",
            [],
        )
        .unwrap();
        migrate(&mut conn).unwrap();
        let value: i64 = conn
            .query_row("SELECT value FROM store_sequence WHERE id = 1", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(value, 41);
        let mut empty = Connection::open_in_memory().unwrap();
        migrate(&mut empty).unwrap();
        let value: i64 = empty
            .query_row("SELECT value FROM store_sequence", [], |r| r.get(0))
            .unwrap();
        assert_eq!(value, 0, "a new database starts at 0");
    }

    /// The plan of `sql` on a migrated database, one detail per line.
    fn plan(conn: &Connection, sql: &str) -> String {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, String>(3)).unwrap();
        rows.map(Result::unwrap).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn newest_first_pages_read_an_index_without_sorting() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate(&mut conn).unwrap();
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

    #[test]
    fn a_newer_database_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", 999).unwrap();
        assert!(migrate(&mut conn).is_err());
    }
}
