"""A member's own choices for their pages: the language. Read on every page (`web.signed_in`),
changed from the language menu of the header (`POST /dashboard/language`)."""

from __future__ import annotations

from server.dashboard.tables import MemberPreference
from server.db import Database
from server.web import i18n


def locale_of(db: Database, account_id: str) -> str | None:
    """The member's chosen language, or None (then the browser's decides)."""
    with db.session() as session:
        row = session.get(MemberPreference, account_id)
    return row.locale if row is not None else None


def choose_locale(db: Database, account_id: str, wanted: str) -> str:
    """Remember `wanted` (one of `i18n.SUPPORTED_LOCALES`, else the closest one) for the
    member; returns what was kept."""
    chosen = i18n.choose_locale(wanted)
    with db.session() as session:
        row = session.get(MemberPreference, account_id)
        if row is None:
            session.add(MemberPreference(account_id=account_id, locale=chosen))
        else:
            row.locale = chosen
            session.add(row)
        session.commit()
    return chosen
