"""`totalInspections` from the maintained counts (`server.inspections.counts`): exact after
creates (one by one, concurrent, in bulk), status/veredict changes and deletes, for no filter and
for every status / veredict / type filter, and the same as `count(*)` for the selective ones."""

from __future__ import annotations

import itertools
import secrets
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
from sqlalchemy import delete, func, insert, select, update

from server.db import Database
from server.inspections.listing import STATUSES, VEREDICTS
from server.inspections.tables import InspectionRecord

TABLE: Any = InspectionRecord.__table__  # type: ignore[attr-defined]


def creation() -> dict[str, Any]:
    return {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "car": {"plate": "AB123CD"},
    }


def _count(db: Database, company_id: str, testing: bool, **where: str) -> int:
    """What the list must count, straight from the rows: `veredict=not_provided` means no
    verdict yet (not_defined, and not completed), as the list's own page filters it."""
    conditions = [TABLE.c.company_id == company_id, TABLE.c.testing == testing]
    for column, value in where.items():
        if column == "veredict" and value == "not_provided":
            conditions += [TABLE.c.veredict == "not_defined", TABLE.c.status != "completed"]
        else:
            conditions.append(TABLE.c[column] == value)
    with db.engine.connect() as connection:
        return int(connection.execute(select(func.count()).where(*conditions)).scalar_one())


def _total(client: httpx.Client, headers: dict[str, str], **params: str) -> int:
    response = client.get("/v1/inspection", params={"limit": "1", **params}, headers=headers)
    assert response.status_code == 200, response.text
    total: int = response.json()["totalInspections"]
    return total


def _check_every_filter(
    client: httpx.Client, db: Database, company_id: str, headers: dict[str, str]
) -> None:
    assert _total(client, headers) == _count(db, company_id, True)
    for status in STATUSES:
        assert _total(client, headers, status=status) == _count(db, company_id, True, status=status)
    for veredict in VEREDICTS:
        assert _total(client, headers, veredict=veredict) == _count(
            db, company_id, True, veredict=veredict
        )
    for status, veredict in itertools.product(STATUSES, VEREDICTS):
        assert _total(client, headers, status=status, veredict=veredict, type="car") == _count(
            db, company_id, True, status=status, veredict=veredict, type="car"
        )
    assert _total(client, headers, plate="AB123CD") == _count(db, company_id, True, plate="AB123CD")


def test_totals_stay_exact_through_creates_changes_and_deletes(
    client: httpx.Client, db: Database, company: dict[str, Any], test_headers: dict[str, str]
) -> None:
    company_id = company["companyId"]
    live = {"x-api-key": company["liveKey"]}

    def create(headers: dict[str, str]) -> str:
        with httpx.Client(base_url=str(client.base_url), timeout=30) as own:
            response = own.post("/v1/inspection/car", json=creation(), headers=headers)
        assert response.status_code == 201, response.text
        inspection_id: str = response.json()["inspectionId"]
        return inspection_id

    with ThreadPoolExecutor(8) as pool:  # concurrent creates, both key modes
        created = list(pool.map(create, [test_headers] * 12))
        list(pool.map(create, [live] * 3))
    assert _total(client, test_headers) == 12
    assert _total(client, live) == 3
    _check_every_filter(client, db, company_id, test_headers)

    # A bulk load (one multi-row INSERT) of clones with every status and veredict.
    with db.engine.begin() as connection:
        template = dict(
            connection.execute(select(TABLE).where(TABLE.c.id == created[0])).mappings().one()
        )
        clones = [
            {**template, "id": secrets.token_hex(12), "status": status, "veredict": veredict}
            for status, veredict in itertools.product(STATUSES, VEREDICTS)
            for _ in range(3)
        ]
        connection.execute(insert(TABLE), clones)
    _check_every_filter(client, db, company_id, test_headers)

    # One statement changing many rows' status and veredict; one changing nothing counted.
    with db.engine.begin() as connection:
        connection.execute(
            update(TABLE)
            .where(TABLE.c.company_id == company_id, TABLE.c.status == "created")
            .values(status="blocked", veredict="disapproved")
        )
        connection.execute(
            update(TABLE).where(TABLE.c.company_id == company_id).values(plate="AB123CD")
        )
    _check_every_filter(client, db, company_id, test_headers)

    # Deletes, and a transaction that rolls back (its counts roll back with it).
    with db.engine.begin() as connection:
        connection.execute(
            delete(TABLE).where(
                TABLE.c.company_id == company_id,
                TABLE.c.status == "completed",
                TABLE.c.id.notin_(created),
            )
        )
    connection = db.engine.connect()
    transaction = connection.begin()
    connection.execute(delete(TABLE).where(TABLE.c.id.in_([row["id"] for row in clones[:5]])))
    transaction.rollback()
    connection.close()
    _check_every_filter(client, db, company_id, test_headers)
    assert _total(client, live) == 3 == _count(db, company_id, False)


def test_other_companies_and_modes_are_not_counted(
    client: httpx.Client,
    company: dict[str, Any],
    other_company: dict[str, Any],
    test_headers: dict[str, str],
) -> None:
    response = client.post(
        "/v1/inspection/car", json=creation(), headers={"x-api-key": other_company["testKey"]}
    )
    assert response.status_code == 201
    assert _total(client, test_headers) == 0
    assert _total(client, {"x-api-key": company["liveKey"]}) == 0
    assert _total(client, {"x-api-key": other_company["testKey"]}) == 1
