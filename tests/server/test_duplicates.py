"""Issue 23 §2 through the API: `duplicate` finds a photo already used in another inspection
of the company (resized and recompressed) and names that inspection; another company's
inspections, and the test/live split, are never searched; `edited` names an editor."""

from __future__ import annotations

import contextlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.evidence_photos import camera_jpeg, scene

TEMPLATE = """
template "Fraud signals"
    type: custom
    locales: en_US

image front
    validate duplicate
    validate edited

image back
    validate duplicate

verdict
    approve when true
"""


def make_template(live_server: str, key: str) -> str:
    made = httpx.post(
        f"{live_server}/v1/inspection/template",
        json={"source": TEMPLATE},
        headers={"x-api-key": key},
    )
    assert made.status_code == 201, made.text
    return str(made.json()["_id"])


@pytest.fixture
def template_id(live_server: str, company: dict[str, Any]) -> str:
    return make_template(live_server, company["testKey"])


def new_inspection(live_server: str, key: str, template_id: str) -> dict[str, Any]:
    body = {
        "templateId": template_id,
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
    }
    response = httpx.post(
        f"{live_server}/v1/inspection/custom", json=body, headers={"x-api-key": key}
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


def send(live_server: str, key: str, product_id: str, side: str, data: bytes) -> dict[str, str]:
    response = httpx.post(
        f"{live_server}/v1/inspection/image/{product_id}",
        files={"image": ("p.jpg", data, "image/jpeg"), "data": (None, json.dumps({"side": side}))},
        headers={"x-api-key": key},
        timeout=60,
    )
    assert response.status_code == 201, response.text
    return {v["validation"]: v for v in response.json()["validations"]}  # type: ignore[misc]


def test_a_photo_used_in_another_inspection_is_a_duplicate_naming_it(
    live_server: str, company: dict[str, Any], other_company: dict[str, Any], template_id: str
) -> None:
    key = company["testKey"]
    photo = scene(seed=11)
    first = new_inspection(live_server, key, template_id)
    checks = send(live_server, key, first["productId"], "front", camera_jpeg(photo))
    assert (checks["duplicate"]["valid"], checks["duplicate"]["result"]) == (True, None)
    assert checks["edited"]["valid"] is True

    # The same photo, resized and recompressed, a week later in another inspection.
    second = new_inspection(live_server, key, template_id)
    copy = camera_jpeg(photo.resize((1000, 750)), quality=60)
    checks = send(live_server, key, second["productId"], "front", copy)
    assert checks["duplicate"]["valid"] is False
    assert checks["duplicate"]["result"] == first["inspectionId"]
    # Another photo is new.
    checks = send(live_server, key, second["productId"], "back", camera_jpeg(scene(seed=12)))
    assert (checks["duplicate"]["valid"], checks["duplicate"]["result"]) == (True, None)

    # Live data and another company's inspections are never searched.
    live = new_inspection(live_server, company["liveKey"], template_id)
    checks = send(live_server, company["liveKey"], live["productId"], "front", copy)
    assert checks["duplicate"]["valid"] is True
    other_key = other_company["testKey"]
    elsewhere = new_inspection(live_server, other_key, make_template(live_server, other_key))
    checks = send(live_server, other_key, elsewhere["productId"], "front", copy)
    assert checks["duplicate"]["valid"] is True


def test_an_edited_photo_says_which_editor(
    live_server: str, company: dict[str, Any], template_id: str
) -> None:
    key = company["testKey"]
    inspection = new_inspection(live_server, key, template_id)
    photo = camera_jpeg(scene(seed=21), software="Adobe Photoshop 25.0 (Macintosh)")
    checks = send(live_server, key, inspection["productId"], "front", photo)
    assert checks["edited"]["valid"] is False
    assert checks["edited"]["result"] == "software: Adobe Photoshop 25.0 (Macintosh)"


# --- simultaneous uploads of one photo (issue 23) -----------------------------------------------


def send_all(live_server: str, key: str, uploads: list[tuple[str, str]], data: bytes) -> list[Any]:
    """Each (product, side) upload of `data` from its own thread, all at once."""
    start = threading.Barrier(len(uploads))

    def upload(target: tuple[str, str]) -> dict[str, str]:
        start.wait(timeout=60)
        return send(live_server, key, target[0], target[1], data)

    with ThreadPoolExecutor(max_workers=len(uploads)) as pool:
        return [checks["duplicate"] for checks in pool.map(upload, uploads)]


def test_simultaneous_uploads_of_one_photo_to_eight_inspections_find_each_other(
    live_server: str, company: dict[str, Any], template_id: str
) -> None:
    """Eight threads upload one photo to eight inspections of the company at once: exactly one
    is the first (new), each of the seven others names an inspection that already had it."""
    key = company["testKey"]
    inspections = [new_inspection(live_server, key, template_id) for _ in range(8)]
    results = send_all(
        live_server,
        key,
        [(inspection["productId"], "front") for inspection in inspections],
        camera_jpeg(scene(seed=31)),
    )
    assert sorted(result["valid"] for result in results) == [False] * 7 + [True]
    ids = {inspection["inspectionId"] for inspection in inspections}
    assert {result["result"] for result in results if not result["valid"]} <= ids


@pytest.mark.parametrize("where", ["two inspections", "one inspection"])
def test_two_uploads_of_one_photo_whose_look_ups_overlap_find_each_other(
    live_server: str,
    company: dict[str, Any],
    template_id: str,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
) -> None:
    """The worst interleaving, forced: each look-up waits (up to 3 s) for the other upload's
    look-up before returning. Look-ups made before the uploads' transactions both ran and both
    found nothing; under the company's lock the second waits for the first's commit and finds
    its photo."""
    from server.images import duplicates

    real_find = duplicates.find
    overlap = threading.Barrier(2)

    def find_then_wait(*args: Any) -> Any:
        found = real_find(*args)
        with contextlib.suppress(threading.BrokenBarrierError):
            overlap.wait(timeout=3)
        return found

    monkeypatch.setattr(duplicates, "find", find_then_wait)
    key = company["testKey"]
    first = new_inspection(live_server, key, template_id)
    if where == "two inspections":
        second = new_inspection(live_server, key, template_id)
        uploads = [(first["productId"], "front"), (second["productId"], "front")]
    else:
        uploads = [(first["productId"], "front"), (first["productId"], "back")]
    results = send_all(live_server, key, uploads, camera_jpeg(scene(seed=32)))
    assert sorted(result["valid"] for result in results) == [False, True]


def test_the_look_up_keeps_exactly_the_photos_within_near_bits(db: Any) -> None:
    """Through the real database (PostgreSQL measures the distance inside the index scan, SQLite
    in Python), one company per distance: a stored photo 0-12 bits from the new one, the sign
    bit among those changed, is found at its distance up to `NEAR_BITS` and not beyond; so is a
    stored central crop near the new whole photo; another company's photo never is."""
    import datetime as dt

    from runtime.photohash import NEAR_BITS
    from server.images import duplicates

    whole, center = 0xF0F0_1234_ABCD_8001, 0x8F0F_4321_DCBA_1008
    now = dt.datetime(2026, 11, 25, tzinfo=dt.UTC)
    distances = range(13)
    with db.session() as session:
        for bits in distances:
            changed = sum(1 << (63 - 5 * index) for index in range(bits))  # over every band
            session.add(
                duplicates.row(f"near-{bits}", True, "stored", "photo", whole ^ changed, 0, now)
            )
            session.add(
                duplicates.row(f"crop-{bits}", True, "stored", "crop", 0, whole ^ changed, now)
            )
        session.commit()
        for bits in distances:
            for kind in ("near", "crop"):
                found = duplicates.find(session, f"{kind}-{bits}", True, "new", (whole, center))
                expected = [bits] if bits <= NEAR_BITS else []
                assert [match.bits for match in found] == expected, (kind, bits)
        assert duplicates.find(session, "near-0", False, "new", (whole, center)) == []
        assert duplicates.find(session, "near-0", True, "stored", (whole, center)) == []


def test_a_template_without_duplicate_takes_no_lock_and_still_leaves_its_photo_findable(
    live_server: str,
    company: dict[str, Any],
    template_id: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The company's lock serializes uploads; a template that never runs `duplicate` does not
    take it (nor look up), but its photo's row is kept, so a later check finds it."""
    from server.images import duplicates

    locked: list[str] = []
    real_lock = duplicates.lock

    def counting_lock(session: Any, company_id: str, testing: bool) -> None:
        locked.append(company_id)
        real_lock(session, company_id, testing)

    monkeypatch.setattr(duplicates, "lock", counting_lock)
    key = company["testKey"]
    plain = httpx.post(
        f"{live_server}/v1/inspection/template",
        json={
            "source": TEMPLATE.replace("    validate duplicate\n", "").replace(
                '"Fraud signals"', '"No duplicate check"'
            )
        },
        headers={"x-api-key": key},
    )
    assert plain.status_code == 201, plain.text
    photo = camera_jpeg(scene(seed=41))
    unchecked = new_inspection(live_server, key, plain.json()["_id"])
    send(live_server, key, unchecked["productId"], "front", photo)
    assert locked == []
    checked = new_inspection(live_server, key, template_id)
    result = send(live_server, key, checked["productId"], "front", photo)["duplicate"]
    assert locked == [company["companyId"]]
    assert (result["valid"], result["result"]) == (False, unchecked["inspectionId"])
