"""The create path's shortcuts keep behaviour: the per-revision schema validator cache never
serves another schema, and live creates are counted once each by the atomic increment."""

from __future__ import annotations

import copy
from typing import Any

import httpx
import pytest

from inspectlang.compiler import compile_source
from runtime import InspectionError, intake
from server.auth import consumed_inspections
from server.db import Database

SOURCE = """template "Cache test car"
    type: car
    id: "65a1f0c2b3d4e5f6012345ab"

input mileage
    type: numeric
    label: "Mileage"
    asked at: create
    required
    minimum: 0

verdict
    approve when inputs.mileage >= 0
    otherwise "Bad mileage"
"""

BODY: dict[str, Any] = {
    "locale": "en_US",
    "delivery": {"channel": "email", "destination": "a@b.com"},
}


def _mileage_key(schema: dict[str, Any]) -> str:
    (key,) = schema["properties"]["inputs"]["properties"]
    return str(key)


def test_validator_is_built_once_per_revision_and_still_validates() -> None:
    manifest = compile_source(SOURCE, "cache.insp")
    key = _mileage_key(manifest.schema_)
    assert intake._validator(manifest) is intake._validator(manifest)
    intake.check_schema(manifest, dict(BODY), {key: 10})
    with pytest.raises(InspectionError) as refused:
        intake.check_schema(manifest, dict(BODY), {key: -1})
    assert refused.value.code == "invalid_body"
    assert [p["field"] for p in refused.value.errors] == [f"inputs.{key}"]


def test_same_revision_with_another_schema_gets_its_own_validator() -> None:
    manifest = compile_source(SOURCE, "cache.insp")
    key = _mileage_key(manifest.schema_)
    intake._validator(manifest)  # cached under the revision
    schema = copy.deepcopy(manifest.schema_)
    schema["properties"]["inputs"]["properties"][key]["minimum"] = 100
    changed = manifest.model_copy(update={"schema_": schema})
    assert changed.logic.revision == manifest.logic.revision
    with pytest.raises(InspectionError) as refused:
        intake.check_schema(changed, dict(BODY), {key: 10})
    assert refused.value.code == "invalid_body"
    intake.check_schema(manifest, dict(BODY), {key: 10})  # the original schema still applies


def test_each_live_create_counts_once_and_test_creates_do_not(
    client: httpx.Client, db: Database, company: dict[str, Any]
) -> None:
    body = {**BODY, "templateId": "easy", "car": {"plate": "AB123CD"}}
    for key, expected in (
        (company["liveKey"], 1),
        (company["liveKey"], 2),
        (company["testKey"], 2),
    ):
        created = client.post("/v1/inspection/car", json=body, headers={"x-api-key": key})
        assert created.status_code == 201, created.text
        assert consumed_inspections(db, company["companyId"]) == expected
