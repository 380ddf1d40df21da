//! Numbered schema migrations, applied under `PRAGMA user_version`.
//!
//! Each family lists its own migrations (`<family>/migrations.rs`); the store knows only this
//! type and its own entry, and applies the lists it is given ([`crate::schema`] gathers them)
//! in one global order. Migration N brings the schema from version N-1 to N. An existing
//! migration is never edited: a change is a new entry with the next free number.

use rusqlite::Connection;

use crate::error::{Error, Result};

/// One migration: its number in the global order, and its SQL, run in one exclusive transaction
/// with the version bump.
#[derive(Debug)]
pub struct Migration {
    pub version: u32,
    pub sql: &'static str,
}

/// The store's own migrations.
pub const STORE: &[Migration] = &[Migration {
    version: 3,
    // The database's sequence, one row: the highest number the writer has handed out (see
    // store::writer). Every memory takes its ordering numbers from it, and it never goes down:
    // seeding the writer from max(capsules.seq) at each start went back down after a purge.
    sql: r#"
    CREATE TABLE store_sequence (
      id    INTEGER PRIMARY KEY CHECK (id = 1),
      value INTEGER NOT NULL
    );
    INSERT INTO store_sequence(id, value) SELECT 1, coalesce(max(seq), 0) FROM capsules;
    "#,
}];

/// Every migration of `lists`, in version order; refuses a gap or a number taken twice, which
/// would leave some database without a table.
pub fn ordered(lists: &[&'static [Migration]]) -> Result<Vec<&'static Migration>> {
    let mut all: Vec<&'static Migration> = lists.iter().flat_map(|l| l.iter()).collect();
    all.sort_by_key(|m| m.version);
    for (i, m) in all.iter().enumerate() {
        let expected = i as u32 + 1;
        if m.version != expected {
            return Err(Error::new(
                moss_client::ErrorCode::Internal,
                format!(
                    "this build's migrations are out of order: migration {expected} is {}; \
                     every number from 1 up must be taken once",
                    if m.version > expected {
                        "missing"
                    } else {
                        "listed twice"
                    }
                ),
            ));
        }
    }
    Ok(all)
}

/// The schema version `lists` bring a database to.
pub fn latest(lists: &[&'static [Migration]]) -> u32 {
    lists.iter().map(|l| l.len() as u32).sum()
}

/// Brings the database up to the latest schema of `lists`. Refuses a database newer than this
/// build.
pub fn migrate(conn: &mut Connection, lists: &[&'static [Migration]]) -> Result<u32> {
    let all = ordered(lists)?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)?;
    let current: u32 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let latest = all.len() as u32;
    if current > latest {
        return Err(Error::internal(
            "opening the database",
            format!(
                "the database schema is version {current}, newer than this mossd understands \
                 ({latest}); upgrade mossd"
            ),
        ));
    }
    for m in all.iter().skip(current as usize) {
        tx.execute_batch(m.sql)
            .map_err(|e| Error::internal(&format!("applying migration {}", m.version), e))?;
        tx.pragma_update(None, "user_version", m.version)?;
    }
    tx.commit()?;
    Ok(latest)
}

#[cfg(test)]
mod tests {
    use super::*;

    static ONE: &[Migration] = &[Migration {
        version: 1,
        sql: "CREATE TABLE a(x);",
    }];
    static TWO: &[Migration] = &[Migration {
        version: 2,
        sql: "CREATE TABLE b(x);",
    }];
    static THREE: &[Migration] = &[Migration {
        version: 3,
        sql: "CREATE TABLE c(x);",
    }];

    #[test]
    fn lists_apply_in_version_order_once() {
        let mut conn = Connection::open_in_memory().unwrap();
        assert_eq!(migrate(&mut conn, &[TWO, ONE]).unwrap(), 2);
        assert_eq!(migrate(&mut conn, &[ONE, TWO]).unwrap(), 2);
        assert_eq!(migrate(&mut conn, &[ONE, TWO, THREE]).unwrap(), 3);
        let v: u32 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(v, 3);
    }

    #[test]
    fn a_gap_or_a_number_taken_twice_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        let gap = migrate(&mut conn, &[ONE, THREE]).unwrap_err();
        assert!(
            gap.0.message.contains("migration 2 is missing"),
            "{}",
            gap.0.message
        );
        let twice = migrate(&mut conn, &[ONE, ONE]).unwrap_err();
        assert!(
            twice.0.message.contains("listed twice"),
            "{}",
            twice.0.message
        );
    }

    #[test]
    fn a_newer_database_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", 999).unwrap();
        assert!(migrate(&mut conn, &[ONE]).is_err());
    }
}
