"""The `inspectlang admin`, `serve` and `worker` commands, run as real subprocesses.

They use this module's database (a SQLite file, or PostgreSQL under `make test-postgres`), so the
keys they print are checked against the probe server over HTTP.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.auth import company_exists, consumed_inspections

INSPECTLANG = str(Path(sys.executable).parent / "inspectlang")


def run_cli(*args: str, database_url: str, data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [INSPECTLANG, *args, "--database-url", database_url, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "INSPECTLANG_WORKER": "0"},
    )


def one_json_object(output: str) -> dict[str, Any]:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    data: dict[str, Any] = json.loads(lines[0])
    return data


def whoami(probe: Any, key: str) -> httpx.Response:
    with probe.client() as http:
        return http.get("/test/whoami", headers={"x-api-key": key})


def test_create_company_prints_keys_that_work(
    database_url: str, tmp_path: Path, probe: Any, db: Any
) -> None:
    result = run_cli(
        "admin", "create-company", "Acme Motors", "--member", "ana", "--member", "bo",
        database_url=database_url, data_dir=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    created = one_json_object(result.stdout)
    assert set(created) == {"companyId", "testKey", "liveKey"}
    assert created["testKey"].startswith("sk_test_")
    assert created["liveKey"].startswith("sk_live_")
    assert company_exists(db, created["companyId"])
    assert consumed_inspections(db, created["companyId"]) == 0
    live = whoami(probe, created["liveKey"])
    assert live.status_code == 200
    assert live.json()["companyId"] == created["companyId"]
    assert whoami(probe, created["testKey"]).json()["mode"] == "test"


def test_revoke_key_blocks_the_old_key_at_once(
    database_url: str, tmp_path: Path, probe: Any
) -> None:
    created = one_json_object(
        run_cli("admin", "create-company", "Revokers", database_url=database_url,
                data_dir=tmp_path).stdout
    )  # fmt: skip
    result = run_cli(
        "admin", "revoke-key", created["companyId"], "--mode", "test",
        database_url=database_url, data_dir=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    revoked = one_json_object(result.stdout)
    assert revoked["companyId"] == created["companyId"]
    assert revoked["mode"] == "test"
    assert revoked["key"].startswith("sk_test_") and revoked["key"] != created["testKey"]
    assert whoami(probe, created["testKey"]).status_code == 401
    assert whoami(probe, revoked["key"]).status_code == 200
    assert whoami(probe, created["liveKey"]).status_code == 200


def test_add_member_prints_it_and_refuses_duplicates(database_url: str, tmp_path: Path) -> None:
    created = one_json_object(
        run_cli("admin", "create-company", "Members", database_url=database_url,
                data_dir=tmp_path).stdout
    )  # fmt: skip
    args = ("admin", "add-member", created["companyId"], "inspector-1", "--name", "Ines",
            "--email", "ines@example.com")  # fmt: skip
    result = run_cli(*args, database_url=database_url, data_dir=tmp_path)
    assert result.returncode == 0, result.stderr
    member = one_json_object(result.stdout)
    assert member["internalId"] == "inspector-1"
    assert (member["name"], member["email"]) == ("Ines", "ines@example.com")
    again = run_cli(*args, database_url=database_url, data_dir=tmp_path)
    assert again.returncode == 1
    assert again.stdout == ""
    assert one_json_object(again.stderr)["code"] == "duplicate_member"


@pytest.mark.parametrize(
    "args",
    [
        ("admin", "revoke-key", "0" * 24, "--mode", "live"),
        ("admin", "add-member", "0" * 24, "someone"),
    ],
)
def test_unknown_company_is_an_error_with_a_code(
    database_url: str, tmp_path: Path, args: tuple[str, ...]
) -> None:
    result = run_cli(*args, database_url=database_url, data_dir=tmp_path)
    assert result.returncode == 1
    assert one_json_object(result.stderr)["code"] == "company_not_found"


def test_rotate_webhook_secret_prints_a_new_secret_each_time(
    database_url: str, tmp_path: Path, db: Any
) -> None:
    from server.tables import Company

    created = one_json_object(
        run_cli("admin", "create-company", "Hooks", database_url=database_url,
                data_dir=tmp_path).stdout
    )  # fmt: skip
    args = ("admin", "rotate-webhook-secret", created["companyId"])
    first = one_json_object(run_cli(*args, database_url=database_url, data_dir=tmp_path).stdout)
    second = one_json_object(run_cli(*args, database_url=database_url, data_dir=tmp_path).stdout)
    assert first["companyId"] == second["companyId"] == created["companyId"]
    assert first["webhookSecret"] and second["webhookSecret"]
    assert first["webhookSecret"] != second["webhookSecret"]
    with db.session() as session:
        company = session.get(Company, created["companyId"])
        assert company is not None and company.webhook_secret == second["webhookSecret"]
    missing = run_cli("admin", "rotate-webhook-secret", "0" * 24, database_url=database_url,
                      data_dir=tmp_path)  # fmt: skip
    assert missing.returncode == 1
    assert one_json_object(missing.stderr)["code"] == "company_not_found"


def test_bad_mode_is_refused_by_the_parser(database_url: str, tmp_path: Path) -> None:
    result = run_cli(
        "admin", "revoke-key", "x", "--mode", "prod", database_url=database_url, data_dir=tmp_path
    )
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


def test_admin_creates_tables_in_an_empty_database(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.sqlite3'}"
    result = run_cli("admin", "create-company", "First", database_url=url, data_dir=tmp_path)
    assert result.returncode == 0, result.stderr
    assert one_json_object(result.stdout)["companyId"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_demo(database_url: str, data_dir: Path, port: int) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [INSPECTLANG, "serve", "--demo", "--no-worker", "--port", str(port), "--data-dir",
         str(data_dir), "--database-url", database_url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # The module's database is open in this process too: shared, not held alone.
        env={**os.environ, "INSPECTLANG_SQLITE_EXCLUSIVE": "0"},
    )  # fmt: skip
    assert process.stdout is not None
    banner = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        banner.append(line)
        if "API docs" in line:
            break
    base_url = f"http://127.0.0.1:{port}"
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base_url}/health", timeout=1).status_code == 200:
                return process, "".join(banner)
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError(f"serve did not start: {''.join(banner)} {process.stderr}")


def stop(process: subprocess.Popen[str]) -> int:
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)  # also closes the pipes
    return process.returncode


def banner_keys(banner: str) -> dict[str, str]:
    fields = {}
    for line in banner.splitlines():
        label, _, value = line.strip().partition(": ")
        fields[label.strip()] = value.strip()
    return {
        "companyId": fields["companyId"],
        "testKey": fields["test key"],
        "liveKey": fields["live key"],
    }


def test_serve_demo_prints_keys_reuses_them_and_stops_on_sigterm(
    database_url: str, tmp_path: Path
) -> None:
    port = free_port()
    process, banner = start_demo(database_url, tmp_path, port)
    try:
        keys = banner_keys(banner)
        assert keys["testKey"].startswith("sk_test_")
        assert "Demo Company" in banner
        assert "sign in as owner@demo.example.com / demo-owner-password" in banner
        response = httpx.get(f"http://127.0.0.1:{port}/schema/openapi.json", timeout=5)
        assert response.json()["openapi"].startswith("3.1")
    finally:
        assert stop(process) == 0
    stored = json.loads((tmp_path / "demo-keys.json").read_text())
    assert stored == keys
    # A second run reuses the same company and keys.
    process, banner = start_demo(database_url, tmp_path, port)
    try:
        assert banner_keys(banner) == keys
    finally:
        assert stop(process) == 0


def test_worker_command_is_registered() -> None:
    result = subprocess.run(
        [INSPECTLANG, "worker", "--help"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0
    assert "--database-url" in result.stdout
