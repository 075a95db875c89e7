"""Issue 21 §3: what the storage and the database failing does to the server.

- The data directory made read-only mid-run, on a real server process (`inspectlang serve`):
  the process lives on (SQLite's memory-mapped I/O is off: a mapped page the storage cannot
  serve was a SIGBUS), every write the storage refuses answers 503 `storage_unavailable` with
  `Retry-After` (it was 500 `internal_error`), `/ready` says the database and the blob store do
  not accept writes (it said `database: ok`), and all is well again once the directory is
  writable.
- The PostgreSQL connection lost (a TCP proxy of the test's own between the app and the
  database is cut; the shared PostgreSQL server is never touched): 503 `service_unavailable`
  with `Retry-After`, logged as such, then 201 again once the proxy is back.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image

from server.errors import UNAVAILABLE_RETRY_AFTER_SECONDS

CREATE = {
    "templateId": "easy",
    "delivery": {"channel": "email", "destination": "a@example.com"},
    "locale": "en_US",
}


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (30, 120, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _unprivileged() -> list[str]:
    """A prefix that makes file permissions bind the server: as root, drop the capabilities
    that override them (root ignores a directory's mode otherwise)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.fail("running as root needs util-linux's setpriv to drop CAP_DAC_OVERRIDE")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--"]


def _set_writable(root: Path, writable: bool) -> None:
    for path in [root, *root.rglob("*")]:
        mode = path.stat().st_mode
        bits = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
        path.chmod(mode | stat.S_IWUSR if writable else mode & ~bits)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """`inspectlang serve --demo` on a data directory of its own, as a separate process."""
    data = tmp_path / "data"
    port = _free_port()
    log_path = tmp_path / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECTLANG_")}
    env.pop("DATABASE_URL", None)
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [
                *_unprivileged(),
                *(sys.executable, "-m", "server", "serve", "--demo", "--no-worker"),
                *("--port", str(port), "--data-dir", str(data)),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=Path(__file__).parents[2],
        )
    try:
        key = None
        deadline = time.monotonic() + 90
        while key is None and time.monotonic() < deadline and process.poll() is None:
            found = re.search(r"test key:\s+(\S+)", log_path.read_text())
            key = found.group(1) if found else None
            time.sleep(0.1)
        assert key, f"serve --demo printed no test key:\n{log_path.read_text()}"
        base = f"http://127.0.0.1:{port}"
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/ready", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield {"base": base, "key": key, "data": data, "process": process, "log": log_path}
    finally:
        _set_writable(data, True)
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


def _create(client: httpx.Client) -> httpx.Response:
    return client.post("/v1/inspection/car", json=CREATE)


def _upload(client: httpx.Client, product_id: str, key: str | None = None) -> httpx.Response:
    return client.post(
        f"/v1/inspection/image/{product_id}",
        files={"image": ("front.png", png(), "image/png"), "data": (None, '{"side": "front"}')},
        headers={"idempotency-key": key} if key else None,
    )


def _is_storage_refusal(response: httpx.Response) -> bool:
    return (
        response.status_code == 503
        and response.json()["code"] == "storage_unavailable"
        and response.headers.get("retry-after") == str(UNAVAILABLE_RETRY_AFTER_SECONDS)
    )


def test_a_read_only_data_directory_answers_503_and_never_kills_the_server(
    served: dict[str, Any],
) -> None:
    headers = {"x-api-key": served["key"]}
    with httpx.Client(base_url=served["base"], headers=headers, timeout=60) as client:
        before = _create(client)
        assert before.status_code == 201, before.text
        product_id = before.json()["productId"]
        assert client.post(f"/v1/inspection/{before.json()['inspectionId']}/start").is_success
        assert _upload(client, product_id).status_code == 201

        _set_writable(served["data"], False)
        with ThreadPoolExecutor(max_workers=16) as pool:
            creations = list(pool.map(lambda _: _create(client), range(48)))
            uploads = list(pool.map(lambda _: _upload(client, product_id), range(6)))
        keyed = _upload(client, product_id, key="upload-during-the-outage")
        ready = client.get("/ready")

        # Connections opened before the change may still write (their files stay open); every
        # other write is refused by the storage, and says so.
        for response in creations:
            assert response.status_code == 201 or _is_storage_refusal(response), response.text
        assert any(_is_storage_refusal(response) for response in creations)
        for response in [*uploads, keyed]:
            assert _is_storage_refusal(response), response.text
        assert ready.status_code == 503, ready.text
        checks = ready.json()["checks"]
        assert checks["database"].startswith("DatabaseReadOnly: "), checks  # and why
        assert checks["blobs"] != "ok", checks
        assert served["process"].poll() is None, "the server died"

        _set_writable(served["data"], True)
        assert client.get("/ready").status_code == 200
        after = _create(client)
        assert after.status_code == 201, after.text
        assert _upload(client, product_id).status_code == 201
        # A 503 asks for a retry: its Idempotency-Key was released, and the retry runs.
        retried = _upload(client, product_id, key="upload-during-the-outage")
        assert retried.status_code == 201, retried.text
        assert "idempotent-replayed" not in retried.headers
    log = served["log"].read_text()
    assert "storage_unavailable while handling a request" in log
    assert "unhandled error" not in log


def test_sqlite_reads_through_no_memory_map(tmp_path: Path) -> None:
    """A mapped page the storage cannot serve is a SIGBUS: the process dies, nothing logged."""
    from server.db import Database

    database = Database(f"sqlite:///{tmp_path / 'map.sqlite3'}")
    with database.engine.connect() as connection:
        assert connection.exec_driver_sql("PRAGMA mmap_size").scalar() == 0
    database.dispose()


def test_a_blob_store_that_does_not_answer_is_503_service_unavailable(
    settings: Any, db: Any, serve_app: Any, company: dict[str, Any]
) -> None:
    """S3 unreachable (nothing listens on its port): an upload is 503 `service_unavailable`
    with `Retry-After`, not 500, and `/ready` says the blob store is not ready."""
    from server.app import create_app

    unreachable = settings.model_copy(
        update={
            "blob_url": "s3://nowhere/prefix",
            "s3_endpoint_url": f"http://127.0.0.1:{_free_port()}",
            "s3_access_key_id": "testing",
            "s3_secret_access_key": "testing",
        }
    )
    with serve_app(create_app(unreachable, db=db)) as base:
        headers = {"x-api-key": company["testKey"]}
        with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
            created = _create(client)
            assert created.status_code == 201, created.text
            uploaded = _upload(client, created.json()["productId"])
            assert uploaded.status_code == 503, uploaded.text
            assert uploaded.json()["code"] == "service_unavailable"
            assert uploaded.headers["retry-after"] == str(UNAVAILABLE_RETRY_AFTER_SECONDS)
            ready = client.get("/ready")
            assert ready.status_code == 503
            assert ready.json()["checks"]["blobs"] == "ServiceUnavailable"


# --- a lost PostgreSQL connection ---------------------------------------------------------------


class Proxy:
    """A TCP proxy from a local port to PostgreSQL, that the test cuts and restores."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = _free_port()
        self.sockets: list[socket.socket] = []
        self.listener: socket.socket | None = None
        self.lock = threading.Lock()

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """Close the listener and every connection: the database is unreachable."""
        with self.lock:
            if self.listener is not None:
                self.listener.close()
                self.listener = None
            for sock in self.sockets:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self.sockets.clear()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.target)
            with self.lock:
                self.sockets += [client, server]
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)


def test_a_lost_postgresql_connection_answers_503_service_unavailable(
    postgres_schema_url: str | None,
    settings: Any,
    serve_app: Any,
) -> None:
    if postgres_schema_url is None:
        pytest.skip("PostgreSQL's connections: run with TEST_DATABASE_URL (make test-postgres)")
    from sqlalchemy.engine import make_url

    from server import migrate
    from server.app import create_app
    from server.auth import create_company
    from server.db import Database

    url = make_url(postgres_schema_url)
    proxy = Proxy((url.host or "127.0.0.1", url.port or 5432))
    proxy.start()
    proxied = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    database = Database(proxied)
    logged: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: logged.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("server.errors").addHandler(handler)
    try:
        migrate.upgrade(database)
        company = create_company(database, "Lost connection Co", [])
        app = create_app(settings.model_copy(update={"database_url": proxied}), db=database)
        with serve_app(app) as base:
            headers = {"x-api-key": company["testKey"]}
            with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
                assert _create(client).status_code == 201
                proxy.cut()
                lost = _create(client)
                assert lost.status_code == 503, lost.text
                assert lost.json()["code"] == "service_unavailable"
                assert lost.headers["retry-after"] == str(UNAVAILABLE_RETRY_AFTER_SECONDS)
                assert client.get("/ready").status_code == 503
                proxy.start()
                back = _create(client)
                assert back.status_code == 201, back.text
                assert json.loads(back.text)["inspectionId"]
    finally:
        logging.getLogger("server.errors").removeHandler(handler)
        proxy.cut()
        database.dispose()
    assert any("service_unavailable while handling a request" in line for line in logged)
    assert not any("unhandled error" in line for line in logged)


class UnreachableBlobs:
    """A blob store whose every call fails as an unreachable service would."""

    def __getattr__(self, name: str) -> Any:
        from server.errors import ServiceUnavailable

        def fail(*args: Any, **kwargs: Any) -> Any:
            raise ServiceUnavailable(f"blob store {name}: connection refused")

        return fail


def test_a_page_answers_a_503_page_in_the_browsers_language(
    settings: Any, db: Any, serve_app: Any, client: httpx.Client, company: dict[str, Any]
) -> None:
    """The dashboard's photo route with the blob store gone: a page (not JSON), 503, with
    `Retry-After`, in Spanish for a browser that asks for it."""
    from server.app import create_app
    from server.dashboard import accounts

    headers = {"x-api-key": company["testKey"]}
    created = client.post("/v1/inspection/car", json=CREATE, headers=headers).json()
    assert client.post(f"/v1/inspection/{created['inspectionId']}/start", headers=headers)
    with httpx.Client(base_url=str(client.base_url), headers=headers, timeout=60) as api:
        uploaded = _upload(api, created["productId"])
    assert uploaded.status_code == 201, uploaded.text
    email = f"owner-{company['companyId'][:6]}@example.com"
    accounts.create_account(db, company["companyId"], email, "owner", "owner password 1")
    app = create_app(settings, db=db, blobs=UnreachableBlobs())  # type: ignore[arg-type]
    with serve_app(app) as base, httpx.Client(base_url=base, timeout=60) as browser:
        form = browser.get("/dashboard/sign-in").text
        token = re.search(r'name="_csrf_token" value="([^"]+)"', form)
        assert token is not None
        signed = browser.post(
            "/dashboard/sign-in",
            data={"email": email, "password": "owner password 1", "_csrf_token": token[1]},
        )
        assert signed.status_code in (200, 303), signed.text
        photo = browser.get(
            f"/dashboard/inspections/{created['inspectionId']}/photos/{uploaded.json()['_id']}",
            headers={"accept-language": "es-AR,es;q=0.9", "accept": "text/html,*/*;q=0.8"},
        )
        fetched = browser.get(  # a page's script asking (consumer.js): the JSON error
            f"/dashboard/inspections/{created['inspectionId']}/photos/{uploaded.json()['_id']}",
            headers={"accept": "application/json"},
        )
    assert photo.status_code == 503
    assert photo.headers["content-type"].startswith("text/html")
    assert photo.headers["retry-after"] == str(UNAVAILABLE_RETRY_AFTER_SECONDS)
    assert "El servicio no está disponible por un momento" in photo.text
    assert fetched.status_code == 503
    assert fetched.json()["code"] == "service_unavailable"


def test_an_exclusive_sqlite_database_keeps_its_wal_index_in_memory(tmp_path: Path) -> None:
    """`serve` and `worker` open SQLite exclusively: no `-shm` file is mapped (a page of it the
    storage refuses to back, the data directory made immutable, was a SIGBUS:
    `benchmarks/bench_readonly_storage.py`), the process's connections still share the file in
    WAL mode, and another process waits for the file instead of mapping a second index."""
    from sqlalchemy import text

    from server.db import Database

    path = tmp_path / "alone.sqlite3"
    database = Database(f"sqlite:///{path}", exclusive=True)
    try:
        with database.engine.begin() as connection:
            assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            connection.execute(text("CREATE TABLE t (n INTEGER)"))
            connection.execute(text("INSERT INTO t VALUES (1)"))
        with database.engine.connect() as first, database.engine.connect() as second:
            first.execute(text("BEGIN IMMEDIATE"))
            first.execute(text("INSERT INTO t VALUES (2)"))
            # A reader of the same process does not wait for the writer (WAL).
            assert second.execute(text("SELECT count(*) FROM t")).scalar() == 1
            first.execute(text("COMMIT"))
        assert (tmp_path / "alone.sqlite3-wal").exists()
        assert not (tmp_path / "alone.sqlite3-shm").exists()
        assert "alone.sqlite3-shm" not in Path(f"/proc/{os.getpid()}/maps").read_text()
        database.check_writable()
        other = subprocess.run(
            [sys.executable, "-c", f"import sqlite3; sqlite3.connect({str(path)!r}, timeout=0)"
             ".execute('SELECT count(*) FROM t').fetchone()"],
            capture_output=True,
            text=True,
        )  # fmt: skip
        assert other.returncode != 0 and "database is locked" in other.stderr, other.stderr
    finally:
        database.dispose()


def test_a_worker_logs_an_outage_once_not_a_traceback_per_claim(
    settings: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A database that refuses (nothing listens on its port) while the worker polls: one line
    saying so, not a traceback for each failed claim (issue 39)."""
    from server.app import worker_jobs
    from server.blobs import LocalBlobStore
    from server.db import Database
    from server.jobs import WorkerConfig, run_worker

    database = Database(f"postgresql://postgres@127.0.0.1:{_free_port()}/nowhere")
    stop = threading.Event()
    config = WorkerConfig(poll_seconds=0.05)
    worker = threading.Thread(
        target=run_worker,
        args=(database, settings),
        kwargs={
            "stop_event": stop,
            "config": config,
            "blobs": LocalBlobStore(tmp_path),
            "registry": worker_jobs(settings),
        },
    )
    with caplog.at_level(logging.INFO, logger="server.jobs"):
        worker.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
            "service_unavailable" in record.getMessage() for record in caplog.records
        ):
            time.sleep(0.05)
        time.sleep(1.0)  # twenty more polls, all failing
        stop.set()
        worker.join(timeout=60)
    database.dispose()
    lines = [r for r in caplog.records if r.name == "server.jobs" and r.levelno >= logging.WARNING]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "service_unavailable" in lines[0].getMessage()
    assert lines[0].exc_info is None


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 16 MB tmpfs of the test's own (mounting one needs root)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)])
    if done.returncode != 0:
        pytest.skip("mounting a tmpfs needs root (CAP_SYS_ADMIN)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def test_ready_says_a_full_disk_is_full(tiny_disk: Path) -> None:
    """Disk full: `/ready`'s database check said "ok" (its write was rolled back, so it never
    reached the disk) while writes failed (issue 39). Now it commits a real write and checks
    the free space, and says "ok" again once there is room."""
    from sqlalchemy import text

    from server.db import Database, DatabaseReadOnly

    database = Database(f"sqlite:///{tiny_disk / 'full.sqlite3'}", exclusive=True)
    try:
        with database.engine.begin() as connection:
            connection.execute(text("CREATE TABLE t (doc TEXT)"))
        database.check_writable()
        filler = tiny_disk / "filler"
        with filler.open("wb") as out, contextlib.suppress(OSError):
            while True:
                out.write(b"\0" * 65536)
        with pytest.raises(DatabaseReadOnly, match="full"):
            database.check_writable()
        filler.unlink()
        database.check_writable()
    finally:
        database.dispose()


def test_ready_on_postgresql_tells_the_truth_about_writes(
    postgres_schema_url: str | None, settings: Any, db: Any, serve_app: Any
) -> None:
    """`/ready` on PostgreSQL writes (an UPSERT into `ready_probe`, committed, on a connection
    of its own): a database made read-only for new connections, which `SELECT 1` and the pooled
    connections never notice, fails the database check and says why; so does a write that
    cannot finish within the probe's statement timeout; both recover once writes go through."""
    if postgres_schema_url is None:
        pytest.skip("PostgreSQL's writes: run with TEST_DATABASE_URL (make test-postgres)")
    import psycopg
    from sqlalchemy import text
    from sqlalchemy.engine import make_url

    from server.app import create_app
    from server.db import READY_STATEMENT_TIMEOUT_MS

    name = make_url(postgres_schema_url).database
    conninfo = postgres_schema_url.replace("postgresql+psycopg://", "postgresql://")

    def probe_row() -> Any:
        with db.engine.connect() as connection:
            return connection.execute(
                text("SELECT written_at FROM ready_probe WHERE name = 'ready'")
            ).scalar()

    with serve_app(create_app(settings, db=db)) as base, httpx.Client(base_url=base) as client:
        ready = client.get("/ready")
        assert ready.status_code == 200, ready.text
        first = probe_row()
        assert first is not None  # the probe wrote its row
        assert client.get("/ready").status_code == 200
        assert probe_row() > first  # and writes it again at each probe

        with psycopg.connect(conninfo, autocommit=True) as admin:
            admin.execute(f'ALTER DATABASE "{name}" SET default_transaction_read_only = on')
            try:
                # The pool's connections still write: only the probe's own connection is new.
                with db.engine.begin() as pooled:
                    pooled.execute(text("SELECT 1"))
                refused = client.get("/ready")
            finally:
                admin.execute(f'ALTER DATABASE "{name}" RESET default_transaction_read_only')
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"] == str(UNAVAILABLE_RETRY_AFTER_SECONDS)
        body = refused.json()
        assert body["code"] == "not_ready" and body["checks"]["blobs"] == "ok"
        assert body["checks"]["database"] == (
            "DatabaseReadOnly: PostgreSQL refuses writes: cannot execute INSERT in a read-only "
            "transaction (SQLSTATE 25006)"
        )
        assert client.get("/ready").status_code == 200

        # A write that hangs (here: the probe's row held by another transaction) is a refusal
        # after the statement timeout, not a probe that hangs with it.
        with psycopg.connect(conninfo) as holder:
            holder.execute("SELECT * FROM ready_probe WHERE name = 'ready' FOR UPDATE")
            stuck = client.get("/ready", timeout=30)
            holder.rollback()
        assert stuck.status_code == 503, stuck.text
        assert stuck.json()["checks"]["database"] == (
            f"DatabaseReadOnly: PostgreSQL refuses writes: a write took over "
            f"{READY_STATEMENT_TIMEOUT_MS} ms (SQLSTATE 57014)"
        )
        assert client.get("/ready").status_code == 200
