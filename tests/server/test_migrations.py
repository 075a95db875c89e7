"""Schema migrations, on SQLite and (in the PostgreSQL pass) on PostgreSQL.

- The migrated schema is exactly the tables' schema: Alembic's own comparison of the head
  database with the tables' metadata finds nothing, so a table change without its migration
  fails here.
- A database built at the first revision and filled keeps every row through the upgrade to head.
- A database made by `create_all` before migrations existed is stamped and upgraded.
- Development upgrades at start; production refuses an old schema and names the command.
- A revision imports no project code (its SQL and values are its own, frozen), and the counter
  triggers it leaves at head are the ones the code describes (`counts.TRIGGERS`,
  `hour_counts.TRIGGERS`), as the tables are the models.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import MetaData, insert, inspect, select, types
from sqlmodel import SQLModel

from server import migrate
from server.db import Database, import_table_modules
from server.errors import SchemaOutdated
from server.inspections import counts, hour_counts

#: The installed command, beside this interpreter.
INSPECTLANG = str(Path(sys.executable).with_name("inspectlang"))


@pytest.fixture
def empty_db(database_url: str, tmp_path: Path) -> Iterator[Database]:
    """An empty database: a fresh SQLite file, or a fresh PostgreSQL schema."""
    if database_url.startswith("sqlite"):
        database = Database(f"sqlite:///{tmp_path / 'empty.sqlite3'}")
        yield database
        database.dispose()
        return
    import secrets
    from urllib.parse import quote

    import psycopg

    schema = f"mig_{secrets.token_hex(5)}"
    base = database_url.split("?")[0]
    conninfo = base.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(f'CREATE SCHEMA "{schema}"')
    database = Database(f"{base}?options={quote(f'-csearch_path={schema}', safe='')}")
    yield database
    database.dispose()
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA "{schema}" CASCADE')


def differences(database: Database) -> list[Any]:
    import_table_modules()
    with database.engine.connect() as connection:
        context = MigrationContext.configure(
            connection, opts={"compare_type": True, "include_object": migrate.include_object}
        )
        return list(compare_metadata(context, SQLModel.metadata))


def test_head_is_exactly_the_tables_schema(empty_db: Database) -> None:
    before, after = migrate.upgrade(empty_db)
    assert (before, after) == (None, migrate.head())
    assert differences(empty_db) == []
    assert migrate.upgrade(empty_db) == (after, after)  # a second upgrade changes nothing


def test_migration_only_indexes_exist_on_postgresql(empty_db: Database) -> None:
    """What the comparison leaves out (`migrate.MIGRATION_ONLY_INDEXES`) is there all the same:
    the search's trigram index on PostgreSQL (SQLite has none)."""
    migrate.upgrade(empty_db)
    indexes = {index["name"] for index in inspect(empty_db.engine).get_indexes("inspections")}
    if empty_db.dialect == "postgresql":
        assert indexes >= migrate.MIGRATION_ONLY_INDEXES
        with empty_db.engine.connect() as connection:
            definition = connection.exec_driver_sql(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_inspections_search'"
                " AND schemaname = current_schema()"
            ).scalar_one()
        assert "USING gin (search_text" in definition and "gin_trgm_ops" in definition
    else:
        assert not migrate.MIGRATION_ONLY_INDEXES & indexes


def sample(column: Any, row: int) -> Any:
    """A value of the column's type for row number `row` (distinct per row)."""
    kind = column.type
    if isinstance(kind, types.Boolean):
        return row % 2 == 0
    if isinstance(kind, types.Integer):
        return row + 1
    if isinstance(kind, types.DateTime):
        return datetime(2026, 1, 1, 12, row % 60, tzinfo=UTC)
    if isinstance(kind, types.LargeBinary):
        return bytes([row % 256]) * 3
    if isinstance(kind, types.JSON):
        return {"row": row, "list": [1, "two"]}
    length = getattr(kind, "length", None) or 40
    return f"{column.name[:10]}{row:04d}"[:length]


def value(column: Any, row: int) -> Any:
    """`sample`, or for a foreign key the referenced row's value, so every reference holds."""
    for key in column.foreign_keys:
        return sample(key.column, row)
    return sample(column, row)


def test_rows_survive_the_upgrade_from_the_first_revision(empty_db: Database) -> None:
    migrate.upgrade(empty_db, migrate.BASE_REVISION)
    reflected = MetaData()
    reflected.reflect(empty_db.engine)
    written: dict[str, list[dict[str, Any]]] = {}
    with empty_db.engine.begin() as connection:
        for table in reflected.sorted_tables:  # parents before children (foreign keys)
            if table.name == "alembic_version":
                continue
            columns = [
                c
                for c in table.columns
                if not (c.primary_key and isinstance(c.type, types.Integer))  # autoincrement
            ]
            rows = [{c.name: value(c, row) for c in columns} for row in range(3)]
            connection.execute(insert(table), rows)
            written[table.name] = rows
    assert {"companies", "inspections", "templates", "jobs", "webhook_subscriptions"} <= set(
        written
    )

    migrate.upgrade(empty_db)
    assert migrate.current(empty_db) == migrate.head()
    after = MetaData()
    after.reflect(empty_db.engine)
    with empty_db.engine.connect() as connection:
        for name, rows in written.items():
            table = after.tables[name]
            stored = [dict(r._mapping) for r in connection.execute(select(table))]
            assert len(stored) == len(rows), name
            for expected in rows:
                kept = {k: v for k, v in expected.items() if k in table.columns}
                assert any(all(_same(row[k], v) for k, v in kept.items()) for row in stored), (
                    name,
                    expected,
                )


def _same(stored: Any, written: Any) -> bool:
    if isinstance(written, datetime) and isinstance(stored, datetime):
        return stored.replace(tzinfo=UTC) == written if stored.tzinfo is None else stored == written
    return bool(stored == written)


def test_a_database_made_before_migrations_is_stamped_and_upgraded(
    empty_db: Database, tmp_path: Path
) -> None:
    # What `create_all` made before migrations existed: the tables of the first revision, as
    # that revision makes them (later revisions also add columns to them), and no version.
    migrate.upgrade(empty_db, migrate.BASE_REVISION)
    with empty_db.engine.begin() as connection:
        connection.exec_driver_sql("DROP TABLE alembic_version")
    assert migrate.current(empty_db) is None
    assert migrate.upgrade(empty_db) == (None, migrate.head())
    assert differences(empty_db) == []


def test_development_upgrades_and_production_refuses_an_old_schema(empty_db: Database) -> None:
    migrate.upgrade(empty_db, migrate.BASE_REVISION)
    if migrate.head() != migrate.BASE_REVISION:
        with pytest.raises(SchemaOutdated, match="inspectlang admin migrate"):
            migrate.prepare(empty_db, "production")
    fresh_tables = inspect(empty_db.engine).get_table_names()
    assert "companies" in fresh_tables
    migrate.prepare(empty_db, "development")
    assert migrate.current(empty_db) == migrate.head()
    migrate.prepare(empty_db, "production")  # at head: nothing to refuse


def test_production_refuses_an_empty_database_with_the_command(empty_db: Database) -> None:
    with pytest.raises(SchemaOutdated, match="inspectlang admin migrate --database-url"):
        migrate.prepare(empty_db, "production")
    assert inspect(empty_db.engine).get_table_names() == []


def test_admin_migrate_and_serve_in_production(empty_db: Database, tmp_path: Path) -> None:
    url = empty_db.engine.url.render_as_string(hide_password=False)
    environ = {"PATH": "/usr/bin:/bin", "INSPECTLANG_ENV": "production", "HOME": str(tmp_path)}
    worker = subprocess.run(
        [INSPECTLANG, "worker", "--database-url", url,
         "--data-dir", str(tmp_path)],
        capture_output=True, text=True, env=environ, timeout=60,
    )  # fmt: skip
    assert worker.returncode == 1
    refusal = json.loads(worker.stderr.strip().splitlines()[-1])
    assert refusal["code"] == "schema_outdated"
    assert "inspectlang admin migrate" in refusal["description"]

    migrated = subprocess.run(
        [INSPECTLANG, "admin", "migrate", "--database-url", url,
         "--data-dir", str(tmp_path)],
        capture_output=True, text=True, env=environ, timeout=60,
    )  # fmt: skip
    assert migrated.returncode == 0, migrated.stderr
    assert json.loads(migrated.stdout) == {"from": None, "to": migrate.head()}


#: Revisions named before files were numbered in chain order (deployed databases record these
#: ids in `alembic_version`, so they keep their names).
HISTORICAL_NAMES = {"0001", "0002_consumer", "0002_dashboard", "0003_delivery", "0003_scale"}


def test_revisions_form_one_chain_numbered_in_order() -> None:
    """One head, no branches, each file named after its revision, and the numbers of the
    revisions written since the historical ones increase along the chain (issue 26: files
    numbered like parallel branches)."""
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory.from_config(migrate._config())
    assert len(scripts.get_heads()) == 1
    chain = list(reversed(list(scripts.walk_revisions())))
    assert all(len(script.nextrev) <= 1 for script in chain)
    for script in chain:
        assert script.path is not None and Path(script.path).stem.startswith(script.revision)
    numbered = [int(s.revision[:4]) for s in chain if s.revision not in HISTORICAL_NAMES]
    assert numbered == list(range(numbered[0], numbered[0] + len(numbered)))


#: Top-level packages of the project: a revision importing one would change when today's code
#: does, after databases were migrated with what it did then.
PROJECT_PACKAGES = {"server", "runtime", "inspectlang"}


def imported_modules(source: str) -> list[tuple[int, str]]:
    """Every module a Python source imports, anywhere in it (line, dotted name); a relative
    import is named by its dots."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, "." * node.level + (node.module or "")))
    return found


def project_imports(source: str) -> list[tuple[int, str]]:
    return [
        (line, name)
        for line, name in imported_modules(source)
        if name.startswith(".") or name.split(".")[0] in PROJECT_PACKAGES
    ]


def test_revisions_import_no_project_code() -> None:
    """Each revision holds its own SQL and values (issue 38): none imports `server`, `runtime`
    or `inspectlang`, at the top or inside a function, nor anything relative."""
    versions = sorted((migrate.MIGRATIONS / "versions").glob("[0-9]*.py"))
    assert len(versions) >= 12
    offending = {
        path.name: found
        for path in versions
        if (found := project_imports(path.read_text(encoding="utf-8")))
    }
    assert offending == {}


def test_the_import_check_finds_project_imports() -> None:
    source = (
        "import sqlalchemy as sa\nfrom alembic import op\nimport runtime.state\n"
        "def upgrade():\n    from server.tables import UtcDateTime\n"
        "    from . import helpers\n    import inspectlang\n"
    )
    assert project_imports(source) == [
        (3, "runtime.state"),
        (5, "server.tables"),
        (6, "."),
        (7, "inspectlang"),
    ]


#: The counter triggers every head database has.
COUNTER_TRIGGERS = {
    f"{table}_{event}"
    for table in ("inspection_counts", "inspection_hour_counts")
    for event in ("insert", "update", "delete")
}


def triggers(database: Database) -> dict[str, str]:
    """The definitions of the triggers on `inspections` (and on PostgreSQL of their functions)
    as the database holds them."""
    with database.engine.connect() as connection:
        if database.dialect == "sqlite":
            rows = connection.exec_driver_sql(
                "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"
                " AND tbl_name = 'inspections'"
            )
            return {name: sql for name, sql in rows}
        rows = connection.exec_driver_sql(
            "SELECT t.tgname, pg_get_triggerdef(t.oid) FROM pg_trigger t"
            " JOIN pg_class c ON c.oid = t.tgrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE NOT t.tgisinternal AND c.relname = 'inspections'"
            " AND n.nspname = current_schema()"
        )
        found = {name: definition for name, definition in rows}
        functions = connection.exec_driver_sql(
            "SELECT p.proname, p.prosrc FROM pg_proc p"
            " JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE n.nspname = current_schema() AND starts_with(p.proname, 'inspection')"
        )
        return found | {f"{name}()": source for name, source in functions}


def test_head_triggers_are_the_codes_definition(empty_db: Database) -> None:
    """The migrations hold their trigger SQL as text; the code's one generator
    (`counts.counter_triggers`) describes what head has. Installing today's definition over a
    head database changes nothing, so a trigger changed in the code without its revision fails
    here."""
    migrate.upgrade(empty_db)
    migrated = triggers(empty_db)
    assert set(migrated) >= COUNTER_TRIGGERS
    if empty_db.dialect == "postgresql":
        assert {"inspection_counts_maintain()", "inspection_hour_counts_maintain()"} <= set(
            migrated
        )
    with empty_db.engine.begin() as connection:
        counts.TRIGGERS.install(connection)
        hour_counts.TRIGGERS.install(connection)
    assert triggers(empty_db) == migrated


def test_a_database_made_by_create_all_is_stamped_at_head_with_its_triggers(
    empty_db: Database,
) -> None:
    """`create_all` makes today's tables but no trigger: the upgrade that stamps it at head
    installs the counter triggers (the same definitions a migrated head has) and counts the
    inspections already there, so the listing's totals are true from then on."""
    from server.auth import create_company
    from server.inspections.tables import InspectionRecord
    from server.templates.tables import TemplateManifestRecord

    empty_db.create_all()
    company_id = create_company(empty_db, "Made by create_all", [])["companyId"]
    now = datetime(2026, 3, 1, 7, 0, tzinfo=UTC)
    row = {
        "company_id": company_id,
        "testing": False,
        "type": "car",
        "veredict": "not_defined",
        "manifest_key": "create-all",
        "template_id": "easy",
        "access_code_hash": "0" * 64,
        "created_at": now,
        "updated_at": now,
        "state": {},
        "document": {},
    }
    table = InspectionRecord.__table__  # type: ignore[attr-defined]
    with empty_db.engine.begin() as connection:
        connection.execute(
            insert(TemplateManifestRecord.__table__),  # type: ignore[attr-defined]
            [{"key": "create-all", "template_id": "easy", "manifest": {}, "created_at": now}],
        )
        connection.execute(insert(table), [{**row, "id": "a" * 24, "status": "created"}])
    assert triggers(empty_db) == {}

    assert migrate.upgrade(empty_db) == (None, migrate.head())
    stamped = triggers(empty_db)
    assert set(stamped) >= COUNTER_TRIGGERS
    with empty_db.engine.begin() as connection:
        counts.TRIGGERS.install(connection)
        hour_counts.TRIGGERS.install(connection)
    assert triggers(empty_db) == stamped  # today's definitions, as a migrated head has them

    with empty_db.engine.begin() as connection:
        connection.execute(insert(table), [{**row, "id": "b" * 24, "status": "started"}])
        totals = [
            counts.total(connection, company_id, False, chosen)
            for chosen in ({}, {"status": "created"}, {"status": "started"})
        ]
        hours = connection.exec_driver_sql(
            "SELECT COALESCE(SUM(count), 0) FROM inspection_hour_counts"
        ).scalar_one()
    assert (totals, hours) == ([2, 1, 1], 2)
    if empty_db.dialect == "postgresql":
        assert "ix_inspections_search" in {
            index["name"] for index in inspect(empty_db.engine).get_indexes("inspections")
        }
