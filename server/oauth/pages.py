"""The partner-application pages: the consent page a member sees when an application asks to act
for them, the member's authorizations (and, for an owner, every one of the company), and the
applications a company registers on its Developers page (docs/dashboard.md).

They call `server.oauth.service` with the signed-in member as the actor, as every dashboard page
calls the service the API calls.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from litestar import Request, Response, get, post
from litestar.params import FromPath
from litestar.response import Redirect

from server.common import in_thread
from server.dashboard import labels
from server.dashboard.web import (
    PREFIX,
    Member,
    SignInRequired,
    app_services,
    member_locale,
    nav,
    redirect,
    render,
    require,
    signed_in,
)
from server.errors import ApiError
from server.oauth import scopes, service
from server.web import i18n
from server.web.security import policy_sending_forms_to

_ = labels._

#: The authorization request's parameters the consent form carries back (RFC 6749 4.1.1, PKCE).
REQUEST_FIELDS = (
    "response_type",
    "client_id",
    "redirect_uri",
    "scope",
    "state",
    "code_challenge",
    "code_challenge_method",
)

#: What a page says for a refusal of the service, in the member's language.
REFUSALS = {
    "unknown_client": _("No application has this client id: the link you followed is wrong."),
    "invalid_redirect_uri": _(
        "The address this application asked to return to is not one it registered."
    ),
    "invalid_scope": _("The application asked for a permission it did not register."),
    "invalid_request": _("The application's request is incomplete or malformed."),
    "unsupported_response_type": _("The application's request is not an authorization request."),
    "invalid_app_name": _("An application needs a name of one short line."),
    "invalid_app_redirect_uri": _(
        "Give one to ten redirect URIs, one per line: each a full https address (http only to "
        "localhost), without #."
    ),
    "invalid_app_scopes": _("Choose at least one permission."),
    "app_not_found": _("No application of your company has that id."),
    "authorization_not_found": _("No such authorization."),
    "forbidden": _("Your role does not allow this."),
}


def _refusal(request: Request[Any, Any, Any], member: Member | None, error: ApiError) -> str:
    message = REFUSALS.get(error.code)
    if message is None:
        return error.description
    return i18n.translations(member_locale(request, member)).gettext(message)


def _refused(request: Request[Any, Any, Any], member: Member, error: ApiError) -> Any:
    """The page of an authorization request or answer refused: why, in the member's words."""
    return render(
        request,
        "oauth/refused.html",
        {"code": error.code, "message": _refusal(request, member, error)},
        member=member,
        status_code=error.status,
    )


def _scope_labels(request: Request[Any, Any, Any], member: Member, names: list[str]) -> list[str]:
    translations = i18n.translations(member_locale(request, member))
    return [translations.gettext(scopes.SCOPES[name].label) for name in names]


def _request_fields(values: Any) -> dict[str, str]:
    return {name: str(values[name]) for name in REQUEST_FIELDS if values.get(name) is not None}


# --- consent ------------------------------------------------------------------------------------


@get("/oauth/authorize")
async def consent(request: Request[Any, Any, Any]) -> Any:
    member = signed_in(request)
    app = app_services(request)
    fields = _request_fields(request.query_params)
    try:
        found = await in_thread(
            service.check_authorization_request,
            app.db,
            app.settings.public_url,
            fields,
            app.clock(),
        )
    except ApiError as error:
        return _refused(request, member, error)
    usable = scopes.usable(found.scopes, member.actor.role)
    shown = render(
        request,
        "oauth/consent.html",
        {
            "consent": found,
            "fields": fields,
            "asked": list(
                zip(found.scopes, _scope_labels(request, member, found.scopes), strict=True)
            ),
            "unusable": [name for name in found.scopes if name not in usable],
        },
        member=member,
    )
    # The answer redirects to the application: the form may be sent on to its origin.
    shown.headers["Content-Security-Policy"] = policy_sending_forms_to(found.redirect_uri)
    return shown


@get("/oauth/connect")
async def connect(request: Request[Any, Any, Any]) -> Redirect:
    """The authorization link autoinspector-php builds (`client_app_id`, `scopes[]`), sent on to
    the consent page as the RFC's request."""
    query = request.query_params
    asked = [
        str(value)
        for key, value in query.items()
        if key == "scopes" or (key.startswith("scopes[") and key.endswith("]"))
    ]
    asked += [str(v) for v in query.getall("scopes[]", [])]
    fields = {
        "response_type": "code",
        "client_id": str(query.get("client_app_id") or query.get("client_id") or ""),
        **({"scope": " ".join(dict.fromkeys(asked))} if asked else {}),
        **{k: str(query[k]) for k in ("redirect_uri", "state") if query.get(k)},
    }
    return redirect(f"{PREFIX}/oauth/authorize?{urlencode(fields)}")


@post("/oauth/authorize", status_code=200)
async def decide(request: Request[Any, Any, Any]) -> Any:
    member = signed_in(request)
    app = app_services(request)
    form = await request.form()
    fields = _request_fields(form)
    try:
        location = await in_thread(
            service.decide,
            app.db,
            app.settings.public_url,
            member.actor,
            fields,
            form.get("decision") == "approve",
            app.clock(),
        )
    except ApiError as error:
        return _refused(request, member, error)
    # The application's own address, checked against its registered ones (exact match).
    return Redirect(path=location, status_code=303)


def sign_in_first(request: Request[Any, Any, Any], error: SignInRequired) -> Response[Any]:
    """No session on the consent page: sign in, then come back to it."""
    back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return Redirect(path=f"{PREFIX}/sign-in?next={quote(back, safe='')}", status_code=303)


# --- authorizations -----------------------------------------------------------------------------


def _authorizations_page(
    request: Request[Any, Any, Any], member: Member, *, whole_company: bool, message: str | None
) -> Any:
    app = app_services(request)
    found = service.list_authorizations(app.db, member.actor, whole_company=whole_company)
    return render(
        request,
        "oauth/authorizations.html",
        {
            "authorizations": [
                (item, _scope_labels(request, member, item.scopes)) for item in found
            ],
            "whole_company": whole_company,
            "message": message,
        },
        member=member,
    )


@get("/authorizations", opt=nav(_("Connected apps"), "authorizations.view", 45))
async def authorizations(request: Request[Any, Any, Any]) -> Any:
    member = signed_in(request)
    require(member, "authorizations.view")
    return await in_thread(_authorizations_page, request, member, whole_company=False, message=None)


@get("/authorizations/company")
async def company_authorizations(request: Request[Any, Any, Any]) -> Any:
    member = signed_in(request)
    require(member, "authorizations.manage_company")
    return await in_thread(_authorizations_page, request, member, whole_company=True, message=None)


@post("/authorizations/{authorization_id:str}/revoke", status_code=200)
async def revoke_authorization(
    request: Request[Any, Any, Any], authorization_id: FromPath[str]
) -> Any:
    member = signed_in(request)
    require(member, "authorizations.view")
    app = app_services(request)
    form = await request.form()
    whole_company = form.get("scope") == "company" and member.can("authorizations.manage_company")
    translations = i18n.translations(member_locale(request, member))
    try:
        await in_thread(
            service.revoke_authorization, app.db, member.actor, authorization_id, app.clock()
        )
        message = translations.gettext(_("Revoked: its tokens stopped working at once."))
    except ApiError as error:
        message = _refusal(request, member, error)
    return await in_thread(
        _authorizations_page, request, member, whole_company=whole_company, message=message
    )


# --- applications (Developers) -------------------------------------------------------------------


def _apps_page(
    request: Request[Any, Any, Any],
    member: Member,
    *,
    shown: tuple[service.AppView, str] | None = None,
    error: str | None = None,
    entered: dict[str, Any] | None = None,
    status_code: int = 200,
) -> Any:
    app = app_services(request)
    return render(
        request,
        "oauth/apps.html",
        {
            "apps": service.list_apps(app.db, member.actor),
            "shown": shown,
            "error": error,
            "entered": entered
            or {"name": "", "redirect_uris": "", "scopes": list(scopes.SCOPE_NAMES)},
            "scope_choices": list(
                zip(
                    scopes.SCOPE_NAMES,
                    _scope_labels(request, member, list(scopes.SCOPE_NAMES)),
                    strict=True,
                )
            ),
        },
        member=member,
        status_code=status_code,
    )


@get("/developers/apps")
async def apps(request: Request[Any, Any, Any]) -> Any:
    member = signed_in(request)
    require(member, "developers.apps")
    return await in_thread(_apps_page, request, member)


@post("/developers/apps", status_code=200)
async def register_app(request: Request[Any, Any, Any]) -> Any:
    member = signed_in(request)
    require(member, "developers.apps")
    app = app_services(request)
    form = await request.form()
    name = str(form.get("name") or "")
    uris = str(form.get("redirect_uris") or "")
    wanted = [str(value) for value in form.getall("scopes", [])]
    try:
        shown = await in_thread(
            service.register_app, app.db, member.actor, member.mode, name, uris.splitlines(), wanted
        )
    except ApiError as error:
        entered = {"name": name, "redirect_uris": uris, "scopes": wanted}
        return await in_thread(
            _apps_page,
            request,
            member,
            error=_refusal(request, member, error),
            entered=entered,
            status_code=error.status,
        )
    return await in_thread(_apps_page, request, member, shown=shown)


@post("/developers/apps/{app_id:str}/rotate", status_code=200)
async def rotate_secret(request: Request[Any, Any, Any], app_id: FromPath[str]) -> Any:
    member = signed_in(request)
    require(member, "developers.apps")
    app = app_services(request)
    try:
        shown = await in_thread(service.rotate_secret, app.db, member.actor, app_id, app.clock())
    except ApiError as error:
        return await in_thread(
            _apps_page,
            request,
            member,
            error=_refusal(request, member, error),
            status_code=error.status,
        )
    return await in_thread(_apps_page, request, member, shown=shown)


ROUTES = [
    consent,
    connect,
    decide,
    authorizations,
    company_authorizations,
    revoke_authorization,
    apps,
    register_app,
    rotate_secret,
]
