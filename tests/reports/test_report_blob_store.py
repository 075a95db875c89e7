"""The report job stores its PDF in the blob store the app (and its worker) was configured with.

Regression: the job built a `LocalBlobStore(settings.data_dir)` of its own, so an app given
another store rendered the PDF into the data directory and then answered 404
`report_not_found` for its own signed link.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from server.app import create_app
from server.blobs import LocalBlobStore
from server.db import Database
from server.settings import Settings

from .inspections import insert_inspection


def test_the_embedded_worker_renders_into_the_apps_store(
    serve_app: Any,
    settings: Settings,
    db: Database,
    company: dict[str, Any],
    tmp_path: Path,
) -> None:
    store = LocalBlobStore(tmp_path / "elsewhere")
    inspection_id = insert_inspection(db, store, company["companyId"])["inspectionId"]
    app = create_app(settings.model_copy(update={"worker": True}), db=db, blobs=store)
    headers = {"x-api-key": company["testKey"]}
    with serve_app(app) as base_url, httpx.Client(base_url=base_url, timeout=30) as client:
        created = client.post(
            f"/v1/inspection/{inspection_id}/report/request", json={}, headers=headers
        )
        assert created.status_code == 201, created.text
        path = f"/v1/inspection/{inspection_id}/report/request/{created.json()['_id']}"
        deadline = time.monotonic() + 120
        report = client.get(path, headers=headers).json()
        while report["status"] != "completed" and time.monotonic() < deadline:
            assert report["status"] in ("pending", "processing"), report
            time.sleep(0.05)
            report = client.get(path, headers=headers).json()
        assert report["status"] == "completed", report
        link = urlsplit(report["result"]["url"])
        pdf = client.get(f"{link.path}?{link.query}")
        # before: 404 report_not_found (the PDF went to the data directory's store)
        assert pdf.status_code == 200, pdf.text
        assert pdf.content.startswith(b"%PDF")
    key = f"reports/{company['companyId']}/{report['_id']}.pdf"
    assert store.exists(key)
    assert not LocalBlobStore(settings.data_dir).exists(key)
