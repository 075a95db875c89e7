"""Idempotency-Key: stored first responses, replays, conflicts, concurrency and expiry.

The probe route `/test/members` creates one real member row per execution, so counting rows
tells how many times a handler really ran.
"""

from __future__ import annotations

import io
import json
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from server.db import Database
from server.tables import IdempotencyRecord

MemberCount = Callable[[str], int]


def key() -> str:
    return str(uuid.uuid4())


def _rows_of(db: Database, table: Any, company_id: str) -> int:
    """How many rows of `table` belong to the company."""
    with db.session() as session:
        statement = select(func.count()).select_from(table).where(table.company_id == company_id)
        return int(session.execute(statement).scalar_one())


def records_for(db: Database, company_id: str) -> int:
    return _rows_of(db, IdempotencyRecord, company_id)


def test_retry_replays_the_first_response_without_running_again(
    probe_client: httpx.Client,
    company: dict[str, Any],
    test_headers: dict[str, str],
    member_count: MemberCount,
) -> None:
    before = member_count(company["companyId"])
    headers = {**test_headers, "Idempotency-Key": key()}
    first = probe_client.post("/test/members", json={"a": 1}, headers=headers)
    second = probe_client.post("/test/members", json={"a": 1}, headers=headers)
    assert first.status_code == second.status_code == 201
    assert "idempotent-replayed" not in first.headers
    assert second.headers["idempotent-replayed"] == "true"
    assert second.json() == first.json()
    assert second.headers["content-type"] == first.headers["content-type"]
    assert member_count(company["companyId"]) == before + 1


@pytest.mark.parametrize("method", ["PUT", "PATCH"])
def test_put_and_patch_are_idempotent_too(
    probe_client: httpx.Client,
    company: dict[str, Any],
    test_headers: dict[str, str],
    member_count: MemberCount,
    method: str,
) -> None:
    before = member_count(company["companyId"])
    headers = {**test_headers, "Idempotency-Key": key()}
    first = probe_client.request(method, "/test/members", json={}, headers=headers)
    second = probe_client.request(method, "/test/members", json={}, headers=headers)
    assert second.headers["idempotent-replayed"] == "true"
    assert second.json() == first.json()
    assert member_count(company["companyId"]) == before + 1


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_get_and_delete_ignore_the_header(
    probe_client: httpx.Client,
    company: dict[str, Any],
    test_headers: dict[str, str],
    member_count: MemberCount,
    db: Database,
    method: str,
) -> None:
    before = member_count(company["companyId"])
    headers = {**test_headers, "Idempotency-Key": key()}
    first = probe_client.request(method, "/test/members", headers=headers)
    second = probe_client.request(method, "/test/members", headers=headers)
    assert "idempotent-replayed" not in second.headers
    assert first.json()["memberId"] != second.json()["memberId"]
    assert member_count(company["companyId"]) == before + 2
    assert records_for(db, company["companyId"]) == 0


def test_same_key_with_another_body_is_422(
    probe_client: httpx.Client, test_headers: dict[str, str]
) -> None:
    headers = {**test_headers, "Idempotency-Key": key()}
    assert probe_client.post("/test/members", json={"a": 1}, headers=headers).status_code == 201
    response = probe_client.post("/test/members", json={"a": 2}, headers=headers)
    assert response.status_code == 422
    assert response.json()["code"] == "idempotency_key_reused"
    assert response.json()["status"] == 422


def test_same_key_on_another_path_is_422(
    probe_client: httpx.Client, test_headers: dict[str, str]
) -> None:
    headers = {**test_headers, "Idempotency-Key": key()}
    assert probe_client.post("/test/members", json={}, headers=headers).status_code == 201
    response = probe_client.post("/test/echo", json={}, headers=headers)
    assert response.status_code == 422
    assert response.json()["code"] == "idempotency_key_reused"


@pytest.mark.parametrize("length", [256, 1000])
def test_key_longer_than_255_is_400(
    probe_client: httpx.Client,
    company: dict[str, Any],
    test_headers: dict[str, str],
    member_count: MemberCount,
    length: int,
) -> None:
    before = member_count(company["companyId"])
    headers = {**test_headers, "Idempotency-Key": "k" * length}
    response = probe_client.post("/test/members", json={}, headers=headers)
    assert response.status_code == 400
    assert response.json()["code"] == "invalid_idempotency_key"
    assert member_count(company["companyId"]) == before


def test_key_of_exactly_255_is_accepted(
    probe_client: httpx.Client, test_headers: dict[str, str]
) -> None:
    headers = {**test_headers, "Idempotency-Key": "k" * 254 + uuid.uuid4().hex[:1]}
    first = probe_client.post("/test/members", json={}, headers=headers)
    second = probe_client.post("/test/members", json={}, headers=headers)
    assert first.status_code == 201
    assert second.headers["idempotent-replayed"] == "true"


def test_unauthenticated_requests_store_nothing(
    probe_client: httpx.Client,
    company: dict[str, Any],
    test_headers: dict[str, str],
    db: Database,
) -> None:
    shared = key()
    bad = probe_client.post(
        "/test/members", json={}, headers={"x-api-key": "sk_test_bad", "Idempotency-Key": shared}
    )
    assert bad.status_code == 401
    assert records_for(db, company["companyId"]) == 0
    good = probe_client.post(
        "/test/members", json={}, headers={**test_headers, "Idempotency-Key": shared}
    )
    assert good.status_code == 201
    assert "idempotent-replayed" not in good.headers


def test_server_errors_are_stored_and_replayed(
    probe: Any, probe_client: httpx.Client, test_headers: dict[str, str]
) -> None:
    runs_before = probe.calls.counts.get("boom", 0)
    headers = {**test_headers, "Idempotency-Key": key()}
    first = probe_client.post("/test/boom", headers=headers)
    second = probe_client.post("/test/boom", headers=headers)
    assert first.status_code == second.status_code == 500
    assert first.json()["code"] == "internal_error"
    assert second.json() == first.json()
    assert second.headers["idempotent-replayed"] == "true"
    assert probe.calls.counts["boom"] == runs_before + 1


def test_client_errors_are_stored_and_replayed(
    probe_client: httpx.Client, test_headers: dict[str, str]
) -> None:
    headers = {**test_headers, "Idempotency-Key": key()}
    first = probe_client.post("/test/echo", json={"count": "x"}, headers=headers)
    second = probe_client.post("/test/echo", json={"count": "x"}, headers=headers)
    assert first.status_code == second.status_code == 400
    assert second.json() == first.json()
    assert second.headers["idempotent-replayed"] == "true"


def test_keys_are_scoped_by_company_and_mode(
    probe_client: httpx.Client,
    company: dict[str, Any],
    other_company: dict[str, Any],
    member_count: MemberCount,
) -> None:
    shared = key()
    before = member_count(company["companyId"])
    other_before = member_count(other_company["companyId"])
    for api_key in (company["testKey"], company["liveKey"], other_company["testKey"]):
        response = probe_client.post(
            "/test/members", json={}, headers={"x-api-key": api_key, "Idempotency-Key": shared}
        )
        assert response.status_code == 201
        assert "idempotent-replayed" not in response.headers
    assert member_count(company["companyId"]) == before + 2
    assert member_count(other_company["companyId"]) == other_before + 1


def test_sixteen_concurrent_requests_with_one_key_run_once(
    probe: Any,
    company: dict[str, Any],
    test_headers: dict[str, str],
    member_count: MemberCount,
) -> None:
    before = member_count(company["companyId"])
    headers = {**test_headers, "Idempotency-Key": key()}
    barrier = threading.Barrier(16)

    def send(_: int) -> httpx.Response:
        with probe.client() as http:
            barrier.wait()
            return http.post("/test/members", json={"same": True}, headers=headers)

    with ThreadPoolExecutor(max_workers=16) as pool:
        responses = list(pool.map(send, range(16)))
    assert member_count(company["companyId"]) == before + 1
    assert {response.status_code for response in responses} == {201}
    assert len({response.json()["memberId"] for response in responses}) == 1
    replayed = [r for r in responses if r.headers.get("idempotent-replayed") == "true"]
    assert len(replayed) == 15


def test_duplicate_waits_for_the_request_in_flight(
    probe: Any, test_headers: dict[str, str]
) -> None:
    """The slow route takes 1 s; the duplicate waits for it, so both get its answer.

    The wait is raised from 5 s to 30 s here so a busy test machine cannot turn it into a 409.
    """
    runs_before = probe.calls.counts.get("slow", 0)
    headers = {**test_headers, "Idempotency-Key": key()}
    store = probe.app.state.idempotency
    store.wait_seconds = 30.0
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = [pool.submit(_post, probe.base_url, "/test/slow", headers) for _ in range(2)]
            responses = [future.result() for future in futures]
    finally:
        store.wait_seconds = 5.0
    assert [r.status_code for r in responses] == [201, 201]
    assert sum(r.headers.get("idempotent-replayed") == "true" for r in responses) == 1
    assert responses[0].json() == responses[1].json()
    assert probe.calls.counts["slow"] == runs_before + 1


def test_duplicate_gets_409_when_the_first_takes_too_long(
    probe: Any, test_headers: dict[str, str]
) -> None:
    store = probe.app.state.idempotency
    store.wait_seconds = 0.2
    try:
        headers = {**test_headers, "Idempotency-Key": key()}
        with ThreadPoolExecutor(max_workers=1) as pool:
            first = pool.submit(_post, probe.base_url, "/test/slow", headers)
            deadline = time.monotonic() + 10
            while not _in_flight(probe, headers):
                assert time.monotonic() < deadline, "the first request never started"
                time.sleep(0.01)
            second = _post(probe.base_url, "/test/slow", headers)
            assert second.status_code == 409
            assert second.json()["code"] == "idempotency_request_in_progress"
            assert second.headers["retry-after"] == "1"
            assert first.result().status_code == 201
        third = _post(probe.base_url, "/test/slow", headers)
        assert third.status_code == 201
        assert third.headers["idempotent-replayed"] == "true"
        assert third.json() == first.result().json()
    finally:
        store.wait_seconds = 5.0


def _in_flight(probe: Any, headers: dict[str, str]) -> bool:
    db: Database = probe.app.state.db
    with db.session() as session:
        statement = select(IdempotencyRecord).where(
            IdempotencyRecord.key == headers["Idempotency-Key"]  # type: ignore[arg-type]
        )
        record = session.execute(statement).scalars().first()
    return record is not None and record.status_code is None


def _post(base_url: str, path: str, headers: dict[str, str]) -> httpx.Response:
    with httpx.Client(base_url=base_url, timeout=30) as http:
        return http.post(path, json={}, headers=headers)


def test_records_expire_after_24_hours(
    probe: Any,
    probe_client: httpx.Client,
    company: dict[str, Any],
    test_headers: dict[str, str],
    member_count: MemberCount,
    db: Database,
) -> None:
    before = member_count(company["companyId"])
    headers = {**test_headers, "Idempotency-Key": key()}
    first = probe_client.post("/test/members", json={"v": 1}, headers=headers)
    probe.clock.advance(hours=23, minutes=59)
    within = probe_client.post("/test/members", json={"v": 1}, headers=headers)
    assert within.headers["idempotent-replayed"] == "true"
    assert within.json() == first.json()
    probe.clock.advance(minutes=2)
    # Expired: the key is free again, even for another body, and the handler runs.
    after = probe_client.post("/test/members", json={"v": 2}, headers=headers)
    assert after.status_code == 201
    assert "idempotent-replayed" not in after.headers
    assert after.json()["memberId"] != first.json()["memberId"]
    assert member_count(company["companyId"]) == before + 2
    assert records_for(db, company["companyId"]) == 1


def test_expired_records_are_purged(
    probe: Any, company: dict[str, Any], test_headers: dict[str, str], db: Database
) -> None:
    with probe.client() as http:
        for _ in range(3):
            http.post("/test/members", json={}, headers={**test_headers, "Idempotency-Key": key()})
        assert records_for(db, company["companyId"]) == 3
        probe.clock.advance(hours=25)
        store = probe.app.state.idempotency
        assert store.purge_expired(probe.clock()) >= 3
    assert records_for(db, company["companyId"]) == 0


def _inspections_of(db: Database, company_id: str) -> int:
    from server.inspections.tables import InspectionRecord

    return _rows_of(db, InspectionRecord, company_id)


def test_sixteen_concurrent_inspection_creations_with_one_key_create_one(
    live_server: str, company: dict[str, Any], live_headers: dict[str, str], db: Database
) -> None:
    """The spec's intended use: retrying an inspection creation never creates it twice."""
    from server.auth import consumed_inspections

    body = {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "driver@example.com"},
        "car": {"plate": "AB123CD"},
    }
    headers = {**live_headers, "Idempotency-Key": key()}
    barrier = threading.Barrier(16)

    def send(_: int) -> httpx.Response:
        with httpx.Client(base_url=live_server, timeout=60) as http:
            barrier.wait()
            return http.post("/v1/inspection/car", json=body, headers=headers)

    with ThreadPoolExecutor(max_workers=16) as pool:
        responses = list(pool.map(send, range(16)))
    assert [r.status_code for r in responses] == [201] * 16, [r.text for r in responses]
    assert len({r.json()["inspectionId"] for r in responses}) == 1
    assert sum(r.headers.get("idempotent-replayed") == "true" for r in responses) == 15
    assert _inspections_of(db, company["companyId"]) == 1
    assert consumed_inspections(db, company["companyId"]) == 1


# --- issue 16: a key claimed by a process that died ---------------------------------------------

#: Run in a child process: claim a key through the real store, say so, then wait to be killed.
_CLAIM_THEN_WAIT = """
import sys, time
from datetime import datetime
from server.auth import AuthContext
from server.db import Database
from server.idempotency import IdempotencyStore
url, company_id, key, print_, now = sys.argv[1:]
store = IdempotencyStore(Database(url))
claim = store.claim(AuthContext(company_id, "test", "k"), key, print_, datetime.fromisoformat(now))
print("claimed", claim.record_id, flush=True)
time.sleep(600)
"""

#: The body the issue-16 tests send, as raw bytes (its fingerprint is computed from them).
_BODY = b'{"retry": true}'


def _send_raw(http: httpx.Client, headers: dict[str, str]) -> httpx.Response:
    return http.post(
        "/test/members", content=_BODY, headers={**headers, "content-type": "application/json"}
    )


def test_issue_16_a_key_claimed_by_a_killed_process_is_processed_on_retry(
    probe: Any,
    probe_client: httpx.Client,
    company: dict[str, Any],
    test_headers: dict[str, str],
    member_count: MemberCount,
    db: Database,
) -> None:
    """A real process claims the key through the real store and is killed (SIGKILL) before
    answering. The retry gets 409 while the dead owner's lease runs, then is processed, once."""
    import os
    import signal
    import subprocess
    import sys

    from server.idempotency import LEASE, fingerprint

    idempotency_key = key()
    with subprocess.Popen(
        [
            sys.executable,
            "-c",
            _CLAIM_THEN_WAIT,
            db.url.render_as_string(hide_password=False),
            company["companyId"],
            idempotency_key,
            fingerprint("POST", "/test/members", _BODY),
            probe.clock().isoformat(),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.getcwd(),
    ) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline().startswith("claimed")
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    before = member_count(company["companyId"])
    headers = {**test_headers, "Idempotency-Key": idempotency_key}
    store = probe.app.state.idempotency
    store.wait_seconds = 0.2
    try:
        during_lease = _send_raw(probe_client, headers)
        assert during_lease.status_code == 409
        assert during_lease.json()["code"] == "idempotency_request_in_progress"
        probe.clock.advance(seconds=LEASE.total_seconds() + 1)
        retried = _send_raw(probe_client, headers)
        again = _send_raw(probe_client, headers)
    finally:
        store.wait_seconds = 5.0
    assert retried.status_code == 201, retried.text
    assert "idempotent-replayed" not in retried.headers
    assert again.headers["idempotent-replayed"] == "true"
    assert again.json() == retried.json()
    assert member_count(company["companyId"]) == before + 1
    assert records_for(db, company["companyId"]) == 1


def test_issue_16_a_lapsed_claim_is_taken_over_by_one_retry_only(
    probe: Any,
    company: dict[str, Any],
    test_headers: dict[str, str],
    member_count: MemberCount,
    db: Database,
) -> None:
    """The claim a dead process leaves, written at the database level (owner on another host,
    lease lapsed); eight retries arrive together: exactly one runs, the others get its answer."""
    from server.idempotency import TTL, fingerprint

    idempotency_key = key()
    now = probe.clock()
    with db.engine.begin() as connection:
        connection.execute(
            IdempotencyRecord.__table__.insert().values(  # type: ignore[attr-defined]
                company_id=company["companyId"],
                mode="test",
                key=idempotency_key,
                fingerprint=fingerprint("POST", "/test/members", _BODY),
                created_at=now - timedelta(minutes=5),
                expires_at=now - timedelta(minutes=5) + TTL,
                owner="gone-host:4242:deadbeef0000",
                lease_expires_at=now - timedelta(seconds=1),
            )
        )
    before = member_count(company["companyId"])
    headers = {**test_headers, "Idempotency-Key": idempotency_key}
    barrier = threading.Barrier(8)

    def send(_: int) -> httpx.Response:
        with probe.client() as http:
            barrier.wait()
            return _send_raw(http, headers)

    store = probe.app.state.idempotency
    store.wait_seconds = 30.0
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            responses = list(pool.map(send, range(8)))
    finally:
        store.wait_seconds = 5.0
    assert [r.status_code for r in responses] == [201] * 8, [r.text for r in responses]
    assert sum("idempotent-replayed" not in r.headers for r in responses) == 1
    assert len({r.json()["memberId"] for r in responses}) == 1
    assert member_count(company["companyId"]) == before + 1


def _assert_replayed(first: httpx.Response, retried: httpx.Response, status: int) -> None:
    """The retry of a request whose answer was stored in its own transaction: the same status
    and body, replayed."""
    assert first.status_code == status, first.text
    assert retried.status_code == status, retried.text
    assert retried.headers["idempotent-replayed"] == "true"
    assert retried.json() == first.json()


def test_issue_16_a_creation_killed_after_its_commit_replays_on_retry(
    live_server: str,
    company: dict[str, Any],
    live_headers: dict[str, str],
    db: Database,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The process dies between the creation's commit and the middleware storing the answer
    (here: that store never happens). The 201 was stored in the creation's own transaction, so
    the retry replays it and the inspection exists once: exactly once, not at least once."""
    from server.idempotency import IdempotencyStore

    monkeypatch.setattr(IdempotencyStore, "store", lambda self, record_id, response: None)
    body = {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"disabled": True},
        "car": {"plate": "AB123CD"},
    }
    headers = {**live_headers, "Idempotency-Key": key()}
    with httpx.Client(base_url=live_server, timeout=60) as http:
        first = http.post("/v1/inspection/car", json=body, headers=headers)
        retried = http.post("/v1/inspection/car", json=body, headers=headers)
    _assert_replayed(first, retried, 201)
    assert _inspections_of(db, company["companyId"]) == 1


def test_an_upload_killed_after_its_commit_replays_on_retry(
    live_server: str,
    company: dict[str, Any],
    live_headers: dict[str, str],
    db: Database,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As a creation: the process dies between the upload's commit and the middleware storing
    the answer (here: that store never happens). The 201 was stored with the photo's row, so
    the retry replays it and the inspection holds the photo once (the multi-process test
    found a second row: the retry, once the lease lapsed, ran the upload again)."""
    from PIL import Image

    from server.idempotency import IdempotencyStore
    from server.inspections.tables import ImageRecord

    body = {"templateId": "easy", "locale": "en_US", "delivery": {"disabled": True}}
    with httpx.Client(base_url=live_server, timeout=60) as http:
        created = http.post(
            "/v1/inspection/car", json={**body, "car": {"plate": "AB123CD"}}, headers=live_headers
        )
        assert created.status_code == 201, created.text
        photo = io.BytesIO()
        Image.new("RGB", (64, 48), (200, 30, 30)).save(photo, format="PNG")
        files: dict[str, Any] = {
            "image": ("front.png", photo.getvalue(), "image/png"),
            "data": (None, json.dumps({"side": "front"})),
        }
        monkeypatch.setattr(IdempotencyStore, "store", lambda self, record_id, response: None)
        headers = {**live_headers, "Idempotency-Key": key()}
        path = f"/v1/inspection/image/{created.json()['productId']}"
        # One body (one multipart boundary): the retry sends the very same bytes.
        request = http.build_request("POST", path, files=files, headers=headers)
        content = request.read()
        first = http.post(path, content=content, headers=dict(request.headers))
        retried = http.post(path, content=content, headers=dict(request.headers))
    _assert_replayed(first, retried, 201)
    assert _rows_of(db, ImageRecord, company["companyId"]) == 1


def test_a_finish_killed_after_its_commit_replays_on_retry(
    live_server: str,
    company: dict[str, Any],
    live_headers: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As an upload: the process dies between the finish's commit and the middleware storing
    the answer (here: that store never happens). The 200 was stored with the finished state,
    so the retry replays it (the multi-process test, on a loaded machine, got 409 "cannot
    finish an inspection that is completed": the retry ran the finish again)."""
    from server.idempotency import IdempotencyStore

    body = {"templateId": "easy", "locale": "en_US", "delivery": {"disabled": True}}
    with httpx.Client(base_url=live_server, timeout=60) as http:
        created = http.post(
            "/v1/inspection/car", json={**body, "car": {"plate": "AB123CD"}}, headers=live_headers
        )
        assert created.status_code == 201, created.text
        monkeypatch.setattr(IdempotencyStore, "store", lambda self, record_id, response: None)
        headers = {**live_headers, "Idempotency-Key": key()}
        path = f"/v1/inspection/finish/{created.json()['inspectionId']}"
        first = http.post(path, json={}, headers=headers)
        retried = http.post(path, json={}, headers=headers)
        shown = http.get(f"/v1/inspection/{created.json()['inspectionId']}", headers=live_headers)
    _assert_replayed(first, retried, 200)
    assert first.json()["message"] == "Inspection finished"
    assert first.json()["status"] == "completed"
    assert shown.json()["completedBy"] == "client"


def _in_review(http: httpx.Client, headers: dict[str, str]) -> dict[str, Any]:
    from tests.server.test_review_api import finished_in_review, save_template

    return finished_in_review(http, headers, save_template(http, headers, f"replayed {key()}"))


def test_a_review_decision_killed_after_its_commit_replays_on_retry(
    live_server: str,
    live_headers: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 39 §7: after a kill -9, a decision answered 200 and retried with its key got 409
    `review_conflict`: the retry decided again, on a completed inspection. The process dies
    between the commit and the middleware storing the answer (here: that store never
    happens); the answer is stored in the decision's own transaction, so the retry replays
    it."""
    from server.idempotency import IdempotencyStore

    with httpx.Client(base_url=live_server, timeout=60) as http:
        in_review = _in_review(http, live_headers)
        monkeypatch.setattr(IdempotencyStore, "store", lambda self, record_id, response: None)
        decision = {"veredict": "approved", "reason": "Checked by a person"}
        path = f"/v1/inspection/{in_review['_id']}/review"
        headers = {**live_headers, "Idempotency-Key": key()}
        first = http.post(path, json=decision, headers=headers)
        retried = http.post(path, json=decision, headers=headers)
    _assert_replayed(first, retried, 200)
    assert first.json()["completedBy"] == "reviewer"


def test_a_retake_killed_after_its_commit_replays_on_retry(
    live_server: str,
    live_headers: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 39 §7: as a decision: a retake answered 202 and retried with its key after a
    kill -9 got 404, since the photo it named was no longer current. Its 202 is stored in the
    retake's own transaction, so the retry replays it (and the consumer gets one message)."""
    from server.idempotency import IdempotencyStore

    with httpx.Client(base_url=live_server, timeout=60) as http:
        in_review = _in_review(http, live_headers)
        monkeypatch.setattr(IdempotencyStore, "store", lambda self, record_id, response: None)
        front = in_review["products"][0]["images"][0]["_id"]
        retake = {"images": [front], "message": "The front again, please"}
        path = f"/v1/inspection/{in_review['_id']}/retake"
        headers = {**live_headers, "Idempotency-Key": key()}
        first = http.post(path, json=retake, headers=headers)
        retried = http.post(path, json=retake, headers=headers)
    _assert_replayed(first, retried, 202)
    assert first.json()["images"] == [front]
