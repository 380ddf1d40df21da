//! The cross-family toolset's registration: `moss_*` tools that read every family at once.

use moss_client::moss::*;

use crate::family::{Family, Tool};
use crate::tool;

/// The reads across every family: what an agent needs first.
pub const MOSS: Family = Family {
    name: "moss",
    summary: "Across every family: the workspaces, one ranked search, and the resume call",
    instructions: "Moss (moss_*): start with moss_context {workspace, task?}: where the work \
        stands, each item with the call that opens it. moss_search searches every family at \
        once (families narrows it: capsule, reasoning, tasks, memory); pass pagination.next_cursor back as cursor for the next page. moss_workspaces \
        lists the workspaces with what each family holds. max_chars caps an answer (default: \
        the output budget).",
    ops: moss_client::moss::OPS,
    tools: TOOLS,
    routes: crate::family::no_routes,
};

const TOOLS: &[Tool] = &[
    tool!(MossContext, |app, req, _| super::context::context(app, req)),
    tool!(MossSearch, rest: query, |app, req, _| super::search::search(app, req)),
    tool!(MossWorkspaces, rest: query, |app, req, _| super::workspaces(app, req)),
];
