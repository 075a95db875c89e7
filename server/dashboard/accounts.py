"""Dashboard accounts: argon2id passwords, sign-in with a lockout, sessions in the database,
invitations and password resets by email link, roles.

Sessions are the web layer's (`server.web.sessions`, kind `member`, bound to the account) and
link tokens are random strings given once; the database keeps only their SHA-256, so every API
process accepts a session and revoking one is deleting its row.

Sign-in throttle: failures are counted per email address (whether or not an account has it, so
the answer says nothing about which addresses exist) and per client address. `EMAIL_LIMIT`
failures within `WINDOW` lock the address for `LOCKOUT`; during a lockout even the right
password is refused. `IP_LIMIT` does the same per client address against spraying.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from runtime.intake import email_address
from server.auth import AdminError
from server.dashboard.mail import Mail, Sender
from server.dashboard.permissions import ROLES, allowed
from server.dashboard.tables import (
    Account,
    AccountToken,
    LoginThrottle,
    MemberPreference,
    PendingInvitation,
)
from server.db import Database
from server.tables import Company, utcnow
from server.tokens import hash_token
from server.web import sessions as web_sessions

#: The kind of `web_sessions` row a signed-in member has (`server.web.sessions`).
SESSION_KIND = "member"

#: argon2-cffi's defaults are argon2id (RFC 9106's second recommended parameter set).
_hasher = PasswordHasher()
#: Verified when no account has the address, so timing does not tell which addresses exist.
_DUMMY_HASH = _hasher.hash(secrets.token_urlsafe(16))

MIN_PASSWORD_LENGTH = 10
MAX_PASSWORD_LENGTH = 1024
SESSION_LIFETIME = timedelta(hours=12)
INVITE_LIFETIME = timedelta(days=7)
RESET_LIFETIME = timedelta(hours=1)
EMAIL_LIMIT = 5
IP_LIMIT = 30
#: Reset emails sent to one address per `WINDOW`; more requests send nothing (no mail bombing).
RESET_LIMIT = 3
WINDOW = timedelta(minutes=15)
LOCKOUT = timedelta(minutes=15)

#: HTTP status of each code `AccountError` carries (the pages answer with it).
STATUS_BY_CODE: dict[str, int] = {
    "invalid_email": 400,
    "invalid_password": 400,
    "invalid_role": 400,
    "invalid_credentials": 401,
    "locked_out": 429,
    "email_taken": 409,
    "account_not_found": 404,
    "company_not_found": 404,
    "forbidden": 403,
    "last_owner": 409,
    "invalid_link": 400,
    "invalid_mode": 400,
    "mail_not_sent": 409,
}


class AccountError(AdminError):
    """A refused account operation, with a stable `code` (see `STATUS_BY_CODE`)."""

    @property
    def status(self) -> int:
        return STATUS_BY_CODE.get(self.code, 400)


@dataclass(frozen=True, slots=True)
class Actor:
    """The signed-in member doing something (from their session)."""

    account_id: str
    company_id: str
    email: str
    role: str


@dataclass(frozen=True, slots=True)
class SessionInfo:
    actor: Actor
    #: "test" or "live": which key's data the dashboard shows.
    mode: str


def normalize_email(email: str) -> str:
    """The address lower-cased and normalized; `invalid_email` when it is not one (the
    service's one email check, `runtime.intake.email_address`)."""
    try:
        address = email_address(email.strip())
    except ValueError as error:
        raise AccountError("invalid_email", f"not a valid email address: {error}") from None
    return address.lower()


def check_password(password: str) -> None:
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AccountError(
            "invalid_password", f"a password needs at least {MIN_PASSWORD_LENGTH} characters"
        )
    if len(password) > MAX_PASSWORD_LENGTH or "\x00" in password:
        raise AccountError("invalid_password", "that password cannot be used")


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise AccountError("invalid_role", f"role must be one of {', '.join(ROLES)}")


def _require(actor: Actor, action: str) -> None:
    if not allowed(actor.role, action):
        raise AccountError("forbidden", f"the {actor.role} role may not do {action}")


def _account_row(account: Account | PendingInvitation) -> dict[str, Any]:
    """A row of the members page: an account, or an invitation to an address taken by another
    company shaped as an invited account (no password yet) so the two cannot be told apart."""
    active = isinstance(account, Account) and account.password_hash is not None
    return {
        "id": account.id,
        "companyId": account.company_id,
        "email": account.email,
        "role": account.role,
        "active": active,
        "createdAt": account.created_at.isoformat(),
    }


def _pending(session: Session, company_id: str, address: str) -> PendingInvitation | None:
    statement = select(PendingInvitation).where(
        cast(Any, PendingInvitation.company_id) == company_id,
        cast(Any, PendingInvitation.email) == address,
    )
    return session.execute(statement).scalars().first()


# --- creating accounts ---------------------------------------------------------------------------


def create_account(
    db: Database, company_id: str, email: str, role: str, password: str | None
) -> dict[str, Any]:
    """An account of the company (the admin CLI and the demo). `password=None`: none yet."""
    address = normalize_email(email)
    _check_role(role)
    if password is not None:
        check_password(password)
    account = Account(
        company_id=company_id,
        email=address,
        role=role,
        password_hash=_hasher.hash(password) if password is not None else None,
    )
    with db.session() as session:
        if session.get(Company, company_id) is None:
            raise AccountError("company_not_found", f"no company with id {company_id!r}")
        session.add(account)
        try:
            session.commit()
        except IntegrityError:
            raise AccountError("email_taken", f"{address} already has an account") from None
    return _account_row(account)


def find_account(db: Database, email: str) -> dict[str, Any] | None:
    with db.session() as session:
        account = _by_email(session, email.strip().lower())
        return _account_row(account) if account is not None else None


def _by_email(session: Session, address: str) -> Account | None:
    statement = select(Account).where(cast(Any, Account.email) == address)
    return session.execute(statement).scalars().first()


# --- signing in ----------------------------------------------------------------------------------


def _throttle_locked(session: Session, key: str, now: datetime) -> bool:
    row = session.get(LoginThrottle, key)
    return row is not None and row.locked_until is not None and row.locked_until > now


def _count_failure(session: Session, key: str, limit: int, now: datetime) -> None:
    row = session.get(LoginThrottle, key)
    if row is None:
        session.add(LoginThrottle(key=key, failures=1, window_started_at=now))
        return
    if row.window_started_at + WINDOW <= now:
        row.failures, row.window_started_at, row.locked_until = 1, now, None
    else:
        row.failures += 1
    if row.failures >= limit:
        row.locked_until = now + LOCKOUT
    session.add(row)


def sign_in(
    db: Database, email: str, password: str, client: str, now: datetime | None = None
) -> str:
    """A new session token for the right email and password; `AccountError` otherwise:
    `locked_out` while the address or the client is locked, `invalid_credentials` else."""
    now = now or utcnow()
    address = email.strip().lower()[:320]
    email_key, ip_key = f"email:{address}", f"ip:{client[:200]}"
    with db.session(immediate=True) as session:
        if _throttle_locked(session, email_key, now) or _throttle_locked(session, ip_key, now):
            raise AccountError("locked_out", "Too many failed sign-ins: try again in 15 minutes.")
        account = _by_email(session, address)
        stored = account.password_hash if account is not None else None
        if not _verify(stored or _DUMMY_HASH, password) or account is None or stored is None:
            _count_failure(session, email_key, EMAIL_LIMIT, now)
            _count_failure(session, ip_key, IP_LIMIT, now)
            session.commit()
            if _throttle_locked(session, email_key, now):
                raise AccountError(
                    "locked_out", "Too many failed sign-ins: try again in 15 minutes."
                )
            raise AccountError("invalid_credentials", "Wrong email or password.")
        session.execute(delete(LoginThrottle).where(cast(Any, LoginThrottle.key) == email_key))
        if _hasher.check_needs_rehash(stored):
            account.password_hash = _hasher.hash(password)
            session.add(account)
        session.commit()
        account_id, company_id = account.id, account.company_id
    return web_sessions.start_session(
        db,
        kind=SESSION_KIND,
        company_id=company_id,
        subject_id=account_id,
        now=now,
        lifetime=SESSION_LIFETIME,
        data={"mode": "test"},
    )


def _verify(stored: str, password: str) -> bool:
    try:
        return _hasher.verify(stored, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def session_of(db: Database, token: str | None, now: datetime | None = None) -> SessionInfo | None:
    """The live session of a cookie token: None when unknown, expired or signed out, or when
    its account is gone."""
    row = web_sessions.load_session(db, token, SESSION_KIND, now or utcnow())
    if row is None:
        return None
    with db.session() as session:
        account = session.get(Account, row.subject_id)
    if account is None or account.company_id != row.company_id:
        return None
    actor = Actor(account.id, account.company_id, account.email, account.role)
    return SessionInfo(actor=actor, mode="live" if row.data.get("mode") == "live" else "test")


def sign_out(db: Database, token: str) -> None:
    web_sessions.end_session(db, token)


def sign_out_everywhere(db: Database, account_id: str) -> None:
    web_sessions.end_sessions_of(db, SESSION_KIND, account_id)


def set_mode(db: Database, token: str, mode: str) -> None:
    """Switch the session between test and live data."""
    if mode not in ("test", "live"):
        raise AccountError("invalid_mode", "mode must be 'test' or 'live'")
    row = web_sessions.load_session(db, token, SESSION_KIND, utcnow())
    if row is not None:
        web_sessions.update_data(db, row, {**row.data, "mode": mode})


# --- email links ---------------------------------------------------------------------------------


def _issue_link(session: Session, account_id: str, kind: str, lifetime: timedelta) -> str:
    token = secrets.token_urlsafe(32)
    now = utcnow()
    session.add(
        AccountToken(
            id=hash_token(token),
            account_id=account_id,
            kind=kind,
            created_at=now,
            expires_at=now + lifetime,
        )
    )
    return token


def invite(
    db: Database, actor: Actor, email: str, role: str, base_url: str, send: Sender
) -> dict[str, Any]:
    """A new account of the actor's company with no password yet, and an email with the link
    to choose one."""
    _require(actor, "members.manage")
    _check_role(role)
    if role == "owner":
        _require(actor, "members.manage_owners")
    address = normalize_email(email)
    with db.session() as session:
        company = session.get(Company, actor.company_id)
        name = company.name if company is not None else "your company"
        account = Account(
            company_id=actor.company_id, email=address, role=role, invited_by=actor.account_id
        )
        session.add(account)
        try:
            session.flush()
        except IntegrityError:
            session.rollback()
            existing = _by_email(session, address)
            listed = existing is not None and existing.company_id == actor.company_id
            if listed or _pending(session, actor.company_id, address) is not None:
                # On the actor's page already: a member, or an invitation not accepted yet.
                raise AccountError("email_taken", f"{address} already has an account") from None
            # Another company's member: the inviter is answered, and sees the row on their
            # page, as for any invitation (which addresses have accounts elsewhere is not
            # theirs to learn); the address's owner is told, since no account can be made.
            invitation = PendingInvitation(company_id=actor.company_id, email=address, role=role)
            session.add(invitation)
            try:
                session.commit()
            except IntegrityError:  # the same invitation, sent twice at once
                raise AccountError("email_taken", f"{address} already has an account") from None
            row = _account_row(invitation)
            _tell_already_elsewhere(send, actor, address, role, name)
            return row
        token = _issue_link(session, account.id, "invite", INVITE_LIFETIME)
        # The address was taken elsewhere when last invited and is free now: one row, the account.
        stale = _pending(session, actor.company_id, address)
        if stale is not None:
            session.delete(stale)
        session.commit()
    link = f"{base_url.rstrip('/')}/dashboard/accept?token={token}"
    send(
        Mail(
            to=address,
            subject=f"You are invited to the {name} dashboard",
            text=(
                f"{actor.email} invited you to the inspectlang dashboard of {name} as {role}.\n\n"
                f"Choose your password here (the link works once, for 7 days):\n{link}\n"
            ),
        )
    )
    return _account_row(account)


def _tell_already_elsewhere(send: Sender, actor: Actor, address: str, role: str, name: str) -> None:
    send(
        Mail(
            to=address,
            subject=f"You are invited to the {name} dashboard",
            text=(
                f"{actor.email} invited you to the inspectlang dashboard of {name} as {role}.\n\n"
                "This address already has an inspectlang dashboard account, with another "
                "company, and an address can belong to one company's dashboard only. To join, "
                f"ask {actor.email} to invite another address of yours.\n"
            ),
        )
    )


def request_reset(db: Database, email: str, base_url: str, send: Sender) -> None:
    """Email a password-reset link when an active account has the address; silent otherwise
    (the page says the same either way)."""
    address = email.strip().lower()[:320]
    throttle_key = f"reset:{address}"
    now = utcnow()
    with db.session(immediate=True) as session:
        account = _by_email(session, address)
        if account is None or account.password_hash is None:
            return
        if _throttle_locked(session, throttle_key, now):
            return
        _count_failure(session, throttle_key, RESET_LIMIT, now)
        token = _issue_link(session, account.id, "reset", RESET_LIFETIME)
        session.commit()
    link = f"{base_url.rstrip('/')}/dashboard/reset?token={token}"
    send(
        Mail(
            to=address,
            subject="Reset your inspectlang dashboard password",
            text=(
                "Someone asked to reset the password of this dashboard account.\n\n"
                f"Choose a new password here (the link works once, for 1 hour):\n{link}\n\n"
                "If it was not you, ignore this message: your password stays as it is.\n"
            ),
        )
    )


def link_account(db: Database, token: str, kind: str) -> dict[str, Any] | None:
    """The account a valid, unused link of `kind` is for (to show the page), else None."""
    with db.session() as session:
        found = _valid_link(session, token, kind)
        if found is None:
            return None
        account = session.get(Account, found.account_id)
        return _account_row(account) if account is not None else None


def _valid_link(session: Session, token: str, kind: str) -> AccountToken | None:
    if not token or len(token) > 200:
        return None
    found = session.get(AccountToken, hash_token(token))
    if found is None or found.kind != kind or found.used_at is not None:
        return None
    if found.expires_at <= utcnow():
        return None
    return found


def use_link(db: Database, token: str, kind: str, password: str) -> dict[str, Any]:
    """Set the password through an invitation or reset link (once). Every other link of the
    account that was not used yet stops working too (an older reset email in a mailbox someone
    else reads must not set the password again), and every session of the account ends."""
    check_password(password)
    with db.session(immediate=True) as session:
        found = _valid_link(session, token, kind)
        account = session.get(Account, found.account_id) if found is not None else None
        if found is None or account is None:
            raise AccountError(
                "invalid_link", "This link is not valid any more: ask for a new one."
            )
        now = utcnow()
        session.execute(
            update(AccountToken)
            .where(
                cast(Any, AccountToken.account_id) == account.id,
                cast(Any, AccountToken.used_at).is_(None),
            )
            .values(used_at=now)
        )
        account.password_hash = _hasher.hash(password)
        session.add(account)
        session.commit()
    sign_out_everywhere(db, account.id)
    return _account_row(account)


# --- members -------------------------------------------------------------------------------------


def list_accounts(db: Database, actor: Actor) -> list[dict[str, Any]]:
    _require(actor, "members.view")
    with db.session() as session:
        statement = (
            select(Account)
            .where(cast(Any, Account.company_id) == actor.company_id)
            .order_by(cast(Any, Account.created_at), cast(Any, Account.email))
        )
        rows = [_account_row(account) for account in session.execute(statement).scalars()]
        pending = select(PendingInvitation).where(
            cast(Any, PendingInvitation.company_id) == actor.company_id
        )
        rows += [_account_row(row) for row in session.execute(pending).scalars()]
    return sorted(rows, key=lambda row: (row["createdAt"], row["email"]))


def _target_invitation(session: Session, actor: Actor, row_id: str) -> PendingInvitation | None:
    invitation = session.get(PendingInvitation, row_id)
    if invitation is None or invitation.company_id != actor.company_id:
        return None
    return invitation


def _target(session: Session, actor: Actor, account_id: str) -> Account:
    account = session.get(Account, account_id)
    if account is None or account.company_id != actor.company_id:
        raise AccountError("account_not_found", "no such member in this company")
    return account


def _owners(session: Session, company_id: str) -> int:
    statement = select(cast(Any, Account.id)).where(
        cast(Any, Account.company_id) == company_id, cast(Any, Account.role) == "owner"
    )
    return len(session.execute(statement).all())


def change_role(db: Database, actor: Actor, account_id: str, role: str) -> dict[str, Any]:
    _require(actor, "members.manage")
    _check_role(role)
    with db.session(immediate=True) as session:
        invitation = _target_invitation(session, actor, account_id)
        if invitation is not None:
            if "owner" in (role, invitation.role):
                _require(actor, "members.manage_owners")
            invitation.role = role
            session.add(invitation)
            session.commit()
            return _account_row(invitation)
        account = _target(session, actor, account_id)
        if "owner" in (role, account.role):
            _require(actor, "members.manage_owners")
        if account.role == "owner" and role != "owner" and _owners(session, actor.company_id) <= 1:
            raise AccountError("last_owner", "a company keeps at least one owner")
        account.role = role
        session.add(account)
        session.commit()
    return _account_row(account)


def remove(db: Database, actor: Actor, account_id: str) -> None:
    """Delete the account, its sessions (signed out at once) and its pending links."""
    _require(actor, "members.manage")
    with db.session(immediate=True) as session:
        invitation = _target_invitation(session, actor, account_id)
        if invitation is not None:
            if invitation.role == "owner":
                _require(actor, "members.manage_owners")
            session.delete(invitation)
            session.commit()
            return
        account = _target(session, actor, account_id)
        if account.role == "owner":
            _require(actor, "members.manage_owners")
            if _owners(session, actor.company_id) <= 1:
                raise AccountError("last_owner", "a company keeps at least one owner")
        session.execute(
            delete(AccountToken).where(cast(Any, AccountToken.account_id) == account.id)
        )
        session.execute(
            delete(MemberPreference).where(cast(Any, MemberPreference.account_id) == account.id)
        )
        session.delete(account)
        session.commit()
    sign_out_everywhere(db, account_id)


def reset_demo_account(db: Database, account_id: str, company_id: str, password: str) -> None:
    """Only for `make run`'s demo owner: move it to the current demo company as its owner."""
    with db.session() as session:
        account = session.get(Account, account_id)
        if account is None:
            return
        account.company_id, account.role = company_id, "owner"
        account.password_hash = _hasher.hash(password)
        session.add(account)
        session.commit()
    sign_out_everywhere(db, account_id)
