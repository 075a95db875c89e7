"""What an app holds is its own: two apps built in one process, with different secrets and
settings, share no signing secret, job registry or analyzers (issue 38: `tokens._secret`,
`jobs._registry` and `vision.ANALYZERS` were module globals the last app factory set)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar.testing import TestClient

from server.app import create_app
from server.db import Database
from server.deps import Services
from server.settings import Settings

CAR = {
    "templateId": "easy",
    "locale": "en_US",
    "delivery": {"channel": "sms", "destination": "+5491100000000"},
}


@pytest.fixture
def two_apps(settings: Settings, db: Database) -> Iterator[tuple[TestClient[Any], TestClient[Any]]]:
    """App A with the test settings; app B beside it with another secret and vision on."""
    other = settings.model_copy(update={"secret": "another secret " + "b" * 32, "vision": True})
    first, second = create_app(settings, db=db), create_app(other, db=db)
    with TestClient(first) as a, TestClient(second) as b:
        yield a, b


def services_of(client: TestClient[Any]) -> Services:
    found: Services = client.app.state.services
    return found


def test_a_token_of_one_app_is_refused_by_the_other(
    two_apps: tuple[TestClient[Any], TestClient[Any]], test_headers: dict[str, str]
) -> None:
    a, b = two_apps
    created = a.post("/v1/inspection/car", json=CAR, headers=test_headers)
    assert created.status_code == 201, created.text
    inspection_id, product_id = created.json()["inspectionId"], created.json()["productId"]

    # An upload token of A opens A's upload route and is refused by B's.
    answer = a.post(f"/v1/inspection/image/token/{product_id}", headers=test_headers)
    assert answer.status_code == 200, answer.text
    token = {"x-image-token": answer.json()["token"]}
    photo = {"image": ("front.jpg", b"not a photo", "image/jpeg")}
    data = {"data": '{"side": "front"}'}
    refused = b.post(f"/v1/inspection/image/{product_id}", files=photo, data=data, headers=token)
    assert (refused.status_code, refused.json()["code"]) == (401, "invalid_token")
    accepted = a.post(f"/v1/inspection/image/{product_id}", files=photo, data=data, headers=token)
    assert accepted.status_code != 401, accepted.text  # past the token (the bytes are refused)

    # A presigned link signed by B opens B's view and not A's, and the other way round.
    for signer, reader in ((a, b), (b, a)):
        link = signer.post(f"/v1/inspection/presign/detail/{inspection_id}", headers=test_headers)
        assert link.status_code == 200, link.text
        token_of_signer = link.json()["accessToken"]
        url = f"/v1/inspection/presign/detail/{inspection_id}?token={token_of_signer}"
        assert signer.get(url, headers={"accept": "application/json"}).status_code == 200
        foreign = reader.get(url, headers={"accept": "application/json"})
        assert (foreign.status_code, foreign.json()["code"]) == (403, "invalid_link")


def test_each_app_holds_its_own_jobs_and_analyzers(
    two_apps: tuple[TestClient[Any], TestClient[Any]],
    db: Database,
    test_headers: dict[str, str],
) -> None:
    a, b = (services_of(client) for client in two_apps)
    assert a.settings.secret != b.settings.secret
    assert a.jobs is not b.jobs and a.jobs.kinds.keys() == b.jobs.kinds.keys()
    # Vision off in A: no analyzer, whatever B (vision on) loaded in this same process.
    assert a.analyzers == {}
    answers = [client.get("/v1/capabilities", headers=test_headers) for client in two_apps]
    assert [answer.status_code for answer in answers] == [200, 200]
    routes = [answer.json()["validations"] for answer in answers]
    if not b.analyzers:
        pytest.skip("the vision extra is not installed: no app here has an analyzer")
    assert (routes[0]["plate"], routes[1]["plate"]) == ("person", "local")
    # A third app with vision on makes analyzers of its own, not B's.
    third: Services = create_app(b.settings, db=db).state.services
    assert third.analyzers.keys() == b.analyzers.keys()
    assert all(third.analyzers[name] is not b.analyzers[name] for name in b.analyzers)
