"""The consumer's pages over plain HTTP (rerun on PostgreSQL by `make test-postgres`; the
browser tests in `tests/browser/` drive the same pages in Chromium).

- The link: the code checked against its stored hash (`open_with_code`), the same 404 bytes for
  a wrong code and an unknown id, a session row and its cookie, a redirect without the code,
  `Referrer-Policy: no-referrer`, `created` -> `started` with `inspection_started` queued.
- The session reaches its own inspection only; form posts need the CSRF token.
- The answers are checked by the server with the API's messages; finishing records
  `completedBy: consumer`.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image
from sqlalchemy import select

from server.db import Database
from server.inspections import access
from server.tables import JobRecord
from server.tokens import hash_token
from server.web.tables import WebSession

TEMPLATE = Path(__file__).parents[1] / "browser" / "consumer_flow.insp"


@pytest.fixture(scope="module")
def flow_template(live_server: str, db: Database) -> dict[str, Any]:
    from server.auth import create_company

    company = create_company(db, "Pages Co", ["member-1"])
    headers = {"x-api-key": company["testKey"]}
    made = httpx.post(
        f"{live_server}/v1/inspection/template",
        json={"source": TEMPLATE.read_text()},
        headers=headers,
    )
    assert made.status_code == 201, made.text
    return {"headers": headers, "template": made.json()["_id"], "company": company}


def create(live_server: str, flow_template: dict[str, Any], **extra: Any) -> tuple[str, str]:
    hook = {"callbackURL": "http://127.0.0.1:9/hook"}
    response = httpx.post(
        f"{live_server}/v1/inspection/goods",
        json={
            "templateId": flow_template["template"],
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": "a@example.com"},
            "goods": {"description": "Box", "quantity": 1},
            **hook,
            **extra,
        },
        headers=flow_template["headers"],
    )
    assert response.status_code == 201, response.text
    body = response.json()
    return body["inspectionId"], body["magicLink"].split("/i/", 1)[1]


def test_the_code_is_checked_against_the_stored_hash(
    live_server: str, flow_template: dict[str, Any], db: Database
) -> None:
    inspection_id, tail = create(live_server, flow_template)
    code = tail.split("code=", 1)[1]
    holder = access.open_with_code(db, inspection_id, code)
    assert holder is not None
    assert holder.auth.scope == f"consumer:{inspection_id}" and holder.auth.testing
    other = code[:-1] + ("y" if code.endswith("x") else "x")  # never the code itself
    assert access.open_with_code(db, inspection_id, other) is None
    assert access.open_with_code(db, inspection_id, "") is None
    assert access.open_with_code(db, inspection_id, None) is None
    assert access.open_with_code(db, "f" * 24, code) is None
    assert access.open_with_code(db, inspection_id, code * 10) is None
    assert access.code_hash(code) == hash_token(code)


def test_a_wrong_link_answers_in_the_language_the_browser_prefers(live_server: str) -> None:
    """The Accept-Language header is negotiated (quality values), not cut to five characters."""
    with httpx.Client(base_url=live_server) as browser:
        page = browser.get(
            "/i/" + "0" * 24 + "?code=wrong", headers={"accept-language": "en;q=0.1, pt-BR"}
        )
    assert page.status_code == 404 and "Este link não funciona" in page.text


def test_opening_the_link(live_server: str, flow_template: dict[str, Any], db: Database) -> None:
    inspection_id, tail = create(live_server, flow_template)
    with httpx.Client(base_url=live_server) as browser:
        opened = browser.get(f"/i/{tail}")
        assert opened.status_code == 303
        assert opened.headers["location"] == f"/i/{inspection_id}/step/welcome"
        assert opened.headers["referrer-policy"] == "no-referrer"
        cookie = opened.headers["set-cookie"]
        assert f"Path=/i/{inspection_id}" in cookie
        assert "HttpOnly" in cookie and "samesite=lax" in cookie.lower()
        page = browser.get(opened.headers["location"])
        assert page.status_code == 200 and "<h1>Welcome</h1>" in page.text
        assert "code=" not in str(page.url)
    read = httpx.get(
        f"{live_server}/v1/inspection/{inspection_id}", headers=flow_template["headers"]
    )
    assert read.json()["status"] == "started"
    with db.session() as session:
        rows = (
            session.execute(select(WebSession).where(WebSession.subject_id == inspection_id))
            .scalars()
            .all()
        )  # type: ignore[arg-type]
        assert len(rows) == 1 and rows[0].kind == "consumer"
        assert rows[0].token_hash != browser.cookies.get("inspectlang_consumer")
        jobs = session.execute(select(JobRecord)).scalars().all()
    started = [
        job
        for job in jobs
        if (job.payload.get("body") or {}).get("event") == "inspection_started"
        and inspection_id in json.dumps(job.payload)
    ]
    assert len(started) == 1


def test_wrong_code_and_unknown_id_are_the_same_404(
    live_server: str, flow_template: dict[str, Any]
) -> None:
    inspection_id, tail = create(live_server, flow_template)
    wrong = httpx.get(f"{live_server}/i/{inspection_id}?code=wrong")
    unknown = httpx.get(f"{live_server}/i/{'a' * 24}?code={tail.split('code=')[1]}")
    assert wrong.status_code == unknown.status_code == 404
    meta = re.compile(r'<meta name="csrf-token" content="[^"]+">')  # per browser, not per link
    assert meta.sub("", wrong.text) == meta.sub("", unknown.text)
    assert wrong.headers["content-security-policy"].startswith("default-src 'none'")


def test_a_session_reaches_only_its_inspection_and_posts_need_csrf(
    live_server: str, flow_template: dict[str, Any]
) -> None:
    mine, tail = create(live_server, flow_template)
    other, _ = create(live_server, flow_template)
    with httpx.Client(base_url=live_server, follow_redirects=True) as browser:
        page = browser.get(f"/i/{tail}")
        token = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
        assert token is not None
        session_cookie = browser.cookies.get("inspectlang_consumer")
        browser.cookies.set("inspectlang_consumer", session_cookie, path=f"/i/{other}")
        for path in (
            f"/i/{other}",
            f"/i/{other}/step/welcome",
            f"/i/{other}/status",
            f"/i/{other}/done",
        ):
            assert browser.get(path).status_code == 404, path
        csrf = {"x-csrftoken": token.group(1)}
        assert (
            browser.post(f"/i/{other}/welcome", data={"consent": "yes"}, headers=csrf).status_code
            == 404
        )
        assert browser.post(f"/i/{mine}/welcome", data={"consent": "yes"}).status_code == 403
        accepted = browser.post(f"/i/{mine}/welcome", data={"consent": "yes"}, headers=csrf)
        assert accepted.status_code == 200 and "A few questions" in accepted.text


def test_answers_are_checked_by_the_server_with_the_api_words_then_finished(
    live_server: str, flow_template: dict[str, Any]
) -> None:
    inspection_id, tail = create(live_server, flow_template)
    template = httpx.get(
        f"{live_server}/v1/inspection/template/{flow_template['template']}",
        headers=flow_template["headers"],
    ).json()
    ids = {item["label"]: item["identifier"] for item in template["inputs"]}
    with httpx.Client(base_url=live_server, follow_redirects=True) as browser:
        page = browser.get(f"/i/{tail}")
        token = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
        assert token is not None
        csrf = {"x-csrftoken": token.group(1)}
        browser.post(f"/i/{inspection_id}/welcome", data={"consent": "yes"}, headers=csrf)
        answers = {
            ids["Delivery date"]: "2026-11-20",
            ids["Name of the person who received it"]: "Al",  # too short
            ids["Number of packages"]: "70",  # over the maximum
            ids["State of the packages"]: "Intact",
            ids["What was inside?"]: "Documents",
            ids["I received the packages listed above"]: "true",
        }
        files = {ids["Signature of the recipient"]: ("s.png", b"\x89PNG\r\n\x1a\n", "image/png")}
        refused = browser.post(
            f"/i/{inspection_id}/details", data=answers, files=files, headers=csrf
        )
        assert refused.status_code == 400
        # The catalog's words (en_US too), with the input's own bounds.
        assert "Must be at most 50." in refused.text and "At least 3 characters." in refused.text
        answers[ids["Name of the person who received it"]] = "Ana Pérez"
        answers[ids["Number of packages"]] = "1"
        accepted = browser.post(
            f"/i/{inspection_id}/details", data=answers, files=files, headers=csrf
        )
        assert accepted.status_code == 200, accepted.text
        assert "All the packages together" in accepted.text
        review = browser.post(f"/i/{inspection_id}/finish", headers=csrf)
        assert review.status_code == 200 and "Thank you!" in review.text
    done = httpx.get(
        f"{live_server}/v1/inspection/{inspection_id}", headers=flow_template["headers"]
    ).json()
    assert done["status"] == "completed" and done["completedBy"] == "consumer"
    assert done["veredict"] in ("approved", "disapproved")


def test_a_conditional_question_appears_once_its_condition_holds(
    live_server: str, flow_template: dict[str, Any]
) -> None:
    inspection_id, tail = create(live_server, flow_template)
    template = httpx.get(
        f"{live_server}/v1/inspection/template/{flow_template['template']}",
        headers=flow_template["headers"],
    ).json()
    ids = {item["label"]: item["identifier"] for item in template["inputs"]}
    with httpx.Client(base_url=live_server, follow_redirects=True) as browser:
        page = browser.get(f"/i/{tail}")
        token = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
        assert token is not None
        csrf = {"x-csrftoken": token.group(1)}
        browser.post(f"/i/{inspection_id}/welcome", data={"consent": "yes"}, headers=csrf)
        details = browser.get(f"/i/{inspection_id}/step/details")
        assert details.status_code == 200 and "What was damaged?" not in details.text
        answers = {
            ids["Delivery date"]: "2026-11-20",
            ids["Name of the person who received it"]: "Ana Pérez",
            ids["Number of packages"]: "1",
            ids["State of the packages"]: "Dented",
            ids["What was inside?"]: "Documents",
            ids["I received the packages listed above"]: "true",
        }
        files = {ids["Signature of the recipient"]: ("s.png", b"\x89PNG\r\n\x1a\n", "image/png")}
        again = browser.post(f"/i/{inspection_id}/details", data=answers, files=files, headers=csrf)
        assert again.status_code == 200
        assert "What was damaged?" in again.text and ids["What was damaged?"] in again.text
        answers = {ids["What was damaged?"]: "One corner"}
        saved = browser.post(f"/i/{inspection_id}/details", data=answers, headers=csrf)
        assert saved.status_code == 200
    state = httpx.get(
        f"{live_server}/v1/inspection/{inspection_id}", headers=flow_template["headers"]
    ).json()
    assert {i["identifier"]: i["value"] for i in state["template"]["inputs"]}[
        ids["What was damaged?"]
    ] == ("One corner")


@pytest.mark.parametrize(
    ("locale", "welcome", "consent"),
    [
        ("pt_BR", "Boas-vindas", "Concordo em tirar fotos"),
        ("es_AR", "Te damos la bienvenida", "Acepto sacar fotos"),
        ("fr_FR", "Welcome", "I agree to take photos"),  # not a UI language: English
    ],
)
def test_pages_speak_the_inspection_locale(
    live_server: str, flow_template: dict[str, Any], locale: str, welcome: str, consent: str
) -> None:
    _inspection_id, tail = create(live_server, flow_template, locale=locale)
    with httpx.Client(base_url=live_server, follow_redirects=True) as browser:
        page = browser.get(f"/i/{tail}")
    assert page.status_code == 200
    assert f"<h1>{welcome}</h1>" in page.text and consent in page.text


def test_bad_input_gets_a_clear_answer_never_a_5xx(
    live_server: str, flow_template: dict[str, Any]
) -> None:
    inspection_id, tail = create(live_server, flow_template)
    with httpx.Client(base_url=live_server, follow_redirects=False) as browser:
        page = browser.get(f"/i/{tail}", follow_redirects=True)
        token = re.search(r'name="csrf-token" content="([^"]+)"', page.text)
        assert token is not None
        csrf = {"x-csrftoken": token.group(1)}
        base = f"/i/{inspection_id}"
        answers = [
            browser.get(f"{base}/step/photo-99"),
            browser.get(f"{base}/step/%00"),
            browser.get(f"/i/{'x' * 500}?code={'y' * 500}"),
            browser.post(f"{base}/photo", headers=csrf),
            browser.post(f"{base}/photo", json={"image": "no"}, headers=csrf),
            browser.post(f"{base}/photo", files={"data": (None, "{bad json")}, headers=csrf),
            browser.post(
                f"{base}/photo",
                files={"data": (None, '{"identifier": 5}'), "image": ("a.jpg", b"not a photo")},
                headers=csrf,
            ),
            browser.post(f"{base}/details?image=nope", data={"a": "b"}, headers=csrf),
            browser.post(f"{base}/details", data={"unknown": "x"}, headers=csrf),
            browser.post(
                f"{base}/damage", data={"action": "add", "part": "p" * 5000}, headers=csrf
            ),
            browser.post(f"{base}/finish", headers=csrf),
        ]
    statuses = [answer.status_code for answer in answers]
    assert all(status < 500 for status in statuses), statuses
    json_answers = [
        a for a in answers[3:7] if a.headers["content-type"].startswith("application/json")
    ]
    assert len(json_answers) == 4 and all(a.json().get("code") for a in json_answers)
    assert answers[-1].status_code == 409  # finishing with required answers missing
    assert "Answer the missing questions before sending." in answers[-1].text
    assert "Still to answer" in answers[-1].text


def test_fraud_signals_are_not_shown_to_the_consumer(
    live_server: str, flow_template: dict[str, Any]
) -> None:
    """`duplicate` and `edited` run on the built-in's photos and the company sees them; the
    consumer's photo status never names them (it would teach how to get past them)."""
    import io

    from PIL import Image

    headers = flow_template["headers"]
    created = httpx.post(
        f"{live_server}/v1/inspection/car",
        json={
            "templateId": "easy",
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": "a@example.com"},
        },
        headers=headers,
    ).json()
    photo = io.BytesIO()
    Image.linear_gradient("L").convert("RGB").resize((1024, 768)).save(photo, "JPEG")
    uploaded = httpx.post(
        f"{live_server}/v1/inspection/image/{created['productId']}",
        files={
            "image": ("front.jpg", photo.getvalue(), "image/jpeg"),
            "data": (None, json.dumps({"side": "front"})),
        },
        headers=headers,
    )
    assert uploaded.status_code == 201, uploaded.text
    shown = httpx.get(
        f"{live_server}/v1/inspection/{created['inspectionId']}", headers=headers
    ).json()
    ran = {
        v["validation"]
        for product in shown["products"]
        for image in product["images"]
        for v in image["validations"]
    }
    assert {"duplicate", "edited"} <= ran
    tail = created["magicLink"].split("/i/", 1)[1]
    with httpx.Client(base_url=live_server, follow_redirects=True) as browser:
        browser.get(f"/i/{tail}")
        status = browser.get(f"/i/{created['inspectionId']}/status").json()
    listed = {v["validation"] for image in status["images"] for v in image["validations"]}
    assert listed and not listed & {"duplicate", "edited"}


# --- the outbox's server half (server/consumer/outbox.py, docs/consumer.md "Offline") --------
# A photo, answers or the final send carrying the client's id as `Idempotency-Key` run once; a
# repeat (the answer was lost on the way back) gets the first answer and stores no second
# image, records no second attempt and finishes nothing twice.

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
