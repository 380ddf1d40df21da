"""Interop: the official MCP Python SDK against mossd's `reasoning` (branchmind_*) and `tasks`
(tasks_*) tool families.

Run by ../run-python.sh (see test_mcp_python_sdk.py for the environment it exports). Every test
goes through the SDK's streamable HTTP client and `ClientSession` (the `mcp_session` helper of
test_mcp_python_sdk.py), uses a fresh workspace, and asserts on the wire shape.

A tool error is a tool result with `isError: true` whose `structuredContent` is
`{"error": {"code", "message", "status", "details"}}`.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import anyio
import pytest
from conftest import STEP_TIMEOUT_S, env, wire
from mcp import ClientSession
from test_mcp_python_sdk import mcp_session, registered_tools

TOOLSETS = "?toolsets=tasks,reasoning"


def _workspace() -> str:
    return f"/tmp/interop-python-rt-{uuid.uuid4().hex[:8]}"


def _compact(value: Any) -> str:
    """`value` serialized as the daemon measures it (serde_json: no spaces, UTF-8 as is)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


async def _ok(session: ClientSession, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The structuredContent of a tool call that must succeed."""
    result = wire(await session.call_tool(tool, args))
    assert not result.get("isError", False), f"{tool}({args}) failed: {result}"
    out = result.get("structuredContent")
    assert isinstance(out, dict), result
    # The text content mirrors the structured content.
    texts = [c["text"] for c in result["content"] if c.get("type") == "text"]
    assert texts and json.loads(texts[0]) == out, result
    return out


async def _err(session: ClientSession, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The error envelope of a tool call that must fail as a tool error."""
    result = wire(await session.call_tool(tool, args))
    assert result.get("isError") is True, f"{tool}({args}) did not fail: {result}"
    error = result["structuredContent"]["error"]
    assert {"code", "message", "status"} <= error.keys(), error
    return error


# --- (a) toolsets -------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("family", ["reasoning", "tasks"])
async def test_a_family_toolset_lists_exactly_that_family(family: str) -> None:
    expected = registered_tools(family)
    prefix = {"reasoning": "branchmind_", "tasks": "tasks_"}[family]
    assert expected and all(n.startswith(prefix) for n in expected), expected
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=f"?toolsets={family}") as (session, init):
            listed = wire(await session.list_tools())
    assert [t["name"] for t in listed["tools"]] == expected, listed
    for tool in listed["tools"]:
        assert tool["inputSchema"].get("type") == "object", tool
        assert "workspace" in tool["inputSchema"].get("required", []), tool
    assert f"{prefix}" in init.get("instructions", ""), init


@pytest.mark.anyio
async def test_new_families_property_schemas_are_objects() -> None:
    """MCP's Tool.inputSchema.properties maps names to objects (schema.ts: `{ [key: string]:
    object }`); the TypeScript SDK rejects the whole tools/list otherwise. A boolean schema
    (`true`) is valid JSON Schema but not a valid MCP property schema."""
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            listed = wire(await session.list_tools())
    bad = [
        f"{t['name']}.{name}: {schema!r}"
        for t in listed["tools"]
        for name, schema in t["inputSchema"].get("properties", {}).items()
        if not isinstance(schema, dict)
    ]
    assert not bad, f"non-object property schemas: {bad}"


# --- (b) a plan and a task, walked through -----------------------------------------------------


@pytest.mark.anyio
async def test_plan_and_task_walk_through_lands_in_trace_and_graph() -> None:
    ws = _workspace()
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            plan = await _ok(session, "tasks_create", {"workspace": ws, "title": "Ship the cache"})
            plan_id = plan["item"]["id"]
            assert re.fullmatch(r"PLAN-\d{3}", plan_id), plan
            assert plan["item"]["kind"] == "plan", plan
            assert plan["event"]["type"] == "plan_created", plan

            task = await _ok(
                session,
                "tasks_create",
                {
                    "workspace": ws,
                    "title": "Add an LRU",
                    "parent": plan_id,
                    "description": "Bounded memory",
                    "steps": [
                        {"title": "Write it", "success_criteria": ["evicts oldest"], "tests": ["lru_test"]}
                    ],
                },
            )
            task_id = task["item"]["id"]
            assert re.fullmatch(r"TASK-\d{3}", task_id), task
            assert task["item"]["kind"] == "task" and task["item"]["parent"] == plan_id, task
            assert task["reasoning_ref"] == {
                "branch": f"task/{task_id}",
                "notes_doc": "notes",
                "graph_doc": f"{task_id}-graph",
                "trace_doc": f"{task_id}-trace",
            }, task
            [first] = task["steps"]
            assert first["path"] == "s:0" and first["status"] == "open", first

            decomposed = await _ok(
                session,
                "tasks_decompose",
                {"workspace": ws, "task": task_id, "steps": [{"title": "Benchmark it"}]},
            )
            [second] = decomposed["steps"]
            assert second["path"] == "s:1", decomposed
            assert decomposed["item"]["steps_total"] == 2, decomposed

            before_refusal = await _ok(session, "tasks_delta", {"workspace": ws})
            refused = await _err(
                session, "tasks_done", {"workspace": ws, "task": task_id, "step_id": first["step_id"]}
            )
            assert refused["code"] == "CHECKPOINTS_UNCONFIRMED", refused
            assert refused["status"] == 409, refused
            suggested = refused["details"]["suggested_call"]
            assert suggested["tool"] == "tasks_verify", refused
            after_refusal = await _ok(session, "tasks_delta", {"workspace": ws})
            assert after_refusal["events"] == before_refusal["events"], "a refused call wrote an event"

            verified = await _ok(session, suggested["tool"], suggested["arguments"])
            [v] = verified["steps"]
            assert v["criteria_confirmed"] and v["tests_confirmed"], verified
            done = await _ok(
                session, "tasks_done", {"workspace": ws, "task": task_id, "step_id": first["step_id"]}
            )
            assert done["steps"][0]["status"] == "done", done
            assert done["event"]["type"] == "step_done", done

            radar = await _ok(session, "tasks_radar", {"workspace": ws, "task": task_id})
            assert radar["reasoning_ref"]["branch"] == f"task/{task_id}", radar
            assert radar["target"]["id"] == task_id, radar
            counts = radar["steps"]
            assert (counts["total"], counts["open"], counts["done"]) == (2, 1, 1), counts
            assert counts["first_open"]["step_id"] == second["step_id"], counts

            delta = await _ok(session, "tasks_delta", {"workspace": ws})
            task_events = [e["event_id"] for e in delta["events"] if e["task_id"] == task_id]
            assert [e["type"] for e in delta["events"] if e["task_id"] == task_id] == [
                "task_created",
                "steps_added",
                "step_verified",
                "step_done",
            ], delta

            trace = await _ok(
                session,
                "branchmind_show",
                {"workspace": ws, "target": task_id, "doc_kind": "trace", "limit": 200},
            )
            assert trace["branch"] == f"task/{task_id}", trace
            assert trace["doc"] == f"{task_id}-trace", trace
            assert trace["pagination"]["has_more"] is False, trace
            events = [e for e in trace["entries"] if e["kind"] == "event"]
            traced = [e["source_event_id"] for e in events]
            assert len(traced) == len(set(traced)), f"an event was ingested twice: {traced}"
            # Newest first in the trace, oldest first in the delta.
            assert traced == list(reversed(task_events)), (traced, task_events)
            assert all(e["task_id"] == task_id for e in events), events

            graph = await _ok(session, "branchmind_graph_query", {"workspace": ws, "target": task_id})
            nodes = {n["id"]: n for n in graph["nodes"]}
            assert f"task:{task_id}" in nodes, graph
            assert nodes[f"step:{first['step_id']}"]["status"] == "done", graph
            assert nodes[f"step:{second['step_id']}"]["status"] == "open", graph
            contains = {(e["from"], e["rel"], e["to"]) for e in graph["edges"]}
            assert (f"task:{task_id}", "contains", f"step:{first['step_id']}") in contains, graph


# --- (c) optimistic concurrency ----------------------------------------------------------------


@pytest.mark.anyio
async def test_a_stale_expected_revision_is_a_conflict_that_writes_nothing() -> None:
    ws = _workspace()
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            plan = await _ok(session, "tasks_create", {"workspace": ws, "title": "P"})
            task = await _ok(
                session,
                "tasks_create",
                {"workspace": ws, "title": "T", "parent": plan["item"]["id"], "steps": [{"title": "s"}]},
            )
            task_id, step_id = task["item"]["id"], task["steps"][0]["step_id"]
            edited = await _ok(
                session,
                "tasks_edit",
                {"workspace": ws, "task": task_id, "title": "T2", "expected_revision": task["item"]["revision"]},
            )
            current = edited["item"]["revision"]
            assert current == task["item"]["revision"] + 1, edited
            delta_before = await _ok(session, "tasks_delta", {"workspace": ws})

            stale = task["item"]["revision"]
            error = await _err(
                session,
                "tasks_note",
                {"workspace": ws, "task": task_id, "step_id": step_id, "note": "late", "expected_revision": stale},
            )
            assert error["code"] == "CONFLICT", error
            assert error["status"] == 409, error
            assert error["details"]["expected_revision"] == stale, error
            assert error["details"]["current_revision"] == current, error

            delta_after = await _ok(session, "tasks_delta", {"workspace": ws})
            assert delta_after["events"] == delta_before["events"], "the refused write left an event"
            assert delta_after["next_cursor"] == delta_before["next_cursor"], delta_after
            radar = await _ok(session, "tasks_radar", {"workspace": ws, "task": task_id})
            assert radar["target"]["revision"] == current, radar
            notes = await _ok(session, "branchmind_show", {"workspace": ws, "target": task_id})
            assert notes["entries"] == [], notes


# --- (d) notes on a branch, diff and merge ------------------------------------------------------


@pytest.mark.anyio
async def test_branch_notes_diff_then_merge_is_idempotent() -> None:
    ws = _workspace()
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            init = await _ok(session, "branchmind_init", {"workspace": ws})
            assert init["checkout"] == "main", init
            base = await _ok(
                session, "branchmind_notes_commit", {"doc": "notes", "workspace": ws, "content": "Decision: use sqlite"}
            )
            assert base["inserted"] is True and base["entry"]["branch"] == "main", base

            created = await _ok(
                session, "branchmind_branch_create", {"workspace": ws, "name": "what-if", "from": "main"}
            )
            assert created["branch"]["base_branch"] == "main", created
            dup = await _err(session, "branchmind_branch_create", {"workspace": ws, "name": "what-if"})
            assert dup["code"] == "CONFLICT", dup

            ours = []
            for text in ["What if: use postgres", "Postgres needs a server"]:
                written = await _ok(
                    session, "branchmind_notes_commit", {"doc": "notes", "workspace": ws, "branch": "what-if", "content": text}
                )
                assert written["entry"]["branch"] == "what-if", written
                ours.append(written["entry"]["seq"])

            view = await _ok(session, "branchmind_show", {"doc": "notes", "workspace": ws, "branch": "what-if"})
            assert [e["content"] for e in view["entries"]] == [
                "Postgres needs a server",
                "What if: use postgres",
                "Decision: use sqlite",
            ], "the branch sees its base as of branching, plus its own notes"

            diff = await _ok(session, "branchmind_diff", {"workspace": ws, "from": "main", "to": "what-if"})
            assert [e["seq"] for e in diff["entries"]] == list(reversed(ours)), diff
            back = await _ok(session, "branchmind_diff", {"workspace": ws, "from": "what-if", "to": "main"})
            assert back["entries"] == [], back

            merged = await _ok(session, "branchmind_merge", {"workspace": ws, "from": "what-if", "into": "main"})
            assert merged["merged"] == 2 and merged["dry_run"] is False, merged
            again = await _ok(session, "branchmind_merge", {"workspace": ws, "from": "what-if", "into": "main"})
            assert again["merged"] == 0 and again["skipped"] == 2, again

            main = await _ok(session, "branchmind_show", {"doc": "notes", "workspace": ws, "branch": "main"})
            copies = sorted(e["source_event_id"] for e in main["entries"] if e.get("source_event_id"))
            assert copies == sorted(f"merge:what-if:{s}" for s in ours), main
            assert len(main["entries"]) == 3, main


# --- (e) think cards ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_think_card_is_idempotent_and_a_changed_card_conflicts() -> None:
    ws = _workspace()
    card = {"id": "H1", "type": "hypothesis", "title": "The cache misses on cold start"}
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            first = await _ok(session, "branchmind_think_card", {"trace_doc": "trace", "graph_doc": "graph", "workspace": ws, "card": card})
            assert first["inserted"] is True and first["card_id"] == "H1", first
            assert first["graph_applied"]["nodes_upserted"] == 1, first

            second = await _ok(session, "branchmind_think_card", {"trace_doc": "trace", "graph_doc": "graph", "workspace": ws, "card": dict(card)})
            assert second["inserted"] is False, second
            assert second["graph_applied"] == {"nodes_upserted": 0, "edges_upserted": 0}, second

            changed = await _err(
                session,
                "branchmind_think_card",
                {"trace_doc": "trace", "graph_doc": "graph", "workspace": ws, "card": {**card, "title": "The cache never misses"}},
            )
            assert changed["code"] == "CONFLICT", changed
            assert changed["status"] == 409, changed

            trace = await _ok(session, "branchmind_show", {"workspace": ws, "branch": "main", "doc": "trace"})
            assert len(trace["entries"]) == 1, trace
            graph = await _ok(session, "branchmind_graph_query", {"doc": "graph", "workspace": ws, "ids": ["H1"]})
            [node] = graph["nodes"]
            assert node["title"] == card["title"] and node["type"] == "hypothesis", graph


# --- (f) output budgets -------------------------------------------------------------------------


@pytest.mark.anyio
async def test_show_never_exceeds_max_chars() -> None:
    ws = _workspace()
    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            for i in range(8):
                await _ok(
                    session,
                    "branchmind_notes_commit",
                    {"doc": "notes", "workspace": ws, "content": f"note {i}: " + "a long line of reasoning, café. " * 25},
                )
            for max_chars in (600, 1200):
                page = await _ok(session, "branchmind_show", {"doc": "notes", "workspace": ws, "max_chars": max_chars})
                size = len(_compact(page))
                assert size <= max_chars, f"{size} chars > max_chars {max_chars}: {page}"
                assert page["truncated"] is True, page
                assert page["budget"]["truncated"] is True, page
                assert page["budget"]["max_chars"] == max_chars, page
                assert page["budget"]["used_chars"] == size, page
                assert page["pagination"]["has_more"] is True, page
            # With room for one entry's frame only, the newest is kept with its content cut.
            page = await _ok(session, "branchmind_show", {"doc": "notes", "workspace": ws, "max_chars": 600})
            [entry] = page["entries"]
            assert entry["content"].startswith("note 7: "), entry
            assert entry["content_truncated"] is True, entry
            # Too small for even that: clamped to the entry with its content cut, and said so.
            page = await _ok(session, "branchmind_show", {"doc": "notes", "workspace": ws, "max_chars": 100})
            [entry] = page["entries"]
            assert entry["content_truncated"] is True, entry
            assert page["truncated"] is True, page
            assert page["budget"]["used_chars"] > 100, page
            assert page["budget"]["warning"].startswith("clamped max_chars 100 to "), page


# --- (g) 3-way graph merge and conflicts -------------------------------------------------------


@pytest.mark.anyio
async def test_graph_merge_conflict_is_discovered_once_and_resolves() -> None:
    ws = _workspace()

    def upsert(title: str) -> list[dict[str, Any]]:
        return [{"op": "node_upsert", "id": "x", "type": "idea", "title": title}]

    with anyio.fail_after(STEP_TIMEOUT_S):
        async with mcp_session(env("MOSS_TOKEN"), query=TOOLSETS) as (session, _init):
            await _ok(session, "branchmind_graph_apply", {"doc": "graph", "workspace": ws, "ops": upsert("base")})
            await _ok(session, "branchmind_branch_create", {"workspace": ws, "name": "b", "from": "main"})
            await _ok(session, "branchmind_graph_apply", {"doc": "graph", "workspace": ws, "branch": "main", "ops": upsert("ours")})
            await _ok(session, "branchmind_graph_apply", {"doc": "graph", "workspace": ws, "branch": "b", "ops": upsert("theirs")})

            first = await _ok(session, "branchmind_graph_merge", {"doc": "graph", "workspace": ws, "from": "b", "into": "main"})
            assert first["conflicts_created"] == 1 and first["merged"] == 0, first
            [conflict_id] = first["conflict_ids"]
            second = await _ok(session, "branchmind_graph_merge", {"doc": "graph", "workspace": ws, "from": "b", "into": "main"})
            assert second["conflicts_created"] == 0, second
            assert second["conflict_ids"] == [conflict_id], second

            listed = await _ok(session, "branchmind_graph_conflicts", {"doc": "graph", "workspace": ws, "into": "main"})
            assert [(c["conflict_id"], c["key"], c["status"]) for c in listed["conflicts"]] == [
                (conflict_id, "x", "open")
            ], listed
            shown = await _ok(session, "branchmind_graph_conflict_show", {"workspace": ws, "conflict_id": conflict_id})
            states = shown["conflict"]
            assert (states["base"]["title"], states["theirs"]["title"], states["ours"]["title"]) == (
                "base",
                "theirs",
                "ours",
            ), shown

            resolved = await _ok(
                session,
                "branchmind_graph_conflict_resolve",
                {"workspace": ws, "conflict_id": conflict_id, "resolution": "use_from"},
            )
            assert resolved["status"] == "resolved" and resolved["applied"] is True, resolved

            main = await _ok(session, "branchmind_graph_query", {"doc": "graph", "workspace": ws, "branch": "main", "ids": ["x"]})
            [node] = main["nodes"]
            assert node["title"] == "theirs" and node["deleted"] is False, main

            again = await _ok(
                session,
                "branchmind_graph_conflict_resolve",
                {"workspace": ws, "conflict_id": conflict_id, "resolution": "use_from"},
            )
            assert again["status"] == "resolved" and again["applied"] is False, again
