"""Issue 39 §2: how long a request waits for its 503 when PostgreSQL refuses connections.

Starts `inspectlang serve --no-worker` on PostgreSQL through a TCP proxy of its own
(`tests.server.test_storage_faults.Proxy`; the shared PostgreSQL server is never touched), makes
one request of each kind while the database answers, then closes the proxy's port and its
connections (the database now refuses every connection) and times, `ROUNDS` times each: a create
(POST, authenticated: the key lookup's pool and the engine's), a read (GET), a read with a key
the process has not looked up yet, and `/ready`. Each
must be a 503 with `Retry-After` (`service_unavailable`, `/ready`'s `not_ready`); target: within
`TARGET_S` seconds (it was 30-60 s: the pools waited their default 30 s for a connection). Then
the proxy comes back and the time until a create and a new key's read work again is measured.
Two ways of refusing, one after the other: `refused` (the port closed: connection refused) and
`unanswered` (connections accepted, never answered: a paused or overloaded host).

`BENCH_POSTGRES_URL` (default the local `test` database). The last line is one JSON object:
`{"create_to_503_s": ..., "read_to_503_s": ..., "ready_to_503_s": ..., "target_s": 2, ...}`
(the slowest of the rounds).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.server.test_storage_faults import Proxy, _free_port  # noqa: E402

POSTGRES_URL = os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
TARGET_S = 2.0
#: Longest wait for the service to work again once the database answers.
RECOVERY_LIMIT_S = 60.0
CREATE = {
    "templateId": "easy",
    "delivery": {"channel": "email", "destination": "a@example.com"},
    "locale": "en_US",
}


class SilentProxy(Proxy):
    """The proxy whose `silence()` cuts every connection and then accepts new ones without ever
    answering: a database host that accepts TCP and says nothing (overloaded, paused, or a
    half-dead network path), where a connection attempt waits for its timeout."""

    silent = False

    def cut(self) -> None:
        # Wake the thread blocked in accept(): a listener closed under it keeps its port.
        if self.listener is not None:
            with contextlib.suppress(OSError):
                self.listener.shutdown(socket.SHUT_RDWR)
        super().cut()

    def silence(self) -> None:
        self.cut()
        self.silent = True
        self.start()

    def _accept(self, listener: socket.socket) -> None:
        if not self.silent:
            super()._accept(listener)
            return
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            with self.lock:
                self.sockets.append(client)


def _timed(client: httpx.Client, method: str, url: str, **kw: object) -> tuple[float, int, str]:
    started = time.perf_counter()
    response = client.request(method, url, **kw)  # type: ignore[arg-type]
    elapsed = time.perf_counter() - started
    code = response.json().get("code", "") if response.status_code >= 400 else ""
    if response.status_code == 503 and "retry-after" not in response.headers:
        code += " (no Retry-After)"
    return elapsed, response.status_code, code


def main() -> None:
    from server import migrate
    from server.auth import create_company
    from server.db import Database

    url = make_url(POSTGRES_URL)
    timings: dict[str, list[float]] = {}
    answers: dict[str, set[str]] = {}
    recovered: dict[str, float | None] = {"refused": None, "unanswered": None}
    proxy = SilentProxy((url.host or "127.0.0.1", url.port or 5432))
    proxy.start()
    proxied = url.set(host="127.0.0.1", port=proxy.port).render_as_string(hide_password=False)
    database = Database(proxied)
    migrate.upgrade(database)
    keys = create_company(database, "Refused Co", [])
    database.dispose()
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECTLANG_")}
    env.update({"DATABASE_URL": proxied, "INSPECTLANG_RATE_LIMIT_REQUESTS": "0"})
    with tempfile.TemporaryDirectory(prefix="bench_refused_") as folder:
        log_path = Path(folder) / "serve.log"
        with log_path.open("w") as log:
            process = subprocess.Popen(
                [
                    *(sys.executable, "-m", "server", "serve", "--no-worker"),
                    *("--port", str(port), "--data-dir", folder),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=ROOT,
            )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{base}/ready", timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            else:
                raise SystemExit(f"serve did not start:\n{log_path.read_text()}")
            headers = {"x-api-key": keys["testKey"]}
            with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
                created = client.post("/v1/inspection/car", json=CREATE)
                assert created.status_code == 201, created.text
                inspection = f"/v1/inspection/{created.json()['inspectionId']}"
                requests = {
                    "create": ("POST", "/v1/inspection/car", {"json": CREATE}),
                    "read": ("GET", inspection, {}),
                    "ready": ("GET", "/ready", {}),
                    # A key this process has not looked up: the lookup needs the database.
                    "other_key": ("GET", inspection, {"headers": {"x-api-key": keys["liveKey"]}}),
                }
                for scenario, fail in (("refused", proxy.cut), ("unanswered", proxy.silence)):
                    fail()
                    for _ in range(ROUNDS):
                        for name, (method, path, kw) in requests.items():
                            elapsed, status, code = _timed(client, method, path, **kw)
                            label = f"{scenario}_{name}"
                            timings.setdefault(label, []).append(elapsed)
                            answers.setdefault(label, set()).add(f"{status} {code}".strip())
                            print(f"{label}: {status} {code} in {elapsed:.3f} s", flush=True)
                    proxy.cut()
                    proxy.silent = False
                    proxy.start()
                    restored = time.perf_counter()
                    while time.perf_counter() - restored < RECOVERY_LIMIT_S:
                        back = client.post("/v1/inspection/car", json=CREATE)
                        other = client.get(inspection, headers=requests["other_key"][2]["headers"])
                        # (the live key sees none of the test key's data: 404 once it works)
                        if back.status_code == 201 and other.status_code == 404:
                            recovered[scenario] = round(time.perf_counter() - restored, 3)
                            break
                        time.sleep(0.1)
        finally:
            proxy.cut()
            process.terminate()
            process.wait(timeout=30)
    result = {
        **{f"{label}_to_503_s": round(max(values), 3) for label, values in timings.items()},
        "target_s": TARGET_S,
        "answers": {label: sorted(values) for label, values in answers.items()},
        # Seconds from the database answering again to a create and a new key's read working.
        "recovered_after_s": recovered,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
