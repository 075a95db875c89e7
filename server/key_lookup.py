"""The API key lookup on PostgreSQL, run on the event loop with psycopg's async driver.

Every request looks its key up before anything else. Through the SQLAlchemy engine that costs a
hop to a worker thread, a pooled-connection ping (`pool_pre_ping`) and the query; with a small
pool of async connections of its own (`psycopg_pool`) it is one query that waits without
holding a thread. The key is still read from the database on every request, so a revoked key is
refused at once, by every process.

The lookup only reads, so a pooled connection that turns out to be dead (the server restarted,
an idle connection was cut) is simply retried once on another: the pool discards broken
connections when they come back. SQLite needs none of this: its lookup is a local file read,
done inline (see `server.deps.AuthMiddleware`).
"""

from __future__ import annotations

from typing import Any, cast

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from server.db import CONNECT_TIMEOUT_S, POOL_WAIT_S, Database
from server.tables import ApiKey

#: Connections of the lookup pool: each query takes well under a millisecond.
MIN_CONNECTIONS = 1
MAX_CONNECTIONS = 8

_TABLE = cast(Any, ApiKey).__tablename__
_QUERY = f"SELECT company_id, mode, key_hash, revoked_at FROM {_TABLE} WHERE id = %s"


def conninfo(database: Database) -> str:
    """The libpq connection string of the database's SQLAlchemy URL (options included)."""
    return str(database.url.set(drivername="postgresql").render_as_string(hide_password=False))


class AsyncKeyLookup:
    """`await lookup.row(key_id)`: the key's `(company_id, mode, key_hash, revoked_at)` or None.

    Open it on the event loop that will use it (`await open()`, at application start-up) and
    close it there (`await close()`).
    """

    def __init__(self, database: Database) -> None:
        self._pool: AsyncConnectionPool[psycopg.AsyncConnection[Any]] = AsyncConnectionPool(
            conninfo(database),
            min_size=MIN_CONNECTIONS,
            max_size=MAX_CONNECTIONS,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT_S},
            timeout=POOL_WAIT_S,
            open=False,
            name="api-key-lookup",
        )

    async def open(self) -> None:
        await self._pool.open(wait=True)

    async def close(self) -> None:
        await self._pool.close()

    async def row(self, key_id: str) -> tuple[Any, ...] | None:
        for attempt in range(2):
            try:
                async with self._pool.connection() as connection:
                    cursor = await connection.execute(_QUERY, (key_id,))
                    return await cursor.fetchone()
            except PoolTimeout:
                raise  # no connection to be had: another attempt would only wait as long
            except psycopg.OperationalError:
                if attempt:
                    raise
        return None  # not reached: the second attempt returns or raises
