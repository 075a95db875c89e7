"""Partner applications through OAuth 2.0 over real HTTP: a company registers an application on
its Developers page, a member of another company approves it on the consent page, and the
application calls the API as that member, with the exact bodies and headers the client libraries
send (autoinspector-node `OAuth.ts`, `User.ts`, `Memberships.ts`, `Template.ts`,
`Inspections.ts`, `Car.ts`; autoinspector-php `OAuthService.php`).

Then every refusal of RFC 6749 and RFC 9700 the issue lists, each with its error code: a code
used twice, a wrong redirect URI, a wrong secret, a refresh token reused after rotation, a
removed member, an expired token, a token of company A on company B's inspection; and the
rest: PKCE, refusal, revocation (RFC 7009), roles, test and live data apart.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
from collections.abc import Callable, Iterator
from datetime import timedelta
from html import unescape
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from sqlalchemy import func, select, update

from server.auth import create_company
from server.dashboard import accounts
from server.db import Database
from server.oauth.tables import PartnerCode, PartnerToken
from server.settings import Settings
from server.tables import utcnow
from tests.server.test_dashboard_pages import PASSWORD, Browserish

CALLBACK = "https://partner.example/callback"
NODE_AGENT = "autoinspector-node-sdk/2.9.1"
DELIVERY = {"channel": "email", "destination": "driver@example.com"}


@pytest.fixture(scope="module")
def world(db: Database) -> dict[str, Any]:
    """The partner's company (it registers the application) and two client companies, each with
    an owner, an editor and a viewer; the editor of the first was invited by its owner."""
    partner = create_company(db, f"Broker {secrets.token_hex(3)}")
    owner = f"owner-{secrets.token_hex(3)}@partner.example"
    accounts.create_account(db, partner["companyId"], owner, "owner", PASSWORD)
    companies = {}
    for label in ("a", "b"):
        company = create_company(db, f"Dealer {label} {secrets.token_hex(3)}")
        emails = {}
        for role in ("owner", "editor", "viewer"):
            emails[role] = f"{role}-{label}-{secrets.token_hex(3)}@example.com"
            accounts.create_account(db, company["companyId"], emails[role], role, PASSWORD)
        companies[label] = {**company, "emails": emails}
    return {"partner": {**partner, "owner": owner}, **companies}


@pytest.fixture(scope="module")
def browsers(live_server: str, world: dict[str, Any]) -> Iterator[Callable[[str], Browserish]]:
    """`browsers(email)`: one signed-in dashboard session per address, for the module."""
    opened: dict[str, Browserish] = {}

    def get(email: str) -> Browserish:
        if email not in opened:
            client = Browserish(live_server)
            assert client.sign_in(email).status_code == 303
            opened[email] = client
        return opened[email]

    yield get
    for client in opened.values():
        client.http.close()


def _code_text(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}">([^<]+)<', html)
    assert found is not None, html[:2000]
    return unescape(found.group(1))


def register(
    browser: Browserish, name: str, uris: str = CALLBACK, scopes: tuple[str, ...] = ()
) -> dict[str, str]:
    chosen = scopes or ("inspections:read", "inspections:create", "templates:read")
    page = browser.post(
        "/dashboard/developers/apps",
        data={"name": name, "redirect_uris": uris, "scopes": list(chosen)},
    )
    assert page.status_code == 200, page.text
    return {
        "client_app_id": _code_text(page.text, "client-id"),
        "client_secret": _code_text(page.text, "client-secret"),
    }


@pytest.fixture(scope="module")
def app_credentials(browsers: Callable[[str], Browserish], world: dict[str, Any]) -> dict[str, str]:
    return register(browsers(world["partner"]["owner"]), "Fleet Broker")


def authorize(
    browser: Browserish, client_id: str, *, decision: str = "approve", **params: str
) -> dict[str, list[str]]:
    """The member opens the application's authorization link and answers: the query the
    browser is sent back to the application with."""
    query = {"response_type": "code", "client_id": client_id, "state": "xyz", **params}
    page = browser.http.get("/dashboard/oauth/authorize", params=query)
    assert page.status_code == 200, page.text
    browser.token = re.search(r'name="csrf-token" content="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    form = {**query, "decision": decision}
    answer = browser.post("/dashboard/oauth/authorize", data=form)
    assert answer.status_code == 303, answer.text
    location = answer.headers["location"]
    assert location.startswith(params.get("redirect_uri", CALLBACK) + "?"), location
    return parse_qs(urlsplit(location).query)


def new_code(browser: Browserish, credentials: dict[str, str], **params: str) -> str:
    answered = authorize(browser, credentials["client_app_id"], **params)
    assert answered["state"] == ["xyz"]
    return answered["code"][0]


def node_post(client: httpx.Client, path: str, body: dict[str, Any], key: str) -> httpx.Response:
    """A POST as autoinspector-node's HTTPClient sends it: JSON, its key and its agent."""
    headers = {"x-api-key": key, "User-Agent": NODE_AGENT}
    return client.post(f"/v1{path}", json=body, headers=headers)


def node_get(
    client: httpx.Client, path: str, key: str, token: str, params: dict[str, Any] | None = None
) -> httpx.Response:
    """A GET with `Helper.buildOptionalHeaders(access_token)` / `buildOAuthHeader(token)`: the
    Bearer beside the application's own key, as the library always sends it."""
    headers = {"Authorization": f"Bearer {token}", "x-api-key": key, "User-Agent": NODE_AGENT}
    if params:  # axios adds `params` to a path that may hold a query already (`User.ts`)
        path += ("&" if "?" in path else "?") + urlencode(params)
    return client.get(f"/v1{path}", headers=headers)


def exchange(
    client: httpx.Client, credentials: dict[str, str], code: str, key: str, **extra: str
) -> httpx.Response:
    # OAuth.exchangeCodeForAccessToken: {...input, ...this.credentials}
    return node_post(
        client, "/account/oauth/exchange_code", {"code": code, **extra, **credentials}, key
    )


def tokens_for(
    client: httpx.Client, browser: Browserish, credentials: dict[str, str], key: str
) -> dict[str, Any]:
    answer = exchange(client, credentials, new_code(browser, credentials), key)
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def assert_refused(
    response: httpx.Response, status: int, code: str, error: str | None = None
) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["code"] == code, body
    if error is not None:
        assert body["error"] == error, body


# --- the libraries' calls ------------------------------------------------------------------------


def test_the_libraries_oauth_calls_end_to_end(
    client: httpx.Client,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    key = world["partner"]["testKey"]
    editor = browsers(world["a"]["emails"]["editor"])
    consent = editor.http.get(
        "/dashboard/oauth/authorize",
        params={"response_type": "code", "client_id": app_credentials["client_app_id"]},
    )
    assert "Fleet Broker" in consent.text and "Create inspections for you" in consent.text

    granted = exchange(client, app_credentials, new_code(editor, app_credentials), key)
    assert granted.status_code == 200, granted.text
    tokens = granted.json()
    assert set(tokens) >= {"access_token", "refresh_token", "expires_in"}
    assert tokens["expires_in"] == 3600 and tokens["token_type"] == "Bearer"
    assert granted.headers["cache-control"] == "no-store"
    access = tokens["access_token"]

    # Memberships.list({access_token})
    listed = node_get(client, "/account/membership/authenticated", key, access)
    assert listed.status_code == 200, listed.text
    (membership,) = listed.json()
    assert membership["role"] == "editor"
    assert membership["company"]["_id"] == world["a"]["companyId"]
    assert membership["company"]["societyReason"].startswith("Dealer a")

    # Car.create({... access_token}): the token in the body, the application's key in the header
    body = {
        "templateId": "easy",
        "locale": "es_AR",
        "delivery": DELIVERY,
        "consumer": {"firstName": "Ana", "lastName": "Paz", "identification": "30111222"},
        "car": {"plate": "AB123CD", "year": "2020", "make": "FIAT"},
        "access_token": access,
    }
    created = client.post(
        "/v1/inspection/car",
        json=body,
        headers={
            "x-api-key": key,
            "Idempotency-Key": secrets.token_hex(8),
            "User-Agent": NODE_AGENT,
        },
    )
    assert created.status_code == 201, created.text
    inspection_id = created.json()["inspectionId"]

    # Inspections.retrieve(id, accessToken): the member's company's inspection, made by them
    found = node_get(client, f"/inspection/{inspection_id}", key, access)
    assert found.status_code == 200, found.text
    producer = found.json()["producer"]
    assert producer["internalId"] == world["a"]["emails"]["editor"]
    # ... and not the partner's: its own key does not see it
    assert (
        client.get(f"/v1/inspection/{inspection_id}", headers={"x-api-key": key}).status_code == 404
    )

    # Inspections.car.create with the Bearer header (buildOAuthHeader) works the same
    body.pop("access_token")
    with_header = client.post(
        "/v1/inspection/car",
        json=body,
        headers={"Authorization": f"Bearer {access}", "x-api-key": key},
    )
    assert with_header.status_code == 201, with_header.text

    # user.inspections.list({scope, membershipId, params, access_token})
    for scope in ("me", "all"):
        page = node_get(
            client,
            f"/inspection/{scope}?membershipId={membership['_id']}",
            key,
            access,
            params={"page": 1, "status": "created"},
        )
        assert page.status_code == 200, page.text
        listed_page = page.json()
        assert {item["_id"] for item in listed_page["inspections"]} >= {inspection_id}
        assert listed_page["pagination"]["totalDocs"] == 2
        assert set(listed_page["pagination"]) == {
            "hasNextPage", "hasPrevPage", "limit", "nextPage", "page", "pagingCounter",
            "prevPage", "totalDocs", "totalPages",
        }  # fmt: skip
    searched = node_get(
        client,
        f"/inspection/me?membershipId={membership['_id']}",
        key,
        access,
        params={"search": "ab123", "from": "2020-01-01T00:00:00.000Z"},
    )
    assert searched.json()["pagination"]["totalDocs"] == 2
    nothing = node_get(
        client,
        f"/inspection/me?membershipId={membership['_id']}",
        key,
        access,
        params={"search": "zz999"},
    )
    assert nothing.json()["pagination"]["totalDocs"] == 0
    someone_else = node_get(client, "/inspection/me?membershipId=undefined", key, access)
    assert_refused(someone_else, 404, "membership_not_found")

    # Template.listWithOAuth(token)
    templates = node_get(client, "/inspection/template/oauth/list/all", key, access)
    assert templates.status_code == 200, templates.text
    keyed = client.get("/v1/inspection/template", headers={"x-api-key": world["a"]["testKey"]})
    assert templates.json() == keyed.json() and templates.json()

    # OAuth.refreshAccessToken({refresh_token}): a new pair, the old refresh token used up
    refreshed = node_post(
        client,
        "/account/oauth/refresh_token",
        {"refresh_token": tokens["refresh_token"], **app_credentials},
        key,
    )
    assert refreshed.status_code == 200, refreshed.text
    renewed = refreshed.json()
    assert renewed["access_token"] != access and renewed["refresh_token"] != tokens["refresh_token"]
    again = node_get(client, "/account/membership/authenticated", key, renewed["access_token"])
    assert again.status_code == 200

    # autoinspector-php refreshAccessToken: `refreshToken`, its key and Guzzle's JSON
    php = client.post(
        "/v1/account/oauth/refresh_token",
        json={**app_credentials, "refreshToken": renewed["refresh_token"]},
        headers={"x-api-key": key, "User-Agent": "autoinspector-php-sdk/v1"},
    )
    assert php.status_code == 200, php.text


def test_the_all_list_holds_the_inspections_of_invited_members(
    live_server: str, client: httpx.Client, db: Database, world: dict[str, Any]
) -> None:
    """`all`: the member's inspections and those of the members they invited."""
    from server.dashboard.accounts import Actor, invite

    company = create_company(db, f"Inviting {secrets.token_hex(3)}")
    boss = f"boss-{secrets.token_hex(3)}@example.com"
    made = accounts.create_account(db, company["companyId"], boss, "owner", PASSWORD)
    actor = Actor(made["id"], company["companyId"], boss, "owner")
    helper = f"helper-{secrets.token_hex(3)}@example.com"
    sent: list[Any] = []
    invite(db, actor, helper, "editor", live_server, sent.append)
    link = re.search(r"token=(\S+)", sent[0].text).group(1)  # type: ignore[union-attr]
    accounts.use_link(db, link, "invite", PASSWORD)
    partner_owner = _signed(live_server, world["partner"]["owner"])
    partner = register(partner_owner, "Lister")
    partner_owner.http.close()
    key = world["partner"]["testKey"]
    access = {}
    for email in (boss, helper):
        browser = _signed(live_server, email)
        tokens = tokens_for(client, browser, partner, key)
        browser.http.close()
        access[email] = tokens["access_token"]
        made_one = client.post(
            "/v1/inspection/car",
            json={"templateId": "easy", "locale": "es_AR", "delivery": DELIVERY, "car": {}},
            headers={"Authorization": f"Bearer {tokens['access_token']}"},
        )
        assert made_one.status_code == 201, made_one.text
    membership = node_get(client, "/account/membership/authenticated", key, access[boss]).json()
    mine = f"?membershipId={membership[0]['_id']}"
    me = node_get(client, f"/inspection/me{mine}", key, access[boss]).json()
    everyone = node_get(client, f"/inspection/all{mine}", key, access[boss]).json()
    assert me["pagination"]["totalDocs"] == 1 and everyone["pagination"]["totalDocs"] == 2


def _signed(live_server: str, email: str) -> Browserish:
    browser = Browserish(live_server)
    assert browser.sign_in(email).status_code == 303
    return browser


def test_the_rfc_token_endpoint_with_basic_auth_and_pkce(
    client: httpx.Client,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    browser = browsers(world["a"]["emails"]["owner"])
    basic = httpx.BasicAuth(app_credentials["client_app_id"], app_credentials["client_secret"])

    def code() -> str:
        return new_code(
            browser,
            app_credentials,
            redirect_uri=CALLBACK,
            code_challenge=challenge.decode(),
            code_challenge_method="S256",
        )

    form = {"grant_type": "authorization_code", "redirect_uri": CALLBACK}
    missing = client.post("/v1/account/oauth/token", data={**form, "code": code()}, auth=basic)
    assert_refused(missing, 400, "invalid_request", "invalid_request")
    wrong = client.post(
        "/v1/account/oauth/token",
        data={**form, "code": code(), "code_verifier": secrets.token_urlsafe(48)},
        auth=basic,
    )
    assert_refused(wrong, 400, "invalid_grant", "invalid_grant")
    good = client.post(
        "/v1/account/oauth/token",
        data={**form, "code": code(), "code_verifier": verifier},
        auth=basic,
    )
    assert good.status_code == 200, good.text
    assert good.json()["scope"] == "inspections:read inspections:create templates:read"


# --- refusals, each with its code ---------------------------------------------------------------


def test_a_code_used_twice_is_refused_and_revokes_what_it_gave(
    client: httpx.Client,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    key = world["partner"]["testKey"]
    code = new_code(browsers(world["a"]["emails"]["editor"]), app_credentials)
    first = exchange(client, app_credentials, code, key)
    assert first.status_code == 200
    second = exchange(client, app_credentials, code, key)
    assert_refused(second, 400, "authorization_code_used", "invalid_grant")
    # RFC 6749 4.1.2: the tokens the code gave are revoked.
    used = node_get(client, "/account/membership/authenticated", key, first.json()["access_token"])
    assert_refused(used, 401, "invalid_token")
    assert used.headers["www-authenticate"].startswith('Bearer error="invalid_token"')


def test_an_expired_code_is_refused(
    client: httpx.Client,
    db: Database,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    code = new_code(browsers(world["a"]["emails"]["editor"]), app_credentials)
    _age(db, PartnerCode, "expires_at", timedelta(minutes=3))
    expired = exchange(client, app_credentials, code, world["partner"]["testKey"])
    assert_refused(expired, 400, "authorization_code_expired", "invalid_grant")


def _age(db: Database, model: Any, column: str, by: timedelta) -> None:
    """Move every row's `column` of `model` back by `by` (what time passing does)."""
    table = model.__table__
    with db.engine.begin() as connection:
        connection.execute(update(table).values({column: utcnow() - by}))


def test_a_wrong_redirect_uri_is_never_followed(
    client: httpx.Client,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    browser = browsers(world["a"]["emails"]["editor"])
    for uri in ("https://evil.example/callback", CALLBACK + "/", CALLBACK + "?x=1"):
        page = browser.http.get(
            "/dashboard/oauth/authorize",
            params={
                "response_type": "code",
                "client_id": app_credentials["client_app_id"],
                "redirect_uri": uri,
            },
        )
        assert page.status_code == 400 and "location" not in page.headers
        assert 'id="oauth-error-code">invalid_redirect_uri<' in page.text
    unknown = browser.http.get("/dashboard/oauth/authorize", params={"client_id": "app_test_nope"})
    assert unknown.status_code == 400 and 'id="oauth-error-code">unknown_client<' in unknown.text
    # The exchange must name the redirect URI the authorization request named.
    code = new_code(browser, app_credentials, redirect_uri=CALLBACK)
    key = world["partner"]["testKey"]
    mismatch = exchange(
        client, app_credentials, code, key, redirect_uri="https://partner.example/other"
    )
    assert_refused(mismatch, 400, "redirect_uri_mismatch", "invalid_grant")
    code = new_code(browser, app_credentials, redirect_uri=CALLBACK)
    assert exchange(client, app_credentials, code, key, redirect_uri=CALLBACK).status_code == 200


def test_a_wrong_secret_is_refused(
    client: httpx.Client,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    code = new_code(browsers(world["a"]["emails"]["editor"]), app_credentials)
    forged = {**app_credentials, "client_secret": app_credentials["client_secret"][:-1] + "x"}
    if forged["client_secret"] == app_credentials["client_secret"]:
        forged["client_secret"] = app_credentials["client_secret"][:-1] + "y"
    refused = exchange(client, forged, code, world["partner"]["testKey"])
    assert_refused(refused, 401, "invalid_client", "invalid_client")
    # The code was not spent by the refused attempt.
    assert exchange(client, app_credentials, code, world["partner"]["testKey"]).status_code == 200


def test_a_refresh_token_reused_after_rotation_revokes_the_family(
    client: httpx.Client,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    key = world["partner"]["testKey"]
    first = tokens_for(client, browsers(world["a"]["emails"]["editor"]), app_credentials, key)
    body = {"refresh_token": first["refresh_token"], **app_credentials}
    rotated = node_post(client, "/account/oauth/refresh_token", body, key)
    assert rotated.status_code == 200
    reused = node_post(client, "/account/oauth/refresh_token", body, key)
    assert_refused(reused, 400, "refresh_token_reused", "invalid_grant")
    # Both holders lose: the rotated pair is revoked too.
    newest = rotated.json()
    after = node_get(client, "/account/membership/authenticated", key, newest["access_token"])
    assert_refused(after, 401, "invalid_token")
    again = node_post(
        client,
        "/account/oauth/refresh_token",
        {"refresh_token": newest["refresh_token"], **app_credentials},
        key,
    )
    assert_refused(again, 400, "authorization_revoked", "invalid_grant")


def test_a_removed_member_and_a_revoked_authorization_end_their_tokens(
    live_server: str,
    client: httpx.Client,
    db: Database,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    key = world["partner"]["testKey"]
    company = world["b"]
    leaving = f"leaving-{secrets.token_hex(3)}@example.com"
    made = accounts.create_account(db, company["companyId"], leaving, "editor", PASSWORD)
    browser = _signed(live_server, leaving)
    tokens = tokens_for(client, browser, app_credentials, key)
    browser.http.close()
    owner = accounts.Actor("x", company["companyId"], company["emails"]["owner"], "owner")
    accounts.remove(db, owner, made["id"])
    gone = node_get(client, "/account/membership/authenticated", key, tokens["access_token"])
    assert_refused(gone, 401, "invalid_token")

    # The member revokes on the Connected apps page: the token stops at once.
    viewer = browsers(company["emails"]["viewer"])
    tokens = tokens_for(client, viewer, app_credentials, key)
    page = viewer.get("/dashboard/authorizations")
    (authorization_id,) = re.findall(r"/dashboard/authorizations/([0-9a-f]+)/revoke", page.text)
    revoked = viewer.post(f"/dashboard/authorizations/{authorization_id}/revoke")
    assert revoked.status_code == 200 and 'id="no-authorizations"' in revoked.text
    ended = node_get(client, "/account/membership/authenticated", key, tokens["access_token"])
    assert_refused(ended, 401, "invalid_token")


def test_an_owner_sees_and_revokes_every_authorization_of_the_company(
    client: httpx.Client,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    key = world["partner"]["testKey"]
    company = world["b"]
    tokens = tokens_for(client, browsers(company["emails"]["editor"]), app_credentials, key)
    assert (
        browsers(company["emails"]["editor"]).get("/dashboard/authorizations/company").status_code
        == 403
    )
    owner = browsers(company["emails"]["owner"])
    page = owner.get("/dashboard/authorizations/company")
    assert page.status_code == 200 and company["emails"]["editor"] in page.text
    ids = re.findall(r"/dashboard/authorizations/([0-9a-f]+)/revoke", page.text)
    for authorization_id in ids:
        owner.post(
            f"/dashboard/authorizations/{authorization_id}/revoke", data={"scope": "company"}
        )
    ended = node_get(client, "/account/membership/authenticated", key, tokens["access_token"])
    assert_refused(ended, 401, "invalid_token")
    # Another company's member cannot revoke it: 404, as if it did not exist.
    other = browsers(world["a"]["emails"]["owner"]).post(
        f"/dashboard/authorizations/{ids[0]}/revoke"
    )
    assert "No such authorization." in other.text


def test_an_expired_access_token_is_refused(
    client: httpx.Client,
    db: Database,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    key = world["partner"]["testKey"]
    tokens = tokens_for(client, browsers(world["a"]["emails"]["editor"]), app_credentials, key)
    _age(db, PartnerToken, "access_expires_at", timedelta(seconds=1))
    expired = node_get(client, "/account/membership/authenticated", key, tokens["access_token"])
    assert_refused(expired, 401, "token_expired")
    # The refresh token still gives a new one.
    body = {"refresh_token": tokens["refresh_token"], **app_credentials}
    assert node_post(client, "/account/oauth/refresh_token", body, key).status_code == 200


def test_a_token_of_company_a_on_company_b_data_is_404(
    client: httpx.Client,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    key = world["partner"]["testKey"]
    theirs = client.post(
        "/v1/inspection/car",
        json={"templateId": "easy", "locale": "es_AR", "delivery": DELIVERY, "car": {}},
        headers={"x-api-key": world["b"]["testKey"]},
    )
    assert theirs.status_code == 201
    tokens = tokens_for(client, browsers(world["a"]["emails"]["editor"]), app_credentials, key)
    found = node_get(
        client, f"/inspection/{theirs.json()['inspectionId']}", key, tokens["access_token"]
    )
    assert_refused(found, 404, "inspection_not_found")


def test_roles_scopes_and_modes_hold(
    client: httpx.Client,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    key = world["partner"]["testKey"]
    body = {"templateId": "easy", "locale": "es_AR", "delivery": DELIVERY, "car": {}}
    viewer = tokens_for(client, browsers(world["a"]["emails"]["viewer"]), app_credentials, key)
    refused = client.post(
        "/v1/inspection/car",
        json=body,
        headers={"Authorization": f"Bearer {viewer['access_token']}"},
    )
    assert_refused(refused, 403, "insufficient_scope")
    assert 'error="insufficient_scope"' in refused.headers["www-authenticate"]
    in_body = client.post(
        "/v1/inspection/car",
        json={**body, "access_token": viewer["access_token"]},
        headers={"x-api-key": key},
    )
    assert_refused(in_body, 403, "insufficient_scope")

    # An application registered for reading only: its token cannot create, whatever the role.
    reader = register(browsers(world["partner"]["owner"]), "Reader", scopes=("inspections:read",))
    editor = tokens_for(client, browsers(world["a"]["emails"]["editor"]), reader, key)
    assert editor.get("scope", "inspections:read") == "inspections:read"
    assert_refused(
        client.post(
            "/v1/inspection/car",
            json=body,
            headers={"Authorization": f"Bearer {editor['access_token']}"},
        ),
        403,
        "insufficient_scope",
    )
    # Asking for a scope the application did not register: no code.
    page = browsers(world["a"]["emails"]["editor"]).http.get(
        "/dashboard/oauth/authorize",
        params={
            "response_type": "code",
            "client_id": reader["client_app_id"],
            "scope": "inspections:create",
        },
    )
    assert page.status_code == 400 and 'id="oauth-error-code">invalid_scope<' in page.text

    # A test application's token sees the member's test data, never the live data.
    live = client.post(
        "/v1/inspection/car", json=body, headers={"x-api-key": world["a"]["liveKey"]}
    )
    assert live.status_code == 201
    owner_token = tokens_for(client, browsers(world["a"]["emails"]["owner"]), app_credentials, key)
    hidden = node_get(
        client, f"/inspection/{live.json()['inspectionId']}", key, owner_token["access_token"]
    )
    assert_refused(hidden, 404, "inspection_not_found")
    made = client.post(
        "/v1/inspection/car",
        json=body,
        headers={"Authorization": f"Bearer {owner_token['access_token']}"},
    )
    shown = client.get(
        f"/v1/inspection/{made.json()['inspectionId']}",
        headers={"x-api-key": world["a"]["testKey"]},
    )
    assert shown.status_code == 200 and shown.json()["testing"] is True

    # Routes that take only keys ignore a Bearer; those for tokens refuse a key.
    keyed = client.get("/v1/account/membership/authenticated", headers={"x-api-key": key})
    assert_refused(keyed, 401, "unauthorized")


def test_a_token_follows_its_members_role_at_each_request(
    client: httpx.Client,
    db: Database,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    """The scopes a token uses are those its member approved that their role allows now."""
    key = world["partner"]["testKey"]
    company = world["b"]
    promoted = f"promoted-{secrets.token_hex(3)}@example.com"
    made = accounts.create_account(db, company["companyId"], promoted, "viewer", PASSWORD)
    browser = Browserish(str(client.base_url))
    assert browser.sign_in(promoted).status_code == 303
    access = tokens_for(client, browser, app_credentials, key)["access_token"]
    bearer = {"Authorization": f"Bearer {access}"}
    browser.http.close()
    body = {"templateId": "easy", "locale": "es_AR", "delivery": DELIVERY, "car": {}}
    assert_refused(
        client.post("/v1/inspection/car", json=body, headers=bearer), 403, "insufficient_scope"
    )
    owner = accounts.Actor("x", company["companyId"], company["emails"]["owner"], "owner")
    accounts.change_role(db, owner, made["id"], "editor")
    assert client.post("/v1/inspection/car", json=body, headers=bearer).status_code == 201
    page = browsers(company["emails"]["owner"]).get("/dashboard/authorizations/company")
    assert promoted in page.text and "last token" in page.text


def test_refusal_goes_back_with_access_denied(
    browsers: Callable[[str], Browserish], world: dict[str, Any], app_credentials: dict[str, str]
) -> None:
    answered = authorize(
        browsers(world["a"]["emails"]["editor"]),
        app_credentials["client_app_id"],
        decision="refuse",
    )
    assert answered["error"] == ["access_denied"] and answered["state"] == ["xyz"]
    assert "code" not in answered


def test_revocation_endpoint_rfc_7009(
    client: httpx.Client,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
) -> None:
    key = world["partner"]["testKey"]
    basic = httpx.BasicAuth(app_credentials["client_app_id"], app_credentials["client_secret"])
    tokens = tokens_for(client, browsers(world["a"]["emails"]["editor"]), app_credentials, key)
    unknown = client.post("/v1/account/oauth/revoke", data={"token": "prt_unknown"}, auth=basic)
    assert unknown.status_code == 200
    done = client.post(
        "/v1/account/oauth/revoke",
        data={"token": tokens["refresh_token"], "token_type_hint": "refresh_token"},
        auth=basic,
    )
    assert done.status_code == 200, done.text
    ended = node_get(client, "/account/membership/authenticated", key, tokens["access_token"])
    assert_refused(ended, 401, "invalid_token")
    wrong = client.post(
        "/v1/account/oauth/revoke",
        data={"token": "x"},
        auth=httpx.BasicAuth(app_credentials["client_app_id"], "nope"),
    )
    assert_refused(wrong, 401, "invalid_client", "invalid_client")


def test_rotating_the_secret_retires_the_old_one(
    client: httpx.Client,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
) -> None:
    owner = browsers(world["partner"]["owner"])
    credentials = register(owner, "Rotating")
    page = owner.post(f"/dashboard/developers/apps/{credentials['client_app_id']}/rotate")
    assert page.status_code == 200
    new_secret = _code_text(page.text, "client-secret")
    assert new_secret != credentials["client_secret"]
    key = world["partner"]["testKey"]
    code = new_code(browsers(world["a"]["emails"]["editor"]), credentials)
    assert_refused(exchange(client, credentials, code, key), 401, "invalid_client")
    renewed = {**credentials, "client_secret": new_secret}
    assert exchange(client, renewed, code, key).status_code == 200
    # Registering refuses a redirect URI that is not https, or holds a fragment.
    for bad in ("http://partner.example/cb", "https://partner.example/cb#x", "partner/cb"):
        refused = owner.post(
            "/dashboard/developers/apps",
            data={"name": "Bad", "redirect_uris": bad, "scopes": ["inspections:read"]},
        )
        assert refused.status_code == 400 and 'id="app-error"' in refused.text


def test_the_php_authorization_link_reaches_the_consent_page(
    browsers: Callable[[str], Browserish], world: dict[str, Any], app_credentials: dict[str, str]
) -> None:
    """OAuthService::buildAuthorizationLink: `/oauth/connect?scopes[0]=...&client_app_id=...`."""
    browser = browsers(world["a"]["emails"]["editor"])
    link = browser.http.get(
        "/dashboard/oauth/connect",
        params={"scopes[0]": "inspections:read", "client_app_id": app_credentials["client_app_id"]},
    )
    assert link.status_code == 303
    page = browser.http.get(link.headers["location"])
    assert page.status_code == 200 and "Read your company&#39;s inspections" in page.text
    assert "Create inspections for you" not in page.text


def test_the_consent_page_asks_to_sign_in_first_and_comes_back(
    live_server: str, world: dict[str, Any], app_credentials: dict[str, str]
) -> None:
    browser = Browserish(live_server)
    client_id = app_credentials["client_app_id"]
    path = f"/dashboard/oauth/authorize?response_type=code&client_id={client_id}"
    first = browser.http.get(path)
    assert first.status_code == 303
    sign_in = browser.get(first.headers["location"])
    assert 'name="next"' in sign_in.text
    signed = browser.post(
        "/dashboard/sign-in",
        data={"email": world["a"]["emails"]["editor"], "password": PASSWORD, "next": path},
    )
    assert signed.status_code == 303 and signed.headers["location"] == path
    # Only a dashboard path: another site is never where sign-in leads.
    other = Browserish(live_server)
    other.get("/dashboard/sign-in")
    away = other.post(
        "/dashboard/sign-in",
        data={
            "email": world["a"]["emails"]["viewer"],
            "password": PASSWORD,
            "next": "//evil.example/",
        },
    )
    assert away.headers["location"] == "/dashboard/"
    browser.http.close()
    other.http.close()


def test_the_worker_purges_spent_codes_and_tokens(
    client: httpx.Client,
    db: Database,
    browsers: Callable[[str], Browserish],
    world: dict[str, Any],
    app_credentials: dict[str, str],
    settings: Settings,
) -> None:
    """Codes a day past their expiry and pairs whose refresh token expired are deleted; a live
    pair stays and still works."""
    from server.app import worker_jobs

    key = world["partner"]["testKey"]
    live = tokens_for(client, browsers(world["a"]["emails"]["editor"]), app_credentials, key)
    purge = worker_jobs(settings).purge_partner_tokens
    assert purge is not None
    purge(db, utcnow())  # nothing of this test's is spent yet
    still = node_get(client, "/account/membership/authenticated", key, live["access_token"])
    assert still.status_code == 200
    later = utcnow() + timedelta(days=31)
    assert purge(db, later) > 0
    with db.engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(PartnerToken)).scalar() == 0
        assert connection.execute(select(func.count()).select_from(PartnerCode)).scalar() == 0
