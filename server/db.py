"""The database: one SQLAlchemy engine (SQLite by default, PostgreSQL via URL) and its sessions.

SQLite runs in WAL mode with `synchronous=FULL`, so a committed transaction survives a power
loss, with a busy timeout so concurrent writers wait instead of failing, and foreign keys on.
A long-running process (`serve`, `worker`) opens it with `exclusive=True` (see
`Database.__init__`): the WAL index then lives in the process's memory, not in a mapped file.
Tables live in the modules of `TABLE_MODULES`; `create_all` imports them and creates what is
missing.
"""

from __future__ import annotations

import importlib
import os
import sqlite3
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool
from sqlmodel import Session, SQLModel, create_engine

from server.errors import SQLITE_STORAGE_CODES, ServerError, StorageUnavailable

#: Every module defining tables: the plumbing's, then each resource's.
TABLE_MODULES = [
    "server.tables",
    "server.templates.tables",
    "server.inspections.tables",
    "server.images.tables",
    "server.delivery.tables",
    "server.reports.tables",
    "server.webhooks.tables",
    "server.web.tables",
    "server.dashboard.tables",
    "server.oauth.tables",
    "server.inspections.review_tables",
]

#: How long (ms) a SQLite connection waits for another writer before giving up.
SQLITE_BUSY_TIMEOUT_MS = 30_000
#: How long (s) the readiness probe waits for SQLite's write lock: a writer holding it longer
#: shows that writes go through.
SQLITE_PROBE_TIMEOUT_S = 1.0
#: Free bytes under the SQLite file below which the readiness probe says the disk is full: a
#: write that still fits in the write-ahead log's old space succeeds there, the next that
#: needs a new page fails (issue 39: `/ready` said "ok" while writes failed).
MIN_FREE_BYTES = 4 * 1024 * 1024
#: How long (ms) the readiness probe's write may take on PostgreSQL before it counts as refused.
READY_STATEMENT_TIMEOUT_MS = 2000
#: The readiness probe's write on PostgreSQL: one row of `ready_probe` (revision 0014).
READY_PROBE_UPSERT = (
    "INSERT INTO ready_probe (name, written_at) VALUES ('ready', now()) "
    "ON CONFLICT (name) DO UPDATE SET written_at = EXCLUDED.written_at"
)

#: Connections kept open per process. Requests use connections from up to 40 threads at once
#: (anyio's worker threads); connections beyond the pool are closed when returned, so a pool
#: smaller than that makes PostgreSQL start (fork) and end a backend for many requests under
#: load. Connections are opened only when needed; a process serving little keeps few.
POOL_SIZE = 40
#: Connections allowed beyond the pool for bursts (closed when returned).
MAX_OVERFLOW = 20
#: Seconds to open a PostgreSQL connection (libpq's `connect_timeout`; it counts 2 at least):
#: a database that does not answer is a 503 `service_unavailable` within about this.
CONNECT_TIMEOUT_S = 2
#: Seconds a request waits for a pooled connection that the pool cannot open (the database
#: refusing): then 503, not after psycopg_pool's default 30 s, twice (issue 39: 30-60 s).
POOL_WAIT_S = 1

Dialect = Literal["sqlite", "postgresql"]


class DatabaseUrlError(ServerError, ValueError):
    """The database URL names a backend the server does not support."""


class DatabaseReadOnly(StorageUnavailable):
    """The database would refuse a write now (`Database.check_writable`)."""


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

    def __init__(self, url: str, *, echo: bool = False, exclusive: bool = False) -> None:
        """`exclusive` (SQLite only): this process alone opens the file (SQLite's `unix-excl`
        VFS holds a lock on it that keeps other processes out until the process closes its
        last connection), so the WAL index lives in this process's memory, shared by its
        connections, instead of the `-shm` file every process maps read-write. A page of that
        map the storage refuses to back (the data directory made immutable: ext4 write-protects
        the file's pages and refuses the next write fault) is a SIGBUS that kills the process
        with nothing logged, 2 crashes in 3 runs under load; exclusive, 0 in 10
        (`benchmarks/bench_readonly_storage.py`), and such a refusal is the 503 it should be.
        Readers still never wait for the writer (WAL). Other processes meanwhile wait for the
        file (busy timeout) and fail: one SQLite file, one process (docs/operations.md)."""
        self.url = normalize_url(url)
        self.dialect: Dialect = (
            "sqlite" if self.url.get_backend_name() == "sqlite" else "postgresql"
        )
        database = self.url.database
        self._file: Path | None = (
            Path(database).expanduser()
            if self.dialect == "sqlite" and database and database != ":memory:"
            else None
        )
        self.exclusive = exclusive and self._file is not None
        #: Set when the storage refused a SQLite write; `check_writable` clears it.
        self._refused_writes = False
        self.engine: Engine = self._create_engine(echo)
        #: PostgreSQL: the unpooled engine of the readiness probe (`_check_postgres_writes`).
        self._probe_engine: Engine | None = None

    def _create_engine(self, echo: bool) -> Engine:
        if self.dialect == "postgresql":
            return create_engine(
                self.url,
                echo=echo,
                pool_pre_ping=True,
                pool_size=POOL_SIZE,
                max_overflow=MAX_OVERFLOW,
                connect_args={"connect_timeout": CONNECT_TIMEOUT_S},
            )
        if self._file is not None:
            self._file.parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            self.url,
            echo=echo,
            pool_size=POOL_SIZE,
            max_overflow=MAX_OVERFLOW,
            connect_args={"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
            **({"creator": self._connect} if self.exclusive else {}),
        )
        event.listen(engine, "connect", _configure_sqlite_connection)
        event.listen(engine, "handle_error", self._discard_refused_connections)
        return engine

    def _connect(self, timeout: float = SQLITE_BUSY_TIMEOUT_MS / 1000) -> sqlite3.Connection:
        """A connection to the SQLite file through the VFS this database uses (the pool's: the
        driver's own transaction handling, as SQLAlchemy opens them)."""
        assert self._file is not None
        if not self.exclusive:
            return sqlite3.connect(self._file, timeout=timeout, check_same_thread=False)
        uri = f"file:{urllib.parse.quote(str(self._file.absolute()))}?vfs=unix-excl"
        return sqlite3.connect(uri, uri=True, timeout=timeout, check_same_thread=False)

    def _discard_refused_connections(self, context: Any) -> None:
        """A SQLite connection whose write the storage refused is thrown away with the pool's
        other connections (as after a lost connection): one opened while the data directory
        was read-only stays read-only for its whole life, and one opened before keeps writing
        into a directory the operator meant to freeze. `check_writable` replaces the pool once
        writes are accepted again, so connections opened during the outage go too."""
        code = getattr(context.original_exception, "sqlite_errorcode", None)
        if isinstance(code, int) and code & 0xFF in SQLITE_STORAGE_CODES:
            context.is_disconnect = True
            self._refused_writes = True

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

    def check_writable(self) -> None:
        """Raise when the database would refuse a write now (the readiness probe).

        SQLite: the file system under it has `MIN_FREE_BYTES` free, and a connection of its own
        (never a pooled one, which may hold files opened before the data directory turned
        read-only) takes the write lock (`BEGIN IMMEDIATE`), writes the header's `user_version`
        unchanged and commits it: a page really written to the log and synced (a rolled-back
        write never reaches the disk, so it said "ok" on a full one); a lock held by another
        writer past `SQLITE_PROBE_TIMEOUT_S` counts as writable.
        PostgreSQL: `_check_postgres_writes`.
        """
        if self.dialect == "postgresql":
            self._check_postgres_writes()
            return
        if self._file is None:
            return
        space = os.statvfs(self._file.parent)
        free = space.f_bavail * space.f_frsize
        if free < MIN_FREE_BYTES:
            raise DatabaseReadOnly(f"the disk under the database is full ({free} bytes free)")
        probe = self._connect(timeout=SQLITE_PROBE_TIMEOUT_S)
        probe.isolation_level = None  # the probe says BEGIN and ROLLBACK itself
        try:
            probe.execute("BEGIN IMMEDIATE")
            # A real write: `BEGIN IMMEDIATE` alone succeeds on a read-only file while other
            # connections keep its write-ahead log open.
            version = probe.execute("PRAGMA user_version").fetchone()[0]
            probe.execute(f"PRAGMA user_version={int(version)}")
            probe.execute("COMMIT")
        except sqlite3.OperationalError as error:
            if error.sqlite_errorcode & 0xFF not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                raise DatabaseReadOnly(f"SQLite refuses writes: {error}") from error
        finally:
            probe.close()
        if self._refused_writes:
            # Writes are accepted again: a new pool, without the connections opened read-only.
            self._refused_writes = False
            self.engine.dispose(close=False)

    def _check_postgres_writes(self) -> None:
        """A real write, committed: a connection of its own (never a pooled one, which keeps
        the settings of its start: a database made read-only since, `ALTER DATABASE ... SET
        default_transaction_read_only`, or a standby after a failover, refuses new ones) writes
        the row of `ready_probe` (`READY_PROBE_UPSERT`) in a transaction of its own, bounded by
        `READY_STATEMENT_TIMEOUT_MS`. `SHOW transaction_read_only` alone said "ok" on a full
        disk. A refusal raises `DatabaseReadOnly` saying why (read-only, disk full, timed out:
        PostgreSQL's own words, no connection string); a database that cannot be reached
        raises as any connection does."""
        import psycopg

        if self._probe_engine is None:
            self._probe_engine = create_engine(
                self.url,
                poolclass=NullPool,
                connect_args={"connect_timeout": CONNECT_TIMEOUT_S},
            )
        try:
            with self._probe_engine.begin() as connection:
                connection.exec_driver_sql(
                    f"SET LOCAL statement_timeout = {READY_STATEMENT_TIMEOUT_MS}"
                )
                connection.exec_driver_sql(READY_PROBE_UPSERT)
        except DBAPIError as error:
            original = error.orig
            if not isinstance(original, psycopg.Error) or original.sqlstate is None:
                raise
            if original.sqlstate in ("57014", "55P03"):  # statement or lock timeout
                reason = f"a write took over {READY_STATEMENT_TIMEOUT_MS} ms"
            elif original.sqlstate[:2] in ("25", "53") or original.sqlstate == "42501":
                # a read-only transaction, disk full or out of memory, no right to write
                reason = original.diag.message_primary or original.sqlstate
            else:
                raise
            raise DatabaseReadOnly(
                f"PostgreSQL refuses writes: {reason} (SQLSTATE {original.sqlstate})"
            ) from error

    def dispose(self) -> None:
        """Close every pooled connection (at shutdown)."""
        self.engine.dispose()
        if self._probe_engine is not None:
            self._probe_engine.dispose()


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
        # No memory-mapped I/O (`mmap_size` stays 0): a page read through a memory map that the
        # storage cannot serve (a data directory made read-only or a disk failing mid-run) is a
        # SIGBUS that kills the process with nothing logged (issue 21 §3); read() returns an
        # error the request answers with 503. The cost: a deep list page's walk, 2.1 -> 3.0 ms
        # at a million rows.
        cursor.execute("PRAGMA mmap_size=0")
    finally:
        cursor.close()
