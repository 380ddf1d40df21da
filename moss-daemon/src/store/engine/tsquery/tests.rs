use super::*;
use crate::store::engine::Db;
use crate::store::engine::postgres::testing::Scratch;

#[test]
fn the_query_language_becomes_a_tsquery() {
    let t = |q: &str| to_tsquery(q).unwrap();
    assert_eq!(t("auth"), "'auth'");
    assert_eq!(t("auth token"), "('auth' & 'token')");
    assert_eq!(t("auth AND token"), "('auth' & 'token')");
    assert_eq!(t("auth OR token"), "('auth' | 'token')");
    assert_eq!(t("auth NOT token"), "('auth' & !'token')");
    assert_eq!(t("auth*"), "'auth':*");
    assert_eq!(t("\"user-id column\""), "('user' <-> 'id' <-> 'column')");
    assert_eq!(t("\"jwt refresh\"*"), "('jwt' <-> 'refresh':*)");
    // FTS5's precedence: NOT, then AND, then OR.
    assert_eq!(t("a OR b c"), "('a' | ('b' & 'c'))");
    assert_eq!(t("a b NOT c"), "('a' & ('b' & !'c'))");
    assert_eq!(t("(a OR b) c"), "(('a' | 'b') & 'c')");
    assert_eq!(t("\"it's\""), "('it' <-> 's')");
    assert_eq!(t("Straße"), "'straße'");
    assert_eq!(t("\"O''Brien\""), "('o' <-> 'brien')");
}

#[test]
fn what_does_not_map_says_why() {
    let e = |q: &str| to_tsquery(q).unwrap_err().0;
    assert!(e("NEAR(a b, 3)").contains("NEAR"));
    assert!(e("title: auth").contains("column filters"));
    assert!(e("^auth").contains("`^`"));
    assert!(e("\"open").contains("not closed"));
    assert!(e("(a OR b").contains("not closed"));
    assert!(e("a OR").contains("ends where a word"));
    assert!(e("user-id").contains("double quotes"));
    assert!(e("a )").contains("unexpected"));
}

/// Texts searched alike: each query finds the same texts through FTS5 (porter over unicode61)
/// and through PostgreSQL (the store's `moss_english` over `moss_words`).
const TEXTS: &[&str] = &[
    "Refactored the auth middleware to validate JWT refresh tokens",
    "The user-id column is indexed; see src/db/schema.rs for details",
    "Decided: keep SQLite as the default engine, PostgreSQL for teams",
    "Running tests: cargo test --workspace passes on main",
    "Payments API returns 402 when the card is declined",
    "Investigating flaky test in the indexer; the watermark lags after a crash",
    "Email alerts go to ops@example.com when the queue backs up",
    "Version 0.19.14 of the postgres crate resolves with tokio 1",
    "Migrations are numbered and never edited; a change is a new migration",
    "Caching the embeddings halves the latency of recall queries",
    "He was running, she runs, they ran: stemming matters",
    "Tokenizer vocabularies ship in the crate; nothing is downloaded at run time",
];

const QUERIES: &[&str] = &[
    "auth",
    "token",
    "tokens",
    "refresh token",
    "\"refresh tokens\"",
    "\"JWT refresh\"",
    "user",
    "\"user-id\"",
    "schema",
    "rs",
    "sqlite OR postgresql",
    "crate NOT tokio",
    "test*",
    "migrat*",
    "migration",
    "numbered AND edited",
    "ops",
    "example",
    "19",
    "embedding",
    "run",
    "running",
    "latency recall",
    "(payments OR card) AND declined",
    "\"new migration\"",
    "the",
    "a",
];

#[test]
fn both_engines_find_the_same_texts() {
    let Some(scratch) = Scratch::new() else {
        return;
    };
    let sqlite = rusqlite::Connection::open_in_memory().unwrap();
    let lite = Db::Sqlite(&sqlite);
    lite.batch(
        "CREATE VIRTUAL TABLE docs USING fts5(body, tokenize = 'porter unicode61 remove_diacritics 2')",
    )
    .unwrap();
    let pg = scratch.connect();
    crate::store::migrations::migrate_postgres(&pg, &[crate::store::migrations::STORE_POSTGRES])
        .unwrap();
    let post = Db::Postgres(&pg);
    post.batch(
        "CREATE TABLE docs (rowid BIGINT PRIMARY KEY, body TEXT NOT NULL,
           words tsvector GENERATED ALWAYS AS (to_tsvector('moss_english', moss_words(body))) STORED);
         CREATE INDEX docs_words ON docs USING GIN (words);",
    )
    .unwrap();
    for (i, text) in TEXTS.iter().enumerate() {
        let id = i as i64 + 1;
        lite.execute(
            "INSERT INTO docs(rowid, body) VALUES (?1, ?2)",
            crate::db_params![id, *text],
        )
        .unwrap();
        post.execute(
            "INSERT INTO docs(rowid, body) VALUES (?1, ?2)",
            crate::db_params![id, *text],
        )
        .unwrap();
    }
    let mut differ = Vec::new();
    for q in QUERIES {
        let a: Vec<i64> = lite
            .query_map(
                "SELECT rowid FROM docs WHERE docs MATCH ?1 ORDER BY rowid",
                crate::db_params![*q],
                |r| r.get(0),
            )
            .unwrap();
        let tsq = to_tsquery(q).unwrap();
        let b: Vec<i64> = post
            .query_map(
                "SELECT rowid FROM docs WHERE words @@ to_tsquery('moss_english', ?1) ORDER BY rowid",
                crate::db_params![tsq.as_str()],
                |r| r.get(0),
            )
            .unwrap();
        assert!(!a.is_empty(), "{q:?} finds something in FTS5");
        if a != b {
            differ.push(format!("{q:?} ({tsq}): FTS5 {a:?}, PostgreSQL {b:?}"));
        }
    }
    assert!(
        differ.is_empty(),
        "the engines disagree:\n{}",
        differ.join("\n")
    );
}
