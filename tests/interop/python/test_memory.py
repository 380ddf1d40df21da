"""Interop: the official MCP Python SDK against mossd's `memory` (memory_*) tool family.

Run by ../run-python.sh. Each test uses a fresh workspace and asserts on the wire shape.
"""

from __future__ import annotations

import uuid

import anyio
import pytest
from conftest import STEP_TIMEOUT_S, env, wire
from test_mcp_python_sdk import mcp_session, registered_tools
from test_reasoning_tasks import _err, _ok

TOOLSETS = "?toolsets=memory"


def _workspace() -> str:
    return f"interop-python-mem-{uuid.uuid4().hex[:8]}"


@pytest.mark.anyio
async def test_the_memory_toolset_lists_exactly_its_tools() -> None:
    expected = registered_tools("memory")
    assert expected and all(n.startswith("memory_") for n in expected), expected
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, init):
            listed = wire(await session.list_tools())
    assert [t["name"] for t in listed["tools"]] == expected, listed
    assert "memory_recall" in init.get("instructions", ""), init


@pytest.mark.anyio
async def test_store_recall_forget_render_and_session_memories() -> None:
    ws = _workspace()
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            stored = await _ok(
                session,
                "memory_store",
                {"workspace": ws, "content": "User prefers tabs", "context": "formatting", "slot": "preferences"},
            )
            assert stored["created"] is True, stored
            again = await _ok(
                session,
                "memory_store",
                {"workspace": ws, "content": "User prefers tabs", "context": "formatting", "slot": "preferences", "weight": 2},
            )
            assert again["created"] is False and again["updated"] == ["weight"], again
            await _ok(session, "memory_store", {"workspace": ws, "content": "Last edit broke tests", "context": "auth.py", "weight": 0.8})

            about = await _ok(session, "memory_recall", {"workspace": ws, "query": "about auth.py", "explain": True})
            assert [m["content"] for m in about["items"]] == ["Last edit broke tests"], about
            assert about["items"][0]["explain"]["context_match"] == "exact", about
            prefs = await _ok(session, "memory_recall", {"workspace": ws, "slot": "preferences"})
            assert [m["content"] for m in prefs["items"]] == ["User prefers tabs"], prefs
            nothing = await _ok(session, "memory_recall", {"workspace": ws, "query": "kubernetes"})
            assert nothing["items"] == [] and "kubernetes" in nothing["reason"], nothing

            # A non-persistent memory belongs to this connection.
            mine = await _ok(session, "memory_store", {"workspace": ws, "content": "Editing the cart page", "persist": False})
            assert mine["memory"]["session"].startswith("mcp:"), mine
            seen = await _ok(session, "memory_recall", {"workspace": ws, "query": "cart page"})
            assert [m["content"] for m in seen["items"]] == ["Editing the cart page"], seen

            rendered = await _ok(
                session,
                "memory_render",
                {"workspace": ws, "template": ["Prefs:\n", {"slot": "preferences"}, {"slot": "nothing-here"}]},
            )
            assert rendered["text"] == "Prefs:\n- User prefers tabs\n", rendered
            assert len(rendered["warnings"]) == 1, rendered

            error = await _err(session, "memory_forget", {"workspace": ws, "query": "a"})
            assert error["code"] == "INVALID_REQUEST" and error["details"]["field"] == "query", error
            gone = await _ok(session, "memory_forget", {"workspace": ws, "id": stored["memory"]["id"]})
            assert [m["content"] for m in gone["removed"]] == ["User prefers tabs"], gone

        # Another connection does not see the first one's session memory.
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (other, _init):
            unseen = await _ok(other, "memory_recall", {"workspace": ws, "query": "cart page"})
            assert unseen["items"] == [], unseen


@pytest.mark.anyio
async def test_sources_run_and_events_through_the_sdk(tmp_path) -> None:
    ws = _workspace()
    (tmp_path / ".moss").mkdir()
    (tmp_path / ".moss" / "memory.toml").write_text(
        '[[memory]]\ncontent = "Deploys go through staging"\ncontext = "deploy"\n'
    )
    root = str(tmp_path.resolve())
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            ran = await _ok(session, "memory_sources_run", {"workspace": ws, "root": root})
            by_name = {s["name"]: s for s in ran["sources"]}
            assert by_name["toml.lua"]["status"] == "ok" and by_name["toml.lua"]["items"] == 1, ran
            assert by_name["session.lua"]["handlers"] == ["file_opened"], ran
            listed = await _ok(session, "memory_sources", {"workspace": ws, "root": root})
            assert {s["name"] for s in listed["sources"]} >= {"git.lua", "session.lua", "toml.lua"}, listed
            found = await _ok(session, "memory_recall", {"workspace": ws, "query": "deploy"})
            assert found["items"][0]["source"] == "toml.lua", found
            event = await _ok(
                session,
                "memory_event",
                {"workspace": ws, "root": root, "event": "file_opened", "data": {"file": "src/cart.py"}},
            )
            assert event["handled"] == 1 and event["stored"] == 1, event
            # Stored in this connection's session: it sees it.
            mine = await _ok(session, "memory_recall", {"workspace": ws, "query": "src/cart.py"})
            assert mine["items"][0]["content"] == "Working on src/cart.py", mine
