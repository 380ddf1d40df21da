//! The tasks toolset's schema migrations (its tables themselves come with the reasoning
//! family's migration 4). Their numbers are the database's one global order; see
//! [`crate::schema`]. An existing migration is never edited: a change is a new entry with the
//! next free number.

use crate::store::migrations::Migration;

/// The tasks toolset's migrations, by version.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 17,
        // A word index over the titles and descriptions of plans and tasks and the titles of steps,
        // so that moss_search finds them without reading every title of a workspace. FTS5 in
        // moss.db, kept by triggers in the writing transaction (titles are short and few writes
        // touch them); `task_words_map` gives each item or step its document number. Words keep
        // `_` (`refresh_token` is one word) and are stemmed like every other index.
        sql: r#"
    CREATE TABLE task_words_map (
      doc       INTEGER PRIMARY KEY,
      workspace TEXT NOT NULL,
      item      TEXT NOT NULL,
      step      TEXT NOT NULL,
      UNIQUE (workspace, item, step)
    );
    CREATE VIRTUAL TABLE task_words USING fts5(
      text, workspace UNINDEXED, item UNINDEXED, step UNINDEXED,
      tokenize = "porter unicode61 remove_diacritics 2 tokenchars '_'",
      prefix = '2 3'
    );

    CREATE TRIGGER task_words_item_insert AFTER INSERT ON task_items BEGIN
      INSERT INTO task_words_map(workspace, item, step) VALUES (new.workspace, new.id, '');
      INSERT INTO task_words(rowid, text, workspace, item, step)
      VALUES (last_insert_rowid(), new.title || ' ' || coalesce(new.description, ''),
              new.workspace, new.id, '');
    END;
    CREATE TRIGGER task_words_item_update AFTER UPDATE OF title, description ON task_items BEGIN
      UPDATE task_words SET text = new.title || ' ' || coalesce(new.description, '')
      WHERE rowid = (SELECT doc FROM task_words_map
                     WHERE workspace = new.workspace AND item = new.id AND step = '');
    END;
    CREATE TRIGGER task_words_item_delete AFTER DELETE ON task_items BEGIN
      DELETE FROM task_words WHERE rowid = (SELECT doc FROM task_words_map
                     WHERE workspace = old.workspace AND item = old.id AND step = '');
      DELETE FROM task_words_map WHERE workspace = old.workspace AND item = old.id AND step = '';
    END;
    CREATE TRIGGER task_words_step_insert AFTER INSERT ON task_steps BEGIN
      INSERT INTO task_words_map(workspace, item, step) VALUES (new.workspace, new.task, new.step_id);
      INSERT INTO task_words(rowid, text, workspace, item, step)
      VALUES (last_insert_rowid(), new.title, new.workspace, new.task, new.step_id);
    END;
    CREATE TRIGGER task_words_step_update AFTER UPDATE OF title ON task_steps BEGIN
      UPDATE task_words SET text = new.title
      WHERE rowid = (SELECT doc FROM task_words_map
                     WHERE workspace = new.workspace AND item = new.task AND step = new.step_id);
    END;
    CREATE TRIGGER task_words_step_delete AFTER DELETE ON task_steps BEGIN
      DELETE FROM task_words WHERE rowid = (SELECT doc FROM task_words_map
                     WHERE workspace = old.workspace AND item = old.task AND step = old.step_id);
      DELETE FROM task_words_map
      WHERE workspace = old.workspace AND item = old.task AND step = old.step_id;
    END;

    INSERT INTO task_words_map(workspace, item, step)
      SELECT workspace, id, '' FROM task_items;
    INSERT INTO task_words_map(workspace, item, step)
      SELECT workspace, task, step_id FROM task_steps;
    INSERT INTO task_words(rowid, text, workspace, item, step)
      SELECT m.doc, i.title || ' ' || coalesce(i.description, ''), i.workspace, i.id, ''
      FROM task_items AS i
      JOIN task_words_map AS m ON m.workspace = i.workspace AND m.item = i.id AND m.step = '';
    INSERT INTO task_words(rowid, text, workspace, item, step)
      SELECT m.doc, s.title, s.workspace, s.task, s.step_id
      FROM task_steps AS s
      JOIN task_words_map AS m
        ON m.workspace = s.workspace AND m.item = s.task AND m.step = s.step_id;
    "#,
    },
    Migration {
        version: 19,
        // Plans, tasks and steps become a full-text source like every other family's, so that
        // the embedder, which follows the full-text sources' queues, embeds them too.
        // `task_texts` holds one row per plan, task or step (its rowid the document number of
        // both indexes; the item's title and description, or the step's title), kept by
        // triggers on `task_items` and `task_steps`; triggers on it queue each change in
        // `task_texts_fts_queue`. The word index `task_words` in moss.db gives way to the
        // source's FTS5 table in the index file. Existing rows keep their document numbers.
        sql: r#"
    CREATE TABLE task_texts (
      doc       INTEGER PRIMARY KEY,
      workspace TEXT NOT NULL,
      item      TEXT NOT NULL,
      step      TEXT NOT NULL,
      title     TEXT NOT NULL,
      body      TEXT NOT NULL,
      UNIQUE (workspace, item, step)
    );
    CREATE TABLE task_texts_fts_queue (seq INTEGER PRIMARY KEY, doc INTEGER NOT NULL);
    CREATE TRIGGER task_texts_fts_insert AFTER INSERT ON task_texts BEGIN
      INSERT INTO task_texts_fts_queue(doc) VALUES (new.doc);
    END;
    CREATE TRIGGER task_texts_fts_delete AFTER DELETE ON task_texts BEGIN
      INSERT INTO task_texts_fts_queue(doc) VALUES (old.doc);
    END;
    CREATE TRIGGER task_texts_fts_update AFTER UPDATE OF title, body ON task_texts BEGIN
      INSERT INTO task_texts_fts_queue(doc) VALUES (new.doc);
    END;

    INSERT INTO task_texts(doc, workspace, item, step, title, body)
      SELECT m.doc, i.workspace, i.id, '', i.title, coalesce(i.description, '')
      FROM task_words_map AS m
      JOIN task_items AS i ON i.workspace = m.workspace AND i.id = m.item AND m.step = '';
    INSERT INTO task_texts(doc, workspace, item, step, title, body)
      SELECT m.doc, s.workspace, s.task, s.step_id, s.title, ''
      FROM task_words_map AS m
      JOIN task_steps AS s
        ON s.workspace = m.workspace AND s.task = m.item AND s.step_id = m.step;

    DROP TRIGGER task_words_item_insert;
    DROP TRIGGER task_words_item_update;
    DROP TRIGGER task_words_item_delete;
    DROP TRIGGER task_words_step_insert;
    DROP TRIGGER task_words_step_update;
    DROP TRIGGER task_words_step_delete;
    DROP TABLE task_words;
    DROP TABLE task_words_map;

    CREATE TRIGGER task_texts_item_insert AFTER INSERT ON task_items BEGIN
      INSERT INTO task_texts(workspace, item, step, title, body)
      VALUES (new.workspace, new.id, '', new.title, coalesce(new.description, ''));
    END;
    CREATE TRIGGER task_texts_item_update AFTER UPDATE OF title, description ON task_items BEGIN
      UPDATE task_texts SET title = new.title, body = coalesce(new.description, '')
      WHERE workspace = new.workspace AND item = new.id AND step = '';
    END;
    CREATE TRIGGER task_texts_item_delete AFTER DELETE ON task_items BEGIN
      DELETE FROM task_texts WHERE workspace = old.workspace AND item = old.id AND step = '';
    END;
    CREATE TRIGGER task_texts_step_insert AFTER INSERT ON task_steps BEGIN
      INSERT INTO task_texts(workspace, item, step, title, body)
      VALUES (new.workspace, new.task, new.step_id, new.title, '');
    END;
    CREATE TRIGGER task_texts_step_update AFTER UPDATE OF title ON task_steps BEGIN
      UPDATE task_texts SET title = new.title
      WHERE workspace = new.workspace AND item = new.task AND step = new.step_id;
    END;
    CREATE TRIGGER task_texts_step_delete AFTER DELETE ON task_steps BEGIN
      DELETE FROM task_texts
      WHERE workspace = old.workspace AND item = old.task AND step = old.step_id;
    END;
    "#,
    },
];

/// The tasks toolset's schema on PostgreSQL: the end state of [`MIGRATIONS`] in one migration
/// (PostgreSQL numbers its own; see [`crate::store::migrations::STORE_POSTGRES`]). Its
/// triggers are on `task_items` and `task_steps`, which the reasoning family's PostgreSQL
/// migration creates (an earlier number). No FTS5 table: the store builds the full-text index
/// itself from `task_texts_fts_queue`.
pub const POSTGRES: &[Migration] = &[Migration {
    version: 5,
    sql: r#"
    -- `doc` is SQLite's rowid alias: an identity here, BY DEFAULT so that a copied store keeps
    -- its document numbers.
    CREATE TABLE task_texts (
      doc       BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      workspace TEXT NOT NULL,
      item      TEXT NOT NULL,
      step      TEXT NOT NULL,
      title     TEXT NOT NULL,
      body      TEXT NOT NULL,
      UNIQUE (workspace, item, step)
    );
    CREATE TABLE task_texts_fts_queue (
      seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      doc BIGINT NOT NULL
    );

    CREATE FUNCTION task_texts_fts_insert() RETURNS trigger AS $$
    BEGIN
      INSERT INTO task_texts_fts_queue(doc) VALUES (new.doc);
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql;
    CREATE TRIGGER task_texts_fts_insert AFTER INSERT ON task_texts
      FOR EACH ROW EXECUTE FUNCTION task_texts_fts_insert();

    CREATE FUNCTION task_texts_fts_delete() RETURNS trigger AS $$
    BEGIN
      INSERT INTO task_texts_fts_queue(doc) VALUES (old.doc);
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql;
    CREATE TRIGGER task_texts_fts_delete AFTER DELETE ON task_texts
      FOR EACH ROW EXECUTE FUNCTION task_texts_fts_delete();

    CREATE FUNCTION task_texts_fts_update() RETURNS trigger AS $$
    BEGIN
      INSERT INTO task_texts_fts_queue(doc) VALUES (new.doc);
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql;
    CREATE TRIGGER task_texts_fts_update AFTER UPDATE OF title, body ON task_texts
      FOR EACH ROW EXECUTE FUNCTION task_texts_fts_update();

    CREATE FUNCTION task_texts_item_insert() RETURNS trigger AS $$
    BEGIN
      INSERT INTO task_texts(workspace, item, step, title, body)
      VALUES (new.workspace, new.id, '', new.title, coalesce(new.description, ''));
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql;
    CREATE TRIGGER task_texts_item_insert AFTER INSERT ON task_items
      FOR EACH ROW EXECUTE FUNCTION task_texts_item_insert();

    CREATE FUNCTION task_texts_item_update() RETURNS trigger AS $$
    BEGIN
      UPDATE task_texts SET title = new.title, body = coalesce(new.description, '')
      WHERE workspace = new.workspace AND item = new.id AND step = '';
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql;
    CREATE TRIGGER task_texts_item_update AFTER UPDATE OF title, description ON task_items
      FOR EACH ROW EXECUTE FUNCTION task_texts_item_update();

    CREATE FUNCTION task_texts_item_delete() RETURNS trigger AS $$
    BEGIN
      DELETE FROM task_texts WHERE workspace = old.workspace AND item = old.id AND step = '';
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql;
    CREATE TRIGGER task_texts_item_delete AFTER DELETE ON task_items
      FOR EACH ROW EXECUTE FUNCTION task_texts_item_delete();

    CREATE FUNCTION task_texts_step_insert() RETURNS trigger AS $$
    BEGIN
      INSERT INTO task_texts(workspace, item, step, title, body)
      VALUES (new.workspace, new.task, new.step_id, new.title, '');
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql;
    CREATE TRIGGER task_texts_step_insert AFTER INSERT ON task_steps
      FOR EACH ROW EXECUTE FUNCTION task_texts_step_insert();

    CREATE FUNCTION task_texts_step_update() RETURNS trigger AS $$
    BEGIN
      UPDATE task_texts SET title = new.title
      WHERE workspace = new.workspace AND item = new.task AND step = new.step_id;
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql;
    CREATE TRIGGER task_texts_step_update AFTER UPDATE OF title ON task_steps
      FOR EACH ROW EXECUTE FUNCTION task_texts_step_update();

    CREATE FUNCTION task_texts_step_delete() RETURNS trigger AS $$
    BEGIN
      DELETE FROM task_texts
      WHERE workspace = old.workspace AND item = old.task AND step = old.step_id;
      RETURN NULL;
    END;
    $$ LANGUAGE plpgsql;
    CREATE TRIGGER task_texts_step_delete AFTER DELETE ON task_steps
      FOR EACH ROW EXECUTE FUNCTION task_texts_step_delete();
    "#,
}];
