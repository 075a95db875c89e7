"""Share links: a read-only, expiring, revocable view of one inspection for people outside the
company (an adjuster, a broker), made from the dashboard.

A share link is a presigned detail token (`presign`, kind `inspection_detail`) with a row in
`inspection_share_links` (its hash, who made it, when it expires, whether it was revoked). The
same token opens the readable page (`/share/<id>?token=…`, `server/dashboard/share_pages.py`)
and the Inspection object as JSON for API clients (`/v1/inspection/presign/detail/<id>?token=…`);
both refuse an expired (`link_expired`), altered or foreign (`invalid_link`) or revoked
(`link_revoked`) token with 403, through the one check of both (`presign.verify_link`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import select, update

from server import tokens
from server.auth import AuthContext
from server.db import Database
from server.inspections import presign
from server.inspections.tables import ShareLinkRecord
from server.settings import Settings

#: Share links made from the dashboard last a week (the API's longest presign).
SHARE_SECONDS = presign.MAX_EXPIRES_IN_SECONDS
#: Path of the readable page of a share link.
PAGE_PATH = presign.SHARE_PAGE_PATH


@dataclass(frozen=True, slots=True)
class Share:
    id: str
    #: The readable page (what people open).
    url: str
    #: The same token on the API's JSON path (what API clients read).
    json_url: str
    expires_at: datetime


def page_url(public_url: str, inspection_id: str, token: str) -> str:
    return f"{public_url}{PAGE_PATH}/{inspection_id}?token={token}"


def create(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    created_by: str,
    now: datetime,
) -> Share:
    """A new share link of the inspection (404 `inspection_not_found` if not the caller's)."""
    # A token is a signature of (inspection, company, mode, expiry second): two links made in
    # one second are one link. A revoked one is not handed out again: a second less makes
    # another token.
    for shorter in range(60):
        seconds = SHARE_SECONDS - shorter
        signed = presign.presign_link(db, settings, auth, inspection_id, seconds, now)
        key = tokens.hash_token(signed.accessToken)
        with db.session() as session:
            existing = session.get(ShareLinkRecord, key)
            if existing is not None and existing.revoked_at is not None:
                continue
            expires_at = datetime.fromisoformat(signed.expiresAt.replace("Z", "+00:00"))
            if existing is None:
                session.add(
                    ShareLinkRecord(
                        id=key,
                        inspection_id=inspection_id,
                        company_id=auth.company_id,
                        testing=auth.testing,
                        created_by=created_by,
                        created_at=now,
                        expires_at=expires_at,
                    )
                )
                session.commit()
            break
    return Share(
        id=key[:12],
        url=page_url(settings.public_url, inspection_id, signed.accessToken),
        json_url=signed.url,
        expires_at=expires_at,
    )


def active(db: Database, auth: AuthContext, inspection_id: str, now: datetime) -> list[Any]:
    """The inspection's share links neither expired nor revoked, newest first."""
    model = cast(Any, ShareLinkRecord)
    with db.session() as session:
        rows = session.execute(
            select(ShareLinkRecord)
            .where(
                model.inspection_id == inspection_id,
                model.company_id == auth.company_id,
                model.testing == auth.testing,
                model.revoked_at.is_(None),
                model.expires_at > now,
            )
            .order_by(model.created_at.desc())
        ).scalars()
        return [
            {"id": row.id[:12], "createdAt": row.created_at, "expiresAt": row.expires_at}
            for row in rows
        ]


def revoke(
    db: Database, auth: AuthContext, inspection_id: str, short_id: str, now: datetime
) -> bool:
    """Revoke the share link whose hash starts with `short_id` (what `active` lists); False
    when there is none of this inspection."""
    if not (len(short_id) == 12 and all(c in "0123456789abcdef" for c in short_id)):
        return False
    model = cast(Any, ShareLinkRecord)
    with db.session() as session:
        result = session.execute(
            update(ShareLinkRecord)
            .where(
                model.id.startswith(short_id),
                model.inspection_id == inspection_id,
                model.company_id == auth.company_id,
                model.testing == auth.testing,
                model.revoked_at.is_(None),
            )
            .values(revoked_at=now)
        )
        session.commit()
        return bool(cast(Any, result).rowcount)
