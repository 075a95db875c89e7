"""Issue 39 §3: peak memory a photo costs the server, for the worst shapes the limits accept.

Starts `inspectlang serve --demo` (with its in-process worker, so the report is rendered in the
same process) and, for each case, one at a time: creates and starts an inspection, resets the
process's peak resident memory (`/proc/PID/clear_refs`), uploads the photo (the upload checks),
asks for its dashboard thumbnail (signed in as the demo owner) and for a PDF report (waits until
the worker rendered it), and reads the peak (VmHWM). Growth = peak - resident memory before.

The cases: the issue's 142 KB PNG of 200000x250 (refused now: its growth is what refusing
costs), a very wide and a very tall PNG at the aspect limit (20:1, 50 Mpx), a 50 Mpx RGBA PNG,
a 50 Mpx progressive JPEG, a 50 Mpx CMYK JPEG and a 16 Mpx 16-bit PNG. The baseline of the same
run: an ordinary 12 Mpx phone JPEG. Target: growth <= 150 MB for every accepted case.

The last line is one JSON object: `{"cases": {name: {"status": 201, "growth_mb": ...}, ...},
"worst_accepted_growth_mb": ..., "baseline_growth_mb": ..., "target_mb": 150}`.
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
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
TARGET_MB = 150
CREATE = {
    "templateId": "easy",
    "delivery": {"channel": "email", "destination": "a@example.com"},
    "locale": "en_US",
}


def _encoded(picture: Image.Image, fmt: str, **options: Any) -> bytes:
    buffer = io.BytesIO()
    picture.save(buffer, fmt, **options)
    return buffer.getvalue()


def _scene(size: tuple[int, int], mode: str = "RGB") -> Image.Image:
    """A smooth picture (small files, every pixel still decoded)."""
    gradient = Image.linear_gradient("L").resize(size)
    return Image.merge("RGB", (gradient, gradient.transpose(Image.Transpose.FLIP_LEFT_RIGHT),
                               Image.new("L", size, 90))).convert(mode)  # fmt: skip


CASES: dict[str, Callable[[], bytes]] = {
    "baseline_12mp_jpeg": lambda: _encoded(_scene((4000, 3000)), "JPEG", quality=85),
    "strip_200000x250_png": lambda: _encoded(Image.new("RGB", (200000, 250), (9, 9, 99)), "PNG"),
    "wide_31600x1580_png": lambda: _encoded(_scene((31600, 1580)), "PNG"),
    "tall_1580x31600_png": lambda: _encoded(_scene((1580, 31600)), "PNG"),
    "rgba_7071x7071_png": lambda: _encoded(_scene((7071, 7071), "RGBA"), "PNG"),
    "progressive_4000x4000_jpeg": lambda: _encoded(
        _scene((4000, 4000)), "JPEG", quality=80, progressive=True
    ),
    # Refused: a progressive JPEG keeps all its coefficients while it decodes (240 MB).
    "progressive_7071x7071_jpeg": lambda: _encoded(
        _scene((7071, 7071)), "JPEG", quality=80, progressive=True
    ),
    "cmyk_7071x7071_jpeg": lambda: _encoded(_scene((7071, 7071), "CMYK"), "JPEG", quality=80),
    "16bit_4000x4000_png": lambda: _encoded(
        Image.linear_gradient("L").resize((4000, 4000)).convert("I;16"), "PNG"
    ),
}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _status_kb(pid: int, field: str) -> int:
    text = Path(f"/proc/{pid}/status").read_text()
    match = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
    assert match, field
    return int(match.group(1))


def _sign_in(base: str) -> httpx.Client:
    browser = httpx.Client(base_url=base, timeout=120)
    form = browser.get("/dashboard/sign-in").text
    token = re.search(r'name="_csrf_token" value="([^"]+)"', form)
    assert token, "no CSRF token on the sign-in page"
    signed = browser.post(
        "/dashboard/sign-in",
        data={
            "email": "owner@demo.example.com",
            "password": "demo-owner-password",
            "_csrf_token": token[1],
        },
    )
    assert signed.status_code in (200, 303), signed.text
    return browser


def one_case(pid: int, api: httpx.Client, browser: httpx.Client, data: bytes) -> dict[str, Any]:
    created = api.post("/v1/inspection/car", json=CREATE)
    assert created.status_code == 201, created.text
    inspection_id, product_id = created.json()["inspectionId"], created.json()["productId"]
    assert api.post(f"/v1/inspection/{inspection_id}/start").is_success
    time.sleep(0.3)
    before_kb = _status_kb(pid, "VmRSS")
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # VmHWM := VmRSS
    uploaded = api.post(
        f"/v1/inspection/image/{product_id}",
        files={
            "image": ("photo", data, "application/octet-stream"),
            "data": (None, '{"side": "front"}'),
        },
    )
    result: dict[str, Any] = {"bytes": len(data), "status": uploaded.status_code}
    if uploaded.status_code == 201:
        image_id = uploaded.json()["_id"]
        thumb = browser.get(
            f"/dashboard/inspections/{inspection_id}/photos/{image_id}", params={"size": "thumb"}
        )
        result["thumbnail"] = [thumb.status_code, len(thumb.content)]
        finished = api.post(f"/v1/inspection/finish/{inspection_id}")
        result["finished"] = finished.status_code
        requested = api.post(f"/v1/inspection/{inspection_id}/report/request", json={})
        result["report"] = requested.status_code
        if requested.is_success:
            request_id = requested.json().get("reportRequestId") or requested.json().get("_id")
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                state = api.get(f"/v1/inspection/{inspection_id}/report/request/{request_id}")
                status = state.json().get("status")
                if status not in ("pending", "processing", "queued", "running"):
                    result["report"] = status
                    break
                time.sleep(0.3)
    else:
        result["code"] = uploaded.json().get("code")
    time.sleep(1.0)  # the worker's analysis of the photo, if any, runs in this process too
    peak_kb = _status_kb(pid, "VmHWM")
    result["growth_mb"] = round((peak_kb - before_kb) / 1024, 1)
    return result


def main() -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECTLANG_")}
    env.pop("DATABASE_URL", None)
    env["INSPECTLANG_RATE_LIMIT_REQUESTS"] = "0"
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench_memory_") as folder:
        log_path = Path(folder) / "serve.log"
        with log_path.open("w") as log:
            process = subprocess.Popen(
                [
                    *(sys.executable, "-m", "server", "serve", "--demo"),
                    *("--port", str(port), "--data-dir", str(Path(folder) / "data")),
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=ROOT,
            )
        base = f"http://127.0.0.1:{port}"
        try:
            key = None
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and key is None:
                found = re.search(r"test key:\s+(\S+)", log_path.read_text())
                key = found.group(1) if found else None
                time.sleep(0.2)
            assert key, log_path.read_text()
            while time.monotonic() < deadline:
                try:
                    if httpx.get(f"{base}/ready", timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    time.sleep(0.2)
            browser = _sign_in(base)
            with httpx.Client(base_url=base, headers={"x-api-key": key}, timeout=300) as api:
                # Warm up: every module a case imports is loaded before memory is measured.
                one_case(process.pid, api, browser, CASES["baseline_12mp_jpeg"]())
                for name, make in CASES.items():
                    results[name] = one_case(process.pid, api, browser, make())
                    print(name, json.dumps(results[name]), flush=True)
            browser.close()
        finally:
            process.terminate()
            process.wait(timeout=60)
    accepted = [r["growth_mb"] for n, r in results.items() if r["status"] == 201]
    print(
        json.dumps(
            {
                "cases": results,
                "worst_accepted_growth_mb": max(accepted),
                "baseline_growth_mb": results["baseline_12mp_jpeg"]["growth_mb"],
                "target_mb": TARGET_MB,
            }
        )
    )


if __name__ == "__main__":
    main()
