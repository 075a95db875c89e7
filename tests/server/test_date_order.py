"""A date input's declared order (`not before: OTHER`, `not after: OTHER`) through the real HTTP
API: the template's `validationSchema` shows it, a creation or an update whose dates break it is
400 `invalid_input_value` with an `errors[]` entry naming both inputs, nothing is written, and a
missing date leaves the order out."""

from __future__ import annotations

from typing import Any

import httpx

from tests.server.test_inspections import create, creation, error_of, input_id, make_template

SOURCE = """\
template "Parcel with a promise"
    type: goods

input promised
    type: date
    label: "Promised date"
    asked at: create, update

input delivered
    type: date
    label: "Delivery date"
    asked at: create, update
    not before: promised

input returned
    type: date
    label: "Return date"
    asked at: update
    not before: delivered

input notes
    type: text
    label: "Notes"
    asked at: update

verdict
    approve when true
"""


def _body(template: dict[str, Any], **dates: str) -> dict[str, Any]:
    labels = {"promised": "Promised date", "delivered": "Delivery date"}
    inputs = [
        {"identifier": input_id(template, labels[name]), "value": value}
        for name, value in dates.items()
    ]
    return creation(template["_id"], inputs=inputs, goods={"description": "A box"})


def _only_problem(response: httpx.Response) -> dict[str, Any]:
    assert error_of(response) == (400, "invalid_input_value")
    problems = response.json()["errors"]
    assert len(problems) == 1, problems
    found: dict[str, Any] = problems[0]
    return found


def test_the_template_shows_the_order_in_its_validation_schema(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    template = make_template(client, test_headers, SOURCE)
    schemas = {i["label"]: i["validationSchema"] for i in template["inputs"]}
    assert schemas["Delivery date"]["notBefore"] == [input_id(template, "Promised date")]
    assert schemas["Return date"]["notBefore"] == [input_id(template, "Delivery date")]
    assert "notBefore" not in schemas["Promised date"]
    assert "notAfter" not in schemas["Delivery date"]
    fetched = client.get(f"/v1/inspection/template/{template['_id']}", headers=test_headers)
    assert fetched.json()["inputs"] == template["inputs"]


def test_a_creation_whose_dates_break_the_order_is_refused(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    template = make_template(client, test_headers, SOURCE)
    before = client.get("/v1/inspection", headers=test_headers).json()
    refused = client.post(
        "/v1/inspection/goods",
        json=_body(template, promised="2026-03-10", delivered="2026-03-09"),
        headers=test_headers,
    )
    found = _only_problem(refused)
    assert found["field"] == input_id(template, "Delivery date")
    assert found["code"] == "not_before"
    assert found["other"] == input_id(template, "Promised date")
    assert found["message"] == (
        "'Delivery date' (2026-03-09) must be on or after 'Promised date' (2026-03-10)"
    )
    assert client.get("/v1/inspection", headers=test_headers).json() == before
    # The same day is not before; and with one date missing the order does not apply.
    same = _body(template, promised="2026-03-10", delivered="2026-03-10")
    create(client, test_headers, same, kind="goods")
    create(client, test_headers, _body(template, delivered="2026-01-01"), kind="goods")


def test_an_update_is_checked_against_the_stored_dates_and_writes_nothing(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    template = make_template(client, test_headers, SOURCE)
    created = create(client, test_headers, _body(template, delivered="2026-03-12"), kind="goods")
    url = f"/v1/inspection/{created['inspectionId']}"
    promised, notes = input_id(template, "Promised date"), input_id(template, "Notes")
    returned = input_id(template, "Return date")

    def put(*values: tuple[str, str]) -> httpx.Response:
        inputs = [{"identifier": identifier, "value": value} for identifier, value in values]
        return client.put(url, json={"inputs": inputs}, headers=test_headers)

    # The promise sent later, after the stored delivery: the date sent now is the one refused,
    # and the note sent with it is not written either.
    found = _only_problem(put((promised, "2026-03-20"), (notes, "late promise")))
    assert (found["field"], found["code"]) == (promised, "not_after")
    assert found["other"] == input_id(template, "Delivery date")
    assert "'Promised date' (2026-03-20)" in found["message"]
    assert "'Delivery date' (2026-03-12)" in found["message"]
    back = _only_problem(put((returned, "2026-03-11")))
    assert (back["field"], back["code"]) == (returned, "not_before")
    values = {
        i["identifier"]: i.get("value")
        for i in client.get(url, headers=test_headers).json()["template"]["inputs"]
    }
    assert values.get(promised) is None and values.get(notes) is None
    assert values.get(returned) is None
    accepted = put((promised, "2026-03-12"), (returned, "2026-03-13"))
    assert accepted.status_code == 200, accepted.text
