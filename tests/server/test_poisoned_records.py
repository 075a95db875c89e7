"""Records stored before `server.boundary` refused bad text can still hold a lone surrogate: no
read of them may be a 500. Before the safe renderer, GET, the list page, start, finish and the
presigned view of such an inspection all answered 500 `internal_error` (the JSON encoder cannot
write an unpaired surrogate as UTF-8); now they answer as usual, the surrogate rendered as
U+FFFD (the Unicode replacement character).

Runs on SQLite and PostgreSQL: both keep the escape `\\ud800` in their JSON columns.
"""

from __future__ import annotations

from typing import Any

import httpx

from server.db import Database
from server.inspections.tables import InspectionRecord

MARK = "POISON-HERE"
SURROGATE = "\ud800"


def poisoned(value: Any) -> Any:
    """`value` with every `MARK` text replaced by a lone surrogate (as old records hold it)."""
    if isinstance(value, str):
        return value.replace(MARK, SURROGATE)
    if isinstance(value, dict):
        return {poisoned(key): poisoned(child) for key, child in value.items()}
    if isinstance(value, list):
        return [poisoned(child) for child in value]
    return value


def poison(db: Database, inspection_id: str) -> None:
    with db.session() as session:
        record = session.get(InspectionRecord, inspection_id)
        assert record is not None
        assert MARK in str(record.state) and MARK in str(record.document)
        record.state = poisoned(record.state)
        record.document = poisoned(record.document)
        session.add(record)
        session.commit()


def test_stored_lone_surrogates_are_rendered_not_a_500(
    client: httpx.Client, live_server: str, test_headers: dict[str, str], db: Database
) -> None:
    created = client.post(
        "/v1/inspection/car",
        json={
            "templateId": "easy",
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": "a@example.com"},
            "car": {"plate": "AB123CD"},
            "consumer": {"firstName": f"Ana{MARK}"},
            "metadata": {"note": f"v{MARK}"},
        },
        headers=test_headers,
    )
    assert created.status_code == 201, created.text
    inspection_id = created.json()["inspectionId"]
    poison(db, inspection_id)

    read = client.get(f"/v1/inspection/{inspection_id}", headers=test_headers)
    assert read.status_code == 200, read.text
    assert read.json()["metadata"] == {"note": "v\ufffd"}
    assert "Ana\ufffd" in read.text  # the consumer's first name, wherever it is shown

    listed = client.get("/v1/inspection", params={"plate": "AB123CD"}, headers=test_headers)
    assert listed.status_code == 200, listed.text
    assert {"note": "v\ufffd"} in [doc["metadata"] for doc in listed.json()["inspections"]]

    link = client.post(
        f"/v1/inspection/presign/detail/{inspection_id}", headers=test_headers
    ).json()
    anonymous = httpx.get(link["url"])
    assert anonymous.status_code == 200, anonymous.text
    assert anonymous.json()["metadata"] == {"note": "v\ufffd"}

    started = client.post(f"/v1/inspection/{inspection_id}/start", headers=test_headers)
    assert started.status_code == 200, started.text
    finished = client.post(f"/v1/inspection/finish/{inspection_id}", headers=test_headers)
    assert finished.status_code == 200, finished.text
    assert finished.json()["metadata"] == {"note": "v\ufffd"}
