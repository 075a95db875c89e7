"""The page a share link opens (`/share/<inspection id>?token=…`): the inspection, readable and
printable, for someone outside the company: verdict and reasons, the declared product, photos
with their validations, the inputs, and the PDF report when one was made. No session, nothing
to change; the token decides (`server.inspections.presign.verify_link`: expired, altered, foreign or
revoked links get a 403 page with the reason, in the reader's language from `Accept-Language`;
a client whose `Accept` asks for JSON gets the API's error object instead). In the
inspection's language."""

from __future__ import annotations

import functools
from typing import Any

from litestar import Request, get
from litestar.params import FromPath, FromQuery

from server.common import in_thread, through_link
from server.dashboard import labels
from server.deps import services
from server.errors import ApiError
from server.inspections import presign
from server.inspections import service as inspections
from server.reports import service as reports
from server.web import i18n
from server.web.templating import page
from server.web.validations import validation_label

#: Messages of the refusals, by code (translated on the page).
REFUSALS = {
    "link_expired": labels._("This link has expired. Ask whoever sent it for a new one."),
    "link_revoked": labels._("This link was revoked by the company that made it."),
    "invalid_link": labels._("This link is not valid. Check that it was copied whole."),
}


def _shared(request: Request[Any, Any, Any], inspection_id: str, token: str) -> Any:
    app = services(request)
    try:
        auth = presign.verify_link(app.db, app.settings.secret, inspection_id, token, app.clock())
        document = inspections.get_inspection(app.db, app.settings, auth, inspection_id)
        # Its photos through the share's own token: they die with the share.
        through_link(app.settings.public_url, document, inspection_id, token)
        informational = inspections.informational_checks(app.db, auth, inspection_id)
    except ApiError as error:
        if presign.prefers_json(request.headers.get("accept")):
            raise  # a client of the API asked: the error object, as the JSON URL answers
        locale = i18n.negotiate(request.headers.get("accept-language"))
        message = REFUSALS.get(error.code, REFUSALS["invalid_link"])
        return page(
            "dashboard/share_refused.html",
            locale=locale,
            context={"message": message, "code": error.code},
            status_code=403 if error.status == 403 else 404,
        )
    report_url = None
    if document.get("status") in reports.REPORTABLE_STATUSES:
        made = reports.list_report_requests(app.db, app.settings, auth, inspection_id)
        done = [r for r in made.reportRequests if r.status == "completed" and r.result]
        if done:
            report_url = done[-1].result.url  # type: ignore[union-attr]
    locale = i18n.choose_locale(str(document.get("locale") or ""))
    translations = i18n.translations(locale)
    return page(
        "dashboard/share.html",
        locale=locale,
        context={
            "inspection": document,
            "informational": informational,
            "report_url": report_url,
            "json_url": f"{app.settings.public_url}/v1/inspection/presign/detail/"
            f"{inspection_id}?token={token}",
            "status_label": labels.labeller(translations, labels.STATUSES),
            "verdict_label": labels.labeller(translations, labels.VERDICTS),
            "validation_name": functools.partial(validation_label, locale=locale),
            "timezone": app.settings.time_zone,
        },
        headers={"x-robots-tag": "noindex", "cache-control": "private, no-store"},
    )


@get("/{inspection_id:str}")
async def shared_inspection(
    request: Request[Any, Any, Any], inspection_id: FromPath[str], token: FromQuery[str] = ""
) -> Any:
    return await in_thread(_shared, request, inspection_id, token)


ROUTES: list[Any] = [shared_inspection]
