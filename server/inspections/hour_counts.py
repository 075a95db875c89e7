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

from server.inspections.counts import COUNTED_FILTERS, KeyColumn, counter_triggers

#: Seconds per bucket.
HOUR = 3600
#: Offsets below this walk the index directly (a few hundred microseconds at most).
MIN_OFFSET = 2_000

#: The hour of a row's `created_at` on PostgreSQL (`extract` is exact `numeric`) and on SQLite,
#: where `created_at` is stored as 'YYYY-MM-DD HH:MM:SS.ffffff' (naive UTC): the fraction is
#: cut off first, since SQLite's date functions round it to milliseconds and 23:59:59.9999
#: would land in the next hour.
HOUR_COLUMN = KeyColumn(
    "hour",
    sources=("created_at",),
    postgresql=f"floor(extract(epoch FROM created_at) / {HOUR})::bigint",
    sqlite=f"CAST(strftime('%s', substr({{row}}.created_at, 1, 19)) AS INTEGER) / {HOUR}",
)

#: The triggers keeping `inspection_hour_counts` exact.
TRIGGERS = counter_triggers(
    "inspection_hour_counts",
    [
        KeyColumn("company_id"),
        KeyColumn("testing"),
        HOUR_COLUMN,
        *(KeyColumn(name) for name in ("status", "veredict", "type")),
    ],
)


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
