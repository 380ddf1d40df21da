//! The capsule family's registration: its MCP tools and its REST routes, in one place.
//!
//! Each entry names the tool, its request type (whose JSON Schema is the tool's input schema),
//! the description agents read, and the [`Capsules`](super::Capsules) operation it ends in; the
//! REST routes in [`crate::api::capsules`] end in the same operations.

use moss_client::capsule::*;

use crate::family::{Family, Tool};
use crate::tool;

/// The capsule memory: size-bounded, linted handoffs between sessions.
pub const CAPSULE: Family = Family {
    name: "capsule",
    summary: "Capsule memory: size-bounded, linted handoffs between agent sessions",
    instructions: "Capsules (capsule_*): distilled, size-bounded handoffs between agent \
        sessions. Save state with capsule_store (six sections: Objective, Current status, \
        Decisions, Next actions, Key locations, Open questions); resume with capsule_fetch by \
        workspace+name or capsule_latest include_text:true; browse with capsule_list and \
        capsule_inventory, which never return text.",
    tools: TOOLS,
    routes: crate::api::capsules::routes,
};

const TOOLS: &[Tool] = &[
    tool!(
        "capsule_store",
        StoreRequest,
        "Store a capsule: a size-bounded, distilled handoff another session can \
            pick up. capsule_text must contain the sections Objective, Current status, \
            Decisions, Next actions, Key locations and Open questions (markdown headers, \
            `Name:` lines or JSON keys; synonyms accepted) and be at most capsule_max_chars \
            (12000) characters. Name it to fetch it later by workspace+name. mode \"replace\" \
            overwrites the active capsule of that name (id kept). evidence: up to 20 \
            {type, ref, content} (snippets, transcript refs) kept beside the text, not counted \
            in its size. Errors: 409 \
            NAME_ALREADY_EXISTS, 413 CAPSULE_TOO_LARGE, 422 CAPSULE_TOO_THIN (details.missing \
            lists the sections to add).",
        |app, req, _| app.capsules.store(req)
    ),
    tool!(
        "capsule_fetch",
        FetchRequest,
        "Load one capsule with its full text, by id or by workspace+name (not \
            both: 400 AMBIGUOUS_ADDRESSING). include_text:false peeks at the summary only. \
            Soft-deleted capsules are 404 NOT_FOUND unless include_deleted:true. version:-1 \
            reads the previous revision kept, -2 the one before (capsule_versions lists them). \
            Evidence comes as {type, ref, chars}; expand_evidence:true adds each content.",
        |app, req, _| app.capsules.fetch(req)
    ),
    tool!(
        "capsule_fetch_many",
        FetchManyRequest,
        "Load up to 50 capsules in one call, each ref by id or workspace+name. \
            Partial success: found capsules come back in items (request order), missing ones \
            in errors with their ref and code.",
        |app, req, _| app.capsules.fetch_many(req)
    ),
    tool!(
        "capsule_update",
        UpdateRequest,
        "Update an active capsule's text (linted and size-checked like store), \
            title, tags, source, run_id, phase, role, based_on or evidence (replaced whole). \
            Address it by id or workspace+name; the address itself never changes. \"\" clears \
            a text field, [] clears tags, based_on or evidence. \
            if_revision (precise) or if_updated_at guards against overwriting someone else's \
            change: 409 CONFLICT with the current revision and updated_at, nothing written.",
        |app, req, _| app.capsules.update(req)
    ),
    tool!(
        "capsule_delete",
        DeleteRequest,
        "Soft-delete an active capsule by id or workspace+name. It stays readable \
            with include_deleted:true, frees its name, and shows as the latest change.",
        |app, req, _| app.capsules.delete(req)
    ),
    tool!(
        "capsule_latest",
        LatestRequest,
        "The most recently updated capsule of a workspace, as a summary (or with \
            text if include_text:true); {\"item\": null} if there is none. Filter by run_id, \
            phase and role to get e.g. the latest design capsule of a run.",
        |app, req, _| app.capsules.latest(req)
    ),
    tool!(
        "capsule_list",
        ListRequest,
        "Summaries (never text) of one workspace's capsules, newest first, with \
            pagination (limit default 20, max 100). Filter by run_id (one, a list, or \
            comma-separated), phase, role.",
        |app, req, _| app.capsules.list(req)
    ),
    tool!(
        "capsule_inventory",
        InventoryRequest,
        "Summaries (never text) of capsules across all workspaces, newest first \
            (limit default 100, max 500). Filter by workspace, tag, name_prefix, run_id, phase, \
            role.",
        |app, req, _| app.capsules.inventory(req)
    ),
    tool!(
        "capsule_search",
        SearchRequest,
        "Full-text search over capsule titles and texts (FTS5, BM25; title matches weigh 5x). query (max 1000 chars): words, \"exact phrases\", prefix*, AND/OR/NOT. Filters: workspace, tag, run_id, phase, role, include_deleted; limit default 20, max 100. Each hit has a ~300-char snippet with <b> highlights (the capsule's text is HTML-escaped) and a fetch_key to load it with capsule_fetch. No match is an empty items list. Invalid FTS5 syntax is 400 INVALID_REQUEST: quote punctuation.",
        |app, req, _| app.capsules.search(req)
    ),
    tool!(
        "capsule_compose",
        ComposeRequest,
        "Assemble up to 50 capsules into one bundle: markdown `## <title|name|id>` + text, parts separated by `---`, or format \"json\", whose bundle_text is the JSON document {\"parts\":[{id, workspace, name, display_name, text, chars}]}. Each item is a ref (id, or workspace+name) or a filter ({\"run_id\": \"pr-42\"}; any of workspace, run_id, phase, role, tag, ANDed) expanding to every matching active capsule, oldest first, at its position; over 50 once expanded is 400 INVALID_REQUEST with details.expanded_count. sections keeps only the named sections (e.g. [\"Decisions\",\"Open questions\"]). pivot \"section\" groups by section instead (each section once, every capsule's part under it; markdown only); include_attribution starts each part with `**name** (role):`. A missing ref is 404 NOT_FOUND (nothing composed); a filter matching nothing is skipped. Over capsule_max_chars is 413 COMPOSE_TOO_LARGE. store_as {name, …} also stores the markdown bundle as a capsule (linted like capsule_store; not with json).",
        |app, req, _| app.capsules.compose(req)
    ),
    tool!(
        "capsule_bulk_delete",
        BulkDeleteRequest,
        "Soft-delete every active capsule matching ALL given filters (workspace, tag, name_prefix, run_id, phase, role). At least one non-empty filter is required (400 INVALID_REQUEST otherwise). Returns the count; 0 matches is not an error.",
        |app, req, _| app.capsules.bulk_delete(req)
    ),
    tool!(
        "capsule_bulk_update",
        BulkUpdateRequest,
        "Set phase, role or tags (set_phase, set_role, set_tags) on every active capsule matching ALL given filters (workspace, tag, name_prefix, run_id, phase, role). Needs at least one non-empty filter and one set_ field. \"\" clears phase or role, [] clears tags; tags are replaced, not merged. Returns the count.",
        |app, req, _| app.capsules.bulk_update(req)
    ),
    tool!(
        "capsule_purge",
        PurgeRequest,
        "Permanently delete soft-deleted capsules (all, or of one workspace, or deleted at least older_than_days ago); active capsules are not touched. With run_id (one, a list, or comma-separated): every capsule of the run(s), active ones included, and only with confirm:true; without it, 400 INVALID_REQUEST says how many would go (details.would_purge). Cannot be undone.",
        |app, req, _| app.capsules.purge(req)
    ),
    tool!(
        "capsule_append",
        AppendRequest,
        "Add markdown under one section of an active capsule (by id or workspace+name) without rewriting the rest, e.g. to log a review. section is the header text as written (\"Design Reviews\" for `## Design Reviews`), matched case-insensitively, no synonyms; a missing section is 400 INVALID_REQUEST listing the available ones. A placeholder body ((pending), TBD, N/A, -, none) is replaced; otherwise content goes after it (position \"prepend\": right under the header) with a blank line. sections [{section, content}] writes several at once, all or none. if_placeholder:true writes only into placeholder sections (409 CONFLICT otherwise); if_revision / if_updated_at guard against concurrent changes (409 CONFLICT, nothing written). 413 CAPSULE_TOO_LARGE if the result exceeds capsule_max_chars.",
        |app, req, _| app.capsules.append(req)
    ),
    tool!(
        "capsule_watch",
        WatchRequest,
        "Wait (long poll, timeout_ms default 30000, max 300000) for the next capsule created, updated, deleted or purged that matches the filter (workspace, run_id, phase, role, tag, name_prefix; ANDed). Returns {event: created|updated|deleted|purged|timeout, capsule (summary; for purged, as it was), cursor}; purges stay listed 7 days. Pass cursor back as since: a change committed between two calls is returned by the next one, none twice; several changes to one capsule in between arrive as one event with its latest state. limit (default 1, max 100) returns up to that many changes at once in events, oldest first.",
        |app, req, _| app.capsules.watch(req)
    ),
    tool!(
        "capsule_stats",
        StatsRequest,
        "Counts of capsules without reading their texts: capsule_count, total_chars, by_phase, by_role, oldest and newest (RFC 3339) of the active capsules, and deleted_count (soft-deleted, awaiting purge). Filter by workspace and run_id (one, a list, or comma-separated).",
        |app, req, _| app.capsules.stats(req)
    ),
    tool!(
        "capsule_restore",
        RestoreRequest,
        "Undelete a soft-deleted capsule by id, or by workspace+name (the most recently deleted of that name). If an active capsule holds the name now: mode \"error\" (default) is 409 NAME_ALREADY_EXISTS naming it, \"replace\" soft-deletes it first, \"rename\" restores under <name>-1, -2…. Restoring an active capsule is 400 INVALID_REQUEST.",
        |app, req, _| app.capsules.restore(req)
    ),
    tool!(
        "capsule_lineage",
        LineageRequest,
        "Walk a capsule's lineage both ways: based_on (the refs it was stored with, then theirs) and derived (capsules whose based_on names it by id or workspace+name, then theirs), breadth first, depth default 3 (1-10), at most 100 nodes each way (truncated says so). Each node has its depth, the ref, the capsule it leads to now (absent if none) and via (the node that led there).",
        |app, req, _| app.capsules.lineage(req)
    ),
    tool!(
        "capsule_clone",
        CloneRequest,
        "Copy an active capsule (source: id or workspace+name) into a new one: same text, title, tags and metadata, fresh id and timestamps, based_on: [source]. target {workspace (default the source's), name, title, run_id}; set {run_id, phase, role, tags} overrides metadata. A taken target name is 409 NAME_ALREADY_EXISTS.",
        |app, req, _| app.capsules.clone_capsule(req)
    ),
    tool!(
        "capsule_versions",
        VersionsRequest,
        "List the earlier revisions kept of a capsule (id or workspace+name), newest first, without their texts: revision, version (the capsule_fetch version that reads it: -1, -2, …), updated_at, capsule_chars, title, and the run_id/phase/role it carried. The daemon keeps the newest capsule_versions (config, default 10) per capsule; every update, append, replace, bulk update and import replace saves one; deletes and restores do not.",
        |app, req, _| app.capsules.versions(req)
    ),
    tool!(
        "capsule_diff",
        DiffRequest,
        "Compare two capsules, or two versions of one (a and b: id or workspace+name, optional version as in capsule_fetch), section by section: sections {title: unchanged|modified|added|removed_content}, order, summary {unchanged_sections, modified_sections, added_sections, removed_sections, a_chars, b_chars}. include_diff:true adds a unified line diff per modified section.",
        |app, req, _| app.capsules.diff(req)
    ),
    tool!(
        "capsule_export",
        ExportRequest,
        "Back up capsules to a JSONL file (one capsule per line after a \
            {\"_moss_export\":true,...} header line; file mode 0600; written to a temp file and \
            renamed, so a failure never leaves a partial file). Default path \
            ~/.moss/exports/<workspace>-<timestamp>.jsonl; workspace limits it to one workspace \
            (default all), include_deleted adds soft-deleted ones. path must end in .jsonl and \
            sit directly in ~/.moss/exports/ (a bare file name goes there) or an allowed_paths \
            directory; `..`, subdirectories and symlinks are refused (400 INVALID_REQUEST, \
            details.rule says which rule). Returns path, count, exported_at, bytes. Versions \
            and lineage are not exported. Sends \
            notifications/progress when the call carries a progressToken.",
        |app, req, progress| app.capsules.export(req, progress)
    ),
    tool!(
        "capsule_import",
        ImportRequest,
        "Restore capsules from a JSONL file written by capsule_export (same path \
            rules). All-or-nothing: one transaction, nothing written on any error. mode \
            \"error\" (default) fails on any id or active-name collision (409); \"replace\" \
            overwrites the colliding capsule keeping its id (409 CONFLICT if a record's id and \
            name match two different capsules); \"rename\" imports alongside, suffixing a taken \
            name (auth -> auth-1) and giving a taken id a new one. Normalized names, \
            capsule_chars and tokens_estimate are recomputed. A malformed line is 400 \
            INVALID_RECORD naming the line and field; records without id or workspace_raw are \
            skipped and listed in errors. Over max_import_bytes (25 MB) is 413 FILE_TOO_LARGE. \
            Export files hold no versions or lineage. Sends notifications/progress when the \
            call carries a progressToken.",
        |app, req, progress| app.capsules.import(req, progress)
    ),
];
