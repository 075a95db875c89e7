"""The PostgreSQL API key lookup on the event loop: it reads the real row every time (a revoked
key is refused at once), and a pooled connection that died is replaced without an error."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from server.auth import parse_api_key, revoke_key, verify_api_key
from server.db import Database
from server.errors import ApiError
from server.key_lookup import AsyncKeyLookup, conninfo


@pytest.fixture
def postgres(db: Database) -> Database:
    if db.dialect != "postgresql":
        pytest.skip("the async key lookup is PostgreSQL's (SQLite looks keys up inline)")
    return db


async def _authenticate(lookup: AsyncKeyLookup, key: str) -> Any:
    mode, key_id = parse_api_key(key)
    return verify_api_key(key, mode, key_id, await lookup.row(key_id))


def test_valid_unknown_and_revoked_keys(postgres: Database, company: dict[str, Any]) -> None:
    async def scenario() -> None:
        lookup = AsyncKeyLookup(postgres)
        await lookup.open()
        try:
            context = await _authenticate(lookup, company["liveKey"])
            assert (context.company_id, context.mode) == (company["companyId"], "live")
            assert await lookup.row("0123456789abcdef") is None
            revoke_key(postgres, company["companyId"], "live")  # another connection, at once
            with pytest.raises(ApiError) as refused:
                await _authenticate(lookup, company["liveKey"])
            assert (refused.value.code, refused.value.status) == ("unauthorized", 401)
            assert "revoked" in refused.value.description
        finally:
            await lookup.close()

    asyncio.run(scenario())


def test_a_dead_pooled_connection_is_replaced(postgres: Database, company: dict[str, Any]) -> None:
    async def scenario() -> None:
        lookup = AsyncKeyLookup(postgres)
        await lookup.open()
        try:
            await _authenticate(lookup, company["testKey"])
            # Cut every lookup connection from the server side, as a restart would.
            with psycopg.connect(conninfo(postgres), autocommit=True) as admin:
                killed = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = '' AND pid <> pg_backend_pid() "
                    "AND datname = current_database() AND query LIKE %s",
                    ("%FROM api_keys%",),
                ).fetchall()
            assert killed, "the lookup's connection was not found to be cut"
            context = await _authenticate(lookup, company["testKey"])
            assert context.mode == "test"
        finally:
            await lookup.close()

    asyncio.run(scenario())
