"""API-key and image-token authentication, over HTTP against the real app and database."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlmodel import select

from server import tokens
from server.auth import (
    AdminError,
    add_member,
    consumed_inspections,
    count_consumed,
    create_company,
    find_member,
    revoke_key,
)
from server.db import Database
from server.settings import Settings
from server.tables import ApiKey


def assert_unauthorized(response: httpx.Response, code: str = "unauthorized") -> dict[str, Any]:
    assert response.status_code == 401, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert body["code"] == code
    assert body["status"] == 401
    assert isinstance(body["description"], str) and body["description"]
    return body


def test_missing_key_gets_401_json(probe_client: httpx.Client) -> None:
    body = assert_unauthorized(probe_client.get("/test/whoami"))
    assert "missing" in body["description"]


@pytest.mark.parametrize(
    "key",
    [
        "",
        "nonsense",
        "sk_test_",
        "sk_test_0123456789abcdef_",
        "sk_live_0123456789abcdef_notarealsecret",
        "sk_prod_0123456789abcdef_whatever",
        "sk_test_" + "x" * 300,
    ],
)
def test_malformed_or_unknown_key_gets_401(probe_client: httpx.Client, key: str) -> None:
    assert_unauthorized(probe_client.get("/test/whoami", headers={"x-api-key": key}))


def test_key_with_wrong_secret_gets_401(
    probe_client: httpx.Client, company: dict[str, Any]
) -> None:
    real = company["testKey"]
    forged = real[:-4] + ("AAAA" if not real.endswith("AAAA") else "BBBB")
    assert_unauthorized(probe_client.get("/test/whoami", headers={"x-api-key": forged}))


def test_key_with_mode_prefix_swapped_gets_401(
    probe_client: httpx.Client, company: dict[str, Any]
) -> None:
    swapped = company["testKey"].replace("sk_test_", "sk_live_", 1)
    assert_unauthorized(probe_client.get("/test/whoami", headers={"x-api-key": swapped}))


def test_test_and_live_keys_authenticate_their_company_and_mode(
    probe_client: httpx.Client, company: dict[str, Any]
) -> None:
    test = probe_client.get("/test/whoami", headers={"x-api-key": company["testKey"]})
    live = probe_client.get("/test/whoami", headers={"x-api-key": company["liveKey"]})
    assert test.status_code == live.status_code == 200
    assert test.json() == {
        "companyId": company["companyId"],
        "mode": "test",
        "testing": True,
        "scope": None,
    }
    assert live.json() == {
        "companyId": company["companyId"],
        "mode": "live",
        "testing": False,
        "scope": None,
    }


def test_two_companies_are_told_apart(
    probe_client: httpx.Client, company: dict[str, Any], other_company: dict[str, Any]
) -> None:
    first = probe_client.get("/test/whoami", headers={"x-api-key": company["liveKey"]})
    second = probe_client.get("/test/whoami", headers={"x-api-key": other_company["liveKey"]})
    assert first.json()["companyId"] == company["companyId"]
    assert second.json()["companyId"] == other_company["companyId"]
    assert company["companyId"] != other_company["companyId"]


def test_revoked_key_is_refused_at_once_and_the_new_key_works(
    probe_client: httpx.Client, company: dict[str, Any], db: Database
) -> None:
    old = company["liveKey"]
    assert probe_client.get("/test/whoami", headers={"x-api-key": old}).status_code == 200
    new = revoke_key(db, company["companyId"], "live")
    assert new != old and new.startswith("sk_live_")
    body = assert_unauthorized(probe_client.get("/test/whoami", headers={"x-api-key": old}))
    assert "revoked" in body["description"]
    response = probe_client.get("/test/whoami", headers={"x-api-key": new})
    assert response.status_code == 200
    assert response.json()["mode"] == "live"
    # The test key is untouched by revoking the live one.
    test = probe_client.get("/test/whoami", headers={"x-api-key": company["testKey"]})
    assert test.status_code == 200


def test_keys_are_stored_hashed(db: Database, company: dict[str, Any]) -> None:
    with db.session() as session:
        statement = select(ApiKey).where(ApiKey.company_id == company["companyId"])
        rows = list(session.exec(statement).all())
    assert {row.mode for row in rows} == {"test", "live"}
    for row in rows:
        assert len(row.key_hash) == 64
        assert row.key_hash not in (company["testKey"], company["liveKey"])
        assert row.key_hash not in company["testKey"] + company["liveKey"]


def test_public_routes_need_no_key(probe_client: httpx.Client) -> None:
    assert probe_client.get("/health").json() == {"status": "ok"}
    assert probe_client.get("/schema/openapi.json").status_code == 200


def test_openapi_31_declares_the_api_key_and_has_browsable_pages(
    probe_client: httpx.Client,
) -> None:
    document = probe_client.get("/schema/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    assert document["components"]["securitySchemes"]["apiKey"] == {
        "type": "apiKey",
        "name": "x-api-key",
        "in": "header",
        "description": "The company's test or live API key.",
    }
    assert document["security"] == [{"apiKey": []}]
    assert "/test/whoami" in document["paths"]
    assert "/health" not in document["paths"]
    for page in ("/schema", "/schema/swagger", "/schema/redoc"):
        response = probe_client.get(page)
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/html")
        assert "<html" in response.text.lower()


def test_image_token_authenticates_only_routes_that_accept_it(
    probe_client: httpx.Client, company: dict[str, Any], settings: Settings
) -> None:
    token, _ = tokens.issue(
        "image", "product-1", company["companyId"], "test", 600, secret=settings.secret
    )
    response = probe_client.get("/test/image/product-1", headers={"x-image-token": token})
    assert response.status_code == 200, response.text
    assert response.json() == {"productId": "product-1", "scope": "image:product-1", "mode": "test"}
    # A route without opt={"image_token": True} refuses the token.
    assert_unauthorized(probe_client.get("/test/whoami", headers={"x-image-token": token}))


def test_expired_image_token_gets_token_expired(
    probe_client: httpx.Client, company: dict[str, Any], probe: Any, settings: Settings
) -> None:
    issued_at = probe.clock.now - timedelta(seconds=120)
    token, _ = tokens.issue(
        "image", "p", company["companyId"], "live", 60, secret=settings.secret, now=issued_at
    )
    response = probe_client.get("/test/image/p", headers={"x-image-token": token})
    assert_unauthorized(response, "token_expired")


@pytest.mark.parametrize("mutation", ["signature", "payload", "kind", "garbage"])
def test_forged_image_token_gets_invalid_token(
    probe_client: httpx.Client, company: dict[str, Any], mutation: str, settings: Settings
) -> None:
    secret = settings.secret
    token, _ = tokens.issue("image", "p", company["companyId"], "test", 600, secret=secret)
    payload, signature = token.split(".")
    if mutation == "signature":
        forged = f"{payload}.{signature[:-2]}{'AA' if signature[-2:] != 'AA' else 'BB'}"
    elif mutation == "payload":
        other, _ = tokens.issue("image", "q", company["companyId"], "live", 600, secret=secret)
        forged = f"{other.split('.')[0]}.{signature}"
    elif mutation == "kind":
        forged, _ = tokens.issue("report", "p", company["companyId"], "test", 600, secret=secret)
    else:
        forged = "not-a-token"
    response = probe_client.get("/test/image/p", headers={"x-image-token": forged})
    assert_unauthorized(response, "invalid_token")


def test_token_signed_with_another_secret_is_refused(
    company: dict[str, Any], settings: Settings
) -> None:
    token, _ = tokens.issue("image", "p", company["companyId"], "test", 600, secret="other")
    with pytest.raises(tokens.TokenError) as caught:
        tokens.verify("image", token, secret=settings.secret)
    assert caught.value.code == "invalid_token"
    claims = tokens.verify("image", token, secret="other")
    assert (claims.subject, claims.company_id, claims.mode) == ("p", company["companyId"], "test")


def test_only_live_inspections_are_counted(db: Database, company: dict[str, Any]) -> None:
    with db.session() as session:
        count_consumed(session, company["companyId"], "live")
        count_consumed(session, company["companyId"], "test")
        count_consumed(session, company["companyId"])
        session.commit()
    assert consumed_inspections(db, company["companyId"]) == 2


def test_members_are_found_by_internal_id(db: Database, company: dict[str, Any]) -> None:
    add_member(db, company["companyId"], "inspector-7", name="Ana", email="ana@example.com")
    with db.session() as session:
        member = find_member(session, company["companyId"], "inspector-7")
        missing = find_member(session, company["companyId"], "nobody")
    assert member is not None and (member.name, member.email) == ("Ana", "ana@example.com")
    assert missing is None
    with pytest.raises(AdminError) as caught:
        add_member(db, company["companyId"], "inspector-7")
    assert caught.value.code == "duplicate_member"


def test_admin_errors_have_codes(db: Database) -> None:
    with pytest.raises(AdminError) as no_company:
        revoke_key(db, "f" * 24, "test")
    assert no_company.value.code == "company_not_found"
    with pytest.raises(AdminError) as no_name:
        create_company(db, "   ")
    assert no_name.value.code == "invalid_name"
    with pytest.raises(AdminError) as duplicate:
        create_company(db, "Twice", ["same", "same"])
    assert duplicate.value.code == "duplicate_member"


def test_test_key_data_is_invisible_to_the_live_key(
    client: httpx.Client, company: dict[str, Any]
) -> None:
    """Inspections made with the test key exist only for the test key, and the reverse."""
    body = {
        "templateId": "easy",
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "driver@example.com"},
    }
    test = {"x-api-key": company["testKey"]}
    live = {"x-api-key": company["liveKey"]}
    made_in_test = client.post("/v1/inspection/car", json=body, headers=test)
    made_in_live = client.post("/v1/inspection/car", json=body, headers=live)
    assert made_in_test.status_code == made_in_live.status_code == 201
    test_id = made_in_test.json()["inspectionId"]
    live_id = made_in_live.json()["inspectionId"]
    assert client.get(f"/v1/inspection/{test_id}", headers=test).json()["testing"] is True
    assert client.get(f"/v1/inspection/{live_id}", headers=live).json()["testing"] is False
    for inspection_id, headers in ((test_id, live), (live_id, test)):
        response = client.get(f"/v1/inspection/{inspection_id}", headers=headers)
        assert response.status_code == 404
        assert response.json()["code"] == "inspection_not_found"
