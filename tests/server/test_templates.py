"""Template endpoints over real HTTP: built-ins, custom templates, revisions, every error code."""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest

from server.templates import service

FLEET = """\
template "Fleet check"
    type: car
    locales: en_US

variable score: numeric = 100

image front
    label: "Front"
    validate plate, optional

input mileage
    type: numeric
    label: "Mileage"
    asked at: create
    required
    minimum: 0

verdict
    approve when score > 50
"""

BUILTIN_CAR_EASY = "5f0c0a000000000000000001"


def _source(name: str, inspection_type: str = "car", extra: str = "") -> str:
    header = f'template "{name}"\n    type: {inspection_type}\n'
    return (
        header
        + '\nimage front\n    label: "Front"\n'
        + extra
        + "\nverdict\n    approve when true\n"
    )


def _create(client: httpx.Client, headers: dict[str, str], source: str) -> httpx.Response:
    return client.post(
        "/v1/inspection/template",
        content=source.encode(),
        headers={**headers, "content-type": "text/plain"},
    )


def test_list_has_the_eleven_builtins(client: httpx.Client, test_headers: dict[str, str]) -> None:
    response = client.get("/v1/inspection/template", headers=test_headers)
    assert response.status_code == 200
    templates = response.json()
    builtins = [t for t in templates if t["type"] == "built-in"]
    assert len(builtins) == 11
    assert {t["inspectionType"] for t in builtins} == {
        "car",
        "moto",
        "bike",
        "machinery",
        "goods",
        "people",
        "custom",
        "cellphone",
    }
    for template in builtins:
        assert "logic" not in template
        assert set(template) >= {"_id", "name", "images", "inputs", "schema", "parameters"}


def test_list_filters(client: httpx.Client, test_headers: dict[str, str]) -> None:
    created = _create(client, test_headers, _source("Filter me", "moto"))
    assert created.status_code == 201, created.text
    motos = client.get(
        "/v1/inspection/template", params={"inspectionType": "moto"}, headers=test_headers
    ).json()
    assert {t["inspectionType"] for t in motos} == {"moto"}
    assert [t["name"] for t in motos if t["type"] == "created"] == ["Filter me"]
    assert len([t for t in motos if t["type"] == "built-in"]) == 2  # easy and deep
    only_created = client.get(
        "/v1/inspection/template", params={"type": "created"}, headers=test_headers
    ).json()
    assert [t["_id"] for t in only_created] == [created.json()["_id"]]
    only_builtin = client.get(
        "/v1/inspection/template", params={"type": "built-in"}, headers=test_headers
    ).json()
    assert len(only_builtin) == 11


def test_list_bad_filters(client: httpx.Client, test_headers: dict[str, str]) -> None:
    for params in ({"inspectionType": "boat"}, {"type": "custom"}):
        response = client.get("/v1/inspection/template", params=params, headers=test_headers)
        assert response.status_code == 400
        assert response.json()["code"] == "invalid_filter"


def test_get_builtin_and_unknown(client: httpx.Client, test_headers: dict[str, str]) -> None:
    response = client.get(f"/v1/inspection/template/{BUILTIN_CAR_EASY}", headers=test_headers)
    assert response.status_code == 200
    assert response.json()["type"] == "built-in"
    assert response.json()["inspectionType"] == "car"
    with_logic = client.get(
        f"/v1/inspection/template/{BUILTIN_CAR_EASY}",
        params={"withLogic": "true"},
        headers=test_headers,
    )
    assert "logic" in with_logic.json()
    for template_id in ("0" * 24, "not-an-id"):
        missing = client.get(f"/v1/inspection/template/{template_id}", headers=test_headers)
        assert missing.status_code == 404
        assert missing.json() == {
            "code": "not_found_template",
            "status": 404,
            "description": "No template with that id.",
            "detail": "No template with that id.",
        }


def test_create_as_text_json_and_multipart(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    as_text = _create(client, test_headers, FLEET)
    assert as_text.status_code == 201, as_text.text
    template = as_text.json()
    assert template["type"] == "created"
    assert template["name"] == "Fleet check"
    assert template["revision"] == 1
    assert len(template["_id"]) == 24
    assert template["inputs"][0]["validationSchema"]["required"] is True

    as_json = client.post(
        "/v1/inspection/template",
        json={"source": _source("From JSON")},
        headers=test_headers,
    )
    assert as_json.status_code == 201, as_json.text
    as_multipart = client.post(
        "/v1/inspection/template",
        files={"data": (None, json.dumps({"source": _source("From form")}))},
        headers=test_headers,
    )
    assert as_multipart.status_code == 201, as_multipart.text
    assert as_multipart.json()["name"] == "From form"

    read = client.get(f"/v1/inspection/template/{template['_id']}", headers=test_headers)
    assert read.status_code == 200
    # The save adds its deployment warnings (docs/review.md, W900); a read has none.
    assert read.json() == {k: v for k, v in template.items() if k != "warnings"}
    source = client.get(f"/v1/inspection/template/{template['_id']}/source", headers=test_headers)
    assert source.status_code == 200
    assert source.text == FLEET


def test_invalid_source_gives_every_diagnostic(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    source = 'template "Broken"\n    type: boat\n\ninput x\n    type: nope\n'
    response = _create(client, test_headers, source)
    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "invalid_template"
    assert body["status"] == 422
    assert len(body["errors"]) >= 1
    for error in body["errors"]:
        assert set(error) >= {"code", "line", "column", "message"}
        assert error["code"].startswith("E")
    assert any(e["line"] == 2 for e in body["errors"])


def test_bad_bodies(client: httpx.Client, test_headers: dict[str, str]) -> None:
    empty = _create(client, test_headers, "   ")
    assert (empty.status_code, empty.json()["code"]) == (400, "invalid_body")
    no_source = client.post("/v1/inspection/template", json={"src": "x"}, headers=test_headers)
    assert (no_source.status_code, no_source.json()["code"]) == (400, "invalid_body")
    bad_json = client.post(
        "/v1/inspection/template",
        content=b"{nope",
        headers={**test_headers, "content-type": "application/json"},
    )
    assert (bad_json.status_code, bad_json.json()["code"]) == (400, "malformed_json")
    xml = client.post(
        "/v1/inspection/template",
        content=b"<template/>",
        headers={**test_headers, "content-type": "application/xml"},
    )
    assert (xml.status_code, xml.json()["code"]) == (415, "unsupported_media_type")


def test_names_are_unique_per_company(
    client: httpx.Client,
    test_headers: dict[str, str],
    live_headers: dict[str, str],
    other_company: dict[str, Any],
) -> None:
    assert _create(client, test_headers, _source("Unique name")).status_code == 201
    again = _create(client, live_headers, _source("  unique   NAME "))
    assert again.status_code == 409
    assert again.json()["code"] == "template_name_taken"
    builtin_name = _create(client, test_headers, _source("Easy car inspection"))
    assert (builtin_name.status_code, builtin_name.json()["code"]) == (409, "template_name_taken")
    elsewhere = _create(client, {"x-api-key": other_company["testKey"]}, _source("Unique name"))
    assert elsewhere.status_code == 201


def test_revision_keeps_id_and_bumps_revision(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    first = _create(client, test_headers, _source("Revised")).json()
    second = client.put(
        f"/v1/inspection/template/{first['_id']}",
        content=_source("Revised", extra='\nimage back\n    label: "Back"\n').encode(),
        headers={**test_headers, "content-type": "text/plain"},
    )
    assert second.status_code == 200, second.text
    revised = second.json()
    assert revised["_id"] == first["_id"]
    assert revised["revision"] == 2
    assert revised["createdAt"] == first["createdAt"]
    assert [i["side"] for i in revised["images"]] == ["front", "back"]
    renamed = client.put(
        f"/v1/inspection/template/{first['_id']}",
        content=_source("Renamed").encode(),
        headers={**test_headers, "content-type": "text/plain"},
    )
    assert renamed.json()["name"] == "Renamed"
    assert renamed.json()["revision"] == 3


def test_a_revision_with_earlier_content_shows_its_own_times(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """Manifests are stored under their revision (`revision_of`, which leaves the times out), so
    a revision with the same content as an earlier one shares its stored manifest: the
    template object still shows when it was revised, from its record."""
    first = _create(client, test_headers, _source("Same again")).json()
    url = f"/v1/inspection/template/{first['_id']}"
    time.sleep(0.005)  # a later millisecond than the first revision's
    headers = {**test_headers, "content-type": "text/plain"}
    again = client.put(url, content=_source("Same again").encode(), headers=headers).json()
    assert again["revision"] == 2
    assert again["updatedAt"] > first["updatedAt"]
    service._manifests.clear()  # read back from the database, as another process would
    shown = client.get(url, headers=test_headers).json()
    assert (shown["revision"], shown["createdAt"]) == (2, first["createdAt"])
    assert shown["updatedAt"] == again["updatedAt"]
    listed = client.get("/v1/inspection/template", headers=test_headers).json()
    assert [t["updatedAt"] for t in listed if t["_id"] == first["_id"]] == [again["updatedAt"]]


def test_revision_errors(client: httpx.Client, test_headers: dict[str, str]) -> None:
    template = _create(client, test_headers, _source("Stays a car")).json()
    taken = _create(client, test_headers, _source("Taken by another")).json()
    url = f"/v1/inspection/template/{template['_id']}"
    headers = {**test_headers, "content-type": "text/plain"}
    type_change = client.put(url, content=_source("Stays a car", "moto").encode(), headers=headers)
    assert (type_change.status_code, type_change.json()["code"]) == (409, "template_type_changed")
    name_clash = client.put(url, content=_source(taken["name"]).encode(), headers=headers)
    assert (name_clash.status_code, name_clash.json()["code"]) == (409, "template_name_taken")
    broken = client.put(url, content=b'template "x"\n    type: car\n  oops', headers=headers)
    assert (broken.status_code, broken.json()["code"]) == (422, "invalid_template")
    missing = client.put(
        "/v1/inspection/template/" + "0" * 24, content=_source("x").encode(), headers=headers
    )
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found_template")
    builtin = client.put(
        f"/v1/inspection/template/{BUILTIN_CAR_EASY}",
        content=_source("x").encode(),
        headers=headers,
    )
    assert (builtin.status_code, builtin.json()["code"]) == (409, "template_not_editable")
    still = client.get(url, headers=test_headers).json()
    assert still["revision"] == 1


def test_templates_need_a_key(client: httpx.Client) -> None:
    response = client.get("/v1/inspection/template")
    assert response.status_code == 401
    assert response.json()["code"] == "unauthorized"


# --- the checker and the runtime agree (issue 9 §1) --------------------------------------------

AGREEMENT_HEADER = """\
template "Agreement {n}"
    type: car
    locales: en_US

input km
    type: numeric
    label: "Km"
    asked at: create

"""


def _agreement(n: int, body: str) -> str:
    return AGREEMENT_HEADER.format(n=n) + body


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        # A 45-term sum: saved, and inspections with it are created (was 201, then 500).
        ("verdict\n    approve when " + " + ".join(["inputs.km"] * 45) + " > 1\n", 201, None),
        # 9 nested `any`: refused when saved (was 201, then every create 500).
        (
            "verdict\n    approve when "
            + "".join(f"any(x{i} in [1] where " for i in range(9))
            + "inputs.km > 1"
            + ")" * 9
            + "\n",
            422,
            "E004",
        ),
        ('variable __init__: text = ""\n\nverdict\n    approve when inputs.km > 1\n', 422, "E038"),
        (
            "variable n: numeric = 0\n\non finish\n    set n to "
            + "9" * 5000
            + "\n\nverdict\n    approve when n > 1\n",
            422,
            "E019",
        ),
    ],
)
def test_a_saved_template_always_runs(
    client: httpx.Client,
    test_headers: dict[str, str],
    body: str,
    status: int,
    code: str | None,
) -> None:
    source = _agreement(len(body), body)
    saved = client.post(
        "/v1/inspection/template",
        content=source.encode(),
        headers={**test_headers, "content-type": "text/plain"},
    )
    assert saved.status_code == status, saved.text
    if code is not None:
        assert code in {error["code"] for error in saved.json()["errors"]}
        return
    template = saved.json()
    km = template["inputs"][0]["identifier"]
    created = client.post(
        "/v1/inspection/car",
        json={
            "templateId": template["_id"],
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": "a@example.com"},
            "car": {"plate": "AB123CD"},
            "inputs": [{"identifier": km, "value": 1}],
        },
        headers=test_headers,
    )
    assert created.status_code == 201, created.text


def test_a_runtime_refusal_is_placed_at_its_ir_node() -> None:
    from server.templates.service import _span_on_path

    logic = {"checks": [{"valid": {"span": [3, 5, 3, 40], "left": {"span": [3, 5, 3, 9]}}}]}
    assert _span_on_path(logic, "logic.checks[0].valid.left.left") == (3, 5, 3, 9)
    assert _span_on_path(logic, "logic.checks[0].valid") == (3, 5, 3, 40)
    assert _span_on_path(logic, "variables[0]") == (1, 1, 1, 1)


def test_a_revision_answers_what_it_approves_differently(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """`changes` (docs/api.md): the new revision asks a second photo, so an inspection with the
    front photo only is approved by the old revision and refused by the new one; saving the
    same logic again is `equivalent`."""
    first = _create(client, test_headers, _source("Changes")).json()
    url = f"/v1/inspection/template/{first['_id']}"
    headers = {**test_headers, "content-type": "text/plain"}
    extra = '\nimage back\n    label: "Back"\n'
    revised = client.put(url, content=_source("Changes", extra=extra).encode(), headers=headers)
    assert revised.status_code == 200, revised.text
    changes = revised.json()["changes"]
    assert changes["equivalent"] is False
    by_new, by_old = changes["differences"]
    assert by_new["difference"] == "approved_by_new_only" and by_new["answer"] == "same"
    assert by_old["difference"] == "approved_by_old_only" and by_old["answer"] == "differs"
    example = by_old["example"]
    assert example["old"]["ends"]["veredict"] == "approved"
    assert example["new"]["ends"]["veredict"] == "disapproved"
    uploaded = [e["image"] for e in example["new"]["events"]["events"] if e["event"] == "image"]
    assert "back" not in uploaded
    again = client.put(url, content=_source("Changes", extra=extra).encode(), headers=headers)
    assert again.json()["changes"] == {
        "equivalent": True,
        "differences": [
            {
                "difference": "approved_by_new_only",
                "description": "approved by NEW and not by OLD",
                "answer": "same",
            },
            {
                "difference": "approved_by_old_only",
                "description": "approved by OLD and not by NEW",
                "answer": "same",
            },
        ],
    }
