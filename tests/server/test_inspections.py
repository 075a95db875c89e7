"""Inspection endpoints over real HTTP: create, read, update, product update, start, finish,
damage; every error code of creation; revisions never touching existing inspections."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import runtime
from server.auth import consumed_inspections
from server.db import Database
from server.inspections.service import load
from server.inspections.tables import InspectionRecord

BUILTIN_CAR_EASY = "5f0c0a000000000000000001"

FLEET = """\
template "Fleet check{suffix}"
    type: car
    locales: en_US

variable score: numeric = {score}

image front
    label: "Front"
    validate plate, optional
    feature damage_declaration

input mileage
    type: numeric
    label: "Mileage"
    asked at: create
    required
    minimum: 0

input notes
    type: text
    label: "Notes"
    asked at: update

feature damage_declaration: on

on damage declared
    set score to score - 10

verdict
    disapprove "Too much damage" when score < 60
    approve when score > 50
"""


def fleet_source(suffix: str = "", score: int = 100) -> str:
    return FLEET.format(suffix=suffix, score=score)


def make_template(client: httpx.Client, headers: dict[str, str], source: str) -> dict[str, Any]:
    response = client.post(
        "/v1/inspection/template",
        content=source.encode(),
        headers={**headers, "content-type": "text/plain"},
    )
    assert response.status_code == 201, response.text
    template: dict[str, Any] = response.json()
    return template


def input_id(template: dict[str, Any], label: str) -> str:
    return str(next(i["identifier"] for i in template["inputs"] if i["label"] == label))


def creation(template_id: str = "easy", **extra: Any) -> dict[str, Any]:
    return {
        "templateId": template_id,
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "driver@example.com"},
        **extra,
    }


@pytest.fixture
def fleet(client: httpx.Client, test_headers: dict[str, str]) -> dict[str, Any]:
    return make_template(client, test_headers, fleet_source())


def fleet_body(fleet: dict[str, Any], mileage: Any = 1200, **extra: Any) -> dict[str, Any]:
    return creation(
        fleet["_id"], inputs=[{"identifier": input_id(fleet, "Mileage"), "value": mileage}], **extra
    )


def create(
    client: httpx.Client, headers: dict[str, str], body: dict[str, Any], kind: str = "car"
) -> dict[str, Any]:
    response = client.post(f"/v1/inspection/{kind}", json=body, headers=headers)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def error_of(response: httpx.Response) -> tuple[int, str]:
    body = response.json()
    assert body["status"] == response.status_code
    assert isinstance(body["description"], str) and body["description"]
    return response.status_code, body["code"]


def test_create_with_alias_then_read(
    client: httpx.Client, live_server: str, test_headers: dict[str, str]
) -> None:
    created = create(client, test_headers, creation("easy", car={"plate": "AB123CD"}))
    assert set(created) == {"inspectionId", "productId", "productIds", "message", "magicLink"}
    assert created["productIds"] == [created["productId"]]  # always answered (issue 21)
    inspection_id = created["inspectionId"]
    assert len(inspection_id) == 24
    assert created["magicLink"].startswith(f"{live_server}/i/{inspection_id}?code=")
    assert len(created["magicLink"].split("code=")[1]) >= 32

    response = client.get(f"/v1/inspection/{inspection_id}", headers=test_headers)
    assert response.status_code == 200
    inspection = response.json()
    assert inspection["_id"] == inspection_id
    assert inspection["type"] == "car"
    assert inspection["status"] == "created"
    assert inspection["veredict"] == "not_defined"
    assert inspection["testing"] is True
    assert inspection["template"]["_id"] == BUILTIN_CAR_EASY
    assert inspection["products"][0]["_id"] == created["productId"]
    assert inspection["products"][0]["car"]["plate"] == "AB123CD"


def test_create_by_builtin_id_and_custom_id(
    client: httpx.Client, test_headers: dict[str, str], fleet: dict[str, Any]
) -> None:
    by_id = create(client, test_headers, creation(BUILTIN_CAR_EASY))
    assert (
        client.get(f"/v1/inspection/{by_id['inspectionId']}", headers=test_headers).json()[
            "template"
        ]["_id"]
        == BUILTIN_CAR_EASY
    )
    custom = create(client, test_headers, fleet_body(fleet))
    read = client.get(f"/v1/inspection/{custom['inspectionId']}", headers=test_headers).json()
    assert read["template"]["_id"] == fleet["_id"]
    assert read["template"]["name"] == fleet["name"]
    assert {"name": "score", "value": 100} in read["variables"]


@pytest.mark.parametrize(
    ("kind", "template_id", "expected"),
    [
        ("car", "nope", (400, "invalid_template_id")),
        ("car", "", (400, "invalid_template_id")),
        ("car", "5F0C0A000000000000000001", (400, "invalid_template_id")),
        ("moto", "damage", (400, "invalid_template_id")),
        ("bike", "deep", (400, "invalid_template_id")),
        ("car", "0" * 24, (404, "not_found_template")),
        ("moto", BUILTIN_CAR_EASY, (400, "wrong_template_provided")),
        ("boat", "easy", (400, "invalid_inspection_type")),
    ],
)
def test_template_reference_errors(
    client: httpx.Client,
    test_headers: dict[str, str],
    kind: str,
    template_id: str,
    expected: tuple[int, str],
) -> None:
    response = client.post(
        f"/v1/inspection/{kind}", json=creation(template_id), headers=test_headers
    )
    assert error_of(response) == expected


def test_missing_template_id(client: httpx.Client, test_headers: dict[str, str]) -> None:
    body = creation()
    del body["templateId"]
    response = client.post("/v1/inspection/car", json=body, headers=test_headers)
    assert error_of(response) == (400, "invalid_template_id")


def test_custom_template_of_another_type(
    client: httpx.Client, test_headers: dict[str, str], fleet: dict[str, Any]
) -> None:
    response = client.post("/v1/inspection/moto", json=fleet_body(fleet), headers=test_headers)
    assert error_of(response) == (400, "wrong_template_provided")


def test_body_errors(
    client: httpx.Client, test_headers: dict[str, str], fleet: dict[str, Any]
) -> None:
    def post(body: Any) -> tuple[int, str]:
        return error_of(client.post("/v1/inspection/car", json=body, headers=test_headers))

    missing = fleet_body(fleet)
    del missing["inputs"]
    assert post(missing) == (400, "input_value_not_provided")
    assert post(fleet_body(fleet, mileage=-5)) == (400, "invalid_input_value")
    assert post(fleet_body(fleet, mileage="lots")) == (400, "invalid_input_value")
    assert post(creation(locale="english")) == (400, "invalid_locale")
    assert post(creation(initialStatus="completed")) == (400, "invalid_initial_status")
    assert post(creation(callbackURL="ftp://example.com/hook")) == (400, "invalid_callback_url")
    assert post(creation(producer={"internalId": "nobody"})) == (404, "not_found_user")
    assert post(creation(producer="member-1")) == (400, "invalid_body")
    assert post(creation(car="AB123CD")) == (400, "invalid_body")
    assert post([creation()]) == (400, "invalid_body")
    no_delivery = creation()
    del no_delivery["delivery"]
    assert post(no_delivery) == (400, "invalid_body")
    missing_error = client.post("/v1/inspection/car", json=missing, headers=test_headers).json()
    assert missing_error["errors"][0]["field"] == input_id(fleet, "Mileage")


def test_producer_member_and_initial_status(
    client: httpx.Client, test_headers: dict[str, str], company: dict[str, Any]
) -> None:
    created = create(
        client,
        test_headers,
        creation(producer={"internalId": "member-1"}, initialStatus="started"),
    )
    read = client.get(f"/v1/inspection/{created['inspectionId']}", headers=test_headers).json()
    assert read["status"] == "started"
    assert read["producer"]["companyId"] == company["companyId"]
    assert read["producer"]["userId"]


def test_update_applies_only_undefined_fields(
    client: httpx.Client, test_headers: dict[str, str], fleet: dict[str, Any]
) -> None:
    created = create(
        client, test_headers, fleet_body(fleet, metadata={"a": "1"}, consumer={"firstName": "Ana"})
    )
    url = f"/v1/inspection/{created['inspectionId']}"
    notes = input_id(fleet, "Notes")
    first = client.put(
        url,
        json={
            "consumer": {"firstName": "Bob", "lastName": "Diaz"},
            "metadata": {"a": "changed", "b": "2"},
            "inputs": [{"identifier": notes, "value": "scratched door"}],
        },
        headers=test_headers,
    )
    assert first.status_code == 200, first.text
    assert first.json() == {"message": "Inspection updated"}
    second = client.put(
        url, json={"inputs": [{"identifier": notes, "value": "other"}]}, headers=test_headers
    )
    assert second.status_code == 200
    read = client.get(url, headers=test_headers).json()
    assert read["identity"]["firstName"] == "Ana"
    assert read["identity"]["lastName"] == "Diaz"
    assert read["metadata"] == {"a": "1", "b": "2"}
    values = {i["identifier"]: i["value"] for i in read["template"]["inputs"]}
    assert values[notes] == "scratched door"
    empty = client.put(url, headers=test_headers)
    assert empty.status_code == 200
    bad = client.put(url, json={"metadata": {"k": 5}}, headers=test_headers)
    assert error_of(bad) == (400, "invalid_metadata")


def test_update_after_finish_is_refused(client: httpx.Client, test_headers: dict[str, str]) -> None:
    created = create(client, test_headers, creation())
    finish = client.post(f"/v1/inspection/finish/{created['inspectionId']}", headers=test_headers)
    assert finish.status_code == 200, finish.text
    response = client.put(
        f"/v1/inspection/{created['inspectionId']}",
        json={"metadata": {"late": "yes"}},
        headers=test_headers,
    )
    assert error_of(response) == (409, "inspection_not_editable")
    product = client.put(
        f"/v1/inspection/car/{created['productId']}",
        json={"car": {"color": "red"}},
        headers=test_headers,
    )
    assert error_of(product) == (409, "inspection_not_editable")


def test_update_product(client: httpx.Client, test_headers: dict[str, str]) -> None:
    created = create(client, test_headers, creation(car={"plate": "AB123CD"}))
    url = f"/v1/inspection/car/{created['productId']}"
    response = client.put(url, json={"car": {"color": "red", "year": 2019}}, headers=test_headers)
    assert response.status_code == 200, response.text
    assert response.json() == {"message": "Product updated"}
    read = client.get(f"/v1/inspection/{created['inspectionId']}", headers=test_headers).json()
    assert read["products"][0]["car"] == {"plate": "AB123CD", "color": "red", "year": 2019}
    wrong_type = client.put(
        f"/v1/inspection/moto/{created['productId']}", json={}, headers=test_headers
    )
    assert error_of(wrong_type) == (404, "product_not_found")
    unknown = client.put("/v1/inspection/car/" + "0" * 24, json={}, headers=test_headers)
    assert error_of(unknown) == (404, "product_not_found")
    bad_type = client.put(
        f"/v1/inspection/boat/{created['productId']}", json={}, headers=test_headers
    )
    assert error_of(bad_type) == (400, "invalid_inspection_type")
    bad_field = client.put(url, json={"car": {"year": "old"}}, headers=test_headers)
    assert error_of(bad_field) == (400, "invalid_body")


def test_people_product_is_not_updated_here(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    created = create(client, test_headers, creation(consumer={"firstName": "Ana"}), kind="people")
    response = client.put(
        f"/v1/inspection/people/{created['productId']}", json={}, headers=test_headers
    )
    assert error_of(response) == (400, "product_update_not_supported")


def test_start_and_finish(client: httpx.Client, test_headers: dict[str, str]) -> None:
    created = create(client, test_headers, creation())
    inspection_id = created["inspectionId"]
    started = client.post(f"/v1/inspection/{inspection_id}/start", headers=test_headers)
    assert started.status_code == 200, started.text
    assert started.json()["status"] == "started"
    again = client.post(f"/v1/inspection/{inspection_id}/start", headers=test_headers)
    assert error_of(again) == (409, "invalid_status_transition")
    finished = client.post(f"/v1/inspection/finish/{inspection_id}", headers=test_headers)
    assert finished.status_code == 200
    document = finished.json()
    assert document["status"] == "completed"
    assert document["completedBy"] == "client"
    assert document["veredict"] in ("approved", "disapproved")
    assert document.pop("message") == "Inspection finished"  # beside the Inspection (issue 21)
    assert client.get(f"/v1/inspection/{inspection_id}", headers=test_headers).json() == document
    twice = client.post(f"/v1/inspection/finish/{inspection_id}", headers=test_headers)
    assert error_of(twice) == (409, "invalid_status_transition")
    for path in (f"/v1/inspection/finish/{'0' * 24}", f"/v1/inspection/{'0' * 24}/start"):
        assert error_of(client.post(path, headers=test_headers)) == (404, "inspection_not_found")


def test_declared_damage_runs_the_rules(
    client: httpx.Client, test_headers: dict[str, str], fleet: dict[str, Any]
) -> None:
    created = create(client, test_headers, fleet_body(fleet))
    url = f"/v1/inspection/{created['inspectionId']}/damage"
    damage = {"part": "trunk", "damage": "dent", "severity": "minor", "percentage": 12}
    response = client.post(url, json=damage, headers=test_headers)
    assert response.status_code == 200, response.text
    document = response.json()
    assert {"name": "score", "value": 90} in document["variables"]
    assert document["products"][0]["damages"] == [damage]
    for _ in range(4):
        assert client.post(url, json=damage, headers=test_headers).status_code == 200
    finished = client.post(
        f"/v1/inspection/finish/{created['inspectionId']}", headers=test_headers
    ).json()
    assert finished["veredict"] == "disapproved"
    # No photo was uploaded: that reason comes first, then the template's own.
    assert finished["reasons"] == ["Required photo not uploaded: Front", "Too much damage"]


def test_damage_errors(client: httpx.Client, test_headers: dict[str, str]) -> None:
    created = create(client, test_headers, creation())
    url = f"/v1/inspection/{created['inspectionId']}/damage"
    damage = {"part": "trunk", "damage": "dent", "severity": "minor"}
    assert error_of(client.post(url, json=damage, headers=test_headers)) == (
        409,
        "feature_not_enabled",
    )
    unknown = client.post(f"/v1/inspection/{'0' * 24}/damage", json=damage, headers=test_headers)
    assert error_of(unknown) == (404, "inspection_not_found")


def test_unknown_inspection(client: httpx.Client, test_headers: dict[str, str]) -> None:
    for inspection_id in ("0" * 24, "not-an-id"):
        response = client.get(f"/v1/inspection/{inspection_id}", headers=test_headers)
        assert error_of(response) == (404, "inspection_not_found")
        update = client.put(f"/v1/inspection/{inspection_id}", json={}, headers=test_headers)
        assert error_of(update) == (404, "inspection_not_found")


def test_live_inspections_are_counted(
    client: httpx.Client,
    db: Database,
    company: dict[str, Any],
    test_headers: dict[str, str],
    live_headers: dict[str, str],
) -> None:
    create(client, test_headers, creation())
    assert consumed_inspections(db, company["companyId"]) == 0
    live = create(client, live_headers, creation())
    assert consumed_inspections(db, company["companyId"]) == 1
    read = client.get(f"/v1/inspection/{live['inspectionId']}", headers=live_headers).json()
    assert read["testing"] is False
    refused = client.post("/v1/inspection/car", json=creation("nope"), headers=live_headers)
    assert refused.status_code == 400
    assert consumed_inspections(db, company["companyId"]) == 1


def test_new_revision_never_changes_an_existing_inspection(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    template = make_template(client, test_headers, fleet_source(" rev", score=100))
    old = create(client, test_headers, fleet_body(template))
    before = client.get(f"/v1/inspection/{old['inspectionId']}", headers=test_headers).json()
    revised = client.put(
        f"/v1/inspection/template/{template['_id']}",
        content=fleet_source(" rev renamed", score=70).encode(),
        headers={**test_headers, "content-type": "text/plain"},
    )
    assert revised.status_code == 200, revised.text
    after = client.get(f"/v1/inspection/{old['inspectionId']}", headers=test_headers).json()
    assert after == before
    assert after["template"]["name"] == "Fleet check rev"
    new = create(client, test_headers, fleet_body(revised.json()))
    fresh = client.get(f"/v1/inspection/{new['inspectionId']}", headers=test_headers).json()
    assert fresh["template"]["name"] == "Fleet check rev renamed"
    assert {"name": "score", "value": 70} in fresh["variables"]
    damage = {"part": "door", "damage": "dent", "severity": "minor"}
    client.post(f"/v1/inspection/{old['inspectionId']}/damage", json=damage, headers=test_headers)
    old_finished = client.post(
        f"/v1/inspection/finish/{old['inspectionId']}", headers=test_headers
    ).json()
    assert {"name": "score", "value": 90} in old_finished["variables"]
    # The template's verdict lines approve (no reason of theirs); only the photo never
    # uploaded disapproves.
    assert old_finished["veredict"] == "disapproved"
    assert old_finished["reasons"] == ["Required photo not uploaded: Front"]


def test_presigned_detail_link(
    client: httpx.Client, live_server: str, test_headers: dict[str, str]
) -> None:
    created = create(client, test_headers, creation())
    inspection_id = created["inspectionId"]
    response = client.post(
        f"/v1/inspection/presign/detail/{inspection_id}",
        json={"expiresInSeconds": 120},
        headers=test_headers,
    )
    assert response.status_code == 200, response.text
    link = response.json()
    assert set(link) == {"accessToken", "expiresAt", "url"}
    assert link["url"] == (
        f"{live_server}/v1/inspection/presign/detail/{inspection_id}?token={link['accessToken']}"
    )
    anonymous = httpx.get(link["url"])
    assert anonymous.status_code == 200
    expected = client.get(f"/v1/inspection/{inspection_id}", headers=test_headers).json()
    assert anonymous.json()["_id"] == expected["_id"] == inspection_id
    assert anonymous.json()["status"] == expected["status"]

    default = client.post(f"/v1/inspection/presign/detail/{inspection_id}", headers=test_headers)
    assert default.status_code == 200

    url = f"{live_server}/v1/inspection/presign/detail/{inspection_id}"
    token = link["accessToken"]
    altered = token[:-3] + ("xyz" if not token.endswith("xyz") else "abc")
    assert error_of(httpx.get(url, params={"token": altered})) == (403, "invalid_link")
    assert error_of(httpx.get(url)) == (403, "invalid_link")
    other = create(client, test_headers, creation())
    foreign = httpx.get(
        f"{live_server}/v1/inspection/presign/detail/{other['inspectionId']}",
        params={"token": token},
    )
    assert error_of(foreign) == (403, "invalid_link")


def test_presigned_link_expires(
    live_server: str,
    serve_app: Any,
    settings: Any,
    db: Database,
    company: dict[str, Any],
) -> None:
    from datetime import UTC, datetime, timedelta

    from server.app import create_app

    moments = [datetime.now(UTC)]
    app = create_app(settings, db=db, clock=lambda: moments[0])
    headers = {"x-api-key": company["testKey"]}
    with serve_app(app) as base_url, httpx.Client(base_url=base_url, timeout=30) as http:
        created = create(http, headers, creation())
        link = http.post(
            f"/v1/inspection/presign/detail/{created['inspectionId']}",
            json={"expiresInSeconds": 60},
            headers=headers,
        ).json()
        path = link["url"].removeprefix(settings.public_url)
        assert http.get(path).status_code == 200
        moments[0] += timedelta(seconds=61)
        assert error_of(http.get(path)) == (403, "link_expired")


@pytest.mark.parametrize("value", [0, -5, 604801, 1.5, "60", True])
def test_presign_expiry_bounds(
    client: httpx.Client, test_headers: dict[str, str], value: Any
) -> None:
    created = create(client, test_headers, creation())
    response = client.post(
        f"/v1/inspection/presign/detail/{created['inspectionId']}",
        json={"expiresInSeconds": value},
        headers=test_headers,
    )
    assert error_of(response) == (400, "invalid_expires_in")


def test_presign_unknown_inspection(client: httpx.Client, test_headers: dict[str, str]) -> None:
    response = client.post(f"/v1/inspection/presign/detail/{'0' * 24}", headers=test_headers)
    assert error_of(response) == (404, "inspection_not_found")


def test_goods_with_several_products(
    client: httpx.Client, test_headers: dict[str, str], db: Database
) -> None:
    products = [
        {"description": "Laptop", "quantity": 1, "serial": "SN-1"},
        {"description": "Monitor", "quantity": 2},
        {"description": "Dock", "value": 150},
    ]
    response = client.post(
        "/v1/inspection/goods", json=creation(products=products), headers=test_headers
    )
    assert response.status_code == 201, response.text
    created = response.json()
    assert len(created["productIds"]) == 3
    assert created["productId"] == created["productIds"][0]
    read = client.get(f"/v1/inspection/{created['inspectionId']}", headers=test_headers).json()
    assert [p["_id"] for p in read["products"]] == created["productIds"]
    assert [p["goods"] for p in read["products"]] == products
    update = client.put(
        f"/v1/inspection/goods/{created['productIds'][2]}",
        json={"goods": {"serial": "SN-3"}},
        headers=test_headers,
    )
    assert update.status_code == 200, update.text
    with db.session() as session:  # the stored state is a pure function of its event log
        record = session.get(InspectionRecord, created["inspectionId"])
        assert record is not None
        loaded = load(session, record)
    assert len(loaded.state.products) == 3
    assert runtime.replay(loaded.program, loaded.state.events) == loaded.state
    one = client.post(
        "/v1/inspection/goods", json=creation(goods=products[0]), headers=test_headers
    )
    assert set(one.json()) == {"inspectionId", "productId", "productIds", "message", "magicLink"}
    assert one.json()["productIds"] == [one.json()["productId"]]


@pytest.mark.parametrize(
    ("kind", "extra"),
    [
        ("goods", {"products": []}),
        ("goods", {"products": "laptop"}),
        ("goods", {"products": [{"description": "x"}] * 21}),
        ("goods", {"products": [{"description": "x"}, {"weight": 3}]}),
        ("goods", {"products": [{"description": "x"}], "goods": {"description": "y"}}),
        ("car", {"products": [{"plate": "AB123CD"}]}),
    ],
)
def test_bad_product_lists(
    client: httpx.Client, test_headers: dict[str, str], kind: str, extra: dict[str, Any]
) -> None:
    response = client.post(f"/v1/inspection/{kind}", json=creation(**extra), headers=test_headers)
    assert error_of(response) == (400, "invalid_body")


def test_expired_inspection_is_blocked_by_the_next_change(
    serve_app: Any, settings: Any, db: Database, company: dict[str, Any]
) -> None:
    from datetime import UTC, datetime, timedelta

    from server.app import create_app

    moments = [datetime.now(UTC)]
    app = create_app(settings, db=db, clock=lambda: moments[0])
    headers = {"x-api-key": company["testKey"]}
    with serve_app(app) as base_url, httpx.Client(base_url=base_url, timeout=30) as http:
        created = create(http, headers, creation())  # the built-in expires after 7 days
        url = f"/v1/inspection/{created['inspectionId']}"
        moments[0] += timedelta(days=6)
        assert http.put(url, json={"metadata": {"day": "6"}}, headers=headers).status_code == 200
        moments[0] += timedelta(days=2)
        refused = http.put(url, json={"metadata": {"day": "8"}}, headers=headers)
        assert error_of(refused) == (409, "inspection_not_editable")
        document = http.get(url, headers=headers).json()
        assert document["status"] == "blocked"
        assert document["metadata"] == {"day": "6"}
        listed = http.get("/v1/inspection", params={"status": "blocked"}, headers=headers).json()
        assert [i["_id"] for i in listed["inspections"]] == [created["inspectionId"]]
        finish = http.post(f"/v1/inspection/finish/{created['inspectionId']}", headers=headers)
        assert error_of(finish)[0] == 409


def test_finish_needs_required_update_inputs(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    source = (
        'template "Needs notes"\n    type: car\n\n'
        'input notes\n    type: text\n    label: "Notes"\n    asked at: update\n    required\n\n'
        "verdict\n    approve when true\n"
    )
    template = make_template(client, test_headers, source)
    created = create(client, test_headers, creation(template["_id"]))
    url = f"/v1/inspection/finish/{created['inspectionId']}"
    assert error_of(client.post(url, headers=test_headers)) == (409, "update_inputs_missing")
    notes = {"identifier": input_id(template, "Notes"), "value": "all good"}
    update = client.put(
        f"/v1/inspection/{created['inspectionId']}", json={"inputs": [notes]}, headers=test_headers
    )
    assert update.status_code == 200, update.text
    finished = client.post(url, headers=test_headers)
    assert finished.status_code == 200
    assert finished.json()["veredict"] == "approved"


#: Where an inspection's events must never be sent: loopback, private, link-local, cloud
#: metadata, multicast and unspecified addresses (each answered 201 before the fix).
INTERNAL_CALLBACKS = (
    "http://127.0.0.1/",
    "http://127.0.0.1:8080/hook",
    "http://[::1]/",
    "http://10.0.0.8/x",
    "http://192.168.1.1/x",
    "http://169.254.169.254/latest/meta-data",
    "http://[fd00:ec2::254]/",
    "http://[::ffff:169.254.169.254]/",
    "http://224.0.0.1/",
    "http://0.0.0.0/",
)


def test_callback_url_uses_the_url_guard_of_reports_and_webhooks(
    serve_app: Any, db: Database, settings: Any, company: dict[str, Any]
) -> None:
    """callbackURL at creation: 400 `callback_url_not_allowed` for internal addresses in
    production, 400 `invalid_callback_url` for a malformed one; a public address is 201."""
    from server.app import create_app

    production = settings.model_copy(
        update={
            "env": "production",
            "allow_loopback_webhooks": False,
            "smtp_url": "smtp://127.0.0.1:9",  # production refuses a channel with no provider
        }
    )
    headers = {"x-api-key": company["testKey"]}
    with (
        serve_app(create_app(production, db=db)) as base_url,
        httpx.Client(base_url=base_url, timeout=30) as http,
    ):

        def post(url: Any) -> httpx.Response:
            return http.post("/v1/inspection/car", json=creation(callbackURL=url), headers=headers)

        for url in INTERNAL_CALLBACKS:
            assert error_of(post(url)) == (400, "callback_url_not_allowed"), url
        for url in (
            "ftp://example.com/hook",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "http://",
            "https://user:secret@93.184.216.34/",
            "http://93.184.216.34:99999/",
            "",
            42,
        ):
            assert error_of(post(url)) == (400, "invalid_callback_url"), url
        public = post("https://93.184.216.34/hooks/inspections")
        assert public.status_code == 201, public.text


def test_product_update_refuses_unknown_keys_at_any_level(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """An unknown top-level key used to answer 200 "Product updated" and change nothing; an
    unknown key inside `car` was 400 `invalid_body`. Both are 400 `unknown_field` naming it."""
    created = create(client, test_headers, creation(car={"plate": "AB123CD"}))
    url = f"/v1/inspection/car/{created['productId']}"

    def refused(body: dict[str, Any]) -> list[str]:
        response = client.put(url, json=body, headers=test_headers)
        assert error_of(response) == (400, "unknown_field"), body
        return [item["field"] for item in response.json()["errors"]]

    assert refused({"color": "red"}) == ["color"]
    assert refused({"moto": {"color": "red"}}) == ["moto"]
    assert refused({"car": {"colour": "red"}}) == ["car.colour"]
    assert refused({"car": {"color": "red"}, "plate": "X", "extra": 1}) == ["plate", "extra"]
    assert refused({"car": {"color": "red", "wheels": 4}, "x": 1}) == ["x", "car.wheels"]
    read = client.get(f"/v1/inspection/{created['inspectionId']}", headers=test_headers).json()
    assert read["products"][0]["car"] == {"plate": "AB123CD"}  # nothing applied
    ok = client.put(url, json={"car": {"color": "red"}}, headers=test_headers)
    assert ok.status_code == 200, ok.text
    assert client.put(url, json={}, headers=test_headers).status_code == 200
