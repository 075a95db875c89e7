"""Issue 21 §3: a 205 KB one-colour 7060x7060 RGBA PNG cost ~400 MB of RSS on upload (decoded
whole three times: metadata, quality check, blank check); 10 at once took a server from 1.25 to
2.86 GB. The upload now decodes each photo once, bounded (`runtime.imagemeta`).

A real `serve` process (this worktree's code, `python -m inspectlang`) takes 10 such uploads at
once; its peak resident memory (VmHWM, reset after warming up) stays under 300 MB above idle.
Each upload is accepted (201) and judged: the photo is blank, and both checks say so.
"""

from __future__ import annotations

import io
import os
import re
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
UPLOADS = 10
MAX_GROWTH_MB = 300


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _status(pid: int, field: str) -> int:
    """A `/proc/<pid>/status` memory field, in kB."""
    text = Path(f"/proc/{pid}/status").read_text()
    match = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
    assert match, f"no {field} in /proc/{pid}/status"
    return int(match.group(1))


def one_colour_png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGBA", (7060, 7060), (200, 30, 30, 255)).save(buffer, "PNG")
    return buffer.getvalue()


def small_photo() -> bytes:
    buffer = io.BytesIO()
    Image.radial_gradient("L").resize((900, 700)).convert("RGB").save(buffer, "JPEG")
    return buffer.getvalue()


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux /proc")
def test_ten_concurrent_huge_png_uploads_stay_under_300_mb(tmp_path: Path) -> None:
    png = one_colour_png()
    assert 150_000 < len(png) < 260_000  # the 205 KB file
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECTLANG_")}
    env.pop("DATABASE_URL", None)
    env["INSPECTLANG_VISION"] = "0"
    env["INSPECTLANG_RATE_LIMIT_REQUESTS"] = "0"
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "inspectlang", "serve", "--demo", "--no-worker"),
            *("--port", str(port), "--data-dir", str(tmp_path)),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        test_key = None
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and test_key is None:
            match = re.search(r"test key:\s+(\S+)", process.stdout.readline())
            test_key = match.group(1) if match else None
        assert test_key, "serve --demo printed no test key"
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, headers={"x-api-key": test_key}, timeout=120) as client:
            for _ in range(200):
                try:
                    client.get("/health")
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            products = []
            for _ in range(UPLOADS + 1):
                created = client.post(
                    "/v1/inspection/car",
                    json={
                        "templateId": "easy",
                        "delivery": {"channel": "email", "destination": "a@example.com"},
                        "locale": "en_US",
                        "car": {"plate": "AB123CD"},
                    },
                )
                assert created.status_code == 201, created.text
                products.append(created.json()["productId"])

            def upload(product_id: str, data: bytes, name: str) -> httpx.Response:
                return client.post(
                    f"/v1/inspection/image/{product_id}",
                    files={"image": (name, data, "image/png"), "data": (None, '{"side": "front"}')},
                )

            # Warm up: every module an upload imports is loaded before idle is measured.
            warm = upload(products[0], small_photo(), "warm.jpg")
            assert warm.status_code == 201, warm.text
            time.sleep(0.5)
            idle_kb = _status(process.pid, "VmRSS")
            Path(f"/proc/{process.pid}/clear_refs").write_text("5")  # reset VmHWM to VmRSS
            with ThreadPoolExecutor(UPLOADS) as pool:
                answers = list(
                    pool.map(lambda p: upload(p, png, "blank.png"), products[1:], timeout=300)
                )
            peak_kb = _status(process.pid, "VmHWM")
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
    for answer in answers:
        assert answer.status_code == 201, answer.text
        body = answer.json()
        assert [problem["code"] for problem in body["quality"]["problems"]] == ["blank"]
        complete = [v for v in body["validations"] if v["validation"] == "complete"]
        assert complete and complete[0]["valid"] is False
        assert complete[0]["result"] == "blank photo"
    growth_mb = (peak_kb - idle_kb) / 1024
    print(f"idle {idle_kb / 1024:.0f} MB, peak {peak_kb / 1024:.0f} MB, growth {growth_mb:.0f} MB")
    assert growth_mb < MAX_GROWTH_MB, f"peak {growth_mb:.0f} MB above idle"
