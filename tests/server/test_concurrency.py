"""Concurrency over real HTTP from many threads: 64 simultaneous creations lose none, and
simultaneous changes of one inspection are all applied (the row lock serializes them)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from server.auth import consumed_inspections
from server.db import Database

SOURCE = """\
template "Counting damages"
    type: car

variable damages: numeric = 0

image front
    label: "Front"

feature damage_declaration: on

on damage declared
    set damages to damages + 1

verdict
    approve when damages < 1000
"""


def creation(template_id: str, index: int) -> dict[str, Any]:
    return {
        "templateId": template_id,
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": f"user{index}@example.com"},
        "consumer": {"identification": f"id-{index}"},
        "metadata": {"index": str(index)},
    }


def test_64_concurrent_creates_lose_none(
    live_server: str, db: Database, company: dict[str, Any]
) -> None:
    headers = {"x-api-key": company["liveKey"]}

    def create(index: int) -> tuple[int, str]:
        with httpx.Client(base_url=live_server, timeout=60) as http:
            response = http.post(
                "/v1/inspection/car", json=creation("easy", index), headers=headers
            )
            return response.status_code, response.json().get("inspectionId", response.text)

    with ThreadPoolExecutor(max_workers=64) as pool:
        results = list(pool.map(create, range(64)))
    assert [status for status, _ in results] == [201] * 64, results
    created = {inspection_id for _, inspection_id in results}
    assert len(created) == 64

    with httpx.Client(base_url=live_server, timeout=60) as http:
        listed = http.get("/v1/inspection", params={"limit": 100}, headers=headers).json()
        assert listed["totalInspections"] == 64
        assert {i["_id"] for i in listed["inspections"]} == created
        indexes = sorted(int(i["metadata"]["index"]) for i in listed["inspections"])
        assert indexes == list(range(64))
        one = http.get(
            "/v1/inspection", params={"consumerIdentification": "id-17"}, headers=headers
        ).json()
        assert [i["metadata"]["index"] for i in one["inspections"]] == ["17"]
    # Every live creation was counted exactly once, under concurrent writers.
    assert consumed_inspections(db, company["companyId"]) == 64


def test_concurrent_changes_of_one_inspection_are_all_kept(
    live_server: str, company: dict[str, Any]
) -> None:
    headers = {"x-api-key": company["testKey"]}
    with httpx.Client(base_url=live_server, timeout=60) as http:
        template = http.post(
            "/v1/inspection/template",
            content=SOURCE.encode(),
            headers={**headers, "content-type": "text/plain"},
        ).json()
        created = http.post(
            "/v1/inspection/car", json=creation(template["_id"], 0), headers=headers
        ).json()
    url = f"/v1/inspection/{created['inspectionId']}/damage"

    def declare(index: int) -> int:
        damage = {"part": f"part-{index}", "damage": "dent", "severity": "minor"}
        with httpx.Client(base_url=live_server, timeout=60) as http:
            return http.post(url, json=damage, headers=headers).status_code

    with ThreadPoolExecutor(max_workers=24) as pool:
        statuses = list(pool.map(declare, range(24)))
    assert statuses == [200] * 24
    with httpx.Client(base_url=live_server, timeout=60) as http:
        document = http.get(f"/v1/inspection/{created['inspectionId']}", headers=headers).json()
    assert {"name": "damages", "value": 24} in document["variables"]
    parts = sorted(d["part"] for d in document["products"][0]["damages"])
    assert parts == sorted(f"part-{i}" for i in range(24))
