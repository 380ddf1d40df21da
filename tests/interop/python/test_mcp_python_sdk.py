"""Interop: the official MCP Python SDK (PyPI `mcp`) against a running mossd.

Run by ../run-python.sh, which starts mossd in a temp MOSS_HOME and exports:
  MOSS_ADDR   base address, e.g. http://127.0.0.1:PORT (MCP is served at $MOSS_ADDR/mcp)
  MOSS_TOKEN  the bearer token from $MOSS_HOME/token

Everything goes through the SDK's streamable HTTP client and `ClientSession`; assertions are
made on the wire shape (`model_dump(by_alias=True)`), so they read like the MCP spec and do not
depend on the SDK's Python attribute spelling (camelCase in 1.x, snake_case in 2.x).
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from conftest import STEP_TIMEOUT_S, VALID_CAPSULE, env, wire
from mcp import ClientSession

# The transport's name and calling convention changed across SDK releases: newer ones offer
# `streamable_http_client(url, http_client=...)`, older ones `streamablehttp_client(url, headers=...)`.
try:
    from mcp.client.streamable_http import streamable_http_client as _streamable_http_client
except ImportError:  # pragma: no cover - older SDKs
    _streamable_http_client = None
try:
    from mcp.client.streamable_http import streamablehttp_client as _streamablehttp_client
except ImportError:
    _streamablehttp_client = None

# SDK 2.x is built on `httpx2`; 1.x on `httpx`.
try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover - older SDKs
    import httpx  # type: ignore[no-redef]

def _tools() -> list[dict[str, Any]]:
    """The daemon's registry as `GET /tools` lists it: name, family, enabled, in order."""
    response = httpx.get(
        env("MOSS_ADDR").rstrip("/") + "/tools",
        headers={"Authorization": f"Bearer {env('MOSS_TOKEN')}"},
        timeout=STEP_TIMEOUT_S,
    )
    response.raise_for_status()
    tools: list[dict[str, Any]] = response.json()["tools"]
    return tools


def registered_tools(family: str) -> list[str]:
    """The tools of `family` as the daemon's registry lists them (`GET /tools`)."""
    return [t["name"] for t in _tools() if t["family"] == family]


def served_tools() -> list[str]:
    """The tools `/mcp` serves by default: every enabled tool of `GET /tools`, in its order."""
    return [t["name"] for t in _tools() if t["enabled"]]

def tools_in(toolset: str) -> list[str]:
    """The enabled tools of `GET /tools` in `toolset` (a family, `core` or `all`), in its order."""
    return [t["name"] for t in _tools() if t["enabled"] and toolset in t.get("toolsets", [])]


def _mcp_url(query: str = "") -> str:
    return env("MOSS_ADDR").rstrip("/") + "/mcp" + query


@contextlib.asynccontextmanager
async def mcp_session(
    token: str | None, http_statuses: list[int] | None = None, query: str = ""
) -> AsyncIterator[tuple[ClientSession, dict[str, Any]]]:
    """An initialized SDK session to mossd, and the wire form of its InitializeResult.

    `token=None` sends no Authorization header. HTTP status codes the SDK received are appended
    to `http_statuses` when given. `query` goes after /mcp (e.g. "?toolsets=capsule").
    """
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}

    async def record(response: Any) -> None:
        if http_statuses is not None:
            http_statuses.append(response.status_code)

    def make_http_client(
        headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None
    ) -> Any:
        return httpx.AsyncClient(
            headers=headers,
            timeout=timeout or httpx.Timeout(STEP_TIMEOUT_S),
            auth=auth,
            event_hooks={"response": [record]},
        )

    async with contextlib.AsyncExitStack() as stack:
        if _streamable_http_client is not None:
            http = await stack.enter_async_context(make_http_client(headers=headers))
            streams = await stack.enter_async_context(
                _streamable_http_client(_mcp_url(query), http_client=http)
            )
        else:
            streams = await stack.enter_async_context(
                _streamablehttp_client(  # type: ignore[misc]
                    _mcp_url(query), headers=headers, httpx_client_factory=make_http_client
                )
            )
        read_stream, write_stream = streams[0], streams[1]
        session = await stack.enter_async_context(ClientSession(read_stream, write_stream))
        init = await session.initialize()
        yield session, wire(init)


async def _call(session: ClientSession, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return wire(await session.call_tool(tool, args))


@pytest.mark.anyio
async def test_initialize_reports_moss() -> None:
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN")) as (_session, init):
            assert init["serverInfo"]["name"] == "moss", init
            assert init["protocolVersion"], init
            assert "tools" in init["capabilities"], init


@pytest.mark.anyio
async def test_list_tools_is_get_tools_with_object_schemas() -> None:
    expected = served_tools()
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN")) as (session, _init):
            listed = wire(await session.list_tools())
    tools = {t["name"]: t for t in listed["tools"]}
    assert [t["name"] for t in listed["tools"]] == expected, (
        f"tools/list is not GET /tools: it lacks {[n for n in expected if n not in tools]}, "
        f"adds {[n for n in tools if n not in expected]}"
    )
    for name, tool in tools.items():
        schema = tool["inputSchema"]
        assert schema.get("type") == "object", f"{name} inputSchema: {schema}"
    assert "capsule_text" in tools["capsule_store"]["inputSchema"].get("required", [])


@pytest.mark.anyio
async def test_a_toolset_narrows_the_connection_to_its_tools() -> None:
    capsule_tools = registered_tools("capsule")
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query="?toolsets=capsule") as (session, init):
            listed = wire(await session.list_tools())
            stored = await _call(session, "capsule_store", {"capsule_text": VALID_CAPSULE})
    assert capsule_tools and all(n.startswith("capsule_") for n in capsule_tools), capsule_tools
    assert [t["name"] for t in listed["tools"]] == capsule_tools, listed
    assert "capsule_store" in init.get("instructions", ""), init
    assert not stored.get("isError", False), stored


# What tools/list may cost an agent, in bytes of compact JSON: every tool, and the core toolset.
FULL_LIST_MAX_BYTES = 48 * 1024
CORE_LIST_MAX_BYTES = 16 * 1024


def _compact_size(listed: dict[str, Any]) -> int:
    return len(json.dumps(listed, separators=(",", ":"), ensure_ascii=False).encode())


@pytest.mark.anyio
async def test_core_is_a_few_tools_that_say_how_to_reach_the_rest() -> None:
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query="?toolsets=core") as (session, init):
            core = wire(await session.list_tools())
            stored = await _call(session, "capsule_store", {"capsule_text": VALID_CAPSULE})
        async with mcp_session(env("MOSS_TOKEN")) as (session, _init):
            full = wire(await session.list_tools())
    names = [t["name"] for t in core["tools"]]
    assert len(names) <= 15, names
    assert {"capsule_store", "capsule_latest", "tasks_radar", "memory_recall"} <= set(names), names
    assert not stored.get("isError", False), stored
    assert "/mcp?toolsets=all" in init.get("instructions", ""), init
    assert _compact_size(core) <= CORE_LIST_MAX_BYTES, _compact_size(core)
    assert len(full["tools"]) > len(names), "/mcp with no query serves every tool"
    assert _compact_size(full) <= FULL_LIST_MAX_BYTES, _compact_size(full)


def test_an_unknown_toolset_is_a_400_naming_it() -> None:
    response = httpx.post(
        _mcp_url("?toolsets=capsule,nosuchtoolset"),
        headers={
            "Authorization": f"Bearer {env('MOSS_TOKEN')}",
            "Accept": "application/json, text/event-stream",
        },
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "interop", "version": "0"},
            },
        },
        timeout=STEP_TIMEOUT_S,
    )
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_REQUEST", error
    assert error["details"]["toolset"] == "nosuchtoolset", error
    assert "capsule" in error["message"], error
    assert "core" in error["details"]["valid"] and "all" in error["details"]["valid"], error


@pytest.mark.anyio
async def test_store_then_fetch_by_workspace_and_name() -> None:
    workspace = f"/tmp/interop-python-{uuid.uuid4().hex[:8]}"
    name = "handoff"
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN")) as (session, _init):
            stored = await _call(
                session,
                "capsule_store",
                {
                    "capsule_text": VALID_CAPSULE,
                    "workspace": workspace,
                    "name": name,
                    "title": "python sdk interop",
                    "tags": ["interop", "python"],
                },
            )
            assert not stored.get("isError", False), stored
            store_out = stored.get("structuredContent")
            assert isinstance(store_out, dict), stored
            capsule_id = store_out.get("id")
            assert isinstance(capsule_id, str) and len(capsule_id) == 26, store_out

            fetched = await _call(session, "capsule_fetch", {"workspace": workspace, "name": name})
            assert not fetched.get("isError", False), fetched
            capsule = fetched["structuredContent"]
            assert capsule["id"] == capsule_id, capsule
            assert capsule["capsule_text"] == VALID_CAPSULE, capsule
            # The text content mirrors the structured content.
            assert any(c.get("type") == "text" for c in fetched["content"]), fetched


@pytest.mark.anyio
async def test_moss_context_resumes_a_task_from_every_family() -> None:
    workspace = f"interop-context-{uuid.uuid4().hex[:8]}"

    async def ok(session: ClientSession, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        out = await _call(session, tool, args)
        assert not out.get("isError", False), (tool, out)
        return out["structuredContent"]

    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query="?toolsets=all") as (session, _init):
            await ok(session, "tasks_create", {"workspace": workspace, "title": "Refund flow"})
            await ok(
                session,
                "tasks_create",
                {"workspace": workspace, "title": "Refunds", "parent": "PLAN-001"},
            )
            await ok(
                session,
                "capsule_store",
                {"workspace": workspace, "name": "handoff", "task": "TASK-001",
                 "capsule_text": VALID_CAPSULE},
            )
            await ok(
                session,
                "branchmind_notes_commit",
                {"workspace": workspace, "target": "TASK-001", "content": "Refunds reuse charges"},
            )
            await ok(
                session,
                "branchmind_think_card",
                {"workspace": workspace, "target": "TASK-001",
                 "card": {"id": "d1", "type": "decision", "title": "Queue the refunds"}},
            )
            await ok(
                session,
                "memory_store",
                {"workspace": workspace, "content": "User prefers tabs", "context": "TASK-001"},
            )
            ctx = await ok(
                session,
                "moss_context",
                {"workspace": workspace, "task": "TASK-001", "max_chars": 6000},
            )
            assert ctx["task"] == "TASK-001", ctx
            assert ctx["handoffs"][0]["title"] == "handoff", ctx
            assert ctx["notes"][0]["title"] == "Refunds reuse charges", ctx
            assert ctx["decisions"][0]["title"] == "Queue the refunds", ctx
            assert "tabs" in ctx["memories"][0]["title"], ctx
            assert ctx["budget"]["used_chars"] <= 6000, ctx["budget"]
            for section in ("handoffs", "notes", "decisions", "memories"):
                for item in ctx[section]:
                    assert item["open"]["tool"], item
            trace = await ok(
                session,
                "branchmind_show",
                {"workspace": workspace, "target": "TASK-001", "doc_kind": "trace"},
            )
            kinds = [e.get("event_type") for e in trace["entries"]]
            assert "capsule_handoff" in kinds, kinds
            radar = await ok(session, "tasks_radar", {"workspace": workspace, "task": "TASK-001"})
            assert radar["handoffs"][0]["name"] == "handoff", radar
            found = await ok(session, "moss_search", {"query": "tab", "workspace": workspace})
            assert [h["family"] for h in found["items"]] == ["memory"], found
            assert all(0 < h["score"] <= 1 for h in found["items"]), found


@pytest.mark.anyio
async def test_search_then_compose_what_it_found() -> None:
    workspace = f"/tmp/interop-python-{uuid.uuid4().hex[:8]}"
    term = f"zephyr{uuid.uuid4().hex[:8]}"
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN")) as (session, _init):
            for name, decision in [("alpha", f"Use {term} for the cache."), ("beta", "None.")]:
                text = VALID_CAPSULE.replace("## Decisions\nx", f"## Decisions\n{decision}")
                stored = await _call(
                    session,
                    "capsule_store",
                    {"capsule_text": text, "workspace": workspace, "name": name},
                )
                assert not stored.get("isError", False), stored

            found = await _call(session, "capsule_search", {"query": term, "workspace": workspace})
            assert not found.get("isError", False), found
            page = found["structuredContent"]
            assert [hit["name"] for hit in page["items"]] == ["alpha"], page
            assert f"<b>{term}</b>" in page["items"][0]["snippet"], page

            none = await _call(session, "capsule_search", {"query": "nosuchterm", "workspace": workspace})
            assert not none.get("isError", False), none
            assert none["structuredContent"]["items"] == [], none

            composed = await _call(
                session,
                "capsule_compose",
                {
                    "items": [
                        {"workspace": workspace, "name": "alpha"},
                        {"workspace": workspace, "name": "beta"},
                    ],
                    "sections": ["Decisions"],
                },
            )
            assert not composed.get("isError", False), composed
            bundle = composed["structuredContent"]
            assert bundle["parts_count"] == 2, bundle
            text = bundle["bundle_text"]
            assert term in text and "None." in text, text
            assert text.index(term) < text.index("None."), "items keep their order"
            assert "Next actions" not in text, "the sections filter keeps only Decisions"

            missing = await _call(
                session,
                "capsule_compose",
                {"items": [{"workspace": workspace, "name": "alpha"}, {"workspace": workspace, "name": "gone"}]},
            )
            assert missing.get("isError") is True, missing
            assert missing["structuredContent"]["error"]["status"] == 404, missing


@pytest.mark.anyio
async def test_thin_capsule_is_a_tool_error() -> None:
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN")) as (session, _init):
            result = await _call(
                session,
                "capsule_store",
                {"capsule_text": "just a note, no sections", "workspace": "/tmp/interop-thin"},
            )
    assert result.get("isError") is True, result
    error = result["structuredContent"]["error"]
    assert error["code"] == "CAPSULE_TOO_THIN", error
    assert error["status"] == 422, error
    assert "Objective" in error.get("details", {}).get("missing", []), error


@pytest.mark.anyio
@pytest.mark.parametrize("token", [None, "not-the-token"], ids=["no-token", "wrong-token"])
async def test_unauthenticated_connection_fails_with_401(token: str | None) -> None:
    statuses: list[int] = []
    with anyio.fail_after(STEP_TIMEOUT_S):
        with pytest.raises(Exception) as excinfo:
            async with mcp_session(token, http_statuses=statuses):
                pass
    assert 401 in statuses, f"HTTP statuses seen: {statuses}; error: {excinfo.value!r}"
    assert not any(200 <= s < 300 for s in statuses), statuses
