//! The MCP face of the capsule tools: the tool list and schemas, the
//! result shape, the error envelope as a tool error, argument validation, and configuration
//! that disables tools.

use moss_tests::{McpSession, TestDaemon, capsule_text};
use serde_json::{Value, json};

/// The capsule family's tools, from the registry.
fn capsule_tools() -> impl Iterator<Item = &'static str> {
    moss_daemon::family::family("capsule")
        .expect("the capsule family is registered")
        .tools
        .iter()
        .map(|t| t.name)
}

/// Calls a tool that must succeed; checks the text/structured agreement and returns the value.
async fn ok(mcp: &mut McpSession, tool: &str, args: Value) -> Value {
    let r = mcp.call_tool(tool, args.clone()).await;
    assert_eq!(r["isError"], false, "{tool} {args}: {r}");
    let structured = r["structuredContent"].clone();
    assert!(structured.is_object(), "{tool}: {r}");
    let content = r["content"].as_array().expect("content array");
    assert_eq!(content.len(), 1, "{r}");
    assert_eq!(content[0]["type"], "text", "{r}");
    let text: Value = serde_json::from_str(content[0]["text"].as_str().unwrap())
        .unwrap_or_else(|e| panic!("{tool}: text is not JSON ({e}): {r}"));
    assert_eq!(
        text, structured,
        "{tool}: text and structuredContent differ"
    );
    structured
}

/// Calls a tool that must fail with `code`; checks the envelope in both places, returns `error`.
async fn err(mcp: &mut McpSession, tool: &str, args: Value, code: &str, status: u16) -> Value {
    let r = mcp.call_tool(tool, args.clone()).await;
    assert_eq!(r["isError"], true, "{tool} {args}: {r}");
    let structured = &r["structuredContent"];
    let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap())
        .unwrap_or_else(|e| panic!("{tool}: error text is not JSON ({e}): {r}"));
    assert_eq!(
        &text, structured,
        "{tool}: text and structuredContent differ"
    );
    assert_eq!(
        structured.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["error"],
        "{r}"
    );
    let e = &structured["error"];
    assert_eq!(e["code"], code, "{tool} {args}: {r}");
    assert_eq!(e["status"], status, "{r}");
    assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{r}");
    e.clone()
}

#[tokio::test]
async fn initialize_names_the_server_moss() {
    let d = TestDaemon::start().await;
    let mcp = d.mcp().await;
    let init = &mcp.initialize;
    assert_eq!(init["serverInfo"]["name"], "moss", "{init}");
    assert_eq!(init["serverInfo"]["version"], moss_client::VERSION);
    assert!(init["capabilities"]["tools"].is_object(), "{init}");
    assert!(
        init["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("capsule_store")),
        "{init}"
    );
}

#[tokio::test]
async fn tools_list_has_every_tool_with_described_schemas() {
    let d = TestDaemon::start().await;
    let mut mcp = d.mcp().await;
    let tools = mcp.list_tools().await;
    let mut family_instructions = std::collections::HashMap::new();
    for f in moss_daemon::family::FAMILIES {
        let session = d.mcp_with_toolsets(f.name).await;
        let text = session.initialize["instructions"]
            .as_str()
            .unwrap()
            .to_string();
        family_instructions.insert(f.name, text);
    }
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for (_, t) in moss_daemon::family::tools() {
        assert!(names.contains(&t.name), "{} missing from {names:?}", t.name);
    }
    for tool in &tools {
        let name = tool["name"].as_str().unwrap();
        let description = tool["description"].as_str().unwrap_or_default();
        assert!(description.len() > 20, "{name} has no description");
        assert!(
            !description.contains("  "),
            "{name}'s description has a run of spaces (a string continuation without `\\`?): \
             {description}"
        );
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object", "{name}: {schema}");
        let props = schema["properties"].as_object().unwrap_or_else(|| {
            panic!("{name}: inputSchema has no properties: {schema}");
        });
        // A tool that takes no argument (moss_workspaces) has none to describe. A field is described in its schema, or once in the instructions its family's
        // connection gets (the budget, paging, addressing and filter fields every read shares).
        let family = moss_daemon::family::tool(name).unwrap().0.name;
        let instructions = &family_instructions[family];
        for (prop, def) in props {
            assert!(
                def["description"].as_str().is_some_and(|s| !s.is_empty())
                    || instructions
                        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .any(|word| word == prop),
                "{name}.{prop} has no description and the {family} instructions do not name \
                 it: {def}"
            );
        }
        assert!(
            !schema.to_string().contains("$ref"),
            "{name}: subschemas are inlined: {schema}"
        );
    }
    let props = |tool: &str| -> Vec<String> {
        let t = tools.iter().find(|t| t["name"] == tool).unwrap();
        t["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    let required = |tool: &str| -> Value {
        let t = tools.iter().find(|t| t["name"] == tool).unwrap();
        t["inputSchema"]["required"].clone()
    };
    assert_eq!(required("capsule_store"), json!(["capsule_text"]));
    assert_eq!(required("capsule_fetch_many"), json!(["items"]));
    for p in [
        "capsule_text",
        "workspace",
        "name",
        "title",
        "tags",
        "source",
        "run_id",
        "phase",
        "role",
        "mode",
        "allow_thin",
    ] {
        assert!(props("capsule_store").contains(&p.to_string()), "store.{p}");
    }
    for p in ["id", "workspace", "name", "include_deleted", "include_text"] {
        assert!(props("capsule_fetch").contains(&p.to_string()), "fetch.{p}");
    }
    for p in ["items", "include_text", "include_deleted"] {
        assert!(
            props("capsule_fetch_many").contains(&p.to_string()),
            "fetch_many.{p}"
        );
    }
    for p in [
        "capsule_text",
        "title",
        "tags",
        "source",
        "run_id",
        "phase",
        "role",
    ] {
        assert!(
            props("capsule_update").contains(&p.to_string()),
            "update.{p}"
        );
    }
    for p in [
        "limit",
        "offset",
        "include_deleted",
        "run_id",
        "phase",
        "role",
    ] {
        assert!(props("capsule_list").contains(&p.to_string()), "list.{p}");
    }
    for p in [
        "workspace",
        "tag",
        "name_prefix",
        "limit",
        "offset",
        "include_deleted",
    ] {
        assert!(
            props("capsule_inventory").contains(&p.to_string()),
            "inventory.{p}"
        );
    }
    for p in ["include_text", "include_deleted", "run_id", "phase", "role"] {
        assert!(
            props("capsule_latest").contains(&p.to_string()),
            "latest.{p}"
        );
    }
    let store = tools.iter().find(|t| t["name"] == "capsule_store").unwrap();
    let mode = store["inputSchema"]["properties"]["mode"].to_string();
    assert!(mode.contains("error") && mode.contains("replace"), "{mode}");
}

#[tokio::test]
async fn the_capsule_tools_follow_the_rules_over_mcp() {
    let d = TestDaemon::start().await;
    let mut mcp = d.mcp().await;

    // store: named and unnamed, fetch keys, 409, replace.
    let a = ok(
        &mut mcp,
        "capsule_store",
        json!({"workspace": "StartupA", "name": "auth", "tags": ["auth"],
               "run_id": "r1", "phase": "design", "role": "architect",
               "capsule_text": capsule_text("a")}),
    )
    .await;
    let id = a["id"].as_str().unwrap().to_string();
    assert_eq!(id.len(), 26);
    assert_eq!(
        a["fetch_key"],
        json!({"moss_capsule": "auth", "moss_workspace": "StartupA"})
    );
    let u = ok(
        &mut mcp,
        "capsule_store",
        json!({"workspace": "startupa", "capsule_text": capsule_text("u")}),
    )
    .await;
    let uid = u["id"].as_str().unwrap().to_string();
    assert_eq!(u["fetch_key"], json!({"moss_id": uid}));
    let e = err(
        &mut mcp,
        "capsule_store",
        json!({"workspace": "STARTUPA", "name": "Auth", "capsule_text": capsule_text("b")}),
        "NAME_ALREADY_EXISTS",
        409,
    )
    .await;
    assert_eq!(e["details"]["id"], id.as_str());
    let r = ok(
        &mut mcp,
        "capsule_store",
        json!({"workspace": "STARTUPA", "name": "Auth", "mode": "replace", "tags": ["auth"],
               "run_id": "r1", "phase": "design", "role": "architect",
               "capsule_text": capsule_text("b")}),
    )
    .await;
    assert_eq!(r["id"], id.as_str());
    let e = err(
        &mut mcp,
        "capsule_store",
        json!({"capsule_text": "## Objective\nx\n"}),
        "CAPSULE_TOO_THIN",
        422,
    )
    .await;
    assert_eq!(
        e["details"]["missing"],
        json!([
            "Current status",
            "Decisions",
            "Next actions",
            "Key locations",
            "Open questions"
        ])
    );
    ok(
        &mut mcp,
        "capsule_store",
        json!({"capsule_text": "thin", "allow_thin": true, "workspace": "scratch"}),
    )
    .await;

    // fetch: same JSON as REST, peek, ambiguity, 404.
    let f = ok(
        &mut mcp,
        "capsule_fetch",
        json!({"workspace": "startupa", "name": "AUTH"}),
    )
    .await;
    let (_, rest) = d.call("GET", &format!("/capsules/{id}"), None).await;
    assert_eq!(f, rest, "MCP and REST answer the same capsule");
    assert_eq!(f["capsule_text"], capsule_text("b"));
    let peek = ok(
        &mut mcp,
        "capsule_fetch",
        json!({"id": id, "include_text": false}),
    )
    .await;
    assert!(peek.get("capsule_text").is_none(), "{peek}");
    assert_eq!(peek["capsule_chars"], f["capsule_chars"]);
    err(
        &mut mcp,
        "capsule_fetch",
        json!({"id": id, "workspace": "startupa", "name": "auth"}),
        "AMBIGUOUS_ADDRESSING",
        400,
    )
    .await;
    err(
        &mut mcp,
        "capsule_fetch",
        json!({"workspace": "startupa", "name": "nope"}),
        "NOT_FOUND",
        404,
    )
    .await;
    err(&mut mcp, "capsule_fetch", json!({}), "INVALID_REQUEST", 400).await;

    // fetch_many: partial success.
    let many = ok(
        &mut mcp,
        "capsule_fetch_many",
        json!({"items": [{"id": uid}, {"workspace": "startupa", "name": "missing"},
                         {"workspace": "startupa", "name": "auth"}],
               "include_text": false}),
    )
    .await;
    let got: Vec<&str> = many["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(got, [uid.as_str(), id.as_str()]);
    assert!(many["items"][0].get("capsule_text").is_none());
    assert_eq!(
        many["errors"][0]["ref"],
        json!({"workspace": "startupa", "name": "missing"})
    );
    assert_eq!(many["errors"][0]["code"], "NOT_FOUND");
    assert!(many["errors"][0]["message"].is_string());
    let too_many: Vec<Value> = (0..51).map(|_| json!({"id": uid})).collect();
    err(
        &mut mcp,
        "capsule_fetch_many",
        json!({"items": too_many}),
        "INVALID_REQUEST",
        400,
    )
    .await;

    // update: fields, lint, no fields, conflict.
    let upd = ok(
        &mut mcp,
        "capsule_update",
        json!({"workspace": "startupa", "name": "auth", "title": "Auth v2", "source": "codex"}),
    )
    .await;
    assert_eq!(upd["id"], id.as_str());
    assert_eq!(
        upd["fetch_key"], r["fetch_key"],
        "the fetch key follows the raw spelling of the last store"
    );
    err(
        &mut mcp,
        "capsule_update",
        json!({"id": id}),
        "INVALID_REQUEST",
        400,
    )
    .await;
    err(
        &mut mcp,
        "capsule_update",
        json!({"id": id, "capsule_text": "thin"}),
        "CAPSULE_TOO_THIN",
        422,
    )
    .await;
    let e = err(
        &mut mcp,
        "capsule_update",
        json!({"id": id, "title": "x", "if_updated_at": 1}),
        "CONFLICT",
        409,
    )
    .await;
    assert!(e["details"]["updated_at"].as_i64() > Some(1));
    let f = ok(&mut mcp, "capsule_fetch", json!({"id": id})).await;
    assert_eq!(f["title"], "Auth v2");
    assert_eq!(f["source"], "codex");
    assert_eq!(f["name"], "Auth", "replace took the new raw spelling");

    // latest: summary, text on request, filters, null.
    let l = ok(&mut mcp, "capsule_latest", json!({"workspace": "StartupA"})).await;
    assert_eq!(l["item"]["id"], id.as_str());
    assert!(l["item"].get("capsule_text").is_none());
    let l = ok(
        &mut mcp,
        "capsule_latest",
        json!({"workspace": "StartupA", "include_text": true, "phase": "design"}),
    )
    .await;
    assert_eq!(l["item"]["capsule_text"], capsule_text("b"));
    let l = ok(&mut mcp, "capsule_latest", json!({"workspace": "nobody"})).await;
    assert_eq!(l, json!({"item": null, "hint": holds_nothing("nobody")}));

    // list and inventory: summaries only.
    let list = ok(&mut mcp, "capsule_list", json!({"workspace": "startupa"})).await;
    assert_eq!(list["sort"], "updated_at_desc");
    assert_eq!(
        list["pagination"],
        json!({"limit": 20, "offset": 0, "has_more": false, "total": 2})
    );
    assert_eq!(list["items"][0]["id"], id.as_str());
    let list = ok(
        &mut mcp,
        "capsule_list",
        json!({"workspace": "startupa", "limit": 1000, "run_id": "r1"}),
    )
    .await;
    assert_eq!(list["pagination"]["limit"], 100);
    assert_eq!(list["pagination"]["total"], 1);
    let inv = ok(&mut mcp, "capsule_inventory", json!({})).await;
    assert_eq!(inv["pagination"]["limit"], 100);
    assert_eq!(inv["pagination"]["total"], 3);
    let inv_rest = d.call("GET", "/capsules/inventory", None).await.1;
    assert_eq!(inv, inv_rest, "MCP and REST answer the same inventory");
    for page in [&list, &inv] {
        for item in page["items"].as_array().unwrap() {
            assert!(item.get("capsule_text").is_none(), "{item}");
        }
    }
    let inv = ok(
        &mut mcp,
        "capsule_inventory",
        json!({"tag": "auth", "name_prefix": "AU", "workspace": "startupA", "limit": 9999}),
    )
    .await;
    assert_eq!(inv["pagination"]["limit"], 500);
    assert_eq!(inv["items"].as_array().unwrap().len(), 1);

    // delete: soft, then 404, visible with include_deleted, name freed.
    let del = ok(
        &mut mcp,
        "capsule_delete",
        json!({"workspace": "startupa", "name": "auth"}),
    )
    .await;
    assert_eq!(del, json!({"deleted": true, "id": id}));
    err(
        &mut mcp,
        "capsule_delete",
        json!({"id": id}),
        "NOT_FOUND",
        404,
    )
    .await;
    err(
        &mut mcp,
        "capsule_update",
        json!({"id": id, "title": "x"}),
        "NOT_FOUND",
        404,
    )
    .await;
    let f = ok(
        &mut mcp,
        "capsule_fetch",
        json!({"id": id, "include_deleted": true}),
    )
    .await;
    assert!(f["deleted_at"].is_i64());
    let l = ok(
        &mut mcp,
        "capsule_latest",
        json!({"workspace": "startupa", "include_deleted": true}),
    )
    .await;
    assert_eq!(l["item"]["id"], id.as_str(), "deletion bumps updated_at");
    let again = ok(
        &mut mcp,
        "capsule_store",
        json!({"workspace": "startupa", "name": "auth", "capsule_text": capsule_text("c")}),
    )
    .await;
    assert_ne!(again["id"], id.as_str());
}

#[tokio::test]
async fn bad_arguments_are_invalid_request_tool_errors_naming_the_field() {
    let d = TestDaemon::start().await;
    let mut mcp = d.mcp().await;
    let cases = [
        // Missing required.
        ("capsule_store", json!({"name": "x"}), "capsule_text"),
        ("capsule_fetch_many", json!({"include_text": true}), "items"),
        // Mistyped.
        (
            "capsule_fetch",
            json!({"id": "x", "include_text": "yes"}),
            "include_text",
        ),
        (
            "capsule_store",
            json!({"capsule_text": capsule_text("x"), "tags": "auth"}),
            "tags",
        ),
        ("capsule_list", json!({"limit": "ten"}), "limit"),
        ("capsule_store", json!({"capsule_text": 42}), "capsule_text"),
        (
            "capsule_store",
            json!({"capsule_text": capsule_text("x"), "mode": "upsert"}),
            "mode",
        ),
        (
            "capsule_fetch_many",
            json!({"items": [{"id": 7}]}),
            "items[0].id",
        ),
        // Unknown.
        ("capsule_fetch", json!({"id": "x", "nmae": "y"}), "nmae"),
        ("capsule_inventory", json!({"tags": ["a"]}), "tags"),
        (
            "capsule_update",
            json!({"id": "x", "title": "t", "new_name": "n"}),
            "new_name",
        ),
        (
            "capsule_fetch_many",
            json!({"items": [{"id": "x", "extra": 1}]}),
            "items[0].extra",
        ),
    ];
    for (tool, args, field) in cases {
        let e = err(&mut mcp, tool, args.clone(), "INVALID_REQUEST", 400).await;
        let message = e["message"].as_str().unwrap();
        assert!(
            message.contains(field),
            "{tool} {args}: message does not name {field}: {message}"
        );
        assert_eq!(e["details"]["field"], field, "{tool} {args}: {e}");
    }
    // Nothing was stored by the refused calls.
    let inv = ok(&mut mcp, "capsule_inventory", json!({})).await;
    assert_eq!(inv["pagination"]["total"], 0);

    // A tool called without `arguments` at all gets its defaults.
    let r = mcp
        .request("tools/call", json!({"name": "capsule_latest"}))
        .await;
    assert_eq!(r["result"]["isError"], false, "{r}");
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"item": null, "hint": holds_nothing("default")})
    );
}

#[tokio::test]
async fn a_malformed_tools_call_is_an_invalid_request_naming_the_field() {
    let d = TestDaemon::start().await;
    let mut mcp = d.mcp().await;
    for (params, field) in [
        (
            json!({"name": "capsule_store", "arguments": ["x"]}),
            "arguments",
        ),
        (
            json!({"name": "capsule_store", "arguments": "x"}),
            "arguments",
        ),
        (json!({"arguments": {}}), "name"),
        (json!({"name": 7, "arguments": {}}), "name"),
    ] {
        let r = mcp.request("tools/call", params.clone()).await;
        let result = r
            .get("result")
            .unwrap_or_else(|| panic!("{params}: a tool error result, not JSON-RPC's: {r}"));
        assert_eq!(result["isError"], true, "{r}");
        let e = &result["structuredContent"]["error"];
        assert_eq!(e["code"], "INVALID_REQUEST", "{r}");
        assert_eq!(e["status"], 400, "{r}");
        assert_eq!(e["details"]["field"], field, "{params}: {r}");
        assert!(e["message"].as_str().unwrap().contains(field), "{r}");
        // The text holds the same envelope.
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(&text["error"], e, "{r}");
    }
    // An unknown method is still -32601, and named.
    let r = mcp.request("resources/frobnicate", json!({})).await;
    assert_eq!(r["error"]["code"], -32601, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("resources/frobnicate"),
        "{r}"
    );
    // The session still works afterwards.
    let l = ok(&mut mcp, "capsule_latest", json!({})).await;
    assert_eq!(l, json!({"item": null, "hint": holds_nothing("default")}));
}

#[tokio::test]
async fn ending_a_session_is_no_content_and_closes_it() {
    let d = TestDaemon::start().await;
    let mut mcp = d.mcp().await;
    ok(&mut mcp, "capsule_latest", json!({})).await;
    assert_eq!(mcp.end().await, 204);
    // The session is gone: its id is no longer served.
    assert_eq!(mcp.request_status("tools/list", json!({})).await, 404);
}

#[tokio::test]
async fn an_unknown_tool_is_an_error_result() {
    let d = TestDaemon::start().await;
    let mut mcp = d.mcp().await;
    let r = mcp
        .request(
            "tools/call",
            json!({"name": "capsule_nonexistent", "arguments": {}}),
        )
        .await;
    let result = r
        .get("result")
        .unwrap_or_else(|| panic!("an unknown tool is a tool result, not a JSON-RPC error: {r}"));
    assert_eq!(result["isError"], true, "{r}");
    let e = &result["structuredContent"]["error"];
    assert_eq!(e["code"], "INVALID_REQUEST", "{r}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("capsule_nonexistent"),
        "{r}"
    );
    // The session still works afterwards.
    let l = ok(&mut mcp, "capsule_latest", json!({})).await;
    assert_eq!(l, json!({"item": null, "hint": holds_nothing("default")}));
}

#[tokio::test]
async fn disabled_tools_are_neither_listed_nor_callable() {
    let d = TestDaemon::start_with_config(Some(json!({
        "disabled_tools": ["capsule_delete", "capsule_inventory"]
    })))
    .await;
    let mut mcp = d.mcp().await;
    let names: Vec<String> = mcp
        .list_tools()
        .await
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert!(!names.contains(&"capsule_delete".to_string()), "{names:?}");
    assert!(
        !names.contains(&"capsule_inventory".to_string()),
        "{names:?}"
    );
    for t in [
        "capsule_store",
        "capsule_fetch",
        "capsule_fetch_many",
        "capsule_update",
        "capsule_latest",
        "capsule_list",
    ] {
        assert!(names.contains(&t.to_string()), "{t} should stay: {names:?}");
    }
    let s = ok(
        &mut mcp,
        "capsule_store",
        json!({"name": "keep", "capsule_text": capsule_text("k")}),
    )
    .await;
    let e = err(
        &mut mcp,
        "capsule_delete",
        json!({"id": s["id"]}),
        "INVALID_REQUEST",
        400,
    )
    .await;
    assert!(e["message"].as_str().unwrap().contains("disabled"), "{e}");
    err(
        &mut mcp,
        "capsule_inventory",
        json!({}),
        "INVALID_REQUEST",
        400,
    )
    .await;
    // The refused delete did nothing.
    let f = ok(&mut mcp, "capsule_fetch", json!({"name": "keep"})).await;
    assert!(f.get("deleted_at").is_none());
}

#[tokio::test]
async fn a_disabled_type_removes_all_its_tools() {
    let d = TestDaemon::start_with_config(Some(json!({"disabled_types": ["capsule"]}))).await;
    let mut mcp = d.mcp().await;
    let tools = mcp.list_tools().await;
    assert!(
        tools
            .iter()
            .all(|t| !t["name"].as_str().unwrap().starts_with("capsule_")),
        "{tools:?}"
    );
    for tool in capsule_tools() {
        let e = err(&mut mcp, tool, json!({}), "INVALID_REQUEST", 400).await;
        assert!(
            e["message"].as_str().unwrap().contains("disabled"),
            "{tool}: {e}"
        );
    }
    let (_, inv) = d.call("GET", "/capsules/inventory", None).await;
    assert_eq!(
        inv["pagination"]["total"], 0,
        "the refused store stored nothing"
    );
}

/// The compact JSON of a `tools/list` result, as an MCP client receives it, and its tool count.
async fn tools_list_size(mcp: &mut McpSession) -> (usize, usize) {
    let r = mcp.request("tools/list", json!({})).await;
    let result = &r["result"];
    let tools = result["tools"].as_array().map_or(0, Vec::len);
    (serde_json::to_string(result).unwrap().len(), tools)
}

/// The most bytes of compact JSON `tools/list` may take with every tool, and with `core`: every
/// byte is the agent's context before it does anything. (49,000 since the four searches took
/// `mode` and `explain`, about 700 bytes; the core list is unchanged.)
const FULL_LIST_MAX_BYTES: usize = 49_000;
const CORE_LIST_MAX_BYTES: usize = 16_000;

#[tokio::test]
async fn the_tool_lists_fit_their_budgets() {
    let d = TestDaemon::start().await;
    let mut all = d.mcp().await;
    let (full, tools) = tools_list_size(&mut all).await;
    assert_eq!(
        tools,
        moss_daemon::family::tools().count(),
        "/mcp serves every tool"
    );
    assert!(
        full <= FULL_LIST_MAX_BYTES,
        "tools/list of all {tools} tools is {full} bytes of compact JSON, over \
         {FULL_LIST_MAX_BYTES}: shorten descriptions (say a rule once, in the family \
         instructions)"
    );
    let mut core = d.mcp_with_toolsets("core").await;
    let (core_bytes, core_tools) = tools_list_size(&mut core).await;
    assert_eq!(core_tools, moss_daemon::family::CORE.len());
    assert!(
        core_tools <= 15,
        "core serves {core_tools} tools, more than 15"
    );
    assert!(
        core_bytes <= CORE_LIST_MAX_BYTES,
        "tools/list of core is {core_bytes} bytes of compact JSON, over {CORE_LIST_MAX_BYTES}"
    );
    eprintln!(
        "tools/list: all {tools} tools {full} bytes; core {core_tools} tools {core_bytes} bytes"
    );
    d.stop().await;
}

/// The hint an empty read of a workspace that holds nothing carries.
fn holds_nothing(ws: &str) -> String {
    format!("workspace {ws:?} holds nothing in any family; moss_workspaces lists the ones that do")
}
