//! The labelled search fixture of `tests/fixtures/cross_family/` (see its README): its items
//! and queries, loading every item into a daemon through the client, and finding which fixture
//! item a search hit is. Shared by the evaluations that rank the fixture's queries
//! (`cross_family_figures`, `relevance_figures`).

use std::collections::HashMap;

use moss_client::capsule::StoreRequest;
use moss_client::memory::{Contexts, MemoryStoreRequest};
use moss_client::moss::SearchRequest as MossSearchRequest;
use moss_client::reasoning::{InitRequest, NotesCommitRequest, ThinkCardRequest};
use moss_client::search::SearchMode;
use moss_client::tasks::{NewStep, TasksCreateRequest};
use moss_tests::TestDaemon;
use serde::Deserialize;
use serde_json::Value;

pub const WORKSPACES: [&str; 3] = ["atlas", "bramble", "ledger"];
pub const FAMILIES: [&str; 4] = ["capsule", "reasoning", "tasks", "memory"];
/// Hits asked of every search call.
pub const LIMIT: i64 = 20;

#[derive(Deserialize)]
pub struct Step {
    pub key: String,
    pub title: String,
}

/// One line of `items.jsonl`; which fields are set depends on `family` and `kind`.
#[derive(Deserialize)]
pub struct Item {
    pub key: String,
    pub family: String,
    pub kind: String,
    pub workspace: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub tags: Option<Vec<String>>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub content: Option<String>,
    #[serde(default)]
    pub card: Option<Value>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub parent: Option<String>,
    #[serde(default)]
    pub steps: Vec<Step>,
    #[serde(default)]
    pub context: Option<Vec<String>>,
    #[serde(default)]
    pub weight: Option<f64>,
}

#[derive(Deserialize)]
pub struct Query {
    pub id: String,
    pub query: String,
    pub form: String,
    pub family: String,
    pub answer: String,
    pub accept: Vec<String>,
    /// none, some or many: how many of the query's content words its answer shares.
    pub overlap: String,
    /// In the relevance set (a third of each overlap).
    pub relevance: bool,
}

pub fn lines<T: for<'de> Deserialize<'de>>(name: &str) -> Vec<T> {
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
pub struct Keys {
    pub by_id: HashMap<(String, String, String), String>,
    pub by_title: HashMap<(String, String, String), String>,
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

    pub fn id(&self, family: &str, ws: &str, id: &str) -> Option<String> {
        self.by_id
            .get(&(family.to_string(), ws.to_string(), id.to_string()))
            .cloned()
    }

    pub fn title(&self, family: &str, ws: &str, title: &str) -> Option<String> {
        self.by_title
            .get(&(family.to_string(), ws.to_string(), title.to_string()))
            .cloned()
    }
}

/// Writes every item through the client; returns how to recognise each in a hit.
pub async fn load(d: &TestDaemon, items: &[Item]) -> Keys {
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

/// The 1-based rank of the query's answer (or of an accepted item) in `ranked`.
pub fn rank_of(q: &Query, ranked: &[Option<String>]) -> Option<usize> {
    ranked
        .iter()
        .position(|k| {
            k.as_ref()
                .is_some_and(|k| *k == q.answer || q.accept.contains(k))
        })
        .map(|i| i + 1)
}

/// `moss_search` over every family and workspace, in `mode` (the daemon's default when `None`):
/// the ranked fixture keys (`None` for a hit that is no fixture item, e.g. a task's trace event)
/// and the mode the daemon says it ranked by, or the error it answered.
pub async fn moss_search(
    d: &TestDaemon,
    keys: &Keys,
    query: &str,
    mode: Option<SearchMode>,
) -> Result<(Vec<Option<String>>, SearchMode), String> {
    let r = d
        .client
        .moss()
        .search(&MossSearchRequest {
            query: query.into(),
            limit: Some(LIMIT),
            safe_query: Some(true),
            max_chars: Some(200_000),
            mode,
            ..Default::default()
        })
        .await
        .map_err(|e| format!("moss_search: {e}"))?;
    let ranked = r
        .items
        .iter()
        .map(|h| {
            keys.id(&h.family, &h.workspace, &h.id)
                .or_else(|| keys.title(&h.family, &h.workspace, &h.title))
        })
        .collect();
    Ok((ranked, r.mode))
}
