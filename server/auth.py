"""Company API keys: issue, verify, revoke; the request's `AuthContext`; the admin service.

A key looks like `sk_test_<id>_<secret>`: `<id>` (16 hex characters) is the primary key of its
`api_keys` row, so verification is one indexed lookup followed by `hmac.compare_digest` of the
SHA-256 of the whole key. Keys carry 256 random bits, so a plain hash is enough; the plain key is
shown once, at creation or revocation, and never stored.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, cast

from sqlalchemy import bindparam, select, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session

from server.boundary import name_problem
from server.db import Database
from server.errors import ApiError, ServerError
from server.tables import ApiKey, Company, Member, utcnow
from server.tokens import hash_token

Mode = Literal["test", "live"]
MODES: tuple[Mode, Mode] = ("test", "live")

KEY_ID_LENGTH = 16
#: Longest `x-api-key` value looked at; anything longer is rejected without hashing.
MAX_KEY_LENGTH = 200


@dataclass(frozen=True, slots=True)
class Delegation:
    """A partner application acting for one member (an OAuth 2.0 access token, `server.oauth`):
    who the member is, the producer row their inspections carry, and the scopes the token may
    use now (those granted that the member's role allows)."""

    account_id: str
    authorization_id: str
    app_id: str
    #: The member's row in `members` and its `internalId` (their email address).
    producer_id: str
    producer_internal_id: str
    scopes: frozenset[str]


@dataclass(frozen=True, slots=True)
class AuthContext:
    """Who is calling: the company, the key's mode, and (for image tokens) the token's scope."""

    company_id: str
    mode: Mode
    key_id: str
    #: None for an API key; `"image:<productId>"` when authenticated by an image token.
    scope: str | None = None
    #: Set when a partner application's access token authenticated the request.
    delegation: Delegation | None = None

    @property
    def testing(self) -> bool:
        """Data made with the test key is marked `testing: true` and seen only by that key."""
        return self.mode == "test"


class CompanyKeys(TypedDict):
    companyId: str
    testKey: str
    liveKey: str


class MemberSpec(TypedDict, total=False):
    internalId: str
    name: str | None
    email: str | None


def _parse_key(key: str) -> tuple[Mode, str] | None:
    """(mode, key id) of a well-formed key, else None."""
    if len(key) > MAX_KEY_LENGTH:
        return None
    for mode in MODES:
        prefix = f"sk_{mode}_"
        if key.startswith(prefix):
            rest = key[len(prefix) :]
            key_id, separator, secret = (
                rest[:KEY_ID_LENGTH],
                rest[KEY_ID_LENGTH : KEY_ID_LENGTH + 1],
                rest[KEY_ID_LENGTH + 1 :],
            )
            if separator == "_" and secret and all(c in "0123456789abcdef" for c in key_id):
                return mode, key_id
    return None


def _new_key(company_id: str, mode: Mode) -> tuple[str, ApiKey]:
    key_id = secrets.token_hex(KEY_ID_LENGTH // 2)
    key = f"sk_{mode}_{key_id}_{secrets.token_urlsafe(32)}"
    return key, ApiKey(id=key_id, company_id=company_id, mode=mode, key_hash=hash_token(key))


_api_keys = cast(Any, ApiKey).__table__
#: Built once: the lookup runs on every request.
_KEY_LOOKUP = select(
    _api_keys.c.company_id, _api_keys.c.mode, _api_keys.c.key_hash, _api_keys.c.revoked_at
).where(_api_keys.c.id == bindparam("key_id"))


def parse_api_key(key: str | None) -> tuple[Mode, str]:
    """(mode, key id) of the `x-api-key` value; 401 `unauthorized` when missing or malformed."""
    if not key:
        raise ApiError.of("unauthorized", "The x-api-key header is missing.")
    parsed = _parse_key(key)
    if parsed is None:
        raise ApiError.of("unauthorized", "The API key is not valid.")
    return parsed


def verify_api_key(key: str, mode: Mode, key_id: str, row: Any | None) -> AuthContext:
    """The context of `key` given its `api_keys` row (`company_id, mode, key_hash, revoked_at`,
    None when there is none); 401 `unauthorized` unless it is valid and unrevoked."""
    # Compare even when the row is missing, so timing says nothing about which ids exist.
    stored_hash = row[2] if row is not None else "0" * 64
    matches = hmac.compare_digest(stored_hash.encode("ascii"), hash_token(key).encode("ascii"))
    if row is None or not matches or row[1] != mode:
        raise ApiError.of("unauthorized", "The API key is not valid.")
    if row[3] is not None:
        raise ApiError.of("unauthorized", "The API key has been revoked.")
    return AuthContext(company_id=row[0], mode=mode, key_id=key_id)


def authenticate_key(db: Database, key: str | None) -> AuthContext:
    """The context of a valid, unrevoked key; `ApiError` 401 `unauthorized` otherwise."""
    mode, key_id = parse_api_key(key)
    with db.engine.connect() as connection:
        row = connection.execute(_KEY_LOOKUP, {"key_id": key_id}).first()
    return verify_api_key(cast(str, key), mode, key_id, row)


# --- admin service (CLI, test fixtures) ---------------------------------------------------------


class AdminError(ServerError, ValueError):
    """An admin operation on something that does not exist or would break a rule."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _check_name(what: str, value: str, code: str) -> None:
    """`AdminError(code)` for a name with a control character (`server.boundary.name_problem`):
    a company name with CR/LF made every email of that company unbuildable."""
    why = name_problem(value)
    if why is not None:
        raise AdminError(code, f"the {what} {why}: a name is one line of printable text")


def create_company(
    db: Database, name: str, members: list[MemberSpec] | list[str] | None = None
) -> CompanyKeys:
    """A new company with a test and a live key (returned in plain, once) and its members."""
    if not name.strip():
        raise AdminError("invalid_name", "a company needs a non-empty name")
    _check_name("company name", name, "invalid_name")
    company = Company(name=name.strip())
    test_key, test_row = _new_key(company.id, "test")
    live_key, live_row = _new_key(company.id, "live")
    with db.session() as session:
        session.add(company)
        session.flush()
        session.add(test_row)
        session.add(live_row)
        for member in members or []:
            spec: MemberSpec = {"internalId": member} if isinstance(member, str) else member
            session.add(_member_row(company.id, spec))
        try:
            session.commit()
        except IntegrityError:
            raise AdminError("duplicate_member", "a member internalId is listed twice") from None
    return {"companyId": company.id, "testKey": test_key, "liveKey": live_key}


def _member_row(company_id: str, spec: MemberSpec) -> Member:
    internal_id = (spec.get("internalId") or "").strip()
    if not internal_id:
        raise AdminError("invalid_member", "a member needs a non-empty internalId")
    for field in ("internalId", "name", "email"):
        value = spec.get(field)
        if isinstance(value, str):
            _check_name(f"member {field}", value, "invalid_member")
    return Member(
        company_id=company_id,
        internal_id=internal_id,
        name=spec.get("name"),
        email=spec.get("email"),
    )


def _require_company(session: Session, company_id: str) -> Company:
    company = session.get(Company, company_id)
    if company is None:
        raise AdminError("company_not_found", f"no company with id {company_id!r}")
    return company


def recent_keys(db: Database, company_id: str, limit: int = 20) -> list[ApiKey]:
    """The company's newest API keys (revoked ones too), newest first."""
    model = cast(Any, ApiKey)
    with db.session() as session:
        statement = (
            select(ApiKey)
            .where(model.company_id == company_id)
            .order_by(model.created_at.desc())
            .limit(limit)
        )
        return list(session.execute(statement).scalars())


def revoke_key(db: Database, company_id: str, mode: Mode) -> str:
    """Revoke the company's current `mode` key at once and return a newly issued one."""
    if mode not in MODES:
        raise AdminError("invalid_mode", "mode must be 'test' or 'live'")
    key, row = _new_key(company_id, mode)
    with db.session() as session:
        _require_company(session, company_id)
        table = cast(Any, ApiKey).__table__
        session.execute(
            update(table)
            .where(table.c.company_id == company_id)
            .where(table.c.mode == mode)
            .where(table.c.revoked_at.is_(None))
            .values(revoked_at=utcnow())
        )
        session.add(row)
        session.commit()
    return key


def add_member(
    db: Database,
    company_id: str,
    internal_id: str,
    name: str | None = None,
    email: str | None = None,
) -> dict[str, Any]:
    """Add a member (the `producer.internalId` of creation requests) to a company."""
    with db.session() as session:
        _require_company(session, company_id)
        member = _member_row(company_id, {"internalId": internal_id, "name": name, "email": email})
        session.add(member)
        try:
            session.commit()
        except IntegrityError:
            raise AdminError(
                "duplicate_member", f"{internal_id!r} is already a member of {company_id}"
            ) from None
    return {
        "companyId": company_id,
        "memberId": member.id,
        "internalId": member.internal_id,
        "name": member.name,
        "email": member.email,
    }


def find_member(session: Session, company_id: str, internal_id: str) -> Member | None:
    """The member with that `internalId` in the company (for `producer.internalId`)."""
    statement = select(Member).where(
        cast(Any, Member.company_id) == company_id,
        cast(Any, Member.internal_id) == internal_id,
    )
    return session.execute(statement).scalars().first()


_companies = cast(Any, Company).__table__
#: Built once and executed with a parameter dict: an atomic increment, no statement to build
#: or cache key to compute per create.
_COUNT_CONSUMED = (
    update(_companies)
    .where(_companies.c.id == bindparam("company_id"))
    .values(consumed_inspections=_companies.c.consumed_inspections + bindparam("count"))
)


def count_consumed(session: Session, company_id: str, mode: Mode = "live", count: int = 1) -> None:
    """Count `count` consumed inspections for the company, in the caller's transaction.

    Only live inspections count; with `mode="test"` this does nothing, so callers can pass
    `auth.mode` unconditionally.
    """
    if mode != "live" or count <= 0:
        return
    session.execute(_COUNT_CONSUMED, {"company_id": company_id, "count": count})


def company_exists(db: Database, company_id: str) -> bool:
    with db.session() as session:
        return session.get(Company, company_id) is not None


def consumed_inspections(db: Database, company_id: str) -> int:
    with db.session() as session:
        return _require_company(session, company_id).consumed_inspections
