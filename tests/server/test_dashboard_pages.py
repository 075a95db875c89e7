"""Dashboard pages over real HTTP: the role table of docs/dashboard.md checked cell by cell
against the pages (a refused action answers the 403 page), sign-in and CSRF, test/live data
separation, and the template editor's diagnostics endpoint."""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from server.dashboard import accounts
from server.dashboard.permissions import PERMISSIONS, ROLES
from tests.http_threads import serve_in_thread

PASSWORD = "dashboard password"
#: A template whose check misspells its variable (`scor`): E020 with "did you mean `score`".
TYPO = """template "Fleet check"
    type: custom
    locales: en_US

variable score: numeric = 100

check good_score
    valid when: scor > 50

verdict
    disapprove "The score is too low" when not checks.good_score
"""
DOCS = Path(__file__).parents[2] / "docs" / "dashboard.md"


def csrf_of(html: str) -> str:
    found = re.search(r'<meta name="csrf-token" content="([^"]+)"', html)
    assert found is not None, html[:500]
    return found.group(1)


class Browserish:
    """An httpx client that keeps cookies and sends the page's CSRF token with every post."""

    def __init__(self, base_url: str) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=30, follow_redirects=False)
        self.token = ""

    def get(self, path: str) -> httpx.Response:
        response = self.http.get(path)
        if "csrf-token" in response.text:
            self.token = csrf_of(response.text)
        return response

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        if not self.token:
            self.get("/dashboard/sign-in")
        headers = {"x-csrftoken": self.token, **kwargs.pop("headers", {})}
        return self.http.post(path, headers=headers, **kwargs)

    def sign_in(self, email: str, password: str = PASSWORD) -> httpx.Response:
        self.get("/dashboard/sign-in")
        signed = self.post("/dashboard/sign-in", data={"email": email, "password": password})
        if signed.status_code == 303:
            # The session's own token from now on (CSRF tokens are bound to the session).
            self.get("/dashboard/inspections")
        return signed


@pytest.fixture(scope="module")
def team(db: Any) -> dict[str, Any]:
    from server.auth import create_company

    company = create_company(db, f"Team {secrets.token_hex(3)}", ["m"])
    emails = {}
    for role in ROLES:
        email = f"{role}-{secrets.token_hex(3)}@example.com"
        accounts.create_account(db, company["companyId"], email, role, PASSWORD)
        emails[role] = email
    return {**company, "emails": emails}


def _signed_in_as(live_server: str, team: dict[str, Any], role: str) -> Browserish:
    client = Browserish(live_server)
    response = client.sign_in(team["emails"][role])
    assert response.status_code == 303, response.text
    return client


@pytest.fixture
def browser_for(live_server: str, team: dict[str, Any]) -> Iterator[Callable[[str], Browserish]]:
    opened: list[Browserish] = []

    def make(role: str) -> Browserish:
        opened.append(_signed_in_as(live_server, team, role))
        return opened[-1]

    yield make
    for client in opened:
        client.http.close()


@pytest.fixture(scope="module")
def signed_in(live_server: str, team: dict[str, Any]) -> Iterator[Callable[[str], Browserish]]:
    """`signed_in(role)`: one signed-in session per role for the whole module, for the role
    table's cells, whose requests have no lasting effect: signing in (an argon2 check) for each
    of its 76 cells took most of their time. Sign-in itself is tested on its own below."""
    opened: dict[str, Browserish] = {}

    def get(role: str) -> Browserish:
        if role not in opened:
            opened[role] = _signed_in_as(live_server, team, role)
        return opened[role]

    yield get
    for client in opened.values():
        client.http.close()


@pytest.fixture(scope="module")
def inspection_id(live_server: str, team: dict[str, Any]) -> str:
    body = {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "car": {"plate": "AB123CD"},
    }
    response = httpx.post(
        f"{live_server}/v1/inspection/car", json=body, headers={"x-api-key": team["testKey"]}
    )
    assert response.status_code == 201, response.text
    return str(response.json()["inspectionId"])


def _documented_table() -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    header: list[str] = []
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| action"):
            header = cells[1:]
        elif header and line.startswith("| ") and not line.startswith("|--"):
            table[cells[0]] = {
                role for role, cell in zip(header, cells[1:], strict=True) if cell == "yes"
            }
        elif header and not line.startswith("|"):
            break
    return table


def test_the_documented_table_is_the_code_table() -> None:
    documented = _documented_table()
    assert documented == {action: set(roles) for action, roles in PERMISSIONS.items()}


#: For each action, a request that does it (without lasting effect) and the answer when allowed.
def _attempt(client: Browserish, action: str, inspection: str) -> int:
    if action == "inspections.view":
        return client.get("/dashboard/inspections").status_code
    if action == "inspections.share":
        return client.post(f"/dashboard/inspections/{inspection}/share").status_code
    if action == "templates.view":
        return client.get("/dashboard/templates").status_code
    if action == "templates.simulate":
        body = {"source": "nope", "events": "{}"}
        return client.post("/dashboard/templates/simulate", json=body).status_code
    if action == "templates.edit":  # a source that does not compile: 422 when allowed
        return client.post("/dashboard/templates/save", data={"source": "x"}).status_code
    if action == "developers.view":
        return client.get("/dashboard/developers").status_code
    if action == "developers.revoke_key":  # the confirmation page, nothing revoked
        return client.get("/dashboard/developers/revoke?mode=test").status_code
    if action == "developers.webhooks":  # retrying an unknown delivery: a message, 200
        return client.post("/dashboard/developers/deliveries/msg_unknown/retry").status_code
    if action == "developers.apps":
        return client.get("/dashboard/developers/apps").status_code
    if action == "authorizations.view":
        return client.get("/dashboard/authorizations").status_code
    if action == "authorizations.manage_company":
        return client.get("/dashboard/authorizations/company").status_code
    if action == "members.view":
        return client.get("/dashboard/members").status_code
    if action == "members.manage":  # an invalid address: 400 when allowed
        data = {"email": "not an address", "role": "viewer"}
        return client.post("/dashboard/members/invite", data=data).status_code
    if action == "members.manage_owners":  # inviting an owner with an invalid address
        data = {"email": "not an address", "role": "owner"}
        return client.post("/dashboard/members/invite", data=data).status_code
    if action == "review.view":
        return client.get("/dashboard/review").status_code
    if action == "review.decide":  # claiming a case that is not in review: 409 when allowed
        return client.post(f"/dashboard/review/{inspection}/claim").status_code
    if action == "review.retake":  # a retake naming no photo: 400 when allowed
        return client.post(f"/dashboard/review/{inspection}/retake", data={}).status_code
    if action == "review.export":
        return client.get("/dashboard/review/decisions.csv").status_code
    raise AssertionError(f"no request exercises {action}")


ALLOWED_STATUS = {
    "templates.edit": 422,
    "members.manage": 400,
    "members.manage_owners": 400,
    "review.decide": 409,
    "review.retake": 400,
}


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("action", sorted(PERMISSIONS))
def test_every_cell_of_the_role_table(
    signed_in: Callable[[str], Browserish], inspection_id: str, role: str, action: str
) -> None:
    client = signed_in(role)
    status = _attempt(client, action, inspection_id)
    if role in PERMISSIONS[action]:
        assert status == ALLOWED_STATUS.get(action, 200), (role, action, status)
    else:
        assert status == 403, (role, action, status)


def test_refused_page_is_a_page(browser_for: Callable[[str], Browserish]) -> None:
    response = browser_for("viewer").get("/dashboard/developers")
    assert response.status_code == 403
    assert "text/html" in response.headers["content-type"]
    assert "Not allowed" in response.text and "viewer" in response.text


def test_pages_need_a_session(live_server: str) -> None:
    with httpx.Client(base_url=live_server) as http:
        for path in ("/dashboard/", "/dashboard/inspections", "/dashboard/developers"):
            response = http.get(path, follow_redirects=False)
            assert response.status_code == 303 and response.headers["location"].endswith(
                "/dashboard/sign-in"
            )


def test_sign_in_form_posts_need_the_csrf_token(live_server: str, team: dict[str, Any]) -> None:
    with httpx.Client(base_url=live_server) as http:
        http.get("/dashboard/sign-in")
        response = http.post(
            "/dashboard/sign-in", data={"email": team["emails"]["owner"], "password": PASSWORD}
        )
        assert response.status_code == 403


def test_wrong_password_shows_the_form_again(live_server: str, team: dict[str, Any]) -> None:
    client = Browserish(live_server)
    response = client.sign_in(team["emails"]["viewer"], "not the password")
    client.http.close()
    assert response.status_code == 401
    assert "Wrong email or password." in response.text
    assert 'for="email">Email<' in response.text and 'for="password">Password<' in response.text


def test_account_answers_speak_the_page_language(live_server: str, team: dict[str, Any]) -> None:
    """Issue 24: what the account services refuse, and what a page says after an action, come
    from the catalog in the member's (or the browser's) language, not the service's English."""
    client = Browserish(live_server)
    client.http.headers["accept-language"] = "es-AR,es;q=0.9"
    refused = client.sign_in(team["emails"]["viewer"], "not the password")
    assert refused.status_code == 401 and "Correo o contraseña incorrectos." in refused.text
    client.http.headers["accept-language"] = "pt-BR"
    client.sign_in(team["emails"]["owner"])
    invited = client.post(
        "/dashboard/members/invite", data={"email": "not an address", "role": "viewer"}
    )
    client.http.close()
    assert "Esse não é um endereço de e-mail válido." in invited.text


def test_sign_out_revokes_the_session(browser_for: Callable[[str], Browserish]) -> None:
    client = browser_for("editor")
    assert client.get("/dashboard/inspections").status_code == 200
    assert client.post("/dashboard/sign-out").status_code == 303
    assert client.get("/dashboard/inspections").status_code == 303


def test_test_and_live_data_do_not_mix(
    browser_for: Callable[[str], Browserish], inspection_id: str
) -> None:
    client = browser_for("viewer")
    assert inspection_id in client.get("/dashboard/inspections").text
    assert client.get(f"/dashboard/inspections/{inspection_id}").status_code == 200
    assert client.post("/dashboard/mode", data={"mode": "live"}).status_code == 303
    live = client.get("/dashboard/inspections")
    assert "Live data" in live.text and inspection_id not in live.text
    assert client.get(f"/dashboard/inspections/{inspection_id}").status_code == 404


def test_api_filters_and_paging(
    browser_for: Callable[[str], Browserish], live_server: str, team: dict[str, Any]
) -> None:
    body = {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "c@example.com"},
        "car": {"plate": "PG111PG"},
    }
    for _ in range(2):
        made = httpx.post(
            f"{live_server}/v1/inspection/car", json=body, headers={"x-api-key": team["testKey"]}
        )
        assert made.status_code == 201
    client = browser_for("viewer")
    refused = client.get("/dashboard/inspections?limit=1000")
    assert refused.status_code == 400 and "limit" in refused.text
    first = client.get("/dashboard/inspections?plate=PG111PG&limit=1")
    assert "2 inspections · page 1" in first.text
    assert 'href="/dashboard/inspections?plate=PG111PG&amp;page=2&amp;limit=1" rel="next"' in (
        first.text
    )
    second = client.get("/dashboard/inspections?plate=PG111PG&limit=1&page=2")
    assert "page 2" in second.text and 'rel="prev"' in second.text
    assert 'rel="next"' not in second.text
    nothing = client.get("/dashboard/inspections?plate=NOPE").text
    assert "0 inspections" in nothing and "No inspection matches." in nothing


def test_diagnostics_endpoint_gives_caret_and_suggestion(
    browser_for: Callable[[str], Browserish],
) -> None:
    client = browser_for("viewer")
    found = client.post("/dashboard/templates/check", json={"source": TYPO}).json()
    [diagnostic] = found["diagnostics"]
    assert diagnostic["code"] == "E020" and diagnostic["suggestion"] == "score"
    assert diagnostic["line"] == 8 and diagnostic["sourceLine"] == "    valid when: scor > 50"
    assert diagnostic["caret"] == " " * 16 + "^^^^"
    fixed = TYPO.replace("scor ", "score ")
    assert client.post("/dashboard/templates/check", json={"source": fixed}).json() == {
        "diagnostics": []
    }


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """A local webhook endpoint answering 200, recording each request's headers."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            seen.append({key.lower(): value for key, value in self.headers.items()})
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    serve_in_thread(server)
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", seen
    server.shutdown()
    server.server_close()


def _run_jobs(db: Any, settings: Any) -> None:
    from server import jobs
    from server.app import worker_jobs

    config = jobs.WorkerConfig(lease_seconds=5.0, poll_seconds=0.02, backoff_base_seconds=0.05)
    while jobs.run_once(db, settings, config, registry=worker_jobs(settings)):
        pass


def test_webhook_deliveries_listed_and_retried(
    db: Any,
    settings: Any,
    live_server: str,
    team: dict[str, Any],
    browser_for: Callable[[str], Browserish],
    receiver: tuple[str, list[dict[str, str]]],
) -> None:
    url, seen = receiver
    headers = {"x-api-key": team["testKey"]}
    subscribed = httpx.post(
        f"{live_server}/v1/notification/webhook",
        json={"endpoint": url, "events": ["inspection_created"]},
        headers=headers,
    )
    assert subscribed.status_code in (200, 201), subscribed.text
    body = {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "b@example.com"},
        "car": {"plate": "ZZ999ZZ"},
    }
    created = httpx.post(f"{live_server}/v1/inspection/car", json=body, headers=headers)
    assert created.status_code == 201
    _run_jobs(db, settings)
    assert len(seen) == 1
    client = browser_for("admin")
    page = client.get("/dashboard/developers").text
    assert url in page and "inspection_created" in page and "done (HTTP 200)" in page
    delivery_id = re.search(r"/dashboard/developers/deliveries/(msg_[0-9a-f]+)/retry", page)
    assert delivery_id is not None
    retried = client.post(f"/dashboard/developers/deliveries/{delivery_id.group(1)}/retry")
    assert retried.status_code == 200 and "The delivery is queued again." in retried.text
    _run_jobs(db, settings)
    assert len(seen) == 2 and seen[0]["webhook-id"] == seen[1]["webhook-id"]
    assert "<td>2</td>" in client.get("/dashboard/developers").text  # two attempts listed
    client.post("/dashboard/mode", data={"mode": "live"})
    live_page = client.get("/dashboard/developers").text
    assert url not in live_page and delivery_id.group(1) not in live_page


def test_a_photo_shows_what_it_was_judged_on(
    live_server: str, team: dict[str, Any], browser_for: Callable[[str], Browserish]
) -> None:
    """Issue 23 §1: the inspection page shows each photo's capture time and its source, its
    place and its source, the device and the upload attempt (the `capture.html` partial)."""
    import datetime as dt
    import json

    from tests.evidence_photos import camera_jpeg, scene

    headers = {"x-api-key": team["testKey"]}
    body = {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "car": {"plate": "AB123CD"},
    }
    created = httpx.post(f"{live_server}/v1/inspection/car", json=body, headers=headers).json()
    photo = camera_jpeg(
        taken=dt.datetime(2026, 11, 20, 9, 50), offset="-03:00", gps=(-34.6037, -58.3816)
    )
    for data, declared in (
        (scene(seed=4), {"side": "back", "date": "2026-11-20T12:40:00Z"}),
        (photo, {"side": "front"}),
        (photo, {"side": "front"}),  # a retake: attempt 2
    ):
        content = data if isinstance(data, bytes) else camera_jpeg(data, make=None, model=None)
        answer = httpx.post(
            f"{live_server}/v1/inspection/image/{created['productId']}",
            files={"image": ("p.jpg", content, "image/jpeg"), "data": (None, json.dumps(declared))},
            headers=headers,
        )
        assert answer.status_code == 201, answer.text
    page = browser_for("viewer").get(f"/dashboard/inspections/{created['inspectionId']}").text
    flat = " ".join(re.sub(r"<[^>]+>", " ", page).split())
    # 09:50 at UTC-3 by the photo's own EXIF: 12:50 UTC.
    assert re.search(r"Taken Nov 20, 2026, 12:50:00\W+PM UTC · from the photo \(EXIF\)", flat)
    assert "Place -34.60370, -58.38160 · from the photo (EXIF)" in flat
    assert "Device Motorola moto g(8)" in flat
    assert "Upload attempt 2" in flat
    declared = r"Taken Nov 20, 2026, 12:40:00\W+PM UTC · declared by the uploading device"
    assert re.search(declared, flat)
    assert "Place not known" in flat
    assert "Device not stated in the photo" in flat


def test_the_editor_checks_and_saves_a_template_that_includes_a_shared_file(
    browser_for: Callable[[str], Browserish], team: dict[str, Any], live_server: str
) -> None:
    """`include "NAME"` in the dashboard's editor reads the company's shared files, as the
    API's save does (issue 25); a problem inside one names the file."""
    api = httpx.Client(base_url=live_server, headers={"x-api-key": team["testKey"]})
    shared = api.put(
        "/v1/inspection/shared/editor-common",
        content=b"let worn = inputs.km > 250000\ninput km\n    type: numeric\n",
        headers={"content-type": "text/plain"},
    )
    assert shared.status_code == 200, shared.text
    source = (
        'include "editor-common"\ntemplate "Editor include"\n    type: car\n'
        'image front\n    label: "Front"\nverdict\n    disapprove "Worn" when worn\n'
    )
    client = browser_for("editor")
    assert client.post("/dashboard/templates/check", json={"source": source}).json() == {
        "diagnostics": []
    }
    saved = client.post("/dashboard/templates/save", data={"source": source})
    assert saved.status_code == 303, saved.text
    template_id = saved.headers["location"].split("/templates/")[1].split("?")[0]
    manifest = api.get(f"/v1/inspection/template/{template_id}").json()
    assert [i["label"] for i in manifest["inputs"]] == ["km"]

    api.put(
        "/v1/inspection/shared/editor-broken",
        content=b"let worn = inputs.kms > 1\n",
        headers={"content-type": "text/plain"},
    )
    broken = source.replace("editor-common", "editor-broken")
    [found] = client.post("/dashboard/templates/check", json={"source": broken}).json()[
        "diagnostics"
    ]
    assert found["code"] == "E020" and found["file"] == "editor-broken"
    assert found["message"].startswith("in the shared file editor-broken:1:")
    assert found["sourceLine"] == ""
    api.close()


def test_the_shared_files_page_lists_opens_and_saves_a_companys_shared_file(
    browser_for: Callable[[str], Browserish], team: dict[str, Any], live_server: str
) -> None:
    editor = browser_for("editor")
    new = editor.get("/dashboard/templates/shared?name=page-common")
    assert new.status_code == 200 and "Shared file: page-common" in new.text
    saved = editor.post(
        "/dashboard/templates/shared",
        data={"name": "page-common", "source": "let page_limit = 3\n"},
    )
    assert saved.status_code == 200 and "Saved." in saved.text
    listing = editor.get("/dashboard/templates").text
    assert "Shared files" in listing
    assert 'href="/dashboard/templates/shared?name=page-common"' in listing
    opened = editor.get("/dashboard/templates/shared?name=page-common").text
    assert "let page_limit = 3" in opened
    # The API reads what the page saved.
    with httpx.Client(base_url=live_server, headers={"x-api-key": team["testKey"]}) as api:
        assert api.get("/v1/inspection/shared/page-common").text == "let page_limit = 3\n"

    refused = editor.post(
        "/dashboard/templates/shared",
        data={"name": "page-photos", "source": 'image front\n    label: "Front"\n'},
    )
    assert refused.status_code == 422
    assert "[E047]" in refused.text and "image front" in refused.text
    empty = editor.post("/dashboard/templates/shared", data={"name": "x", "source": " "})
    assert empty.status_code == 400 and "The shared file is empty." in empty.text

    viewer = browser_for("viewer")
    assert viewer.get("/dashboard/templates/shared?name=page-common").status_code == 200
    assert (
        "Save the shared file"
        not in viewer.get("/dashboard/templates/shared?name=page-common").text
    )
    denied = viewer.post(
        "/dashboard/templates/shared", data={"name": "page-common", "source": "let a = 1\n"}
    )
    assert denied.status_code == 403


def test_the_review_before_a_save_and_a_save_with_tests(
    browser_for: Callable[[str], Browserish],
) -> None:
    """Issue 33: `/dashboard/templates/review` answers what the save would (nothing stored):
    test results with each case's line in the tests field, the example's facts; tests that are
    not JSON or not a tests document are a problem, never a 5xx; the save stores the field's
    cases with the revision, and refuses a broken field with the editor and its text kept."""
    from tests.server.test_template_tests_api import HIGH, LOW, MILEAGE

    client = browser_for("editor")
    source = MILEAGE.format(n="dashboard", limit=100000)
    tests = json.dumps({"cases": [LOW, {**HIGH, "expect": {"veredict": "approved"}}]}, indent=2)
    body = {"source": source, "tests": tests, "template_id": ""}
    answer = client.post("/dashboard/templates/review", json=body).json()
    assert "changes" not in answer  # a new template: nothing to compare with
    results = answer["testResults"]
    assert [(c["passed"], c["at"]) for c in results["cases"]] == [(True, 3), (False, 29)]
    assert tests.splitlines()[28] == "    {"
    broken = {
        "{not json": "The template tests are not JSON: line 1, column 2.",
        '{"cases": [{"name": "x"}]}': "Case 1 (x): Its events are a list of at least one event.",
    }
    for text, problem in broken.items():
        refused = client.post("/dashboard/templates/review", json={**body, "tests": text})
        assert refused.status_code == 200 and refused.json()["problem"] == problem
    bad = client.post("/dashboard/templates/save", data={"source": source, "tests": "{oops"})
    assert bad.status_code == 400
    assert "The template tests are not JSON: line 1, column 2." in bad.text
    assert "{oops" in bad.text
    saved = client.post("/dashboard/templates/save", data={"source": source, "tests": tests})
    assert saved.status_code == 303, saved.text
    template_id = saved.headers["location"].split("/templates/")[1].split("?")[0]
    stricter = {**body, "source": source.replace("100000", "1000"), "template_id": template_id}
    review = client.post("/dashboard/templates/review", json=stricter).json()
    by_old = review["changes"]["differences"][1]
    assert by_old["answer"] == "differs"
    assert by_old["facts"] and set(by_old["facts"][0]) == {"name", "value", "text"}
    assert by_old["facts"][0]["name"] == "mileage"
    assert by_old["facts"][0]["text"].startswith("mileage = ")
    page = client.get(f"/dashboard/templates/{template_id}").text
    assert "a low mileage is approved" in page  # the saved cases fill the tests field


def test_the_review_words_failing_cases_in_the_members_language(
    browser_for: Callable[[str], Browserish],
) -> None:
    """Issue 33: a failing case's problems, a tests field that is not one and an example
    inspection's facts are answered in the page's language (es_AR here), worded from the
    runtime's codes and values: no English sentence of the runtime reaches the review."""
    from tests.server.test_template_tests_api import HIGH, LOW, MILEAGE

    client = browser_for("editor")
    client.http.headers["accept-language"] = "es-AR,es;q=0.9"
    source = MILEAGE.format(n="palabras", limit=100000)
    wrong = {**HIGH, "expect": {"veredict": "approved", "reasons": ["Demasiados kilómetros"]}}
    unknown = {**LOW, "name": "una pregunta que no existe"}
    unknown["events"] = [
        {"event": "create", "body": {"inputs": [{"input": "kilometraje", "value": 1}]}},
        {"event": "finish"},
    ]
    tests = json.dumps({"cases": [wrong, unknown]})
    body = {"source": source, "tests": tests, "template_id": ""}
    results = client.post("/dashboard/templates/review", json=body).json()["testResults"]
    assert results["missedTexts"] == [
        "la línea approve 14 cuando aprueba",
        "la línea approve 14 cuando no se cumple (otherwise)",
    ]
    cases = results["cases"]
    assert cases[0]["failures"][0] == {
        "code": "veredict_differs", "actual": "disapproved", "expected": "approved"
    }  # fmt: skip
    assert cases[0]["texts"] == [
        "Veredicto: Desaprobada; se esperaba: Aprobada.",
        "Los motivos fueron: “Too many kilometres”; se esperaban exactamente: "
        "“Demasiados kilómetros”.",
    ]
    assert cases[1]["texts"] == [
        "El evento 1 (create) nombra una pregunta que la plantilla no tiene: kilometraje.",
        "El evento 2 (finish) viene antes del create: el primer evento tiene que ser un create.",
        "Estado: sin inspección; se esperaba: Completada.",
        "Veredicto: Sin veredicto; se esperaba: Aprobada.",
    ]
    refused = client.post("/dashboard/templates/review", json={**body, "tests": "[1]"})
    document = 'Las pruebas de la plantilla son {"cases": [...]} y nada más.'
    assert refused.json() == {"problem": document}
    long = client.post("/dashboard/templates/review", json={**body, "source": "#" * 200_001})
    assert long.json() == {"problem": "El código de la plantilla tiene más de 200.000 caracteres."}
    saved = client.post("/dashboard/templates/save", data={"source": source, "tests": "{oops"})
    assert saved.status_code == 400
    assert "Las pruebas de la plantilla no son JSON válido: línea 1, columna 2." in saved.text
