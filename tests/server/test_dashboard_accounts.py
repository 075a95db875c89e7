"""Dashboard accounts through their service: argon2id hashes, sign-in and its lockout, DB
sessions and their revocation, invitations and resets by email link (the development outbox),
role changes with the owner rules, and the `admin create-user` command."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from server.dashboard import accounts
from server.dashboard.accounts import AccountError, Actor
from server.dashboard.mail import ProviderMail, kept_mail
from server.delivery.providers.outbox import Outbox
from server.tables import utcnow

PASSWORD = "correct horse battery"
INSPECTLANG = str(Path(sys.executable).parent / "inspectlang")


def _email(label: str = "m") -> str:
    return f"{label}-{secrets.token_hex(4)}@example.com"


def _owner(db: Any, company: dict[str, Any]) -> Actor:
    row = accounts.create_account(db, company["companyId"], _email("owner"), "owner", PASSWORD)
    return Actor(row["id"], company["companyId"], row["email"], "owner")


def _code(call: Any) -> str:
    with pytest.raises(AccountError) as caught:
        call()
    return caught.value.code


def test_password_is_stored_as_an_argon2id_hash(db: Any, company: dict[str, Any]) -> None:
    from server.dashboard.tables import Account

    owner = _owner(db, company)
    with db.session() as session:
        stored = session.get(Account, owner.account_id).password_hash
    assert stored.startswith("$argon2id$") and PASSWORD not in stored


def test_sign_in_gives_a_session_that_sign_out_revokes(db: Any, company: dict[str, Any]) -> None:
    owner = _owner(db, company)
    token = accounts.sign_in(db, owner.email.upper(), PASSWORD, "10.0.0.1")
    info = accounts.session_of(db, token)
    assert info is not None and info.actor == owner and info.mode == "test"
    accounts.set_mode(db, token, "live")
    assert accounts.session_of(db, token).mode == "live"  # type: ignore[union-attr]
    accounts.sign_out(db, token)
    assert accounts.session_of(db, token) is None
    assert accounts.session_of(db, "not-a-token") is None


def test_session_expires(db: Any, company: dict[str, Any]) -> None:
    owner = _owner(db, company)
    token = accounts.sign_in(db, owner.email, PASSWORD, "10.0.0.2")
    later = utcnow() + accounts.SESSION_LIFETIME + timedelta(seconds=1)
    assert accounts.session_of(db, token, now=later) is None


def test_wrong_password_then_lockout_even_for_the_right_one(
    db: Any, company: dict[str, Any]
) -> None:
    owner = _owner(db, company)
    now = utcnow()
    for _ in range(accounts.EMAIL_LIMIT - 1):
        assert _code(lambda: accounts.sign_in(db, owner.email, "wrong!", "10.0.0.3", now)) == (
            "invalid_credentials"
        )
    assert _code(lambda: accounts.sign_in(db, owner.email, "wrong!", "10.0.0.3", now)) == (
        "locked_out"
    )
    assert _code(lambda: accounts.sign_in(db, owner.email, PASSWORD, "10.0.0.4", now)) == (
        "locked_out"
    )
    after = now + accounts.LOCKOUT + timedelta(seconds=1)
    assert accounts.session_of(db, accounts.sign_in(db, owner.email, PASSWORD, "10.0.0.4", after))


def test_unknown_address_answers_like_a_wrong_password_and_locks_too(db: Any) -> None:
    address = _email("nobody")
    now = utcnow()
    codes = [
        _code(lambda: accounts.sign_in(db, address, PASSWORD, "10.0.0.5", now))
        for _ in range(accounts.EMAIL_LIMIT)
    ]
    assert codes == ["invalid_credentials"] * (accounts.EMAIL_LIMIT - 1) + ["locked_out"]


def test_one_client_spraying_many_addresses_is_locked(db: Any) -> None:
    now = utcnow()
    client = f"10.1.{secrets.randbelow(250)}.{secrets.randbelow(250)}"
    codes = [
        _code(lambda: accounts.sign_in(db, _email("spray"), "x", client, now))
        for _ in range(accounts.IP_LIMIT + 1)
    ]
    assert codes[-1] == "locked_out" and codes[0] == "invalid_credentials"


def test_invitation_by_email_link(db: Any, company: dict[str, Any], tmp_path: Path) -> None:
    owner = _owner(db, company)
    outbox = ProviderMail(Outbox(db))
    address = _email("invitee")
    row = accounts.invite(db, owner, address, "editor", "http://dash.test", outbox)
    assert row["active"] is False
    assert _code(lambda: accounts.sign_in(db, address, "", "10.0.0.6")) == "invalid_credentials"
    [mail] = kept_mail(db, to=address)
    link = next(line for line in mail.text.splitlines() if "/dashboard/accept?token=" in line)
    token = link.split("token=")[1]
    assert accounts.link_account(db, token, "invite")["email"] == address  # type: ignore[index]
    assert accounts.link_account(db, token, "reset") is None
    assert _code(lambda: accounts.use_link(db, token, "invite", "short")) == "invalid_password"
    accounts.use_link(db, token, "invite", "a new password!")
    assert _code(lambda: accounts.use_link(db, token, "invite", "again and again")) == (
        "invalid_link"
    )
    info = accounts.session_of(db, accounts.sign_in(db, address, "a new password!", "10.0.0.6"))
    assert info is not None and info.actor.role == "editor"
    assert _code(lambda: accounts.invite(db, owner, address, "viewer", "http://x", outbox)) == (
        "email_taken"
    )


def test_password_reset_signs_out_every_session(
    db: Any, company: dict[str, Any], tmp_path: Path
) -> None:
    owner = _owner(db, company)
    outbox = ProviderMail(Outbox(db))
    session_token = accounts.sign_in(db, owner.email, PASSWORD, "10.0.0.7")
    unknown = _email("unknown")
    accounts.request_reset(db, unknown, "http://dash.test", outbox)
    assert kept_mail(db, to=unknown) == []
    accounts.request_reset(db, owner.email, "http://dash.test", outbox)
    [mail] = kept_mail(db, to=owner.email)
    token = mail.text.split("/dashboard/reset?token=")[1].split()[0]
    assert _code(lambda: accounts.use_link(db, token, "invite", "another password")) == (
        "invalid_link"
    )
    accounts.use_link(db, token, "reset", "another password")
    assert accounts.session_of(db, session_token) is None
    assert _code(lambda: accounts.sign_in(db, owner.email, PASSWORD, "10.0.0.7")) == (
        "invalid_credentials"
    )
    assert accounts.sign_in(db, owner.email, "another password", "10.0.0.7")


def test_roles_and_owner_rules(db: Any, company: dict[str, Any], tmp_path: Path) -> None:
    owner = _owner(db, company)
    outbox = ProviderMail(Outbox(db))
    admin_row = accounts.create_account(db, company["companyId"], _email("a"), "admin", PASSWORD)
    admin = Actor(admin_row["id"], company["companyId"], admin_row["email"], "admin")
    viewer_row = accounts.invite(db, admin, _email("v"), "viewer", "http://x", outbox)
    viewer = Actor(viewer_row["id"], company["companyId"], viewer_row["email"], "viewer")
    # admins manage members but not owners; viewers manage nobody
    assert _code(lambda: accounts.invite(db, admin, _email(), "owner", "http://x", outbox)) == (
        "forbidden"
    )
    assert _code(lambda: accounts.change_role(db, admin, owner.account_id, "viewer")) == (
        "forbidden"
    )
    assert _code(lambda: accounts.invite(db, viewer, _email(), "viewer", "http://x", outbox)) == (
        "forbidden"
    )
    assert accounts.change_role(db, admin, viewer.account_id, "editor")["role"] == "editor"
    assert _code(lambda: accounts.change_role(db, admin, viewer.account_id, "boss")) == (
        "invalid_role"
    )
    # the last owner stays
    assert _code(lambda: accounts.change_role(db, owner, owner.account_id, "admin")) == (
        "last_owner"
    )
    assert _code(lambda: accounts.remove(db, owner, owner.account_id)) == "last_owner"
    # another company's member is not found
    other = accounts.create_account(db, company["companyId"], _email("o"), "viewer", PASSWORD)
    foreign = Actor("x", "another-company", "x@example.com", "owner")
    assert _code(lambda: accounts.remove(db, foreign, other["id"])) == "account_not_found"
    # removal signs the member out at once
    token = accounts.sign_in(db, other["email"], PASSWORD, "10.0.0.8")
    accounts.remove(db, admin, other["id"])
    assert accounts.session_of(db, token) is None
    emails = {row["email"] for row in accounts.list_accounts(db, viewer)}
    assert other["email"] not in emails and owner.email in emails


def test_bad_input_is_refused_with_codes(db: Any, company: dict[str, Any]) -> None:
    cid = company["companyId"]
    assert _code(lambda: accounts.create_account(db, cid, "not an email", "owner", PASSWORD)) == (
        "invalid_email"
    )
    assert _code(lambda: accounts.create_account(db, cid, _email(), "owner", "short")) == (
        "invalid_password"
    )
    assert _code(lambda: accounts.create_account(db, cid, _email(), "king", PASSWORD)) == (
        "invalid_role"
    )
    assert _code(lambda: accounts.create_account(db, "nope", _email(), "owner", PASSWORD)) == (
        "company_not_found"
    )


def _create_user(*args: str, password: str, database_url: str, data_dir: Path) -> Any:
    return subprocess.run(
        [INSPECTLANG, "admin", "create-user", *args, "--database-url", database_url,
         "--data-dir", str(data_dir)],
        input=password + "\n", capture_output=True, text=True, timeout=60,
        env={**os.environ, "INSPECTLANG_WORKER": "0"},
    )  # fmt: skip


def test_admin_create_user_reads_the_password_from_stdin(
    db: Any, company: dict[str, Any], database_url: str, tmp_path: Path
) -> None:
    import json

    address = _email("cli")
    result = _create_user(
        company["companyId"], address, "--role", "owner",
        password=PASSWORD, database_url=database_url, data_dir=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    created = json.loads(result.stdout)
    assert created["email"] == address and created["role"] == "owner" and created["active"]
    assert PASSWORD not in result.stdout
    assert accounts.session_of(db, accounts.sign_in(db, address, PASSWORD, "10.0.0.9"))
    again = _create_user(
        company["companyId"], address, "--role", "viewer",
        password=PASSWORD, database_url=database_url, data_dir=tmp_path,
    )  # fmt: skip
    assert again.returncode == 1 and json.loads(again.stderr)["code"] == "email_taken"
    short = _create_user(
        company["companyId"], _email(), "--role", "viewer",
        password="short", database_url=database_url, data_dir=tmp_path,
    )  # fmt: skip
    assert short.returncode == 1 and json.loads(short.stderr)["code"] == "invalid_password"


def test_demo_company_has_an_owner_whose_login_is_printed(db: Any, tmp_path: Path) -> None:
    from server.demo import (
        DEMO_OWNER_EMAIL,
        DEMO_OWNER_PASSWORD,
        describe,
        ensure_demo_company,
    )

    keys = ensure_demo_company(db, tmp_path)
    assert ensure_demo_company(db, tmp_path) == keys  # a second start reuses everything
    token = accounts.sign_in(db, DEMO_OWNER_EMAIL, DEMO_OWNER_PASSWORD, "10.0.1.1")
    info = accounts.session_of(db, token)
    assert info is not None and info.actor.role == "owner"
    assert info.actor.company_id == keys["companyId"]
    text = describe(keys, "http://127.0.0.1:8000")
    assert f"sign in as {DEMO_OWNER_EMAIL} / {DEMO_OWNER_PASSWORD}" in text
    assert "http://127.0.0.1:8000/dashboard/" in text
    # another data directory makes another demo company: the demo owner follows it
    other = ensure_demo_company(db, tmp_path / "other")
    moved = accounts.session_of(
        db, accounts.sign_in(db, DEMO_OWNER_EMAIL, DEMO_OWNER_PASSWORD, "10.0.1.1")
    )
    assert moved is not None and moved.actor.company_id == other["companyId"]


def test_reset_emails_to_one_address_are_limited(
    db: Any, company: dict[str, Any], tmp_path: Path
) -> None:
    owner = _owner(db, company)
    outbox = ProviderMail(Outbox(db))
    for _ in range(accounts.RESET_LIMIT + 2):
        accounts.request_reset(db, owner.email, "http://dash.test", outbox)
    assert len(kept_mail(db, to=owner.email)) == accounts.RESET_LIMIT
