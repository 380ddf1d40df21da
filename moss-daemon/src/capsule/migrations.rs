//! The capsule family's schema migrations. Their numbers are the database's one global order
//! (`PRAGMA user_version`); the store applies every family's list in that order (see
//! [`crate::schema`]). An existing migration is never edited: a change is a new entry with the
//! next free number.

use crate::store::migrations::Migration;

/// The capsule family's migrations, by version.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        // The capsule store with its FTS5 index kept in sync by triggers.
        sql: r#"
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
    },
    Migration {
        version: 2,
        // The time-ordered indexes ascend. New rows carry the highest (updated_at, seq), so each
        // insert lands on the rightmost leaf, which SQLite appends to and fills; descending (as
        // migration 1 created them, `updated_at DESC`), every insert landed on the leftmost leaf and
        // split it in half. After 54,000 stores from `moss bench` the two indexes had their pages 50%
        // full and took 1,750 pages; ascending, 87% full and 1,063 pages: fewer pages to write per
        // commit and to cache. "Newest first" reads them backwards, as fast as forwards and without
        // a sort.
        sql: r#"
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
    },
    Migration {
        version: 7,
        // A capsule's revision (1 when stored, one more with every change), for precise
        // optimistic concurrency; an index on the sequence, for watchers reading the changes after
        // a cursor; and a covering index for the stats, which never read a capsule's text.
        sql: r#"
    ALTER TABLE capsules ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
    CREATE INDEX idx_capsules_seq ON capsules(seq);
    CREATE INDEX idx_capsules_stats
      ON capsules(workspace_norm, run_id, deleted_at, phase, role, capsule_chars, created_at, updated_at);
    "#,
    },
    Migration {
        version: 8,
        // A capsule's lineage, the refs it was based on as given (JSON array), and an index of
        // the capsules that have one, for walking the lineage downwards.
        sql: r#"
    ALTER TABLE capsules ADD COLUMN based_on_json TEXT;
    CREATE INDEX idx_capsules_based_on ON capsules(id) WHERE based_on_json IS NOT NULL;
    "#,
    },
    Migration {
        version: 9,
        // Earlier revisions of capsules, as they were before each change (the newest
        // `capsule_versions` of each capsule are kept); they go with their capsule when it is
        // purged.
        sql: r#"
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
    },
    Migration {
        version: 10,
        // Evidence kept with a capsule (snippets, transcript refs), beside its row so that
        // changes that leave it alone never rewrite it; versions keep theirs (packed, like texts).
        sql: r#"
    CREATE TABLE capsule_evidence (
      capsule_id    TEXT PRIMARY KEY,
      evidence_json TEXT NOT NULL
    );
    CREATE TRIGGER capsule_evidence_purge AFTER DELETE ON capsules BEGIN
      DELETE FROM capsule_evidence WHERE capsule_id = old.id;
    END;
    ALTER TABLE capsule_versions ADD COLUMN evidence_json BLOB;
    "#,
    },
    Migration {
        version: 11,
        // Versions as a log. A version is appended under a fresh `vid` (the table's tail, never
        // a page chosen by capsule) and its capsule's row lists the vids it keeps, newest first
        // (`versions_json`), so that keeping one more and dropping the oldest needs no index on
        // `(capsule_id, revision)`. Versions dropped from a list wait in `capsule_versions_dead`
        // to be deleted together. Existing versions keep their order; purging a capsule takes the
        // versions its list names.
        sql: r#"
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
    },
    Migration {
        version: 13,
        // Purged capsules, for capsule_watch: a purge writes each capsule's summary here under
        // a fresh sequence number before deleting it, so a follower learns it is gone. The columns
        // are the capsule summary's, so the watch filter applies to both tables alike.
        sql: r#"
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
    },
    Migration {
        version: 14,
        // A capsule handed off for a plan or task names it (`task`, PLAN-### or TASK-### of the
        // capsule's workspace), so the task's handoffs are one index range.
        sql: r#"
    ALTER TABLE capsules ADD COLUMN task TEXT;
    ALTER TABLE capsule_purged ADD COLUMN task TEXT;
    CREATE INDEX idx_capsules_task ON capsules(workspace_norm, task, updated_at DESC, seq DESC)
      WHERE task IS NOT NULL AND deleted_at IS NULL;
    "#,
    },
];

/// The capsule family's schema on PostgreSQL: the end state of [`MIGRATIONS`] in one step
/// (PostgreSQL numbers its own migrations; the store's own is 1). Integers and flags are
/// `BIGINT`, packed texts `BYTEA`; triggers are PL/pgSQL functions. No FTS5 table: the store
/// builds the full-text index itself from `capsules_fts_queue`.
pub const POSTGRES: &[Migration] = &[Migration {
    version: 2,
    sql: r#"
    -- `rowid`: SQLite's implicit row id, which the full-text queue, the search (c.rowid) and
    -- the semantic hits (WHERE rowid = ?1) name, as a real column. BY DEFAULT, so that a copied
    -- store keeps its ids. Last, so the other columns keep SQLite's order.
    CREATE TABLE capsules (
      id              TEXT PRIMARY KEY,
      workspace_raw   TEXT NOT NULL,
      workspace_norm  TEXT NOT NULL,
      name_raw        TEXT,
      name_norm       TEXT,
      title           TEXT,
      capsule_text    TEXT NOT NULL,
      capsule_chars   BIGINT NOT NULL,
      tokens_estimate BIGINT NOT NULL,
      tags_json       TEXT,
      source          TEXT,
      run_id          TEXT,
      phase           TEXT,
      role            TEXT,
      created_at      BIGINT NOT NULL,
      updated_at      BIGINT NOT NULL,
      deleted_at      BIGINT,
      seq             BIGINT NOT NULL,
      revision        BIGINT NOT NULL DEFAULT 1,
      based_on_json   TEXT,
      versions_json   TEXT,
      task            TEXT,
      rowid           BIGINT GENERATED BY DEFAULT AS IDENTITY UNIQUE
    );

    CREATE INDEX idx_capsules_workspace_updated
      ON capsules(workspace_norm, updated_at, seq, deleted_at);
    CREATE INDEX idx_capsules_updated ON capsules(updated_at, seq, deleted_at);
    CREATE UNIQUE INDEX idx_capsules_workspace_name_norm
      ON capsules(workspace_norm, name_norm)
      WHERE name_norm IS NOT NULL AND deleted_at IS NULL;
    CREATE INDEX idx_capsules_workspace_name_deleted
      ON capsules(workspace_norm, name_norm, updated_at)
      WHERE name_norm IS NOT NULL AND deleted_at IS NOT NULL;
    CREATE INDEX idx_capsules_orchestration
      ON capsules(run_id, phase, role)
      WHERE run_id IS NOT NULL AND deleted_at IS NULL;
    CREATE INDEX idx_capsules_seq ON capsules(seq);
    CREATE INDEX idx_capsules_stats
      ON capsules(workspace_norm, run_id, deleted_at, phase, role, capsule_chars, created_at, updated_at);
    CREATE INDEX idx_capsules_based_on ON capsules(id) WHERE based_on_json IS NOT NULL;
    CREATE INDEX idx_capsules_task ON capsules(workspace_norm, task, updated_at DESC, seq DESC)
      WHERE task IS NOT NULL AND deleted_at IS NULL;

    -- `seq` is an identity: SQLite's INTEGER PRIMARY KEY numbers a new row max(seq) + 1, which
    -- an emptied queue starts again from; an identity only goes up, which the indexer's
    -- watermark takes as well.
    CREATE TABLE capsules_fts_queue (
      seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      doc BIGINT NOT NULL
    );

    CREATE FUNCTION capsules_fts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO capsules_fts_queue(doc) VALUES (NEW.rowid);
      RETURN NULL;
    END;
    $$;
    CREATE TRIGGER capsules_fts_insert AFTER INSERT ON capsules
      FOR EACH ROW EXECUTE FUNCTION capsules_fts_insert();

    CREATE FUNCTION capsules_fts_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO capsules_fts_queue(doc) VALUES (OLD.rowid);
      RETURN NULL;
    END;
    $$;
    CREATE TRIGGER capsules_fts_delete AFTER DELETE ON capsules
      FOR EACH ROW EXECUTE FUNCTION capsules_fts_delete();

    CREATE FUNCTION capsules_fts_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO capsules_fts_queue(doc) VALUES (NEW.rowid);
      RETURN NULL;
    END;
    $$;
    CREATE TRIGGER capsules_fts_update AFTER UPDATE OF title, capsule_text ON capsules
      FOR EACH ROW EXECUTE FUNCTION capsules_fts_update();

    -- Texts and evidence of versions are packed (BYTEA), as SQLite's BLOBs are; SQLite's
    -- versions from before packing may be TEXT there, never here.
    CREATE TABLE capsule_versions (
      vid             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      capsule_id      TEXT NOT NULL,
      revision        BIGINT NOT NULL,
      title           TEXT,
      capsule_text    BYTEA NOT NULL,
      capsule_chars   BIGINT NOT NULL,
      tokens_estimate BIGINT NOT NULL,
      tags_json       TEXT,
      source          TEXT,
      run_id          TEXT,
      phase           TEXT,
      role            TEXT,
      based_on_json   TEXT,
      updated_at      BIGINT NOT NULL,
      evidence_json   BYTEA
    );

    -- `n` is an identity, which does not start again at 1 when the queue is emptied as
    -- SQLite's INTEGER PRIMARY KEY does: the sweep sets it back (capsule::versions).
    CREATE TABLE capsule_versions_dead (
      n          BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      vid        BIGINT NOT NULL,
      capsule_id TEXT NOT NULL
    );

    CREATE TABLE capsule_evidence (
      capsule_id    TEXT PRIMARY KEY,
      evidence_json TEXT NOT NULL
    );

    -- json_each -> jsonb_array_elements_text: the vids of the purged capsule's list.
    CREATE FUNCTION capsule_versions_purge() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM capsule_versions
      WHERE vid IN (SELECT value::bigint FROM jsonb_array_elements_text(OLD.versions_json::jsonb))
        AND capsule_id = OLD.id;
      RETURN NULL;
    END;
    $$;
    CREATE TRIGGER capsule_versions_purge AFTER DELETE ON capsules
      FOR EACH ROW WHEN (OLD.versions_json IS NOT NULL)
      EXECUTE FUNCTION capsule_versions_purge();

    CREATE FUNCTION capsule_evidence_purge() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM capsule_evidence WHERE capsule_id = OLD.id;
      RETURN NULL;
    END;
    $$;
    CREATE TRIGGER capsule_evidence_purge AFTER DELETE ON capsules
      FOR EACH ROW EXECUTE FUNCTION capsule_evidence_purge();

    CREATE TABLE capsule_purged (
      seq             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      purged_at       BIGINT NOT NULL,
      id              TEXT NOT NULL,
      workspace_raw   TEXT NOT NULL,
      workspace_norm  TEXT NOT NULL,
      name_raw        TEXT,
      name_norm       TEXT,
      title           TEXT,
      capsule_chars   BIGINT,
      tokens_estimate BIGINT,
      tags_json       TEXT,
      source          TEXT,
      run_id          TEXT,
      phase           TEXT,
      role            TEXT,
      created_at      BIGINT,
      updated_at      BIGINT,
      deleted_at      BIGINT,
      revision        BIGINT,
      based_on_json   TEXT,
      task            TEXT
    );
    CREATE INDEX idx_capsule_purged_at ON capsule_purged(purged_at);
    "#,
}];
