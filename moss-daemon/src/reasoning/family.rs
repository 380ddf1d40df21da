//! The reasoning family's registration: its MCP tools and its REST routes, in one place.

use moss_client::reasoning::*;

use crate::family::{Family, Tool};
use crate::tool;

/// The reasoning memory: notes and trace, branches, a versioned graph, think cards.
pub const REASONING: Family = Family {
    name: "reasoning",
    summary: "Reasoning memory: append-only notes and trace, no-copy branches, a versioned graph with 3-way merges, think cards",
    instructions: "Reasoning (branchmind_*): durable working memory per workspace. Documents are \
        append-only logs addressed by target (PLAN-001/TASK-001: its notes, trace and graph; \
        add branch for them on a what-if branch) or by branch+doc; a call naming neither is \
        refused with the call that works. Write decisions with branchmind_notes_commit, structure with \
        branchmind_think_card (hypothesis, question, test, evidence, decision…; \
        branchmind_think_next says which card is missing), explore what-ifs on a \
        branchmind_branch_create branch and bring them back with branchmind_merge / \
        branchmind_graph_merge. Resume with branchmind_export or branchmind_think_context; \
        find old decisions with branchmind_search. Reads page from the newest (cursor, \
        next_cursor) and never exceed max_chars: truncated:true says what was cut. workspace is \
        required. target (PLAN-###/TASK-###) addresses the item's documents, its reasoning_ref \
        (branch, notes doc, graph_doc <ID>-graph, trace_doc <ID>-trace); without it, name the \
        branch (default: the checked-out one) and the doc (graph_doc and trace_doc for cards). \
        With target, branch is a branch made from the target's branch.",
    ops: moss_client::reasoning::OPS,
    tools: TOOLS,
    routes: crate::family::no_routes,
};

const TOOLS: &[Tool] = &[
    tool!(BranchmindInit, |app, req, _| app.reasoning.init(req)),
    tool!(BranchmindStatus, |app, req, _| app.reasoning.status(req)),
    tool!(BranchmindNotesCommit, |app, req, _| app
        .reasoning
        .notes_commit(req)),
    tool!(BranchmindCommit, |app, req, _| app.reasoning.commit(req)),
    tool!(BranchmindShow, |app, req, _| app.reasoning.show(req)),
    tool!(BranchmindLog, |app, req, _| app.reasoning.log(req)),
    tool!(BranchmindExport, |app, req, _| app.reasoning.export(req)),
    tool!(BranchmindDiff, |app, req, _| app.reasoning.diff(req)),
    tool!(BranchmindMerge, |app, req, _| app.reasoning.merge(req)),
    tool!(BranchmindBranchCreate, |app, req, _| app
        .reasoning
        .branch_create(req)),
    tool!(BranchmindBranchList, |app, req, _| app
        .reasoning
        .branch_list(req)),
    tool!(BranchmindCheckout, |app, req, _| app
        .reasoning
        .checkout(req)),
    tool!(BranchmindGraphApply, |app, req, _| app
        .reasoning
        .graph_apply(req)),
    tool!(BranchmindGraphQuery, |app, req, _| app
        .reasoning
        .graph_query(req)),
    tool!(BranchmindGraphValidate, |app, req, _| app
        .reasoning
        .graph_validate(req)),
    tool!(BranchmindGraphDiff, |app, req, _| app
        .reasoning
        .graph_diff(req)),
    tool!(BranchmindGraphMerge, |app, req, _| app
        .reasoning
        .graph_merge(req)),
    tool!(BranchmindGraphConflicts, |app, req, _| app
        .reasoning
        .graph_conflicts(req)),
    tool!(BranchmindGraphConflictShow, |app, req, _| app
        .reasoning
        .graph_conflict_show(req)),
    tool!(BranchmindGraphConflictResolve, |app, req, _| app
        .reasoning
        .graph_conflict_resolve(req)),
    tool!(BranchmindThinkTemplate, |app, req, _| app
        .reasoning
        .think_template(req)),
    tool!(BranchmindThinkCard, |app, req, _| app
        .reasoning
        .think_card(req)),
    tool!(BranchmindThinkContext, |app, req, _| app
        .reasoning
        .think_context(req)),
    tool!(BranchmindThinkNext, |app, req, _| app
        .reasoning
        .think_next(req)),
    tool!(BranchmindSearch, |app, req, _| app.reasoning.search(req)),
];
