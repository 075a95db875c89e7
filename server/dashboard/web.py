"""What every dashboard page shares: the signed-in member, role checks, rendering, redirects.

A page handler calls `signed_in(request)` (no session: a redirect to the sign-in page), then
`require(member, action)` (refused: the 403 page), then the same service the API calls with
`member.auth`, an `AuthContext` of the session's company and data mode (test or live), so the
dashboard sees exactly what that API key sees.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from litestar import Request, Response
from litestar.response import Redirect, Template

from server.auth import AuthContext, Mode
from server.dashboard import accounts, labels, preferences
from server.dashboard.accounts import Actor
from server.dashboard.permissions import PERMISSIONS, allowed
from server.deps import Services, services
from server.errors import ServerError
from server.inspections import review_queue
from server.tables import Company
from server.web import i18n, words
from server.web import sessions as web_sessions
from server.web.templating import page
from server.web.validations import validation_label

#: Session cookie of the dashboard: the web layer's `member` session cookie.
COOKIE = web_sessions.COOKIE_NAMES[accounts.SESSION_KIND]
PREFIX = "/dashboard"


class SignInRequired(ServerError):
    """No valid session: the page answers with a redirect to the sign-in form."""


class Refused(ServerError):
    """The member's role may not do this: the 403 page."""

    def __init__(self, action: str, role: str) -> None:
        super().__init__(f"{role} may not {action}")
        self.action = action
        self.role = role


class NotFound(ServerError):
    """Nothing of this company at this address: the 404 page."""


@dataclass(frozen=True, slots=True)
class Member:
    """The signed-in member of a request."""

    actor: Actor
    mode: Mode
    token: str
    company_name: str
    #: The language the member chose for their pages (None: the browser's).
    locale: str | None = None

    @property
    def auth(self) -> AuthContext:
        """The API's view of the company in the session's mode (key id marks the dashboard)."""
        return AuthContext(company_id=self.actor.company_id, mode=self.mode, key_id="dashboard")

    def can(self, action: str) -> bool:
        return allowed(self.actor.role, action)


def app_services(request: Request[Any, Any, Any]) -> Services:
    return services(request)


def signed_in(request: Request[Any, Any, Any]) -> Member:
    token = request.cookies.get(COOKIE)
    app = services(request)
    info = accounts.session_of(app.db, token, now=app.clock())
    if info is None or token is None:
        raise SignInRequired("sign in first")
    with app.db.session() as session:
        company = session.get(Company, info.actor.company_id)
    mode: Mode = "live" if info.mode == "live" else "test"
    name = company.name if company is not None else info.actor.company_id
    chosen = preferences.locale_of(app.db, info.actor.account_id)
    return Member(actor=info.actor, mode=mode, token=token, company_name=name, locale=chosen)


def require(member: Member, action: str) -> None:
    if action not in PERMISSIONS:
        raise KeyError(action)
    if not member.can(action):
        raise Refused(action, member.actor.role)


def render(
    request: Request[Any, Any, Any],
    template: str,
    context: dict[str, Any] | None = None,
    *,
    member: Member | None = None,
    status_code: int = 200,
) -> Template:
    """A dashboard page (`dashboard/<template>`, or another area's `area/<template>`) with the
    member and the current path."""
    locale = member_locale(request, member)
    translations = i18n.translations(locale)
    return page(
        template if "/" in template else f"dashboard/{template}",
        locale=locale,
        context={
            "member": member,
            "path": request.url.path,
            "nav": _nav(request, member, translations),
            "status_label": labels.labeller(translations, labels.STATUSES),
            "verdict_label": labels.labeller(translations, labels.VERDICTS),
            "delivery_label": labels.labeller(translations, labels.DELIVERY),
            "languages": LANGUAGES,
            "role_label": labels.labeller(translations, labels.ROLES),
            "type_label": labels.labeller(translations, words.TYPE_WORDS),
            "validation_name": functools.partial(validation_label, locale=locale),
            "timezone": services(request).settings.time_zone,
            **(context or {}),
        },
        status_code=status_code,
    )


#: The languages a member can choose, each named in itself.
LANGUAGES = {"en_US": "English", "es_AR": "Español (Argentina)", "pt_BR": "Português (Brasil)"}


def member_locale(request: Request[Any, Any, Any], member: Member | None) -> str:
    """The page's language: the member's choice, else the browser's `Accept-Language`."""
    if member is not None and member.locale:
        return i18n.choose_locale(member.locale)
    return i18n.negotiate(request.headers.get("accept-language"))


def account_error(
    request: Request[Any, Any, Any], member: Member | None, error: accounts.AccountError
) -> str:
    """A refused account operation in the page's language (`labels.ACCOUNT_ERRORS`)."""
    message = labels.ACCOUNT_ERRORS.get(error.code)
    if message is None:
        return str(error)
    return i18n.translations(member_locale(request, member)).gettext(message)


def action_message(
    request: Request[Any, Any, Any], member: Member | None, key: str, **values: str
) -> str:
    """What a page says after an action (`labels.ACTION_MESSAGES`), in the page's language;
    a role is written as its word."""
    translations = i18n.translations(member_locale(request, member))
    if "role" in values:
        values["role"] = labels.labeller(translations, labels.ROLES)(values["role"])
    return translations.gettext(labels.ACTION_MESSAGES[key]) % values


#: A page handler's `opt` key that lists it in the header's navigation: `nav(...)` makes it.
NAV = "dashboard_nav"


def nav(label: str, action: str, position: int) -> dict[str, Any]:
    """`@get(path, opt=nav(labels._("Word"), "area.view", 30))`: the page is in the navigation,
    for members whose role may `action`, at `position` (lower first). The navigation is read
    from the mounted routes, so a new page lists itself from its own module."""
    return {NAV: (label, action, position)}


def _nav_items(app: Any) -> tuple[tuple[int, str, str, str], ...]:
    """`(position, label, path, action)` of every handler of `app` carrying `nav(...)`, read
    once per app and kept in its state (a process-wide cache keyed by the app would keep every
    app a test process builds alive)."""
    found: tuple[tuple[int, str, str, str], ...] | None = app.state.get(NAV)
    if found is None:
        items = []
        for route in app.routes:
            for handler in getattr(route, "route_handlers", ()):
                entry = handler.opt.get(NAV)
                if entry is not None:
                    label, action, position = entry
                    items.append((position, label, route.path, action))
        found = tuple(sorted(items))
        app.state[NAV] = found
    return found


def _nav(
    request: Request[Any, Any, Any], member: Member | None, translations: Any
) -> list[tuple[str, str]]:
    if member is None:
        return []
    waiting = (
        review_queue.count_waiting(app_services(request).db, member.auth)
        if member.can("review.view")
        else 0
    )
    # The review queue's count: how many inspections wait for a person (docs/review.md).
    counted = {f"{PREFIX}/review": waiting}
    return [
        (translations.gettext(label) + (f" ({counted[href]})" if counted.get(href) else ""), href)
        for _position, label, href, action in _nav_items(request.app)
        if member.can(action)
    ]


def redirect(path: str) -> Redirect:
    """303 See Other: after a form post the browser GETs the next page."""
    return Redirect(path=path, status_code=303)


def sign_in_redirect(request: Request[Any, Any, Any], error: SignInRequired) -> Response[Any]:
    return Redirect(path=f"{PREFIX}/sign-in", status_code=303)


def refused_page(request: Request[Any, Any, Any], error: Refused) -> Response[Any]:
    try:
        member = signed_in(request)
    except SignInRequired:
        member = None
    return render(
        request,
        "refused.html",
        {"action": error.action, "role": error.role},
        member=member,
        status_code=403,
    )


def not_found_page(request: Request[Any, Any, Any], error: NotFound) -> Response[Any]:
    try:
        member = signed_in(request)
    except SignInRequired:
        member = None
    return render(request, "not_found.html", {"what": str(error)}, member=member, status_code=404)


EXCEPTION_HANDLERS: dict[Any, Any] = {
    SignInRequired: sign_in_redirect,
    Refused: refused_page,
    NotFound: not_found_page,
}
