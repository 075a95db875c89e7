"""Listing inspections over real HTTP: chronological order, paging fields, every filter, and
the refusals of bad paging and filter values."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

PAGING_FIELDS = {
    "inspections",
    "totalInspections",
    "limit",
    "totalPages",
    "page",
    "pagingCounter",
    "hasPrevPage",
    "hasNextPage",
    "prevPage",
    "nextPage",
}


def creation(**extra: Any) -> dict[str, Any]:
    return {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"channel": "sms", "destination": "+5491100000000"},
        **extra,
    }


def create(client: httpx.Client, headers: dict[str, str], kind: str = "car", **extra: Any) -> str:
    response = client.post(f"/v1/inspection/{kind}", json=creation(**extra), headers=headers)
    assert response.status_code == 201, response.text
    return str(response.json()["inspectionId"])


def page(client: httpx.Client, headers: dict[str, str], **params: Any) -> dict[str, Any]:
    response = client.get("/v1/inspection", params=params, headers=headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert set(body) == PAGING_FIELDS
    return body


def test_empty_list(client: httpx.Client, test_headers: dict[str, str]) -> None:
    assert page(client, test_headers) == {
        "inspections": [],
        "totalInspections": 0,
        "limit": 10,
        "totalPages": 1,
        "page": 1,
        "pagingCounter": 1,
        "hasPrevPage": False,
        "hasNextPage": False,
        "prevPage": None,
        "nextPage": None,
    }


def test_paging_in_chronological_order(client: httpx.Client, test_headers: dict[str, str]) -> None:
    ids = [create(client, test_headers) for _ in range(7)]
    first = page(client, test_headers, limit=3)
    assert [i["_id"] for i in first["inspections"]] == ids[:3]
    assert {k: v for k, v in first.items() if k != "inspections"} == {
        "totalInspections": 7,
        "limit": 3,
        "totalPages": 3,
        "page": 1,
        "pagingCounter": 1,
        "hasPrevPage": False,
        "hasNextPage": True,
        "prevPage": None,
        "nextPage": 2,
    }
    second = page(client, test_headers, limit=3, page=2)
    assert [i["_id"] for i in second["inspections"]] == ids[3:6]
    assert (second["pagingCounter"], second["prevPage"], second["nextPage"]) == (4, 1, 3)
    last = page(client, test_headers, limite=3, page="3")
    assert [i["_id"] for i in last["inspections"]] == ids[6:]
    assert (last["hasNextPage"], last["nextPage"], last["prevPage"]) == (False, None, 2)
    beyond = page(client, test_headers, limit=3, page=9)
    assert beyond["inspections"] == []
    assert beyond["totalInspections"] == 7
    default = page(client, test_headers)
    assert default["limit"] == 10
    assert [i["_id"] for i in default["inspections"]] == ids
    assert default["inspections"][0]["testing"] is True
    both = page(client, test_headers, limit=2, limite=5)
    assert both["limit"] == 2


def test_filters(client: httpx.Client, test_headers: dict[str, str]) -> None:
    plate_car = create(client, test_headers, car={"plate": "AA111AA"})
    consumer_car = create(client, test_headers, consumer={"identification": "30111222"})
    moto = create(client, test_headers, kind="moto", moto={"plate": "ZZ999"})
    started = create(client, test_headers, initialStatus="started")
    finished = create(client, test_headers)
    assert client.post(f"/v1/inspection/finish/{finished}", headers=test_headers).status_code == 200

    def ids(**params: Any) -> list[str]:
        return [i["_id"] for i in page(client, test_headers, **params)["inspections"]]

    assert ids(plate="AA111AA") == [plate_car]
    assert ids(plate="ZZ999") == [moto]
    assert ids(consumerIdentification="30111222") == [consumer_car]
    assert ids(type="moto") == [moto]
    assert ids(status="started") == [started]
    assert ids(status="completed") == [finished]
    completed = page(client, test_headers, status="completed")["inspections"][0]
    assert ids(veredict=completed["veredict"]) == [finished]
    assert len(ids(veredict="not_defined")) == 4
    assert ids(templateId="5f0c0a000000000000000002") == [moto]
    assert ids(type="car", status="created") == [plate_car, consumer_car]
    assert ids(plate="nothing") == []
    assert page(client, test_headers, type="car", limit=1)["totalInspections"] == 4


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"limit": "101"}, "invalid_limit"),
        ({"limit": "0"}, "invalid_limit"),
        ({"limit": "-1"}, "invalid_limit"),
        ({"limit": "ten"}, "invalid_limit"),
        ({"limite": "1000"}, "invalid_limit"),
        ({"page": "0"}, "invalid_page"),
        ({"page": "abc"}, "invalid_page"),
        ({"page": "1.5"}, "invalid_page"),
        ({"page": "99999999999999"}, "invalid_page"),
        ({"status": "done"}, "invalid_filter"),
        ({"veredict": "maybe"}, "invalid_filter"),
        ({"type": "boat"}, "invalid_filter"),
        ({"plate": "x" * 201}, "invalid_filter"),
    ],
)
def test_bad_paging_and_filters(
    client: httpx.Client, test_headers: dict[str, str], params: dict[str, str], code: str
) -> None:
    response = client.get("/v1/inspection", params=params, headers=test_headers)
    assert response.status_code == 400
    assert response.json()["code"] == code
    assert response.json()["errors"][0]["field"] in params


def test_limit_bounds(client: httpx.Client, test_headers: dict[str, str]) -> None:
    assert page(client, test_headers, limit=100)["limit"] == 100
    assert page(client, test_headers, limit=1)["limit"] == 1
    over = client.get("/v1/inspection", params={"limit": 101}, headers=test_headers)
    assert (over.status_code, over.json()["code"]) == (400, "invalid_limit")
