//! The reasoning family's schema migrations. Their numbers are the database's one global order
//! (`PRAGMA user_version`); the store applies every family's list in that order (see
//! [`crate::schema`]). An existing migration is never edited: a change is a new entry with the
//! next free number.

use crate::store::migrations::Migration;

/// The reasoning family's migrations, by version. Migration 4 also creates the tables of
/// plans and tasks, which the tasks toolset keeps.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 4,
        // Reasoning memory and plans/tasks. Every `seq` is a number of the store's sequence, so
        // entries, graph versions, conflicts, items and events are ordered across the database.
        // Entries and versions are append-only; a branch's view is computed from its base chain
        // (see reasoning::branches), never copied.
        sql: r#"
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
    },
    Migration {
        version: 15,
        // The newest entries of a workspace and its newest think cards of a type are each one
        // index range read backwards (moss_context's last changes, decisions and questions),
        // not a sort of the whole workspace.
        sql: r#"
    CREATE INDEX reasoning_entries_recent ON reasoning_entries(workspace, seq);
    CREATE INDEX reasoning_entries_cards
      ON reasoning_entries(workspace, json_extract(meta_json, '$.card_type'), seq)
      WHERE format = 'card';
    "#,
    },
];

/// The reasoning family's schema on PostgreSQL: the end state of [`MIGRATIONS`] in one
/// migration (PostgreSQL numbers its own, see [`crate::store::migrations::STORE_POSTGRES`]). As
/// on SQLite, it also creates the tables of plans and tasks, which the tasks toolset keeps (its
/// own migrations add their text index).
pub const POSTGRES: &[Migration] = &[Migration {
    version: 3,
    sql: r#"
    CREATE TABLE reasoning_branches (
      workspace     TEXT NOT NULL,
      name          TEXT NOT NULL,
      base_branch   TEXT,
      base_seq      BIGINT,
      created_seq   BIGINT NOT NULL,
      created_at_ms BIGINT NOT NULL,
      PRIMARY KEY (workspace, name)
    );
    CREATE INDEX reasoning_branches_created ON reasoning_branches(workspace, created_seq);

    CREATE TABLE reasoning_checkout (
      workspace TEXT PRIMARY KEY,
      branch    TEXT NOT NULL
    );

    -- `seq` is SQLite's rowid here, which the store's full-text and embedding indexers read
    -- the table by (`c.rowid`); the entries' own statements name `seq`.
    CREATE TABLE reasoning_entries (
      seq             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      workspace       TEXT NOT NULL,
      branch          TEXT NOT NULL,
      doc             TEXT NOT NULL,
      ts_ms           BIGINT NOT NULL,
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
    CREATE INDEX reasoning_entries_recent ON reasoning_entries(workspace, seq);
    -- SQLite's json_extract(meta_json, '$.card_type') is PostgreSQL's
    -- (meta_json::jsonb ->> 'card_type'): the form a statement reading cards takes here.
    CREATE INDEX reasoning_entries_cards
      ON reasoning_entries(workspace, (meta_json::jsonb ->> 'card_type'), seq)
      WHERE format = 'card';

    CREATE TABLE reasoning_entries_fts_queue (
      seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      doc BIGINT NOT NULL
    );
    -- SQLite's trigger bodies are PostgreSQL functions, one per trigger.
    CREATE FUNCTION reasoning_entries_fts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO reasoning_entries_fts_queue(doc) VALUES (new.seq);
      RETURN NULL;
    END $$;
    CREATE TRIGGER reasoning_entries_fts_insert AFTER INSERT ON reasoning_entries
      FOR EACH ROW WHEN (new.content IS NOT NULL OR new.title IS NOT NULL)
      EXECUTE FUNCTION reasoning_entries_fts_insert();
    CREATE FUNCTION reasoning_entries_fts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO reasoning_entries_fts_queue(doc) VALUES (old.seq);
      RETURN NULL;
    END $$;
    CREATE TRIGGER reasoning_entries_fts_delete AFTER DELETE ON reasoning_entries
      FOR EACH ROW EXECUTE FUNCTION reasoning_entries_fts_delete();

    CREATE TABLE graph_nodes (
      seq       BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      workspace TEXT NOT NULL,
      branch    TEXT NOT NULL,
      doc       TEXT NOT NULL,
      id        TEXT NOT NULL,
      ts_ms     BIGINT NOT NULL,
      type      TEXT,
      title     TEXT,
      text      TEXT,
      status    TEXT,
      tags_json TEXT,
      meta_json TEXT,
      deleted   BIGINT NOT NULL
    );
    CREATE INDEX graph_nodes_key ON graph_nodes(workspace, branch, doc, id, seq);
    CREATE INDEX graph_nodes_recent ON graph_nodes(workspace, branch, doc, seq);

    CREATE TABLE graph_edges (
      seq       BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      workspace TEXT NOT NULL,
      branch    TEXT NOT NULL,
      doc       TEXT NOT NULL,
      src       TEXT NOT NULL,
      rel       TEXT NOT NULL,
      dst       TEXT NOT NULL,
      ts_ms     BIGINT NOT NULL,
      meta_json TEXT,
      deleted   BIGINT NOT NULL
    );
    CREATE INDEX graph_edges_key ON graph_edges(workspace, branch, doc, src, rel, dst, seq);
    CREATE INDEX graph_edges_recent ON graph_edges(workspace, branch, doc, seq);
    CREATE INDEX graph_edges_dst ON graph_edges(workspace, branch, doc, dst, seq);

    CREATE TABLE graph_conflicts (
      conflict_id    TEXT PRIMARY KEY,
      seq            BIGINT NOT NULL,
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
      created_at_ms  BIGINT NOT NULL,
      resolved_at_ms BIGINT
    );
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
      revision      BIGINT NOT NULL,
      seq           BIGINT NOT NULL,
      created_at_ms BIGINT NOT NULL,
      updated_at_ms BIGINT NOT NULL,
      PRIMARY KEY (workspace, id)
    );
    CREATE INDEX task_items_seq ON task_items(workspace, seq);

    CREATE TABLE task_counters (
      workspace TEXT NOT NULL,
      kind      TEXT NOT NULL,
      last      BIGINT NOT NULL,
      PRIMARY KEY (workspace, kind)
    );

    CREATE TABLE task_steps (
      workspace          TEXT NOT NULL,
      task               TEXT NOT NULL,
      step_id            TEXT NOT NULL,
      parent_step        TEXT,
      ordinal            BIGINT NOT NULL,
      title              TEXT NOT NULL,
      criteria_json      TEXT NOT NULL,
      tests_json         TEXT NOT NULL,
      blockers_json      TEXT NOT NULL,
      criteria_confirmed BIGINT NOT NULL DEFAULT 0,
      tests_confirmed    BIGINT NOT NULL DEFAULT 0,
      done               BIGINT NOT NULL DEFAULT 0,
      done_at_ms         BIGINT,
      PRIMARY KEY (workspace, task, step_id)
    );

    CREATE TABLE task_events (
      seq          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      workspace    TEXT NOT NULL,
      ts_ms        BIGINT NOT NULL,
      task_id      TEXT NOT NULL,
      path         TEXT,
      type         TEXT NOT NULL,
      payload_json TEXT NOT NULL
    );
    CREATE INDEX task_events_workspace ON task_events(workspace, seq);

    CREATE TABLE task_focus (
      workspace TEXT PRIMARY KEY,
      task      TEXT NOT NULL
    );
    "#,
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reasoning::graph::versions::{all_edges, all_nodes, edge_at, node_at};
    use crate::reasoning::{docs, refs};
    use crate::store::engine::Db;
    use crate::store::engine::postgres::testing::Scratch;
    use moss_client::reasoning::EdgeKey;

    /// The schema applies on PostgreSQL, its trigger queues entries for the index, and the
    /// family's reads of branches, entries and graph versions run on it.
    #[test]
    fn the_postgres_schema_applies_and_the_reads_run_on_it() {
        let Some(scratch) = Scratch::new() else {
            return;
        };
        let pg = scratch.connect();
        let db = Db::Postgres(&pg);
        for m in POSTGRES {
            db.batch(m.sql).unwrap();
        }
        db.batch(
            "INSERT INTO reasoning_branches(workspace, name, base_branch, base_seq, created_seq,
               created_at_ms) VALUES ('w', 'b', 'main', 2, 2, 1);
             INSERT INTO reasoning_entries(seq, workspace, branch, doc, ts_ms, kind, content)
             VALUES (1, 'w', 'main', 'notes', 1, 'note', 'a'), (3, 'w', 'b', 'notes', 1, 'note', 'b'),
               (4, 'w', 'main', 'notes', 1, 'note', 'c'), (5, 'w', 'b', 'trace', 1, 'event', NULL);
             INSERT INTO graph_nodes(seq, workspace, branch, doc, id, ts_ms, type, deleted)
             VALUES (1, 'w', 'main', 'g', 'n', 1, 't', 0), (3, 'w', 'main', 'g', 'n', 1, 't', 1),
               (4, 'w', 'b', 'g', 'm', 1, 't', 0);
             INSERT INTO graph_edges(seq, workspace, branch, doc, src, rel, dst, ts_ms, deleted)
             VALUES (2, 'w', 'main', 'g', 'n', 'supports', 'm', 1, 0);",
        )
        .unwrap();
        let queued: i64 = db
            .query_one(
                "SELECT count(*) FROM reasoning_entries_fts_queue",
                &[],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(queued, 3, "an entry without text is not queued");

        assert_eq!(refs::checkout(db, "w").unwrap(), refs::MAIN);
        assert!(refs::branch(db, "w", "nope").unwrap().is_none());
        let sources = refs::sources(db, "w", "branch", "b").unwrap();
        assert_eq!(
            sources,
            [("b".to_string(), refs::ALL), ("main".to_string(), 2)]
        );
        let view = docs::view(&sources);
        let seqs = |rows: Vec<moss_client::reasoning::Entry>| -> Vec<i64> {
            rows.iter().map(|e| e.seq).collect()
        };
        let notes = docs::read_ranges(db, "w", Some("notes"), None, &view, None, 10).unwrap();
        assert_eq!(seqs(notes), [3, 1]);
        let all = docs::read_ranges(db, "w", None, None, &view, None, 10).unwrap();
        assert_eq!(seqs(all), [5, 3, 1]);
        let events = docs::read_ranges(db, "w", None, Some("event"), &view, None, 10).unwrap();
        assert_eq!(seqs(events), [5]);

        let nodes = all_nodes(db, "w", &sources, "g").unwrap();
        assert_eq!(nodes.len(), 2);
        assert!(!nodes["n"].deleted, "main's tombstone is past the cutoff");
        let n = node_at(db, "w", &[("main".to_string(), refs::ALL)], "g", "n").unwrap();
        assert!(n.unwrap().deleted);
        let k = EdgeKey {
            from: "n".into(),
            rel: "supports".into(),
            to: "m".into(),
        };
        assert_eq!(
            edge_at(db, "w", &sources, "g", &k)
                .unwrap()
                .unwrap()
                .last_seq,
            2
        );
        assert_eq!(all_edges(db, "w", &sources, "g").unwrap().len(), 1);
    }
}
