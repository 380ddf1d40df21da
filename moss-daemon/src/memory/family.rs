//! The memory family's registration: its MCP tools and its REST routes, in one place.

use moss_client::memory::*;

use crate::family::{Family, Tool};
use crate::tool;

/// The associative memory: knowledge attached to contexts, recalled by one ranked query.
pub const MEMORY: Family = Family {
    name: "memory",
    summary: "Associative memory: knowledge attached to contexts, recalled by one ranked query, assembled by templates",
    instructions: "Memory (memory_*): short knowledge attached to contexts (a file path, a \
        directory, a topic, a task id). memory_store it with a context, a weight and an optional \
        slot (e.g. preferences); memory_recall with a query (\"about auth.py\"), a slot or a \
        context, ranked by relevance, weight, recency and specificity (explain:true shows why; \
        no match is an empty list with a reason). persist:false keeps a memory for this \
        connection only (its session; a REST caller names one). workspace defaults to \
        \"default\"; \"global\" holds user-wide knowledge every recall sees. memory_forget \
        removes exactly what it reports (more than 10 by query needs confirm:true); \
        memory_render fills a template from slots and recalls.",
    ops: moss_client::memory::OPS,
    tools: TOOLS,
    routes: super::rest::routes,
};

const TOOLS: &[Tool] = &[
    tool!(MemoryStore, |app, req, _| app.memories.store(req)),
    tool!(MemoryRecall, |app, req, _| {
        crate::moss::interface::memory_recall(app, req)
    }),
    tool!(MemoryForget, |app, req, _| app.memories.forget(req)),
    tool!(MemoryRender, |app, req, _| app.memories.render(req)),
    tool!(MemorySources, |app, req, _| app.memories.sources(req)),
    tool!(MemorySourcesRun, |app, req, _| app
        .memories
        .sources_run(req)),
    tool!(MemoryEvent, |app, req, _| app.memories.event(req)),
];
