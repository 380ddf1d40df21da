//! The same statements on both engines.

use super::postgres::testing::Scratch;
use super::*;

/// Runs `check` on a fresh SQLite database, then on a fresh PostgreSQL schema when the test
/// server is there.
fn on_both(check: impl Fn(Db<'_>)) {
    let sqlite = rusqlite::Connection::open_in_memory().unwrap();
    check(Db::Sqlite(&sqlite));
    if let Some(scratch) = Scratch::new() {
        let pg = scratch.connect();
        check(Db::Postgres(&pg));
    }
}

const TABLE: &str = "CREATE TABLE items (
    id      BIGINT PRIMARY KEY,
    name    TEXT NOT NULL UNIQUE,
    weight  DOUBLE PRECISION,
    body    BYTEA,
    flag    BIGINT NOT NULL DEFAULT 0
)";

#[test]
fn values_round_trip_through_the_same_statements() {
    on_both(|db| {
        db.batch(TABLE).unwrap();
        let blob: &[u8] = &[0, 1, 2, 255];
        let n = db
            .execute(
                "INSERT INTO items(id, name, weight, body, flag) VALUES (?1, ?2, ?3, ?4, ?5)",
                db_params![7i64, "seven ✓", 0.5, blob, true],
            )
            .unwrap();
        assert_eq!(n, 1, "{:?}", db.engine());
        db.execute(
            "INSERT INTO items(id, name, weight, body) VALUES (?, ?, ?, ?)",
            db_params![8i64, "eight", None::<f64>, None::<&[u8]>],
        )
        .unwrap();
        let (name, weight, body, flag): (String, f64, Vec<u8>, bool) = db
            .query_one(
                "SELECT name, weight, body, flag FROM items WHERE id = ?1",
                db_params![7i64],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(
            (name.as_str(), weight, body.as_slice(), flag),
            ("seven ✓", 0.5, blob, true)
        );
        let missing: (Option<f64>, Option<Vec<u8>>) = db
            .query_one("SELECT weight, body FROM items WHERE id = 8", &[], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!(missing, (None, None));
        // Aggregates and expressions of either engine read as the same classes.
        let (count, length): (i64, i64) = db
            .query_one(
                "SELECT count(*), max(length(name)) FROM items WHERE id >= ?1",
                db_params![0i64],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!((count, length), (2, 7));
        let ids: Vec<i64> = db
            .query_map("SELECT id FROM items ORDER BY id DESC", &[], |r| r.get(0))
            .unwrap();
        assert_eq!(ids, [8, 7]);
        assert!(
            db.query_opt("SELECT id FROM items WHERE id = 9", &[], |r| r
                .get::<i64>(0))
                .unwrap()
                .is_none()
        );
        assert!(matches!(
            db.query_one("SELECT id FROM items WHERE id = 9", &[], |r| r
                .get::<i64>(0)),
            Err(DbError::NoRow)
        ));
        let changed = db
            .execute(
                "UPDATE items SET flag = 1 WHERE flag = ?1",
                db_params![0i64],
            )
            .unwrap();
        assert_eq!(changed, 1);
    });
}

#[test]
fn failures_are_classified_alike() {
    on_both(|db| {
        db.batch(TABLE).unwrap();
        db.execute(
            "INSERT INTO items(id, name) VALUES (?1, ?2)",
            db_params![1i64, "a"],
        )
        .unwrap();
        let e = db
            .execute(
                "INSERT INTO items(id, name) VALUES (?1, ?2)",
                db_params![2i64, "a"],
            )
            .unwrap_err();
        assert_eq!(e.kind(), DbErrorKind::UniqueViolation, "{e}");
        let e = db
            .execute(
                "INSERT INTO items(id, name) VALUES (?1, ?2)",
                db_params![1i64, "b"],
            )
            .unwrap_err();
        assert_eq!(e.kind(), DbErrorKind::UniqueViolation, "{e}");
        // A value read as what it is not names its column.
        let e = db
            .query_one("SELECT id, name FROM items", &[], |r| r.get::<i64>(1))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "column 1 holds a text where an integer was expected"
        );
        let e = db.batch("SELECT * FROM no_such_table").unwrap_err();
        assert_eq!(e.kind(), DbErrorKind::Other);
        assert!(e.to_string().contains("no_such_table"), "{e}");
    });
}

#[test]
fn postgres_converts_integers_to_the_column_type_and_refuses_what_does_not_fit() {
    let Some(scratch) = Scratch::new() else {
        return;
    };
    let pg = scratch.connect();
    let db = Db::Postgres(&pg);
    db.batch("CREATE TABLE small (a INTEGER, b SMALLINT, c BOOLEAN, d REAL)")
        .unwrap();
    db.execute(
        "INSERT INTO small VALUES (?1, ?2, ?3, ?4)",
        db_params![5i64, 6i64, 1i64, 2i64],
    )
    .unwrap();
    let row: (i64, i64, bool, f64) = db
        .query_one("SELECT a, b, c, d FROM small", &[], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .unwrap();
    assert_eq!(row, (5, 6, true, 2.0));
    let e = db
        .execute(
            "INSERT INTO small(a) VALUES (?1)",
            db_params![i64::from(i32::MAX) + 1],
        )
        .unwrap_err();
    assert!(e.to_string().contains("out of range"), "{e}");
    // A type the store does not read says how to read it.
    let e = db
        .query_one("SELECT 1.5::numeric", &[], |r| r.get::<f64>(0))
        .unwrap_err();
    assert!(e.to_string().contains("::double precision"), "{e}");
}

#[test]
fn a_postgres_url_is_checked_and_its_password_never_shown() {
    assert!(postgres::config("postgres://moss:secret@db.internal:5433/moss").is_ok());
    let e = postgres::config("postgres://moss:secret@db.internal:notaport/moss").unwrap_err();
    let message = e.to_string();
    assert!(message.contains("postgres://USER"), "{message}");
    assert!(!message.contains("secret"), "{message}");
    assert_eq!(
        postgres::redact("postgres://moss:secret@host/db"),
        "postgres://moss:***@host/db"
    );
    assert_eq!(
        postgres::redact("postgres://moss@host/db"),
        "postgres://moss@host/db"
    );
}
