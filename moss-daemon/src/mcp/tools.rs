//! The MCP tool table: names, descriptions, input schemas, and the dispatch to domain operations.

use std::sync::Arc;

use moss_client::*;
use rmcp::model::{JsonObject, Tool};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::api::AppState;
use crate::api::json::decode_value;
use crate::cancel::Cancel;
use crate::error::{Error, Result};
use crate::progress::Progress;

/// One tool as listed by `tools/list`.
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub schema: fn() -> JsonObject,
}

/// The JSON Schema of a request type, with subschemas inlined (some clients do not follow $ref).
pub fn schema_of<T: JsonSchema>() -> JsonObject {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    let mut value = serde_json::to_value(schema).expect("schemas serialize");
    drop_null_types(&mut value);
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
        obj.remove("title");
        obj.entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

/// Optional fields are simply not required: `"type": ["string", "null"]` becomes `"string"`
/// and `anyOf: [X, {"type": "null"}]` becomes `X`. Some MCP clients reject null in type arrays,
/// and omitting a field is how a client leaves it unset (an explicit null is still accepted).
fn drop_null_types(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(any)) = map.get("anyOf") {
                let rest: Vec<Value> = any
                    .iter()
                    .filter(|s| s.get("type") != Some(&Value::from("null")))
                    .cloned()
                    .collect();
                if rest.len() == 1 && rest.len() < any.len() {
                    map.remove("anyOf");
                    if let Value::Object(inner) = rest.into_iter().next().expect("one") {
                        for (k, val) in inner {
                            map.entry(k).or_insert(val);
                        }
                    }
                }
            }
            for child in map.values_mut() {
                drop_null_types(child);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(drop_null_types),
        _ => {}
    }
}

/// Every tool this daemon serves, in listing order.
pub const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "capsule_store",
        description: "Store a capsule: a size-bounded, distilled handoff another session can \
            pick up. capsule_text must contain the sections Objective, Current status, \
            Decisions, Next actions, Key locations and Open questions (markdown headers, \
            `Name:` lines or JSON keys; synonyms accepted) and be at most capsule_max_chars \
            (12000) characters. Name it to fetch it later by workspace+name. mode \"replace\" \
            overwrites the active capsule of that name (id kept). Errors: 409 \
            NAME_ALREADY_EXISTS, 413 CAPSULE_TOO_LARGE, 422 CAPSULE_TOO_THIN (details.missing \
            lists the sections to add).",
        schema: schema_of::<StoreRequest>,
    },
    ToolSpec {
        name: "capsule_fetch",
        description: "Load one capsule with its full text, by id or by workspace+name (not \
            both: 400 AMBIGUOUS_ADDRESSING). include_text:false peeks at the summary only. \
            Soft-deleted capsules are 404 NOT_FOUND unless include_deleted:true.",
        schema: schema_of::<FetchRequest>,
    },
    ToolSpec {
        name: "capsule_fetch_many",
        description: "Load up to 50 capsules in one call, each ref by id or workspace+name. \
            Partial success: found capsules come back in items (request order), missing ones \
            in errors with their ref and code.",
        schema: schema_of::<FetchManyRequest>,
    },
    ToolSpec {
        name: "capsule_update",
        description: "Update an active capsule's text (linted and size-checked like store), \
            title, tags, source, run_id, phase or role. Address it by id or workspace+name; the \
            address itself never changes. \"\" clears a text field, [] clears tags. \
            if_updated_at guards against overwriting someone else's change (409 CONFLICT).",
        schema: schema_of::<UpdateRequest>,
    },
    ToolSpec {
        name: "capsule_delete",
        description: "Soft-delete an active capsule by id or workspace+name. It stays readable \
            with include_deleted:true, frees its name, and shows as the latest change.",
        schema: schema_of::<DeleteRequest>,
    },
    ToolSpec {
        name: "capsule_latest",
        description: "The most recently updated capsule of a workspace, as a summary (or with \
            text if include_text:true); {\"item\": null} if there is none. Filter by run_id, \
            phase and role to get e.g. the latest design capsule of a run.",
        schema: schema_of::<LatestRequest>,
    },
    ToolSpec {
        name: "capsule_list",
        description: "Summaries (never text) of one workspace's capsules, newest first, with \
            pagination (limit default 20, max 100). Filter by run_id, phase, role.",
        schema: schema_of::<ListRequest>,
    },
    ToolSpec {
        name: "capsule_inventory",
        description: "Summaries (never text) of capsules across all workspaces, newest first \
            (limit default 100, max 500). Filter by workspace, tag, name_prefix, run_id, phase, \
            role.",
        schema: schema_of::<InventoryRequest>,
    },
    ToolSpec {
        name: "capsule_search",
        description: "Full-text search over capsule titles and texts (FTS5, BM25; title matches weigh 5x). query (max 1000 chars): words, \"exact phrases\", prefix*, AND/OR/NOT. Filters: workspace, tag, run_id, phase, role, include_deleted; limit default 20, max 100. Each hit has a ~300-char snippet with <b> highlights (the capsule's text is HTML-escaped) and a fetch_key to load it with capsule_fetch. No match is an empty items list. Invalid FTS5 syntax is 400 INVALID_REQUEST: quote punctuation.",
        schema: schema_of::<SearchRequest>,
    },
    ToolSpec {
        name: "capsule_compose",
        description: "Assemble up to 50 capsules (each by id or workspace+name, in order) into one bundle: markdown `## <title|name|id>` + text, parts separated by `---`, or format \"json\" with parts. sections keeps only the named sections of each capsule (e.g. [\"Decisions\",\"Open questions\"]). All-or-nothing: any missing capsule is 404 NOT_FOUND. Over capsule_max_chars is 413 COMPOSE_TOO_LARGE. store_as {name, …} also stores the markdown bundle as a capsule (linted like capsule_store; not with json).",
        schema: schema_of::<ComposeRequest>,
    },
    ToolSpec {
        name: "capsule_bulk_delete",
        description: "Soft-delete every active capsule matching ALL given filters (workspace, tag, name_prefix, run_id, phase, role). At least one non-empty filter is required (400 INVALID_REQUEST otherwise). Returns the count; 0 matches is not an error.",
        schema: schema_of::<BulkDeleteRequest>,
    },
    ToolSpec {
        name: "capsule_bulk_update",
        description: "Set phase, role or tags (set_phase, set_role, set_tags) on every active capsule matching ALL given filters (workspace, tag, name_prefix, run_id, phase, role). Needs at least one non-empty filter and one set_ field. \"\" clears phase or role, [] clears tags; tags are replaced, not merged. Returns the count.",
        schema: schema_of::<BulkUpdateRequest>,
    },
    ToolSpec {
        name: "capsule_purge",
        description: "Permanently delete soft-deleted capsules (all, or of one workspace, or deleted at least older_than_days ago). Active capsules are never touched. Cannot be undone.",
        schema: schema_of::<PurgeRequest>,
    },
    ToolSpec {
        name: "capsule_append",
        description: "Add markdown under one section of an active capsule (by id or workspace+name) without rewriting the rest, e.g. to log a review. section is the header text as written (\"Design Reviews\" for `## Design Reviews`), matched case-insensitively, no synonyms; a missing section is 400 INVALID_REQUEST listing the available ones. A placeholder body ((pending), TBD, N/A, -, none) is replaced; otherwise content goes after it with a blank line. 413 CAPSULE_TOO_LARGE if the result exceeds capsule_max_chars.",
        schema: schema_of::<AppendRequest>,
    },
    ToolSpec {
        name: "capsule_export",
        description: "Back up capsules to a JSONL file (one capsule per line after a \
            {\"_moss_export\":true,...} header line; file mode 0600; written to a temp file and \
            renamed, so a failure never leaves a partial file). Default path \
            ~/.moss/exports/<workspace>-<timestamp>.jsonl; workspace limits it to one workspace \
            (default all), include_deleted adds soft-deleted ones. path must end in .jsonl and \
            sit directly in ~/.moss/exports/ (a bare file name goes there) or an allowed_paths \
            directory; `..`, subdirectories and symlinks are refused (400 INVALID_REQUEST, \
            details.rule says which rule). Returns path, count, exported_at, bytes. Sends \
            notifications/progress when the call carries a progressToken.",
        schema: schema_of::<ExportRequest>,
    },
    ToolSpec {
        name: "capsule_import",
        description: "Restore capsules from a JSONL file written by capsule_export (same path \
            rules). All-or-nothing: one transaction, nothing written on any error. mode \
            \"error\" (default) fails on any id or active-name collision (409); \"replace\" \
            overwrites the colliding capsule keeping its id (409 CONFLICT if a record's id and \
            name match two different capsules); \"rename\" imports alongside, suffixing a taken \
            name (auth -> auth-1) and giving a taken id a new one. Normalized names, \
            capsule_chars and tokens_estimate are recomputed. A malformed line is 400 \
            INVALID_RECORD naming the line and field; records without id or workspace_raw are \
            skipped and listed in errors. Over max_import_bytes (25 MB) is 413 FILE_TOO_LARGE. \
            Sends notifications/progress when the call carries a progressToken.",
        schema: schema_of::<ImportRequest>,
    },
];

/// Runs tool `name` with `args`, reporting long work to `progress`. Unknown tools and bad
/// arguments are `INVALID_REQUEST`. Dropping the future (the client cancelled or went away)
/// cancels export and import.
pub async fn dispatch(
    state: &AppState,
    name: &str,
    args: Value,
    progress: Progress,
) -> Result<Value> {
    let caps = &state.capsules;
    match name {
        "capsule_export" => {
            let (cancel, guard) = Cancel::new();
            let r = call(name, args, |r| caps.export(r, cancel, progress)).await;
            guard.disarm();
            r
        }
        "capsule_import" => {
            let (cancel, guard) = Cancel::new();
            let r = call(name, args, |r| caps.import(r, cancel, progress)).await;
            guard.disarm();
            r
        }
        "capsule_store" => call(name, args, |r| caps.store(r)).await,
        "capsule_fetch" => call(name, args, |r| caps.fetch(r)).await,
        "capsule_fetch_many" => call(name, args, |r| caps.fetch_many(r)).await,
        "capsule_update" => call(name, args, |r| caps.update(r)).await,
        "capsule_delete" => call(name, args, |r| caps.delete(r)).await,
        "capsule_latest" => call(name, args, |r| caps.latest(r)).await,
        "capsule_list" => call(name, args, |r| caps.list(r)).await,
        "capsule_inventory" => call(name, args, |r| caps.inventory(r)).await,
        "capsule_search" => call(name, args, |r| caps.search(r)).await,
        "capsule_compose" => call(name, args, |r| caps.compose(r)).await,
        "capsule_bulk_delete" => call(name, args, |r| caps.bulk_delete(r)).await,
        "capsule_bulk_update" => call(name, args, |r| caps.bulk_update(r)).await,
        "capsule_purge" => call(name, args, |r| caps.purge(r)).await,
        "capsule_append" => call(name, args, |r| caps.append(r)).await,
        _ => Err(Error::invalid(format!(
            "unknown tool {name:?}; tools/list shows the available tools"
        ))),
    }
}

async fn call<Req, Resp, F, Fut>(tool: &str, args: Value, f: F) -> Result<Value>
where
    Req: DeserializeOwned,
    Resp: Serialize,
    F: FnOnce(Req) -> Fut,
    Fut: Future<Output = Result<Resp>>,
{
    let req: Req = decode_value(&format!("arguments for {tool}"), args)?;
    let resp = f(req).await?;
    serde_json::to_value(resp).map_err(|e| Error::internal("encoding a tool result", e))
}

/// The tools/list entries for the tools the config leaves enabled.
pub fn listed(state: &AppState) -> Vec<Tool> {
    TOOLS
        .iter()
        .filter(|t| !state.config.tool_disabled(t.name))
        .map(|t| Tool::new(t.name, t.description, Arc::new((t.schema)())))
        .collect()
}

/// Every tool with whether the config enables it (`GET /tools`, `moss tools`).
pub fn catalog(state: &AppState) -> ToolList {
    ToolList {
        tools: TOOLS
            .iter()
            .map(|t| ToolInfo {
                name: t.name.into(),
                description: t.description.into(),
                enabled: !state.config.tool_disabled(t.name),
            })
            .collect(),
    }
}
