// Interop: the MCP Inspector CLI (npm `@modelcontextprotocol/inspector`, `--cli` mode) against
// a running mossd over streamable HTTP, with the bearer token passed as `--header`.
//
// Run by ../run-inspector.sh, which starts mossd in a temp MOSS_HOME and exports:
//   MOSS_ADDR   base address, e.g. http://127.0.0.1:PORT (MCP is served at $MOSS_ADDR/mcp)
//   MOSS_TOKEN  the bearer token from $MOSS_HOME/token
//
// Each call is one inspector process (connect, one method, disconnect), as a script or CI job
// would use it. It prints the method's result as JSON on stdout; on failure it prints
// `{"error":{"code":...}}` on stderr and exits non-zero (3 auth required, 5 tool error).

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const INSPECTOR = join(HERE, "node_modules", ".bin", "mcp-inspector");

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

const CAPSULE_TEXT =
  "## Objective\nProve the Inspector CLI talks to mossd — ünïcode ok.\n" +
  "## Current status\nx\n## Decisions\nx\n## Next actions\nx\n## Key locations\nx\n" +
  "## Open questions\nx\n";

// One inspector run (node start-up, connect, one request) takes about 2 s here.
const RUN_TIMEOUT_MS = 60_000;
const TOOL_ERROR_EXIT = 5;
const AUTH_REQUIRED_EXIT = 3;

// The inspector keeps a catalog, OAuth state and secrets under ~/.mcp-inspector; give it a
// throwaway home so a test run neither reads nor leaves anything in the real one.
const INSPECTOR_HOME = mkdtempSync(join(tmpdir(), "moss-inspector-home-"));
after(() => rmSync(INSPECTOR_HOME, { recursive: true, force: true }));

function env(name) {
  const value = (process.env[name] ?? "").trim();
  assert.ok(value, `${name} is not set; run this through tests/interop/run-inspector.sh`);
  return value;
}

/**
 * Runs `mcp-inspector --cli <url> [--header auth] ...args` with no stdin and no TTY.
 * `token === null` sends no Authorization header. Returns the exit status, both outputs, and
 * stdout (or, failing that, stderr) parsed as JSON when it is JSON.
 */
function inspector(args, { token = env("MOSS_TOKEN") } = {}) {
  const url = env("MOSS_ADDR").replace(/\/+$/, "") + "/mcp";
  const auth = token === null ? [] : ["--header", `Authorization: Bearer ${token}`];
  const run = spawnSync(INSPECTOR, ["--cli", url, "--transport", "http", ...auth, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: RUN_TIMEOUT_MS,
    env: {
      ...process.env,
      HOME: INSPECTOR_HOME,
      MCP_CATALOG_PATH: join(INSPECTOR_HOME, "mcp.json"),
      // Never open a browser or prompt, whatever the CI detection says.
      MCP_AUTO_OPEN_ENABLED: "false",
    },
  });
  assert.equal(run.error, undefined, `could not run ${INSPECTOR}: ${run.error}`);
  const parse = (text) => {
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  };
  const shown = `exit ${run.status}\n--- stdout ---\n${run.stdout}\n--- stderr ---\n${run.stderr}`;
  return { ...run, out: parse(run.stdout), err: parse(run.stderr.trim()), shown };
}

/** `tools/call` whose `--tool-arg`s are `key=value` (values that parse as JSON are JSON). */
function callTool(name, toolArgs, opts) {
  return inspector(["--method", "tools/call", "--tool-name", name, "--tool-arg", ...toolArgs], opts);
}

/** The structured result of a tool call that must succeed. */
function callOk(name, toolArgs) {
  const run = callTool(name, toolArgs);
  assert.equal(run.status, 0, `${name}: ${run.shown}`);
  assert.ok(run.out, `${name}: stdout is not JSON: ${run.shown}`);
  assert.equal(run.out.isError, false, `${name}: ${run.shown}`);
  const text = run.out.content.find((c) => c.type === "text");
  assert.deepEqual(JSON.parse(text.text), run.out.structuredContent);
  return run.out.structuredContent;
}

describe("MCP Inspector CLI against mossd", () => {
  const workspace = `/tmp/interop-inspector-${randomUUID().slice(0, 8)}`;
  const name = "handoff";
  let storedId;

  test("tools/list is GET /tools, with object input schemas", () => {
    const run = inspector(["--method", "tools/list"]);
    assert.equal(run.status, 0, run.shown);
    assertListsServedTools(run.out.tools);
    const byName = new Map(run.out.tools.map((t) => [t.name, t]));
    for (const n of SERVED_TOOLS) {
      assert.equal(byName.get(n).inputSchema?.type, "object", `${n}: ${JSON.stringify(byName.get(n))}`);
    }
    assert.ok(byName.get("capsule_store").inputSchema.required.includes("capsule_text"));
  });

  test("capsule_store, then capsule_fetch returns the same text", () => {
    const stored = callOk("capsule_store", [
      `capsule_text=${CAPSULE_TEXT}`,
      `workspace=${workspace}`,
      `name=${name}`,
      'tags=["interop","inspector"]',
    ]);
    assert.equal(stored.id.length, 26, `not a ULID: ${stored.id}`);
    assert.deepEqual(stored.fetch_key, { moss_workspace: workspace, moss_capsule: name });
    storedId = stored.id;

    const fetched = callOk("capsule_fetch", [`workspace=${workspace}`, `name=${name}`]);
    assert.equal(fetched.id, storedId);
    assert.equal(fetched.capsule_text, CAPSULE_TEXT);
    assert.deepEqual(fetched.tags, ["interop", "inspector"]);
  });

  test("capsule_update changes the title; capsule_latest and capsule_list see it", () => {
    assert.ok(storedId, "capsule_store did not run first");
    const updated = callOk("capsule_update", [`id=${storedId}`, "title=updated by inspector"]);
    assert.equal(updated.id, storedId);

    const latest = callOk("capsule_latest", [`workspace=${workspace}`, "include_text=true"]);
    assert.equal(latest.item.id, storedId);
    assert.equal(latest.item.title, "updated by inspector");
    assert.equal(latest.item.capsule_text, CAPSULE_TEXT);

    const page = callOk("capsule_list", [`workspace=${workspace}`]);
    assert.deepEqual(
      page.items.map((c) => c.id),
      [storedId],
    );
    assert.equal(page.items[0].capsule_text, undefined, "list returned text");
  });

  test("capsule_delete, then capsule_fetch is a NOT_FOUND tool error (exit 5)", () => {
    assert.ok(storedId, "capsule_store did not run first");
    const deleted = callOk("capsule_delete", [`workspace=${workspace}`, `name=${name}`]);
    assert.equal(deleted.id, storedId);

    const run = callTool("capsule_fetch", [`workspace=${workspace}`, `name=${name}`]);
    assert.equal(run.status, TOOL_ERROR_EXIT, run.shown);
    assert.equal(run.out?.isError, true, run.shown);
    const { error } = run.out.structuredContent;
    assert.equal(error.code, "NOT_FOUND", run.shown);
    assert.equal(error.status, 404, run.shown);
    assert.equal(run.err?.error?.code, "tool_is_error", run.shown);
  });

  for (const [label, token] of [
    ["no token", null],
    ["wrong token", "not-the-token"],
  ]) {
    test(`${label}: the inspector reports the daemon's 401`, () => {
      // --stored-auth-only: never start an interactive OAuth flow on a 401.
      const run = inspector(["--method", "tools/list", "--stored-auth-only"], { token });
      assert.equal(run.status, AUTH_REQUIRED_EXIT, run.shown);
      assert.equal(run.out, undefined, `printed a result: ${run.shown}`);
      assert.equal(run.err?.error?.code, "auth_required", run.shown);
      assert.match(run.err.error.message, /UNAUTHORIZED/, run.shown);
    });
  }
});
