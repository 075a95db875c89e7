"""HTTP throughput of the service against ceilings measured in the same run.

For each database (SQLite, then PostgreSQL when reachable) this starts `inspectlang serve` (one
uvicorn process, no worker) and `benchmarks/bare_app.py` the same way, bulk-inserts 100,000
inspections (clones of a real one, through SQLAlchemy Core in the real table shape), and drives
each endpoint from a separate process at 32 concurrent connections: wrk (Debian's package, a C
load generator) when it is installed, else an async httpx client. The httpx client tops out at a
few hundred requests/s on this 2-core machine, below the ceilings themselves, which pulls every
ratio towards 1; the output says which driver ran, and prints server CPU per request as well:

- create inspection (POST /v1/inspection/car)  vs  bare insert of one row through SQLModel
- get inspection (GET /v1/inspection/{id})      vs  bare read of one row by primary key
- list with a filter, page 5,000 vs page 1 (limit 10, status=created, 100,000 matching rows)

On PostgreSQL the loaded table gets `VACUUM ANALYZE` before any measurement, as autovacuum would
do to a table that grew by 100,000 rows (the benchmark's server may run with autovacuum off): a
list's count and page walk are index-only scans, and until a vacuum sets the visibility map each
index entry costs a heap fetch (a count of 100,000 rows: 60-110 ms instead of 10 ms). SQLite gets
no `ANALYZE`: it already picks the covering filter index for both without statistics.

It prints req/s, p50 and p99 for each and the ratios; the last line is ONE JSON object with the
ratios (the worst over the databases): `create_vs_insert_ceiling` (target >= 0.5),
`get_vs_read_ceiling` (target >= 0.7), `deep_page_vs_first_page` (latency ratio; target <= 2,
and <= 1.5 with `BENCH_ROWS=1000000`), `list_page_vs_get` (p50 of a list page over p50 of a GET;
target <= 2: the total comes from the maintained counts, `server.inspections.counts`),
`create_email_vs_undelivered` (creation with email delivery vs delivery disabled, target >= 0.9:
sending happens in the worker, off the request path), and `rows`. `BENCH_ROWS=1000000` loads a
million inspections (PostgreSQL through `COPY`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
INSPECTLANG = str(Path(sys.executable).parent / "inspectlang")
CONCURRENCY = 32
DURATION = float(os.environ.get("BENCH_DURATION", "2.5"))
WARMUP = 0.5
#: How long a server may take to answer /health. A cold start imports the service (about 1 s on
#: an idle machine, 14-16 s with the machine's 2 cores shared by a dozen busy processes, more
#: when a fresh clone compiles its bytecode first): the 60 s this was made the full run fail
#: with "server did not start" while the process was still importing.
START_SECONDS = float(os.environ.get("BENCH_START_SECONDS", "600"))
#: Attempts at a server whose port was taken between `free_port` and its bind.
START_ATTEMPTS = 3
ROUNDS = 2
ROWS = int(os.environ.get("BENCH_ROWS", "100000"))
POSTGRES_URL = os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
CREATE_BODY = {
    "templateId": "easy",
    "locale": "en_US",
    "delivery": {"channel": "email", "destination": "driver@example.com"},
    "car": {"plate": "AB123CD"},
}
#: The same creation with nothing to deliver: its ratio to CREATE_BODY shows sending is off the
#: request path (issue 11: email delivery enabled vs disabled stays at or above 0.9).
CREATE_UNDELIVERED = {**CREATE_BODY, "delivery": {"disabled": True}}


# --- the load driver (runs in its own process) ------------------------------------------------


async def _drive(spec: dict[str, Any]) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    latencies: list[float] = []
    errors: dict[str, int] = {}
    completed = [0]  # every response, warm-up included (for CPU per request)
    body = json.dumps(spec["body"]).encode() if spec.get("body") is not None else None
    headers = {**spec.get("headers", {}), "content-type": "application/json"}
    async with httpx.AsyncClient(base_url=spec["base_url"], limits=limits, timeout=60) as client:

        async def worker(deadline: float, record: bool) -> None:
            while time.perf_counter() < deadline:
                started = time.perf_counter()
                try:
                    response = await client.request(
                        spec["method"], spec["path"], content=body, headers=headers
                    )
                except httpx.HTTPError as error:
                    key = f"{type(error).__name__}: {error}"[:160]
                    errors[key] = errors.get(key, 0) + 1
                    continue
                elapsed = time.perf_counter() - started
                completed[0] += 1
                if response.status_code != spec["expect"]:
                    key = f"{response.status_code}: {response.text[:120]}"
                    errors[key] = errors.get(key, 0) + 1
                elif record:
                    latencies.append(elapsed)

        warm = time.perf_counter() + WARMUP
        await asyncio.gather(*(worker(warm, False) for _ in range(CONCURRENCY)))
        begin = time.perf_counter()
        end = begin + DURATION
        await asyncio.gather(*(worker(end, True) for _ in range(CONCURRENCY)))
        wall = time.perf_counter() - begin
    latencies.sort()
    count = len(latencies)
    return {
        "requests": count,
        "completed": completed[0],
        "rps": count / wall if wall else 0.0,
        "p50_ms": 1000 * latencies[count // 2] if count else None,
        "p99_ms": 1000 * latencies[min(count - 1, int(count * 0.99))] if count else None,
        "errors": errors,
    }


#: The C load generator, when installed (`apt-get install wrk`).
WRK = shutil.which("wrk")

#: wrk's script: the request to send, and the figures printed as one JSON line when done.
WRK_SCRIPT = """
wrk.method = os.getenv("BENCH_METHOD")
local body = os.getenv("BENCH_BODY")
if body ~= "" then wrk.body = body end
wrk.headers["content-type"] = "application/json"
for name, value in string.gmatch(os.getenv("BENCH_HEADERS"), "([^\\n:]+): ([^\\n]*)") do
  wrk.headers[name] = value
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, "bad_status": %d, '
    .. '"socket_errors": %d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.status, e.connect + e.read + e.write + e.timeout))
end
"""


def _wrk_run(spec: dict[str, Any], seconds: float) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(WRK_SCRIPT)
    env = {
        **os.environ,
        "BENCH_METHOD": spec["method"],
        "BENCH_BODY": json.dumps(spec["body"]) if spec.get("body") is not None else "",
        "BENCH_HEADERS": "\n".join(f"{k}: {v}" for k, v in spec.get("headers", {}).items()),
    }
    command = [WRK or "wrk", "-t1", f"-c{CONCURRENCY}", f"-d{max(1, round(seconds))}s"]
    command += ["--timeout", "30s", "-s", script.name, spec["base_url"] + spec["path"]]
    try:
        output = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    finally:
        os.unlink(script.name)
    line = next(x for x in reversed(output.stdout.splitlines()) if x.startswith("{"))
    figures: dict[str, Any] = json.loads(line)
    return figures


def _drive_wrk(spec: dict[str, Any]) -> dict[str, Any]:
    """The same measurement as `_drive`, with wrk making the requests."""
    warm = _wrk_run(spec, WARMUP)
    run = _wrk_run(spec, DURATION)
    errors: dict[str, int] = {}
    for figures in (warm, run):
        if figures["bad_status"]:
            errors[f"status other than 2xx/3xx (expected {spec['expect']})"] = figures["bad_status"]
        if figures["socket_errors"]:
            errors["socket errors"] = figures["socket_errors"]
    seconds = run["duration_us"] / 1e6
    return {
        "requests": run["requests"],
        "completed": warm["requests"] + run["requests"],
        "rps": run["requests"] / seconds if seconds else 0.0,
        "p50_ms": run["p50_us"] / 1000,
        "p99_ms": run["p99_us"] / 1000,
        "errors": errors,
    }


def drive(base_url: str, method: str, path: str, expect: int, **extra: Any) -> dict[str, Any]:
    """Run the driver in a separate process so its CPU is not the server's."""
    spec = {"base_url": base_url, "method": method, "path": path, "expect": expect, **extra}
    cpu_before = server_cpu_seconds(base_url)
    if WRK:
        measured = _drive_wrk(spec)
    else:
        result = subprocess.run(
            [sys.executable, __file__, "--drive", json.dumps(spec)],
            capture_output=True,
            text=True,
        )
        if result.returncode != 0:
            raise RuntimeError(f"the load driver failed on {method} {path}:\n{result.stderr}")
        measured = json.loads(result.stdout.strip().splitlines()[-1])
    cpu = server_cpu_seconds(base_url) - cpu_before
    measured["cpu_ms_per_request"] = (
        1000 * cpu / measured["completed"] if measured["completed"] else None
    )
    if measured["errors"]:
        print(f"  !! unexpected responses on {method} {path}: {measured['errors']}")
    return measured


# --- servers and data ---------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


#: base URL -> pid of the server process behind it.
SERVER_PIDS: dict[str, int] = {}


def server_cpu_seconds(base_url: str) -> float:
    """User + system CPU time used so far by the server at `base_url` (Linux /proc).

    CPU per request hardly changes with other load on the machine, unlike req/s, so it is
    printed next to the throughput as a steadier view of the same comparison.
    """
    try:
        fields = Path(f"/proc/{SERVER_PIDS[base_url]}/stat").read_text().rsplit(")", 1)[1].split()
    except (KeyError, OSError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _started(process: subprocess.Popen[bytes], base_url: str) -> bool:
    """Wait until the server at `base_url` answers /health (True) or its process ends (False);
    RuntimeError past `START_SECONDS`."""
    deadline = time.monotonic() + START_SECONDS
    while process.poll() is None:
        try:
            if httpx.get(f"{base_url}/health", timeout=1).status_code == 200:
                return True
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"no answer from {base_url}/health in {START_SECONDS:.0f} s")
        time.sleep(0.1)
    return False


@contextmanager
def running(
    command_for: Callable[[int], list[str]], env: dict[str, str], log: Path
) -> Iterator[str]:
    """The server of `command_for(port)` on a free port, its output in `log` (read it when a
    measurement has errors). A server that exits before answering is started again on another
    port when its port was taken meanwhile; otherwise the error quotes the end of its log."""
    log.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, START_ATTEMPTS + 1):
        port = free_port()
        base_url = f"http://127.0.0.1:{port}"
        with log.open("wb") as log_file:
            process = subprocess.Popen(
                command_for(port), stdout=log_file, stderr=subprocess.STDOUT, env=env, cwd=ROOT
            )
            try:
                if _started(process, base_url):
                    SERVER_PIDS[base_url] = process.pid
                    yield base_url
                    return
            finally:
                SERVER_PIDS.pop(base_url, None)
                process.terminate()
                process.wait(timeout=60)
        said = log.read_text(errors="replace")
        if "address already in use" not in said.lower() or attempt == START_ATTEMPTS:
            tail = "\n".join(said.splitlines()[-20:])
            raise RuntimeError(
                f"server did not start (exit {process.returncode}): {command_for(port)}\n{tail}"
            )


@contextmanager
def postgres_schema() -> Iterator[str | None]:
    """A throwaway schema on the benchmark PostgreSQL, as a URL; None when unreachable."""
    try:
        import psycopg

        connection = psycopg.connect(POSTGRES_URL, connect_timeout=3, autocommit=True)
    except Exception as error:
        print(f"PostgreSQL at {POSTGRES_URL} unreachable ({error}): SQLite only")
        yield None
        return
    schema = f"bench_{secrets.token_hex(4)}"
    connection.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
    finally:
        connection.execute(f'DROP SCHEMA "{schema}" CASCADE')
        connection.close()


def bulk_insert_clones(database_url: str, inspection_id: str, rows: int) -> None:
    """`rows` copies of a real inspection row, older than it: through `COPY` on PostgreSQL (a
    million rows in about a minute), multi-row INSERTs of 5,000 on SQLite; then, on PostgreSQL,
    `VACUUM ANALYZE` of the table (see the module's docstring). The maintained counts
    (`server.inspections.counts`) follow through their triggers, as for any write."""
    from sqlalchemy import insert, select

    from server.db import Database
    from server.inspections.tables import InspectionRecord

    table = InspectionRecord.__table__  # type: ignore[attr-defined]
    database = Database(database_url)
    with database.engine.begin() as connection:
        template = dict(
            connection.execute(select(table).where(table.c.id == inspection_id)).mappings().one()
        )
    base_time = template["created_at"]
    if database.dialect == "postgresql":
        _copy_clones(database, table, template, rows)
    else:
        batch: list[dict[str, Any]] = []
        with database.engine.begin() as connection:
            for index in range(rows):
                new_id = secrets.token_hex(12)
                state = {**template["state"], "_id": new_id}
                created = base_time - timedelta(seconds=rows - index)
                batch.append(
                    {**template, "id": new_id, "created_at": created, "updated_at": created,
                     "state": state}
                )  # fmt: skip
                if len(batch) == 5000:
                    connection.execute(insert(table), batch)
                    batch = []
            if batch:
                connection.execute(insert(table), batch)
    if database.dialect == "postgresql":
        # What autovacuum does after a bulk load: set the visibility map, refresh statistics.
        autocommit = database.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        with autocommit as connection:
            connection.exec_driver_sql(f"VACUUM ANALYZE {table.name}")
            connection.exec_driver_sql("VACUUM ANALYZE inspection_counts")
    database.dispose()


def _copy_clones(database: Any, table: Any, template: dict[str, Any], rows: int) -> None:
    """The clones through one `COPY ... FROM STDIN` (psycopg 3), JSON columns as text."""
    columns = [column.name for column in table.columns]
    state_text = json.dumps(template["state"])
    document_text = None if template["document"] is None else json.dumps(template["document"])
    delivery = template.get("delivery")
    delivery_text = None if delivery is None else json.dumps(delivery)
    old_id = template["id"]
    base_time = template["created_at"]
    raw = database.engine.raw_connection()
    try:
        cursor = raw.cursor()
        with cursor.copy(f"COPY {table.name} ({', '.join(columns)}) FROM STDIN") as copy:
            for index in range(rows):
                new_id = secrets.token_hex(12)
                created = base_time - timedelta(seconds=rows - index)
                values = {
                    **template,
                    "id": new_id,
                    "created_at": created,
                    "updated_at": created,
                    "state": state_text.replace(old_id, new_id, 1),
                    "document": document_text,
                    "delivery": delivery_text,
                }
                copy.write_row([values[name] for name in columns])
        raw.commit()
    finally:
        raw.close()


def bench_database(label: str, database_url: str, data_dir: Path) -> dict[str, Any]:
    from server import migrate
    from server.auth import create_company
    from server.db import Database

    database = Database(database_url)
    migrate.upgrade(database)  # the schema with its triggers (the maintained counts)
    keys = create_company(database, "Bench Company", ["bench-user"])
    database.dispose()
    headers = {"x-api-key": keys["liveKey"]}
    env = {
        **os.environ,
        "INSPECTLANG_WORKER": "0",
        # The ceiling's process and the bulk load use the SQLite file while serve runs.
        "INSPECTLANG_SQLITE_EXCLUSIVE": "0",
        "INSPECTLANG_SECRET": "bench-" + "x" * 40,
        # The load comes from one key: the per-key rate limit would measure itself.
        "INSPECTLANG_RATE_LIMIT_REQUESTS": "0",
    }
    results: dict[str, Any] = {}

    def serve(port: int) -> list[str]:
        return [INSPECTLANG, "serve", "--no-worker", "--port", str(port), "--data-dir",
                str(data_dir), "--database-url", database_url]  # fmt: skip

    def bare(port: int) -> list[str]:
        return [sys.executable, str(ROOT / "benchmarks" / "bare_app.py"), "--port", str(port),
                "--database-url", database_url]  # fmt: skip

    with (
        running(serve, env, data_dir / "serve.log") as api,
        running(bare, env, data_dir / "bare.log") as ceiling,
    ):
        first = httpx.post(f"{api}/v1/inspection/car", json=CREATE_BODY, headers=headers)
        first.raise_for_status()
        inspection_id = first.json()["inspectionId"]
        row_id = httpx.post(f"{ceiling}/rows").json()["id"]
        started = time.perf_counter()
        bulk_insert_clones(database_url, inspection_id, ROWS)
        print(f"[{label}] inserted {ROWS} inspections in {time.perf_counter() - started:.1f}s")
        listing = "/v1/inspection?limit=10&status=created&page="
        scenarios: dict[str, tuple[str, str, str, int, dict[str, Any]]] = {
            "list_page_1": (api, "GET", listing + "1", 200, {"headers": headers}),
            "list_page_5000": (api, "GET", listing + "5000", 200, {"headers": headers}),
            "get": (api, "GET", f"/v1/inspection/{inspection_id}", 200, {"headers": headers}),
            "bare_read": (ceiling, "GET", f"/rows/{row_id}", 200, {}),
            "create": (
                api,
                "POST",
                "/v1/inspection/car",
                201,
                {"headers": headers, "body": CREATE_BODY},
            ),
            "bare_insert": (ceiling, "POST", "/rows", 201, {}),
            "create_undelivered": (
                api,
                "POST",
                "/v1/inspection/car",
                201,
                {"headers": headers, "body": CREATE_UNDELIVERED},
            ),
        }
        # Each pair (real, ceiling) is measured back to back, ROUNDS times, keeping the best
        # round of each: other load on the machine then hurts both sides alike, or neither.
        for _ in range(ROUNDS):
            for name, (base_url, method, path, expect, extra) in scenarios.items():
                measured = drive(base_url, method, path, expect, **extra)
                if name not in results or measured["rps"] > results[name]["rps"]:
                    results[name] = measured

    for name, measured in results.items():
        if not measured["requests"]:
            print(f"[{label}] {name:<15} no successful request: {measured['errors']}")
            continue
        cpu = measured["cpu_ms_per_request"]
        print(
            f"[{label}] {name:<15} {measured['rps']:8.1f} req/s   p50 {measured['p50_ms']:7.2f} ms"
            f"   p99 {measured['p99_ms']:7.2f} ms   server CPU "
            + (f"{cpu:6.2f} ms/request" if cpu is not None else "n/a")
        )
    ratios = {
        "create_vs_insert_ceiling": _ratio(results["create"]["rps"], results["bare_insert"]["rps"]),
        "get_vs_read_ceiling": _ratio(results["get"]["rps"], results["bare_read"]["rps"]),
        "deep_page_vs_first_page": _ratio(
            results["list_page_5000"]["p50_ms"], results["list_page_1"]["p50_ms"]
        ),
        "create_email_vs_undelivered": _ratio(
            results["create"]["rps"], results["create_undelivered"]["rps"]
        ),
        "list_page_vs_get": _ratio(results["list_page_1"]["p50_ms"], results["get"]["p50_ms"]),
    }
    print(f"[{label}] ratios: " + ", ".join(f"{k} {v:.2f}" for k, v in ratios.items()))
    cpu_ratios = {
        "create_vs_insert": _ratio(
            results["bare_insert"]["cpu_ms_per_request"], results["create"]["cpu_ms_per_request"]
        ),
        "get_vs_read": _ratio(
            results["bare_read"]["cpu_ms_per_request"], results["get"]["cpu_ms_per_request"]
        ),
    }
    print(
        f"[{label}] same ratios from server CPU per request (ceiling CPU / API CPU): "
        + ", ".join(f"{k} {v:.2f}" for k, v in cpu_ratios.items())
    )
    return ratios


def _ratio(numerator: float | None, denominator: float | None) -> float:
    """numerator / denominator; NaN when either side has no measurement."""
    if not numerator or not denominator:
        return float("nan")
    return numerator / denominator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--drive", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        print(json.dumps(asyncio.run(_drive(json.loads(args.drive)))))
        return
    sys.path.insert(0, str(ROOT))
    print(
        f"concurrency {CONCURRENCY}, best of {ROUNDS} rounds of {DURATION:.1f} s, "
        f"{ROWS} inspections"
    )
    all_ratios: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-api-") as temporary:
        sqlite_dir = Path(temporary) / "sqlite"
        sqlite_url = f"sqlite:///{sqlite_dir / 'bench.sqlite3'}"
        all_ratios["sqlite"] = bench_database("sqlite", sqlite_url, sqlite_dir)
        with postgres_schema() as postgres_url:
            if postgres_url is not None:
                postgres_dir = Path(temporary) / "postgres"
                all_ratios["postgresql"] = bench_database("postgresql", postgres_url, postgres_dir)
    # The worst database decides; a ratio that could not be measured is null.
    worst: dict[str, float | int | None] = {}
    worst["rows"] = ROWS
    for key, pick in (
        ("create_vs_insert_ceiling", min),
        ("get_vs_read_ceiling", min),
        ("deep_page_vs_first_page", max),
        ("create_email_vs_undelivered", min),
        ("list_page_vs_get", max),
    ):
        values = [r[key] for r in all_ratios.values() if not math.isnan(r[key])]
        worst[key] = round(pick(values), 3) if values else None
    print(json.dumps(worst))


if __name__ == "__main__":
    main()
