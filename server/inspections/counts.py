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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, text

#: Filter columns whose totals come from `inspection_counts`.
COUNTED_FILTERS = frozenset({"status", "veredict", "type"})
#: Counter rows per combination on PostgreSQL.
SHARDS = 16


@dataclass(frozen=True, slots=True)
class KeyColumn:
    """A column of a counter table's key and how a row of `inspections` gives its value."""

    name: str
    #: The `inspections` columns the value is read from (an update of one moves the count).
    sources: tuple[str, ...] = ()
    #: Its PostgreSQL expression over a row ("" for the inspection column of the same name).
    postgresql: str = ""
    #: Its SQLite expression over the row `{row}` (NEW, OLD, inspections); "" likewise.
    sqlite: str = ""

    def read_from(self) -> tuple[str, ...]:
        return self.sources or (self.name,)

    def pg_value(self) -> str:
        return f"{self.postgresql} AS {self.name}" if self.postgresql else self.name

    def sqlite_value(self, row: str) -> str:
        return self.sqlite.format(row=row) if self.sqlite else f"{row}.{self.name}"


@dataclass(frozen=True, slots=True)
class CounterTriggers:
    """The triggers keeping a counter table exact, for each dialect, and the statement filling
    it once from the rows already there: what a migration creating the table runs (copied
    into it as text, frozen), and the definition a head database's triggers are compared with
    (tests/server/test_migrations.py)."""

    #: The counter table they keep.
    table: str
    postgresql: list[str]
    postgresql_drop: list[str]
    sqlite: list[str]
    sqlite_drop: list[str]
    backfill_postgresql: str
    backfill_sqlite: str

    def install(self, connection: Connection) -> None:
        """Create (or replace) the triggers for the connection's dialect."""
        postgresql = connection.dialect.name == "postgresql"
        for statement in self.postgresql if postgresql else self.sqlite:
            connection.exec_driver_sql(statement)

    def rebuild(self, connection: Connection) -> None:
        """Install the triggers and count the rows already there afresh (a table whose
        triggers were missing holds no true count)."""
        self.install(connection)
        connection.exec_driver_sql(f"DELETE FROM {self.table}")
        postgresql = connection.dialect.name == "postgresql"
        connection.exec_driver_sql(self.backfill_postgresql if postgresql else self.backfill_sqlite)


def counter_triggers(table: str, columns: Sequence[KeyColumn]) -> CounterTriggers:
    """The triggers maintaining `table`, counting inspections per `columns` (and shard): per
    statement on PostgreSQL, into a random one of `SHARDS` rows, upserted in key order; per
    row on SQLite, into shard 0. Rows read from `inspections` are grouped by the key's names,
    or by position when a key column is computed (an alias is no input column)."""
    key = ", ".join(column.name for column in columns)
    values = ", ".join(column.pg_value() for column in columns)
    computed = any(column.postgresql for column in columns)
    group = ", ".join(str(n) for n in range(1, len(columns) + 1)) if computed else key
    upsert = f"ON CONFLICT ({key}, shard) DO UPDATE SET count = c.count + EXCLUDED.count;"
    function = f"{table}_maintain"
    events = ("insert", "update", "delete")
    function_ddl = f"""
CREATE OR REPLACE FUNCTION {function}() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    chosen_shard smallint := floor(random() * {SHARDS})::smallint;
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO {table} AS c ({key}, shard, count)
        SELECT {values}, chosen_shard, count(*) FROM new_rows
        GROUP BY {group} ORDER BY {group}
        {upsert}
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO {table} AS c ({key}, shard, count)
        SELECT {values}, chosen_shard, -count(*) FROM old_rows
        GROUP BY {group} ORDER BY {group}
        {upsert}
    ELSE
        INSERT INTO {table} AS c ({key}, shard, count)
        SELECT {key}, chosen_shard, sum(delta) FROM (
            SELECT {values}, -1 AS delta FROM old_rows
            UNION ALL
            SELECT {values}, 1 AS delta FROM new_rows
        ) AS moved
        GROUP BY {key} HAVING sum(delta) <> 0 ORDER BY {key}
        {upsert}
    END IF;
    RETURN NULL;
END
$$
"""
    transitions = {
        "insert": "NEW TABLE AS new_rows",
        "update": "OLD TABLE AS old_rows NEW TABLE AS new_rows",
        "delete": "OLD TABLE AS old_rows",
    }
    pg_drops = [f"DROP TRIGGER IF EXISTS {table}_{event} ON inspections" for event in events]
    postgresql = [
        function_ddl,
        *pg_drops,
        *(
            f"""CREATE TRIGGER {table}_{event} AFTER {event.upper()} ON inspections
    REFERENCING {transitions[event]}
    FOR EACH STATEMENT EXECUTE FUNCTION {function}()"""
            for event in events
        ),
    ]

    def add(row: str, delta: int) -> str:
        row_values = ", ".join(column.sqlite_value(row) for column in columns)
        return (
            f"INSERT INTO {table} ({key}, shard, count) VALUES ({row_values}, 0, {delta}) "
            f"ON CONFLICT ({key}, shard) DO UPDATE SET count = count + ({delta});"
        )

    sources = [source for column in columns for source in column.read_from()]
    changed = [f"OLD.{source} IS NOT NEW.{source}" for source in sources]
    when = "\n      OR ".join(" OR ".join(changed[i : i + 2]) for i in range(0, len(changed), 2))
    sqlite_drops = [f"DROP TRIGGER IF EXISTS {table}_{event}" for event in events]
    sqlite = [
        *sqlite_drops,
        f"""CREATE TRIGGER {table}_insert AFTER INSERT ON inspections
    BEGIN {add("NEW", 1)} END""",
        f"""CREATE TRIGGER {table}_update
    AFTER UPDATE OF {", ".join(sources)} ON inspections
    WHEN {when}
    BEGIN {add("OLD", -1)} {add("NEW", 1)} END""",
        f"""CREATE TRIGGER {table}_delete AFTER DELETE ON inspections
    BEGIN {add("OLD", -1)} END""",
    ]
    backfill = (
        f"INSERT INTO {table} ({key}, shard, count) SELECT {{values}}, 0, count(*) "
        f"FROM inspections GROUP BY {group}"
    )
    return CounterTriggers(
        table=table,
        postgresql=postgresql,
        postgresql_drop=[*pg_drops, f"DROP FUNCTION IF EXISTS {function}()"],
        sqlite=sqlite,
        sqlite_drop=sqlite_drops,
        backfill_postgresql=backfill.format(values=values),
        backfill_sqlite=backfill.format(
            values=", ".join(
                f"{column.sqlite_value('inspections')} AS {column.name}"
                if column.sqlite
                else column.name
                for column in columns
            )
        ),
    )


#: The triggers keeping `inspection_counts` exact.
TRIGGERS = counter_triggers(
    "inspection_counts",
    [KeyColumn(name) for name in ("company_id", "testing", "status", "veredict", "type")],
)


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
