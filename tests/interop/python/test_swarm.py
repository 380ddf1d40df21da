"""Interop: the official MCP Python SDK against the capsule tools a leader and its workers use:
revision guards, multi-section append, pivoted and filter-based compose, run id lists, run
purge, watch with a cursor, and stats.

Run by ../run-python.sh. Each test uses a fresh workspace and run id.
"""

from __future__ import annotations

import uuid

import anyio
import pytest
from conftest import STEP_TIMEOUT_S, env
from test_mcp_python_sdk import mcp_session
from test_reasoning_tasks import _err, _ok

TOOLSETS = "?toolsets=capsule"


def _text(objective: str, decisions: str, questions: str) -> str:
    return (
        f"## Objective\n{objective}\n## Current status\n(pending)\n## Decisions\n{decisions}\n"
        f"## Next actions\n- continue\n## Key locations\nsrc/\n## Open questions\n{questions}\n"
    )


def _ids() -> tuple[str, str]:
    tag = uuid.uuid4().hex[:8]
    return f"interop-python-swarm-{tag}", f"run-{tag}"


@pytest.mark.anyio
async def test_guards_append_and_purge_over_the_sdk() -> None:
    ws, run = _ids()
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            h = await _ok(
                session,
                "capsule_store",
                {"workspace": ws, "name": "w1", "run_id": run, "capsule_text": _text("w1", "- a", "TBD")},
            )
            assert h["revision"] == 1, h
            conflict = await _err(
                session,
                "capsule_append",
                {"id": h["id"], "section": "Decisions", "content": "- b", "if_revision": 7},
            )
            assert conflict["code"] == "CONFLICT" and conflict["details"]["revision"] == 1, conflict
            both = await _ok(
                session,
                "capsule_append",
                {
                    "id": h["id"],
                    "if_revision": 1,
                    "sections": [
                        {"section": "Current status", "content": "implementing"},
                        {"section": "Decisions", "content": "- b"},
                    ],
                },
            )
            assert [s["replaced"] for s in both["sections"]] == [True, False], both
            assert both["revision"] == 2, both
            first = await _err(
                session,
                "capsule_append",
                {"id": h["id"], "section": "Decisions", "content": "- c", "if_placeholder": True},
            )
            assert first["code"] == "CONFLICT", first

            refused = await _err(session, "capsule_purge", {"run_id": [run]})
            assert refused["code"] == "INVALID_REQUEST" and refused["details"]["would_purge"] == 1, refused
            purged = await _ok(session, "capsule_purge", {"run_id": run, "confirm": True})
            assert purged["purged"] == 1, purged


@pytest.mark.anyio
async def test_pivoted_filter_compose_watch_and_stats_over_the_sdk() -> None:
    ws, run = _ids()
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            start = await _ok(session, "capsule_watch", {"timeout_ms": 0})
            assert start["event"] == "timeout", start
            for name, role, decisions in [("sec", "security", "- parameterize"), ("perf", "perf", "- add an index")]:
                await _ok(
                    session,
                    "capsule_store",
                    {"workspace": ws, "name": name, "run_id": run, "role": role, "capsule_text": _text(name, decisions, "none")},
                )
            bundle = await _ok(
                session,
                "capsule_compose",
                {"items": [{"run_id": run}], "pivot": "section", "sections": ["Decisions"], "include_attribution": True},
            )
            assert bundle["bundle_text"] == (
                "## Decisions\n\n**sec** (security):\n- parameterize\n\n**perf** (perf):\n- add an index\n"
            ), bundle
            ambiguous = await _err(
                session, "capsule_compose", {"items": [{"run_id": run, "name": "sec"}]}
            )
            assert ambiguous["code"] == "INVALID_REQUEST", ambiguous

            # Both creations, in order, across two calls from the first cursor.
            seen = []
            since = start["cursor"]
            for _ in range(2):
                event = await _ok(session, "capsule_watch", {"run_id": run, "since": since, "timeout_ms": 5000})
                assert event["event"] == "created", event
                seen.append(event["capsule"]["name"])
                since = event["cursor"]
            assert seen == ["sec", "perf"], seen
            idle = await _ok(session, "capsule_watch", {"run_id": run, "since": since, "timeout_ms": 50})
            assert idle["event"] == "timeout" and idle["cursor"] >= since, idle

            stats = await _ok(session, "capsule_stats", {"workspace": ws, "run_id": [run]})
            assert stats["capsule_count"] == 2 and stats["by_role"] == {"perf": 1, "security": 1}, stats
            assert stats["deleted_count"] == 0 and stats["oldest"].endswith("Z"), stats
