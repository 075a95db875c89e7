"""Browser sessions kept in the database, so any API process accepts a cookie another made.

A session is a random token in an `HttpOnly`, `SameSite=Lax` cookie (`Secure` when the service
is reached over https); the `web_sessions` table keeps only the token's SHA-256, the kind of
session (`consumer`, `member`), the company and the one subject it is bound to. A page asks
`load_session(db, token, kind, now)` and gets the row or `None`: an unknown, expired or
other-kind token is simply no session.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import Any

from litestar import Request, Response
from sqlalchemy import delete, select
from sqlmodel import col

from server.db import Database
from server.deps import services
from server.tokens import hash_token
from server.web.tables import WebSession

#: Bytes of randomness in a session token (256 bits).
TOKEN_BYTES = 32
#: Cookie name per session kind: a browser may hold a consumer and a member session at once.
COOKIE_NAMES = {"consumer": "inspectlang_consumer", "member": "inspectlang_member"}
#: The key of a session's `data` holding its CSRF token (`server.web.security`): made with the
#: session, kept by `update_data`, never carried over to another session by `latest_data`.
CSRF_KEY = "csrf"


def start_session(
    db: Database,
    *,
    kind: str,
    company_id: str,
    subject_id: str,
    now: datetime,
    lifetime: timedelta,
    data: dict[str, Any] | None = None,
) -> str:
    """Store a new session, with a CSRF token of its own, and return its token (to be set as
    the cookie's value)."""
    if kind not in COOKIE_NAMES:
        raise ValueError(f"unknown session kind {kind!r}")
    token = secrets.token_urlsafe(TOKEN_BYTES)
    data = {**(data or {}), CSRF_KEY: secrets.token_urlsafe(TOKEN_BYTES)}
    with db.session() as session:
        session.add(
            WebSession(
                token_hash=hash_token(token),
                kind=kind,
                company_id=company_id,
                subject_id=subject_id,
                data=data,
                created_at=now,
                expires_at=now + lifetime,
            )
        )
        session.commit()
    return token


def load_session(db: Database, token: str | None, kind: str, now: datetime) -> WebSession | None:
    """The live session of `kind` whose cookie is `token`, or None."""
    if not token or len(token) > 128:
        return None
    with db.session() as session:
        row = session.get(WebSession, hash_token(token))
    if row is None or row.kind != kind or row.expires_at <= now:
        return None
    return row


def latest_data(db: Database, kind: str, subject_id: str, now: datetime) -> dict[str, Any]:
    """The `data` of the newest live session of `kind` bound to `subject_id` ({} if none): a
    page that starts a new session (another tab, another device) may carry it over."""
    statement = (
        select(WebSession)
        .where(col(WebSession.kind) == kind, col(WebSession.subject_id) == subject_id)
        .where(col(WebSession.expires_at) > now)
        .order_by(col(WebSession.created_at).desc())
        .limit(1)
    )
    with db.session() as session:
        row = session.execute(statement).scalars().first()
    data = dict(row.data) if row is not None else {}
    data.pop(CSRF_KEY, None)
    return data


def csrf_token_of(row: WebSession) -> str:
    """The CSRF token stored with the session (sessions made before it was: their token hash,
    which only this server and the browser's cookie know)."""
    token = row.data.get(CSRF_KEY)
    return token if isinstance(token, str) and token else row.token_hash


def update_data(db: Database, row: WebSession, data: dict[str, Any]) -> None:
    """Replace the session's `data` (small page state such as the current step); its CSRF
    token stays."""
    with db.session() as session:
        stored = session.get(WebSession, row.token_hash)
        if stored is None:
            return
        data = {**data, CSRF_KEY: stored.data.get(CSRF_KEY)}
        stored.data = dict(data)
        session.add(stored)
        session.commit()
    row.data = dict(data)


def end_session(db: Database, token: str | None) -> None:
    """Forget the session (sign-out); unknown tokens are ignored."""
    if not token:
        return
    with db.session() as session:
        session.execute(delete(WebSession).where(col(WebSession.token_hash) == hash_token(token)))
        session.commit()


def end_sessions_of(db: Database, kind: str, subject_id: str) -> None:
    """Forget every session of `kind` bound to `subject_id` (e.g. a member removed)."""
    with db.session() as session:
        session.execute(
            delete(WebSession).where(
                col(WebSession.kind) == kind, col(WebSession.subject_id) == subject_id
            )
        )
        session.commit()


def purge_expired(db: Database, now: datetime) -> int:
    """Delete expired sessions; returns how many."""
    with db.session() as session:
        result = session.execute(delete(WebSession).where(col(WebSession.expires_at) <= now))
        session.commit()
    return int(getattr(result, "rowcount", 0) or 0)


def cookie_is_secure(request: Request[Any, Any, Any]) -> bool:
    """`Secure` when the service is public over https or this request came over https."""
    public_url = services(request).settings.public_url
    return public_url.startswith("https://") or request.url.scheme == "https"


def session_token(request: Request[Any, Any, Any], kind: str) -> str | None:
    """The session cookie of `kind` the browser sent, if any."""
    return request.cookies.get(COOKIE_NAMES[kind])


def set_session_cookie(
    response: Response[Any],
    request: Request[Any, Any, Any],
    kind: str,
    token: str,
    *,
    lifetime: timedelta,
    path: str = "/",
) -> None:
    """Attach the session cookie: HttpOnly, SameSite=Lax, Secure behind https."""
    response.set_cookie(
        key=COOKIE_NAMES[kind],
        value=token,
        max_age=int(lifetime.total_seconds()),
        path=path,
        httponly=True,
        samesite="lax",
        secure=cookie_is_secure(request),
    )


def clear_session_cookie(
    response: Response[Any], request: Request[Any, Any, Any], kind: str, *, path: str = "/"
) -> None:
    response.delete_cookie(key=COOKIE_NAMES[kind], path=path)
