"""Interop: the official MCP Python SDK against capsule_restore, capsule_lineage, capsule_clone,
the search and bulk options (safe_query, count_total, skip_unchanged), versions, diff and
evidence.

Run by ../run-python.sh. Each test uses a fresh workspace.
"""

from __future__ import annotations

import uuid

import anyio
import pytest
from conftest import STEP_TIMEOUT_S, env
from test_mcp_python_sdk import mcp_session
from test_reasoning_tasks import _err, _ok

TOOLSETS = "?toolsets=capsule"

TEXT = (
    "## Objective\n{marker}\n## Current status\nworking\n## Decisions\nnone yet\n"
    "## Next actions\n- continue\n## Key locations\nsrc/\n## Open questions\nnone\n"
)


@pytest.mark.anyio
async def test_restore_lineage_clone_and_options_over_the_sdk() -> None:
    ws = f"interop-python-history-{uuid.uuid4().hex[:8]}"
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            src = await _ok(session, "capsule_store", {"workspace": ws, "name": "research", "capsule_text": TEXT.format(marker="pr-123 findings")})
            plan = await _ok(
                session,
                "capsule_store",
                {"workspace": ws, "name": "plan", "capsule_text": TEXT.format(marker="plan"), "based_on": [{"workspace": ws, "name": "research"}]},
            )
            copy = await _ok(
                session,
                "capsule_clone",
                {"source": {"id": plan["id"]}, "target": {"name": "plan-v2"}, "set": {"phase": "review"}},
            )
            lineage = await _ok(session, "capsule_lineage", {"id": src["id"]})
            assert [n["capsule"]["id"] for n in lineage["derived"]] == [plan["id"], copy["id"]], lineage
            assert [n["depth"] for n in lineage["derived"]] == [1, 2], lineage

            await _ok(session, "capsule_delete", {"id": src["id"]})
            await _ok(session, "capsule_store", {"workspace": ws, "name": "research", "capsule_text": TEXT.format(marker="again")})
            taken = await _err(session, "capsule_restore", {"id": src["id"]})
            assert taken["code"] == "NAME_ALREADY_EXISTS", taken
            restored = await _ok(session, "capsule_restore", {"id": src["id"], "mode": "rename"})
            assert restored["name"] == "research-1", restored

            hits = await _ok(session, "capsule_search", {"workspace": ws, "query": "pr-123", "safe_query": True, "count_total": False})
            assert [h["name"] for h in hits["items"]] == ["research-1"], hits
            assert "total" not in hits["pagination"], hits

            skipped = await _ok(session, "capsule_bulk_update", {"workspace": ws, "set_phase": "review", "skip_unchanged": True})
            assert skipped["updated"] == 3, skipped  # plan-v2 already in review


@pytest.mark.anyio
async def test_versions_and_diff_over_the_sdk() -> None:
    ws = f"interop-python-versions-{uuid.uuid4().hex[:8]}"
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            h = await _ok(session, "capsule_store", {"workspace": ws, "name": "auth", "capsule_text": TEXT.format(marker="first")})
            await _ok(session, "capsule_update", {"id": h["id"], "capsule_text": TEXT.format(marker="second")})
            versions = await _ok(session, "capsule_versions", {"id": h["id"]})
            assert [v["revision"] for v in versions["versions"]] == [1] and versions["revision"] == 2, versions
            before = await _ok(session, "capsule_fetch", {"id": h["id"], "version": -1})
            assert "first" in before["capsule_text"] and before["revision"] == 1, before
            diff = await _ok(
                session,
                "capsule_diff",
                {"a": {"id": h["id"], "version": -1}, "b": {"id": h["id"]}, "include_diff": True},
            )
            assert diff["sections"]["Objective"] == "modified", diff
            assert "+second" in diff["diffs"]["Objective"], diff
            assert diff["summary"]["unchanged_sections"] == 5, diff
            missing = await _err(session, "capsule_fetch", {"id": h["id"], "version": -2})
            assert missing["code"] == "NOT_FOUND", missing


@pytest.mark.anyio
async def test_evidence_over_the_sdk() -> None:
    ws = f"interop-python-evidence-{uuid.uuid4().hex[:8]}"
    snippet = "def verify(token): return bool(token)"
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            h = await _ok(
                session,
                "capsule_store",
                {
                    "workspace": ws,
                    "name": "auth",
                    "capsule_text": TEXT.format(marker="evidence"),
                    "evidence": [{"type": "snippet", "ref": "auth.py:3-4", "content": snippet}],
                },
            )
            folded = await _ok(session, "capsule_fetch", {"id": h["id"]})
            assert folded["evidence"] == [{"type": "snippet", "ref": "auth.py:3-4", "chars": len(snippet)}], folded
            expanded = await _ok(session, "capsule_fetch", {"id": h["id"], "expand_evidence": True})
            assert expanded["evidence"][0]["content"] == snippet, expanded
            over = await _err(
                session,
                "capsule_update",
                {"id": h["id"], "evidence": [{"type": "snippet", "ref": "a", "content": "x" * 4001}]},
            )
            assert over["code"] == "INVALID_REQUEST" and over["details"]["field"] == "evidence[0].content", over
            await _ok(session, "capsule_update", {"id": h["id"], "evidence": []})
            cleared = await _ok(session, "capsule_fetch", {"id": h["id"]})
            assert "evidence" not in cleared, cleared
