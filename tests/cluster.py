"""Several processes of the service on one database and one blob store, for the multi-process
test (`tests/server/test_multiprocess.py`) and `benchmarks/bench_scale.py`.

`Cluster` starts N `inspectlang serve --no-worker` processes, each with its own data directory
(nothing shared on disk), M `inspectlang worker` processes, and nginx in front of the API
processes (the example configuration of docs/operations.md, `NGINX_CONFIG`). Processes can be
killed with SIGKILL and started again. `Client` runs the whole life of inspections across the
processes (create on one, upload through another, finish, request the report, read the PDF
through another) and retries an operation that met a dead process on another one, with the same
`Idempotency-Key`; `verify` then counts what was lost and what was done twice.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

ROOT = Path(__file__).resolve().parent.parent
INSPECTLANG = str(Path(sys.executable).with_name("inspectlang"))
NGINX = "/usr/sbin/nginx"
SECRET = "cluster-secret-" + "s" * 40

#: The load balancer configuration of docs/operations.md ("Load balancer"); `{listen}` and
#: `{servers}` are filled in. Keep the two the same.
NGINX_CONFIG = """
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body;
    proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi;
    uwsgi_temp_path {prefix}/uwsgi;
    scgi_temp_path {prefix}/scgi;
    upstream inspectlang {{
{servers}
        keepalive 32;
    }}
    server {{
        listen 127.0.0.1:{listen};
        client_max_body_size 25m;
        location / {{
            proxy_pass http://inspectlang;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            # A dead API process: try the next one, for every method. Safe because every
            # POST/PUT the clients send carries an Idempotency-Key.
            proxy_next_upstream error timeout http_502 http_503 non_idempotent;
            proxy_next_upstream_tries 2;
            proxy_connect_timeout 2s;
            proxy_read_timeout 120s;
        }}
    }}
}}
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def png_photo(seed: int) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (seed % 256, 80, 160)).save(buffer, format="JPEG")
    return buffer.getvalue()


@dataclass
class Process:
    name: str
    command: list[str]
    env: dict[str, str]
    log: Path
    port: int | None = None
    popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        handle = self.log.open("ab")
        self.popen = subprocess.Popen(
            self.command, env=self.env, stdout=handle, stderr=subprocess.STDOUT, cwd=self.log.parent
        )
        handle.close()

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs, in-flight work is simply cut."""
        if self.popen is not None and self.popen.poll() is None:
            self.popen.send_signal(signal.SIGKILL)
            self.popen.wait(timeout=30)

    def stop(self) -> None:
        if self.popen is None or self.popen.poll() is not None:
            return
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(timeout=30)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


@dataclass
class Cluster:
    database_url: str
    blob_env: dict[str, str]
    apis: int = 2
    workers: int = 2
    nginx: bool = True
    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="cluster-")))
    api: list[Process] = field(default_factory=list)
    worker: list[Process] = field(default_factory=list)
    balancer: Process | None = None

    def _env(self, data_dir: Path, public_url: str | None = None) -> dict[str, str]:
        env = {
            key: value for key, value in os.environ.items() if not key.startswith("INSPECTLANG_")
        }
        env.update(self.blob_env)
        env.update(
            {
                "PYTHONPATH": str(ROOT),
                "DATABASE_URL": self.database_url,
                "INSPECTLANG_DATA_DIR": str(data_dir),
                "INSPECTLANG_SECRET": SECRET,
                "INSPECTLANG_RATE_LIMIT_REQUESTS": "0",
                "INSPECTLANG_EXPIRY_SWEEP_SECONDS": "60",
                # The proof is about jobs, blobs and processes; photo analysis has its own
                # kill-and-retake test (tests/server/test_vision_analysis.py).
                "INSPECTLANG_VISION": "0",
                # Several processes on one SQLite file: none may hold it alone.
                "INSPECTLANG_SQLITE_EXCLUSIVE": "0",
            }
        )
        if public_url:
            env["INSPECTLANG_PUBLIC_URL"] = public_url
        return env

    def start(self) -> None:
        for index in range(self.apis):
            data_dir = self.root / f"api{index}"
            data_dir.mkdir(parents=True, exist_ok=True)
            port = free_port()
            command = [INSPECTLANG, "serve", "--no-worker", "--host", "127.0.0.1",
                       "--port", str(port)]  # fmt: skip
            self.api.append(
                Process(f"api{index}", command, self._env(data_dir), data_dir / "log.txt", port)
            )
        for index in range(self.workers):
            data_dir = self.root / f"worker{index}"
            data_dir.mkdir(parents=True, exist_ok=True)
            self.worker.append(
                Process(
                    f"worker{index}",
                    [INSPECTLANG, "worker"],
                    self._env(data_dir),
                    data_dir / "log.txt",
                )
            )
        for process in [*self.api, *self.worker]:
            process.start()
        for process in self.api:
            wait_ready(process)
        if self.nginx:
            self.start_nginx()

    def start_nginx(self) -> None:
        prefix = self.root / "nginx"
        prefix.mkdir(exist_ok=True)
        port = free_port()
        servers = "\n".join(
            f"        server 127.0.0.1:{api.port} max_fails=1 fail_timeout=2s;" for api in self.api
        )
        config = prefix / "nginx.conf"
        config.write_text(NGINX_CONFIG.format(prefix=prefix, listen=port, servers=servers))
        self.balancer = Process(
            "nginx",
            [NGINX, "-p", str(prefix), "-c", str(config), "-g", "daemon off;"],
            dict(os.environ),
            prefix / "log.txt",
            port,
        )
        self.balancer.start()
        wait_ready(self.balancer)

    def restart(self, process: Process) -> None:
        process.start()
        if process.port is not None:
            wait_ready(process)

    def stop(self) -> None:
        for process in [*([self.balancer] if self.balancer else []), *self.api, *self.worker]:
            process.stop()

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.log.read_text(errors='replace')[-3000:]}"
            for p in [*self.api, *self.worker]
            if p.log.exists()
        )


def wait_ready(process: Process, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{process.base_url}/ready", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if process.popen is not None and process.popen.poll() is not None:
            raise RuntimeError(f"{process.name} died at start:\n{process.log.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{process.name} did not become ready")
        time.sleep(0.2)


def creation(plate: str) -> dict[str, Any]:
    return {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "driver@example.com"},
        "car": {"plate": plate},
    }


@dataclass
class Outcome:
    plate: str
    inspection_id: str | None = None
    report_id: str | None = None
    pdf_ok: bool = False
    error: str | None = None


class Stuck(RuntimeError):
    """The Idempotency-Key stays claimed by a request whose API process was killed."""


#: How long a key may answer `idempotency_request_in_progress` before the client looks whether
#: the operation happened. The claim of a killed process is taken over by a retry once its lease
#: (`server.idempotency.LEASE`, 30 s) lapses, so this is only a fallback beyond it.
STUCK_SECONDS = 45.0


class Client:
    """Drives inspections across `bases` (API base URLs; any may be dead at any moment)."""

    def __init__(self, bases: Callable[[], list[str]], api_key: str) -> None:
        self.bases = bases
        self.headers = {"x-api-key": api_key}
        self.retries = 0
        self.reconciled = 0

    def call(self, method: str, path: str, start: int, *, key: str | None = None,
             expect: tuple[int, ...] = (200, 201), extra_headers: dict[str, str] | None = None,
             **kwargs: Any) -> httpx.Response:  # fmt: skip
        """`method path` on base number `start`, then the others in turn while a process is
        dead (connection refused or cut): the same Idempotency-Key makes the retry safe."""
        headers = {**self.headers, **(extra_headers or {})}
        if key is not None:
            headers["Idempotency-Key"] = key
        deadline = time.monotonic() + 120
        stuck_since: float | None = None
        attempt = 0
        while True:
            bases = self.bases()
            base = bases[(start + attempt) % len(bases)]
            try:
                response = httpx.request(method, base + path, headers=headers, timeout=60, **kwargs)
            except httpx.TransportError:
                response = None
            if response is not None and response.status_code in expect:
                return response
            if (
                response is not None
                and response.status_code == 409
                and key is not None
                and response.json().get("code") == "idempotency_request_in_progress"
            ):
                stuck_since = stuck_since or time.monotonic()
                if time.monotonic() - stuck_since > STUCK_SECONDS:
                    raise Stuck(f"{method} {path}")
            retryable = response is None or response.status_code in (409, 502, 503)
            if not retryable or time.monotonic() > deadline:
                detail = "no answer" if response is None else response.text[:300]
                raise RuntimeError(f"{method} {path}: {detail}")
            attempt += 1
            self.retries += 1
            time.sleep(0.2)

    def step(self, do: Callable[[str], Any], happened: Callable[[], Any], key: str) -> Any:
        """`do(key)`; when its key is stuck, what `happened()` finds (the operation ran before
        its process died), else `do` again with a fresh key (it never ran)."""
        try:
            return do(key)
        except Stuck:
            self.reconciled += 1
            found = happened()
            if found is not None:
                return found
            return do(f"{key}-again")

    def create_and_upload(self, index: int, outcome: Outcome) -> None:
        """Create on one API, upload through the other, finish, request the report."""
        tag = secrets.token_hex(6)
        plate = outcome.plate

        def create(key: str) -> dict[str, Any]:
            answer: dict[str, Any] = self.call(
                "POST", "/v1/inspection/car", index, key=key, json=creation(plate)
            ).json()
            return answer

        def created_before() -> dict[str, Any] | None:
            listed = self.call("GET", f"/v1/inspection?plate={plate}", index).json()
            for document in listed["inspections"]:
                return {
                    "inspectionId": document["_id"],
                    "productId": document["products"][0]["_id"],
                }
            return None

        created = self.step(create, created_before, f"c-{tag}")
        outcome.inspection_id = inspection_id = created["inspectionId"]

        def document() -> dict[str, Any]:
            found: dict[str, Any] = self.call(
                "GET", f"/v1/inspection/{inspection_id}", index
            ).json()
            return found

        # One body for every attempt (a new multipart boundary would be another request).
        boundary = f"cluster{tag}"
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="data"\r\n\r\n'
                '{"side": "front"}\r\n'
                f'--{boundary}\r\nContent-Disposition: form-data; name="image"; '
                'filename="photo.jpg"\r\nContent-Type: image/jpeg\r\n\r\n'
            ).encode()
            + png_photo(index)
            + f"\r\n--{boundary}--\r\n".encode()
        )
        self.step(
            lambda key: self.call(
                "POST", f"/v1/inspection/image/{created['productId']}", index + 1, key=key,
                content=body,
                extra_headers={"content-type": f"multipart/form-data; boundary={boundary}"},
            ),
            lambda: document()["products"][0]["images"] or None,
            f"u-{tag}",
        )  # fmt: skip
        self.step(
            lambda key: self.call("POST", f"/v1/inspection/finish/{inspection_id}", index, key=key),
            lambda: document() if document()["status"] == "completed" else None,
            f"f-{tag}",
        )
        requests_path = f"/v1/inspection/{inspection_id}/report/request"
        report = self.step(
            lambda key: self.call("POST", requests_path, index + 1, key=key, json={}).json(),
            lambda: (self.call("GET", requests_path, index).json()["reportRequests"] or [None])[0],
            f"r-{tag}",
        )
        outcome.report_id = report["_id"]

    def read_pdf(self, index: int, outcome: Outcome, timeout: float = 300.0) -> None:
        """Wait for the report (rendered by whichever worker claimed it), then read the PDF
        through the API other than the one that signed its link."""
        path = f"/v1/inspection/{outcome.inspection_id}/report/request/{outcome.report_id}"
        deadline = time.monotonic() + timeout
        while True:
            report = self.call("GET", path, index).json()
            if report["status"] == "completed":
                break
            if report["status"] == "failed" or time.monotonic() > deadline:
                raise RuntimeError(f"report {outcome.report_id}: {report}")
            time.sleep(0.3)
        signed = urlsplit(report["result"]["url"])
        bases = self.bases()
        other = bases[(index + 1) % len(bases)]
        pdf = httpx.get(f"{other}{signed.path}?{signed.query}", timeout=60)
        outcome.pdf_ok = pdf.status_code == 200 and pdf.content.startswith(b"%PDF")


def run_load(client: Client, outcomes: list[Outcome], threads: int = 4) -> None:
    """Every outcome's create/upload/finish/report-request, `threads` at a time."""
    lock = threading.Lock()
    queue = list(enumerate(outcomes))

    def worker() -> None:
        while True:
            with lock:
                if not queue:
                    return
                index, outcome = queue.pop(0)
            try:
                client.create_and_upload(index, outcome)
            except Exception as error:
                outcome.error = str(error)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()


def verify(database_url: str, company_id: str, outcomes: list[Outcome]) -> dict[str, int]:
    """`lost`: operations acknowledged or attempted whose result is missing (an inspection, its
    photo, its completed report); `duplicated`: rows beyond one per operation (inspections per
    plate, images per inspection, report requests per inspection, report jobs run to `done`
    per report request)."""
    from sqlalchemy import text

    from server.db import Database

    database = Database(database_url)
    lost = duplicated = 0
    try:
        with database.engine.connect() as connection:
            for outcome in outcomes:
                found = connection.execute(
                    text("SELECT id FROM inspections WHERE company_id = :c AND plate = :p"),
                    {"c": company_id, "p": outcome.plate},
                ).all()
                if not found:
                    lost += 1
                    continue
                duplicated += len(found) - 1
                inspection_id = found[0][0]
                images = connection.execute(
                    text("SELECT count(*) FROM inspection_images WHERE inspection_id = :i"),
                    {"i": inspection_id},
                ).scalar_one()
                lost += images == 0
                duplicated += max(0, images - 1)
                reports = connection.execute(
                    text("SELECT id, status FROM report_requests WHERE inspection_id = :i"),
                    {"i": inspection_id},
                ).all()
                lost += not any(status == "completed" for _, status in reports)
                duplicated += max(0, len(reports) - 1)
                lost += not outcome.pdf_ok
            ours = {outcome.report_id for outcome in outcomes if outcome.report_id}
            payloads = connection.execute(
                text("SELECT payload FROM jobs WHERE kind = 'report' AND status = 'done'")
            ).scalars()
            runs: dict[str, int] = {}
            for payload in payloads:
                data = payload if isinstance(payload, dict) else json.loads(payload)
                report_id = data.get("reportRequestId")
                if report_id in ours:
                    runs[report_id] = runs.get(report_id, 0) + 1
            duplicated += sum(count - 1 for count in runs.values() if count > 1)
    finally:
        database.dispose()
    return {"lost": int(lost), "duplicated": int(duplicated)}
