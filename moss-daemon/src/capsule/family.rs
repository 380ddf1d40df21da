//! The capsule family's registration: its MCP tools and its REST routes, in one place.
//!
//! Each entry names the tool, its request type (whose JSON Schema is the tool's input schema),
//! the description agents read, and the [`Capsules`](super::Capsules) operation it ends in; the
//! REST routes in [`rest`](super::rest) end in the same operations.

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
        capsule_inventory, which never return text. A capsule carries a title, tags, a source \
        (who wrote it), a run_id, a phase and a role, and the task (PLAN-### or TASK-### of its \
        workspace) it hands off for: the handoff lands in that task's trace and radar. A capsule is addressed by id or by \
        workspace+name (workspace default \"default\"; giving both is 400 \
        AMBIGUOUS_ADDRESSING); a ref is {\"id\"} or {\"workspace\",\"name\"}. Filters \
        (workspace, tag, name_prefix, run_id, phase, role) must all match; run_id takes one id, \
        a list or \"a,b\"; name_prefix ignores case. Soft-deleted capsules are left out unless \
        include_deleted:true. In updates \"\" clears a text field and [] a list. if_revision \
        (or if_updated_at) refuses a write when the capsule changed since (409 CONFLICT with \
        the current revision, nothing written). Capsule lists page with limit and offset.",
    ops: moss_client::capsule::OPS,
    tools: TOOLS,
    routes: super::rest::routes,
};

const TOOLS: &[Tool] = &[
    tool!(CapsuleStore, rest: family, |app, req, _| app.capsules.store(req)),
    tool!(CapsuleFetch, rest: family, |app, req, _| app.capsules.fetch(req)),
    tool!(CapsuleFetchMany, rest: family, |app, req, _| app.capsules.fetch_many(req)),
    tool!(CapsuleUpdate, rest: family, |app, req, _| app.capsules.update(req)),
    tool!(CapsuleDelete, rest: family, |app, req, _| app.capsules.delete(req)),
    tool!(CapsuleLatest, rest: family, |app, req, _| crate::moss::interface::capsule_latest(app, req)),
    tool!(CapsuleList, rest: family, |app, req, _| crate::moss::interface::capsule_list(app, req)),
    tool!(CapsuleInventory, rest: family, |app, req, _| app.capsules.inventory(req)),
    tool!(CapsuleSearch, rest: family, |app, req, _| app.capsules.search(req)),
    tool!(CapsuleCompose, rest: family, |app, req, _| app.capsules.compose(req)),
    tool!(CapsuleBulkDelete, rest: family, |app, req, _| app.capsules.bulk_delete(req)),
    tool!(CapsuleBulkUpdate, rest: family, |app, req, _| app.capsules.bulk_update(req)),
    tool!(CapsulePurge, rest: family, |app, req, _| app.capsules.purge(req)),
    tool!(CapsuleAppend, rest: family, |app, req, _| app.capsules.append(req)),
    tool!(CapsuleWatch, rest: family, |app, req, _| app.capsules.watch(req)),
    tool!(CapsuleStats, rest: family, |app, req, _| app.capsules.stats(req)),
    tool!(CapsuleRestore, rest: family, |app, req, _| app.capsules.restore(req)),
    tool!(CapsuleLineage, rest: family, |app, req, _| app.capsules.lineage(req)),
    tool!(CapsuleClone, rest: family, |app, req, _| app.capsules.clone_capsule(req)),
    tool!(CapsuleVersions, rest: family, |app, req, _| app.capsules.versions(req)),
    tool!(CapsuleDiff, rest: family, |app, req, _| app.capsules.diff(req)),
    tool!(CapsuleExport, rest: family, |app, req, progress| app.capsules.export(req, progress)),
    tool!(CapsuleImport, rest: family, |app, req, progress| app.capsules.import(req, progress)),
];
