//! The flags of `moss bench`, shared by the dispatch in `mod.rs` and the runs it calls.

use clap::Args;

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Measure the daemon at --addr and keep what the benchmark writes in its store (default:
    /// a daemon of the benchmark's own, deleted afterwards).
    #[arg(long)]
    pub(super) against_running: bool,
    /// The store of the benchmark's own daemon: a `postgres://…` URL (or `sqlite:/path`) to
    /// measure that engine, instead of a SQLite file in its scratch home. The benchmark writes
    /// there and leaves what it wrote: name an empty database or schema
    /// (`postgres://…/db?options=-c%20search_path%3Dbench`, the schema made beforehand).
    #[arg(long, conflicts_with = "against_running")]
    pub(super) database: Option<String>,
    /// Concurrent clients.
    #[arg(long, default_value_t = 32)]
    pub(super) clients: usize,
    /// Seconds per phase.
    #[arg(long, default_value_t = 10.0)]
    pub(super) duration: f64,
    /// Capsule size in bytes.
    #[arg(long, default_value_t = 2048)]
    pub(super) size: usize,
    /// Workspace to write into (default: a fresh `bench-<ulid>`).
    #[arg(long)]
    pub(super) workspace: Option<String>,
    /// Print one JSON line instead of a table.
    #[arg(long)]
    pub(super) json: bool,
    /// Measure search instead: latency over a corpus of --capsules capsules (in workspace
    /// `bench-search-<N>` unless --workspace is given; with --against-running, built once and
    /// reused by the next run).
    #[arg(long)]
    pub(super) search: bool,
    /// Corpus size for --search.
    #[arg(
        long,
        default_value_t = 100_000,
        requires = "search",
        conflicts_with = "cross_family"
    )]
    pub(super) capsules: u64,
    /// With --search, search every family instead of capsules alone: --items items spread over
    /// capsules, reasoning notes, plans/tasks/steps and memories (in a fresh workspace
    /// `bench-cross-<ulid>` unless --workspace is given), then moss_search of a rare and a
    /// common word, and moss_context of a task with 200 steps, 50 notes, 20 handoffs and 100
    /// memories, each with one client.
    #[arg(long, requires = "search")]
    pub(super) cross_family: bool,
    /// Items for --cross-family, the context task's included.
    #[arg(long, default_value_t = 100_000, requires = "cross_family")]
    pub(super) items: u64,
    /// Measure the associative memory instead: memory_store against capsule_store, and recall
    /// over a corpus of --memories memories.
    #[arg(long, conflicts_with_all = ["search", "reasoning"])]
    pub(super) memory: bool,
    /// Corpus size for --memory and --semantic.
    #[arg(long, default_value_t = 100_000)]
    pub(super) memories: u64,
    /// Measure semantic search instead (the daemon needs embeddings.model_dir): --memories
    /// memories and --semantic-capsules capsules, the embedder's throughput as it catches up,
    /// the index's size, then --queries distinct questions per call and mode (memory_recall,
    /// moss_search, capsule_search; hybrid, semantic, keyword), one client.
    #[arg(long, conflicts_with_all = ["search", "reasoning", "memory", "watch", "append"])]
    pub(super) semantic: bool,
    /// Capsules of --size bytes for --semantic (each is several passages to embed).
    #[arg(long, default_value_t = 1_000, requires = "semantic")]
    pub(super) semantic_capsules: u64,
    /// Distinct questions per call and mode for --semantic.
    #[arg(long, default_value_t = 200, requires = "semantic")]
    pub(super) queries: usize,
    /// Seconds --semantic waits for the embedder to catch up after each load.
    #[arg(long, default_value_t = 7_200.0, requires = "semantic")]
    pub(super) semantic_wait: f64,
    /// Measure the reasoning and tasks families instead: notes_commit against capsule_store,
    /// show on a derived branch of a large base, graph_query, graph_merge, tasks_radar.
    #[arg(long, conflicts_with = "search")]
    pub(super) reasoning: bool,
    /// Entries of the base branch for --reasoning.
    #[arg(long, default_value_t = 100_000, requires = "reasoning")]
    pub(super) entries: u64,
    /// Graph nodes for --reasoning.
    #[arg(long, default_value_t = 10_000, requires = "reasoning")]
    pub(super) nodes: u64,
    /// Versions of each node for --reasoning.
    #[arg(long, default_value_t = 5, requires = "reasoning")]
    pub(super) versions: u64,
    /// Keys changed on the merged branch for --reasoning (at most 1000: one merge call).
    #[arg(long, default_value_t = 1000, requires = "reasoning")]
    pub(super) merge_keys: u64,
    /// Steps of the task whose radar --reasoning times.
    #[arg(long, default_value_t = 200, requires = "reasoning")]
    pub(super) steps: u64,
    /// Store with mode replace over this many names per client, so that most stores overwrite
    /// a capsule (and keep a version of it) instead of creating one.
    #[arg(long)]
    pub(super) replace: Option<u64>,
    /// Also time capsule_append: a phase after the store phase in which each client appends a
    /// line to the "Open questions" section of the capsules it stored, in turn.
    #[arg(long, conflicts_with_all = ["search", "reasoning", "memory", "watch"])]
    pub(super) append: bool,
    /// Measure capsule_watch instead: --clients waiters follow one run while --clients
    /// writers store into it; the wake-up latency from commit to each waiter's answer.
    #[arg(long, conflicts_with_all = ["search", "reasoning", "memory"])]
    pub(super) watch: bool,
    /// Writes per second, all writers together, for --watch.
    #[arg(long, default_value_t = 200.0, requires = "watch")]
    pub(super) watch_rate: f64,
}
