"""The OpenAPI document: what `GET /openapi.json` serves is valid OpenAPI 3.1 (checked by
openapi-spec-validator, a standard validator) and equals the checked-in proto-docs/openapi.json.

Run by ../run-python.sh with MOSS_ADDR and MOSS_TOKEN exported.
"""

from __future__ import annotations

import json
import os
import pathlib
import urllib.request

from openapi_spec_validator import validate

ROOT = pathlib.Path(__file__).resolve().parents[3]


def served() -> dict:
    req = urllib.request.Request(
        os.environ["MOSS_ADDR"] + "/openapi.json",
        headers={"Authorization": "Bearer " + os.environ["MOSS_TOKEN"]},
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert resp.status == 200
        return json.load(resp)


def test_served_document_is_valid_openapi_3_1() -> None:
    doc = served()
    assert doc["openapi"].startswith("3.1")
    validate(doc)
    ops = {
        op["operationId"]
        for item in doc["paths"].values()
        for op in item.values()
        if isinstance(op, dict) and "operationId" in op
    }
    for op in ["capsule_store", "capsule_search", "capsule_compose", "health"]:
        assert op in ops, f"{op} missing from {sorted(ops)}"


def test_checked_in_document_is_the_served_one_and_valid() -> None:
    checked_in = json.loads((ROOT / "proto-docs" / "openapi.json").read_text())
    validate(checked_in)
    assert checked_in == served()
