//! The memory family's schema migrations. Their numbers are the database's one global order
//! (`PRAGMA user_version`); the store applies every family's list in that order (see
//! [`crate::schema`]). An existing migration is never edited: a change is a new entry with the
//! next free number.

use crate::store::migrations::Migration;

/// The memory family's migrations, by version.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 5,
        // The associative memory. `rid` is the full-text index's document id; `identity` hashes
        // content, contexts and slot (16 bytes of SHA-256), so storing the same knowledge again
        // updates it. Contexts are
        // also rows of `memory_contexts`, normalized, for exact, basename and parent lookups.
        // `session` is '' for persistent memories.
        sql: r#"
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
    },
    Migration {
        version: 6,
        // A memory's identity is looked up in `memory_contexts`, under its smallest normalized
        // context (or '' when it has none), instead of in a unique index of its own: a store then
        // touches one B-tree fewer, and the seek reads the page the insert writes. Rows are deleted
        // by key, never by scanning for a rid.
        sql: r#"
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
    },
    Migration {
        version: 12,
        // A Lua source's memories are keyed by the project root it ran for (`source_root`, ''
        // without one) and by whether its body or one of its event handlers stored them, so that a
        // rerun of a project's source replaces only that project's body memories. The projects a
        // daemon has run sources for are kept, to run them again (and get their handlers back)
        // after a restart.
        sql: r#"
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
    },
    Migration {
        version: 16,
        // A workspace's newest persistent memories are one index range read backwards
        // (moss_context's last changes), not a sort of the whole workspace.
        sql: r#"
    CREATE INDEX memories_recent ON memories(workspace, session, seq);
    "#,
    },
];

/// The memory family's schema on PostgreSQL: the end state of [`MIGRATIONS`] in one migration
/// (PostgreSQL numbers its own; see [`crate::store::migrations::STORE_POSTGRES`]). No FTS5
/// table: the store builds the full-text index itself from `memories_fts_queue`.
pub const POSTGRES: &[Migration] = &[Migration {
    version: 4,
    sql: r#"
    -- `rid` is SQLite's rowid alias: an identity here, BY DEFAULT so that a copied store keeps
    -- its ids.
    CREATE TABLE memories (
      rid           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      id            TEXT NOT NULL UNIQUE,
      workspace     TEXT NOT NULL,
      session       TEXT NOT NULL DEFAULT '',
      identity      BYTEA NOT NULL,
      content       TEXT NOT NULL,
      contexts_json TEXT NOT NULL,
      contexts_text TEXT NOT NULL,
      context_count BIGINT NOT NULL,
      slot          TEXT,
      weight        DOUBLE PRECISION NOT NULL,
      tags_json     TEXT,
      metadata_json TEXT,
      source        TEXT,
      seq           BIGINT NOT NULL,
      created_at    BIGINT NOT NULL,
      updated_at    BIGINT NOT NULL,
      recalled_at   BIGINT,
      source_root   TEXT NOT NULL DEFAULT '',
      from_handler  BIGINT NOT NULL DEFAULT 0
    );
    -- SQLite's index ends in the rowid implicitly, and a slot's holder is read in that order
    -- (heaviest, then newest stored): here `rid` is named.
    CREATE INDEX memories_slot ON memories(workspace, slot, weight, rid);
    CREATE INDEX memories_source ON memories(workspace, source, source_root)
      WHERE source IS NOT NULL;
    CREATE INDEX memories_session ON memories(session) WHERE session != '';
    CREATE INDEX memories_recent ON memories(workspace, session, seq);

    CREATE TABLE memory_contexts (
      workspace TEXT NOT NULL,
      context   TEXT NOT NULL,
      session   TEXT NOT NULL,
      identity  BYTEA NOT NULL,
      rid       BIGINT NOT NULL,
      basename  TEXT NOT NULL,
      PRIMARY KEY (workspace, context, session, identity)
    );
    CREATE INDEX memory_contexts_basename ON memory_contexts(workspace, basename);

    CREATE TABLE memory_projects (
      workspace   TEXT NOT NULL,
      root        TEXT NOT NULL,
      last_run_at BIGINT NOT NULL,
      PRIMARY KEY (workspace, root)
    );

    CREATE TABLE memories_fts_queue (
      seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      doc BIGINT NOT NULL
    );

    CREATE FUNCTION memories_fts_insert() RETURNS trigger AS $$
    BEGIN
      INSERT INTO memories_fts_queue(doc) VALUES (new.rid);
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql;
    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories
      FOR EACH ROW EXECUTE FUNCTION memories_fts_insert();

    CREATE FUNCTION memories_fts_delete() RETURNS trigger AS $$
    BEGIN
      INSERT INTO memories_fts_queue(doc) VALUES (old.rid);
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql;
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories
      FOR EACH ROW EXECUTE FUNCTION memories_fts_delete();

    CREATE FUNCTION memories_fts_update() RETURNS trigger AS $$
    BEGIN
      INSERT INTO memories_fts_queue(doc) VALUES (new.rid);
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql;
    CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, contexts_text, slot ON memories
      FOR EACH ROW EXECUTE FUNCTION memories_fts_update();
    "#,
}];
