//! Semantic search: sentence embeddings of every searchable text, made in the background by a
//! local model, and searched by meaning next to the full-text index.
//!
//! - `model`: the sentence-embedding model: its tokenizer, and its BERT encoder (`moss-bert`).
//! - `passages`: how long texts are cut into passages, each embedded on its own.
//! - `vectors`: one source's vectors in memory and the exact scan over them.
//! - `indexer`: the thread that embeds changes as they are committed, into the vector file
//!   (`moss-vectors.db` beside a SQLite database; on PostgreSQL, one per daemon in its home)
//!   and memory.
//!
//! Each family declares what it embeds ([`EmbedSource`], next to its full-text source): a
//! table, its queue (the full-text source's own: both indexes follow one queue), its workspace
//! column and the text. A search asks [`Semantic`] for the items nearest its query, and fuses
//! them with its keyword hits (see `moss_client::search` for the rule).
//!
//! Without `embeddings.model_dir`, nothing here runs and every search ranks by words.

pub mod fusion;
pub mod indexer;
mod model;
pub mod passages;
pub mod vectors;

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::thread::JoinHandle;
use std::time::Duration;

use moss_client::daemon::{SemanticSourceStatus, SemanticStatus};
use moss_client::search::SearchMode;
use tokio::sync::watch;

use crate::error::{Error, Result};
use crate::store::fts::{FollowerWake, IndexView, QueueFollower};
use crate::store::{ReadPool, Source};
pub use model::Model;
pub use vectors::Near;

/// A table whose rows are embedded: the full-text source it shares a queue with, and which
/// columns make its workspace and text. Names are plain SQL identifiers.
#[derive(Debug)]
pub struct EmbedSource {
    pub fts: &'static Source,
    /// The column numbering the table's rows, as its queue names them (`doc`): on SQLite the
    /// rowid or its alias, on PostgreSQL the column carrying it.
    pub key: &'static str,
    /// The column holding the row's workspace, as searches filter it.
    pub workspace: &'static str,
    /// A column put before every passage of the text (a title), if any.
    pub title: Option<&'static str>,
    /// The column holding the text.
    pub body: &'static str,
}

/// The lowest cosine similarity that counts as a match by meaning. Below it, a text is
/// unrelated to the query: a search by meaning then finds nothing rather than noise.
pub const SIMILARITY_FLOOR: f32 = 0.2;

/// Longest a search waits for the embedder to take in the changes committed before it, and for
/// the model to load at start; past that it answers from the vectors as they are.
pub const SEARCH_WAIT: Duration = Duration::from_secs(5);

/// Query vectors kept, by query text (agents repeat their searches).
const QUERY_CACHE: usize = 256;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum State {
    Off,
    Loading,
    Ready,
    Failed(String),
}

/// One source's progress and vectors, shared by the embedder and the searches.
#[derive(Debug)]
pub(crate) struct SourceProgress {
    source: &'static EmbedSource,
    follower: QueueFollower,
    /// The queue entry up to which the vectors are current.
    pub(crate) applied: AtomicI64,
    pub(crate) rebuilding: AtomicBool,
    /// Rows a rebuild has still to embed.
    pub(crate) rebuild_left: AtomicI64,
    pub(crate) vectors: RwLock<vectors::Vectors>,
    /// Signalled after each step.
    pub(crate) changed: watch::Sender<()>,
}

/// What the embedder and the searches share.
#[derive(Debug)]
pub(crate) struct Shared {
    state: Mutex<State>,
    model: OnceLock<Arc<Model>>,
    pub(crate) sources: Vec<SourceProgress>,
    /// Searches waiting for the embedder: it does not rest while there is one.
    pub(crate) waiting: AtomicUsize,
    /// Passages embedded since start.
    pub(crate) embedded: AtomicU64,
    state_changed: watch::Sender<()>,
}

impl Shared {
    pub(crate) fn set_state(&self, s: State) {
        *self.state.lock().expect("state lock") = s;
        self.state_changed.send_replace(());
    }

    pub(crate) fn set_model(&self, m: Arc<Model>) {
        let _ = self.model.set(m);
    }

    fn state(&self) -> State {
        self.state.lock().expect("state lock").clone()
    }
}

/// Semantic search as the daemon runs it. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Semantic {
    shared: Arc<Shared>,
    model_dir: Option<PathBuf>,
    cache: Arc<Mutex<QueryCache>>,
    /// Where a search reads the queues' ends, on an engine whose other daemons write too
    /// (PostgreSQL); `None` where this daemon's writer is the only one (SQLite).
    queue_reads: Option<ReadPool>,
}

#[derive(Debug, Default)]
struct QueryCache {
    map: HashMap<String, Arc<Vec<f32>>>,
    order: VecDeque<String>,
}

/// The embedder's thread, joined at shutdown.
#[derive(Debug)]
pub struct SemanticThread(Option<JoinHandle<()>>);

impl SemanticThread {
    pub fn join(mut self) {
        if let Some(h) = self.0.take() {
            let _ = h.join();
        }
    }
}

impl Semantic {
    /// Starts the embedder for `sources` when `model_dir` is set (the full-text indexer must
    /// have been started holding its queues for it); otherwise semantic search is off.
    pub fn start(
        index: &IndexView,
        db: &Path,
        model_dir: Option<&Path>,
        sources: &'static [&'static EmbedSource],
    ) -> Result<(Semantic, SemanticThread)> {
        let followers = sources.iter().map(|s| index.follower(s.fts)).collect();
        Semantic::begin(
            followers,
            index.follower_wake(),
            indexer::Origin::Sqlite(db.to_path_buf()),
            None,
            model_dir,
            sources,
        )
    }

    /// Starts the embedder of a PostgreSQL store when `model_dir` is set: it reads the database
    /// through `config`, keeps its vector file in `dir` (the daemon's home), and is woken
    /// through the returned [`FollowerWake`], which the writer's commit signals must raise and
    /// its hooks close (see `crate::store::engine::queues`). Searches read the queues' ends
    /// through `readers`, so that they wait for changes committed through any daemon.
    pub fn start_postgres(
        config: &postgres::Config,
        dir: &Path,
        readers: ReadPool,
        model_dir: Option<&Path>,
        sources: &'static [&'static EmbedSource],
    ) -> Result<(Semantic, SemanticThread, Arc<FollowerWake>)> {
        let followers = sources.iter().map(|_| QueueFollower::detached()).collect();
        let wake = Arc::new(FollowerWake::default());
        let (semantic, thread) = Semantic::begin(
            followers,
            wake.clone(),
            indexer::Origin::Postgres {
                config: Box::new(config.clone()),
                dir: dir.to_path_buf(),
            },
            Some(readers),
            model_dir,
            sources,
        )?;
        Ok((semantic, thread, wake))
    }

    fn begin(
        followers: Vec<QueueFollower>,
        wake: Arc<FollowerWake>,
        origin: indexer::Origin,
        queue_reads: Option<ReadPool>,
        model_dir: Option<&Path>,
        sources: &'static [&'static EmbedSource],
    ) -> Result<(Semantic, SemanticThread)> {
        let progress: Vec<SourceProgress> = sources
            .iter()
            .zip(&followers)
            .map(|(s, follower)| SourceProgress {
                source: s,
                follower: follower.clone(),
                applied: AtomicI64::new(0),
                rebuilding: AtomicBool::new(false),
                rebuild_left: AtomicI64::new(0),
                vectors: RwLock::new(vectors::Vectors::new(0)),
                changed: watch::channel(()).0,
            })
            .collect();
        let shared = Arc::new(Shared {
            state: Mutex::new(if model_dir.is_some() {
                State::Loading
            } else {
                State::Off
            }),
            model: OnceLock::new(),
            sources: progress,
            waiting: AtomicUsize::new(0),
            embedded: AtomicU64::new(0),
            state_changed: watch::channel(()).0,
        });
        let semantic = Semantic {
            shared: shared.clone(),
            model_dir: model_dir.map(Path::to_path_buf),
            cache: Default::default(),
            queue_reads,
        };
        let Some(dir) = model_dir else {
            return Ok((semantic, SemanticThread(None)));
        };
        let served: Vec<indexer::Served> = sources
            .iter()
            .zip(followers)
            .enumerate()
            .map(|(slot, (s, follower))| indexer::Served {
                source: s,
                follower,
                slot,
            })
            .collect();
        let dir = dir.to_path_buf();
        let handle = std::thread::Builder::new()
            .name("moss-embedder".into())
            .spawn(move || indexer::run(origin, dir, served, wake, shared))
            .map_err(|e| Error::internal("starting the embedder thread", e))?;
        Ok((semantic, SemanticThread(Some(handle))))
    }

    /// The mode a search runs in: the one asked for, or hybrid when a model is configured (and
    /// has not failed), keyword otherwise. Asking for semantic or hybrid without a model is an
    /// error that says how to get one.
    pub fn mode(&self, asked: Option<SearchMode>) -> Result<SearchMode> {
        let state = self.shared.state();
        match (asked, &state) {
            (Some(SearchMode::Keyword), _) => Ok(SearchMode::Keyword),
            (None, State::Loading | State::Ready) => Ok(SearchMode::Hybrid),
            (None, _) => Ok(SearchMode::Keyword),
            (Some(m), State::Loading | State::Ready) => Ok(m),
            (Some(m), State::Off) => Err(Error::invalid_field(
                "mode",
                format!(
                    "mode {m} needs semantic search, which is off: this daemon has no embedding \
                     model. Set embeddings.model_dir in config.json to a model directory (see \
                     the README, \"Semantic search\"), or use mode keyword"
                ),
            )),
            (Some(m), State::Failed(why)) => Err(Error::invalid_field(
                "mode",
                format!("mode {m} needs semantic search, which failed to start: {why}"),
            )),
        }
    }

    /// The query's unit vector; `None` when the model is not ready within [`SEARCH_WAIT`].
    pub async fn query_vector(&self, text: &str) -> Result<Option<Arc<Vec<f32>>>> {
        let key = text.trim().to_string();
        if let Some(v) = self.cache.lock().expect("cache lock").map.get(&key) {
            return Ok(Some(v.clone()));
        }
        let Some(model) = self.ready_model().await else {
            return Ok(None);
        };
        let text = key.clone();
        let v = tokio::task::spawn_blocking(move || model.embed(&[text.as_str()]))
            .await
            .map_err(|e| Error::internal("embedding the query", e))?
            .map_err(|e| Error::internal("embedding the query", e))?;
        let Some(v) = v.into_iter().next() else {
            return Ok(None);
        };
        let v = Arc::new(v);
        let mut cache = self.cache.lock().expect("cache lock");
        if cache.map.insert(key.clone(), v.clone()).is_none() {
            cache.order.push_back(key);
            while cache.order.len() > QUERY_CACHE {
                if let Some(old) = cache.order.pop_front() {
                    cache.map.remove(&old);
                }
            }
        }
        Ok(Some(v))
    }

    async fn ready_model(&self) -> Option<Arc<Model>> {
        let mut changed = self.shared.state_changed.subscribe();
        let wait = async {
            loop {
                match self.shared.state() {
                    State::Ready => return self.shared.model.get().cloned(),
                    State::Loading => {
                        if changed.changed().await.is_err() {
                            return None;
                        }
                    }
                    _ => return None,
                }
            }
        };
        tokio::time::timeout(SEARCH_WAIT, wait).await.ok().flatten()
    }

    fn progress(&self, source: &EmbedSource) -> &SourceProgress {
        self.shared
            .sources
            .iter()
            .find(|p| std::ptr::eq(p.source, source))
            .unwrap_or_else(|| panic!("{} is not an embedded source", source.fts.name))
    }

    /// The `k` items of `source` nearest `query` above [`SIMILARITY_FLOOR`], among
    /// `workspaces` (all when `None`), best first. Waits first (at most [`SEARCH_WAIT`]) until
    /// the vectors hold the changes committed before the call, unless the source is being
    /// rebuilt (then it answers from the vectors made so far).
    pub async fn nearest(
        &self,
        source: &'static EmbedSource,
        query: Arc<Vec<f32>>,
        workspaces: Option<Vec<String>>,
        k: usize,
    ) -> Result<Vec<Near>> {
        let p = self.progress(source);
        if let Some(readers) = &self.queue_reads {
            // Changes committed through any daemon before now.
            let queue = source.fts.queue;
            match readers
                .run_db(move |db| Ok(crate::store::engine::queues::newest(db, queue)?))
                .await
            {
                Ok(newest) => p.follower.observe(newest),
                Err(e) => tracing::warn!("cannot read the {queue} queue's end: {e}"),
            }
        }
        let target = p.follower.queued();
        let caught_up =
            || p.rebuilding.load(Ordering::Acquire) || p.applied.load(Ordering::Acquire) >= target;
        if !caught_up() {
            self.shared.waiting.fetch_add(1, Ordering::AcqRel);
            let mut rx = p.changed.subscribe();
            let _ = tokio::time::timeout(SEARCH_WAIT, async {
                while !caught_up() {
                    if rx.changed().await.is_err() {
                        break;
                    }
                }
            })
            .await;
            self.shared.waiting.fetch_sub(1, Ordering::AcqRel);
        }
        let shared = self.shared.clone();
        let slot = self
            .shared
            .sources
            .iter()
            .position(|q| std::ptr::eq(q.source, source))
            .expect("an embedded source");
        tokio::task::spawn_blocking(move || {
            shared.sources[slot]
                .vectors
                .read()
                .expect("vectors lock")
                .nearest(&query, workspaces.as_deref(), k, SIMILARITY_FLOOR)
        })
        .await
        .map_err(|e| Error::internal("searching the vectors", e))
    }

    /// For the daemon's status.
    pub fn status(&self) -> SemanticStatus {
        let state = self.shared.state();
        let model = self.shared.model.get();
        let mut memory = 0u64;
        let sources: Vec<SemanticSourceStatus> = if state == State::Off {
            Vec::new()
        } else {
            self.shared
                .sources
                .iter()
                .map(|p| {
                    let v = p.vectors.read().expect("vectors lock");
                    memory += v.bytes() as u64;
                    let rebuilding = p.rebuilding.load(Ordering::Acquire);
                    let lag = (p.follower.queued() - p.applied.load(Ordering::Acquire)).max(0);
                    let left = if rebuilding {
                        p.rebuild_left.load(Ordering::Acquire).max(1)
                    } else {
                        0
                    };
                    SemanticSourceStatus {
                        source: p.source.fts.name.to_string(),
                        behind: lag + left,
                        rebuilding,
                        items: v.items() as u64,
                        passages: v.len() as u64,
                    }
                })
                .collect()
        };
        let behind = match state {
            // Until the vectors are loaded, nothing is known to be caught up.
            State::Loading => 1 + sources.iter().map(|s| s.behind).sum::<i64>(),
            _ => sources.iter().map(|s| s.behind).sum(),
        };
        SemanticStatus {
            state: match &state {
                State::Off => "off",
                State::Loading => "loading",
                State::Ready => "ready",
                State::Failed(_) => "failed",
            }
            .into(),
            error: match state {
                State::Failed(e) => Some(e),
                _ => None,
            },
            model_dir: self.model_dir.as_ref().map(|d| d.display().to_string()),
            model: model.map(|m| m.identity.clone()),
            dimensions: model.map(|m| m.dims as u64),
            behind,
            embedded: self.shared.embedded.load(Ordering::Relaxed),
            memory_bytes: memory,
            sources,
        }
    }
}

/// The text of passage `chunk` of `body` (as embedded, without the title): the snippet of a
/// hit found by meaning.
pub fn passage(body: &str, chunk: i64) -> String {
    passages::passages(body)
        .into_iter()
        .nth(chunk.max(0) as usize)
        .map(|r| body[r].trim().to_string())
        .unwrap_or_default()
}

/// Candidates a search asks the scan for before filtering: the filters then pick the best
/// [`fusion::DEPTH`] from them (see `search_text::filter_near`).
pub const CANDIDATES: usize = 5_000;

/// The explanation of a hit ranked by words alone.
pub fn keyword_only(rank: usize, score: f64) -> moss_client::search::HitExplain {
    moss_client::search::HitExplain {
        keyword: Some(moss_client::search::KeywordPart {
            rank: rank as i64,
            score: (!score.is_nan()).then_some(score),
        }),
        semantic: None,
        fused: 1.0 / (fusion::K + rank as f64),
    }
}

/// Asked for `mode: semantic` while the model is still loading.
pub fn not_ready() -> Error {
    Error::new(
        moss_client::ErrorCode::Unavailable,
        "semantic search is still loading its model; try again in a moment, or use mode \
         keyword",
    )
}
