"""The database: one SQLAlchemy engine (SQLite by default, PostgreSQL via URL) and its sessions.

SQLite runs in WAL mode with `synchronous=FULL`, so a committed transaction survives a power
loss, with a busy timeout so concurrent writers wait instead of failing, and foreign keys on.
Tables live in the modules of `TABLE_MODULES`; `create_all` imports them and creates what is
missing.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import event
from sqlalchemy.engine import URL, Engine, make_url
from sqlmodel import Session, SQLModel, create_engine

from server.errors import ServerError

#: Every module defining tables: the plumbing's, then each resource's.
TABLE_MODULES = [
    "server.tables",
    "server.templates.tables",
    "server.inspections.tables",
    "server.delivery.tables",
    "server.reports.tables",
    "server.webhooks.tables",
    "server.web.tables",
    "server.dashboard.tables",
    "server.inspections.review_tables",
]

#: How long (ms) a SQLite connection waits for another writer before giving up.
SQLITE_BUSY_TIMEOUT_MS = 30_000
#: How much of a SQLite file its connections read through one shared memory map (SQLite caps
#: it at its compile-time limit, 2 GB by default).
SQLITE_MMAP_BYTES = 2 * 1024**3

#: Connections kept open per process. Requests use connections from up to 40 threads at once
#: (anyio's worker threads); connections beyond the pool are closed when returned, so a pool
#: smaller than that makes PostgreSQL start (fork) and end a backend for many requests under
#: load. Connections are opened only when needed; a process serving little keeps few.
POOL_SIZE = 40
#: Connections allowed beyond the pool for bursts (closed when returned).
MAX_OVERFLOW = 20

Dialect = Literal["sqlite", "postgresql"]


class DatabaseUrlError(ServerError, ValueError):
    """The database URL names a backend the server does not support."""


def normalize_url(url: str) -> URL:
    """Parse `url`, sending `postgresql://` and `postgres://` through the psycopg 3 driver."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url[len("postgres://") :]
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "postgresql":
        return parsed.set(drivername="postgresql+psycopg")
    if backend == "sqlite":
        return parsed.set(drivername="sqlite")
    raise DatabaseUrlError(f"unsupported database {backend!r}: use sqlite:/// or postgresql://")


class Database:
    """One engine and a session factory; share one instance per process."""

    def __init__(self, url: str, *, echo: bool = False) -> None:
        self.url = normalize_url(url)
        self.dialect: Dialect = (
            "sqlite" if self.url.get_backend_name() == "sqlite" else "postgresql"
        )
        self.engine: Engine = self._create_engine(echo)

    def _create_engine(self, echo: bool) -> Engine:
        if self.dialect == "postgresql":
            return create_engine(
                self.url,
                echo=echo,
                pool_pre_ping=True,
                pool_size=POOL_SIZE,
                max_overflow=MAX_OVERFLOW,
            )
        database = self.url.database
        if database and database != ":memory:":
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            self.url,
            echo=echo,
            pool_size=POOL_SIZE,
            max_overflow=MAX_OVERFLOW,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
        )
        event.listen(engine, "connect", _configure_sqlite_connection)
        return engine

    @contextmanager
    def session(self, *, immediate: bool = False) -> Iterator[Session]:
        """A session that commits nothing on its own: call `session.commit()`.

        On SQLite, `immediate=True` takes the write lock at the start (`BEGIN IMMEDIATE`), for
        read-then-write transactions that must not interleave with another writer. On
        PostgreSQL it changes nothing (use `SELECT ... FOR UPDATE` there).
        """
        with Session(self.engine, expire_on_commit=False) as session:
            if immediate and self.dialect == "sqlite":
                session.connection().exec_driver_sql("BEGIN IMMEDIATE")
            yield session

    def create_all(self) -> None:
        """Import every table module and create the tables that are missing."""
        import_table_modules()
        SQLModel.metadata.create_all(self.engine)

    def dispose(self) -> None:
        """Close every pooled connection (at shutdown)."""
        self.engine.dispose()


def import_table_modules() -> None:
    """Import every module of `TABLE_MODULES`, so `SQLModel.metadata` holds every table."""
    for module_name in TABLE_MODULES:
        importlib.import_module(module_name)


def _configure_sqlite_connection(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=FULL")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA foreign_keys=ON")
        # Read pages through a shared memory map instead of a 2 MB cache per connection: a
        # deep list page walks ~1,000 index pages, and with a million rows these no longer fit
        # the default cache (page 5,000's walk: 3.0 ms -> 2.1 ms; a 16 MB cache per connection
        # gives 1.9 ms, but up to 60 pooled connections would hold a copy each).
        cursor.execute(f"PRAGMA mmap_size={SQLITE_MMAP_BYTES}")
    finally:
        cursor.close()
