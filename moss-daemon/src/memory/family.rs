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
        connection only. memory_forget removes exactly what it reports (more than 10 by query \
        needs confirm:true); memory_render fills a template from slots and recalls.",
    tools: TOOLS,
    routes: crate::api::memories::routes,
};

const TOOLS: &[Tool] = &[
    tool!(
        "memory_store",
        MemoryStoreRequest,
        "Store a piece of knowledge, e.g. {\"content\": \"User prefers tabs\", \"context\": \
            \"formatting\", \"slot\": \"preferences\"}. context is a string or a list (file \
            paths, directories, topics, task ids); weight (default 1, at most 100) says how \
            much it matters. The same content with the same contexts and slot updates the \
            memory (created:false) instead of adding another. workspace \"global\" holds \
            user-wide knowledge every recall sees.",
        |app, req, _| app.memories.store(req)
    ),
    tool!(
        "memory_recall",
        MemoryRecallRequest,
        "Recall memories by query (\"about auth.py\": content, contexts and slot; a path also \
            finds memories on its parent directories), slot and/or context, best first: \
            relevance × weight × recency × specificity (explain:true returns each part). No \
            match is an empty list with a reason, never filler.",
        |app, req, _| app.memories.recall(req)
    ),
    tool!(
        "memory_forget",
        MemoryForgetRequest,
        "Remove memories by id or ids, or by query (only strong matches), slot or exact \
            context; returns exactly what it removed. dry_run:true shows what would go; more \
            than 10 by query, slot or context needs confirm:true.",
        |app, req, _| app.memories.forget(req)
    ),
    tool!(
        "memory_render",
        MemoryRenderRequest,
        "Render a template: a list of strings and {\"slot\": …}, {\"recall\": …}, {\"var\": …} \
            parts (recalls render as \"- …\" lines; empty parts are skipped and named in \
            warnings), or the name of one in the config's memory.templates (\"default\" is \
            memory.template).",
        |app, req, _| app.memories.render(req)
    ),
    tool!(
        "memory_sources",
        MemorySourcesRequest,
        "The Lua sources that populate memory: $MOSS_HOME/sources/*.lua, and with root (the \
            project's absolute path) its .moss/sources/*.lua and the builtin session.lua, \
            git.lua and toml.lua. Each with its path, last run, items stored, duration, the \
            events it handles and its last error (file and line).",
        |app, req, _| app.memories.sources(req)
    ),
    tool!(
        "memory_sources_run",
        MemorySourcesRunRequest,
        "Run the Lua sources again (all, or name), each in a sandbox with a memory cap and a \
            time limit. A source's memories are replaced atomically when it succeeds; a failing \
            one writes nothing and reports its error.",
        |app, req, _| app.memories.sources_run(req)
    ),
    tool!(
        "memory_event",
        MemoryEventRequest,
        "Send an event to the handlers sources registered with moss.on(event, fn), e.g. \
            {\"event\": \"file_opened\", \"data\": {\"file\": \"src/auth.py\"}} for session.lua. \
            With a session, what the handlers store lasts as long as the session.",
        |app, req, _| app.memories.event(req)
    ),
];
