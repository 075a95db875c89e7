"""`inspectlang serve` renders a report with its in-process worker, then stops cleanly on SIGTERM
(borb 3.0.9 would otherwise replace the SIGTERM handler with one that crashes)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from server.blobs import LocalBlobStore
from server.db import Database
from server.settings import Settings

from .inspections import insert_inspection

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_serve_renders_a_report_and_exits_cleanly_on_sigterm(
    db: Database,
    blobs: LocalBlobStore,
    settings: Settings,
    company: dict[str, Any],
    tmp_path: Path,
) -> None:
    inspection_id = insert_inspection(db, blobs, company["companyId"])["inspectionId"]
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": settings.database_url,
        "INSPECTLANG_DATA_DIR": str(settings.data_dir),
        "INSPECTLANG_SECRET": settings.secret,
        "INSPECTLANG_PUBLIC_URL": f"http://127.0.0.1:{port}",
        "INSPECTLANG_WORKER": "1",
        # The test's own process reads the SQLite file while serve runs.
        "INSPECTLANG_SQLITE_EXCLUSIVE": "0",
    }
    server = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("inspectlang")),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    headers = {"x-api-key": company["testKey"]}
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None, "the server died at startup"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        created = httpx.post(
            f"{base}/v1/inspection/{inspection_id}/report/request",
            json={},
            headers=headers,
            timeout=30,
        )
        assert created.status_code == 201, created.text
        report_path = f"{base}/v1/inspection/{inspection_id}/report/request/{created.json()['_id']}"
        deadline = time.monotonic() + 180
        while (report := httpx.get(report_path, headers=headers, timeout=30).json())[
            "status"
        ] != "completed":
            assert time.monotonic() < deadline, f"report not rendered: {report}"
            time.sleep(0.2)
        pdf = httpx.get(report["result"]["url"], timeout=30)
        assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            _, stderr = server.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            _, stderr = server.communicate(timeout=30)
            raise AssertionError(f"the server ignored SIGTERM:\n{stderr}") from None
    assert server.returncode == 0, stderr
    assert "Traceback" not in stderr, stderr
