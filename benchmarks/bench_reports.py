"""Benchmark of PDF reports: the report against a bare borb document, and queue throughput.

The report: an inspection with 6 photos (1280x960 JPEG, ~220 KB each) and 30 validation
results. The baseline, measured in the same run: a bare borb document with the same six photos
at full size and one 30-row table. Targets: the report within 1.5x the baseline's time and at
most half its size (thumbnails). Throughput: reports per minute through the real job queue with
two `inspectlang worker` processes, on SQLite and on PostgreSQL (BENCH_POSTGRES_URL, default
the local test database; skipped with a message when unreachable).

The last line printed is one JSON object.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from server.reports.renderer import ReportData, ReportImage, default_renderer  # noqa: E402
from tests.reports.samples import car_report, photo  # noqa: E402

IMAGES = 6
VALIDATIONS = 30
ROUNDS = 7
QUEUE_REPORTS = 12
POSTGRES_URL = os.environ.get("BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")


def report_data() -> ReportData:
    data = car_report(images=IMAGES, validations=VALIDATIONS, with_bytes=False)
    pictures = [
        ReportImage(record=image.record, content=photo(index, size=(1280, 960), quality=75))
        for index, image in enumerate(data.images)
    ]
    return ReportData(
        inspection=data.inspection,
        template=data.template,
        explanation=data.explanation,
        company_name=data.company_name,
        images=pictures,
        generated_at=data.generated_at,
        report_request_id=data.report_request_id,
    )


def bare_borb(images: list[bytes]) -> bytes:
    """The baseline: six full-size photos and a 30-row table, nothing else."""
    from borb.pdf import (
        PDF,
        Document,
        FixedColumnWidthTable,
        Image,
        Page,
        Paragraph,
        SingleColumnLayout,
    )
    from PIL import Image as PILImage

    document = Document()
    page = Page()
    document.append_page(page)
    layout = SingleColumnLayout(page)
    table = FixedColumnWidthTable(number_of_rows=VALIDATIONS, number_of_columns=3)
    for row in range(VALIDATIONS):
        for value in (f"validation {row}", f"{90 - row}", "Yes"):
            table.append_layout_element(Paragraph(value))
    layout.append_layout_element(table)
    for content in images:
        picture = PILImage.open(io.BytesIO(content))
        picture.load()
        layout.append_layout_element(Image(picture, size=(460, 345)))
    buffer = io.BytesIO()
    PDF.write(what=document, where_to=buffer)
    return buffer.getvalue()


def timed_pair(first: Any, second: Any) -> tuple[float, bytes, float, bytes]:
    """Median seconds of two functions, run alternately so machine load affects both alike."""
    first_times: list[float] = []
    second_times: list[float] = []
    first_result = second_result = b""
    for _ in range(ROUNDS):
        started = time.perf_counter()
        first_result = first()
        first_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        second_result = second()
        second_times.append(time.perf_counter() - started)
    return (
        statistics.median(first_times),
        first_result,
        statistics.median(second_times),
        second_result,
    )


def queue_throughput(database_url: str, data_dir: Path) -> float:
    """Reports per minute: QUEUE_REPORTS requests drained by two worker processes."""
    from server.auth import create_company
    from server.blobs import LocalBlobStore
    from server.db import Database
    from server.jobs import enqueue
    from server.reports.tables import ReportRequestRecord
    from tests.reports.inspections import insert_inspection

    db = Database(database_url)
    db.create_all()
    company = create_company(db, f"Bench {secrets.token_hex(3)}", [])
    blobs = LocalBlobStore(data_dir)
    inspection_id = insert_inspection(
        db, blobs, company["companyId"], images=IMAGES, validations=5, image_size=(1280, 960)
    )["inspectionId"]
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "INSPECTLANG_DATA_DIR": str(data_dir),
        "INSPECTLANG_SECRET": "bench-secret",
        # Two workers on one SQLite file: neither may hold it alone.
        "INSPECTLANG_SQLITE_EXCLUSIVE": "0",
        "PYTHONPATH": str(ROOT),
    }
    command = [str(Path(sys.executable).with_name("inspectlang")), "worker"]
    workers = [
        subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(2)
    ]
    try:
        time.sleep(3)  # both workers up and polling
        started = time.perf_counter()
        ids: list[str] = []
        with db.session() as session:
            for _ in range(QUEUE_REPORTS):
                record = ReportRequestRecord(
                    inspection_id=inspection_id, company_id=company["companyId"], testing=True
                )
                session.add(record)
                enqueue(session, "report", {"reportRequestId": record.id})
                ids.append(record.id)
            session.commit()
        while True:
            with db.session() as session:
                done = sum(
                    1
                    for report_id in ids
                    if (row := session.get(ReportRequestRecord, report_id)) is not None
                    and row.status == "completed"
                )
            if done == len(ids):
                break
            if time.perf_counter() - started > 600:
                raise RuntimeError("the workers did not finish in 10 minutes")
            time.sleep(0.05)
        elapsed = time.perf_counter() - started
    finally:
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            worker.wait(60)
        db.dispose()
    return QUEUE_REPORTS / elapsed * 60


def postgres_schema_url() -> tuple[str, str] | None:
    try:
        import psycopg

        schema = f"bench_{secrets.token_hex(4)}"
        with psycopg.connect(POSTGRES_URL, connect_timeout=3, autocommit=True) as connection:
            connection.execute(f'CREATE SCHEMA "{schema}"')
    except Exception as error:
        print(f"PostgreSQL at {POSTGRES_URL} unreachable ({error}): skipping its throughput")
        return None
    separator = "&" if "?" in POSTGRES_URL else "?"
    return f"{POSTGRES_URL}{separator}options=-csearch_path%3D{schema}", schema


def drop_schema(schema: str) -> None:
    import psycopg

    with psycopg.connect(POSTGRES_URL, connect_timeout=3, autocommit=True) as connection:
        connection.execute(f'DROP SCHEMA "{schema}" CASCADE')


def main() -> None:
    data = report_data()
    renderer = default_renderer()
    renderer.render(data)  # warm up imports and fonts
    bare_borb([image.content for image in data.images if image.content])
    photos = [image.content for image in data.images if image.content]
    report_seconds, report_pdf, bare_seconds, bare_pdf = timed_pair(
        lambda: renderer.render(data), lambda: bare_borb(photos)
    )
    photo_kb = statistics.mean(len(i.content or b"") for i in data.images) / 1024
    ratio = report_seconds / bare_seconds
    print(
        f"photos: {IMAGES} x {photo_kb:.0f} KB, {VALIDATIONS} validations, "
        f"median of {ROUNDS} alternating runs"
    )
    print(f"report:    {report_seconds:.3f} s, {len(report_pdf) / 1024:.0f} KB")
    print(f"bare borb: {bare_seconds:.3f} s, {len(bare_pdf) / 1024:.0f} KB")
    print(
        f"time ratio {ratio:.2f} (target <= 1.5), size ratio "
        f"{len(report_pdf) / len(bare_pdf):.2f} (target <= 0.5)"
    )

    with tempfile.TemporaryDirectory() as directory:
        sqlite_rate = queue_throughput(f"sqlite:///{directory}/bench.sqlite3", Path(directory))
    print(f"queue, 2 worker processes, SQLite: {sqlite_rate:.1f} reports/min")
    postgres_rate: float | None = None
    found = postgres_schema_url()
    if found is not None:
        url, schema = found
        try:
            with tempfile.TemporaryDirectory() as directory:
                postgres_rate = queue_throughput(url, Path(directory))
        finally:
            drop_schema(schema)
        print(f"queue, 2 worker processes, PostgreSQL: {postgres_rate:.1f} reports/min")
    print(
        json.dumps(
            {
                "report_vs_bare_borb": round(ratio, 3),
                "report_kb": round(len(report_pdf) / 1024, 1),
                "bare_kb": round(len(bare_pdf) / 1024, 1),
                "size_ratio": round(len(report_pdf) / len(bare_pdf), 3),
                "report_seconds": round(report_seconds, 4),
                "bare_seconds": round(bare_seconds, 4),
                "reports_per_min": round(sqlite_rate, 1),
                "reports_per_min_sqlite": round(sqlite_rate, 1),
                "reports_per_min_postgresql": None
                if postgres_rate is None
                else round(postgres_rate, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
