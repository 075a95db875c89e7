"""Inspections counted per hour of creation, so a deep list page skips whole hours instead of
walking every index entry before it.

A list is ordered by `(created_at, id)` and paged by offset. Walking the filter index past
`offset` entries costs about 40 ns an entry on SQLite, in the API process: page 5,000 of 10 walks
49,990 entries, 2 ms, more than the rest of the page. `inspection_hour_counts` holds, per
(company, testing, hour of `created_at`, status, veredict, type, shard), how many inspections
have those values; triggers keep it exact in the same transaction as every write, as
`server.inspections.counts` does for the totals (same sharding on PostgreSQL). A page at a large
offset first sums those rows in hour order until the hour holding the page's first row, then
walks only inside that hour: `created_at >= <that hour>` and the offset less what the earlier
hours hold. Exact, since the hour is a monotonic function of `created_at`; cheap while an hour
holds many inspections (one row instead of thousands of index entries), and no worse than the
walk when it holds few (`MIN_OFFSET` keeps small offsets on the plain walk).

The hour is `floor(epoch seconds / 3600)` of the UTC `created_at` (PostgreSQL's `extract` is
exact `numeric`; SQLite's computation drops the fraction first), the same in both databases'
triggers and in `hour_start`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, text

from server.inspections.counts import COUNTED_FILTERS, SHARDS

#: Seconds per bucket.
HOUR = 3600
#: Offsets below this walk the index directly (a few hundred microseconds at most).
MIN_OFFSET = 2_000

_KEY = "company_id, testing, hour, status, veredict, type"
_VALUES = "company_id, testing, {hour} AS hour, status, veredict, type"
_PG_HOUR = f"floor(extract(epoch FROM created_at) / {HOUR})::bigint"

POSTGRESQL_DDL = [
    f"""
CREATE OR REPLACE FUNCTION inspection_hour_counts_maintain() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    chosen_shard smallint := floor(random() * {SHARDS})::smallint;
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO inspection_hour_counts AS c ({_KEY}, shard, count)
        SELECT {_VALUES.format(hour=_PG_HOUR)}, chosen_shard, count(*) FROM new_rows
        GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
        ON CONFLICT ({_KEY}, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO inspection_hour_counts AS c ({_KEY}, shard, count)
        SELECT {_VALUES.format(hour=_PG_HOUR)}, chosen_shard, -count(*) FROM old_rows
        GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6
        ON CONFLICT ({_KEY}, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
    ELSE
        INSERT INTO inspection_hour_counts AS c ({_KEY}, shard, count)
        SELECT {_KEY}, chosen_shard, sum(delta) FROM (
            SELECT {_VALUES.format(hour=_PG_HOUR)}, -1 AS delta FROM old_rows
            UNION ALL
            SELECT {_VALUES.format(hour=_PG_HOUR)}, 1 AS delta FROM new_rows
        ) AS moved
        GROUP BY {_KEY} HAVING sum(delta) <> 0 ORDER BY {_KEY}
        ON CONFLICT ({_KEY}, shard) DO UPDATE SET count = c.count + EXCLUDED.count;
    END IF;
    RETURN NULL;
END
$$
""",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_insert ON inspections",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_update ON inspections",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_delete ON inspections",
    """CREATE TRIGGER inspection_hour_counts_insert AFTER INSERT ON inspections
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION inspection_hour_counts_maintain()""",
    """CREATE TRIGGER inspection_hour_counts_update AFTER UPDATE ON inspections
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION inspection_hour_counts_maintain()""",
    """CREATE TRIGGER inspection_hour_counts_delete AFTER DELETE ON inspections
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION inspection_hour_counts_maintain()""",
]

POSTGRESQL_DROP = [
    "DROP TRIGGER IF EXISTS inspection_hour_counts_insert ON inspections",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_update ON inspections",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_delete ON inspections",
    "DROP FUNCTION IF EXISTS inspection_hour_counts_maintain()",
]


def _sqlite_hour(row: str) -> str:
    # created_at is stored as 'YYYY-MM-DD HH:MM:SS.ffffff' (naive UTC). The fraction is cut
    # off first: SQLite's date functions round it to milliseconds, and 23:59:59.9999 would
    # land in the next hour.
    return f"CAST(strftime('%s', substr({row}.created_at, 1, 19)) AS INTEGER) / {HOUR}"


def _sqlite_add(row: str, delta: int) -> str:
    return (
        f"INSERT INTO inspection_hour_counts ({_KEY}, shard, count) VALUES ({row}.company_id, "
        f"{row}.testing, {_sqlite_hour(row)}, {row}.status, {row}.veredict, {row}.type, 0, "
        f"{delta}) ON CONFLICT ({_KEY}, shard) DO UPDATE SET count = count + ({delta});"
    )


SQLITE_DDL = [
    "DROP TRIGGER IF EXISTS inspection_hour_counts_insert",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_update",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_delete",
    f"""CREATE TRIGGER inspection_hour_counts_insert AFTER INSERT ON inspections
    BEGIN {_sqlite_add("NEW", 1)} END""",
    f"""CREATE TRIGGER inspection_hour_counts_update
    AFTER UPDATE OF company_id, testing, created_at, status, veredict, type ON inspections
    WHEN OLD.company_id IS NOT NEW.company_id OR OLD.testing IS NOT NEW.testing
      OR OLD.created_at IS NOT NEW.created_at OR OLD.status IS NOT NEW.status
      OR OLD.veredict IS NOT NEW.veredict OR OLD.type IS NOT NEW.type
    BEGIN {_sqlite_add("OLD", -1)} {_sqlite_add("NEW", 1)} END""",
    f"""CREATE TRIGGER inspection_hour_counts_delete AFTER DELETE ON inspections
    BEGIN {_sqlite_add("OLD", -1)} END""",
]

SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS inspection_hour_counts_insert",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_update",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_delete",
]


def backfill(connection: Connection) -> None:
    """Fill the counts from the rows already there (the migration, once, under its lock)."""
    hour = _PG_HOUR if connection.dialect.name == "postgresql" else _sqlite_hour("inspections")
    connection.exec_driver_sql(
        f"INSERT INTO inspection_hour_counts ({_KEY}, shard, count) "
        f"SELECT {_VALUES.format(hour=hour)}, 0, count(*) FROM inspections "
        "GROUP BY 1, 2, 3, 4, 5, 6"
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


def hour_start(hour: int) -> datetime:
    """The first instant of an hour bucket."""
    return datetime.fromtimestamp(hour * HOUR, UTC)


def skip(
    connection: Connection,
    company_id: str,
    testing: bool,
    chosen: Mapping[str, str],
    offset: int,
) -> tuple[datetime, int] | None:
    """Where the row at `offset` of this list is: the start of its hour and its offset among
    the rows from that hour on. None when fewer than `offset + 1` rows match (an empty page).
    `chosen` maps `COUNTED_FILTERS` columns to values, as `counts.total` takes them. The rows
    are read in hour order and reading stops at the hour found."""
    conditions = ["company_id = :company_id", "testing = :testing"]
    params: dict[str, Any] = {"company_id": company_id, "testing": testing}
    for column, value in chosen.items():
        if column not in COUNTED_FILTERS:
            raise ValueError(f"{column} is not a counted filter")
        conditions.append(f"{column} = :{column}")
        params[column] = value
    statement = text(
        "SELECT hour, SUM(count) FROM inspection_hour_counts WHERE "
        + " AND ".join(conditions)
        + " GROUP BY hour ORDER BY hour"
    )
    before = 0
    for hour, count in connection.execute(statement, params):
        if before + int(count) > offset:
            return hour_start(int(hour)), offset - before
        before += int(count)
    return None
