//! Families: the unit of registration.
//!
//! A memory's operations form a family (`capsule`, `reasoning`, `tasks`, `memory`).
//! Each family registers itself once, as one [`Family`] value in its own module: its op table
//! (declared in `moss-client`: tool name, method and path, request and response types,
//! description), one [`Tool`] per entry binding it to its domain call (from which come the MCP
//! tool and, for the `POST /<family>/<op>` families, the REST route), and its hand-written REST
//! routes, if any. [`FAMILIES`] lists them, and
//! everything that lists tools derives from it: `tools/list`, `tools/call` dispatch, `GET /tools`
//! and `moss tools`, `disabled_tools` / `disabled_types` / `toolsets` validation, the MCP
//! instructions, the OpenAPI document, the generated `proto-docs/` and the tests' tool lists.
//!
//! Adding a tool is one entry in its family's op table with its wire types (`moss-client`), its
//! domain function, and the [`tool!`](crate::tool) line that binds them; the client method, the
//! REST route, its OpenAPI entry and the CLI's route follow from the table.
//!
//! **Toolsets.** A toolset is a named list of tools: each family, `core` ([`CORE`]: resume,
//! find, remember, hand off) and `all`. `/mcp` serves the union of the toolsets the config's
//! `toolsets` key names (default: all), and a connection narrows it with
//! `/mcp?toolsets=core,memory`: an agent that sees only the tools it needs chooses better, pays
//! less context for the tool list, and some clients cap the number of tools.

use std::future::Future;
use std::pin::Pin;

use rmcp::model::JsonObject;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::app::AppState;
use crate::error::{Error, Result};
use crate::progress::Progress;

/// What a tool's handler returns: the response as JSON, or the error envelope's error.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<Value>> + Send>>;

/// A tool's handler: decodes its arguments, runs the domain operation, encodes the response.
/// Dropping the future cancels the operation (the domain stops long loops).
pub type ToolHandler = fn(AppState, Value, Progress) -> ToolFuture;

/// A REST route built from an op table entry, tagged with its family.
pub type Route = utoipa_axum::router::UtoipaMethodRouter<AppState>;

/// One tool: served over MCP, and over REST at its table entry's route.
#[derive(Debug)]
pub struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    /// Its entry in the family's op table (`moss_client::<family>::OPS`).
    pub spec: moss_client::op::OpSpec,
    /// The input schema, generated from the request type once and kept.
    pub schema: fn() -> std::sync::Arc<JsonObject>,
    pub handler: ToolHandler,
    /// Its REST route, built from the table entry; `None` when the family's hand-written
    /// routes serve it.
    pub route: Option<fn(&'static str) -> Route>,
}

impl Tool {
    /// Whether its request takes a `session`: an MCP connection's calls then belong to the
    /// connection's session unless they name one.
    pub fn takes_session(&self) -> bool {
        (self.schema)()
            .get("properties")
            .and_then(|p| p.as_object())
            .is_some_and(|p| p.contains_key("session"))
    }
}

/// One memory's registration.
#[derive(Debug)]
pub struct Family {
    /// The toolset name (`/mcp?toolsets=`, `toolsets`, `disabled_types`).
    pub name: &'static str,
    /// One line: what the family keeps (toolset listings and the OpenAPI tag).
    pub summary: &'static str,
    /// This family's paragraph of the MCP `instructions`, sent when the family is served.
    pub instructions: &'static str,
    /// Its op table in `moss-client`: every operation the family declares.
    pub ops: &'static [moss_client::op::OpSpec],
    /// Its tools, one per op table entry, in the table's order.
    pub tools: &'static [Tool],
    /// Its hand-written REST routes (resource-shaped ones, and routes that are no tool), each
    /// documented in the OpenAPI document; the tools' own routes come from their table entries.
    pub routes: fn() -> utoipa_axum::router::OpenApiRouter<AppState>,
}

/// Every family the daemon serves, in listing order.
pub const FAMILIES: &[&Family] = &[
    &crate::capsule::family::CAPSULE,
    &crate::reasoning::family::REASONING,
    &crate::tasks::family::TASKS,
    &crate::memory::family::MEMORY,
    &crate::moss::family::MOSS,
];

/// No hand-written routes: a family whose tools are all served at their table entries' routes.
pub fn no_routes() -> utoipa_axum::router::OpenApiRouter<AppState> {
    utoipa_axum::router::OpenApiRouter::new()
}

/// The family named `name`.
pub fn family(name: &str) -> Option<&'static Family> {
    FAMILIES.iter().copied().find(|f| f.name == name)
}

/// The names of every family, for error messages and config validation.
pub fn family_names() -> Vec<&'static str> {
    FAMILIES.iter().map(|f| f.name).collect()
}

/// Every tool with its family, in listing order.
pub fn tools() -> impl Iterator<Item = (&'static Family, &'static Tool)> {
    FAMILIES
        .iter()
        .copied()
        .flat_map(|f| f.tools.iter().map(move |t| (f, t)))
}

/// The tool named `name`, with its family.
pub fn tool(name: &str) -> Option<(&'static Family, &'static Tool)> {
    tools().find(|(_, t)| t.name == name)
}

/// The `core` toolset: what an agent needs to resume its work, find what is known, remember
/// and hand off, at most [`CORE_MAX`] tools. One line per tool; they are served in registry
/// order.
pub const CORE: &[&str] = &[
    // Resume: where the work stands in one call, the newest handoff, a task's radar, the tasks.
    "moss_context",
    "capsule_latest",
    "capsule_fetch",
    "tasks_radar",
    "tasks_context",
    // Find: everything at once, or capsules with their filters.
    "moss_search",
    "capsule_search",
    "memory_recall",
    // Remember: knowledge, decisions and notes, progress.
    "memory_store",
    "branchmind_notes_commit",
    "branchmind_think_card",
    "tasks_create",
    "tasks_note",
    "tasks_done",
    // Hand off.
    "capsule_store",
];

/// The most tools `core` may hold: some clients cap how many tools they take, and every tool
/// costs the agent context before it does anything.
pub const CORE_MAX: usize = 15;

/// A named list of tools: each family, `core` ([`CORE`]) and `all`.
#[derive(Debug, Clone, Copy)]
pub struct Toolset {
    pub name: &'static str,
    /// One line: what it holds (`moss tools`, the MCP instructions).
    pub summary: &'static str,
    members: Members,
}

#[derive(Debug, Clone, Copy)]
enum Members {
    Family(&'static Family),
    Listed(&'static [&'static str]),
    Every,
}

impl Toolset {
    /// Whether `tool` is in this toolset.
    pub fn contains(&self, tool: &str) -> bool {
        match self.members {
            Members::Family(f) => f.tools.iter().any(|t| t.name == tool),
            Members::Listed(names) => names.contains(&tool),
            Members::Every => self::tool(tool).is_some(),
        }
    }
}

/// Every toolset: one per family in registry order, then `core`, then `all`.
pub fn toolsets() -> Vec<Toolset> {
    let mut sets: Vec<Toolset> = FAMILIES
        .iter()
        .map(|f| Toolset {
            name: f.name,
            summary: f.summary,
            members: Members::Family(f),
        })
        .collect();
    sets.push(Toolset {
        name: "core",
        summary: "the tools to resume work, find what is known, remember and hand off",
        members: Members::Listed(CORE),
    });
    sets.push(Toolset {
        name: "all",
        summary: "every tool",
        members: Members::Every,
    });
    sets
}

/// The toolset named `name`.
pub fn toolset(name: &str) -> Option<Toolset> {
    toolsets().into_iter().find(|t| t.name == name)
}

/// The names of every toolset, for error messages and config validation.
pub fn toolset_names() -> Vec<&'static str> {
    toolsets().iter().map(|t| t.name).collect()
}

/// The toolsets `tool` is in, in [`toolsets`] order (`GET /tools`).
pub fn toolsets_of(tool: &str) -> Vec<&'static str> {
    toolsets()
        .into_iter()
        .filter(|t| t.contains(tool))
        .map(|t| t.name)
        .collect()
}

/// The tools one MCP connection is served: the union of some toolsets, in registry order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolsets {
    /// The toolsets it was made of, as named.
    names: Vec<&'static str>,
    /// Its tools, in registry order.
    tools: Vec<&'static str>,
}

impl Toolsets {
    /// Every tool.
    pub fn all() -> Toolsets {
        Toolsets {
            names: vec!["all"],
            tools: tools().map(|(_, t)| t.name).collect(),
        }
    }

    /// The union of the toolsets named in `names`. An unknown name is an error naming it and
    /// listing the valid ones.
    pub fn named<S: AsRef<str>>(names: &[S]) -> std::result::Result<Toolsets, String> {
        let mut chosen = Vec::new();
        for name in names {
            let name = name.as_ref().trim();
            if name.is_empty() {
                continue;
            }
            match toolset(name) {
                Some(t) => chosen.push(t),
                None => {
                    return Err(format!(
                        "unknown toolset {name:?}; valid toolsets: {}",
                        toolset_names().join(", ")
                    ));
                }
            }
        }
        Ok(Toolsets::union(&chosen, |_| true))
    }

    /// The tools of `sets` that `keep` keeps, in registry order.
    fn union(sets: &[Toolset], keep: impl Fn(&str) -> bool) -> Toolsets {
        let mut names: Vec<&'static str> = Vec::new();
        for s in sets {
            if !names.contains(&s.name) {
                names.push(s.name);
            }
        }
        Toolsets {
            names,
            tools: tools()
                .map(|(_, t)| t.name)
                .filter(|t| keep(t) && sets.iter().any(|s| s.contains(t)))
                .collect(),
        }
    }

    /// Narrows these tools to the comma-separated toolsets a connection asked for: their union
    /// (`all` keeps every tool served here). A name that is no toolset, or one none of whose
    /// tools this daemon serves, is `INVALID_REQUEST` naming it and listing the ones it may ask
    /// for.
    pub fn narrow(&self, requested: &str) -> Result<Toolsets> {
        let names: Vec<&str> = requested
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        if names.is_empty() {
            return Ok(self.clone());
        }
        let mut chosen = Vec::new();
        for name in names {
            let set = toolset(name);
            let served = set.is_some_and(|s| self.tools.iter().any(|t| s.contains(t)));
            match set {
                Some(s) if served => chosen.push(s),
                _ => {
                    let why = if set.is_some() {
                        "is not served by this daemon (see the config's toolsets key)"
                    } else {
                        "is not a toolset"
                    };
                    let valid = self.valid();
                    return Err(Error::invalid_field(
                        "toolsets",
                        format!(
                            "toolset {name:?} {why}; valid toolsets: {} (a comma-separated \
                             list serves their union)",
                            valid.join(", ")
                        ),
                    )
                    .with_details(json!({
                        "field": "toolsets",
                        "toolset": name,
                        "valid": valid,
                    })));
                }
            }
        }
        Ok(Toolsets::union(&chosen, |t| self.tools.contains(&t)))
    }

    /// The toolsets a connection may ask these tools for: those with at least one of them.
    pub fn valid(&self) -> Vec<&'static str> {
        toolsets()
            .into_iter()
            .filter(|s| self.tools.iter().any(|t| s.contains(t)))
            .map(|s| s.name)
            .collect()
    }

    /// Whether the tool named `tool` is served.
    pub fn contains(&self, tool: &str) -> bool {
        self.tools.contains(&tool)
    }

    /// The toolsets it was made of.
    pub fn names(&self) -> Vec<&'static str> {
        self.names.clone()
    }

    /// The tools served, in registry order.
    pub fn tools(&self) -> &[&'static str] {
        &self.tools
    }

    /// The MCP `instructions` for these tools: a line on Moss and the rules every family
    /// shares, each served family's paragraph, and, when `daemon` (what this daemon serves)
    /// holds more, how to reach the rest.
    pub fn instructions(&self, daemon: &Toolsets) -> String {
        let mut out = String::from(
            "Moss is a local memory service shared by agent sessions. Every tool answers JSON; a \
             failure is a tool error whose content is {\"error\":{code,message,status,details}}. \
             A read that takes max_chars is bounded: max_chars (default: the daemon's \
             output_max_chars), max_bytes (UTF-8) and max_lines cap the answer; what did not fit \
             is cut, and truncated:true and budget say what (a cap below the smallest possible \
             answer gets that answer, with budget.warning). A read that takes cursor pages from \
             the newest: pass the answer's pagination.next_cursor back as cursor. Full-text \
             searches match English word forms (tab finds tabs, merging finds merged) and score \
             hits in 0..1, higher is better. \
             expected_revision refuses a write (409 CONFLICT, nothing written) unless the item \
             is at that revision.",
        );
        for f in FAMILIES {
            if f.tools.iter().any(|t| self.contains(t.name)) {
                out.push_str("\n\n");
                out.push_str(f.instructions);
            }
        }
        let rest: Vec<String> = toolsets()
            .into_iter()
            .filter(|s| s.name != "all" && !self.names.contains(&s.name))
            .filter_map(|s| {
                let more = daemon
                    .tools
                    .iter()
                    .filter(|t| s.contains(t) && !self.contains(t))
                    .count();
                (more > 0).then(|| format!("{} ({more} more: {})", s.name, s.summary))
            })
            .collect();
        if !rest.is_empty() {
            out.push_str(&format!(
                "\n\nThis connection serves the toolsets {} ({} of {} tools); tools named above \
                 but not listed are in the others: {}. Reach them with /mcp?toolsets=<names> \
                 (comma-separated, e.g. core,memory, serves their union), or /mcp?toolsets=all \
                 for every tool.",
                self.names.join(", "),
                self.tools.len(),
                daemon.tools.len(),
                rest.join("; ")
            ));
        }
        out
    }
}

/// Decodes a tool's arguments, naming the bad field in `INVALID_REQUEST`.
pub fn decode_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T> {
    crate::decode::decode_value(&format!("arguments for {tool}"), args)
}

/// Encodes a tool's response.
pub fn encode<T: Serialize>(resp: Result<T>) -> Result<Value> {
    serde_json::to_value(resp?).map_err(|e| Error::internal("encoding a tool result", e))
}

/// One [`Tool`] entry, from an operation of a `moss-client` op table:
/// `tool!(TasksCreate, |app, req, progress| future)`. The closure's body is the domain call,
/// written once; from it come the MCP tool (its name, description and input schema are the
/// table entry's) and the REST route at the entry's method and path. Decoding the arguments
/// (an `INVALID_REQUEST` naming the field) and encoding the response are done here, once.
///
/// `tool!(MossSearch, rest: query, …)` serves a `GET` entry with its request in the query
/// string. `tool!(TasksCreate, rest: family, …)` leaves the REST route to the family's hand-written
/// routes (resource-shaped ones, such as `GET /capsules/{id}`).
#[macro_export]
macro_rules! tool {
    ($op:ty, |$app:ident, $r:ident, $progress:pat_param| $call:expr) => {
        $crate::tool!(@tool $op, Some({
            fn route(tag: &'static str) -> $crate::family::Route {
                $crate::api::ops::route::<$op, _, _>(
                    tag,
                    |app: $crate::app::AppState, $r: <$op as moss_client::op::Op>::Request| async move {
                        let $app = &*app;
                        let $progress = $crate::progress::Progress::none();
                        $call.await
                    },
                )
            }
            route
        }), |$app, $r, $progress| $call)
    };
    ($op:ty, rest: query, |$app:ident, $r:ident, $progress:pat_param| $call:expr) => {
        $crate::tool!(@tool $op, Some({
            fn route(tag: &'static str) -> $crate::family::Route {
                $crate::api::ops::query_route::<$op, _, _>(
                    tag,
                    |app: $crate::app::AppState, $r: <$op as moss_client::op::Op>::Request| async move {
                        let $app = &*app;
                        let $progress = $crate::progress::Progress::none();
                        $call.await
                    },
                )
            }
            route
        }), |$app, $r, $progress| $call)
    };
    ($op:ty, rest: family, |$app:ident, $r:ident, $progress:pat_param| $call:expr) => {
        $crate::tool!(@tool $op, None, |$app, $r, $progress| $call)
    };
    (@tool $op:ty, $route:expr, |$app:ident, $r:ident, $progress:pat_param| $call:expr) => {
        $crate::family::Tool {
            name: <$op as moss_client::op::Op>::SPEC.tool,
            description: <$op as moss_client::op::Op>::SPEC.doc,
            spec: <$op as moss_client::op::Op>::SPEC,
            schema: {
                fn schema() -> std::sync::Arc<rmcp::model::JsonObject> {
                    static SCHEMA: std::sync::OnceLock<std::sync::Arc<rmcp::model::JsonObject>> =
                        std::sync::OnceLock::new();
                    SCHEMA
                        .get_or_init(|| {
                            std::sync::Arc::new($crate::mcp::schema::schema_of::<
                                <$op as moss_client::op::Op>::Request,
                            >())
                        })
                        .clone()
                }
                schema
            },
            handler: |app, args, progress| {
                Box::pin(async move {
                    let $r: <$op as moss_client::op::Op>::Request = $crate::family::decode_args(
                        <$op as moss_client::op::Op>::SPEC.tool,
                        args,
                    )?;
                    let $app = &*app;
                    let $progress = progress;
                    $crate::family::encode($call.await)
                })
            },
            route: $route,
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_builds_its_schema_once_and_says_whether_it_takes_a_session() {
        for (_, t) in tools() {
            assert!(
                std::sync::Arc::ptr_eq(&(t.schema)(), &(t.schema)()),
                "{} built its schema twice",
                t.name
            );
        }
        let (_, recall) = tool("memory_recall").unwrap();
        assert!(recall.takes_session());
        let (_, store) = tool("capsule_store").unwrap();
        assert!(!store.takes_session());
    }

    #[test]
    fn every_op_table_entry_is_a_tool_and_every_tool_an_entry() {
        for f in FAMILIES {
            let tools: Vec<_> = f.tools.iter().map(|t| t.spec).collect();
            assert_eq!(
                tools, f.ops,
                "the {} family's tools are not its op table, entry for entry",
                f.name
            );
        }
    }

    #[test]
    fn names_are_unique_and_prefixed_by_their_family() {
        let mut seen = std::collections::HashSet::new();
        for (f, t) in tools() {
            assert!(seen.insert(t.name), "{} registered twice", t.name);
            let prefix = match f.name {
                "reasoning" => "branchmind",
                other => other,
            };
            assert!(
                t.name.starts_with(&format!("{prefix}_")),
                "{} in family {}",
                t.name,
                f.name
            );
            assert!(!t.description.is_empty());
        }
        let families: std::collections::HashSet<_> = FAMILIES.iter().map(|f| f.name).collect();
        assert_eq!(families.len(), FAMILIES.len());
    }

    #[test]
    fn narrowing_keeps_registry_order_and_names_an_unknown_toolset() {
        let all = Toolsets::all();
        assert_eq!(all.narrow("").unwrap(), all);
        assert_eq!(all.narrow("all").unwrap(), all);
        assert_eq!(all.narrow(" capsule ").unwrap().names(), ["capsule"]);
        let e = all.narrow("capsule,nope").unwrap_err();
        assert_eq!(e.0.details["toolset"], "nope");
        assert!(
            e.0.message
                .contains("valid toolsets: capsule, reasoning, tasks, memory, moss, core, all"),
            "{}",
            e.0.message
        );
        let capsule = all.narrow("capsule").unwrap();
        let e = capsule.narrow("tasks").unwrap_err();
        assert!(e.0.message.contains("not served"), "{}", e.0.message);
        assert_eq!(e.0.details["valid"], json!(["capsule", "core", "all"]));
        assert!(
            Toolsets::named(&["kapsule"])
                .unwrap_err()
                .contains("capsule")
        );
    }

    #[test]
    fn core_is_at_most_fifteen_registered_tools() {
        assert!(CORE.len() <= CORE_MAX, "core has {} tools", CORE.len());
        for name in CORE {
            assert!(tool(name).is_some(), "core names {name}, which is no tool");
        }
        let core = Toolsets::named(&["core"]).unwrap();
        assert_eq!(core.tools().len(), CORE.len(), "core names a tool twice");
    }

    #[test]
    fn toolsets_unite_and_a_subset_narrows_to_what_the_daemon_serves() {
        let core_memory = Toolsets::all().narrow("core,memory").unwrap();
        assert_eq!(core_memory.names(), ["core", "memory"]);
        let memory_tools = family("memory").unwrap().tools.len();
        let core_memory_tools = CORE.iter().filter(|t| t.starts_with("memory_")).count();
        assert_eq!(
            core_memory.tools().len(),
            CORE.len() + memory_tools - core_memory_tools
        );
        // Registry order, whatever order the toolsets were named in.
        let order: Vec<usize> = core_memory
            .tools()
            .iter()
            .map(|t| tools().position(|(_, r)| r.name == *t).unwrap())
            .collect();
        assert!(order.is_sorted(), "{:?}", core_memory.tools());
        // A daemon serving capsule only serves a `core` connection core's capsule tools.
        let capsule = Toolsets::named(&["capsule"]).unwrap();
        let narrowed = capsule.narrow("core").unwrap();
        assert!(!narrowed.tools().is_empty());
        assert!(narrowed.tools().iter().all(|t| t.starts_with("capsule_")));
        assert_eq!(toolsets_of("capsule_store"), ["capsule", "core", "all"]);
        assert_eq!(toolsets_of("capsule_purge"), ["capsule", "all"]);
    }

    #[test]
    fn core_instructions_say_how_to_reach_the_rest() {
        let all = Toolsets::all();
        let core = all.narrow("core").unwrap();
        let text = core.instructions(&all);
        for needle in [
            "/mcp?toolsets=all",
            "capsule (",
            "reasoning (",
            "tasks (",
            "memory (",
            "core,memory",
        ] {
            assert!(text.contains(needle), "{needle} missing from {text}");
        }
        assert!(
            !all.instructions(&all).contains("/mcp?toolsets="),
            "a connection served every tool is told of no others"
        );
    }
}
