"""Deep list pages skip whole hours through `inspection_hour_counts` (issue 16's SQLite deep
page): the pages they give are exactly those of the plain offset walk, and the counts stay exact
through inserts, changes of status, verdict, type or creation time, and deletes."""

from __future__ import annotations

import random
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import delete, func, insert, select, update

from server.auth import AuthContext
from server.db import Database
from server.inspections import hour_counts, listing
from server.inspections.tables import InspectionHourCountRecord, InspectionRecord
from server.settings import Settings

TABLE: Any = InspectionRecord.__table__  # type: ignore[attr-defined]
HOURS: Any = InspectionHourCountRecord.__table__  # type: ignore[attr-defined]
STATUSES = ("created", "started", "completed")


def _rows(company_id: str, count: int, start: datetime) -> list[dict[str, Any]]:
    """`count` rows over about 30 hours, a few at the very start of an hour, mixed statuses."""
    pick = random.Random(7)
    rows = []
    for index in range(count):
        created = start + timedelta(seconds=pick.choice([0, pick.randrange(0, 30 * 3600)]))
        inspection_id = f"{secrets.token_hex(8)}{index:08d}"
        rows.append(
            {
                "id": inspection_id,
                "company_id": company_id,
                "testing": False,
                "type": pick.choice(["car", "moto"]),
                "status": pick.choice(STATUSES),
                "veredict": "not_defined",
                "manifest_key": "hour-counts-test",
                "template_id": "easy",
                "access_code_hash": "0" * 64,
                "created_at": created,
                "updated_at": created,
                "state": {},
                "document": {"n": index},
            }
        )
    return rows


@pytest.fixture
def loaded(db: Database) -> tuple[Database, str]:
    from server.templates.tables import TemplateManifestRecord

    company_id = secrets.token_hex(12)
    start = datetime(2026, 3, 1, 7, 0, tzinfo=UTC)
    with db.engine.begin() as connection:
        exists = connection.execute(
            select(func.count()).where(TemplateManifestRecord.key == "hour-counts-test")  # type: ignore[arg-type]
        ).scalar_one()
        if not exists:
            connection.execute(
                insert(TemplateManifestRecord.__table__),  # type: ignore[attr-defined]
                [
                    {
                        "key": "hour-counts-test",
                        "template_id": "easy",
                        "manifest": {},
                        "created_at": start,
                    }
                ],
            )
        connection.execute(insert(TABLE), _rows(company_id, 600, start))
    return db, company_id


def _plain_page(db: Database, company_id: str, status: str | None, offset: int) -> list[str]:
    conditions = [TABLE.c.company_id == company_id, TABLE.c.testing.is_(False)]
    if status:
        conditions.append(TABLE.c.status == status)
    with db.engine.connect() as connection:
        statement = (
            select(TABLE.c.id)
            .where(*conditions)
            .order_by(TABLE.c.created_at, TABLE.c.id)
            .limit(10)
            .offset(offset)
        )
        return list(connection.execute(statement).scalars())


def _check_pages(db: Database, settings: Settings, company_id: str) -> None:
    auth = AuthContext(company_id=company_id, mode="live", key_id="hours")
    for status in (None, *STATUSES):
        for page in (1, 2, 7, 13, 20, 31, 59, 60, 61, 200):
            params = {"limit": "10", "page": str(page), "status": status}
            listed = listing.list_inspections(db, settings, auth, params)
            expected = _plain_page(db, company_id, status, (page - 1) * 10)
            assert [d["_id"] for d in listed["inspections"]] == expected, (status, page)


def _check_counts(db: Database, company_id: str) -> None:
    with db.engine.connect() as connection:
        kept = connection.execute(
            select(HOURS.c.hour, HOURS.c.status, func.sum(HOURS.c.count))
            .where(HOURS.c.company_id == company_id)
            .group_by(HOURS.c.hour, HOURS.c.status)
            .having(func.sum(HOURS.c.count) != 0)
        ).all()
        created = connection.execute(
            select(TABLE.c.created_at, TABLE.c.status).where(TABLE.c.company_id == company_id)
        ).all()
    expected: dict[tuple[int, str], int] = {}
    for created_at, status in created:
        key = (int(created_at.timestamp()) // hour_counts.HOUR, status)
        expected[key] = expected.get(key, 0) + 1
    assert {(int(h), s): int(n) for h, s, n in kept} == expected


def test_deep_pages_through_hour_counts_equal_the_plain_walk(
    loaded: tuple[Database, str], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, company_id = loaded
    monkeypatch.setattr(hour_counts, "MIN_OFFSET", 0)  # every page skips through the hours
    _check_counts(db, company_id)
    _check_pages(db, settings, company_id)


def test_hour_counts_stay_exact_through_changes_and_deletes(
    loaded: tuple[Database, str], settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, company_id = loaded
    monkeypatch.setattr(hour_counts, "MIN_OFFSET", 0)
    mine = TABLE.c.company_id == company_id
    with db.engine.begin() as connection:
        ids = list(
            connection.execute(select(TABLE.c.id).where(mine).order_by(TABLE.c.id)).scalars()
        )
        connection.execute(update(TABLE).where(TABLE.c.id.in_(ids[:50])).values(status="completed"))
        connection.execute(
            update(TABLE)
            .where(TABLE.c.id.in_(ids[50:60]))
            .values(created_at=datetime(2026, 3, 2, 23, 59, 59, 999999, tzinfo=UTC))
        )
        connection.execute(delete(TABLE).where(TABLE.c.id.in_(ids[60:90])))
    _check_counts(db, company_id)
    _check_pages(db, settings, company_id)
