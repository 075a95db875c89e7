"""Issue 39 §2: a data directory made immutable under load, ten times; how often the server dies.

Each run starts `inspectlang serve --demo` (with its in-process worker) on a data directory of
its own, loads it from a bounded local client (`CLIENTS` threads creating inspections,
uploading photos, reading them back), makes the whole directory immutable (`chattr -R +i`: no
write, no truncate, no new file, even for root) while the load goes on, and checks that the
process lives, that every answer is a 2xx or 503 `storage_unavailable` / `service_unavailable`
with `Retry-After` (never a 500, never a dropped connection), and that `/ready` says which part
refuses writes. Then it makes the directory writable again and checks full recovery: `/ready`
200 and a create and an upload answered 201.

Needs root (CAP_LINUX_IMMUTABLE) on a file system with the immutable attribute (ext4, xfs,
btrfs, tmpfs). `BENCH_RUNS` (default 10), `BENCH_LOAD_SECONDS` (per phase, default 4),
`BENCH_MODES` (below). Prints one line per run; the last line is one JSON object:
`{"runs": 10, "crashes": 0, "internal_errors": 0, "unexpected": 0, "recovered": 10, ...}`.
"""

from __future__ import annotations

import io
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
RUNS = int(os.environ.get("BENCH_RUNS", "10"))
LOAD_SECONDS = float(os.environ.get("BENCH_LOAD_SECONDS", "4"))
#: `exclusive` (the default: the WAL index in memory); `BENCH_MODES=exclusive,shared` also
#: runs the baseline, several processes' way (`INSPECTLANG_SQLITE_EXCLUSIVE=0`: the mapped
#: `-shm` file), and reports its crashes as `shared_shm_crashes`.
MODES = os.environ.get("BENCH_MODES", "exclusive").split(",")
#: Threads of the local client: enough to keep every stage busy, bounded so the machine is not
#: the bottleneck.
CLIENTS = 12
CREATE = {
    "templateId": "easy",
    "delivery": {"channel": "email", "destination": "a@example.com"},
    "locale": "en_US",
}


def _png(seed: int) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (320, 240), (seed % 256, 120, 200)).save(buffer, format="PNG")
    return buffer.getvalue()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _immutable(path: Path, on: bool) -> None:
    subprocess.run(["chattr", "-R", "+i" if on else "-i", str(path)], check=True)


class Load:
    """`CLIENTS` threads sending creates, starts, uploads and reads until stopped; each answer
    is counted by its status and code."""

    def __init__(self, base: str, key: str) -> None:
        self.base = base
        self.key = key
        self.stop = threading.Event()
        self.answers: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, args=(n,)) for n in range(CLIENTS)]

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()

    def take(self) -> Counter[str]:
        with self.lock:
            answers, self.answers = self.answers, Counter()
        return answers

    def _count(self, response: httpx.Response | None) -> httpx.Response | None:
        if response is None:
            label = "connection_failed"
        elif response.status_code < 400:
            label = "2xx"
        else:
            try:
                code = response.json().get("code", "?")
            except ValueError:
                code = "not_json"
            retry = "retry-after" in response.headers
            label = f"{response.status_code} {code}" + ("" if retry else " (no Retry-After)")
        with self.lock:
            self.answers[label] += 1
        return response

    def _call(
        self, client: httpx.Client, method: str, url: str, **kw: Any
    ) -> httpx.Response | None:
        try:
            return self._count(client.request(method, url, **kw))
        except httpx.TransportError:
            self._count(None)
            time.sleep(0.2)
            return None

    def _run(self, seed: int) -> None:
        headers = {"x-api-key": self.key}
        with httpx.Client(base_url=self.base, headers=headers, timeout=60) as client:
            while not self.stop.is_set():
                created = self._call(client, "POST", "/v1/inspection/car", json=CREATE)
                if created is None or created.status_code != 201:
                    continue
                body = created.json()
                self._call(client, "POST", f"/v1/inspection/{body['inspectionId']}/start")
                files = {
                    "image": ("front.png", _png(seed), "image/png"),
                    "data": (None, '{"side": "front"}'),
                }
                self._call(client, "POST", f"/v1/inspection/image/{body['productId']}", files=files)
                self._call(client, "GET", f"/v1/inspection/{body['inspectionId']}")


def _start(data: Path, log_path: Path, exclusive: bool) -> tuple[subprocess.Popen[bytes], str, str]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECTLANG_")}
    env.pop("DATABASE_URL", None)
    env["INSPECTLANG_SQLITE_EXCLUSIVE"] = "1" if exclusive else "0"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "server", "serve", "--demo"),
                *("--port", str(port), "--data-dir", str(data)),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    key = None
    while time.monotonic() < deadline and process.poll() is None:
        if key is None:
            found = re.search(r"test key:\s+(\S+)", log_path.read_text())
            key = found.group(1) if found else None
        else:
            try:
                if httpx.get(f"{base}/ready", timeout=5).status_code == 200:
                    return process, base, key
            except httpx.TransportError:
                pass
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"the server did not start:\n{log_path.read_text()}")


def _ready(base: str) -> tuple[int, Any]:
    try:
        response = httpx.get(f"{base}/ready", timeout=10)
    except httpx.TransportError as error:
        return 0, type(error).__name__
    return response.status_code, response.json().get("checks")


def one_run(number: int, workdir: Path, mode: str) -> dict[str, Any]:
    data = workdir / f"{mode}{number}" / "data"
    log_path = workdir / f"{mode}{number}" / "server.log"
    data.parent.mkdir(parents=True)
    process, base, key = _start(data, log_path, exclusive=mode == "exclusive")
    result: dict[str, Any] = {"mode": mode, "run": number}
    try:
        with Load(base, key) as load:
            time.sleep(LOAD_SECONDS)
            result["before"] = dict(load.take())
            _immutable(data, True)
            try:
                time.sleep(LOAD_SECONDS)
                result["immutable"] = dict(load.take())
                result["ready_immutable"] = _ready(base)
            finally:
                _immutable(data, False)
            time.sleep(LOAD_SECONDS)
            result["after"] = dict(load.take())
        result["ready_after"] = _ready(base)
        result["alive"] = process.poll() is None
        if result["alive"]:
            headers = {"x-api-key": key}
            with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
                created = client.post("/v1/inspection/car", json=CREATE)
                ok = created.status_code == 201
                if ok:
                    body = created.json()
                    client.post(f"/v1/inspection/{body['inspectionId']}/start")
                    files = {
                        "image": ("front.png", _png(number), "image/png"),
                        "data": (None, '{"side": "front"}'),
                    }
                    uploaded = client.post(f"/v1/inspection/image/{body['productId']}", files=files)
                    ok = uploaded.status_code == 201
            result["recovered"] = ok and result["ready_after"][0] == 200
        else:
            result["recovered"] = False
    finally:
        _immutable(data, False)
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    result["returncode"] = process.returncode
    result["crashed"] = not result["alive"]
    log = log_path.read_text()
    result["log_unhandled"] = log.count("unhandled error")
    if result["crashed"]:
        # With PYTHONFAULTHANDLER=1, the signal and the thread that got it; else the log's end.
        fatal = log.find("Fatal Python error")
        result["log_tail"] = log[fatal : fatal + 3000] if fatal >= 0 else log[-2000:]
    return result


def _unexpected(answers: dict[str, int]) -> int:
    """Answers other than a 2xx, a 503 with Retry-After, or a 4xx the load provokes itself
    (a start or an upload whose inspection was not written)."""
    allowed = ("2xx", "503 storage_unavailable", "503 service_unavailable")
    return sum(n for label, n in answers.items() if label not in allowed and label[0] != "4")


def main() -> None:
    figures: dict[str, Any] = {"runs": RUNS}
    with tempfile.TemporaryDirectory(prefix="bench_readonly_") as workdir:
        for mode in MODES:
            summary: Counter[str] = Counter()
            for number in range(1, RUNS + 1):
                result = one_run(number, Path(workdir), mode)
                phases = [result.get(phase, {}) for phase in ("before", "immutable", "after")]
                summary["crashes"] += result["crashed"]
                summary["recovered"] += result["recovered"]
                summary["internal_errors"] += sum(
                    n for p in phases for label, n in p.items() if label.startswith("500")
                )
                summary["unexpected"] += sum(_unexpected(p) for p in phases)
                summary["refusals"] += sum(
                    n for label, n in result.get("immutable", {}).items() if label.startswith("503")
                )
                print(json.dumps(result), flush=True)
            if mode == "exclusive":
                figures.update({k: summary[k] for k in sorted(summary)})
            else:
                figures["shared_shm_crashes"] = summary["crashes"]
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
