"""Shared by the interop tests (run by ../run-python.sh): fixtures and helpers."""

from __future__ import annotations

import os
from typing import Any

import pytest

VALID_CAPSULE = (
    "## Objective\nx\n## Current status\nx\n## Decisions\nx\n"
    "## Next actions\nx\n## Key locations\nx\n## Open questions\nx\n"
)

# Each test is bounded, so a protocol hang fails fast instead of stalling CI.
STEP_TIMEOUT_S = 30


def env(name: str) -> str:
    """A variable run-python.sh exports; fails the test with what to do when it is missing."""
    value = os.environ.get(name, "").strip()
    if not value:
        pytest.fail(f"{name} is not set; run this through tests/interop/run-python.sh")
    return value


def wire(model: Any) -> dict[str, Any]:
    """An SDK result as the JSON the server sent (camelCase keys)."""
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
