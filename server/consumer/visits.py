"""A consumer's visit: the session that binds a browser to one inspection, and the pages every
step may answer with instead (not found, expired, blocked, completed).

A session row (`server.web.sessions`, kind `consumer`) is bound to one inspection; `visit_of`
gives `None` for no session, an expired one, or one of another inspection, and every page then
answers the same 404 as a wrong code.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from litestar import Request
from litestar.response import Redirect, Template

from runtime import InspectionState
from runtime.api_view import Inspection, every_image
from server.auth import AuthContext
from server.deps import Services, services
from server.errors import ApiError
from server.inspections import access
from server.inspections import service as inspections
from server.web import sessions
from server.web.i18n import choose_locale
from server.web.tables import WebSession
from server.web.templating import gettext, page

KIND = "consumer"
#: How long a consumer session lasts without the inspection expiring first.
SESSION_LIFETIME = timedelta(days=7)
#: Session flags a returning consumer keeps (consent given, steps passed).
FLAGS = ("consent", "location", "details", "damage")


@dataclass
class Visit:
    """A request of a consumer with a live session for this inspection."""

    shared: Services
    session: WebSession
    auth: AuthContext
    inspection_id: str
    view: access.ConsumerView

    @property
    def locale(self) -> str:
        return choose_locale(self.view.state.locale)

    @property
    def flags(self) -> dict[str, Any]:
        return dict(self.session.data)


def not_found(locale: str = "en_US") -> Template:
    return page(
        "web/message.html",
        locale=locale,
        status_code=404,
        context={
            "heading": gettext(locale, "This link does not work"),
            "text": gettext(
                locale,
                "Check that you opened the whole link from the message you received, "
                "or ask the company that sent it for a new one.",
            ),
            "tone": "bad",
        },
    )


def sent_by_consumer(state: InspectionState) -> bool:
    """The consumer sent it: completed by them, or waiting for (or decided by) a person after
    their finish (docs/review.md): they see the thank-you page."""
    finished_by = state.review.finishedBy if state.review is not None else None
    if state.status == "completed":
        return state.completedBy == "consumer" or (
            state.completedBy == "reviewer" and finished_by == "consumer"
        )
    return state.status == "review" and finished_by == "consumer"


def too_many_attempts(locale: str, retry_after: int) -> Template:
    """429: too many attempts to open links from this address or for this inspection
    (`server.ratelimit.LinkThrottle`); the same page whether the code or the id was wrong."""
    return page(
        "web/message.html",
        locale=locale,
        status_code=429,
        headers={"Retry-After": str(retry_after)},
        context={
            "heading": gettext(locale, "Too many attempts"),
            "text": gettext(
                locale, "Wait a few minutes, then open the link from your message again."
            ),
            "tone": "bad",
        },
    )


def status_page(view: access.ConsumerView, now: datetime) -> Template | None:
    """The page of an inspection the consumer can no longer work on, or None."""
    locale = choose_locale(view.state.locale)
    status = view.state.status
    expired = inspections.expired(view.state, now) or (
        status == "blocked" and view.state.completedBy == "expiration"
    )
    if sent_by_consumer(view.state):
        return None  # the thank-you page
    if status in ("completed", "review"):
        heading = gettext(locale, "This inspection is already complete")
        text = gettext(locale, "There is nothing left to do. Thank you.")
        tone = "ok"
    elif expired or (status == "blocked" and expired_at(view, now)):
        heading = gettext(locale, "This link has expired")
        text = gettext(locale, "Ask the company that sent it for a new link.")
        tone = "bad"
    elif status == "blocked":
        heading = gettext(locale, "This inspection is blocked")
        text = gettext(locale, "It can no longer be changed. Contact the company that sent it.")
        tone = "bad"
    else:
        return None
    return page(
        "web/message.html",
        locale=locale,
        status_code=410 if tone == "bad" else 200,
        context={"heading": heading, "text": text, "tone": tone, "company": view.company_name},
    )


def expired_at(view: access.ConsumerView, now: datetime) -> bool:
    expires_at = inspections.parse_moment(view.state.expiresAt)
    return expires_at is not None and now >= expires_at


def previous_flags(shared: Services, inspection_id: str, now: datetime) -> dict[str, Any]:
    """The flags of this inspection's latest live session (resume on a new tab or device)."""
    data = sessions.latest_data(shared.db, KIND, inspection_id, now)
    return {key: data[key] for key in FLAGS if key in data}


def session_path(inspection_id: str) -> str:
    return f"/i/{inspection_id}"


def visit_of(request: Request[Any, Any, Any], inspection_id: str) -> Visit | None:
    shared = services(request)
    now = shared.clock()
    row = sessions.load_session(shared.db, sessions.session_token(request, KIND), KIND, now)
    if row is None or row.subject_id != inspection_id:
        return None
    auth = access.consumer_auth(row.company_id, row.data.get("testing", False), inspection_id)
    try:
        view = access.read_for_consumer(shared.db, shared.settings, auth, inspection_id)
    except ApiError:
        return None
    return Visit(shared=shared, session=row, auth=auth, inspection_id=inspection_id, view=view)


def step_url(inspection_id: str, key: str) -> str:
    return f"/i/{inspection_id}/step/{key}"


def redirect(url: str) -> Redirect:
    return Redirect(url, status_code=303)


def set_flags(visit: Visit, **changes: Any) -> None:
    sessions.update_data(visit.shared.db, visit.session, {**visit.session.data, **changes})


def image_src(document: Inspection, image_id: str) -> str | None:
    """The signed `src` of an image in the API's Inspection object (readable without a key)."""
    for image, _target in every_image(document):
        if image["_id"] == image_id:
            return image.get("src") or None
    return None
