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
//! **Toolsets.** `/mcp` serves the families the config's `toolsets` key enables (default: all),
//! and a connection narrows them with `/mcp?toolsets=capsule,tasks`: an agent that sees only the
//! tools it needs chooses better, and some clients cap the number of tools.

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

/// A set of families, in registry order: what one MCP connection is served.
#[derive(Debug, Clone)]
pub struct Toolsets(Vec<&'static Family>);

impl PartialEq for Toolsets {
    fn eq(&self, other: &Toolsets) -> bool {
        self.names() == other.names()
    }
}

impl Eq for Toolsets {}

impl Toolsets {
    /// Every family.
    pub fn all() -> Toolsets {
        Toolsets(FAMILIES.to_vec())
    }

    /// The families named in `names`, in registry order. An unknown name is an error naming it
    /// and listing the valid ones.
    pub fn named<S: AsRef<str>>(names: &[S]) -> std::result::Result<Toolsets, String> {
        let mut chosen = Vec::new();
        for name in names {
            let name = name.as_ref().trim();
            if name.is_empty() {
                continue;
            }
            match family(name) {
                Some(f) => chosen.push(f),
                None => {
                    return Err(format!(
                        "unknown toolset {name:?}; valid toolsets: {}",
                        family_names().join(", ")
                    ));
                }
            }
        }
        Ok(Toolsets(
            FAMILIES
                .iter()
                .copied()
                .filter(|f| chosen.iter().any(|c| c.name == f.name))
                .collect(),
        ))
    }

    /// Narrows these toolsets to the comma-separated list a connection asked for (`all` keeps
    /// them all). A name that is no family, or one this daemon does not serve, is
    /// `INVALID_REQUEST` naming it and listing the ones it may ask for.
    pub fn narrow(&self, requested: &str) -> Result<Toolsets> {
        let served = || self.0.iter().map(|f| f.name).collect::<Vec<_>>().join(", ");
        let names: Vec<&str> = requested
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        if names.is_empty() || names == ["all"] {
            return Ok(self.clone());
        }
        let mut chosen = Vec::new();
        for name in names {
            match self.0.iter().find(|f| f.name == name) {
                Some(f) => chosen.push(*f),
                None => {
                    let why = if family(name).is_some() {
                        "is not served by this daemon (see the config's toolsets key)"
                    } else {
                        "is not a toolset"
                    };
                    return Err(Error::invalid_field(
                        "toolsets",
                        format!(
                            "toolset {name:?} {why}; valid toolsets: {} (or all)",
                            served()
                        ),
                    )
                    .with_details(json!({
                        "field": "toolsets",
                        "toolset": name,
                        "valid": self.0.iter().map(|f| f.name).collect::<Vec<_>>(),
                    })));
                }
            }
        }
        Ok(Toolsets(
            self.0
                .iter()
                .copied()
                .filter(|f| chosen.iter().any(|c| c.name == f.name))
                .collect(),
        ))
    }

    pub fn contains(&self, family: &str) -> bool {
        self.0.iter().any(|f| f.name == family)
    }

    pub fn families(&self) -> &[&'static Family] {
        &self.0
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.0.iter().map(|f| f.name).collect()
    }

    /// The MCP `instructions` for these families: a line on Moss, then each family's paragraph.
    pub fn instructions(&self) -> String {
        let mut out = String::from(
            "Moss is a local memory service shared by agent sessions. Every tool answers JSON; a \
             failure is a tool error whose content is {\"error\":{code,message,status,details}}.",
        );
        for f in &self.0 {
            out.push_str("\n\n");
            out.push_str(f.instructions);
        }
        out
    }
}

/// Decodes a tool's arguments, naming the bad field in `INVALID_REQUEST`.
pub fn decode_args<T: DeserializeOwned>(tool: &str, args: Value) -> Result<T> {
    crate::api::json::decode_value(&format!("arguments for {tool}"), args)
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
            e.0.message.contains("valid toolsets: capsule"),
            "{}",
            e.0.message
        );
        let none = Toolsets(Vec::new());
        let e = none.narrow("capsule").unwrap_err();
        assert!(e.0.message.contains("not served"), "{}", e.0.message);
        assert!(
            Toolsets::named(&["kapsule"])
                .unwrap_err()
                .contains("capsule")
        );
    }
}
