"""Template tests saved with each revision through the API (docs/api.md, "Template tests saved
with the revision"), over real HTTP: stored, returned, run on every save, carried over by a
revision that sends none, gating a save only when asked; never a 5xx for a bad tests value."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

MILEAGE = """\
template "Mileage gate {n}"
    type: custom
    locales: en_US

input mileage
    type: numeric
    label: "Mileage"
    asked at: create
    required
    minimum: 0

verdict
    disapprove "Too many kilometres" when inputs.mileage > {limit}
    approve when true
"""

URL = "/v1/inspection/template"


def case(name: str, mileage: int, veredict: str) -> dict[str, Any]:
    """A case: created with `mileage`, started, finished, expected to end `veredict`."""
    create = {"event": "create", "body": {"inputs": [{"input": "mileage", "value": mileage}]}}
    return {
        "name": name,
        "events": [create, {"event": "start"}, {"event": "finish"}],
        "expect": {"status": "completed", "veredict": veredict},
    }


LOW = case("a low mileage is approved", 5000, "approved")
HIGH = case("a high mileage is refused", 200000, "disapproved")
MIDDLE = case("150,000 km is refused", 150000, "disapproved")


def _source(n: int, limit: int = 100000) -> str:
    return MILEAGE.format(n=n, limit=limit)


def test_cases_are_saved_run_and_returned_with_the_revision(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    body = {"source": _source(1), "tests": {"cases": [LOW, HIGH]}}
    created = client.post(URL, json=body, headers=test_headers)
    assert created.status_code == 201, created.text
    saved = created.json()
    assert saved["tests"] == {"cases": [LOW, HIGH]}
    results = saved["testResults"]
    assert results["passed"] is True
    assert [c["name"] for c in results["cases"]] == [LOW["name"], HIGH["name"]]
    assert results["coverage"] == 66.7
    assert results["uncovered"] == ["the approval at line 14 does not hold (otherwise)"]
    assert results["uncoveredDecisions"] == [{"kind": "otherwise", "line": 14}]
    fetched = client.get(f"{URL}/{saved['_id']}", headers=test_headers).json()
    assert fetched["tests"] == {"cases": [LOW, HIGH]}
    assert "testResults" not in fetched
    listed = client.get(URL, params={"type": "created"}, headers=test_headers).json()
    assert all("tests" not in template for template in listed)


def test_a_failing_case_is_answered_next_to_changes_and_the_revision_is_saved(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """The new revision raises the limit to 160,000 km: 150,000 km is now approved, so the case
    expecting a refusal fails at the approve line; the revision is still saved (revision 2),
    `changes` shows the same difference as an example, and the GET answers the new cases."""
    created = client.post(
        URL, json={"source": _source(2), "tests": {"cases": [LOW, HIGH]}}, headers=test_headers
    ).json()
    url = f"{URL}/{created['_id']}"
    revised = client.put(
        url,
        json={"source": _source(2, limit=160000), "tests": {"cases": [LOW, HIGH, MIDDLE]}},
        headers=test_headers,
    )
    assert revised.status_code == 200, revised.text
    answer = revised.json()
    assert answer["revision"] == 2
    failing = [c for c in answer["testResults"]["cases"] if not c["passed"]]
    assert failing == [
        {
            "name": MIDDLE["name"],
            "passed": False,
            "problems": ["veredict is approved, expected disapproved"],
            "failures": [
                {"code": "veredict_differs", "actual": "approved", "expected": "disapproved"}
            ],
            "status": "completed",
            "veredict": "approved",
            "reasons": [],
            "lines": [14],
        }
    ]
    assert answer["testResults"]["passed"] is False
    by_new = answer["changes"]["differences"][0]
    assert (by_new["difference"], by_new["answer"]) == ("approved_by_new_only", "differs")
    assert client.get(url, headers=test_headers).json()["tests"]["cases"][2] == MIDDLE


def test_a_revision_without_tests_keeps_the_previous_cases_and_runs_them(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    created = client.post(
        URL, json={"source": _source(3), "tests": {"cases": [LOW, HIGH]}}, headers=test_headers
    ).json()
    url = f"{URL}/{created['_id']}"
    text = {**test_headers, "content-type": "text/plain"}
    stricter = client.put(url, content=_source(3, limit=1000).encode(), headers=text)
    assert stricter.status_code == 200, stricter.text
    assert stricter.json()["tests"] == {"cases": [LOW, HIGH]}
    results = stricter.json()["testResults"]
    assert [c["passed"] for c in results["cases"]] == [False, True]
    dropped = client.put(
        url, json={"source": _source(3), "tests": {"cases": []}}, headers=test_headers
    )
    assert dropped.status_code == 200, dropped.text
    assert "tests" not in dropped.json() and "testResults" not in dropped.json()
    assert "tests" not in client.get(url, headers=test_headers).json()


def test_tests_must_pass_refuses_the_save_and_stores_nothing(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    wrong = {**HIGH, "expect": {"veredict": "approved"}}
    refused = client.post(
        URL,
        json={"source": _source(4), "tests": {"cases": [LOW, wrong]}, "testsMustPass": True},
        headers=test_headers,
    )
    assert refused.status_code == 422, refused.text
    error = refused.json()
    assert error["code"] == "template_tests_failed"
    assert error["errors"] == [
        {
            "field": "tests",
            "case": HIGH["name"],
            "index": 1,
            "message": "veredict is disapproved, expected approved",
            "problems": ["veredict is disapproved, expected approved"],
            "failures": [
                {"code": "veredict_differs", "actual": "disapproved", "expected": "approved"}
            ],
        }
    ]
    listed = client.get(URL, params={"type": "created"}, headers=test_headers).json()
    assert "Mileage gate 4" not in [t["name"] for t in listed]
    passing = client.post(
        URL,
        json={"source": _source(4), "tests": {"cases": [LOW, HIGH]}, "testsMustPass": True},
        headers=test_headers,
    )
    assert passing.status_code == 201, passing.text
    url = f"{URL}/{passing.json()['_id']}"
    gated = client.put(
        url,
        json={"source": _source(4, limit=1000), "testsMustPass": True},
        headers=test_headers,
    )
    assert (gated.status_code, gated.json()["code"]) == (422, "template_tests_failed")
    assert client.get(url, headers=test_headers).json()["revision"] == 1


def test_a_tests_value_that_is_no_tests_document_is_400_naming_tests(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    huge = {"event": "image", "image": "front", "width": 100000, "height": 10}
    bad_values: list[Any] = [
        [],
        {"cases": "all"},
        {"cases": [{"name": "x", "events": [], "expect": {"status": "completed"}}]},
        {"cases": [{**LOW, "expect": {"verdict": "approved"}}]},
        {"cases": [{**LOW, "events": [*LOW["events"], huge]}]},
        {"cases": [{**LOW, "events": [1]}]},
        {"cases": [LOW] * 201},
    ]
    for tests in bad_values:
        response = client.post(
            URL, json={"source": _source(5), "tests": tests}, headers=test_headers
        )
        assert response.status_code == 400, (tests, response.text)
        assert response.json()["code"] == "invalid_body"
        assert response.json()["errors"][0]["field"] == "tests"


def test_cases_that_break_the_simulation_fail_as_cases(
    client: httpx.Client, test_headers: dict[str, str]
) -> None:
    """A bad clock, an unknown event or input, a clock moved past year 9999: each case fails
    with what went wrong; the save answers 201."""
    odd = [
        {**LOW, "name": "bad start", "start": "yesterday"},
        {**LOW, "name": "unknown event", "events": [*LOW["events"][:1], {"event": "fly"}]},
        {**LOW, "name": "far future", "events": [*LOW["events"][:1], {"minutes": 1e300}]},
        {**LOW, "name": "no such input",
         "events": [{"event": "create", "body": {"inputs": [{"input": "nope", "value": 1}]}}]},
    ]  # fmt: skip
    response = client.post(
        URL, json={"source": _source(6), "tests": {"cases": odd}}, headers=test_headers
    )
    assert response.status_code == 201, response.text
    cases = response.json()["testResults"]["cases"]
    assert [c["passed"] for c in cases] == [False] * 4
    assert all(c["problems"] for c in cases)


def test_the_cases_of_a_document_are_bounded_in_all() -> None:
    """A save runs every case in its request: past 2,000 events or 200 megapixels of photos in
    all, the document is refused before anything runs (`read_cases`)."""
    from runtime.proofs.cases import CasesError, read_cases

    photo = {"event": "image", "image": "front", "width": 4096, "height": 4096}
    big = {**LOW, "events": [*LOW["events"], *[photo] * 12]}
    with pytest.raises(CasesError, match="megapixels"):
        read_cases({"cases": [big]})
    many = {**LOW, "events": [{"event": "start"}] * 200}
    with pytest.raises(CasesError, match="2000 events"):
        read_cases({"cases": [many] * 11})
    assert len(read_cases({"cases": [many] * 10})) == 10
