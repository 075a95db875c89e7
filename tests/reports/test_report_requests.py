"""Report requests over real HTTP: lifecycle, the signed PDF link, isolation, refusals."""

from __future__ import annotations

import io
import sys
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pypdf
import pytest
from sqlmodel import select

from server.blobs import LocalBlobStore
from server.db import Database
from server.reports.links import sign_link
from server.reports.tables import ReportRequestRecord
from server.settings import Settings
from server.tables import JobRecord

from .conftest import Drain
from .inspections import insert_inspection


def request_report(
    client: httpx.Client, headers: dict[str, str], inspection_id: str, **body: Any
) -> httpx.Response:
    return client.post(f"/v1/inspection/{inspection_id}/report/request", json=body, headers=headers)


def test_report_lifecycle_and_pdf(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    company: dict[str, Any],
    headers: dict[str, str],
    drain: Drain,
) -> None:
    inspection = insert_inspection(db, blobs, company["companyId"], plate="RPT001")
    inspection_id = inspection["inspectionId"]
    created = request_report(client, headers, inspection_id)
    assert created.status_code == 201, created.text
    report_id = created.json()["_id"]
    assert set(created.json()) == {"_id"}

    with db.session() as session:  # the job was committed with the request
        job_rows = session.exec(select(JobRecord)).all()
        assert [j.status for j in job_rows if j.payload == {"reportRequestId": report_id}] == [
            "queued"
        ]

    pending = client.get(
        f"/v1/inspection/{inspection_id}/report/request/{report_id}", headers=headers
    )
    assert pending.status_code == 200
    body = pending.json()
    assert body["status"] == "pending"
    assert body["inspectionId"] == inspection_id and body["companyId"] == company["companyId"]
    assert "result" not in body
    assert body["completedAt"] is None and body["failedAt"] is None

    drain()
    done = client.get(f"/v1/inspection/{inspection_id}/report/request/{report_id}", headers=headers)
    body = done.json()
    assert body["status"] == "completed"
    assert body["processingAt"] and body["completedAt"] and body["failedAt"] is None
    url = body["result"]["url"]
    split = urlsplit(url)
    assert split.path == f"/v1/report/file/{report_id}"
    expires = int(parse_qs(split.query)["expires"][0])
    assert abs(expires - (time.time() + 15 * 60)) < 5

    pdf = httpx.get(url, timeout=30)  # no API key: the link is the credential
    assert pdf.status_code == 200
    assert pdf.headers["content-type"] == "application/pdf"
    text = "\n".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf.content)).pages)
    assert "RPT001" in text and "APROBADA" in text  # the inspection's language (es_AR)
    # Each validation by its name for people, in the inspection's language.
    for label in ("Patente legible", "Color coincide", "No es foto de una pantalla"):
        assert label in text
    assert "****5678" in text and "30125678" not in text
    assert "Foto front" in text  # image label in the inspection's locale (es_AR)

    listed = client.get(f"/v1/inspection/{inspection_id}/report/request", headers=headers)
    assert listed.status_code == 200
    assert [r["_id"] for r in listed.json()["reportRequests"]] == [report_id]

    time.sleep(1.1)
    again = client.get(
        f"/v1/inspection/{inspection_id}/report/request/{report_id}", headers=headers
    )
    assert again.json()["result"]["url"] != url  # every read signs a fresh link


def test_report_links_expired_or_altered_are_refused(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    settings: Settings,
    company: dict[str, Any],
    headers: dict[str, str],
    drain: Drain,
) -> None:
    inspection_id = insert_inspection(db, blobs, company["companyId"])["inspectionId"]
    report_id = request_report(client, headers, inspection_id).json()["_id"]
    drain()
    url = client.get(
        f"/v1/inspection/{inspection_id}/report/request/{report_id}", headers=headers
    ).json()["result"]["url"]
    path = urlsplit(url).path
    query = parse_qs(urlsplit(url).query)
    expires, signature = query["expires"][0], query["signature"][0]

    tampered = [
        f"{path}?expires={int(expires) + 3600}&signature={signature}",
        f"{path}?expires={expires}&signature={'0' * 64}",
        f"{path}?expires={expires}",
        f"{path}",
        f"/v1/report/file/{'f' * 24}?expires={expires}&signature={signature}",
    ]
    for bad in tampered:
        response = client.get(bad)
        assert response.status_code == 403, bad
        assert response.json()["code"] == "report_link_invalid"
        assert response.headers["content-type"].startswith("application/json")

    old, _ = sign_link(settings.public_url, settings.secret, report_id, now=time.time() - 3600)
    expired = client.get(old.replace(settings.public_url, ""))
    assert expired.status_code == 403
    assert expired.json() == {
        "code": "report_link_expired",
        "status": 403,
        "description": expired.json()["description"],
        "detail": expired.json()["description"],
    }


def test_report_of_a_not_completed_inspection_is_refused(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    company: dict[str, Any],
    headers: dict[str, str],
) -> None:
    inspection_id = insert_inspection(db, blobs, company["companyId"], finish=False)["inspectionId"]
    response = request_report(client, headers, inspection_id)
    assert response.status_code == 409
    assert response.json()["code"] == "inspection_not_completed"
    with db.session() as session:
        rows = session.exec(
            select(ReportRequestRecord).where(ReportRequestRecord.inspection_id == inspection_id)
        ).all()
        assert rows == []


def test_unknown_inspection_is_404(client: httpx.Client, headers: dict[str, str]) -> None:
    response = request_report(client, headers, "0" * 24)
    assert response.status_code == 404
    assert response.json()["code"] == "inspection_not_found"


def test_other_companies_and_the_other_key_mode_get_404(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    company: dict[str, Any],
    other_company: dict[str, Any],
    headers: dict[str, str],
) -> None:
    inspection_id = insert_inspection(db, blobs, company["companyId"])["inspectionId"]
    report_id = request_report(client, headers, inspection_id).json()["_id"]
    for key in (other_company["testKey"], other_company["liveKey"], company["liveKey"]):
        foreign = {"x-api-key": key}
        post = request_report(client, foreign, inspection_id)
        assert post.status_code == 404 and post.json()["code"] == "inspection_not_found"
        one = client.get(
            f"/v1/inspection/{inspection_id}/report/request/{report_id}", headers=foreign
        )
        assert one.status_code == 404 and one.json()["code"] == "report_request_not_found"
        listed = client.get(f"/v1/inspection/{inspection_id}/report/request", headers=foreign)
        assert listed.status_code == 404 and listed.json()["code"] == "inspection_not_found"
    wrong_inspection = client.get(
        f"/v1/inspection/{'a' * 24}/report/request/{report_id}", headers=headers
    )
    assert wrong_inspection.status_code == 404
    assert client.get(f"/v1/inspection/{inspection_id}/report/request").status_code == 401


@pytest.mark.parametrize(
    "callback", ["ftp://127.0.0.1/x", "not a url", "http://", 42, "https://u:p@example.com/"]
)
def test_bad_callback_urls_are_400(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    company: dict[str, Any],
    headers: dict[str, str],
    callback: object,
) -> None:
    inspection_id = insert_inspection(db, blobs, company["companyId"])["inspectionId"]
    response = request_report(client, headers, inspection_id, callbackURL=callback)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_callback_url"


def test_malformed_bodies_are_400(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    company: dict[str, Any],
    headers: dict[str, str],
) -> None:
    inspection_id = insert_inspection(db, blobs, company["companyId"])["inspectionId"]
    path = f"/v1/inspection/{inspection_id}/report/request"
    broken = client.post(
        path, content=b"{", headers={**headers, "content-type": "application/json"}
    )
    assert broken.status_code == 400 and broken.json()["code"] == "malformed_json"
    listed = client.post(path, json=[1, 2], headers=headers)
    assert listed.status_code == 400 and listed.json()["code"] == "invalid_body"


def test_without_the_reports_extra_requests_get_503(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    company: dict[str, Any],
    headers: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    inspection_id = insert_inspection(db, blobs, company["companyId"])["inspectionId"]
    monkeypatch.setitem(sys.modules, "borb", None)  # the live server runs in this process
    response = request_report(client, headers, inspection_id)
    assert response.status_code == 503
    assert response.json()["code"] == "reports_unavailable"


def test_an_idempotent_retry_creates_one_report_request(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    company: dict[str, Any],
    headers: dict[str, str],
) -> None:
    inspection_id = insert_inspection(db, blobs, company["companyId"])["inspectionId"]
    keyed = {**headers, "Idempotency-Key": f"report-{inspection_id}"}
    first = request_report(client, keyed, inspection_id)
    second = request_report(client, keyed, inspection_id)
    assert first.status_code == second.status_code == 201
    assert first.json() == second.json()
    listed = client.get(f"/v1/inspection/{inspection_id}/report/request", headers=headers)
    assert len(listed.json()["reportRequests"]) == 1
    with db.session() as session:
        jobs = [
            job
            for job in session.exec(select(JobRecord)).all()
            if job.payload == {"reportRequestId": first.json()["_id"]}
        ]
    assert len(jobs) == 1


def test_an_unknown_field_is_refused_not_ignored(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    company: dict[str, Any],
    headers: dict[str, str],
) -> None:
    """`{"callbackUrl": ...}` (a misspelt `callbackURL`) queued a report that never called
    back, with 201: the body is a typed Struct now, so it is 400 `unknown_field` naming
    `callbackUrl`, and nothing is queued."""
    inspection_id = insert_inspection(db, blobs, company["companyId"])["inspectionId"]
    response = request_report(
        client, headers, inspection_id, callbackUrl="https://example.com/report"
    )
    assert response.status_code == 400, response.text
    assert response.json()["code"] == "unknown_field"
    assert response.json()["errors"][0]["field"] == "callbackUrl"
    listed = client.get(f"/v1/inspection/{inspection_id}/report/request", headers=headers)
    assert listed.json() == {"reportRequests": []}
