//! The cross-family schema: what `moss_workspaces` reads. Numbers are the database's one global
//! order; see [`crate::schema`]. An existing migration is never edited: a change is a new entry
//! with the next free number.

use crate::store::migrations::Migration;

/// The triggers that keep one family's rows of `workspace_activity` (migration 18) in the
/// transaction that writes the family's table: an insert counts one more item and raises the
/// last activity, a delete counts one fewer (and drops the row at none), and an update of
/// `$cols` (the workspace, the time, what decides whether an item counts) takes the item out
/// in its old state and back in its new one. `$ws` is the workspace column, `at` the time of
/// the write in Unix milliseconds over `new.`, `counted` whether an item counts in
/// `moss_workspaces`, over `new.` and over `old.`. Used by migration 18 only, so never to be
/// changed.
macro_rules! activity_triggers {
    ($table:literal, $family:literal, $ws:literal, $cols:literal,
     at: $at_new:literal, counted: $counted_new:literal, $counted_old:literal) => {
        concat!(
            "CREATE TRIGGER workspace_activity_",
            $table,
            "_insert AFTER INSERT ON ",
            $table,
            " BEGIN
      INSERT INTO workspace_activity(workspace, family, items, counted, last_ms)
      VALUES (new.",
            $ws,
            ", '",
            $family,
            "', 1, ",
            $counted_new,
            ", ",
            $at_new,
            ")
      ON CONFLICT(workspace, family) DO UPDATE SET items = items + 1,
        counted = counted + excluded.counted, last_ms = max(last_ms, excluded.last_ms);
    END;
    CREATE TRIGGER workspace_activity_",
            $table,
            "_update AFTER UPDATE OF ",
            $cols,
            " ON ",
            $table,
            " BEGIN
      UPDATE workspace_activity SET items = items - 1, counted = counted - ",
            $counted_old,
            "
      WHERE workspace = old.",
            $ws,
            " AND family = '",
            $family,
            "';
      INSERT INTO workspace_activity(workspace, family, items, counted, last_ms)
      VALUES (new.",
            $ws,
            ", '",
            $family,
            "', 1, ",
            $counted_new,
            ", ",
            $at_new,
            ")
      ON CONFLICT(workspace, family) DO UPDATE SET items = items + 1,
        counted = counted + excluded.counted, last_ms = max(last_ms, excluded.last_ms);
      DELETE FROM workspace_activity
      WHERE workspace = old.",
            $ws,
            " AND family = '",
            $family,
            "' AND items <= 0;
    END;
    CREATE TRIGGER workspace_activity_",
            $table,
            "_delete AFTER DELETE ON ",
            $table,
            " BEGIN
      UPDATE workspace_activity SET items = items - 1, counted = counted - ",
            $counted_old,
            "
      WHERE workspace = old.",
            $ws,
            " AND family = '",
            $family,
            "';
      DELETE FROM workspace_activity
      WHERE workspace = old.",
            $ws,
            " AND family = '",
            $family,
            "' AND items <= 0;
    END;
"
        )
    };
}

/// The cross-family migrations, by version.
pub const MIGRATIONS: &[Migration] = &[Migration {
    version: 18,
    // What each family holds in each workspace, kept as rows in the transaction that writes the
    // items, so that listing the workspaces reads one row per workspace and family instead of
    // grouping every capsule, entry, task and memory. `items` is the family's rows there (a
    // soft-deleted capsule is one until purged), `counted` what moss_workspaces shows (active
    // capsules; every entry, plan, task and memory of every session), `last_ms` the newest
    // write of an item held there (Unix milliseconds; a purge or a forget does not move it
    // back). A row goes when its last item does. Filled from the rows a database holds.
    sql: concat!(
        r#"
    CREATE TABLE workspace_activity (
      workspace TEXT NOT NULL,
      family    TEXT NOT NULL,
      items     INTEGER NOT NULL,
      counted   INTEGER NOT NULL,
      last_ms   INTEGER NOT NULL,
      PRIMARY KEY (workspace, family)
    ) WITHOUT ROWID;
    INSERT INTO workspace_activity(workspace, family, items, counted, last_ms)
    SELECT workspace_norm, 'capsules', COUNT(*), SUM(deleted_at IS NULL), MAX(updated_at) * 1000
    FROM capsules GROUP BY workspace_norm;
    INSERT INTO workspace_activity(workspace, family, items, counted, last_ms)
    SELECT workspace, 'reasoning', COUNT(*), COUNT(*), MAX(ts_ms)
    FROM reasoning_entries GROUP BY workspace;
    INSERT INTO workspace_activity(workspace, family, items, counted, last_ms)
    SELECT workspace, 'tasks', COUNT(*), COUNT(*), MAX(updated_at_ms)
    FROM task_items GROUP BY workspace;
    INSERT INTO workspace_activity(workspace, family, items, counted, last_ms)
    SELECT workspace, 'memories', COUNT(*), COUNT(*), MAX(updated_at) * 1000
    FROM memories GROUP BY workspace;
    "#,
        activity_triggers!("capsules", "capsules", "workspace_norm",
            "workspace_norm, updated_at, deleted_at",
            at: "new.updated_at * 1000",
            counted: "(new.deleted_at IS NULL)", "(old.deleted_at IS NULL)"),
        activity_triggers!("reasoning_entries", "reasoning", "workspace", "workspace, ts_ms",
            at: "new.ts_ms", counted: "1", "1"),
        activity_triggers!("task_items", "tasks", "workspace", "workspace, updated_at_ms",
            at: "new.updated_at_ms", counted: "1", "1"),
        activity_triggers!("memories", "memories", "workspace", "workspace, updated_at",
            at: "new.updated_at * 1000", counted: "1", "1"),
    ),
}];

/// [`activity_triggers`] on PostgreSQL: each SQLite trigger is a PL/pgSQL function and a
/// trigger that runs it for each row, with the same statements, but for the scalar
/// `max(a, b)`, which PostgreSQL spells `greatest(a, b)`, and a flag counted as `1` or `0`
/// with `CASE` (a PostgreSQL comparison is a boolean, not a number). Used by migration 6 only,
/// so never to be changed.
macro_rules! activity_triggers_postgres {
    ($table:literal, $family:literal, $ws:literal, $cols:literal,
     at: $at_new:literal, counted: $counted_new:literal, $counted_old:literal) => {
        concat!(
            "
    CREATE FUNCTION workspace_activity_",
            $table,
            "_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO workspace_activity AS a (workspace, family, items, counted, last_ms)
      VALUES (new.",
            $ws,
            ", '",
            $family,
            "', 1, ",
            $counted_new,
            ", ",
            $at_new,
            ")
      ON CONFLICT(workspace, family) DO UPDATE SET items = a.items + 1,
        counted = a.counted + excluded.counted, last_ms = greatest(a.last_ms, excluded.last_ms);
      RETURN NULL;
    END $$;
    CREATE TRIGGER workspace_activity_",
            $table,
            "_insert AFTER INSERT ON ",
            $table,
            "
      FOR EACH ROW EXECUTE FUNCTION workspace_activity_",
            $table,
            "_insert();
    CREATE FUNCTION workspace_activity_",
            $table,
            "_update() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE workspace_activity SET items = items - 1, counted = counted - ",
            $counted_old,
            "
      WHERE workspace = old.",
            $ws,
            " AND family = '",
            $family,
            "';
      INSERT INTO workspace_activity AS a (workspace, family, items, counted, last_ms)
      VALUES (new.",
            $ws,
            ", '",
            $family,
            "', 1, ",
            $counted_new,
            ", ",
            $at_new,
            ")
      ON CONFLICT(workspace, family) DO UPDATE SET items = a.items + 1,
        counted = a.counted + excluded.counted, last_ms = greatest(a.last_ms, excluded.last_ms);
      DELETE FROM workspace_activity
      WHERE workspace = old.",
            $ws,
            " AND family = '",
            $family,
            "' AND items <= 0;
      RETURN NULL;
    END $$;
    CREATE TRIGGER workspace_activity_",
            $table,
            "_update AFTER UPDATE OF ",
            $cols,
            " ON ",
            $table,
            "
      FOR EACH ROW EXECUTE FUNCTION workspace_activity_",
            $table,
            "_update();
    CREATE FUNCTION workspace_activity_",
            $table,
            "_delete() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE workspace_activity SET items = items - 1, counted = counted - ",
            $counted_old,
            "
      WHERE workspace = old.",
            $ws,
            " AND family = '",
            $family,
            "';
      DELETE FROM workspace_activity
      WHERE workspace = old.",
            $ws,
            " AND family = '",
            $family,
            "' AND items <= 0;
      RETURN NULL;
    END $$;
    CREATE TRIGGER workspace_activity_",
            $table,
            "_delete AFTER DELETE ON ",
            $table,
            "
      FOR EACH ROW EXECUTE FUNCTION workspace_activity_",
            $table,
            "_delete();
"
        )
    };
}

/// The cross-family schema on PostgreSQL: the end state of [`MIGRATIONS`] in one migration
/// (PostgreSQL numbers its own, see [`crate::store::migrations::STORE_POSTGRES`]). It comes
/// after every family's tables, whose rows it counts: `capsules`, `reasoning_entries`,
/// `task_items` and `memories`.
pub const POSTGRES: &[Migration] = &[Migration {
    version: 6,
    sql: concat!(
        r#"
    CREATE TABLE workspace_activity (
      workspace TEXT NOT NULL,
      family    TEXT NOT NULL,
      items     BIGINT NOT NULL,
      counted   BIGINT NOT NULL,
      last_ms   BIGINT NOT NULL,
      PRIMARY KEY (workspace, family)
    );
    -- SQLite's SUM(deleted_at IS NULL) counts the active capsules; PostgreSQL's comparison is a
    -- boolean, so they are counted with FILTER.
    INSERT INTO workspace_activity(workspace, family, items, counted, last_ms)
    SELECT workspace_norm, 'capsules', COUNT(*), COUNT(*) FILTER (WHERE deleted_at IS NULL),
      MAX(updated_at) * 1000
    FROM capsules GROUP BY workspace_norm;
    INSERT INTO workspace_activity(workspace, family, items, counted, last_ms)
    SELECT workspace, 'reasoning', COUNT(*), COUNT(*), MAX(ts_ms)
    FROM reasoning_entries GROUP BY workspace;
    INSERT INTO workspace_activity(workspace, family, items, counted, last_ms)
    SELECT workspace, 'tasks', COUNT(*), COUNT(*), MAX(updated_at_ms)
    FROM task_items GROUP BY workspace;
    INSERT INTO workspace_activity(workspace, family, items, counted, last_ms)
    SELECT workspace, 'memories', COUNT(*), COUNT(*), MAX(updated_at) * 1000
    FROM memories GROUP BY workspace;
    "#,
        activity_triggers_postgres!("capsules", "capsules", "workspace_norm",
            "workspace_norm, updated_at, deleted_at",
            at: "new.updated_at * 1000",
            counted: "CASE WHEN new.deleted_at IS NULL THEN 1 ELSE 0 END",
            "CASE WHEN old.deleted_at IS NULL THEN 1 ELSE 0 END"),
        activity_triggers_postgres!("reasoning_entries", "reasoning", "workspace",
            "workspace, ts_ms", at: "new.ts_ms", counted: "1", "1"),
        activity_triggers_postgres!("task_items", "tasks", "workspace", "workspace, updated_at_ms",
            at: "new.updated_at_ms", counted: "1", "1"),
        activity_triggers_postgres!("memories", "memories", "workspace", "workspace, updated_at",
            at: "new.updated_at * 1000", counted: "1", "1"),
    ),
}];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::engine::Db;
    use crate::store::engine::postgres::testing::Scratch;

    /// On PostgreSQL, the triggers keep `workspace_activity` as on SQLite: items and counted
    /// items per workspace and family, the newest write, a row gone with its last item.
    #[test]
    fn the_postgres_triggers_count_each_familys_items() {
        let Some(scratch) = Scratch::new() else {
            return;
        };
        let pg = scratch.connect();
        let db = Db::Postgres(&pg);
        // The other families' tables (their migrations come before this one), with rows
        // from before it, which it counts.
        let before = crate::store::migrations::ordered(crate::schema::MIGRATIONS_POSTGRES).unwrap();
        for m in before.iter().filter(|m| m.version < POSTGRES[0].version) {
            db.batch(m.sql).unwrap();
        }
        const CAPSULE: &str = "INSERT INTO capsules(id, workspace_raw, workspace_norm,
            capsule_text, capsule_chars, tokens_estimate, created_at, updated_at, deleted_at, seq)
            VALUES (?1, ?2, ?2, 'text', 4, 1, ?3, ?3, ?4, 1)";
        let capsule = |id: &str, ws: &str, at: i64, deleted: Option<i64>| {
            db.execute(CAPSULE, crate::db_params![id, ws, at, deleted])
                .unwrap();
        };
        capsule("old", "u", 5, None);
        capsule("gone", "u", 7, Some(7));
        db.batch(POSTGRES[0].sql).unwrap();
        capsule("a", "w", 10, None);
        capsule("b", "w", 20, None);
        db.batch(
            "UPDATE capsules SET deleted_at = 30, updated_at = 30 WHERE id = 'a';
             INSERT INTO reasoning_entries(workspace, branch, doc, ts_ms, kind)
             VALUES ('w', 'main', 'notes', 40000, 'note');
             INSERT INTO memories(rid, id, workspace, identity, content, contexts_json,
               contexts_text, context_count, weight, seq, created_at, updated_at)
             VALUES (1, 'm1', 'w', '\\x00', 'c', '[]', '', 0, 1.0, 1, 50, 50);
             UPDATE memories SET workspace = 'v' WHERE rid = 1;
             DELETE FROM capsules WHERE id = 'b';
             INSERT INTO task_items(workspace, id, kind, title, revision, seq, created_at_ms,
               updated_at_ms) VALUES ('w', 'TASK-001', 'task', 't', 1, 1, 1, 60000);
             DELETE FROM task_items;",
        )
        .unwrap();
        let rows = db
            .query_map(
                "SELECT workspace, family, items, counted, last_ms FROM workspace_activity
                 ORDER BY workspace, family",
                &[],
                |r| {
                    Ok((
                        r.get::<String>(0)?,
                        r.get::<String>(1)?,
                        r.get::<i64>(2)?,
                        r.get::<i64>(3)?,
                        r.get::<i64>(4)?,
                    ))
                },
            )
            .unwrap();
        let row = |ws: &str, f: &str, items, counted, last| {
            (ws.to_string(), f.to_string(), items, counted, last)
        };
        assert_eq!(
            rows,
            [
                row("u", "capsules", 2, 1, 7000),
                row("v", "memories", 1, 1, 50000),
                row("w", "capsules", 1, 0, 30000),
                row("w", "reasoning", 1, 1, 40000),
            ]
        );
    }
}
