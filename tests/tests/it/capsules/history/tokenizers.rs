//! The configured search and token-count tokenizers.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

use super::{fetch, ok, urlencode};
use crate::util::store;

/// Search with `search_tokenizer: "code"`: paths, snake_case names and dashed ids are words of
/// their own (and their parts no longer are). Changing the setting rebuilds the index at the
/// next start.
#[tokio::test]
async fn the_code_search_tokenizer_keeps_paths_whole_after_a_reindex() {
    let d = TestDaemon::start().await;
    let with_path = store(
        &d,
        json!({"workspace": "c", "name": "path", "capsule_text": capsule_text("see src/auth/session.go and refresh_token_ttl")}),
    )
    .await;
    store(
        &d,
        json!({"workspace": "c", "name": "prose", "capsule_text": capsule_text("the session in src went to auth, then go")}),
    )
    .await;
    let hits = |r: &Value| -> Vec<String> {
        let mut names: Vec<String> = r["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    let search = |q: &str| {
        format!(
            "/capsules/search?workspace=c&safe_query=true&query={}",
            urlencode(q)
        )
    };
    // Default words: the path is four words, found in either capsule in that order or not.
    let (_, r) = d.call("GET", &search("session"), None).await;
    assert_eq!(hits(&r), ["path", "prose"], "{r}");
    let (_, r) = d.call("GET", &search("refresh_token_ttl"), None).await;
    assert_eq!(hits(&r), ["path"], "{r}");

    // `search_tokenizer` picks the tokenizer of SQLite's FTS5 index; PostgreSQL's generated
    // words column has one way of cutting words, which the setting does not change.
    if std::env::var("MOSS_TEST_ENGINE").as_deref() == Ok("postgres") {
        d.stop().await;
        return;
    }
    let home = d.stop_keeping_home().await;
    let d = TestDaemon::start_in(home, Some(json!({"search_tokenizer": "code"}))).await;
    let (_, r) = d.call("GET", &search("src/auth/session.go"), None).await;
    assert_eq!(hits(&r), ["path"], "{r}");
    assert_eq!(r["items"][0]["id"], with_path.as_str());
    let (_, r) = d.call("GET", &search("refresh_token_ttl"), None).await;
    assert_eq!(hits(&r), ["path"], "{r}");
    // Stemmed as a whole word: its plural finds it.
    let (_, r) = d.call("GET", &search("refresh_token_ttls"), None).await;
    assert_eq!(hits(&r), ["path"], "{r}");
    // The trade-off: a part of a path is no longer a word of it.
    let (_, r) = d.call("GET", &search("session"), None).await;
    assert_eq!(hits(&r), ["prose"], "{r}");
    // New writes are cut the same way.
    store(
        &d,
        json!({"workspace": "c", "name": "later", "capsule_text": capsule_text("fixed pr-123 in lib/net.rs")}),
    )
    .await;
    let (_, r) = d.call("GET", &search("pr-123"), None).await;
    assert_eq!(hits(&r), ["later"], "{r}");
    // Memory recall keeps the default words: it splits its query at punctuation.
    ok(
        &d,
        "POST",
        "/memories",
        json!({"content": "fixed pr-123 in lib/net.rs"}),
    )
    .await;
    let r = ok(&d, "POST", "/memories/recall", json!({"query": "pr-123"})).await;
    assert_eq!(
        r["items"][0]["content"], "fixed pr-123 in lib/net.rs",
        "{r}"
    );
    d.stop().await;
}

/// `tokenizer: "cl100k_base"` counts real tokens for every write path.
#[tokio::test]
async fn the_configured_tokenizer_counts_real_tokens() {
    let d = TestDaemon::start_with_config(Some(json!({"tokenizer": "cl100k_base"}))).await;
    let id = store(
        &d,
        json!({"workspace": "t", "name": "tiny", "capsule_text": "tiktoken is great!", "allow_thin": true}),
    )
    .await;
    assert_eq!(fetch(&d, &id).await["tokens_estimate"], 6);
    ok(
        &d,
        "PUT",
        &format!("/capsules/{id}"),
        json!({"capsule_text": "antidisestablishmentarianism", "allow_thin": true}),
    )
    .await;
    assert_eq!(fetch(&d, &id).await["tokens_estimate"], 6);
    // A clone counts its text; an append counts the text it makes (both counted before the
    // writer's job, on the text the job then writes).
    let r = ok(
        &d,
        "POST",
        "/capsules/clone",
        json!({"source": {"id": id}, "target": {"workspace": "t", "name": "copy"}}),
    )
    .await;
    let copy = r["id"].as_str().unwrap().to_string();
    assert_eq!(fetch(&d, &copy).await["tokens_estimate"], 6);
    let cl100k = tiktoken_rs::cl100k_base_singleton();
    let notes = store(
        &d,
        json!({"workspace": "t", "name": "notes", "capsule_text": "## Notes\nfirst line", "allow_thin": true}),
    )
    .await;
    ok(
        &d,
        "POST",
        "/capsules/append",
        json!({"id": notes, "section": "Notes", "content": "antidisestablishmentarianism, 2 + 2 = 4"}),
    )
    .await;
    let after = fetch(&d, &notes).await;
    let text = after["capsule_text"].as_str().unwrap();
    assert!(text.contains("antidisestablishmentarianism"), "{text}");
    assert_eq!(
        after["tokens_estimate"],
        cl100k.count_ordinary(text) as i64,
        "{text}"
    );
    d.stop().await;
    // The default counts words: ceil(3 × 1.3).
    let d = TestDaemon::start().await;
    let id = store(
        &d,
        json!({"workspace": "t", "capsule_text": "tiktoken is great!", "allow_thin": true}),
    )
    .await;
    assert_eq!(fetch(&d, &id).await["tokens_estimate"], 4);
    ok(
        &d,
        "POST",
        "/capsules/export",
        json!({"workspace": "t", "path": "t.jsonl"}),
    )
    .await;
    let file = std::fs::read(d.home_path().join("exports/t.jsonl")).unwrap();
    d.stop().await;
    // An import counts with the importing daemon's tokenizer.
    let d = TestDaemon::start_with_config(Some(json!({"tokenizer": "cl100k_base"}))).await;
    std::fs::create_dir_all(d.home_path().join("exports")).unwrap();
    std::fs::write(d.home_path().join("exports/t.jsonl"), file).unwrap();
    let r = ok(&d, "POST", "/capsules/import", json!({"path": "t.jsonl"})).await;
    assert_eq!(r["imported"], 1, "{r}");
    assert_eq!(fetch(&d, &id).await["tokens_estimate"], 6);
    d.stop().await;
}
