"""The partner applications' page area: the consent page, the authorizations and the
applications pages under `/dashboard/`, with the dashboard's layout, session and error pages."""

from __future__ import annotations

from pathlib import Path

from server.dashboard import accounts
from server.dashboard.web import EXCEPTION_HANDLERS, PREFIX, SignInRequired
from server.oauth.pages import ROUTES, sign_in_first
from server.web.routes import PageArea
from server.web.security import page_router

OAUTH_AREA = PageArea(
    name="oauth",
    templates=Path(__file__).parent / "templates",
    routes=[
        page_router(
            PREFIX,
            ROUTES,
            # Signing in on the way to the consent page comes back to it.
            exception_handlers={**EXCEPTION_HANDLERS, SignInRequired: sign_in_first},
            session_kind=accounts.SESSION_KIND,
        )
    ],
)
