//! Matching words across the three full-text searches (capsule search, reasoning search, memory
//! recall): English word forms, prefixes and phrases, scores in 0..1, queries FTS5 cannot
//! parse, and the rebuild of an index built without stemming.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use crate::reasoning::{fails, ok};
use crate::util::{expect_error, message, store};

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn capsule_search(d: &TestDaemon, query: &str, extra: &str) -> (u16, Value) {
    d.call(
        "GET",
        &format!(
            "/capsules/search?workspace=w&query={}{extra}",
            encode(query)
        ),
        None,
    )
    .await
}

/// The names of a capsule search's hits, in order.
fn names(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["name"].as_str().unwrap().to_string())
        .collect()
}

/// The `score` of each hit of `list`, in order, each asserted to be in 0..1.
fn scores(list: &Value) -> Vec<f64> {
    let s: Vec<f64> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["score"].as_f64().unwrap())
        .collect();
    assert!(s.iter().all(|x| (0.0..=1.0).contains(x)), "{s:?}: {list}");
    s
}

fn non_increasing(s: &[f64]) -> bool {
    s.windows(2).all(|w| w[0] >= w[1])
}

/// A capsule, a reasoning note and a memory holding "Refunds", "tabs" and "merged" (and
/// nothing holding "tab", "refund" or "merging" as written).
async fn seed(d: &TestDaemon) {
    store(
        d,
        json!({"workspace": "w", "name": "refunds", "title": "Refunds",
               "capsule_text": capsule_text("the settings tabs were merged last week")}),
    )
    .await;
    store(
        d,
        json!({"workspace": "w", "name": "other",
               "capsule_text": capsule_text("nothing of interest here")}),
    )
    .await;
    ok(
        d,
        "/reasoning/notes/commit",
        json!({"doc": "notes", "workspace": "w", "branch": "main",
               "content": "Refunds go through the same interface; the tabs were merged"}),
    )
    .await;
    ok(
        d,
        "/memories",
        json!({"workspace": "w", "content": "Refunds: the settings tabs were merged"}),
    )
    .await;
}

/// Asserts that each search finds the seeded item for `query`.
async fn found_everywhere(d: &TestDaemon, query: &str) {
    let (s, r) = capsule_search(d, query, "").await;
    assert_eq!(s, 200, "{query}: {r}");
    assert_eq!(names(&r), ["refunds"], "capsule_search {query}: {r}");
    scores(&r["items"]);
    let r = ok(
        d,
        "/reasoning/search",
        json!({"workspace": "w", "query": query}),
    )
    .await;
    assert_eq!(
        r["hits"].as_array().unwrap().len(),
        1,
        "branchmind_search {query}: {r}"
    );
    scores(&r["hits"]);
    let r = ok(
        d,
        "/memories/recall",
        json!({"workspace": "w", "query": query}),
    )
    .await;
    assert_eq!(
        r["items"][0]["content"], "Refunds: the settings tabs were merged",
        "memory_recall {query}: {r}"
    );
    scores(&r["items"]);
}

/// Every search stems English words: `tab` finds "tabs", `refund` finds "Refunds", `merging`
/// finds "merged"; prefixes and phrases still work.
#[tokio::test]
async fn words_find_their_other_forms_in_every_search() {
    let d = TestDaemon::start().await;
    seed(&d).await;
    for q in ["tab", "refund", "merging", "Refund", "tabs"] {
        found_everywhere(&d, q).await;
    }
    // Prefixes and phrases, in the searches that take FTS5 syntax.
    for q in ["refu*", "\"tabs were merged\"", "tab AND merging"] {
        let (s, r) = capsule_search(&d, q, "").await;
        assert_eq!(
            (s, names(&r)),
            (200, vec!["refunds".to_string()]),
            "{q}: {r}"
        );
        let r = ok(
            &d,
            "/reasoning/search",
            json!({"workspace": "w", "query": q}),
        )
        .await;
        assert_eq!(r["hits"].as_array().unwrap().len(), 1, "{q}: {r}");
    }
    // A phrase keeps its order.
    let (_, r) = capsule_search(&d, "\"merged were tabs\"", "").await;
    assert_eq!(names(&r), Vec::<String>::new(), "{r}");
    // The matches are highlighted as written.
    let (_, r) = capsule_search(&d, "tab", "").await;
    let snippet = r["items"][0]["snippet"].as_str().unwrap();
    assert!(snippet.contains("<b>tabs</b>"), "{snippet}");
    d.stop().await;
}

/// Scores are in 0..1, higher better, in the ranking's order, and a hit has the same score on
/// any page.
#[tokio::test]
async fn scores_are_in_0_1_higher_better_and_follow_the_ranking() {
    let d = TestDaemon::start().await;
    for (name, title, text) in [
        ("title", "Cache eviction", "the cache is evicted hourly"),
        ("twice", "", "cache here and cache there, cache everywhere"),
        (
            "once",
            "",
            "one mention of the cache among many other words here",
        ),
    ] {
        let mut body = json!({"workspace": "w", "name": name, "capsule_text": capsule_text(text)});
        if !title.is_empty() {
            body["title"] = json!(title);
        }
        store(&d, body).await;
        ok(
            &d,
            "/reasoning/notes/commit",
            json!({"doc": "notes", "workspace": "w", "branch": "main", "content": text}),
        )
        .await;
    }
    // Texts without the word, so that it weighs something (FTS5 gives a word in over half of
    // the texts the least weight).
    for i in 0..6 {
        store(
            &d,
            json!({"workspace": "w", "capsule_text": capsule_text(&format!("filler {i}"))}),
        )
        .await;
        ok(
            &d,
            "/reasoning/notes/commit",
            json!({"doc": "notes", "workspace": "w", "branch": "main", "content": format!("filler {i}")}),
        )
        .await;
    }
    let (_, all) = capsule_search(&d, "cache", "").await;
    assert_eq!(names(&all), ["title", "twice", "once"], "{all}");
    let s = scores(&all["items"]);
    assert!(s.iter().all(|x| *x > 0.0 && *x < 1.0), "{s:?}");
    assert!(s[0] > s[1] && s[1] > s[2], "higher is better: {s:?}");
    // The same hit, the same score, on another page.
    let (_, page) = capsule_search(&d, "cache", "&limit=1&offset=1").await;
    assert_eq!(names(&page), ["twice"]);
    assert_eq!(page["items"][0]["score"], all["items"][1]["score"]);

    let r = ok(
        &d,
        "/reasoning/search",
        json!({"workspace": "w", "query": "cache"}),
    )
    .await;
    let s = scores(&r["hits"]);
    assert_eq!(s.len(), 3, "{r}");
    assert!(s.iter().all(|x| *x > 0.0 && *x < 1.0), "{s:?}");
    assert!(non_increasing(&s), "{s:?}");
    let r1 = ok(
        &d,
        "/reasoning/search",
        json!({"workspace": "w", "query": "cache", "limit": 1}),
    )
    .await;
    assert_eq!(r1["hits"][0]["score"], r["hits"][0]["score"]);
    assert_eq!(r1["hits"][0]["seq"], r["hits"][0]["seq"]);

    // Memory recall: the heaviest memory on an exact context, just stored, scores the most a
    // memory can, still at most 1; the order is by score.
    ok(
        &d,
        "/memories",
        json!({"workspace": "w", "content": "cache keys carry the tenant", "context": "cache.rs", "weight": 100}),
    )
    .await;
    ok(
        &d,
        "/memories",
        json!({"workspace": "w", "content": "the cache is warmed at start"}),
    )
    .await;
    let r = ok(
        &d,
        "/memories/recall",
        json!({"workspace": "w", "query": "cache.rs cache", "explain": true}),
    )
    .await;
    let s = scores(&r["items"]);
    assert_eq!(s.len(), 2, "{r}");
    assert!(s[0] > 0.9 && s[0] <= 1.0 && s[0] > s[1], "{s:?}: {r}");
    let w = r["items"][0]["explain"]["weight"].as_f64().unwrap();
    assert!(w > 0.98 && w < 1.0, "{r}");
    let e = fails(
        &d,
        "/memories/recall",
        json!({"workspace": "w", "query": "cache", "min_score": 1.5}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(e["details"]["field"], "min_score", "{e}");
    d.stop().await;
}

/// A query FTS5 cannot parse is INVALID_REQUEST naming `safe_query: true`; with it, the words
/// are searched as written. Recall takes plain words always, and accepts the flag.
#[tokio::test]
async fn unparseable_queries_say_to_pass_safe_query() {
    let d = TestDaemon::start().await;
    seed(&d).await;
    let (s, e) = capsule_search(&d, "\"tabs", "").await;
    let e = expect_error(s, &e, "INVALID_REQUEST", 400);
    assert!(message(&e).contains("safe_query: true"), "{e}");
    assert!(message(&e).contains("--safe"), "{e}");
    assert_eq!(e["details"]["field"], "query");
    let (s, r) = capsule_search(&d, "\"tabs", "&safe_query=true").await;
    assert_eq!((s, names(&r)), (200, vec!["refunds".to_string()]), "{r}");

    let e = fails(
        &d,
        "/reasoning/search",
        json!({"workspace": "w", "query": "refunds: tab"}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert!(message(&e).contains("safe_query: true"), "{e}");
    assert_eq!(e["details"]["field"], "query");
    let r = ok(
        &d,
        "/reasoning/search",
        json!({"workspace": "w", "query": "refunds: tab", "safe_query": true}),
    )
    .await;
    assert_eq!(r["hits"].as_array().unwrap().len(), 1, "{r}");
    let e = fails(
        &d,
        "/reasoning/search",
        json!({"workspace": "w", "query": ": -", "safe_query": true}),
        400,
        "INVALID_REQUEST",
    )
    .await;
    assert_eq!(e["details"]["field"], "query");

    for safe in [false, true] {
        let r = ok(
            &d,
            "/memories/recall",
            json!({"workspace": "w", "query": "\"refunds: tab", "safe_query": safe}),
        )
        .await;
        assert_eq!(r["items"].as_array().unwrap().len(), 1, "{r}");
    }

    // Over MCP, the flag is in the tools' arguments.
    let mut mcp = d.mcp().await;
    let r = mcp
        .call_tool(
            "branchmind_search",
            json!({"workspace": "w", "query": "\"tabs", "safe_query": true}),
        )
        .await;
    assert_eq!(
        r["structuredContent"]["hits"].as_array().map(Vec::len),
        Some(1),
        "{r}"
    );
    let r = mcp
        .call_tool(
            "memory_recall",
            json!({"workspace": "w", "query": "tab", "safe_query": true}),
        )
        .await;
    assert_eq!(
        r["structuredContent"]["items"].as_array().map(Vec::len),
        Some(1),
        "{r}"
    );
    d.stop().await;
}

/// An index file whose tables were built without stemming (as earlier builds made them, with
/// their layouts recorded) is rebuilt once at the next start; then words find their forms.
#[tokio::test]
async fn an_index_built_without_stemming_is_rebuilt_at_the_next_start() {
    if moss_tests::on_postgres() {
        // About SQLite's full-text index file, which a store on PostgreSQL does not have.
        return;
    }
    let d = TestDaemon::start().await;
    seed(&d).await;
    found_everywhere(&d, "tab").await;
    let home = d.stop_keeping_home().await;
    let fts = rusqlite::Connection::open(home.path().join("moss-fts.db")).unwrap();
    fts.execute(
        "ATTACH DATABASE ?1 AS m",
        [home.path().join("moss.db").to_str().unwrap()],
    )
    .unwrap();
    for (fts_table, table, cols) in [
        ("capsules_fts", "capsules", "title, capsule_text"),
        ("reasoning_fts", "reasoning_entries", "title, content"),
        ("memories_fts", "memories", "content, contexts_text, slot"),
    ] {
        let layout = format!("{cols}, tokenize = 'unicode61 remove_diacritics 2'");
        fts.execute_batch(&format!(
            "DROP TABLE {fts_table};
             CREATE VIRTUAL TABLE {fts_table} USING fts5({layout});
             INSERT INTO {fts_table}(rowid, {cols}) SELECT rowid, {cols} FROM m.{table};"
        ))
        .unwrap();
        let n = fts
            .execute(
                "UPDATE indexer_sources SET layout = ?1 WHERE source = ?2",
                rusqlite::params![layout, fts_table.trim_end_matches("_fts")],
            )
            .unwrap();
        assert_eq!(n, 1, "{fts_table}");
        let hits: i64 = fts
            .query_row(
                &format!("SELECT count(*) FROM {fts_table} WHERE {fts_table} MATCH 'tab'"),
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(hits, 0, "{fts_table} is unstemmed");
    }
    drop(fts);
    let d = TestDaemon::start_in(home, None).await;
    for q in ["tab", "refund", "merging"] {
        found_everywhere(&d, q).await;
    }
    d.stop().await;
}
