"""Pages of the dashboard's accounts and company: sign-in and out, forgotten password, invitation
links, the test/live toggle, members (invite, change role, remove) and developers (keys,
webhook endpoints and deliveries)."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import Redirect

from server.auth import MODES, recent_keys, revoke_key
from server.common import in_thread
from server.dashboard import accounts, labels, mail
from server.dashboard.accounts import AccountError
from server.dashboard.mail import Mail
from server.dashboard.web import (
    PREFIX,
    Member,
    account_error,
    action_message,
    app_services,
    nav,
    redirect,
    render,
    require,
    signed_in,
)
from server.deps import Services
from server.reports import deliveries
from server.web import sessions as web_sessions
from server.webhooks import service as webhooks

ROLE_CHOICES = ("owner", "admin", "editor", "viewer")


def mail_sender(app: Services) -> Any:
    """Where the dashboard's messages go: SMTP when configured, else the development outbox
    (`server.dashboard.mail`). A mail server that refuses is a page error, not a crash."""
    sender = mail.mail_sender(app.settings, app.db)

    def send(message: Mail) -> None:
        try:
            sender(message)
        except mail.MailNotSent as error:
            raise AccountError(
                "mail_not_sent", f"The email could not be sent ({error}); try again later."
            ) from None

    return send


def _client(request: Request[Any, Any, Any]) -> str:
    return request.client.host if request.client is not None else "unknown"


async def _form(request: Request[Any, Any, Any]) -> dict[str, str]:
    form = await request.form()
    return {key: str(value) for key, value in form.items() if isinstance(value, str)}


# --- signing in ----------------------------------------------------------------------------------


@get("/")
async def home(request: Request[Any, Any, Any]) -> Redirect:
    member = signed_in(request)
    # A reviewer sees only the review queue (docs/review.md).
    first = "inspections" if member.can("inspections.view") else "review"
    return redirect(f"{PREFIX}/{first}")


def _next_page(raw: str | None) -> str | None:
    """Where to go after signing in (a page that sent the member to sign in, such as a partner
    application's consent page): only a dashboard path, never another site."""
    if not raw or not raw.startswith(f"{PREFIX}/") or "//" in raw or "\\" in raw:
        return None
    return raw if len(raw) <= 4000 and raw.isprintable() else None


@get("/sign-in")
async def sign_in_form(request: Request[Any, Any, Any]) -> Any:
    after = _next_page(request.query_params.get("next"))
    return render(request, "sign_in.html", {"email": "", "error": None, "next": after})


@post("/sign-in", status_code=200)
async def sign_in(request: Request[Any, Any, Any]) -> Any:
    app = app_services(request)
    form = await _form(request)
    email, password = form.get("email", ""), form.get("password", "")
    after = _next_page(form.get("next"))
    try:
        token = await in_thread(
            accounts.sign_in, app.db, email, password, _client(request), app.clock()
        )
    except AccountError as error:
        return render(
            request,
            "sign_in.html",
            {
                "email": email,
                "error": account_error(request, None, error),
                "code": error.code,
                "next": after,
            },
            status_code=error.status,
        )
    response = redirect(after or f"{PREFIX}/")  # home sends each role to its first page
    web_sessions.set_session_cookie(
        response, request, accounts.SESSION_KIND, token,
        lifetime=accounts.SESSION_LIFETIME, path=PREFIX,
    )  # fmt: skip
    return response


@post("/sign-out", status_code=200)
async def sign_out(request: Request[Any, Any, Any]) -> Response[Any]:
    member = signed_in(request)
    await in_thread(accounts.sign_out, app_services(request).db, member.token)
    response = redirect(f"{PREFIX}/sign-in")
    web_sessions.clear_session_cookie(response, request, accounts.SESSION_KIND, path=PREFIX)
    return response


@post("/mode", status_code=200)
async def switch_mode(request: Request[Any, Any, Any]) -> Redirect:
    member = signed_in(request)
    form = await _form(request)
    mode = "live" if form.get("mode") == "live" else "test"
    accounts.set_mode(app_services(request).db, member.token, mode)
    back = form.get("next", "")
    return redirect(back if back.startswith(f"{PREFIX}/") else f"{PREFIX}/inspections")


@get("/forgot")
async def forgot_form(request: Request[Any, Any, Any]) -> Any:
    return render(request, "forgot.html", {"sent": False})


@post("/forgot", status_code=200)
async def forgot(request: Request[Any, Any, Any]) -> Any:
    app = app_services(request)
    form = await _form(request)
    await in_thread(
        accounts.request_reset,
        app.db,
        form.get("email", ""),
        app.settings.public_url,
        mail_sender(app),
    )
    return render(request, "forgot.html", {"sent": True})


def _link_page(kind: str) -> tuple[Any, Any]:
    # Catalog messages: the page translates them (`_(title)`).
    title = (
        labels._("Choose your password") if kind == "invite" else labels._("Choose a new password")
    )
    path = "/accept" if kind == "invite" else "/reset"

    async def show(request: Request[Any, Any, Any], token: FromQuery[str] = "") -> Any:
        account = accounts.link_account(app_services(request).db, token, kind)
        return render(
            request,
            "choose_password.html",
            {"title": title, "token": token, "account": account, "error": None, "action": path},
            status_code=200 if account else 400,
        )

    async def submit(request: Request[Any, Any, Any]) -> Any:
        app = app_services(request)
        form = await _form(request)
        token = form.get("token", "")
        try:
            await in_thread(accounts.use_link, app.db, token, kind, form.get("password", ""))
        except AccountError as error:
            account = accounts.link_account(app.db, token, kind)
            return render(
                request,
                "choose_password.html",
                {
                    "title": title,
                    "token": token,
                    "account": account,
                    "error": account_error(request, None, error),
                    "action": path,
                },
                status_code=error.status,
            )
        return render(request, "password_set.html", {})

    return (
        get(path, name=f"dashboard-{kind}-form")(show),
        post(path, name=f"dashboard-{kind}", status_code=200)(submit),
    )


accept_form, accept = _link_page("invite")
reset_form, reset = _link_page("reset")


# --- members -------------------------------------------------------------------------------------


def _members_page(
    request: Request[Any, Any, Any],
    member: Member,
    *,
    message: str | None = None,
    error: str | None = None,
    status_code: int = 200,
) -> Any:
    rows = accounts.list_accounts(app_services(request).db, member.actor)
    return render(
        request,
        "members.html",
        {"rows": rows, "roles": ROLE_CHOICES, "message": message, "error": error},
        member=member,
        status_code=status_code,
    )


@get("/members", opt=nav(labels._("Members"), "members.view", 50))
async def members(request: Request[Any, Any, Any]) -> Any:
    member = signed_in(request)
    require(member, "members.view")
    return _members_page(request, member)


@post("/members/invite", status_code=200)
async def invite(request: Request[Any, Any, Any]) -> Any:
    member = signed_in(request)
    require(member, "members.manage")
    app = app_services(request)
    form = await _form(request)
    try:
        row = await in_thread(
            accounts.invite,
            app.db,
            member.actor,
            form.get("email", ""),
            form.get("role", ""),
            app.settings.public_url,
            mail_sender(app),
        )
    except AccountError as error:
        return _members_page(
            request, member, error=account_error(request, member, error), status_code=error.status
        )
    said = action_message(request, member, "invited", email=row["email"])
    return _members_page(request, member, message=said)


@post("/members/{account_id:str}/role", status_code=200)
async def change_role(request: Request[Any, Any, Any], account_id: FromPath[str]) -> Any:
    member = signed_in(request)
    require(member, "members.manage")
    form = await _form(request)
    try:
        row = accounts.change_role(
            app_services(request).db, member.actor, account_id, form.get("role", "")
        )
    except AccountError as error:
        return _members_page(
            request, member, error=account_error(request, member, error), status_code=error.status
        )
    said = action_message(request, member, "role_changed", email=row["email"], role=row["role"])
    return _members_page(request, member, message=said)


@post("/members/{account_id:str}/remove", status_code=200)
async def remove_member(request: Request[Any, Any, Any], account_id: FromPath[str]) -> Any:
    member = signed_in(request)
    require(member, "members.manage")
    try:
        accounts.remove(app_services(request).db, member.actor, account_id)
    except AccountError as error:
        return _members_page(
            request, member, error=account_error(request, member, error), status_code=error.status
        )
    return _members_page(request, member, message=action_message(request, member, "removed"))


# --- developers ----------------------------------------------------------------------------------


def _keys(app: Services, company_id: str) -> list[dict[str, Any]]:
    return [
        {
            "prefix": f"sk_{row.mode}_{row.id}_…",
            "mode": row.mode,
            "createdAt": row.created_at,
            "revokedAt": row.revoked_at,
        }
        for row in recent_keys(app.db, company_id)
    ]


def _developers_page(
    request: Request[Any, Any, Any],
    member: Member,
    *,
    new_key: dict[str, str] | None = None,
    message: str | None = None,
) -> Any:
    app = app_services(request)
    testing = member.mode == "test"
    subscriptions = webhooks.list_subscriptions(app.db, member.actor.company_id, testing)
    return render(
        request,
        "developers.html",
        {
            "keys": _keys(app, member.actor.company_id),
            "new_key": new_key,
            "message": message,
            "subscriptions": subscriptions.webhooks,
            "secret": webhooks.company_secret(app.db, member.actor.company_id),
            "deliveries": deliveries.recent_deliveries(app.db, member.actor.company_id, testing),
            "modes": MODES,
        },
        member=member,
    )


@get("/developers", opt=nav(labels._("Developers"), "developers.view", 40))
async def developers(request: Request[Any, Any, Any]) -> Any:
    member = signed_in(request)
    require(member, "developers.view")
    return await in_thread(_developers_page, request, member)


@get("/developers/revoke")
async def revoke_confirm(request: Request[Any, Any, Any], mode: FromQuery[str] = "test") -> Any:
    member = signed_in(request)
    require(member, "developers.revoke_key")
    chosen = "live" if mode == "live" else "test"
    return render(request, "revoke_confirm.html", {"mode": chosen}, member=member)


@post("/developers/revoke", status_code=200)
async def revoke(request: Request[Any, Any, Any]) -> Any:
    member = signed_in(request)
    require(member, "developers.revoke_key")
    form = await _form(request)
    mode = "live" if form.get("mode") == "live" else "test"
    if form.get("confirm") != "yes":
        return redirect(f"{PREFIX}/developers/revoke?mode={mode}")
    app = app_services(request)
    key = await in_thread(revoke_key, app.db, member.actor.company_id, mode)
    return await in_thread(_developers_page, request, member, new_key={"mode": mode, "key": key})


@post("/developers/deliveries/{delivery_id:str}/retry", status_code=200)
async def retry_delivery(request: Request[Any, Any, Any], delivery_id: FromPath[str]) -> Any:
    member = signed_in(request)
    require(member, "developers.webhooks")
    app = app_services(request)
    queued = await in_thread(
        deliveries.retry, app.db, member.actor.company_id, member.mode == "test", delivery_id
    )
    key = "delivery_queued" if queued else "delivery_not_retried"
    message = action_message(request, member, key)
    return await in_thread(_developers_page, request, member, message=message)


ROUTES: list[Any] = [
    home,
    sign_in_form,
    sign_in,
    sign_out,
    switch_mode,
    forgot_form,
    forgot,
    accept_form,
    accept,
    reset_form,
    reset,
    members,
    invite,
    change_role,
    remove_member,
    developers,
    revoke_confirm,
    revoke,
    retry_delivery,
]
