"""The reviewer's pages: the review queue and one inspection's review (docs/review.md).

They call the review service the API calls (`server.review.service`) with the member as the
person acting; photos are shown through the same signed links the Inspection object carries.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from litestar import Request, get, post
from litestar.params import FromPath
from litestar.response import Stream

from server.common import in_thread
from server.dashboard import labels
from server.dashboard.web import (
    Member,
    app_services,
    member_locale,
    nav,
    redirect,
    render,
    require,
    signed_in,
)
from server.delivery.messages import Message
from server.errors import ApiError
from server.review import service
from server.review.schemas import retake_request, review_request
from server.web import i18n

#: Longest damage entry text the form takes (the runtime's limit for a damage's texts).
MAX_DAMAGE_CHARS = 100


def who(member: Member) -> service.Who:
    """The signed-in member acting, as the audit trail names them."""
    return service.Who.acting(member.actor.account_id, member.actor.email)


@get("/review", opt=nav(labels._("Review"), "review.view", 20))
async def review_queue(request: Request[Any, Any, Any]) -> Any:
    member = signed_in(request)
    require(member, "review.view")
    app = app_services(request)
    raw = request.query_params.get("page", "1")
    number = int(raw) if raw.isdigit() and len(raw) < 8 else 1
    found = await in_thread(service.queue, app.db, member.auth, member.actor.account_id, number)
    now = app.clock()
    locale = member_locale(request, member)
    return render(
        request,
        "review/queue.html",
        {
            "queue": found,
            "rows": [
                (
                    item,
                    service.age(item.since, now),
                    service.reason_texts(item.reasons, locale),
                )
                for item in found.items
            ],
            "notice": _notice(request, member),
        },
        member=member,
    )


def _notice(request: Request[Any, Any, Any], member: Member) -> str | None:
    """What the page says after an action (`?done=saved`...), in the member's language."""
    done = request.query_params.get("done", "")
    if done not in labels.REVIEW_NOTICES:
        return None
    locale = member_locale(request, member)
    return labels.labeller(i18n.translations(locale), labels.REVIEW_NOTICES)(done)


def next_case(app: Any, member: Member, after: str) -> str | None:
    """The oldest case of the queue other than `after` that nobody else holds: where the
    reviewer goes next (the `N` key, and after a decision)."""
    found = service.queue(app.db, member.auth, member.actor.account_id, 1)
    return next(
        (
            item.inspection_id
            for item in found.items
            if item.inspection_id != after and item.assignee_id in (None, member.actor.account_id)
        ),
        None,
    )


async def _claim(request: Request[Any, Any, Any], inspection_id: str, *, release: bool) -> Any:
    member = signed_in(request)
    require(member, "review.decide")
    app = app_services(request)
    form = await request.form()
    back = str(form.get("next") or "")
    try:
        await in_thread(
            service.claim,
            app.db,
            member.auth,
            inspection_id,
            who(member),
            app.clock(),
            release=release,
        )
    except ApiError as error:
        return await in_thread(_page, request, member, inspection_id, error=error)
    if back == "queue":
        return redirect("/dashboard/review")
    return redirect(f"/dashboard/review/{inspection_id}")


@post("/review/{inspection_id:str}/claim", status_code=303)
async def claim_case(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    return await _claim(request, inspection_id, release=False)


@post("/review/{inspection_id:str}/release", status_code=303)
async def release_case(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    return await _claim(request, inspection_id, release=True)


def _case(request: Request[Any, Any, Any], member: Member, inspection_id: str) -> service.Case:
    """The case as its reviewer reads it: in the member's language, at the app's clock."""
    app = app_services(request)
    return service.case(
        app.db,
        app.settings,
        member.auth,
        inspection_id,
        app.clock(),
        member_locale(request, member),
    )


def _page(
    request: Request[Any, Any, Any],
    member: Member,
    inspection_id: str,
    *,
    error: ApiError | None = None,
    notice: str | None = None,
    preview: Message | None = None,
    form: dict[str, Any] | None = None,
) -> Any:
    case = _case(request, member, inspection_id)
    app = app_services(request)
    translations = i18n.translations(member_locale(request, member))
    return render(
        request,
        "review/case.html",
        {
            "case": case,
            "history": case.history,
            "history_csv": f"/dashboard/inspections/{inspection_id}/history.csv",
            "next_case": next_case(app, member, inspection_id),
            "field_label": labels.labeller(translations, labels.FIELDS),
            "source_label": labels.labeller(translations, labels.SOURCES),
            "error": _error_text(error, translations) if error is not None else None,
            "notice": notice,
            "preview": preview,
            "form": form or {},
            "mine": case.assignee is not None
            and case.assignee.get("id") == member.actor.account_id,
        },
        member=member,
        status_code=error.status if error is not None else 200,
    )


@get("/review/{inspection_id:str}")
async def review_page(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    member = signed_in(request)
    require(member, "review.view")
    notice = _notice(request, member)
    return await in_thread(_page, request, member, inspection_id, notice=notice)


def _error_text(error: ApiError, translations: Any) -> str:
    """A refusal in the reviewer's language (the API's description when no words exist)."""
    message = labels.REVIEW_ERRORS.get(error.code)
    return str(translations.gettext(message)) if message else error.description


def review_body(form: dict[str, Any], case: service.Case) -> dict[str, Any]:
    """The API's review body from the review page's form: one result per validation given a
    choice, the damage entry of each photo on its `damage` result, and the decision."""
    results: list[dict[str, Any]] = []
    for photo in case.photos:
        for item in photo.decidable:
            choice = str(form.get(f"valid:{photo.id}:{item}") or "")
            damage = _damage_entry(form, photo.id) if item == "damage" else None
            if choice not in ("yes", "no") and damage is None:
                continue
            result: dict[str, Any] = {
                "imageId": photo.id,
                "validation": item,
                # A damage entered without a choice means damage was found.
                "valid": choice == "yes",
            }
            note = str(form.get(f"note:{photo.id}:{item}") or "").strip()
            if note:
                result["note"] = note
            if damage is not None:
                result["damages"] = [damage]
            results.append(result)
    body: dict[str, Any] = {}
    if results:
        body["validations"] = results
    decision = str(form.get("veredict") or "")
    if form.get("action") == "decide":
        body["veredict"] = decision or None
        body["reason"] = str(form.get("reason") or "")
        if not decision:
            body.pop("veredict")
    return body


def _damage_entry(form: dict[str, Any], image_id: str) -> dict[str, str] | None:
    entry = {
        key: str(form.get(f"damage-{key}:{image_id}") or "").strip()[:MAX_DAMAGE_CHARS]
        for key in ("part", "damage", "severity")
    }
    return entry if any(entry.values()) else None


@post("/review/{inspection_id:str}", status_code=303)
async def submit_review(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    member = signed_in(request)
    require(member, "review.decide")
    app = app_services(request)
    form = dict(await request.form())

    def act() -> Any:
        case = _case(request, member, inspection_id)
        body = review_body(form, case)
        if form.get("action") == "decide" and "veredict" not in body:
            raise ApiError("invalid_body", 400, "Choose approved or disapproved before deciding.")
        typed = review_request(body)
        service.review(
            app.db, app.settings, member.auth, inspection_id, typed, who(member), app.clock()
        )
        return body

    try:
        body = await in_thread(act)
    except ApiError as error:
        return await in_thread(_page, request, member, inspection_id, error=error, form=form)
    if "veredict" in body:
        # A reviewer with 200 cases a day goes straight to the next one.
        following = await in_thread(next_case, app, member, inspection_id)
        if following is None:
            return redirect(f"/dashboard/review?done={body['veredict']}-last")
        return redirect(f"/dashboard/review/{following}?done={body['veredict']}")
    return redirect(f"/dashboard/review/{inspection_id}?done=saved")


@post("/review/{inspection_id:str}/retake", status_code=303)
async def ask_retake(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    member = signed_in(request)
    require(member, "review.retake")
    app = app_services(request)
    form = await request.form()
    images = [str(value) for value in form.getall("images", [])]
    message = str(form.get("message") or "")
    body = {"images": images, "message": message}
    if form.get("action") == "preview":
        preview = await in_thread(
            service.retake_preview,
            app.db,
            app.settings,
            member.auth,
            inspection_id,
            message,
            app.clock(),
        )
        values = {"retake_images": images, "retake_message": message}
        return await in_thread(_page, request, member, inspection_id, preview=preview, form=values)
    try:
        await in_thread(
            service.retake,
            app.db,
            app.settings,
            member.auth,
            inspection_id,
            retake_request(body),
            who(member),
            app.clock(),
        )
    except ApiError as error:
        values = {"retake_images": images, "retake_message": message}
        return await in_thread(_page, request, member, inspection_id, error=error, form=values)
    return redirect(f"/dashboard/review/{inspection_id}?done=retake")


@get("/review/decisions.csv")
async def decisions_csv(request: Request[Any, Any, Any]) -> Stream:
    member = signed_in(request)
    require(member, "review.export")
    app = app_services(request)
    stamp = datetime.now().strftime("%Y%m%d")
    return Stream(
        service.decisions_csv(app.db, member.auth),
        # Litestar adds `; charset=utf-8` to a text/* type itself: naming it here doubled it.
        media_type="text/csv",
        headers={"Content-Disposition": f'attachment; filename="decisions-{stamp}.csv"'},
    )


ROUTES: list[Any] = [
    review_queue,
    decisions_csv,
    claim_case,
    release_case,
    review_page,
    submit_review,
    ask_retake,
]
