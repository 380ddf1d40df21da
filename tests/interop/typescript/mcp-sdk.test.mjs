// Interop: the official MCP TypeScript SDK (npm `@modelcontextprotocol/sdk`) against a running
// mossd, over its StreamableHTTPClientTransport with the bearer token in requestInit headers.
//
// Run by ../run-typescript.sh, which starts mossd in a temp MOSS_HOME and exports:
//   MOSS_ADDR   base address, e.g. http://127.0.0.1:PORT (MCP is served at $MOSS_ADDR/mcp)
//   MOSS_TOKEN  the bearer token from $MOSS_HOME/token
//
// Assertions are made on the results as the SDK hands them over, which is the wire shape
// (camelCase MCP fields, snake_case Moss fields).

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";

// The tools `/mcp` serves by default, as the daemon's registry lists them (GET /tools): every
// enabled tool, in order. tools/list must list exactly these.
const SERVED_TOOLS = await servedTools();

async function servedTools() {
  const base = process.env.MOSS_ADDR.replace(/\/+$/, "");
  const res = await fetch(`${base}/tools`, {
    headers: { Authorization: `Bearer ${process.env.MOSS_TOKEN}` },
    signal: AbortSignal.timeout(30_000),
  });
  assert.equal(res.status, 200, `GET /tools: ${res.status}`);
  const { tools } = await res.json();
  return tools.filter((t) => t.enabled).map((t) => t.name);
}

/** Asserts tools/list named exactly the tools GET /tools serves, in its order. */
function assertListsServedTools(listed) {
  const names = listed.map((t) => t.name);
  const missing = SERVED_TOOLS.filter((n) => !names.includes(n));
  const extra = names.filter((n) => !SERVED_TOOLS.includes(n));
  assert.deepEqual(missing, [], `tools/list lacks ${missing}`);
  assert.deepEqual(extra, [], `tools/list has tools GET /tools does not: ${extra}`);
  assert.deepEqual(names, SERVED_TOOLS, "tools/list is in registry order");
}

// All six required sections, plus non-ASCII and blank lines to prove the text round-trips as is.
const CAPSULE_TEXT = [
  "## Objective",
  "Prove the TypeScript SDK talks to mossd — café, 日本語, emoji 🦀.",
  "",
  "## Current status",
  "Stored over streamable HTTP.",
  "## Decisions",
  "- node --test, no framework",
  "## Next actions",
  "1. fetch it back",
  "## Key locations",
  "`tests/interop/typescript/mcp-sdk.test.mjs`",
  "## Open questions",
  "none",
  "",
].join("\n");

// Every request and test is bounded, so a protocol hang fails fast instead of stalling CI.
const STEP_TIMEOUT_MS = 30_000;

function env(name) {
  const value = (process.env[name] ?? "").trim();
  assert.ok(value, `${name} is not set; run this through tests/interop/run-typescript.sh`);
  return value;
}

/** The MCP endpoint; `query` goes after /mcp (e.g. "?toolsets=tasks,reasoning"). */
function mcpUrl(query = "") {
  return new URL(env("MOSS_ADDR").replace(/\/+$/, "") + "/mcp" + query);
}

/** A client and its transport; `token === null` sends no Authorization header. */
function makeClient(token, query = "") {
  const headers = token === null ? {} : { Authorization: `Bearer ${token}` };
  const transport = new StreamableHTTPClientTransport(mcpUrl(query), { requestInit: { headers } });
  const client = new Client({ name: "moss-interop-typescript", version: "0.0.0" });
  return { client, transport };
}

/** The structured result of a successful tool call. */
async function callOk(client, name, args) {
  const result = await client.callTool({ name, arguments: args }, undefined, {
    timeout: STEP_TIMEOUT_MS,
  });
  assert.notEqual(result.isError, true, `${name} failed: ${JSON.stringify(result)}`);
  assert.equal(typeof result.structuredContent, "object", JSON.stringify(result));
  // The text content mirrors the structured content.
  const text = result.content.find((c) => c.type === "text");
  assert.ok(text, `${name}: no text content in ${JSON.stringify(result)}`);
  assert.deepEqual(JSON.parse(text.text), result.structuredContent);
  return result.structuredContent;
}

describe("MCP TypeScript SDK against mossd", { timeout: 4 * STEP_TIMEOUT_MS }, () => {
  const workspace = `/tmp/interop-typescript-${randomUUID().slice(0, 8)}`;
  const name = "handoff";
  let client;
  let transport;
  let storedId;

  before(async () => {
    ({ client, transport } = makeClient(env("MOSS_TOKEN")));
    await client.connect(transport, { timeout: STEP_TIMEOUT_MS });
  });

  after(async () => {
    // Ends the MCP session on the server (HTTP DELETE), then the local transport.
    await transport?.terminateSession();
    await client?.close();
  });

  test("initialize reports the moss server with tools", () => {
    assert.equal(client.getServerVersion()?.name, "moss");
    assert.ok(client.getServerVersion()?.version, "serverInfo.version is empty");
    assert.ok(client.getServerCapabilities()?.tools, "server does not advertise tools");
    assert.ok(transport.sessionId, "no Mcp-Session-Id after initialize");
    assert.match(client.getInstructions() ?? "", /capsule_store/);
  });

  test("tools/list is GET /tools, each tool with an object input schema", async () => {
    const { tools } = await client.listTools(undefined, { timeout: STEP_TIMEOUT_MS });
    assertListsServedTools(tools);
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const n of SERVED_TOOLS) {
      const tool = byName.get(n);
      assert.equal(tool.inputSchema?.type, "object", `${n} inputSchema: ${JSON.stringify(tool)}`);
      assert.equal(typeof tool.inputSchema.properties, "object", `${n} has no properties`);
      assert.ok(tool.description, `${n} has no description`);
    }
    assert.ok(byName.get("capsule_store").inputSchema.required?.includes("capsule_text"));
  });

  test("capsule_store then capsule_fetch round-trips the text", async () => {
    const stored = await callOk(client, "capsule_store", {
      capsule_text: CAPSULE_TEXT,
      workspace,
      name,
      title: "typescript sdk interop",
      tags: ["interop", "typescript"],
    });
    assert.equal(typeof stored.id, "string");
    assert.equal(stored.id.length, 26, `not a ULID: ${stored.id}`);
    assert.deepEqual(stored.fetch_key, { moss_workspace: workspace, moss_capsule: name });
    storedId = stored.id;

    const fetched = await callOk(client, "capsule_fetch", { workspace, name });
    assert.equal(fetched.id, storedId);
    assert.equal(fetched.capsule_text, CAPSULE_TEXT);
    assert.equal(fetched.title, "typescript sdk interop");
    assert.deepEqual(fetched.tags, ["interop", "typescript"]);

    const byId = await callOk(client, "capsule_fetch", { id: storedId, include_text: false });
    assert.equal(byId.id, storedId);
    assert.equal(byId.capsule_text, undefined, "include_text:false still returned text");
  });

  test("capsule_list shows the stored capsule as a summary", async () => {
    assert.ok(storedId, "capsule_store did not run first");
    const page = await callOk(client, "capsule_list", { workspace, limit: 5 });
    assert.deepEqual(
      page.items.map((c) => c.id),
      [storedId],
    );
    assert.equal(page.items[0].capsule_text, undefined, "list returned text");
    assert.equal(page.pagination.total, 1);
    assert.equal(page.pagination.limit, 5);
    assert.equal(page.pagination.has_more, false);
  });

  test("capsule_inventory finds it across workspaces by tag and name prefix", async () => {
    assert.ok(storedId, "capsule_store did not run first");
    const page = await callOk(client, "capsule_inventory", {
      tag: "typescript",
      name_prefix: "hand",
    });
    const item = page.items.find((c) => c.id === storedId);
    assert.ok(item, `inventory lacks ${storedId}: ${JSON.stringify(page)}`);
    assert.equal(item.workspace, workspace);
    assert.equal(item.capsule_text, undefined, "inventory returned text");
    for (const c of page.items) assert.ok(c.tags?.includes("typescript"), JSON.stringify(c));
  });

  test("fetching a missing name is a NOT_FOUND tool error", async () => {
    const result = await client.callTool(
      { name: "capsule_fetch", arguments: { workspace, name: "no-such-capsule" } },
      undefined,
      { timeout: STEP_TIMEOUT_MS },
    );
    assert.equal(result.isError, true, JSON.stringify(result));
    const { error } = result.structuredContent;
    assert.equal(error.code, "NOT_FOUND", JSON.stringify(error));
    assert.equal(error.status, 404, JSON.stringify(error));
    assert.match(error.message, /no-such-capsule/);
  });

  test("a thin capsule is a CAPSULE_TOO_THIN tool error naming the missing sections", async () => {
    const result = await client.callTool(
      { name: "capsule_store", arguments: { capsule_text: "just a note", workspace } },
      undefined,
      { timeout: STEP_TIMEOUT_MS },
    );
    assert.equal(result.isError, true, JSON.stringify(result));
    const { error } = result.structuredContent;
    assert.equal(error.code, "CAPSULE_TOO_THIN", JSON.stringify(error));
    assert.ok(error.details?.missing?.includes("Objective"), JSON.stringify(error));
  });
});

describe("MCP TypeScript SDK with the tasks and reasoning toolsets", { timeout: 2 * STEP_TIMEOUT_MS }, () => {
  const workspace = `/tmp/interop-typescript-${randomUUID().slice(0, 8)}`;
  let client;
  let transport;

  before(async () => {
    ({ client, transport } = makeClient(env("MOSS_TOKEN"), "?toolsets=tasks,reasoning"));
    await client.connect(transport, { timeout: STEP_TIMEOUT_MS });
  });

  after(async () => {
    await transport?.terminateSession();
    await client?.close();
  });

  test("tasks_create, then a branchmind_notes_commit on its target shows up in branchmind_show", async () => {
    assert.match(client.getInstructions() ?? "", /tasks_radar/);
    const plan = await callOk(client, "tasks_create", { workspace, title: "TypeScript plan" });
    assert.match(plan.item.id, /^PLAN-\d{3}$/);
    assert.equal(plan.item.kind, "plan");
    assert.equal(plan.event.type, "plan_created");
    assert.deepEqual(plan.reasoning_ref, {
      branch: `plan/${plan.item.id}`,
      notes_doc: "notes",
      graph_doc: `${plan.item.id}-graph`,
      trace_doc: `${plan.item.id}-trace`,
    });

    const note = "Decided over streamable HTTP — café 🦀";
    const committed = await callOk(client, "branchmind_notes_commit", {
      workspace,
      target: plan.item.id,
      content: note,
      title: "ts decision",
    });
    assert.equal(committed.inserted, true);
    assert.equal(committed.entry.branch, plan.reasoning_ref.branch);
    assert.equal(committed.entry.doc, "notes");
    assert.equal(committed.entry.kind, "note");

    const shown = await callOk(client, "branchmind_show", { workspace, target: plan.item.id });
    assert.equal(shown.branch, plan.reasoning_ref.branch);
    assert.deepEqual(
      shown.entries.map((e) => [e.seq, e.content, e.title]),
      [[committed.entry.seq, note, "ts decision"]],
    );
    assert.equal(shown.truncated, false);

    const trace = await callOk(client, "branchmind_show", {
      workspace,
      target: plan.item.id,
      doc_kind: "trace",
    });
    assert.deepEqual(
      trace.entries.map((e) => [e.kind, e.source_event_id]),
      [["event", plan.event.event_id]],
    );
  });
});

describe("MCP TypeScript SDK without the token", () => {
  for (const [label, token] of [
    ["no token", null],
    ["wrong token", "not-the-token"],
  ]) {
    test(`${label}: initialize fails with HTTP 401`, { timeout: STEP_TIMEOUT_MS }, async () => {
      const { client, transport } = makeClient(token);
      try {
        await assert.rejects(client.connect(transport, { timeout: STEP_TIMEOUT_MS }), (err) => {
          assert.ok(err instanceof StreamableHTTPError, `not an HTTP error: ${err}`);
          assert.equal(err.code, 401, String(err));
          assert.match(err.message, /UNAUTHORIZED/);
          return true;
        });
      } finally {
        await client.close();
      }
    });
  }
});
