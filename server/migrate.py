"""Schema migrations (Alembic): the database's schema follows the code's through upgrades.

The migration scripts ship inside the package (`server/migrations/versions/`), so an installed
service can migrate itself; nothing reads an `alembic.ini` from the working directory.

- `upgrade(database)` brings a database to the newest revision (`inspectlang admin migrate`).
- `prepare(database, env)` is what `serve`, `worker` and the admin commands run at start: in
  development it upgrades; in production it refuses an outdated schema with `SchemaOutdated`,
  whose message names the command to run, because an upgrade there is an operator's decision
  (a backup first, one process at a time).
- A database made before migrations existed (tables, no `alembic_version`) holds exactly the
  first revision's schema (`create_all` of the same tables): it is stamped at that revision,
  then upgraded. One `create_all` made of today's tables is stamped at head, and given what
  the revisions make beside the tables (`install_head_extras`: the counter triggers, counted
  afresh, and on PostgreSQL the search's trigram index), which `create_all` cannot make.

On PostgreSQL an upgrade holds an advisory lock, so processes starting together upgrade once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, inspect, text

from server.db import Database
from server.errors import SchemaOutdated, ServerError

MIGRATIONS = Path(__file__).with_name("migrations")
#: The first revision: what `create_all` made before migrations existed.
BASE_REVISION = "0001"
#: A table every revision has, telling a pre-migrations database from an empty one.
SENTINEL_TABLE = "companies"
#: Key of the PostgreSQL advisory lock held while upgrading ("insp" in ASCII).
ADVISORY_LOCK_KEY = 0x696E7370


def _config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def head() -> str:
    """The newest revision the code knows."""
    revision = ScriptDirectory.from_config(_config()).get_current_head()
    if revision is None:  # pragma: no cover - the package always ships its migrations
        raise ServerError("no migrations found in " + str(MIGRATIONS))
    return revision


def current(database: Database) -> str | None:
    """The database's revision; None when it has none (empty, or made before migrations)."""
    with database.engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def upgrade(database: Database, revision: str = "head") -> tuple[str | None, str | None]:
    """Upgrade to `revision`; (the revision before, the revision after)."""
    with database.engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": ADVISORY_LOCK_KEY}
            )
        before = MigrationContext.configure(connection).get_current_revision()
        config = _config(connection)
        if before is None and inspect(connection).has_table(SENTINEL_TABLE):
            # Made by `create_all`: of this version (exactly the models: at head), or of one
            # from before migrations existed (the first revision's tables).
            at_head = _matches_models(connection)
            command.stamp(config, "head" if at_head else BASE_REVISION)
            if at_head:
                install_head_extras(connection)
        command.upgrade(config, revision)
        after = MigrationContext.configure(connection).get_current_revision()
    return before, after


#: Indexes a migration makes outside the tables' metadata (a dialect's own kind of index, such
#: as the trigram index of the search on PostgreSQL, which needs an extension): comparisons of
#: a database with the metadata leave them out (`include_object`).
MIGRATION_ONLY_INDEXES = frozenset({"ix_inspections_search"})


def include_object(item: Any, name: str | None, kind: str, reflected: bool, other: Any) -> bool:
    """Alembic's comparison filter: everything but `MIGRATION_ONLY_INDEXES`."""
    return not (kind == "index" and name in MIGRATION_ONLY_INDEXES)


def install_head_extras(connection: Connection) -> None:
    """What the revisions leave at head beside the tables' metadata, made from today's code:
    the counter triggers of `counts` and `hour_counts` (their counts rebuilt from the rows
    there) and, on PostgreSQL, `MIGRATION_ONLY_INDEXES`. For a database `create_all` made, which
    is stamped at head without running a revision (tests/server/test_migrations.py)."""
    from server.inspections import counts, hour_counts, search

    counts.TRIGGERS.rebuild(connection)
    hour_counts.TRIGGERS.rebuild(connection)
    if connection.dialect.name == "postgresql":
        search.create_search_index(connection)


def _matches_models(connection: Connection) -> bool:
    """The database's tables and columns are exactly the models' (what `create_all` makes)."""
    from alembic.autogenerate import compare_metadata
    from sqlmodel import SQLModel

    from server.db import import_table_modules

    import_table_modules()
    context = MigrationContext.configure(connection, opts={"include_object": include_object})
    return not compare_metadata(context, SQLModel.metadata)


def prepare(database: Database, env: str) -> None:
    """At a process's start: upgrade in development; in production, refuse an old schema."""
    if current(database) == head():
        return
    if env == "development":
        upgrade(database)
        return
    raise SchemaOutdated(
        f"The database schema is at revision {current(database) or 'none'} and this version "
        f"of the service needs {head()}. Back the database up, then run: "
        "inspectlang admin migrate --database-url <URL>"
    )


def new_revision(database: Database, message: str) -> None:
    """Write a new revision script comparing `database` (upgraded to head first) with the
    tables' code: what a developer runs after changing a table, then reads and adjusts."""
    upgrade(database)
    with database.engine.begin() as connection:
        command.revision(_config(connection), message=message, autogenerate=True)
