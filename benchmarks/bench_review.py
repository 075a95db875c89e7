"""The review queue page with many inspections in review, against the dashboard's inspections
list page, in the same run (issue 22: the queue within 2x the list).

For each database (SQLite in a temporary directory; PostgreSQL too when `BENCH_POSTGRES_URL`,
default the local server, answers): migrate, make a company with an owner, serve this tree
(`python -m inspectlang serve`), create one real inspection from a template that requires
`recaptured` (no machine here runs it), upload its photos and finish it: it is in `review`. Then
`BENCH_ROWS` (default 10,000) clones of that row are loaded (`bench_api.bulk_insert_clones`)
and each gets its review-queue row, as the finish would have written it. Signed in as the
owner, interleaved rounds time:

- `list`: `/dashboard/inspections` (the first page and its total);
- `queue`: `/dashboard/review` (the first page, oldest first, with the counts and the
  navigation's count).

The last line is one JSON object: per database the rows, each page's p50 in ms and
`queue_vs_list` (queue p50 over list p50; the target is <= 2). `BENCH_ROUNDS` (default 30)
requests per page.
"""

from __future__ import annotations

import io
import json
import os
import re
import statistics
import sys
import tempfile
import time
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_api import bulk_insert_clones, free_port, postgres_schema, running  # noqa: E402

ROWS = int(os.environ.get("BENCH_ROWS", "10000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "30"))
PASSWORD = "bench review password"
TEMPLATE = """
template "Bench review"
    type: car

settings
    photo age limit: 24 hours
    minimum photo size: 64 x 48

image front
    label: "Front"
    validate recaptured
    validate complete

verdict
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
"""


def photo() -> bytes:
    image = Image.new("RGB", (800, 600), (150, 40, 40))
    ImageDraw.Draw(image).rectangle((200, 200, 600, 450), fill=(20, 20, 20))
    buffer = io.BytesIO()
    image.save(buffer, "JPEG")
    return buffer.getvalue()


def in_review(base_url: str, key: str) -> str:
    """One real inspection in `review`, made through the API."""
    headers = {"x-api-key": key}
    with httpx.Client(base_url=base_url, headers=headers, timeout=60) as api:
        template = api.post("/v1/inspection/template", json={"source": TEMPLATE})
        template.raise_for_status()
        created = api.post(
            "/v1/inspection/car",
            json={
                "templateId": template.json()["_id"],
                "locale": "en_US",
                "car": {"plate": "AB123CD"},
                "consumer": {"firstName": "Ana", "lastName": "Paz"},
                "delivery": {"channel": "email", "destination": "ana@example.com"},
            },
        )
        assert created.status_code == 201, created.text
        body = created.json()
        uploaded = api.post(
            f"/v1/inspection/image/{body['productId']}",
            files={"image": ("f.jpg", photo(), "image/jpeg"), "data": (None, '{"side": "front"}')},
        )
        uploaded.raise_for_status()
        finished = api.post(f"/v1/inspection/finish/{body['inspectionId']}")
        finished.raise_for_status()
        assert finished.json()["status"] == "review", finished.json()["status"]
        return str(body["inspectionId"])


def fill_queue(database_url: str, original: str) -> int:
    """A review-queue row for every cloned inspection in review, like the original's."""
    from sqlalchemy import insert, select

    from server.db import Database
    from server.inspections.review_tables import ReviewQueueRecord
    from server.inspections.tables import InspectionRecord

    queue = ReviewQueueRecord.__table__  # type: ignore[attr-defined]
    inspections = InspectionRecord.__table__  # type: ignore[attr-defined]
    database = Database(database_url)
    with database.engine.begin() as connection:
        model = dict(
            connection.execute(select(queue).where(queue.c.inspection_id == original))
            .mappings()
            .one()
        )
        rows = connection.execute(
            select(inspections.c.id, inspections.c.created_at).where(
                inspections.c.status == "review", inspections.c.id != original
            )
        ).all()
        batch = [{**model, "inspection_id": row[0], "since": row[1]} for row in rows]
        for start in range(0, len(batch), 5000):
            connection.execute(insert(queue), batch[start : start + 5000])
    if database.dialect == "postgresql":
        autocommit = database.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        with autocommit as connection:
            connection.exec_driver_sql("VACUUM ANALYZE review_queue")
    database.dispose()
    return len(batch) + 1


def sign_in(base_url: str, email: str) -> httpx.Client:
    client = httpx.Client(base_url=base_url, timeout=60)
    page = client.get("/dashboard/sign-in").text
    token = re.search(r'name="csrf-token" content="([^"]+)"', page)
    assert token is not None
    answer = client.post(
        "/dashboard/sign-in",
        data={"email": email, "password": PASSWORD},
        headers={"x-csrftoken": token.group(1)},
    )
    assert answer.status_code == 303, answer.text[:300]
    return client


def p50(client: httpx.Client, path: str, samples: list[float], expect: str) -> None:
    started = time.perf_counter()
    response = client.get(path)
    samples.append((time.perf_counter() - started) * 1000)
    assert response.status_code == 200 and expect in response.text, (path, response.status_code)


def bench(label: str, url: str | None, folder: Path) -> dict[str, Any]:
    from server import migrate
    from server.auth import create_company
    from server.dashboard import accounts
    from server.db import Database

    database_url = url or f"sqlite:///{folder / 'bench.db'}"
    database = Database(database_url)
    migrate.upgrade(database)
    keys = create_company(database, "Bench Company", ["bench-user"])
    email = f"owner-{label}@bench.example.com"
    accounts.create_account(database, keys["companyId"], email, "owner", PASSWORD)
    database.dispose()
    port = free_port()
    # The bulk load writes the SQLite file while serve runs: serve may not hold it alone.
    env = {**os.environ, "INSPECTLANG_WORKER": "0", "INSPECTLANG_SECRET": "b" * 48,
           "INSPECTLANG_RATE_LIMIT_REQUESTS": "0", "INSPECTLANG_SQLITE_EXCLUSIVE": "0"}  # fmt: skip
    command = [sys.executable, "-m", "server", "serve", "--no-worker", "--port", str(port),
               "--data-dir", str(folder), "--database-url", database_url]  # fmt: skip
    with running(command, port, env, folder / f"serve-{label}.log") as base_url:
        original = in_review(base_url, keys["testKey"])
        started = time.perf_counter()
        bulk_insert_clones(database_url, original, ROWS - 1)
        waiting = fill_queue(database_url, original)
        print(f"{label}: {waiting} inspections in review loaded in "
              f"{time.perf_counter() - started:.1f}s")  # fmt: skip
        client = sign_in(base_url, email)
        listed: list[float] = []
        queued: list[float] = []
        for _ in range(3):  # warm both pages (templates, caches, statements)
            p50(client, "/dashboard/inspections", [], original)
            p50(client, "/dashboard/review", [], f"Review ({waiting})")
        for _ in range(ROUNDS):
            p50(client, "/dashboard/inspections", listed, original)
            p50(client, "/dashboard/review", queued, "Bench review")
        client.close()
    list_ms, queue_ms = statistics.median(listed), statistics.median(queued)
    print(f"{label}: list p50 {list_ms:.1f} ms, queue p50 {queue_ms:.1f} ms, "
          f"queue/list {queue_ms / list_ms:.2f}")  # fmt: skip
    return {
        "rows_in_review": waiting,
        "list_p50_ms": round(list_ms, 2),
        "queue_p50_ms": round(queue_ms, 2),
        "queue_vs_list": round(queue_ms / list_ms, 3),
    }


def main() -> None:
    results: dict[str, Any] = {"rounds": ROUNDS, "at": datetime.now(UTC).isoformat()}
    with tempfile.TemporaryDirectory() as folder:
        results["sqlite"] = bench("sqlite", None, Path(folder))
    postgres = postgres_schema() if os.environ.get("BENCH_SKIP_POSTGRES") != "1" else None
    with postgres if postgres is not None else nullcontext(None) as url:
        if url is not None:
            with tempfile.TemporaryDirectory() as folder:
                results["postgresql"] = bench("postgresql", url, Path(folder))
    results["worst_queue_vs_list"] = max(
        value["queue_vs_list"] for value in results.values() if isinstance(value, dict)
    )
    print(json.dumps(results))


if __name__ == "__main__":
    main()
