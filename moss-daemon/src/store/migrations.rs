//! Numbered schema migrations, applied under `PRAGMA user_version`.
//!
//! Each family lists its own migrations (`<family>/migrations.rs`); the store knows only this
//! type and its own entry, and applies the lists it is given ([`crate::schema`] gathers them)
//! in one global order. Migration N brings the schema from version N-1 to N. An existing
//! migration is never edited: a change is a new entry with the next free number.

use rusqlite::Connection;

use super::engine::postgres::PgConn;
use super::engine::{Db, DbError, Param};
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

/// The store's own migrations on PostgreSQL, which numbers its own from 1 (its schema is made
/// for it, not translated from SQLite's history).
pub const STORE_POSTGRES: &[Migration] = &[Migration {
    version: 1,
    // The database's sequence (see store::writer): a PostgreSQL sequence, advanced by each
    // batch under the store's write lock, so numbers commit in their order whichever daemon
    // wrote them.
    sql: r#"
    CREATE SEQUENCE moss_sequence AS BIGINT MINVALUE 0 START WITH 1;

    -- Full-text search's words, as close to SQLite's (FTS5, porter over unicode61) as PostgreSQL
    -- comes: Snowball's English stemmer with no stop words (FTS5 drops none), for every kind of
    -- word the parser finds. Texts are cut into words before they reach the parser
    -- (moss_words), so that paths, e-mail addresses and versions are words apart as in FTS5.
    CREATE TEXT SEARCH DICTIONARY moss_english_stem (TEMPLATE = snowball, Language = english);
    CREATE TEXT SEARCH CONFIGURATION moss_english (COPY = pg_catalog.english);
    ALTER TEXT SEARCH CONFIGURATION moss_english
      ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part
      WITH moss_english_stem;

    -- A text's words as FTS5's unicode61 cuts them: everything but letters and digits
    -- separates.
    CREATE FUNCTION moss_words(text TEXT) RETURNS TEXT
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      RETURN regexp_replace(coalesce(text, ''), '[^[:alnum:]]+', ' ', 'g');
    "#,
}];

/// The PostgreSQL advisory lock held while migrating, so that daemons starting together on one
/// database apply each migration once.
const POSTGRES_MIGRATION_LOCK: i64 = 0x6d6f_7373_0002;

/// Brings a PostgreSQL database up to the latest schema of `lists`, each migration in its own
/// transaction with the version bump (PostgreSQL changes its schema transactionally). Refuses a
/// database newer than this build. Daemons starting together wait for each other here.
pub fn migrate_postgres(conn: &PgConn, lists: &[&'static [Migration]]) -> Result<u32> {
    migrate_postgres_then(conn, lists, |_| Ok(()))
}

/// [`migrate_postgres`], then `then` under the same lock (the store's own schema work that
/// follows the migrations, such as the search columns).
pub fn migrate_postgres_then(
    conn: &PgConn,
    lists: &[&'static [Migration]],
    then: impl FnOnce(Db<'_>) -> std::result::Result<(), DbError>,
) -> Result<u32> {
    let all = ordered(lists)?;
    let db = Db::Postgres(conn);
    let failed = |what: &str| {
        let what = what.to_string();
        move |e: DbError| Error::internal(&what, e)
    };
    db.query_one(
        "SELECT pg_advisory_lock(?1)::text",
        &[Param::Int(POSTGRES_MIGRATION_LOCK)],
        |_| Ok(()),
    )
    .map_err(failed("waiting for another daemon's migration"))?;
    let result = (|| {
        db.batch(
            "CREATE TABLE IF NOT EXISTS moss_schema (
               id      BIGINT PRIMARY KEY CHECK (id = 1),
               version BIGINT NOT NULL
             );
             INSERT INTO moss_schema(id, version) VALUES (1, 0) ON CONFLICT (id) DO NOTHING;",
        )
        .map_err(failed("creating the schema version table"))?;
        let current: i64 = db
            .query_one("SELECT version FROM moss_schema WHERE id = 1", &[], |r| {
                r.get(0)
            })
            .map_err(failed("reading the schema version"))?;
        let latest = all.len() as i64;
        if current > latest {
            return Err(Error::internal(
                "opening the database",
                format!(
                    "the database schema is version {current}, newer than this mossd \
                     understands ({latest}); upgrade mossd"
                ),
            ));
        }
        for m in all.iter().skip(current as usize) {
            let applied = db
                .batch("BEGIN")
                .and_then(|()| db.batch(m.sql))
                .and_then(|()| {
                    db.execute(
                        "UPDATE moss_schema SET version = ?1 WHERE id = 1",
                        &[Param::from(m.version)],
                    )
                })
                .and_then(|_| db.batch("COMMIT"));
            if let Err(e) = applied {
                let _ = db.batch("ROLLBACK");
                return Err(Error::internal(
                    &format!("applying migration {}", m.version),
                    e,
                ));
            }
        }
        then(db).map_err(failed("building the search columns"))?;
        Ok(latest as u32)
    })();
    let _ = db.query_one(
        "SELECT pg_advisory_unlock(?1)::text",
        &[Param::Int(POSTGRES_MIGRATION_LOCK)],
        |_| Ok(()),
    );
    result
}

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
        sql: "CREATE TABLE a(x BIGINT);",
    }];
    static TWO: &[Migration] = &[Migration {
        version: 2,
        sql: "CREATE TABLE b(x BIGINT);",
    }];
    static THREE: &[Migration] = &[Migration {
        version: 3,
        sql: "CREATE TABLE c(x BIGINT);",
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

    /// The same lists on PostgreSQL: applied in order once, by one of two daemons starting
    /// together, and a newer database refused.
    #[test]
    fn postgres_applies_each_migration_once_and_refuses_a_newer_database() {
        let Some(scratch) = crate::store::engine::postgres::testing::Scratch::new() else {
            return;
        };
        let starts: Vec<_> = (0..2)
            .map(|_| {
                let config = scratch.config.clone();
                std::thread::spawn(move || {
                    let conn = PgConn::connect(&config).unwrap();
                    migrate_postgres(&conn, &[TWO, ONE]).unwrap()
                })
            })
            .collect();
        for start in starts {
            assert_eq!(start.join().unwrap(), 2);
        }
        let conn = scratch.connect();
        assert_eq!(migrate_postgres(&conn, &[ONE, TWO, THREE]).unwrap(), 3);
        let db = Db::Postgres(&conn);
        let tables: i64 = db
            .query_one(
                "SELECT count(*) FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_name IN ('a', 'b', 'c')",
                &[],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 3);
        db.batch("UPDATE moss_schema SET version = 999").unwrap();
        let e = migrate_postgres(&conn, &[ONE]).unwrap_err();
        assert!(
            e.0.message.contains("opening the database"),
            "{}",
            e.0.message
        );
        // A failing migration leaves the version where it was.
        db.batch("UPDATE moss_schema SET version = 3").unwrap();
        static BAD: &[Migration] = &[Migration {
            version: 4,
            sql: "CREATE TABLE d(x BIGINT); CREATE TABLE a(x BIGINT);",
        }];
        assert!(migrate_postgres(&conn, &[ONE, TWO, THREE, BAD]).is_err());
        let version: i64 = db
            .query_one("SELECT version FROM moss_schema", &[], |r| r.get(0))
            .unwrap();
        assert_eq!(version, 3);
        assert!(
            db.batch("SELECT * FROM d").is_err(),
            "migration 4 rolled back whole"
        );
    }

    #[test]
    fn a_newer_database_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        conn.pragma_update(None, "user_version", 999).unwrap();
        assert!(migrate(&mut conn, &[ONE]).is_err());
    }
}
