"""Maintained counts of inspections, so a list's `totalInspections` costs a few rows, not a walk
over every matching index entry.

`inspection_counts` holds, per (company, testing, status, veredict, type, shard), how many
inspections have those values. Triggers on `inspections` keep it exact in the same transaction
as every write, whoever writes (the API, the worker's expiry sweep, a bulk load): created rows
add one, deleted rows subtract one, an update that changes one of those columns moves one from
the old combination to the new.

On PostgreSQL the triggers are per statement (transition tables), so a bulk insert of 5,000
rows costs one grouped upsert, and each statement writes to one of `SHARDS` rows of a
combination chosen at random: concurrent creates of one company then rarely wait for one
another's counter row lock. The rows of a statement are upserted in key order, so two
transactions of one counted statement each (a creation, a change) never lock two counter rows
in opposite orders; one of several statements (the expiry sweep's batch) can, and PostgreSQL
then rolls one of the two back as a deadlock: the sweep runs its batch again
(`server.inspections.expiry`), a request answers 503 `service_unavailable` to be retried. A
shard's count can go below zero (a create counted in shard 3, its status change out of it in
shard 5); only the sum over shards means something. SQLite has one writer at a time: row
triggers, shard 0.

A total comes from here when the list's filters are only among `COUNTED_FILTERS` (none, status,
veredict, type); the selective filters (plate, identification, template) count through their
own indexes (few rows match them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, text

#: Filter columns whose totals come from `inspection_counts`.
COUNTED_FILTERS = frozenset({"status", "veredict", "type"})
#: Counter rows per combination on PostgreSQL.
SHARDS = 16

_KEY = "company_id, testing, status, veredict, type"

POSTGRESQL_DDL = [
    f"""
CREATE OR REPLACE FUNCTION inspection_counts_maintain() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    chosen_shard smallint := floor(random() * {SHARDS})::smallint;
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO inspection_counts AS c ({_KEY}, shard, count)
        SELECT {_KEY}, chosen_shard, count(*) FROM new_rows
        GROUP BY {_KEY} ORDER BY {_KEY}
        ON CONFLICT ({_KEY}, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO inspection_counts AS c ({_KEY}, shard, count)
        SELECT {_KEY}, chosen_shard, -count(*) FROM old_rows
        GROUP BY {_KEY} ORDER BY {_KEY}
        ON CONFLICT ({_KEY}, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
    ELSE
        INSERT INTO inspection_counts AS c ({_KEY}, shard, count)
        SELECT {_KEY}, chosen_shard, sum(delta) FROM (
            SELECT {_KEY}, -1 AS delta FROM old_rows
            UNION ALL
            SELECT {_KEY}, 1 AS delta FROM new_rows
        ) AS moved
        GROUP BY {_KEY} HAVING sum(delta) <> 0 ORDER BY {_KEY}
        ON CONFLICT ({_KEY}, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
    END IF;
    RETURN NULL;
END
$$
""",
    "DROP TRIGGER IF EXISTS inspection_counts_insert ON inspections",
    "DROP TRIGGER IF EXISTS inspection_counts_update ON inspections",
    "DROP TRIGGER IF EXISTS inspection_counts_delete ON inspections",
    """CREATE TRIGGER inspection_counts_insert AFTER INSERT ON inspections
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION inspection_counts_maintain()""",
    """CREATE TRIGGER inspection_counts_update AFTER UPDATE ON inspections
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION inspection_counts_maintain()""",
    """CREATE TRIGGER inspection_counts_delete AFTER DELETE ON inspections
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION inspection_counts_maintain()""",
]

POSTGRESQL_DROP = [
    "DROP TRIGGER IF EXISTS inspection_counts_insert ON inspections",
    "DROP TRIGGER IF EXISTS inspection_counts_update ON inspections",
    "DROP TRIGGER IF EXISTS inspection_counts_delete ON inspections",
    "DROP FUNCTION IF EXISTS inspection_counts_maintain()",
]


def _sqlite_add(row: str, delta: int) -> str:
    return (
        f"INSERT INTO inspection_counts ({_KEY}, shard, count) VALUES ({row}.company_id, "
        f"{row}.testing, {row}.status, {row}.veredict, {row}.type, 0, {delta}) "
        f"ON CONFLICT ({_KEY}, shard) DO UPDATE SET count = count + ({delta});"
    )


SQLITE_DDL = [
    "DROP TRIGGER IF EXISTS inspection_counts_insert",
    "DROP TRIGGER IF EXISTS inspection_counts_update",
    "DROP TRIGGER IF EXISTS inspection_counts_delete",
    f"""CREATE TRIGGER inspection_counts_insert AFTER INSERT ON inspections
    BEGIN {_sqlite_add("NEW", 1)} END""",
    f"""CREATE TRIGGER inspection_counts_update
    AFTER UPDATE OF company_id, testing, status, veredict, type ON inspections
    WHEN OLD.company_id IS NOT NEW.company_id OR OLD.testing IS NOT NEW.testing
      OR OLD.status IS NOT NEW.status OR OLD.veredict IS NOT NEW.veredict
      OR OLD.type IS NOT NEW.type
    BEGIN {_sqlite_add("OLD", -1)} {_sqlite_add("NEW", 1)} END""",
    f"""CREATE TRIGGER inspection_counts_delete AFTER DELETE ON inspections
    BEGIN {_sqlite_add("OLD", -1)} END""",
]

SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS inspection_counts_insert",
    "DROP TRIGGER IF EXISTS inspection_counts_update",
    "DROP TRIGGER IF EXISTS inspection_counts_delete",
]

#: Fills the counts from the rows already there (the migration, once, under its lock).
BACKFILL = (
    f"INSERT INTO inspection_counts ({_KEY}, shard, count) "
    f"SELECT {_KEY}, 0, count(*) FROM inspections GROUP BY {_KEY}"
)


def install(connection: Connection) -> None:
    """Create (or replace) the triggers for the connection's dialect."""
    statements = POSTGRESQL_DDL if connection.dialect.name == "postgresql" else SQLITE_DDL
    for statement in statements:
        connection.exec_driver_sql(statement)


def uninstall(connection: Connection) -> None:
    statements = POSTGRESQL_DROP if connection.dialect.name == "postgresql" else SQLITE_DROP
    for statement in statements:
        connection.exec_driver_sql(statement)


def counted(chosen: Mapping[str, str]) -> bool:
    """Whether the total of these filters comes from the maintained counts."""
    return set(chosen) <= COUNTED_FILTERS


def total(connection: Connection, company_id: str, testing: bool, chosen: Mapping[str, str]) -> int:
    """The exact number of the company's inspections (of this key mode) matching `chosen`, a
    mapping of `COUNTED_FILTERS` columns to values: a sum over a few counter rows."""
    conditions = ["company_id = :company_id", "testing = :testing"]
    params: dict[str, Any] = {"company_id": company_id, "testing": testing}
    for column, value in chosen.items():
        if column not in COUNTED_FILTERS:
            raise ValueError(f"{column} is not a counted filter")
        conditions.append(f"{column} = :{column}")
        params[column] = value
    statement = text(
        "SELECT COALESCE(SUM(count), 0) FROM inspection_counts WHERE " + " AND ".join(conditions)
    )
    return int(connection.execute(statement, params).scalar_one())
