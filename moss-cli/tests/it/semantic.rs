//! The embedding index through the real binaries: it survives a `kill -9` of the daemon and
//! catches up without embedding again what it had, a change of model rebuilds it, and the CLI
//! finds a note and a memory by meaning where keyword search does not, explaining both parts.
//!
//! The model comes from `MOSS_TEST_MODEL_DIR` (`tests/fixtures/model.sh DIR`); without it these
//! tests say so and return, except under `CI`, where a missing model is a failure.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use moss_tests::model_dir;

use crate::lifecycle::{Env, ok_json};

fn configure(env: &Env, model: &Path) {
    std::fs::create_dir_all(env.home()).unwrap();
    std::fs::write(
        env.home().join("config.json"),
        serde_json::json!({ "embeddings": { "model_dir": model } }).to_string(),
    )
    .unwrap();
}

fn status(env: &Env) -> Value {
    ok_json(&env.moss(&["daemon", "status"]))
}

/// Polls the status until `done` holds of its `semantic` object, at most `timeout`.
fn wait_semantic(env: &Env, timeout: Duration, done: impl Fn(&Value) -> bool) -> Value {
    let began = Instant::now();
    loop {
        let s = status(env);
        if done(&s["semantic"]) {
            return s["semantic"].clone();
        }
        assert!(
            began.elapsed() < timeout,
            "the embedding index did not get there in {timeout:?}: {}",
            s["semantic"]
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn caught_up(s: &Value) -> bool {
    s["state"] == "ready" && s["behind"] == 0
}

fn capsules_source(s: &Value) -> Value {
    s["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["source"] == "capsules")
        .cloned()
        .unwrap()
}

fn store(env: &Env, name: &str, body: &str) {
    let mut child = env
        .cmd(&["store", "-w", "k9", "--name", name])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let text = format!(
        "## Objective\n{body}\n## Current status\nopen\n## Decisions\nnone\n## Next actions\n- \
         go on\n## Key locations\nsrc/\n## Open questions\nnone\n"
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const N: usize = 40;

#[test]
fn the_index_survives_a_kill_and_catches_up_then_a_new_model_rebuilds_it() {
    let Some(model) = model_dir() else { return };
    let env = Env::new();
    configure(&env, &model);
    for i in 0..N {
        store(
            &env,
            &format!("c{i}"),
            &format!("Item {i}: the garden gate squeaks at dawn."),
        );
    }
    // Some embedded, maybe not all: then the daemon dies without a word.
    wait_semantic(&env, Duration::from_secs(120), |s| {
        s["sources"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["source"] == "capsules"))
            .is_some_and(|c| c["items"].as_u64().unwrap_or(0) >= 5)
    });
    let pid = status(&env)["pid"].as_u64().unwrap();
    assert!(
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    while std::net::TcpStream::connect(&env.addr).is_ok() {
        std::thread::sleep(Duration::from_millis(20));
    }
    // The next command starts a daemon, which finds its vectors and embeds only the rest.
    let _ = ok_json(&env.moss(&["list", "-w", "k9"]));
    let after = wait_semantic(&env, Duration::from_secs(300), caught_up);
    let capsules = capsules_source(&after);
    assert_eq!(capsules["items"], N as u64, "{after}");
    let passages = capsules["passages"].as_u64().unwrap();
    assert!(
        after["embedded"].as_u64().unwrap() < passages,
        "the restarted daemon kept what was embedded before the kill: {after}"
    );
    let found = ok_json(&env.moss(&[
        "search",
        "-w",
        "k9",
        "--mode",
        "semantic",
        "--explain",
        "a noisy door hinge in the morning",
    ]));
    assert_eq!(found["mode"], "semantic", "{found}");
    assert!(found["items"].as_array().unwrap().len() >= 5, "{found}");
    assert!(found["items"][0]["explain"]["semantic"]["similarity"].is_number());

    // Another model (here the same weights under another config file, so another identity):
    // every vector is made again.
    let other = env.dir.path().join("other-model");
    std::fs::create_dir_all(&other).unwrap();
    for f in ["tokenizer.json", "model.safetensors"] {
        std::os::unix::fs::symlink(model.join(f), other.join(f)).unwrap();
    }
    let mut config = std::fs::read_to_string(model.join("config.json")).unwrap();
    config.push('\n');
    std::fs::write(other.join("config.json"), config).unwrap();
    configure(&env, &other);
    let before = after["model"].as_str().unwrap().to_string();
    let _ = ok_json(&env.moss(&["daemon", "restart"]));
    let rebuilt = wait_semantic(&env, Duration::from_secs(300), caught_up);
    assert_ne!(rebuilt["model"], before.as_str(), "{rebuilt}");
    assert_eq!(capsules_source(&rebuilt)["items"], N as u64, "{rebuilt}");
    assert!(
        rebuilt["embedded"].as_u64().unwrap() >= passages,
        "every passage embedded again: {rebuilt}"
    );
    assert!(
        env.log().contains("made by another model"),
        "the log says why: {}",
        env.log()
    );
}

/// `moss bench --semantic` fills memories and capsules, waits for the embedder, and times every
/// search call in every mode with distinct questions; the index's size is in its report.
#[test]
fn bench_semantic_times_every_call_and_mode_once_the_index_caught_up() {
    let Some(model) = model_dir() else { return };
    let env = Env::new();
    configure(&env, &model);
    let args = [
        "bench",
        "--against-running",
        "--semantic",
        "--memories",
        "40",
        "--semantic-capsules",
        "3",
        "--queries",
        "4",
        "--clients",
        "2",
        "--size",
        "1500",
        "--json",
    ];
    let r = ok_json(&env.moss(&args));
    assert_eq!(
        (r["memories"].as_u64(), r["capsules"].as_u64()),
        (Some(40), Some(3)),
        "{r}"
    );
    // Every item has its vectors; a capsule is several passages.
    assert_eq!(r["items"], 43, "{r}");
    assert!(r["passages"].as_u64().unwrap() > 43, "{r}");
    assert!(r["memory_bytes"].as_u64().unwrap() > 0, "{r}");
    assert!(r["file_bytes"].as_u64().unwrap() > 0, "{r}");
    for c in r["catch_up"].as_array().unwrap() {
        assert!(c["seconds"].as_f64().unwrap() >= 0.0, "{r}");
    }
    let calls: Vec<&str> = r["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["call"].as_str().unwrap())
        .collect();
    assert_eq!(
        calls,
        ["memory_recall", "moss_search", "capsule_search"],
        "{r}"
    );
    for c in r["calls"].as_array().unwrap() {
        for mode in ["hybrid", "semantic", "semantic_cached", "keyword"] {
            assert_eq!(c[mode]["ops"], 4, "{mode}: {r}");
            assert_eq!(c[mode]["errors"], 0, "{mode}: {r}");
        }
    }
    let s = status(&env);
    assert_eq!(s["semantic"]["behind"], 0, "{s}");
}

/// Texts on unrelated matters, to rank against.
const TOPICS: [&str; 8] = [
    "The sourdough starter needs feeding twice a day with rye flour.",
    "Tomato seedlings go outside after the last frost in May.",
    "The invoice template uses a serif font and the company logo.",
    "Nightly database backups are copied to cold storage on Sundays.",
    "Warehouse shelves are labelled by aisle, bay and level.",
    "Customer support replies within four hours on weekdays.",
    "The bicycle fleet gets new tyres before winter.",
    "The orchestra rehearses the second movement on Thursdays.",
];

/// Where `is` first holds in `items` (1-based), if anywhere.
fn position(items: &Value, is: impl Fn(&Value) -> bool) -> Option<usize> {
    items.as_array().unwrap().iter().position(is).map(|i| i + 1)
}

/// Through the CLI as the README shows it: a reasoning note (`moss reason search`, the
/// branchmind_search tool) and a memory (`moss mem recall`) that share no word with the
/// question are in the top 5 in hybrid mode and not in keyword mode, and `explain` shows the
/// keyword part and the semantic part.
#[test]
fn the_cli_finds_a_note_and_a_memory_by_meaning_and_explains_both_parts() {
    let Some(model) = model_dir() else { return };
    let env = Env::new();
    configure(&env, &model);
    let ws = ["-w", "meaning"];
    let note = ok_json(&env.moss(&[
        "reason",
        "notes-commit",
        ws[0],
        ws[1],
        "doc=notes",
        "content=The flaky rollout came from a race between the schema migration job and the \
         web pods starting.",
    ]));
    let note_seq = note["entry"]["seq"].as_i64().unwrap();
    let memory = ok_json(&env.moss(&[
        "mem",
        "store",
        ws[0],
        ws[1],
        "content=User prefers tabs over spaces.",
    ]));
    let memory_id = memory["memory"]["id"].as_str().unwrap().to_string();
    for t in TOPICS {
        let content = format!("content={t}");
        ok_json(&env.moss(&[
            "reason",
            "notes-commit",
            ws[0],
            ws[1],
            "doc=notes",
            &content,
        ]));
        ok_json(&env.moss(&["mem", "store", ws[0], ws[1], &content]));
    }
    wait_semantic(&env, Duration::from_secs(300), caught_up);

    let search = |query: &str, mode: &str| {
        ok_json(&env.moss(&[
            "reason",
            "search",
            ws[0],
            ws[1],
            &format!("query={query}"),
            &format!("mode={mode}"),
            "explain:=true",
        ]))
    };
    let is_note = |h: &Value| h["seq"] == note_seq;
    let keyword = search("why did the deploy break", "keyword");
    assert_eq!(keyword["mode"], "keyword", "{keyword}");
    assert!(
        position(&keyword["hits"], is_note).is_none_or(|r| r > 5),
        "{keyword}"
    );
    let hybrid = search("why did the deploy break", "hybrid");
    assert_eq!(hybrid["mode"], "hybrid", "{hybrid}");
    let at = position(&hybrid["hits"], is_note);
    assert!(at.is_some_and(|r| r <= 5), "{at:?} in {hybrid}");
    let e = &hybrid["hits"][at.unwrap() - 1]["explain"];
    assert!(e["semantic"]["similarity"].as_f64().unwrap() > 0.2, "{e}");
    assert!(e["keyword"].is_null(), "no word matches: {e}");
    // A question sharing words with the note: both parts.
    let both = search("flaky rollout", "hybrid");
    let e = &both["hits"][position(&both["hits"], is_note).unwrap() - 1]["explain"];
    assert_eq!(e["keyword"]["rank"], 1, "{both}");
    assert!(e["semantic"]["similarity"].is_number(), "{both}");

    let recall = |query: &str, mode: &str| {
        ok_json(&env.moss(&[
            "mem",
            "recall",
            ws[0],
            ws[1],
            &format!("query={query}"),
            &format!("mode={mode}"),
            "explain:=true",
        ]))
    };
    let is_memory = |m: &Value| m["id"] == memory_id.as_str();
    let keyword = recall("indentation style", "keyword");
    assert_eq!(keyword["mode"], "keyword", "{keyword}");
    assert!(
        position(&keyword["items"], is_memory).is_none_or(|r| r > 5),
        "{keyword}"
    );
    let hybrid = recall("indentation style", "hybrid");
    assert_eq!(hybrid["mode"], "hybrid", "{hybrid}");
    let at = position(&hybrid["items"], is_memory);
    assert!(at.is_some_and(|r| r <= 5), "{at:?} in {hybrid}");
    let e = &hybrid["items"][at.unwrap() - 1]["explain"];
    assert!(e["similarity"].as_f64().unwrap() > 0.2, "{e}");
    assert!(e["semantic"].as_f64().unwrap() > 0.0, "{e}");
    assert_eq!(e["text"], 0.0, "no word matches: {e}");
    let both = recall("tabs", "hybrid");
    let e = &both["items"][position(&both["items"], is_memory).unwrap() - 1]["explain"];
    assert!(e["text"].as_f64().unwrap() > 0.0, "{both}");
    assert!(e["semantic"].as_f64().unwrap() > 0.0, "{both}");
}
