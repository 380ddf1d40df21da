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
use crate::error::{Error, Result};

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
];

/// Runs tool `name` with `args`. Unknown tools and bad arguments are `INVALID_REQUEST`.
pub async fn dispatch(state: &AppState, name: &str, args: Value) -> Result<Value> {
    let caps = &state.capsules;
    match name {
        "capsule_store" => call(name, args, |r| caps.store(r)).await,
        "capsule_fetch" => call(name, args, |r| caps.fetch(r)).await,
        "capsule_fetch_many" => call(name, args, |r| caps.fetch_many(r)).await,
        "capsule_update" => call(name, args, |r| caps.update(r)).await,
        "capsule_delete" => call(name, args, |r| caps.delete(r)).await,
        "capsule_latest" => call(name, args, |r| caps.latest(r)).await,
        "capsule_list" => call(name, args, |r| caps.list(r)).await,
        "capsule_inventory" => call(name, args, |r| caps.inventory(r)).await,
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
