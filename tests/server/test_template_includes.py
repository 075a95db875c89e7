"""`include "NAME"` through the API (issue 25): a company's shared files, read when a template
is saved; the saved manifest holds what they declare, so a later change of a shared file changes
no saved revision until the template is saved again. Another company's files are never found."""

from __future__ import annotations

from typing import Any

import httpx

COMMON = """\
input odometer
    type: numeric
    label: "Kilometres"
    asked at: create

let worn = inputs.odometer > 250000

check plausible
    name: "Plausible mileage"
    valid when: inputs.odometer < 2000000
"""

TEMPLATE = """\
include "vehicle-common"

template "Fleet with shared file"
    type: car

image front
    label: "Front"

verdict
    disapprove "Worn" when worn
    disapprove "Implausible" when not checks.plausible
"""


def _text(headers: dict[str, str]) -> dict[str, str]:
    return {**headers, "content-type": "text/plain"}


def _share(client: httpx.Client, headers: dict[str, str], name: str, source: str) -> httpx.Response:
    return client.put(
        f"/v1/inspection/shared/{name}", content=source.encode(), headers=_text(headers)
    )


def _create(client: httpx.Client, headers: dict[str, str], source: str) -> httpx.Response:
    return client.post("/v1/inspection/template", content=source.encode(), headers=_text(headers))


def test_a_template_includes_a_shared_file_of_its_company(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    saved = _share(client, test_headers, "vehicle-common", COMMON)
    assert saved.status_code == 200, saved.text
    assert saved.json()["name"] == "vehicle-common"
    listed = client.get("/v1/inspection/shared", headers=test_headers).json()
    assert [item["name"] for item in listed] == ["vehicle-common"]
    read = client.get("/v1/inspection/shared/vehicle-common", headers=test_headers)
    assert read.text == COMMON

    created = _create(client, test_headers, TEMPLATE)
    assert created.status_code == 201, created.text
    template = created.json()
    assert [i["label"] for i in template["inputs"]] == ["Kilometres"]
    # The stored source is the one written (with its include); the manifest is self-contained.
    source = client.get(f"/v1/inspection/template/{template['_id']}/source", headers=test_headers)
    assert source.text == TEMPLATE
    logic = client.get(
        f"/v1/inspection/template/{template['_id']}",
        params={"withLogic": "true"},
        headers=test_headers,
    ).json()["logic"]
    assert [c["key"] for c in logic["checks"]] == ["plausible"]
    assert [let["name"] for let in logic["lets"]] == ["worn"]

    # An inspection of it decides with the included let and check.
    odometer = template["inputs"][0]["identifier"]
    inspection = client.post(
        "/v1/inspection/car",
        json={
            "templateId": template["_id"],
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": "a@example.com"},
            "inputs": [{"identifier": odometer, "value": 300000}],
        },
        headers=test_headers,
    )
    assert inspection.status_code == 201, inspection.text


def test_changing_a_shared_file_changes_no_saved_revision_until_it_is_saved_again(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    assert _share(client, test_headers, "limits", "let limit = 100\n").status_code == 200
    source = (
        'include "limits"\ntemplate "Frozen include"\n    type: car\n'
        'image front\n    label: "Front"\n'
        'verdict\n    disapprove "Over {limit}" when limit > 50\n'
    )
    first = _create(client, test_headers, source).json()
    url = f"/v1/inspection/template/{first['_id']}"
    before = client.get(url, params={"withLogic": "true"}, headers=test_headers).json()
    assert _share(client, test_headers, "limits", "let limit = 7\n").status_code == 200
    unchanged = client.get(url, params={"withLogic": "true"}, headers=test_headers).json()
    assert unchanged["logic"] == before["logic"]
    # Saving the template again reads the new version: a new revision.
    again = client.put(url, content=source.encode(), headers=_text(test_headers))
    assert again.status_code == 200, again.text
    after = client.get(url, params={"withLogic": "true"}, headers=test_headers).json()
    assert after["revision"] == 2
    assert after["logic"]["lets"][0]["value"]["value"] == 7
    assert before["logic"]["lets"][0]["value"]["value"] == 100


def test_another_companys_shared_file_is_not_found(
    client: httpx.Client, test_headers: dict[str, str], other_company: dict[str, Any]
) -> None:
    assert _share(client, test_headers, "mine-only", COMMON).status_code == 200
    other = {"x-api-key": other_company["testKey"]}
    refused = _create(client, other, TEMPLATE.replace("vehicle-common", "mine-only"))
    assert refused.status_code == 422
    body = refused.json()
    assert body["code"] == "invalid_template"
    assert [(e["code"], e["line"], e["column"]) for e in body["errors"]] == [("E043", 1, 9)]
    missing = client.get("/v1/inspection/shared/mine-only", headers=other)
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found_shared_file")


def test_a_problem_inside_a_shared_file_names_that_file(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    assert (
        _share(client, test_headers, "typo", "let worn = inputs.odometr > 5\n").status_code == 200
    )
    refused = _create(client, test_headers, TEMPLATE.replace("vehicle-common", "typo"))
    assert refused.status_code == 422
    errors = refused.json()["errors"]
    assert {(e["code"], e["file"], e["line"]) for e in errors} >= {("E020", "typo", 1)}


def test_a_shared_file_that_is_not_one_is_refused_with_its_diagnostics(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    with_image = _share(client, test_headers, "photos", 'image front\n    label: "Front"\n')
    assert with_image.status_code == 422
    assert with_image.json()["code"] == "invalid_shared_file"
    assert [(e["code"], e["line"]) for e in with_image.json()["errors"]] == [("E047", 1)]
    broken = _share(client, test_headers, "broken", "let a = (\n")
    assert [e["code"] for e in broken.json()["errors"]] == ["E001"]
    bad_name = _share(client, test_headers, "a..b", "let a = 1\n")
    assert (bad_name.status_code, bad_name.json()["errors"][0]["code"]) == (422, "E043")
    empty = _share(client, test_headers, "empty", "  ")
    assert (empty.status_code, empty.json()["code"]) == (400, "invalid_body")
    nul = _share(client, test_headers, "nul", 'let a = "\x00"\n')
    assert nul.status_code == 400, nul.text  # refused at the boundary, never stored
    long_name = _share(client, test_headers, "n" * 101, "let a = 1\n")
    assert (long_name.status_code, long_name.json()["errors"][0]["code"]) == (422, "E043")


def test_two_saves_of_a_new_shared_file_at_once_both_succeed(
    client: httpx.Client, test_headers: dict[str, str], live_server: str
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def save(value: int) -> int:
        with httpx.Client(base_url=live_server, timeout=30) as own:
            return _share(own, test_headers, "raced", f"let raced = {value}\n").status_code

    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(save, range(4))) == [200] * 4
    kept = client.get("/v1/inspection/shared/raced", headers=test_headers).text
    assert kept in {f"let raced = {value}\n" for value in range(4)}
    listed = client.get("/v1/inspection/shared", headers=test_headers).json()
    assert [item["name"] for item in listed].count("raced") == 1


def test_deleting_a_shared_file_keeps_saved_templates_and_stops_new_includes(
    client: httpx.Client, test_headers: dict[str, str], other_company: dict[str, Any]
) -> None:
    assert _share(client, test_headers, "to-delete", "let limit = 9\n").status_code == 200
    source = (
        'include "to-delete"\ntemplate "Includes a deleted file"\n    type: car\n'
        'image front\n    label: "Front"\n'
        'verdict\n    disapprove "Over {limit}" when limit > 5\n'
    )
    saved = _create(client, test_headers, source)
    assert saved.status_code == 201, saved.text
    # Another company cannot delete it: as for everything of another company, 404.
    other = {"x-api-key": other_company["testKey"]}
    refused = client.delete("/v1/inspection/shared/to-delete", headers=other)
    assert (refused.status_code, refused.json()["code"]) == (404, "not_found_shared_file")
    deleted = client.delete("/v1/inspection/shared/to-delete", headers=test_headers)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json() == {"message": "Shared file deleted"}
    gone = client.get("/v1/inspection/shared/to-delete", headers=test_headers)
    assert (gone.status_code, gone.json()["code"]) == (404, "not_found_shared_file")
    again = client.delete("/v1/inspection/shared/to-delete", headers=test_headers)
    assert (again.status_code, again.json()["code"]) == (404, "not_found_shared_file")
    # The saved template holds what it included; saving it again now finds no such file.
    url = f"/v1/inspection/template/{saved.json()['_id']}"
    kept = client.get(url, params={"withLogic": "true"}, headers=test_headers).json()
    assert kept["logic"]["lets"][0]["value"]["value"] == 9
    resaved = client.put(url, content=source.encode(), headers=_text(test_headers))
    assert resaved.status_code == 422
    assert [e["code"] for e in resaved.json()["errors"]] == ["E043"]
