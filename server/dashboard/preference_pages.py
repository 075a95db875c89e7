"""`POST /dashboard/language`: the member chooses the language of their pages (the header's
menu); back to the page they were on."""

from __future__ import annotations

from typing import Any

from litestar import Request, post
from litestar.response import Redirect

from server.common import in_thread
from server.dashboard import preferences
from server.dashboard.web import PREFIX, app_services, redirect, signed_in


@post("/language", status_code=200)
async def choose_language(request: Request[Any, Any, Any]) -> Redirect:
    member = signed_in(request)
    form = await request.form()
    wanted = str(form.get("locale") or "")
    await in_thread(
        preferences.choose_locale, app_services(request).db, member.actor.account_id, wanted
    )
    back = str(form.get("next") or "")
    safe = back.startswith(f"{PREFIX}/") and not back.startswith("//")
    return redirect(back if safe else f"{PREFIX}/inspections")


ROUTES: list[Any] = [choose_language]
