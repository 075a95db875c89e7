"""`GET /`: in development a small page of where things are (the dashboard, the API reference,
the development outbox, the health check); in production a plain status page that names
nothing internal. In the browser's language."""

from __future__ import annotations

from typing import Any

from litestar import Request, get

from server.deps import services
from server.web import i18n
from server.web.templating import page


@get("/")
async def home(request: Request[Any, Any, Any]) -> Any:
    app = services(request)
    return page(
        "dashboard/home.html",
        locale=i18n.negotiate(request.headers.get("accept-language")),
        context={"development": app.settings.env == "development"},
    )


ROUTES: list[Any] = [home]
