"""Shared fixtures: a real database, the real app served over HTTP, companies with API keys.

By default each test module gets a fresh SQLite file. With `TEST_DATABASE_URL` set (as
`make test-postgres` does) every database test runs on that PostgreSQL instead, inside a schema
created for this test session (`options=-csearch_path=...`) and dropped at the end; a
pytest-xdist worker's session makes its schema in a database of its own (`test_gw0`, ...). An
unreachable PostgreSQL is a failure, never a skip.

A test under `tests/server/` or `tests/reports/` that reaches the test database (its fixtures
include `postgres_schema_url`, the one way to `TEST_DATABASE_URL`, through `database_url`,
`settings`, `db`, `live_server`, ...) is marked `db`, so `pytest -m db` reruns exactly those on
PostgreSQL; one that does not would run the same code on the same SQLite again. Server imports
happen inside fixtures, so the language and runtime tests never need the server's dependencies.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest

if TYPE_CHECKING:
    import httpx

    from server.db import Database
    from server.settings import Settings

#: The fixed server secret of test settings, so tokens made in one test module verify in another.
TEST_SECRET = "inspectlang-test-secret-0123456789abcdef"
DB_MARKED_DIRECTORIES = ("server", "reports")
ServeApp = Callable[[Any], AbstractContextManager[str]]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "db: uses the database; rerun on PostgreSQL by `make test-postgres`"
    )


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Iterator[None]:
    """The files run in pytest-randomly's order (random, its seed printed at the top), the tests
    of each file in their written order. A file's tests share its module fixtures (a served app,
    a signed-in browser, a company) by design, and some read as one story (a key revoked after
    it was used); what must hold is that no file depends on another having run first, which is
    what a shuffled file order shows (process-wide state left behind, a shared throttle)."""
    # Marked before the other hooks run: `-m db` deselects in one of them.
    _mark_database_tests(items)
    written = {id(item): index for index, item in enumerate(items)}
    result = yield
    position: dict[Path, int] = {}
    for index, item in enumerate(items):
        position.setdefault(item.path, index)
    items.sort(key=lambda item: (position[item.path], written[id(item)]))
    return result


def _mark_database_tests(items: list[pytest.Item]) -> None:
    tests_root = Path(__file__).parent
    for item in items:
        try:
            relative = Path(str(item.path)).relative_to(tests_root)
        except ValueError:
            continue
        if (
            relative.parts
            and relative.parts[0] in DB_MARKED_DIRECTORIES
            and "postgres_schema_url" in getattr(item, "fixturenames", ())
        ):
            item.add_marker(pytest.mark.db)


# --- database ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_schema_url() -> Iterator[str | None]:
    """With TEST_DATABASE_URL: a fresh schema for this session, as a URL; else None."""
    base_url = os.environ.get("TEST_DATABASE_URL")
    if not base_url:
        yield None
        return
    import psycopg

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    try:
        if worker:
            base_url = _worker_database(base_url, worker)
        conninfo = base_url.replace("postgresql+psycopg://", "postgresql://")
        schema = f"test_{secrets.token_hex(6)}"
        with psycopg.connect(conninfo, connect_timeout=5, autocommit=True) as connection:
            connection.execute(f'CREATE SCHEMA "{schema}"')
    except psycopg.OperationalError as error:
        pytest.fail(f"TEST_DATABASE_URL is set but PostgreSQL is unreachable: {error}")
    separator = "&" if "?" in base_url else "?"
    yield f"{base_url}{separator}options={quote(f'-csearch_path={schema}', safe='')}"
    with psycopg.connect(conninfo, connect_timeout=5, autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA "{schema}" CASCADE')


def _worker_database(base_url: str, worker: str) -> str:
    """The URL of `base_url`'s database for this pytest-xdist worker (`test_gw0`, ...), created
    when missing. A schema per session would isolate the tables, but not what PostgreSQL keeps
    per database: a test that cuts the connections of its database (tests/server/
    test_key_lookup.py) must not cut another worker's."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(base_url)
    name = f"{url.database or 'postgres'}_{worker}"
    conninfo = base_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(conninfo, connect_timeout=5, autocommit=True) as connection:
        exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        if exists.fetchone() is None:
            made_meanwhile = (psycopg.errors.DuplicateDatabase, psycopg.errors.UniqueViolation)
            with contextlib.suppress(*made_meanwhile):  # by another run
                connection.execute(f'CREATE DATABASE "{name}"')
    return url.set(database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("data")


@pytest.fixture(scope="module")
def database_url(postgres_schema_url: str | None, data_dir: Path) -> str:
    """A fresh SQLite file per module, or the session's PostgreSQL schema."""
    if postgres_schema_url is not None:
        return postgres_schema_url
    return f"sqlite:///{data_dir / 'test.sqlite3'}"


@pytest.fixture(scope="module")
def server_socket() -> Iterator[socket.socket]:
    """A listening socket on a free 127.0.0.1 port, bound before the settings need the URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    yield sock
    sock.close()


@pytest.fixture(scope="module")
def settings(database_url: str, data_dir: Path, server_socket: socket.socket) -> Settings:
    """Test settings: no in-process worker, loopback webhooks allowed, a fixed secret.

    Override this fixture (same name) in a conftest to change a setting, e.g. `worker=True`.
    """
    from server.settings import Settings

    port = server_socket.getsockname()[1]
    return Settings(
        database_url=database_url,
        data_dir=data_dir,
        public_url=f"http://127.0.0.1:{port}",
        secret=TEST_SECRET,
        env="development",
        allow_loopback_webhooks=True,
        worker=False,
        # Tests send bursts from one key; the rate limit's own tests turn it on.
        rate_limit_requests=0,
        # Photo analysis runs real models for seconds per photo: the vision tests turn it on
        # (tests/server/test_vision_analysis.py); elsewhere those validations wait, as without
        # the extra.
        vision=False,
    )


@pytest.fixture(scope="module")
def db(settings: Settings) -> Iterator[Database]:
    from server import migrate
    from server.db import Database

    database = Database(settings.database_url)
    migrate.upgrade(database)
    _set_aside_other_modules_jobs(database)
    yield database
    database.dispose()


def _set_aside_other_modules_jobs(database: Database) -> None:
    """On PostgreSQL the session shares one schema (SQLite: a file per module), so the jobs an
    earlier module queued and never ran would be run by this module's `run_once` or worker,
    against its settings: hundreds of webhook retries once kept a module's queue from emptying
    in its 20 s. They are not this module's: set aside (failed, saying why) before it starts."""
    from sqlalchemy import update
    from sqlmodel import col

    from server.tables import JobRecord

    if database.dialect != "postgresql":
        return
    with database.session() as session:
        session.execute(
            update(JobRecord)
            .where(col(JobRecord.status) == "queued")
            .values(status="failed", last_error="left by another test module")
        )
        session.commit()


# --- serving the real app -------------------------------------------------------------------------


@contextmanager
def serve(app: Any, sock: socket.socket | None = None) -> Iterator[str]:
    """Serve an ASGI app with uvicorn in a background thread; yields its base URL."""
    import uvicorn

    own_socket = sock is None
    if sock is None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        sock.listen(128)
    config = uvicorn.Config(app, lifespan="on", log_level="warning", ws="none", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    host, port = sock.getsockname()[:2]
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        if own_socket:
            sock.close()


@pytest.fixture(scope="session")
def serve_app() -> ServeApp:
    """`with serve_app(app) as base_url:` serves another app (e.g. with a fake clock)."""
    return serve


@pytest.fixture(scope="module")
def live_server(settings: Settings, db: Database, server_socket: socket.socket) -> Iterator[str]:
    """The real app (every controller present) on uvicorn; yields its base URL."""
    from server.app import create_app

    with serve(create_app(settings, db=db), server_socket) as base_url:
        yield base_url


@pytest.fixture
def client(live_server: str) -> Iterator[httpx.Client]:
    import httpx

    with httpx.Client(base_url=live_server, timeout=30) as http:
        yield http


def _new_company(db: Database, label: str) -> dict[str, Any]:
    from server.auth import create_company

    members = ["member-1", "member-2"]
    created = create_company(db, f"{label} {secrets.token_hex(3)}", members)
    return {**created, "members": members}


@pytest.fixture
def company(db: Database) -> dict[str, Any]:
    """A new company: `{"companyId", "testKey", "liveKey", "members": ["member-1", "member-2"]}`."""
    return _new_company(db, "Company")


@pytest.fixture
def other_company(db: Database) -> dict[str, Any]:
    """A second, unrelated company, for isolation tests."""
    return _new_company(db, "Other company")
