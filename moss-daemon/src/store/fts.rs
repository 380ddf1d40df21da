//! Applying the batch's queued text changes to the FTS5 index, just before COMMIT.
//!
//! Triggers on `capsules` record each text change in `capsules_fts_queue` (inside the job's
//! savepoint, so a rolled-back job leaves no entry). At the end of a batch the writer removes,
//! for every touched row, the version the index held before the batch (the `old_*` of the row's
//! first queued change, when that change replaced an indexed version), then indexes the row as
//! it is now if it still exists, and empties the queue. The index is therefore exactly in step
//! with `capsules` at every commit, and FTS5 writes one segment per batch.

use rusqlite::Connection;

/// Brings `capsules_fts` in line with the queued changes and empties the queue.
pub fn apply_queue(conn: &Connection) -> rusqlite::Result<()> {
    let pending: i64 = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM capsules_fts_queue)")?
        .query_row([], |r| r.get(0))?;
    if pending == 0 {
        return Ok(());
    }
    conn.prepare_cached(
        "INSERT INTO capsules_fts(capsules_fts, rowid, title, capsule_text)
         SELECT 'delete', q.doc, q.old_title, q.old_text FROM capsules_fts_queue q
         WHERE q.indexed = 1
           AND q.seq = (SELECT min(seq) FROM capsules_fts_queue f WHERE f.doc = q.doc)",
    )?
    .execute([])?;
    conn.prepare_cached(
        "INSERT INTO capsules_fts(rowid, title, capsule_text)
         SELECT c.rowid, c.title, c.capsule_text FROM capsules c
         WHERE c.rowid IN (SELECT doc FROM capsules_fts_queue)",
    )?
    .execute([])?;
    conn.prepare_cached("DELETE FROM capsules_fts_queue")?
        .execute([])?;
    Ok(())
}
