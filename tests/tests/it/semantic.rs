//! Semantic and hybrid search with a real embedding model: a question that shares no word with
//! what answers it finds it by meaning, over REST and MCP, in every family; keyword
//! mode does not; `explain` shows both parts; and a daemon without a model searches as before.
//!
//! The model comes from `MOSS_TEST_MODEL_DIR` (`tests/fixtures/model.sh DIR` makes one; CI sets
//! it). Without it the tests that need a model say so and return, except under `CI`, where a
//! missing model is a failure.

use std::time::Duration;

use moss_client::capsule::{SearchRequest, StoreRequest};
use moss_client::memory::{MemoryRecallRequest, MemoryStoreRequest};
use moss_client::reasoning::{NotesCommitRequest, ReasoningSearchRequest};
use moss_client::search::SearchMode;
use moss_client::tasks::{NewStep, TasksCreateRequest};
use moss_tests::{TestDaemon, model_dir, wait_until};
use serde_json::{Value, json};

const WS: &str = "meaning";

/// Waits until the embedding index holds every change (`semantic.behind` is 0).
pub(crate) async fn caught_up(d: &TestDaemon) {
    wait_until(
        "the embedding index to catch up",
        Duration::from_secs(300),
        || async {
            let (code, s) = d.call("GET", "/status", None).await;
            code == 200 && s["semantic"]["state"] == "ready" && s["semantic"]["behind"] == 0
        },
    )
    .await;
}

/// Capsule texts on unrelated matters, to rank against.
const TOPICS: [&str; 12] = [
    "The sourdough starter needs feeding twice a day with rye flour.",
    "Tomato seedlings go outside after the last frost in May.",
    "The invoice template uses a serif font and the company logo.",
    "Nightly database backups are copied to cold storage on Sundays.",
    "The marketing site colours moved to a darker green palette.",
    "Warehouse shelves are labelled by aisle, bay and level.",
    "The office coffee machine descaling happens every month.",
    "Customer support replies within four hours on weekdays.",
    "The bicycle fleet gets new tyres before winter.",
    "Quarterly reports are exported as spreadsheets for finance.",
    "The orchestra rehearses the second movement on Thursdays.",
    "Translation files for Spanish and German are reviewed by volunteers.",
];

fn capsule(objective: &str, decisions: &str) -> String {
    format!(
        "## Objective\n{objective}\n## Current status\nin progress\n## Decisions\n{decisions}\n\
         ## Next actions\n- continue\n## Key locations\nsrc/\n## Open questions\nnone\n"
    )
}

async fn seed(d: &TestDaemon) -> (String, i64, String) {
    let c = &d.client;
    let stored = c
        .capsules()
        .store(&StoreRequest {
            workspace: Some(WS.into()),
            name: Some("credentials".into()),
            capsule_text: capsule(
                "Settle how our services prove who they are to each other.",
                "We picked signed bearer tokens that expire after an hour, verified with a \
                 shared key.",
            ),
            ..Default::default()
        })
        .await
        .unwrap();
    for (i, t) in TOPICS.iter().enumerate() {
        c.capsules()
            .store(&StoreRequest {
                workspace: Some(WS.into()),
                name: Some(format!("filler-{i}")),
                capsule_text: capsule(t, "nothing decided"),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let note = c
        .reasoning()
        .notes_commit(&NotesCommitRequest {
            workspace: WS.into(),
            doc: Some("notes".into()),
            content: "The flaky rollout came from a race between the schema migration job and \
                      the web pods starting."
                .into(),
            ..Default::default()
        })
        .await
        .unwrap();
    for t in TOPICS {
        c.reasoning()
            .notes_commit(&NotesCommitRequest {
                workspace: WS.into(),
                doc: Some("notes".into()),
                content: t.into(),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let memory = c
        .memories()
        .store(&MemoryStoreRequest {
            workspace: Some(WS.into()),
            content: "User prefers tabs over spaces.".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    for t in TOPICS {
        c.memories()
            .store(&MemoryStoreRequest {
                workspace: Some(WS.into()),
                content: t.into(),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    (stored.id, note.entry.seq, memory.memory.id)
}

/// A question about the capsule's decision, sharing none of its words.
const CAPSULE_Q: &str = "which JWT authentication approach was chosen";
const NOTE_Q: &str = "why did the deploy break";
const MEMORY_Q: &str = "indentation style";

fn position<T>(items: &[T], is: impl Fn(&T) -> bool) -> Option<usize> {
    items.iter().position(is).map(|i| i + 1)
}

#[tokio::test]
async fn a_question_sharing_no_word_finds_its_answer_in_hybrid_mode_and_not_in_keyword_mode() {
    let Some(model) = model_dir() else { return };
    let d = TestDaemon::start_with_config(Some(json!({
        "embeddings": { "model_dir": model }
    })))
    .await;
    let (capsule_id, note_seq, memory_id) = seed(&d).await;
    caught_up(&d).await;
    let c = &d.client;

    // Capsules, over REST (the typed client).
    let search = |mode: Option<SearchMode>| SearchRequest {
        query: CAPSULE_Q.into(),
        workspace: Some(WS.into()),
        mode,
        explain: Some(true),
        ..Default::default()
    };
    let keyword = c
        .capsules()
        .search(&search(Some(SearchMode::Keyword)))
        .await
        .unwrap();
    assert_eq!(keyword.mode, SearchMode::Keyword);
    assert!(
        position(&keyword.items[..keyword.items.len().min(5)], |h| h.id
            == capsule_id)
        .is_none(),
        "keyword mode finds no shared word: {keyword:?}"
    );
    let hybrid = c.capsules().search(&search(None)).await.unwrap();
    assert_eq!(
        hybrid.mode,
        SearchMode::Hybrid,
        "hybrid is the default with a model"
    );
    let at = position(&hybrid.items, |h| h.id == capsule_id);
    assert!(
        at.is_some_and(|r| r <= 5),
        "hybrid finds the capsule in the top 5: {at:?} in {:#?}",
        hybrid.items
    );
    let hit = &hybrid.items[at.unwrap() - 1];
    let e = hit.explain.as_ref().expect("explain");
    let sem = e.semantic.as_ref().expect("a semantic part");
    assert!(sem.similarity > 0.2 && sem.rank >= 1, "{e:?}");
    assert!(
        e.keyword.is_none(),
        "no keyword part: the words do not match: {e:?}"
    );
    assert!(
        hit.snippet.contains("bearer"),
        "the passage is the snippet: {}",
        hit.snippet
    );

    // Reasoning notes.
    let rsearch = |mode| ReasoningSearchRequest {
        workspace: WS.into(),
        query: NOTE_Q.into(),
        mode: Some(mode),
        explain: Some(true),
        ..Default::default()
    };
    let kw = c
        .reasoning()
        .search(&rsearch(SearchMode::Keyword))
        .await
        .unwrap();
    assert!(
        position(&kw.hits, |h| h.seq == note_seq).is_none_or(|r| r > 5),
        "{kw:?}"
    );
    let hy = c
        .reasoning()
        .search(&rsearch(SearchMode::Hybrid))
        .await
        .unwrap();
    assert_eq!(hy.mode, SearchMode::Hybrid);
    let at = position(&hy.hits, |h| h.seq == note_seq);
    assert!(at.is_some_and(|r| r <= 5), "{at:?} in {:#?}", hy.hits);
    assert!(
        hy.hits[at.unwrap() - 1]
            .explain
            .as_ref()
            .unwrap()
            .semantic
            .is_some()
    );

    // Memories: the semantic part joins the relevance.
    let recall = |mode| MemoryRecallRequest {
        workspace: Some(WS.into()),
        query: Some(MEMORY_Q.into()),
        mode: Some(mode),
        explain: Some(true),
        ..Default::default()
    };
    let kw = c
        .memories()
        .recall(&recall(SearchMode::Keyword))
        .await
        .unwrap();
    assert!(
        position(&kw.items, |m| m.memory.id == memory_id).is_none_or(|r| r > 5),
        "{kw:?}"
    );
    let hy = c
        .memories()
        .recall(&recall(SearchMode::Hybrid))
        .await
        .unwrap();
    assert_eq!(hy.mode, SearchMode::Hybrid);
    let at = position(&hy.items, |m| m.memory.id == memory_id);
    assert!(at.is_some_and(|r| r <= 5), "{at:?} in {:#?}", hy.items);
    let parts = hy.items[at.unwrap() - 1].explain.as_ref().unwrap();
    assert!(
        parts.semantic.unwrap() > 0.0 && parts.similarity.unwrap() > 0.2,
        "{parts:?}"
    );
    assert_eq!(parts.text, 0.0, "no keyword part: {parts:?}");

    // Every family at once, over MCP.
    let mut mcp = d.mcp().await;
    for (q, id) in [
        (CAPSULE_Q, capsule_id.clone()),
        (NOTE_Q, note_seq.to_string()),
        (MEMORY_Q, memory_id.clone()),
    ] {
        let hybrid = moss_search(&mut mcp, q, "hybrid").await;
        let items = hybrid["items"].as_array().unwrap();
        let at = position(items, |h| h["id"] == id.as_str());
        assert!(at.is_some_and(|r| r <= 5), "{q}: {at:?} in {hybrid:#}");
        assert!(items[at.unwrap() - 1]["explain"]["semantic"]["similarity"].is_number());
        let keyword = moss_search(&mut mcp, q, "keyword").await;
        let items = keyword["items"].as_array().unwrap();
        assert!(position(items, |h| h["id"] == id.as_str()).is_none_or(|r| r > 5));
        assert_eq!(keyword["mode"], "keyword");
    }
    d.stop().await;
}

/// A task and a step whose words a question shares none of, among tasks on other matters;
/// the same task again in another workspace; and a task sharing one word with the task's
/// question. Returns the task's id, the step's (`TASK/STEP`) and that other task's.
async fn seed_tasks(d: &TestDaemon) -> (String, String, String) {
    let c = &d.client;
    let create = |ws: &str, title: &str, parent: Option<String>, description: Option<&str>| {
        TasksCreateRequest {
            workspace: ws.into(),
            title: title.into(),
            kind: Some(if parent.is_some() { "task" } else { "plan" }.into()),
            parent,
            description: description.map(Into::into),
            ..Default::default()
        }
    };
    let mut found = None;
    for ws in [WS, "elsewhere"] {
        let plan = c
            .tasks()
            .create(&create(ws, "Engineering chores", None, None))
            .await
            .unwrap();
        let task = c
            .tasks()
            .create(&TasksCreateRequest {
                steps: Some(vec![NewStep {
                    title: "Rotate the database password every quarter".into(),
                    ..Default::default()
                }]),
                ..create(
                    ws,
                    "Speed up the nightly build",
                    Some(plan.item.id.clone()),
                    Some(
                        "Cache compiled dependencies between runs so the pipeline finishes sooner.",
                    ),
                )
            })
            .await
            .unwrap();
        if ws == WS {
            let step = format!("{}/{}", task.item.id, task.steps[0].step_id);
            // It shares one word with the task's question, and only that one.
            let how = c
                .tasks()
                .create(&create(
                    ws,
                    "Agree on how the team votes",
                    Some(plan.item.id.clone()),
                    None,
                ))
                .await
                .unwrap();
            found = Some((task.item.id, step, how.item.id));
        }
        for t in TOPICS {
            c.tasks()
                .create(&create(ws, t, Some(plan.item.id.clone()), None))
                .await
                .unwrap();
        }
    }
    found.unwrap()
}

/// Questions sharing no word with the task and with the step.
const TASK_Q: &str = "how can CI get faster";
const STEP_Q: &str = "change DB credentials regularly";

/// `moss_search` ranks plans, tasks and steps by meaning too, over REST and MCP, among the
/// workspace asked for only; the embedder catches up over tasks written before the daemon had
/// a model.
#[tokio::test]
async fn moss_search_finds_a_task_and_a_step_by_meaning_over_rest_and_mcp() {
    let Some(model) = model_dir() else { return };
    // Written before there was a model: the embedder must catch up over them. On SQLite
    // whatever engine the tests run on: the one semantic search is served on.
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("moss.db");
    let sqlite = json!({ "database": format!("sqlite:{}", file.display()) });
    let d = TestDaemon::start_in(home, Some(sqlite)).await;
    let (task, step, how) = seed_tasks(&d).await;
    let home = d.stop_keeping_home().await;
    let d = TestDaemon::start_in(home, Some(json!({ "embeddings": { "model_dir": model } }))).await;
    caught_up(&d).await;
    let (_, status) = d.call("GET", "/status", None).await;
    let tasks = status["semantic"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source"] == "tasks")
        .unwrap_or_else(|| panic!("a tasks source: {status}"));
    // Per workspace: a plan, a task, its step and twelve tasks more; one more in the first.
    assert_eq!(tasks["items"], 2 * 15 + 1, "{status}");

    let rest = |q: &str, mode| moss_client::moss::SearchRequest {
        query: q.into(),
        workspace: Some(WS.into()),
        mode: Some(mode),
        explain: Some(true),
        safe_query: Some(true),
        ..Default::default()
    };
    let mut mcp = d.mcp().await;
    for (q, id) in [(TASK_Q, &task), (STEP_Q, &step)] {
        let hybrid = d
            .client
            .moss()
            .search(&rest(q, SearchMode::Hybrid))
            .await
            .unwrap();
        assert_eq!(hybrid.mode, SearchMode::Hybrid);
        assert!(
            hybrid.items.iter().all(|h| h.workspace == WS),
            "the workspace applies before ranking: {hybrid:#?}"
        );
        let at = position(&hybrid.items, |h| h.id == *id);
        assert!(at.is_some_and(|r| r <= 5), "{q}: {at:?} in {hybrid:#?}");
        let hit = &hybrid.items[at.unwrap() - 1];
        assert_eq!(hit.family, "tasks");
        let e = hit.explain.as_ref().unwrap();
        assert!(e.semantic.as_ref().unwrap().similarity > 0.2, "{e:?}");
        assert!(e.keyword.is_none(), "no word matches: {e:?}");
        let keyword = d
            .client
            .moss()
            .search(&rest(q, SearchMode::Keyword))
            .await
            .unwrap();
        assert!(
            position(&keyword.items, |h| h.id == *id).is_none(),
            "{q}: {keyword:#?}"
        );
        if q == TASK_Q {
            // Keyword mode ranks plans, tasks and steps by the words they share with the
            // question, one is enough; fused with meaning, the keyword part takes only those
            // holding every word, as the other families' do.
            assert!(keyword.items.iter().any(|h| h.id == how), "{keyword:#?}");
            let other = hybrid.items.iter().find(|h| h.id == how);
            assert!(
                other.is_none_or(|h| h.explain.as_ref().unwrap().keyword.is_none()),
                "{hybrid:#?}"
            );
        }

        let hybrid = moss_search(&mut mcp, q, "hybrid").await;
        let items = hybrid["items"].as_array().unwrap();
        let at = position(items, |h| h["id"] == id.as_str());
        assert!(at.is_some_and(|r| r <= 5), "{q}: {at:?} in {hybrid:#}");
        assert_eq!(items[at.unwrap() - 1]["family"], "tasks");
        assert!(items[at.unwrap() - 1]["explain"]["semantic"]["similarity"].is_number());
        let keyword = moss_search(&mut mcp, q, "keyword").await;
        let items = keyword["items"].as_array().unwrap();
        assert!(
            position(items, |h| h["id"] == id.as_str()).is_none(),
            "{keyword:#}"
        );
    }
    d.stop().await;
}

async fn moss_search(mcp: &mut moss_tests::McpSession, q: &str, mode: &str) -> Value {
    let r = mcp
        .call_tool(
            "moss_search",
            json!({"query": q, "workspace": WS, "mode": mode, "explain": true, "safe_query": true}),
        )
        .await;
    assert_eq!(r["isError"], false, "{r}");
    r["structuredContent"].clone()
}

#[tokio::test]
async fn without_a_model_search_ranks_by_words_and_semantic_mode_says_how_to_get_one() {
    let d = TestDaemon::start().await;
    let (capsule_id, _, _) = seed(&d).await;
    let c = &d.client;
    let page = c
        .capsules()
        .search(&SearchRequest {
            query: "bearer".into(),
            explain: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.mode, SearchMode::Keyword);
    assert_eq!(page.items[0].id, capsule_id);
    let e = page.items[0].explain.as_ref().unwrap();
    assert_eq!(e.keyword.as_ref().unwrap().rank, 1);
    assert!(e.semantic.is_none());
    let (code, body) = d
        .call("GET", "/capsules/search?query=bearer&mode=semantic", None)
        .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(body["error"]["details"]["field"], "mode");
    let msg = body["error"]["message"].as_str().unwrap();
    assert!(msg.contains("embeddings.model_dir"), "{msg}");
    let (_, status) = d.call("GET", "/status", None).await;
    assert_eq!(status["semantic"]["state"], "off", "{status}");
    d.stop().await;
}

/// `moss_search` ranks capsules by the meaning of the question as asked, as `capsule_search`
/// does, also when `safe_query` escapes its words for the keyword part: the capsule part's
/// similarity is the one `capsule_search` gives (and the question is embedded once, its vector
/// shared by every family).
#[tokio::test]
async fn moss_search_embeds_the_question_as_asked_for_capsules_too() {
    let Some(model) = model_dir() else { return };
    let d = TestDaemon::start_with_config(Some(json!({
        "embeddings": { "model_dir": model }
    })))
    .await;
    let (capsule_id, _, _) = seed(&d).await;
    caught_up(&d).await;
    let own = d
        .client
        .capsules()
        .search(&SearchRequest {
            query: CAPSULE_Q.into(),
            workspace: Some(WS.into()),
            mode: Some(SearchMode::Semantic),
            explain: Some(true),
            safe_query: Some(true),
            ..Default::default()
        })
        .await
        .unwrap();
    let hit = own.items.iter().find(|h| h.id == capsule_id).unwrap();
    let own_similarity = hit
        .explain
        .as_ref()
        .unwrap()
        .semantic
        .as_ref()
        .unwrap()
        .similarity;
    let across = d
        .client
        .moss()
        .search(&moss_client::moss::SearchRequest {
            query: CAPSULE_Q.into(),
            workspace: Some(WS.into()),
            mode: Some(SearchMode::Semantic),
            explain: Some(true),
            safe_query: Some(true),
            families: Some(moss_client::moss::FamilyList::One("capsule".into())),
            ..Default::default()
        })
        .await
        .unwrap();
    let hit = across.items.iter().find(|h| h.id == capsule_id).unwrap();
    let similarity = hit
        .explain
        .as_ref()
        .unwrap()
        .semantic
        .as_ref()
        .unwrap()
        .similarity;
    assert_eq!(similarity, own_similarity, "{across:#?}");
    d.stop().await;
}

/// `semantic.embedded` in a daemon's status: passages it embedded since it started.
async fn embedded(d: &TestDaemon) -> i64 {
    let (_, s) = d.call("GET", "/status", None).await;
    s["semantic"]["embedded"]
        .as_i64()
        .expect("semantic.embedded")
}

/// Waits until a semantic capsule search through `d` ranks `id` in its top 5.
async fn found_by_meaning(d: &TestDaemon, id: &str) {
    wait_until(
        "a search by meaning to find the capsule",
        Duration::from_secs(300),
        || async {
            d.client
                .capsules()
                .search(&SearchRequest {
                    query: CAPSULE_Q.into(),
                    workspace: Some(WS.into()),
                    mode: Some(SearchMode::Semantic),
                    ..Default::default()
                })
                .await
                .is_ok_and(|r| position(&r.items, |h| h.id == id).is_some_and(|at| at <= 5))
        },
    )
    .await;
}

/// On PostgreSQL every daemon on the database serves semantic search, each from vectors of its
/// own: what is stored through one daemon is found by meaning through another; a daemon
/// restarted on its home keeps its vectors (it embeds nothing again); one that was stopped
/// while the queues were trimmed past it rebuilds its vectors from the tables.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn on_postgres_a_daemon_finds_by_meaning_what_another_stored() {
    let Some(model) = model_dir() else { return };
    let Some(database) = moss_tests::postgres_schema().await else {
        eprintln!("MOSS_TEST_POSTGRES is unset: skipping a PostgreSQL test");
        return;
    };
    let config = json!({ "database": database, "embeddings": { "model_dir": model } });
    let a = TestDaemon::start_with_config(Some(config.clone())).await;
    let b = TestDaemon::start_with_config(Some(config.clone())).await;
    let (capsule_id, note_seq, memory_id) = seed(&a).await;

    // Through B, which heard of A's writes from the database: by meaning, in every family.
    found_by_meaning(&b, &capsule_id).await;
    caught_up(&b).await;
    let notes = b
        .client
        .reasoning()
        .search(&ReasoningSearchRequest {
            workspace: WS.into(),
            query: NOTE_Q.into(),
            mode: Some(SearchMode::Semantic),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        position(&notes.hits, |h| h.seq == note_seq).is_some_and(|r| r <= 5),
        "{notes:?}"
    );
    let memories = b
        .client
        .memories()
        .recall(&MemoryRecallRequest {
            workspace: Some(WS.into()),
            query: Some(MEMORY_Q.into()),
            mode: Some(SearchMode::Semantic),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(
        position(&memories.items, |m| m.memory.id == memory_id).is_some_and(|r| r <= 5),
        "{memories:?}"
    );
    assert!(embedded(&b).await > 0);

    // B restarted on its home: its vector file holds them all; nothing is embedded again.
    let home = b.stop_keeping_home().await;
    let b = TestDaemon::start_in(home, None).await;
    caught_up(&b).await;
    found_by_meaning(&b, &capsule_id).await;
    assert_eq!(embedded(&b).await, 0, "a restart embeds nothing again");

    // B stopped while A writes and the queues are trimmed past B's place: B rebuilds.
    let home = b.stop_keeping_home().await;
    a.client
        .capsules()
        .store(&StoreRequest {
            workspace: Some(WS.into()),
            name: Some("later".into()),
            capsule_text: capsule("One more, written while B was away.", "none"),
            ..Default::default()
        })
        .await
        .unwrap();
    let url = database.clone();
    tokio::task::spawn_blocking(move || {
        use moss_daemon::store::engine::{Db, postgres};
        let conn = postgres::PgConn::connect(&postgres::config(&url).unwrap()).unwrap();
        // What the writers' trims record once KEEP newer entries exist.
        Db::Postgres(&conn)
            .batch(
                "INSERT INTO moss_queue_trims(source, trimmed_to)
                   SELECT 'capsules', max(seq) FROM capsules_fts_queue
                 ON CONFLICT (source) DO UPDATE SET trimmed_to = EXCLUDED.trimmed_to",
            )
            .unwrap();
    })
    .await
    .unwrap();
    let b = TestDaemon::start_in(home, None).await;
    caught_up(&b).await;
    found_by_meaning(&b, &capsule_id).await;
    assert!(
        embedded(&b).await >= 14,
        "the capsules' vectors were rebuilt: {} passages",
        embedded(&b).await
    );
    b.stop().await;
    a.stop().await;
}
