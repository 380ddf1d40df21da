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
