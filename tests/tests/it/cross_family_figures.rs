//! Search across the four families, measured on a labelled fixture
//! (`tests/fixtures/cross_family/`): 335 items (capsules, reasoning notes and cards, plans and
//! tasks with 113 steps, memories) in three workspaces, and 48 queries, each with the one item
//! it should find (12 answers per family).
//!
//! The fixture is loaded through the client, then each query is ranked by each strategy:
//!
//! - **capsules only**: `capsule_search` over every workspace;
//! - **per family, concatenated**: `capsule_search`, then `branchmind_search` in each workspace,
//!   then `memory_recall` in each workspace (workspaces in name order), each list appended to
//!   the last. Plans, tasks and steps have no search of their own, so their answers are misses.
//!
//! Every call asks for 20 hits. A query's rank is the position of its answer (or of an item in
//! its `accept` list: the task holding a step that is the answer) in the strategy's list; an
//! answer not in the list has no rank. Prints success@5 (the answer in the first five) and MRR
//! (mean of 1/rank, 0 without a rank) per strategy, by the answer's family and by the query's
//! form (exact words, words to stem, question). Run it with
//! `cargo test -p moss-tests --test it cross_family_figures -- --nocapture` to see the table.

use std::collections::HashMap;

use moss_client::capsule::{SearchRequest as CapsuleSearchRequest, StoreRequest};
use moss_client::memory::{Contexts, MemoryRecallRequest, MemoryStoreRequest};
use moss_client::moss::SearchRequest as MossSearchRequest;
use moss_client::reasoning::{
    InitRequest, NotesCommitRequest, ReasoningSearchRequest, ThinkCardRequest,
};
use moss_client::tasks::{NewStep, TasksCreateRequest};
use moss_tests::TestDaemon;
use serde::Deserialize;
use serde_json::Value;

const WORKSPACES: [&str; 3] = ["atlas", "bramble", "ledger"];
const FAMILIES: [&str; 4] = ["capsule", "reasoning", "tasks", "memory"];
const FORMS: [&str; 3] = ["exact", "stem", "question"];
/// Hits asked of every search call.
const LIMIT: i64 = 20;

#[derive(Deserialize)]
struct Step {
    key: String,
    title: String,
}

/// One line of `items.jsonl`; which fields are set depends on `family` and `kind`.
#[derive(Deserialize)]
struct Item {
    key: String,
    family: String,
    kind: String,
    workspace: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    tags: Option<Vec<String>>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    card: Option<Value>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    parent: Option<String>,
    #[serde(default)]
    steps: Vec<Step>,
    #[serde(default)]
    context: Option<Vec<String>>,
    #[serde(default)]
    weight: Option<f64>,
}

#[derive(Deserialize)]
struct Query {
    id: String,
    query: String,
    form: String,
    family: String,
    answer: String,
    accept: Vec<String>,
}

fn lines<T: for<'de> Deserialize<'de>>(name: &str) -> Vec<T> {
    let path = format!(
        "{}/fixtures/cross_family/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}: {e}: {l}")))
        .collect()
}

/// What the daemon calls each fixture item: `(family, workspace, id)`, and
/// `(family, workspace, title)` for the items whose title is unique in their workspace
/// (reasoning entries, plans, tasks and steps). A step's id is `<task id>/<step id>`: step ids
/// are numbered per task.
#[derive(Default)]
struct Keys {
    by_id: HashMap<(String, String, String), String>,
    by_title: HashMap<(String, String, String), String>,
}

impl Keys {
    fn add_id(&mut self, family: &str, ws: &str, id: impl ToString, key: &str) {
        let prev = self.by_id.insert(
            (family.to_string(), ws.to_string(), id.to_string()),
            key.to_string(),
        );
        assert!(
            prev.is_none(),
            "{family} {ws} {}: two items",
            id.to_string()
        );
    }

    fn add_title(&mut self, family: &str, ws: &str, title: &str, key: &str) {
        let prev = self.by_title.insert(
            (family.to_string(), ws.to_string(), title.to_string()),
            key.to_string(),
        );
        assert!(prev.is_none(), "{family} {ws} {title:?}: two items");
    }

    fn id(&self, family: &str, ws: &str, id: &str) -> Option<String> {
        self.by_id
            .get(&(family.to_string(), ws.to_string(), id.to_string()))
            .cloned()
    }

    fn title(&self, family: &str, ws: &str, title: &str) -> Option<String> {
        self.by_title
            .get(&(family.to_string(), ws.to_string(), title.to_string()))
            .cloned()
    }
}

/// Writes every item through the client; returns how to recognise each in a hit.
async fn load(d: &TestDaemon, items: &[Item]) -> Keys {
    let c = &d.client;
    let mut keys = Keys::default();
    for ws in WORKSPACES {
        c.reasoning()
            .init(&InitRequest {
                workspace: ws.into(),
            })
            .await
            .unwrap();
    }
    // Plan keys to their ids, for the tasks that name them as parent.
    let mut item_id: HashMap<String, String> = HashMap::new();
    for it in items {
        let ws = it.workspace.clone();
        match (it.family.as_str(), it.kind.as_str()) {
            ("tasks", _) => {
                let parent = it.parent.as_ref().map(|p| {
                    item_id
                        .get(p)
                        .unwrap_or_else(|| panic!("{}: parent {p} not created before it", it.key))
                        .clone()
                });
                let steps: Vec<NewStep> = it
                    .steps
                    .iter()
                    .map(|s| NewStep {
                        title: s.title.clone(),
                        ..Default::default()
                    })
                    .collect();
                let r = c
                    .tasks()
                    .create(&TasksCreateRequest {
                        workspace: ws.clone(),
                        title: it.title.clone().unwrap(),
                        kind: Some(it.kind.clone()),
                        parent,
                        description: it.description.clone(),
                        steps: (!steps.is_empty()).then_some(steps),
                        ..Default::default()
                    })
                    .await
                    .unwrap_or_else(|e| panic!("{}: {e}", it.key));
                keys.add_id("tasks", &ws, &r.item.id, &it.key);
                keys.add_title("tasks", &ws, &r.item.title, &it.key);
                item_id.insert(it.key.clone(), r.item.id.clone());
                assert_eq!(r.steps.len(), it.steps.len(), "{}", it.key);
                for (s, created) in it.steps.iter().zip(&r.steps) {
                    assert_eq!(s.title, created.title, "{}", it.key);
                    let id = format!("{}/{}", r.item.id, created.step_id);
                    keys.add_id("tasks", &ws, id, &s.key);
                    keys.add_title("tasks", &ws, &s.title, &s.key);
                }
            }
            ("capsule", _) => {
                let r = c
                    .capsules()
                    .store(&StoreRequest {
                        capsule_text: it.text.clone().unwrap(),
                        workspace: Some(ws.clone()),
                        name: it.name.clone(),
                        title: it.title.clone(),
                        tags: it.tags.clone(),
                        ..Default::default()
                    })
                    .await
                    .unwrap_or_else(|e| panic!("{}: {e}", it.key));
                keys.add_id("capsule", &ws, &r.id, &it.key);
            }
            ("reasoning", "note") => {
                let r = c
                    .reasoning()
                    .notes_commit(&NotesCommitRequest {
                        workspace: ws.clone(),
                        doc: Some("notes".into()),
                        content: it.content.clone().unwrap(),
                        title: it.title.clone(),
                        ..Default::default()
                    })
                    .await
                    .unwrap_or_else(|e| panic!("{}: {e}", it.key));
                keys.add_id("reasoning", &ws, r.entry.seq, &it.key);
                keys.add_title("reasoning", &ws, it.title.as_deref().unwrap(), &it.key);
            }
            ("reasoning", "card") => {
                let card = it.card.clone().unwrap();
                let r = c
                    .reasoning()
                    .think_card(&ThinkCardRequest {
                        workspace: ws.clone(),
                        trace_doc: Some("trace".into()),
                        graph_doc: Some("graph".into()),
                        card: card.clone(),
                        ..Default::default()
                    })
                    .await
                    .unwrap_or_else(|e| panic!("{}: {e}", it.key));
                assert!(r.inserted, "{}", it.key);
                keys.add_id("reasoning", &ws, &r.card_id, &it.key);
                if let Some(seq) = r.last_seq {
                    keys.add_id("reasoning", &ws, seq, &it.key);
                }
                keys.add_title("reasoning", &ws, it.title.as_deref().unwrap(), &it.key);
            }
            ("memory", _) => {
                let r = c
                    .memories()
                    .store(&MemoryStoreRequest {
                        content: it.content.clone().unwrap(),
                        context: it.context.clone().map(Contexts::Many),
                        weight: it.weight,
                        workspace: Some(ws.clone()),
                        ..Default::default()
                    })
                    .await
                    .unwrap_or_else(|e| panic!("{}: {e}", it.key));
                keys.add_id("memory", &ws, &r.memory.id, &it.key);
            }
            (f, k) => panic!("{}: unknown family/kind {f}/{k}", it.key),
        }
    }
    keys
}

/// Ranked fixture keys (`None` for a hit that is no fixture item, e.g. a task's trace event),
/// and the errors the calls answered.
type Ranking = (Vec<Option<String>>, Vec<String>);

/// `capsule_search` over every workspace.
async fn capsule_ranking(d: &TestDaemon, keys: &Keys, query: &str) -> Ranking {
    match d
        .client
        .capsules()
        .search(&CapsuleSearchRequest {
            query: query.into(),
            limit: Some(LIMIT),
            safe_query: Some(true),
            count_total: Some(false),
            ..Default::default()
        })
        .await
    {
        Ok(page) => (
            page.items
                .iter()
                .map(|h| keys.id("capsule", &h.workspace, &h.id))
                .collect(),
            vec![],
        ),
        Err(e) => (vec![], vec![format!("capsule_search: {e}")]),
    }
}

/// Each family's own search, concatenated: capsules, reasoning per workspace, memories per
/// workspace.
async fn per_family_ranking(d: &TestDaemon, keys: &Keys, query: &str) -> Ranking {
    let (mut ranked, mut errors) = capsule_ranking(d, keys, query).await;
    for ws in WORKSPACES {
        match d
            .client
            .reasoning()
            .search(&ReasoningSearchRequest {
                workspace: ws.into(),
                query: query.into(),
                limit: Some(LIMIT),
                ..Default::default()
            })
            .await
        {
            Ok(r) => ranked.extend(r.hits.iter().map(|h| {
                keys.id("reasoning", ws, &h.seq.to_string())
                    .or_else(|| keys.title("reasoning", ws, h.title.as_deref()?))
            })),
            Err(e) => errors.push(format!("branchmind_search {ws}: {e}")),
        }
    }
    for ws in WORKSPACES {
        match d
            .client
            .memories()
            .recall(&MemoryRecallRequest {
                query: Some(query.into()),
                workspace: Some(ws.into()),
                include_global: Some(false),
                limit: Some(LIMIT),
                ..Default::default()
            })
            .await
        {
            Ok(r) => ranked.extend(
                r.items
                    .iter()
                    .map(|m| keys.id("memory", &m.memory.workspace, &m.memory.id)),
            ),
            Err(e) => errors.push(format!("memory_recall {ws}: {e}")),
        }
    }
    (ranked, errors)
}

/// `moss_search`: one ranked list over every family and workspace.
async fn moss_search_ranking(d: &TestDaemon, keys: &Keys, query: &str) -> Ranking {
    match d
        .client
        .moss()
        .search(&MossSearchRequest {
            query: query.into(),
            limit: Some(LIMIT),
            safe_query: Some(true),
            max_chars: Some(200_000),
            ..Default::default()
        })
        .await
    {
        Ok(r) => (
            r.items
                .iter()
                .map(|h| {
                    keys.id(&h.family, &h.workspace, &h.id)
                        .or_else(|| keys.title(&h.family, &h.workspace, &h.title))
                })
                .collect(),
            vec![],
        ),
        Err(e) => (vec![], vec![format!("moss_search: {e}")]),
    }
}

/// The 1-based rank of the query's answer (or of an accepted item) in `ranked`.
fn rank_of(q: &Query, ranked: &[Option<String>]) -> Option<usize> {
    ranked
        .iter()
        .position(|k| {
            k.as_ref()
                .is_some_and(|k| *k == q.answer || q.accept.contains(k))
        })
        .map(|i| i + 1)
}

/// success@5 and MRR over `ranks`.
fn figures(ranks: &[Option<usize>]) -> (f64, f64) {
    let n = ranks.len().max(1) as f64;
    let s5 = ranks.iter().filter(|r| r.is_some_and(|r| r <= 5)).count() as f64 / n;
    let mrr = ranks
        .iter()
        .map(|r| r.map_or(0.0, |r| 1.0 / r as f64))
        .sum::<f64>()
        / n;
    (s5, mrr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_family_figures() {
    let items: Vec<Item> = lines("items.jsonl");
    let queries: Vec<Query> = lines("queries.jsonl");
    assert!(
        items.len() >= 200 && queries.len() >= 40,
        "{} items, {} queries",
        items.len(),
        queries.len()
    );
    for f in FAMILIES {
        let n = queries.iter().filter(|q| q.family == f).count();
        assert!(n >= 8, "{n} queries answered by the {f} family");
    }

    let d = TestDaemon::start().await;
    let keys = load(&d, &items).await;
    let loaded: std::collections::HashSet<&String> = keys.by_id.values().collect();
    for q in &queries {
        assert!(
            loaded.contains(&q.answer),
            "{}: {} not loaded",
            q.id,
            q.answer
        );
    }

    let names = ["capsules only", "per family, concatenated", "moss_search"];
    // ranks[strategy][query]
    let mut ranks: Vec<Vec<Option<usize>>> = vec![Vec::new(); names.len()];
    let mut errors: Vec<String> = Vec::new();
    let mut lines_out: Vec<String> = Vec::new();
    for q in &queries {
        let rankings = [
            capsule_ranking(&d, &keys, &q.query).await,
            per_family_ranking(&d, &keys, &q.query).await,
            moss_search_ranking(&d, &keys, &q.query).await,
        ];
        let mut row = format!("{} {:8} {:9} {:50}", q.id, q.form, q.family, q.query);
        for (i, (ranked, errs)) in rankings.iter().enumerate() {
            let r = rank_of(q, ranked);
            ranks[i].push(r);
            row.push_str(&format!(
                " {:>4}",
                r.map_or("-".to_string(), |r| r.to_string())
            ));
            errors.extend(errs.iter().map(|e| format!("{} {:?}: {e}", q.id, q.query)));
        }
        lines_out.push(row);
    }

    println!("rank of the answer per query (- = not in the list):");
    println!(
        "{:<4} {:8} {:9} {:50} {:>4} {:>4} {:>4}",
        "", "form", "answer", "query", "(a)", "(b)", "(c)"
    );
    for l in &lines_out {
        println!("{l}");
    }
    let slice = |pick: &dyn Fn(&Query) -> bool, s: usize| -> Vec<Option<usize>> {
        queries
            .iter()
            .zip(&ranks[s])
            .filter(|(q, _)| pick(q))
            .map(|(_, r)| *r)
            .collect()
    };
    println!();
    println!(
        "{:<28} {:>9} {:>7}   by answer family: success@5 (capsule, reasoning, tasks, memory)",
        "strategy", "success@5", "MRR"
    );
    for (s, name) in names.iter().enumerate() {
        let (s5, mrr) = figures(&ranks[s]);
        let by_family: Vec<String> = FAMILIES
            .iter()
            .map(|f| format!("{:.2}", figures(&slice(&|q| q.family == *f, s)).0))
            .collect();
        let by_form: Vec<String> = FORMS
            .iter()
            .map(|f| format!("{f} {:.2}", figures(&slice(&|q| q.form == *f, s)).0))
            .collect();
        println!(
            "({}) {name:<24} {s5:>9.3} {mrr:>7.3}   {}; by form: {}",
            (b'a' + s as u8) as char,
            by_family.join(", "),
            by_form.join(", ")
        );
    }
    println!(
        "queries: {}; items: {}; errors answered by the searches: {}",
        queries.len(),
        items.len(),
        errors.len()
    );
    for e in &errors {
        println!("  {e}");
    }
    // The queries are plain words: every search answers them.
    assert!(errors.is_empty(), "{errors:#?}");
    // One search over every family finds at least what the families' own searches find.
    let ((s5_b, mrr_b), (s5_c, mrr_c)) = (figures(&ranks[1]), figures(&ranks[2]));
    assert!(
        s5_c >= s5_b && mrr_c >= mrr_b,
        "moss_search ({s5_c:.3}, {mrr_c:.3}) below the families' own searches ({s5_b:.3}, \
         {mrr_b:.3})"
    );
    d.stop().await;
}
