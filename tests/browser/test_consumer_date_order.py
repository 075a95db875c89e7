"""A date order broken on the consumer's page (issue 33), in a real Chromium on a 390 px phone
in es_AR. The company created the parcel with its promised date: the date control starts at
it, and a delivery date typed before it is refused by the page before sending, the field saying
why in Spanish and naming the other date by its Spanish label; the promised day itself is
accepted. Without a promise from the company both dates are asked on the page, and the same
refusal comes from the server, in the same words. Screenshots:
tests/artifacts/test_consumer_date_order/."""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from server.db import Database
from tests.browser.test_consumer_flow import consent, error_of, field

TEMPLATE = """
template "Entrega prometida"
    type: goods
    locales: en_US, es_AR

image packages
    label: "The packages"
    label es_AR: "Los paquetes"
    validate complete

input promised
    type: date
    label: "Promised date"
    label es_AR: "Fecha prometida"
    asked at: create, update

input delivered
    type: date
    label: "Delivery date"
    label es_AR: "Fecha de entrega"
    asked at: update
    required
    not before: promised

verdict
    approve when all(i in images where i.approved)
    otherwise "Photos not approved"
"""


@pytest.fixture(scope="module")
def api(db: Database, live_server: str) -> Iterator[tuple[httpx.Client, dict[str, Any]]]:
    from server.auth import create_company

    company = create_company(db, f"Correo Sur {secrets.token_hex(2)}", ["agent-1"])
    with httpx.Client(
        base_url=live_server, headers={"x-api-key": company["testKey"]}, timeout=60
    ) as client:
        saved = client.post("/v1/inspection/template", json={"source": TEMPLATE})
        assert saved.status_code == 201, saved.text
        yield client, saved.json()


def stored(client: httpx.Client, inspection_id: str) -> dict[str, Any]:
    """The inspection's input values by identifier, as the API shows them."""
    document = client.get(f"/v1/inspection/{inspection_id}").json()
    return {i["identifier"]: i.get("value") for i in document["template"]["inputs"]}


def created_link(client: httpx.Client, template: dict[str, Any], inputs: list[Any]) -> Any:
    created = client.post(
        "/v1/inspection/goods",
        json={
            "templateId": template["_id"],
            "locale": "es_AR",
            "goods": {"description": "Una caja"},
            "inputs": inputs,
            "delivery": {"disabled": True},
        },
    )
    assert created.status_code == 201, created.text
    return created.json()


REFUSED = "No puede ser anterior a “Fecha prometida”."


def refused_on_the_page(page: Any) -> None:
    box = page.locator("[data-field]", has_text="Fecha de entrega").locator(".error")
    box.wait_for(state="visible", timeout=30_000)
    assert error_of(page, "Fecha de entrega") == REFUSED
    assert page.url.endswith("/step/details")


def test_a_delivery_before_the_stored_promise_is_refused_in_spanish_before_sending(
    api: tuple[httpx.Client, dict[str, Any]], new_phone: Any, screenshot: Any, axe_check: Any
) -> None:
    client, template = api
    ids = {i["label"]: i["identifier"] for i in template["inputs"]}
    created = created_link(
        client, template, [{"identifier": ids["Promised date"], "value": "2026-03-10"}]
    )
    inspection_id = created["inspectionId"]
    _context, page, _log = new_phone(locale="es-AR", width=390)
    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.url) if r.method == "POST" else None)
    page.goto(created["magicLink"])
    consent(page)
    page.wait_for_url(re.compile(r"/step/details$"))
    delivered = field(page, "Fecha de entrega")
    assert delivered.get_attribute("min") == "2026-03-10"
    delivered.fill("2026-03-09")
    sent.clear()
    page.click("button[type=submit]")
    refused_on_the_page(page)
    assert not [url for url in sent if url.endswith("/details")]  # the page said it first
    screenshot(page, "details-date-order-es_AR")
    axe_check(page, "details-date-order-es_AR")
    assert stored(client, inspection_id).get(ids["Delivery date"]) is None
    # The promised day itself is not before it: accepted, the flow goes on to the photo.
    delivered.fill("2026-03-10")
    with page.expect_navigation(timeout=30_000):
        page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/step/photo-1$"))
    assert stored(client, inspection_id)[ids["Delivery date"]] == "2026-03-10"


def test_both_dates_on_the_page_are_refused_by_the_server_in_the_same_words(
    api: tuple[httpx.Client, dict[str, Any]], new_phone: Any, screenshot: Any
) -> None:
    client, template = api
    ids = {i["label"]: i["identifier"] for i in template["inputs"]}
    created = created_link(client, template, [])
    _context, page, _log = new_phone(locale="es-AR", width=390)
    page.goto(created["magicLink"])
    consent(page)
    page.wait_for_url(re.compile(r"/step/details$"))
    assert field(page, "Fecha de entrega").get_attribute("min") is None
    field(page, "Fecha prometida").fill("2026-03-10")
    field(page, "Fecha de entrega").fill("2026-03-09")
    with page.expect_response(lambda r: r.url.endswith("/details") and r.status == 400):
        page.click("button[type=submit]")
    refused_on_the_page(page)
    screenshot(page, "details-date-order-server-es_AR")
    assert stored(client, created["inspectionId"]).get(ids["Promised date"]) is None
