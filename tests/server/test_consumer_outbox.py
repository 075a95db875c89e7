"""The server's half of the phone's outbox (`server/consumer/outbox.py`, docs/consumer.md,
"Offline"): a photo, answers or the final send carrying the client's id as `Idempotency-Key`
run once; a repeat (the answer was lost on the way back) gets the first answer and stores no
second image, records no second attempt and finishes nothing twice."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import httpx
from PIL import Image

from tests.server.test_consumer_pages import create, flow_template  # noqa: F401 (a fixture)

JSON = {"accept": "application/json"}
#: The page builds each item's body once and sends those bytes on every try; a fixed boundary
#: makes httpx do the same.
MULTIPART = {"content-type": "multipart/form-data; boundary=outbox-test-boundary"}


def _photo() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (800, 600), (120, 90, 60)).save(buffer, "JPEG")
    return buffer.getvalue()


def _opened(browser: httpx.Client, tail: str) -> dict[str, str]:
    page = browser.get(f"/i/{tail}", follow_redirects=True)
    token = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
    assert token is not None
    return {"x-csrftoken": token.group(1), **JSON}


def _inspection(live_server: str, flow: dict[str, Any], inspection_id: str) -> dict[str, Any]:
    answer = httpx.get(f"{live_server}/v1/inspection/{inspection_id}", headers=flow["headers"])
    return dict(answer.json())


def test_a_photo_sent_twice_with_one_client_id_is_stored_once(
    live_server: str, flow_template: dict[str, Any]
) -> None:
    inspection_id, tail = create(live_server, flow_template)
    photo = _photo()
    template = httpx.get(
        f"{live_server}/v1/inspection/template/{flow_template['template']}",
        headers=flow_template["headers"],
    ).json()
    slot = template["images"][0]["identifier"]
    body = {"data": (None, json.dumps({"identifier": slot}), "application/json")}
    with httpx.Client(base_url=live_server, follow_redirects=True) as browser:
        headers = _opened(browser, tail)
        headers = {**headers, **MULTIPART}
        sent = {**headers, "idempotency-key": "c1d2e3f4-0000-4000-8000-000000000001"}
        first = browser.post(
            f"/i/{inspection_id}/photo", files={**body, "image": ("p.jpg", photo)}, headers=sent
        )
        again = browser.post(
            f"/i/{inspection_id}/photo", files={**body, "image": ("p.jpg", photo)}, headers=sent
        )
        assert first.status_code == 201, first.text
        assert again.status_code == 201 and again.json() == first.json()
        assert again.headers["idempotent-replayed"] == "true"
        assert first.json()["attemptsLeft"] == 2
        other = {**headers, "idempotency-key": "c1d2e3f4-0000-4000-8000-000000000002"}
        second = browser.post(
            f"/i/{inspection_id}/photo", files={**body, "image": ("p.jpg", photo)}, headers=other
        )
        assert second.status_code == 201 and second.json()["_id"] != first.json()["_id"]
        assert second.json()["attemptsLeft"] == 1  # the repeat was not counted as an attempt
    images = _inspection(live_server, flow_template, inspection_id)["products"][0]["images"]
    assert [image["_id"] for image in images] == [second.json()["_id"]]


def test_answers_and_the_final_send_answer_json_and_run_once(
    live_server: str, flow_template: dict[str, Any]
) -> None:
    inspection_id, tail = create(live_server, flow_template)
    template = httpx.get(
        f"{live_server}/v1/inspection/template/{flow_template['template']}",
        headers=flow_template["headers"],
    ).json()
    ids = {item["label"]: item["identifier"] for item in template["inputs"]}
    answers = {
        ids["Delivery date"]: "2026-11-20",
        ids["Name of the person who received it"]: "Al",  # too short
        ids["Number of packages"]: "1",
        ids["State of the packages"]: "Intact",
        ids["What was inside?"]: "Documents",
        ids["I received the packages listed above"]: "true",
    }
    files = {ids["Signature of the recipient"]: ("s.png", b"\x89PNG\r\n\x1a\n", "image/png")}
    with httpx.Client(base_url=live_server) as browser:
        headers = _opened(browser, tail)
        browser.post(f"/i/{inspection_id}/welcome", data={"consent": "yes"}, headers=headers)
        refused = browser.post(
            f"/i/{inspection_id}/details",
            data=answers,
            files=files,
            headers={**headers, "idempotency-key": "answers-0001"},
        )
        assert refused.status_code == 400
        assert refused.json()["code"] == "invalid_answers"
        name = ids["Name of the person who received it"]
        assert refused.json()["errors"][name] == "At least 3 characters."
        answers[name] = "Ana Pérez"
        keyed = {**headers, **MULTIPART, "idempotency-key": "answers-0002"}
        saved = browser.post(
            f"/i/{inspection_id}/details", data=answers, files=files, headers=keyed
        )
        assert saved.status_code == 200, saved.text
        assert saved.json() == {"next": f"/i/{inspection_id}/step/photo-1"}
        again = browser.post(
            f"/i/{inspection_id}/details", data=answers, files=files, headers=keyed
        )
        assert again.json() == saved.json() and again.headers["idempotent-replayed"] == "true"
        # The same id with another body: the client's bug, refused, never run.
        answers[name] = "Someone Else"
        reused = browser.post(
            f"/i/{inspection_id}/details", data=answers, files=files, headers=keyed
        )
        assert reused.status_code == 422 and reused.json()["code"] == "idempotency_key_reused"
        finish = {**headers, "idempotency-key": "finish-0001"}
        done = browser.post(f"/i/{inspection_id}/finish", headers=finish)
        assert done.status_code == 200 and done.json() == {"next": f"/i/{inspection_id}/done"}
        repeat = browser.post(f"/i/{inspection_id}/finish", headers=finish)
        assert repeat.json() == done.json() and repeat.headers["idempotent-replayed"] == "true"
        late = browser.post(  # another id after the end: where to go, not an error
            f"/i/{inspection_id}/finish", headers={**headers, "idempotency-key": "finish-0002"}
        )
        assert late.status_code == 200 and late.json() == done.json()
    document = _inspection(live_server, flow_template, inspection_id)
    assert document["status"] == "completed" and document["completedBy"] == "consumer"
    values = {item["label"]: item["value"] for item in document["template"]["inputs"]}
    assert values["Name of the person who received it"] == "Ana Pérez"


def test_a_bad_client_id_gets_a_clear_refusal(
    live_server: str, flow_template: dict[str, Any]
) -> None:
    inspection_id, tail = create(live_server, flow_template)
    with httpx.Client(base_url=live_server) as browser:
        headers = _opened(browser, tail)
        for key in ("short", "x" * 101, "has space in it", "ünïcode-id"):
            answer = browser.post(
                f"/i/{inspection_id}/finish",
                headers={**headers, "idempotency-key": key.encode()},
            )
            assert answer.status_code == 400, key
            assert answer.json()["code"] == "invalid_idempotency_key"
        assert _inspection(live_server, flow_template, inspection_id)["status"] == "started"


def test_the_service_worker_is_served_to_the_session_only(
    live_server: str, flow_template: dict[str, Any]
) -> None:
    inspection_id, tail = create(live_server, flow_template)
    assert httpx.get(f"{live_server}/i/{inspection_id}/sw.js").status_code == 404
    with httpx.Client(base_url=live_server) as browser:
        _opened(browser, tail)
        worker = browser.get(f"/i/{inspection_id}/sw.js")
    assert worker.status_code == 200
    assert worker.headers["content-type"].startswith("text/javascript")
    assert worker.headers["service-worker-allowed"] == f"/i/{inspection_id}"
    assert "/static/consumer/outbox.js?v=" in worker.text and "&#34;" not in worker.text
