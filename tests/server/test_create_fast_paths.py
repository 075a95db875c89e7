"""The create path's shortcuts keep behaviour: live creates are counted once each by the atomic
increment. (The per-revision JSON Schema validator cache went with the schema check: the
runtime checks a creation body once, by hand, in `runtime.intake`.)"""

from __future__ import annotations

from typing import Any

import httpx

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
