"""Interop: the official MCP Python SDK's stdio client against `moss mcp`, the stdio bridge.

Run by ../run-python.sh, which starts mossd in a temp MOSS_HOME and exports:
  MOSS_BIN    the moss binary (its `mcp` subcommand is the stdio server under test)
  MOSS_ADDR   the daemon's base address, e.g. http://127.0.0.1:PORT
  MOSS_TOKEN  the bearer token from $MOSS_HOME/token
  MOSS_HOME   the daemon's home

The SDK spawns `moss mcp` and speaks newline-delimited JSON-RPC on its stdin/stdout; the bridge
forwards every message to the daemon's /mcp. MOSS_NO_AUTOSTART=1 makes sure the bridge talks to
the runner's daemon and never starts its own.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
from conftest import STEP_TIMEOUT_S, VALID_CAPSULE, env, wire
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from test_mcp_python_sdk import tools_in

# `moss mcp` serves the core toolset unless --toolsets says otherwise.
CORE_MAX_TOOLS = 15

def _server(token: str, toolsets: str | None = None) -> StdioServerParameters:
    child_env = {
        "MOSS_ADDR": env("MOSS_ADDR"),
        "MOSS_TOKEN": token,
        "MOSS_NO_AUTOSTART": "1",
        "NO_COLOR": "1",
    }
    if os.environ.get("MOSS_HOME"):
        child_env["MOSS_HOME"] = os.environ["MOSS_HOME"]
    args = ["mcp"] if toolsets is None else ["mcp", "--toolsets", toolsets]
    return StdioServerParameters(command=env("MOSS_BIN"), args=args, env=child_env)


@contextlib.asynccontextmanager
async def bridge_session(
    token: str | None = None, toolsets: str | None = None
) -> AsyncIterator[tuple[ClientSession, dict[str, Any]]]:
    """An initialized SDK session through `moss mcp`, and the wire form of its InitializeResult."""
    params = _server(token if token is not None else env("MOSS_TOKEN"), toolsets)
    async with stdio_client(params) as streams:
        read_stream, write_stream = streams[0], streams[1]
        async with ClientSession(read_stream, write_stream) as session:
            init = await session.initialize()
            yield session, wire(init)


async def _call(session: ClientSession, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    return wire(await session.call_tool(tool, args))


@pytest.mark.anyio
async def test_bridge_initializes_as_moss() -> None:
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with bridge_session() as (_session, init):
            assert init["serverInfo"]["name"] == "moss", init
            assert init["protocolVersion"], init
            assert "tools" in init["capabilities"], init


@pytest.mark.anyio
async def test_bridge_lists_the_core_tools_by_default() -> None:
    expected = tools_in("core")
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with bridge_session() as (session, init):
            listed = wire(await session.list_tools())
    names = [t["name"] for t in listed["tools"]]
    assert names == expected, (
        f"tools/list through the bridge is not GET /tools' core: it lacks "
        f"{[n for n in expected if n not in names]}, adds {[n for n in names if n not in expected]}"
    )
    assert len(names) <= CORE_MAX_TOOLS, names
    assert "/mcp?toolsets=all" in init["instructions"], init["instructions"]


@pytest.mark.anyio
async def test_bridge_lists_the_capsule_tools_with_toolsets() -> None:
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with bridge_session(toolsets="capsule") as (session, _init):
            listed = wire(await session.list_tools())
    expected = tools_in("capsule")
    names = [t["name"] for t in listed["tools"]]
    assert names == expected, (
        f"tools/list through the bridge is not GET /tools: it lacks "
        f"{[n for n in expected if n not in names]}, adds {[n for n in names if n not in expected]}"
    )


@pytest.mark.anyio
async def test_bridge_stores_then_fetches() -> None:
    workspace = f"/tmp/interop-bridge-{uuid.uuid4().hex[:8]}"
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with bridge_session() as (session, _init):
            stored = await _call(
                session,
                "capsule_store",
                {"capsule_text": VALID_CAPSULE, "workspace": workspace, "name": "handoff"},
            )
            assert not stored.get("isError", False), stored
            capsule_id = stored["structuredContent"]["id"]
            fetched = await _call(
                session, "capsule_fetch", {"workspace": workspace, "name": "handoff"}
            )
            assert not fetched.get("isError", False), fetched
            assert fetched["structuredContent"]["id"] == capsule_id, fetched
            assert fetched["structuredContent"]["capsule_text"] == VALID_CAPSULE, fetched
        # A new bridge (a new MCP session) sees the same daemon's data.
        async with bridge_session() as (session, _init):
            again = await _call(session, "capsule_fetch", {"id": capsule_id})
            assert again["structuredContent"]["capsule_text"] == VALID_CAPSULE, again


@pytest.mark.anyio
async def test_bridge_relays_tool_errors() -> None:
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with bridge_session() as (session, _init):
            thin = await _call(
                session,
                "capsule_store",
                {"capsule_text": "just a note", "workspace": "/tmp/interop-bridge-thin"},
            )
            missing = await _call(
                session,
                "capsule_fetch",
                {"workspace": "/tmp/interop-bridge-thin", "name": "no-such-capsule"},
            )
    assert thin.get("isError") is True, thin
    assert thin["structuredContent"]["error"]["code"] == "CAPSULE_TOO_THIN", thin
    assert missing.get("isError") is True, missing
    assert missing["structuredContent"]["error"]["code"] == "NOT_FOUND", missing


@pytest.mark.anyio
async def test_a_wrong_token_is_a_json_rpc_error_naming_the_status() -> None:
    with anyio.fail_after(STEP_TIMEOUT_S):
        with pytest.raises(Exception) as caught:
            async with bridge_session(token="not-the-token"):
                pass
    text = " ".join(_leaf_messages(caught.value))
    assert "401" in text and "Moss daemon" in text, text


def _leaf_messages(e: BaseException) -> list[str]:
    """The messages of the exceptions inside (possibly nested) exception groups."""
    if isinstance(e, BaseExceptionGroup):
        return [m for inner in e.exceptions for m in _leaf_messages(inner)]
    return [f"{type(e).__name__}: {e}"]
