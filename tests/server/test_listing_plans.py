"""The list's two queries are served by the filter's composite index alone, on the real database.

`count(*)` and the walk to a page's ids must be index-only scans of
`(company_id, testing, <filter>, created_at, id)` with no sort: a deep page then costs an index
walk, not a sort of every matching row nor a heap fetch per row. Pinned after the PostgreSQL list
benchmark (issue 4). The module loads a few thousand rows first (and, on PostgreSQL, runs
`VACUUM ANALYZE` as autovacuum would), so the planner plans for a table, not an empty one; on
PostgreSQL sequential and bitmap scans are switched off for the EXPLAIN all the same: the question
is which index the planner can use, not whether an index beats reading a few pages.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import Select, insert

if TYPE_CHECKING:
    from server.db import Database

#: A value for each filter of `listing.FILTERS`; every loaded row matches all of them.
FILTER_VALUES = {
    "status": "created",
    "veredict": "approved",
    "type": "car",
    "consumerIdentification": "30111222",
    "plate": "AA111AA",
    "templateId": "easy",
}
COMPANY_ID = "5f0c0a0000000000000plan01"
ROWS = 3000


@pytest.fixture(scope="module")
def loaded(db: Database) -> Database:
    """`ROWS` inspections of `COMPANY_ID`, then statistics as a running database would have."""
    from server.inspections.tables import InspectionRecord
    from server.templates.tables import TemplateManifestRecord

    now = datetime.now(UTC)
    manifest_key = "listing-plans-test"
    with db.engine.begin() as connection:
        connection.execute(
            insert(TemplateManifestRecord.__table__),  # type: ignore[attr-defined]
            [{"key": manifest_key, "template_id": "easy", "manifest": {}, "created_at": now}],
        )
        rows = [
            {
                "id": f"{COMPANY_ID[:16]}{index:08d}",
                "company_id": COMPANY_ID,
                "testing": False,
                "type": "car",
                "status": "created",
                "veredict": "approved",
                "consumer_identification": "30111222",
                "plate": "AA111AA",
                "template_id": "easy",
                "manifest_key": manifest_key,
                "access_code_hash": "0" * 64,
                "created_at": now - timedelta(seconds=ROWS - index),
                "updated_at": now,
                "state": {"padding": "x" * 500},
            }
            for index in range(ROWS)
        ]
        connection.execute(insert(InspectionRecord.__table__), rows)  # type: ignore[attr-defined]
    if db.dialect == "postgresql":
        autocommit = db.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        with autocommit as connection:
            connection.exec_driver_sql("VACUUM ANALYZE inspections")
    return db


def plan(db: Database, statement: Select[Any]) -> list[tuple[str, str]]:
    """(node or step, index name or detail) of each step of the plan of `statement`."""
    with db.engine.begin() as connection:
        sql = str(statement.compile(connection, compile_kwargs={"literal_binds": True}))
        if db.dialect == "sqlite":
            rows = connection.exec_driver_sql("EXPLAIN QUERY PLAN " + sql).all()
            return [("step", str(row[-1])) for row in rows]
        connection.exec_driver_sql("SET LOCAL enable_seqscan = off")
        connection.exec_driver_sql("SET LOCAL enable_bitmapscan = off")
        document = connection.exec_driver_sql("EXPLAIN (FORMAT JSON) " + sql).scalar_one()
    nodes: list[tuple[str, str]] = []
    pending = [(json.loads(document) if isinstance(document, str) else document)[0]["Plan"]]
    while pending:
        node = pending.pop()
        nodes.append((node["Node Type"], node.get("Index Name", "")))
        pending.extend(node.get("Plans", []))
    return nodes


def assert_index_only(db: Database, statement: Select[Any], index: str) -> None:
    """One index-only scan, of `index` (of any index named so far when `index` ends with `_`)."""
    steps = plan(db, statement)
    if db.dialect == "sqlite":
        covering = [d for _, d in steps if "USING COVERING INDEX " in d]
        names = [d.split("USING COVERING INDEX ")[1].split(" ")[0] for d in covering]
        assert not any("TEMP B-TREE" in detail for _, detail in steps), steps
    else:
        names = [name for node, name in steps if node == "Index Only Scan"]
        assert not any(node in ("Sort", "Incremental Sort") for node, _ in steps), steps
    assert len(names) == 1 and names[0].startswith(index), steps
    assert index.endswith("_") or names[0] == index, steps


@pytest.mark.parametrize("name", [None, *FILTER_VALUES])
def test_count_and_page_walk_are_index_only_scans_of_the_filter_index(
    loaded: Database, name: str | None
) -> None:
    from server.auth import AuthContext
    from server.inspections import listing

    assert set(FILTER_VALUES) == set(listing.FILTERS)
    auth = AuthContext(company_id=COMPANY_ID, mode="live", key_id="plan")
    chosen = listing.filters({name: FILTER_VALUES[name]} if name else {})
    index = f"ix_inspections_{listing.FILTERS[name][0]}" if name else "ix_inspections_chronological"
    # Without a filter any index starting (company_id, testing) counts as well as another.
    count_index = index if name else "ix_inspections_"
    assert_index_only(loaded, listing.count_statement(auth, chosen), count_index)
    assert_index_only(loaded, listing.page_ids_statement(auth, chosen, 10, 1_990), index)
    with loaded.engine.connect() as connection:
        assert connection.execute(listing.count_statement(auth, chosen)).scalar_one() == ROWS
