"""Issue 21 §4: names hold no control characters, whatever the entry point, and a message
that can never be built fails at once with its reason recorded.

Before: `admin create-company` took a company name with CR/LF; every email of that company
then failed with `ValueError` (a Subject header cannot hold a line break), retried 8 times as
if transient, with the delivery's `lastError` empty.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlmodel import col, select

from server.app import worker_jobs
from server.auth import AdminError, add_member, create_company
from server.db import Database
from server.delivery.tables import LinkDeliveryRecord
from server.jobs import WorkerConfig, run_once
from server.settings import Settings
from server.tables import Company, JobRecord

BAD_NAMES = ["Acme\r\nBcc: everyone@example.com", "Acme\x07", "Acme\u2028Ltd", "Acme\x85"]
FAST = WorkerConfig(
    lease_seconds=5, poll_seconds=0.05, backoff_base_seconds=0.05, backoff_max_seconds=0.1
)


@pytest.mark.parametrize("name", BAD_NAMES)
def test_admin_create_company_refuses_control_characters(
    name: str, database_url: str, data_dir: Path, db: Database
) -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "server", "admin", "create-company", name),
            *("--database-url", database_url, "--data-dir", str(data_dir)),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "INSPECTLANG_WORKER": "0"},
        cwd=Path(__file__).parents[2],
        timeout=120,
    )
    assert done.returncode == 1, done.stdout
    assert json.loads(done.stderr)["code"] == "invalid_name"
    with db.session() as session:
        assert session.execute(select(Company).where(col(Company.name) == name)).first() is None


def test_members_refuse_control_characters(db: Database) -> None:
    company = create_company(db, "Clean names Co", [])
    with pytest.raises(AdminError) as refused:
        add_member(db, company["companyId"], "driver\n7")
    assert refused.value.code == "invalid_member"
    with pytest.raises(AdminError):
        add_member(db, company["companyId"], "driver-7", name="Ana\tPérez")
    with pytest.raises(AdminError):
        create_company(db, "Another Co", ["ok", "not\x1bok"])
    assert add_member(db, company["companyId"], "driver-7", name="Ana Pérez")["name"]


def test_the_api_refuses_control_characters_in_template_and_file_names(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    source = 'template "Fleet\\ncheck"\n    type: custom\n    locales: en_US\n\nverdict\n'
    source += "    approve when true\n"
    made = client.post("/v1/inspection/template", json={"source": source}, headers=test_headers)
    assert made.status_code == 422, made.text
    assert made.json()["code"] == "invalid_template"
    assert made.json()["errors"][0]["code"] == "invalid_name"

    created = client.post(
        "/v1/inspection/car",
        json={"templateId": "easy", "locale": "en_US", "delivery": {"disabled": True}},
        headers=test_headers,
    )
    assert created.status_code == 201, created.text
    uploaded = client.post(
        f"/v1/inspection/image/{created.json()['productId']}",
        files={
            "image": ("front\r\n.jpg", b"\xff\xd8\xff", "image/jpeg"),
            "data": (None, '{"side": "front"}'),
        },
        headers=test_headers,
    )
    assert uploaded.status_code == 400, uploaded.text
    assert uploaded.json()["code"] == "invalid_body"
    assert "control character" in uploaded.json()["description"]


def test_a_message_that_cannot_be_built_fails_at_once_with_its_reason(
    db: Database, settings: Settings, live_server: str
) -> None:
    company = create_company(db, "Old name Co", [])
    with db.session() as session:  # a name stored before names were checked
        row = session.get(Company, company["companyId"])
        assert row is not None
        row.name = "Old\r\nname Co"
        session.add(row)
        session.commit()
    created = httpx.post(
        f"{live_server}/v1/inspection/car",
        json={
            "templateId": "easy",
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": "ana@example.com"},
        },
        headers={"x-api-key": company["testKey"]},
    )
    assert created.status_code == 201, created.text

    def delivery() -> LinkDeliveryRecord:
        with db.session() as session:
            found = session.execute(
                select(LinkDeliveryRecord).where(
                    col(LinkDeliveryRecord.inspection_id) == created.json()["inspectionId"]
                )
            ).scalar_one()
            return found

    deadline = time.monotonic() + 60
    while delivery().status not in ("sent", "failed"):
        assert time.monotonic() < deadline, "the delivery did not finish"
        if not run_once(db, settings, FAST, registry=worker_jobs(settings)):
            time.sleep(0.05)
    record = delivery()
    assert (record.status, record.attempts) == ("failed", 0)  # no send was ever tried
    assert record.last_error is not None and "cannot be built" in record.last_error
    assert "subject" in record.last_error
    with db.session() as session:
        job = session.execute(
            select(JobRecord)
            .where(col(JobRecord.kind) == "link_delivery")
            .where(col(JobRecord.payload)["deliveryId"].as_string() == record.id)
        ).scalar_one()
    assert (job.status, job.attempts) == ("failed", 1)
    view: dict[str, Any] = httpx.get(
        f"{live_server}/v1/inspection/{created.json()['inspectionId']}",
        headers={"x-api-key": company["testKey"]},
    ).json()["delivery"]
    assert view["status"] == "failed" and "cannot be built" in view["lastError"]
