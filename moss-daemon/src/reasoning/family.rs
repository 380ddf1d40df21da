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
        next_cursor) and never exceed max_chars: truncated:true says what was cut.",
    tools: TOOLS,
    routes: crate::api::reasoning::routes,
};

const TOOLS: &[Tool] = &[
    tool!(
        "branchmind_init",
        InitRequest,
        "Initialize a workspace's reasoning memory (idempotent): returns its storage directory, \
            schema version and checked-out branch (main at first).",
        |app, req, _| app.reasoning.init(req)
    ),
    tool!(
        "branchmind_status",
        ReasoningStatusRequest,
        "Fast snapshot of a workspace: schema version, checked-out branch, branch count, the \
            newest task event (last_event_id, last_event_ts) and the newest sequence written.",
        |app, req, _| app.reasoning.status(req)
    ),
    tool!(
        "branchmind_notes_commit",
        NotesCommitRequest,
        "Append one note (a decision, its rationale, evidence) to the notes of a target \
            (PLAN-###/TASK-###, with branch for a branch made from its branch) or to branch+doc \
            (doc alone: the checked-out branch). Returns the entry with its seq. Errors: 400 \
            INVALID_REQUEST when neither target nor doc is given, 404 NOT_FOUND for an unknown \
            target or branch, each with details.suggested_call.",
        |app, req, _| app.reasoning.notes_commit(req)
    ),
    tool!(
        "branchmind_commit",
        CommitRequest,
        "Append an entry of any kind (e.g. decision, evidence, summary) to any branch+doc, or \
            to a target's notes. source_event_id makes it idempotent: an entry with that key in \
            the document already is returned with inserted:false.",
        |app, req, _| app.reasoning.commit(req)
    ),
    tool!(
        "branchmind_show",
        ShowRequest,
        "Read a document newest first: target (+doc_kind notes|trace) or branch+doc. On a \
            derived branch this is the effective view: the base's entries up to base_seq plus \
            the branch's own. Page with cursor=pagination.next_cursor.",
        |app, req, _| app.reasoning.show(req)
    ),
    tool!(
        "branchmind_log",
        LogRequest,
        "A branch's entries across all its documents (its effective view), newest first, \
            optionally of one kind. Page with cursor=pagination.next_cursor.",
        |app, req, _| app.reasoning.log(req)
    ),
    tool!(
        "branchmind_export",
        ReasoningExportRequest,
        "Everything to resume a plan or task in one bounded call: the target, its \
            reasoning_ref, and the newest notes and trace entries. max_chars covers the whole \
            snapshot.",
        |app, req, _| app.reasoning.export(req)
    ),
    tool!(
        "branchmind_diff",
        DiffRequest,
        "Entries in to's view of a document that are not in from's view (directional: swap \
            the branches for the other side). doc defaults to notes.",
        |app, req, _| app.reasoning.diff(req)
    ),
    tool!(
        "branchmind_merge",
        MergeRequest,
        "Copy the notes of from's view that into's view lacks into into (other kinds are \
            ignored). Idempotent: each copy carries source_event_id merge:<branch>:<seq>, so a \
            second run merges nothing. dry_run:true only counts. Large merges page with cursor.",
        |app, req, _| app.reasoning.merge(req)
    ),
    tool!(
        "branchmind_branch_create",
        BranchCreateRequest,
        "Create a branch from another (default: the checked-out branch) without copying: it \
            records base_branch and base_seq, and sees the base as it was at base_seq. Errors: \
            409 CONFLICT if the name exists.",
        |app, req, _| app.reasoning.branch_create(req)
    ),
    tool!(
        "branchmind_branch_list",
        BranchListRequest,
        "List a workspace's branches, newest first (canonical task/plan branches included, \
            main last), with their base and whether checked out.",
        |app, req, _| app.reasoning.branch_list(req)
    ),
    tool!(
        "branchmind_checkout",
        CheckoutRequest,
        "Set the workspace's current branch (ref must exist): reads and writes that name a doc \
            but no target and no branch use it. Task state is not affected.",
        |app, req, _| app.reasoning.checkout(req)
    ),
    tool!(
        "branchmind_graph_apply",
        GraphApplyRequest,
        "Apply typed graph operations atomically (all or none) to a target's graph or \
            branch+doc: node_upsert {id,type,title?,text?,status?,tags?,meta?}, node_delete \
            {id}, edge_upsert {from,rel,to,meta?}, edge_delete {from,rel,to}. Each op is a new \
            version; deletion is a tombstone. Ids: no control characters, no `|`; task: and \
            step: are reserved for the task projection.",
        |app, req, _| app.reasoning.graph_apply(req)
    ),
    tool!(
        "branchmind_graph_query",
        GraphQueryRequest,
        "Query the effective graph: filter by ids, types, status, tags_any, tags_all, text; \
            nodes newest first (limit 50), with the edges between them (edges_limit 200). Page \
            with cursor=pagination.next_cursor. Edges are dropped before nodes to fit max_chars.",
        |app, req, _| app.reasoning.graph_query(req)
    ),
    tool!(
        "branchmind_graph_validate",
        GraphValidateRequest,
        "Check the effective graph: every edge's endpoints must be live nodes. Returns ok, \
            counts, and up to max_errors (50) dangling_edge errors.",
        |app, req, _| app.reasoning.graph_validate(req)
    ),
    tool!(
        "branchmind_graph_diff",
        GraphDiffRequest,
        "Node and edge states in to's graph that differ from from's (a deletion is \
            to.deleted:true), newest first. doc is required (a task's graph is TASK-###-graph).",
        |app, req, _| app.reasoning.graph_diff(req)
    ),
    tool!(
        "branchmind_graph_merge",
        MergeRequest,
        "3-way merge of a derived branch's graph back into its base (into must be from's \
            base_branch, else 409 MERGE_INTO_NON_BASE). Keys changed only on from are written \
            into into; keys changed on both sides differently become conflicts (ids are \
            deterministic: rerunning finds the same ones and creates none). dry_run:true only \
            counts. doc is required (a task's graph is TASK-###-graph).",
        |app, req, _| app.reasoning.graph_merge(req)
    ),
    tool!(
        "branchmind_graph_conflicts",
        GraphConflictsRequest,
        "List the graph conflicts of a merge destination's graph doc (required), newest first, \
            optionally by status (open or resolved).",
        |app, req, _| app.reasoning.graph_conflicts(req)
    ),
    tool!(
        "branchmind_graph_conflict_show",
        ConflictShowRequest,
        "Show one conflict with its three states: base (at branching), theirs (from), ours \
            (into).",
        |app, req, _| app.reasoning.graph_conflict_show(req)
    ),
    tool!(
        "branchmind_graph_conflict_resolve",
        ConflictResolveRequest,
        "Resolve a conflict: use_from writes from's state into into as a new version; use_into \
            keeps into as it is. Both mark it resolved; resolving again changes nothing.",
        |app, req, _| app.reasoning.graph_conflict_resolve(req)
    ),
    tool!(
        "branchmind_think_template",
        ThinkTemplateRequest,
        "The skeleton of a card type (frame, hypothesis, question, test, evidence, decision, \
            note, update) as JSON and as key: value lines. An unknown type is 400 \
            INVALID_REQUEST listing details.supported_types.",
        |app, req, _| app.reasoning.think_template(req)
    ),
    tool!(
        "branchmind_think_card",
        ThinkCardRequest,
        "Write a thinking card: a trace entry and a graph node (+ supports/blocks edges) in \
            one transaction, on a target's trace and graph (with branch: on a branch made from its \
            branch) or on branch+trace_doc+graph_doc. card is an object, a JSON string, or key: value lines; it needs id, \
            type and a title or text (unknown keys go to meta). The same card again writes \
            nothing (inserted:false); the same id with a different card is 409 CONFLICT.",
        |app, req, _| app.reasoning.think_card(req)
    ),
    tool!(
        "branchmind_think_context",
        ThinkContextRequest,
        "The newest cards of a graph (limit_cards 30) with counts by type: a low-noise slice \
            to resume thinking.",
        |app, req, _| app.reasoning.think_context(req)
    ),
    tool!(
        "branchmind_think_next",
        ThinkNextRequest,
        "The one card to write next, chosen deterministically from the graph: a frame if \
            none; else evidence for the oldest open question nothing answers; a test for the \
            oldest open hypothesis nothing tests; evidence for a test without any; a decision \
            once evidence is in. Returns a filled skeleton and the supports edge; next:null \
            when all is settled.",
        |app, req, _| app.reasoning.think_next(req)
    ),
    tool!(
        "branchmind_search",
        ReasoningSearchRequest,
        "Full-text search over a workspace's notes, trace and cards (titles and texts): \
            where did we decide X? Hits are ranked, with the matching passage in snippet.",
        |app, req, _| app.reasoning.search(req)
    ),
];
