"""The dashboard's page area: its templates, static assets and every page under `/dashboard/`."""

from __future__ import annotations

from pathlib import Path

from server.dashboard import accounts
from server.dashboard.account_pages import ROUTES as ACCOUNT_ROUTES
from server.dashboard.home_pages import ROUTES as HOME_ROUTES
from server.dashboard.inspection_pages import ROUTES as INSPECTION_ROUTES
from server.dashboard.preference_pages import ROUTES as PREFERENCE_ROUTES
from server.dashboard.share_pages import ROUTES as SHARE_ROUTES
from server.dashboard.template_pages import ROUTES as TEMPLATE_ROUTES
from server.dashboard.web import EXCEPTION_HANDLERS, PREFIX
from server.inspections import shares
from server.web.routes import PageArea
from server.web.security import page_router

HERE = Path(__file__).parent

DASHBOARD_AREA = PageArea(
    name="dashboard",
    templates=HERE / "templates",
    static=HERE / "static",
    routes=[
        page_router(
            PREFIX,
            [*ACCOUNT_ROUTES, *INSPECTION_ROUTES, *TEMPLATE_ROUTES, *PREFERENCE_ROUTES],
            exception_handlers=EXCEPTION_HANDLERS,
            session_kind=accounts.SESSION_KIND,
        ),
        page_router(shares.PAGE_PATH, SHARE_ROUTES),
        page_router("/", HOME_ROUTES),
    ],
)
