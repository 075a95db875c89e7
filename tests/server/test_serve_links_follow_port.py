"""Regression: `inspectlang serve --port P` gave magic links and image URLs under port 8000.

Without INSPECTLANG_PUBLIC_URL, the links a server hands out must point where it listens.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

INSPECTLANG = str(Path(sys.executable).with_name("inspectlang"))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_links_use_the_port_the_server_listens_on(tmp_path: Path) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("INSPECTLANG_")}
    env.pop("DATABASE_URL", None)
    process = subprocess.Popen(
        [
            *(INSPECTLANG, "serve", "--demo", "--no-worker"),
            *("--port", str(port), "--data-dir", str(tmp_path)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        test_key = None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and test_key is None:
            line = process.stdout.readline()
            match = re.search(r"test key:\s+(\S+)", line)
            if match:
                test_key = match.group(1)
        assert test_key, "serve --demo printed no test key"
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, headers={"x-api-key": test_key}, timeout=10) as client:
            for _ in range(100):
                try:
                    client.get("/health")
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            response = client.post(
                "/v1/inspection/car",
                json={
                    "templateId": "easy",
                    "delivery": {"channel": "email", "destination": "a@example.com"},
                    "locale": "en_US",
                },
            )
        assert response.status_code == 201, response.text
        assert response.json()["magicLink"].startswith(f"{base}/i/")
    finally:
        process.terminate()
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()
