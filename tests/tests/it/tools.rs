//! The tool list through `GET /tools` and MCP `tools/list`, and the
//! `disabled_tools` / `disabled_types` configuration.

use moss_tests::{TestDaemon, capsule_text};
use serde_json::{Value, json};

/// A family's tools, in registry order.
fn family_tools(family: &str) -> Vec<&'static str> {
    moss_daemon::family::family(family)
        .unwrap_or_else(|| panic!("the {family} family is registered"))
        .tools
        .iter()
        .map(|t| t.name)
        .collect()
}

/// The capsule family's tools, from the registry.
fn capsule_tools() -> Vec<&'static str> {
    family_tools("capsule")
}

/// `GET /tools` → the `tools` array.
async fn rest_tools(d: &TestDaemon) -> Vec<Value> {
    let (s, body) = d.call("GET", "/tools", None).await;
    assert_eq!(s, 200, "{body}");
    body["tools"].as_array().expect("tools array").clone()
}

fn enabled_of(tools: &[Value], name: &str) -> bool {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed"))["enabled"]
        .as_bool()
        .unwrap()
}

async fn mcp_names(d: &TestDaemon) -> Vec<String> {
    let mut mcp = d.mcp().await;
    mcp.list_tools()
        .await
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn get_tools_lists_every_capsule_tool_enabled() {
    let d = TestDaemon::start().await;
    let tools = rest_tools(&d).await;
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for t in capsule_tools() {
        assert_eq!(
            names.iter().filter(|n| **n == t).count(),
            1,
            "{t} listed once: {names:?}"
        );
    }
    let capsule_family: Vec<&str> = tools
        .iter()
        .filter(|t| t["family"] == "capsule")
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        capsule_family,
        capsule_tools(),
        "the capsule family, in order"
    );
    for t in &tools {
        let mut keys: Vec<&String> = t.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            ["description", "enabled", "family", "name", "toolsets"],
            "{t}"
        );
        let family = t["family"].as_str().unwrap();
        let toolsets = t["toolsets"].as_array().unwrap();
        assert!(
            toolsets.first() == Some(&json!(family)) && toolsets.last() == Some(&json!("all")),
            "a tool is in its family's toolset and in all: {t}"
        );
        assert!(
            t["description"].as_str().is_some_and(|s| s.len() > 10),
            "{t}"
        );
        assert_eq!(t["enabled"], true, "nothing is disabled by default: {t}");
    }
    // MCP lists the same tools.
    let mut listed = mcp_names(&d).await;
    listed.sort();
    let mut expected: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    expected.sort();
    assert_eq!(listed, expected);
}

#[tokio::test]
async fn the_new_tools_declare_their_required_arguments() {
    // The required arguments of search, compose and append.
    let d = TestDaemon::start().await;
    let mut mcp = d.mcp().await;
    let tools = mcp.list_tools().await;
    let tool = |name: &str| -> Value {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} not listed"))
            .clone()
    };
    let required = |name: &str| -> Vec<String> {
        let mut r: Vec<String> = tool(name)["inputSchema"]["required"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        r.sort();
        r
    };
    let props = |name: &str| -> Vec<String> {
        tool(name)["inputSchema"]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{name} has no properties"))
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(required("capsule_search"), ["query"]);
    assert_eq!(required("capsule_compose"), ["items"]);
    // One section (section + content) or several (sections): neither is required alone.
    assert!(required("capsule_append").is_empty());
    for p in [
        "section",
        "content",
        "sections",
        "position",
        "if_placeholder",
        "if_revision",
    ] {
        assert!(props("capsule_append").contains(&p.to_string()), "{p}");
    }
    assert_eq!(required("capsule_import"), ["path"]);
    assert!(
        required("capsule_export").is_empty(),
        "every export argument is optional"
    );
    for t in [
        "capsule_bulk_delete",
        "capsule_bulk_update",
        "capsule_purge",
    ] {
        assert!(
            required(t).is_empty(),
            "{t}: filters are optional in the schema"
        );
    }
    let has = |tool: &str, fields: &[&str]| {
        let p = props(tool);
        for f in fields {
            assert!(p.contains(&f.to_string()), "{tool}.{f} missing from {p:?}");
        }
    };
    has(
        "capsule_search",
        &[
            "query",
            "workspace",
            "tag",
            "run_id",
            "phase",
            "role",
            "include_deleted",
            "limit",
            "offset",
        ],
    );
    has(
        "capsule_compose",
        &["items", "format", "store_as", "sections"],
    );
    has(
        "capsule_append",
        &["id", "workspace", "name", "section", "content"],
    );
    let filters = ["workspace", "tag", "name_prefix", "run_id", "phase", "role"];
    has("capsule_bulk_delete", &filters);
    has("capsule_bulk_update", &filters);
    has(
        "capsule_bulk_update",
        &["set_phase", "set_role", "set_tags"],
    );
    has("capsule_purge", &["workspace", "older_than_days"]);
    has("capsule_export", &["path", "workspace", "include_deleted"]);
    has("capsule_import", &["path", "mode"]);
}

#[tokio::test]
async fn a_disabled_tool_is_unlisted_and_refused() {
    let d = TestDaemon::start_with_config(Some(json!({"disabled_tools": ["capsule_purge"]}))).await;
    let tools = rest_tools(&d).await;
    assert!(!enabled_of(&tools, "capsule_purge"), "GET /tools says so");
    for t in capsule_tools().iter().filter(|t| **t != "capsule_purge") {
        assert!(enabled_of(&tools, t), "{t} stays enabled");
    }
    let names = mcp_names(&d).await;
    assert!(!names.contains(&"capsule_purge".to_string()), "{names:?}");
    for t in capsule_tools().iter().filter(|t| **t != "capsule_purge") {
        assert!(
            names.contains(&t.to_string()),
            "{t} stays listed: {names:?}"
        );
    }

    // A deleted capsule that the refused purge must not touch.
    let mut mcp = d.mcp().await;
    let s = mcp
        .call_tool(
            "capsule_store",
            json!({"name": "old", "capsule_text": capsule_text("old")}),
        )
        .await;
    let id = s["structuredContent"]["id"].as_str().unwrap().to_string();
    let r = mcp.call_tool("capsule_delete", json!({"id": id})).await;
    assert_eq!(r["isError"], false, "{r}");

    let r = mcp.call_tool("capsule_purge", json!({})).await;
    assert_eq!(r["isError"], true, "{r}");
    let e = &r["structuredContent"]["error"];
    assert_eq!(e["code"], "INVALID_REQUEST", "{r}");
    let m = e["message"].as_str().unwrap();
    assert!(m.contains("capsule_purge") && m.contains("disabled"), "{m}");
    let (s, c) = d
        .call("GET", &format!("/capsules/{id}?include_deleted=true"), None)
        .await;
    assert_eq!(s, 200, "the refused purge purged nothing: {c}");

    // The other new tools still work.
    let r = mcp
        .call_tool("capsule_search", json!({"query": "old"}))
        .await;
    assert_eq!(r["isError"], false, "{r}");
}

#[tokio::test]
async fn a_disabled_type_turns_off_every_capsule_tool() {
    let d = TestDaemon::start_with_config(Some(json!({"disabled_types": ["capsule"]}))).await;
    let tools = rest_tools(&d).await;
    for t in capsule_tools() {
        assert!(!enabled_of(&tools, t), "{t} is disabled");
    }
    let names = mcp_names(&d).await;
    assert!(
        names.iter().all(|n| !n.starts_with("capsule_")),
        "{names:?}"
    );
    let mut mcp = d.mcp().await;
    for (tool, args) in [
        ("capsule_search", json!({"query": "x"})),
        ("capsule_compose", json!({"items": [{"name": "x"}]})),
        (
            "capsule_append",
            json!({"name": "x", "section": "Objective", "content": "y"}),
        ),
        ("capsule_bulk_delete", json!({"workspace": "default"})),
        (
            "capsule_bulk_update",
            json!({"workspace": "default", "set_phase": "x"}),
        ),
        ("capsule_purge", json!({})),
        ("capsule_export", json!({})),
        ("capsule_import", json!({"path": "x.jsonl"})),
    ] {
        let r = mcp.call_tool(tool, args).await;
        assert_eq!(r["isError"], true, "{tool}: {r}");
        let e = &r["structuredContent"]["error"];
        assert_eq!(e["code"], "INVALID_REQUEST", "{tool}: {r}");
        assert!(
            e["message"].as_str().unwrap().contains("disabled"),
            "{tool}: {e}"
        );
    }
}

/// `/mcp?toolsets=capsule` serves exactly the capsule family's tools, with instructions composed
/// from it, and its tools answer as usual.
#[tokio::test]
async fn a_connection_narrowed_to_a_toolset_lists_exactly_its_tools() {
    let d = TestDaemon::start().await;
    let mut mcp = d.mcp_with_toolsets("capsule").await;
    let names: Vec<String> = mcp
        .list_tools()
        .await
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, capsule_tools());
    let instructions = mcp.initialize["instructions"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        instructions.contains("capsule_store"),
        "the capsule family's instructions: {instructions}"
    );
    let r = mcp
        .call_tool("capsule_store", json!({"capsule_text": capsule_text("t")}))
        .await;
    assert_ne!(r["isError"], true, "{r}");
    assert!(
        !instructions.contains("branchmind_") && !instructions.contains("tasks_radar"),
        "only the served family's instructions: {instructions}"
    );
    // `all` serves every family; two names serve both, in registry order.
    let mut all = d.mcp_with_toolsets("all").await;
    assert_eq!(
        all.list_tools().await.len(),
        moss_daemon::family::tools().count()
    );
    let mut two = d.mcp_with_toolsets("tasks,capsule").await;
    let names: Vec<String> = two
        .list_tools()
        .await
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let registry_order: Vec<&str> = capsule_tools()
        .into_iter()
        .chain(family_tools("tasks"))
        .collect();
    assert_eq!(names, registry_order);
}

/// An unknown toolset is refused before any MCP exchange: 400 with the error envelope naming
/// it and listing the valid ones.
#[tokio::test]
async fn an_unknown_toolset_is_a_400_naming_it() {
    let d = TestDaemon::start().await;
    let (s, body) = d
        .call(
            "POST",
            "/mcp?toolsets=capsule,kapsule",
            Some(
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"}}}),
            ),
        )
        .await;
    assert_eq!(s, 400, "{body}");
    assert_eq!(body["error"]["code"], "INVALID_REQUEST", "{body}");
    assert_eq!(body["error"]["details"]["toolset"], "kapsule", "{body}");
    assert_eq!(body["error"]["details"]["field"], "toolsets", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("\"kapsule\"")
            && message
                .contains("valid toolsets: capsule, reasoning, tasks, memory, moss, core, all"),
        "{message}"
    );
    assert_eq!(
        body["error"]["details"]["valid"],
        json!([
            "capsule",
            "reasoning",
            "tasks",
            "memory",
            "moss",
            "core",
            "all"
        ]),
        "{body}"
    );
}

/// `core` is at most 15 tools; `core,memory` serves their union in registry order; the core
/// session's instructions say how to reach the rest; a tool outside the connection's toolsets
/// is refused naming the toolsets it is in.
#[tokio::test]
async fn toolsets_are_named_lists_of_tools_and_unite() {
    let d = TestDaemon::start().await;
    let names = |tools: Vec<Value>| -> Vec<String> {
        tools
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let mut core = d.mcp_with_toolsets("core").await;
    let core_names = names(core.list_tools().await);
    assert!(core_names.len() <= 15, "{core_names:?}");
    for t in [
        "capsule_store",
        "capsule_latest",
        "tasks_radar",
        "memory_recall",
    ] {
        assert!(core_names.contains(&t.to_string()), "{t}: {core_names:?}");
    }
    let instructions = core.initialize["instructions"].as_str().unwrap();
    assert!(
        instructions.contains("/mcp?toolsets=all") && instructions.contains("reasoning ("),
        "{instructions}"
    );
    let r = core.call_tool("capsule_purge", json!({})).await;
    assert_eq!(r["isError"], true, "{r}");
    let m = r["structuredContent"]["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("capsule, all") && m.contains("/mcp?toolsets=core,capsule"),
        "{m}"
    );

    let mut both = d.mcp_with_toolsets("memory,core").await;
    let both_names = names(both.list_tools().await);
    let registry: Vec<&str> = moss_daemon::family::tools().map(|(_, t)| t.name).collect();
    let expected: Vec<String> = registry
        .iter()
        .filter(|t| t.starts_with("memory_") || core_names.contains(&t.to_string()))
        .map(|t| t.to_string())
        .collect();
    assert_eq!(both_names, expected, "the union, in registry order");
    assert!(both_names.len() > core_names.len());

    // GET /tools says which toolsets each tool is in.
    let tools = rest_tools(&d).await;
    let of = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["toolsets"].clone();
    assert_eq!(of("capsule_store"), json!(["capsule", "core", "all"]));
    assert_eq!(of("capsule_purge"), json!(["capsule", "all"]));
    d.stop().await;

    // The config's toolsets may name core: /mcp with no query serves it.
    let d = TestDaemon::start_with_config(Some(json!({"toolsets": ["core"]}))).await;
    assert_eq!(mcp_names(&d).await, core_names);
    let tools = rest_tools(&d).await;
    assert!(enabled_of(&tools, "capsule_store"));
    assert!(!enabled_of(&tools, "capsule_purge"));
    d.stop().await;
}

/// `GET /tools` names each tool's family; a family the config's `toolsets` leaves out is listed
/// as not enabled and not served on `/mcp`.
#[tokio::test]
async fn tools_carry_their_family_and_the_config_toolsets_apply() {
    let d = TestDaemon::start().await;
    let tools = rest_tools(&d).await;
    assert_eq!(tools.len(), moss_daemon::family::tools().count());
    for (t, (family, tool)) in tools.iter().zip(moss_daemon::family::tools()) {
        assert_eq!(
            (t["name"].as_str(), t["family"].as_str()),
            (Some(tool.name), Some(family.name)),
            "{t}"
        );
    }
    let families: Vec<&str> = moss_daemon::family::FAMILIES
        .iter()
        .map(|f| f.name)
        .collect();
    assert_eq!(
        families,
        ["capsule", "reasoning", "tasks", "memory", "moss"]
    );
    d.stop().await;
    let d = TestDaemon::start_with_config(Some(json!({"toolsets": ["capsule"]}))).await;
    assert_eq!(mcp_names(&d).await, capsule_tools());
}
