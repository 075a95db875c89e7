"""Issue 21 §4: accounts and sessions, as the security probe attacked them.

- CSRF tokens are bound to the session: a cookie and token pair the attacker got in their own
  browser (and planted, e.g. from a sibling subdomain) is refused with the victim's session,
  and so is another session's token; cross-site posts are refused whatever they carry.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from server.dashboard import accounts
from server.db import Database

PASSWORD = "member password 1"
TOKEN = re.compile(r'name="_csrf_token" value="([^"]+)"')


@pytest.fixture
def team(db: Database) -> dict[str, Any]:
    from server.auth import create_company

    company = create_company(db, f"Guarded Co {secrets.token_hex(3)}", [])
    email = f"owner-{secrets.token_hex(3)}@guarded.example.com"
    accounts.create_account(db, company["companyId"], email, "owner", PASSWORD)
    return {**company, "owner": email}


@pytest.fixture
def browser(live_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server, timeout=30) as client:
        yield client


def sign_in(client: httpx.Client, email: str, password: str = PASSWORD) -> None:
    token = TOKEN.search(client.get("/dashboard/sign-in").text)
    assert token is not None
    signed = client.post(
        "/dashboard/sign-in",
        data={"email": email, "password": password, "_csrf_token": token.group(1)},
        follow_redirects=False,
    )
    assert signed.status_code == 303, signed.text


def page_token(client: httpx.Client, path: str = "/dashboard/members") -> str:
    found = TOKEN.search(client.get(path).text)
    assert found is not None
    return found.group(1)


def members_of(db: Database, team: dict[str, Any]) -> list[str]:
    actor = accounts.Actor(account_id="", company_id=team["companyId"], email="", role="owner")
    return sorted(row["email"] for row in accounts.list_accounts(db, actor))


def test_a_csrf_token_is_bound_to_its_session(
    live_server: str, db: Database, team: dict[str, Any], browser: httpx.Client
) -> None:
    sign_in(browser, team["owner"])
    victim_session = browser.cookies["inspectlang_member"]
    own = page_token(browser)

    # The attacker's pair: the pre-session cookie and token of their own browser...
    with httpx.Client(base_url=live_server, timeout=30) as attacker:
        attacker_token = TOKEN.search(attacker.get("/dashboard/sign-in").text)
        assert attacker_token is not None
        attacker_cookie = attacker.cookies["inspectlang_csrf"]
    # ... and the token of another session of the same member (another device).
    with httpx.Client(base_url=live_server, timeout=30) as other_device:
        sign_in(other_device, team["owner"])
        other_token = page_token(other_device)
    assert len({own, attacker_token.group(1), other_token}) == 3

    before = members_of(db, team)
    for token, csrf_cookie in ((attacker_token.group(1), attacker_cookie), (other_token, None)):
        cookies = {"inspectlang_member": victim_session}
        if csrf_cookie is not None:
            cookies["inspectlang_csrf"] = csrf_cookie  # planted in the victim's browser
        with httpx.Client(base_url=live_server, cookies=cookies, timeout=30) as victim:
            forged = victim.post(
                "/dashboard/members/invite",
                data={"email": "attacker@evil.example", "role": "admin", "_csrf_token": token},
            )
            # Pages another area mounts under /dashboard (the review queue) are bound too.
            claim = victim.post(f"/dashboard/review/{'0' * 24}/claim", data={"_csrf_token": token})
        assert forged.status_code == 403, forged.text
        assert claim.status_code == 403, claim.text
    assert members_of(db, team) == before

    # A cross-site post is refused even with the right token (Origin / Sec-Fetch-Site).
    for headers in ({"origin": "https://evil.example"}, {"sec-fetch-site": "cross-site"}):
        refused = browser.post(
            "/dashboard/members/invite",
            data={"email": "attacker@evil.example", "role": "admin", "_csrf_token": own},
            headers=headers,
        )
        assert refused.status_code == 403, refused.text
    assert members_of(db, team) == before

    invited = f"new-{secrets.token_hex(3)}@guarded.example.com"
    accepted = browser.post(
        "/dashboard/members/invite",
        data={"email": invited, "role": "viewer", "_csrf_token": own},
        headers={"origin": live_server},
    )
    assert accepted.status_code == 200, accepted.text
    assert invited in members_of(db, team)


def test_a_password_reset_invalidates_the_accounts_other_reset_links(
    db: Database, team: dict[str, Any], live_server: str, settings: Any
) -> None:
    from server.dashboard.mail import kept_mail, mail_sender

    # Asked twice (an older email still sits in a mailbox): both links are valid until one
    # of them sets the password.
    for _ in range(2):
        accounts.request_reset(db, team["owner"], live_server, mail_sender(settings, db))
    mails = kept_mail(db, to=team["owner"])
    links = [re.search(r"token=(\S+)", mail.text) for mail in mails]
    first, second = (found.group(1) for found in links if found is not None)
    assert accounts.link_account(db, first, "reset") is not None
    assert accounts.link_account(db, second, "reset") is not None

    accounts.use_link(db, second, "reset", "a new password 2")
    assert accounts.link_account(db, first, "reset") is None
    with pytest.raises(accounts.AccountError) as refused:
        accounts.use_link(db, first, "reset", "the attacker's password")
    assert refused.value.code == "invalid_link"
    accounts.sign_in(db, team["owner"], "a new password 2", "test")


def test_inviting_another_companys_member_answers_as_any_invitation(
    db: Database, team: dict[str, Any], browser: httpx.Client
) -> None:
    from server.auth import create_company
    from server.dashboard.mail import kept_mail

    other = create_company(db, f"Elsewhere Co {secrets.token_hex(3)}", [])
    taken = f"taken-{secrets.token_hex(3)}@elsewhere.example.com"
    accounts.create_account(db, other["companyId"], taken, "editor", "their password 1")
    fresh = f"fresh-{secrets.token_hex(3)}@nowhere.example.com"
    sign_in(browser, team["owner"])

    def invite(address: str) -> httpx.Response:
        return browser.post(
            "/dashboard/members/invite",
            data={"email": address, "role": "viewer", "_csrf_token": page_token(browser)},
        )

    answers = {address: invite(address) for address in (fresh, taken)}
    for address, answer in answers.items():
        assert answer.status_code == 200, answer.text
        assert f"Invitation sent to {address}." in answer.text
    assert "already has an account" not in answers[taken].text
    # The other company's member stays theirs, and is told by email.
    found = accounts.find_account(db, taken)
    assert found is not None and found["companyId"] == other["companyId"]
    [mail] = kept_mail(db, to=taken)
    assert "already has an inspectlang dashboard account" in mail.text
    # One of the team's own members is still refused: they are on the team's page anyway.
    again = invite(team["owner"])
    assert again.status_code == 409 and "already has an account" in again.text
    # Both invitations are listed alike (a missing row would tell the address is taken
    # elsewhere), and the taken one answers a second invitation as the fresh one does.
    page = browser.get("/dashboard/members").text
    for address in (fresh, taken):
        row = page.split(f"<strong>{address}</strong>", 1)[1].split("</p>", 1)[0]
        assert "invited, no password yet" in row, row
    assert [invite(address).status_code for address in (fresh, taken)] == [409, 409]
    # The inviter can change the pending invitation's role and withdraw it like any other.
    owner = accounts.Actor(account_id="", company_id=team["companyId"], email="", role="owner")
    rows = {row["email"]: row for row in accounts.list_accounts(db, owner)}
    assert rows[taken]["active"] is False and rows[taken]["role"] == "viewer"
    changed = browser.post(
        f"/dashboard/members/{rows[taken]['id']}/role",
        data={"role": "editor", "_csrf_token": page_token(browser)},
    )
    assert changed.status_code == 200, changed.text
    assert {r["email"]: r["role"] for r in accounts.list_accounts(db, owner)}[taken] == "editor"
    removed = browser.post(
        f"/dashboard/members/{rows[taken]['id']}/remove",
        data={"_csrf_token": page_token(browser)},
    )
    assert removed.status_code == 200, removed.text
    assert taken not in {r["email"] for r in accounts.list_accounts(db, owner)}
    # The other company's account is untouched by all this.
    found = accounts.find_account(db, taken)
    assert found is not None and found["companyId"] == other["companyId"]


def test_link_codes_are_throttled_per_inspection_and_per_address(
    team: dict[str, Any], settings: Any, db: Database, serve_app: Any
) -> None:
    """Alone it passed; in a full PostgreSQL run it once got the 404 page where 429 was due.
    Its counts live in windows of the wall clock (`LINK_WINDOW_SECONDS`), kept on PostgreSQL
    in the session's one `rate_limit_counters` table, under fixed ids and addresses: a run
    that crossed a window's edge started counting again from 0, and any test before it in the
    same window counted into the same buckets. Now the throttle reads the app's clock, pinned
    here to the middle of a window of its own, and the ids and addresses are this run's."""
    from server.app import create_app
    from server.ratelimit import LINK_WINDOW_SECONDS

    windows = secrets.randbelow(10**6) + 10**6  # a window of 1989-2008: no other run's
    moment = datetime.fromtimestamp(windows * LINK_WINDOW_SECONDS + LINK_WINDOW_SECONDS / 2, UTC)
    subnet = f"127.{secrets.randbelow(200) + 20}.{secrets.randbelow(250)}"
    first, second, third, fourth = (f"{subnet}.{host}" for host in (2, 3, 4, 5))
    with serve_app(create_app(settings, db=db, clock=lambda: moment)) as live_server:
        created = httpx.post(
            f"{live_server}/v1/inspection/car",
            json={"templateId": "easy", "locale": "en_US", "delivery": {"disabled": True}},
            headers={"x-api-key": team["testKey"]},
        )
        assert created.status_code == 201, created.text
        _throttled(live_server, created.json(), (first, second, third, fourth))


def _throttled(live_server: str, created: dict[str, Any], addresses: tuple[str, ...]) -> None:
    from server.ratelimit import LINK_FAILURES_PER_ADDRESS, LINK_FAILURES_PER_INSPECTION

    first, second, third, fourth = addresses
    inspection_id, link = created["inspectionId"], created["magicLink"]
    right_code = link.split("code=")[1]
    unknown = secrets.token_hex(12)
    fresh = [secrets.token_hex(12) for _ in range(LINK_FAILURES_PER_ADDRESS + 2)]
    csrf_meta = re.compile(r'<meta name="csrf-token" content="[^"]+">')

    def open_link(identifier: str, code: str, address: str) -> httpx.Response:
        """From the client address `address` (any 127.x.y.z is this machine)."""
        transport = httpx.HTTPTransport(local_address=address)
        with httpx.Client(transport=transport, timeout=30) as client:
            return client.get(f"{live_server}/i/{identifier}?code={code}")

    # Wrong codes for an inspection from one address, an unknown id from another: the same
    # 404 page, until each id reached its limit.
    for attempt in range(LINK_FAILURES_PER_INSPECTION):
        wrong = open_link(inspection_id, f"wrong{attempt}", first)
        nobody = open_link(unknown, f"any{attempt}", second)
        assert wrong.status_code == nobody.status_code == 404
        assert csrf_meta.sub("", wrong.text) == csrf_meta.sub("", nobody.text)
    # Then 429 for both ids, from any address, the right code included: an attacker learns
    # nothing while refused.
    for refused in (open_link(inspection_id, "wrong", third),
                    open_link(unknown, "any", third),
                    open_link(inspection_id, right_code, third)):  # fmt: skip
        assert refused.status_code == 429, refused.text
        assert int(refused.headers["retry-after"]) > 0
        assert "Too many attempts" in refused.text
    # Per address: the first has failed 20 times; fresh ids answer 404 until its 30th failure.
    for attempt in range(LINK_FAILURES_PER_ADDRESS - LINK_FAILURES_PER_INSPECTION):
        assert open_link(fresh[attempt], "x", first).status_code == 404
    assert open_link(fresh[-1], "x", first).status_code == 429
    assert open_link(fresh[-1], "x", fourth).status_code == 404  # another address
