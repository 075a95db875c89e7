"""The review's page area: the reviewer's pages under `/dashboard/review` (docs/review.md),
with the dashboard's layout, session and error pages."""

from __future__ import annotations

from pathlib import Path

from server.dashboard import accounts
from server.dashboard.web import EXCEPTION_HANDLERS, PREFIX
from server.review.pages import ROUTES
from server.web.routes import PageArea
from server.web.security import page_router

REVIEW_AREA = PageArea(
    name="review",
    templates=Path(__file__).parent / "templates",
    static=Path(__file__).parent / "static",
    # CSRF bound to the member's session, like every signed-in dashboard page.
    routes=[
        page_router(
            PREFIX,
            ROUTES,
            exception_handlers=EXCEPTION_HANDLERS,
            session_kind=accounts.SESSION_KIND,
        )
    ],
)
