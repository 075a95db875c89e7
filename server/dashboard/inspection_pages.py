"""Inspection pages: the list (the API's filters and paging), and one inspection in full: photos,
validations, inputs, variables, global validations, the verdict explained down to template
lines, the event timeline, PDF reports and a presigned share link."""

from __future__ import annotations

import functools
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from babel.dates import format_date
from litestar import Request, Response, get, post
from litestar.params import FromPath, FromQuery
from litestar.response import Stream

# `simulate`'s naming of a value by its own source text (runtime/cli.py prints the same).
from runtime.explain import _written as written_text
from runtime.explain import explain
from runtime.state import allows
from server.common import in_thread
from server.dashboard import labels
from server.dashboard.web import (
    Member,
    NotFound,
    app_services,
    member_locale,
    nav,
    render,
    require,
    signed_in,
)
from server.deps import Services
from server.errors import ApiError
from server.images import service as images
from server.inspections import deliveries, listing, search, shares
from server.inspections import service as inspections
from server.reports import service as reports
from server.reports.schemas import ReportRequestBody
from server.stored_files import stored_file_response
from server.templates import service as templates
from server.web import capture, history


@get("/inspections", opt=nav(labels._("Inspections"), "inspections.view", 10))
async def inspection_list(request: Request[Any, Any, Any]) -> Any:
    """The list: search, filters, sort and page, all in the URL (a view is a link to share)."""
    member = signed_in(request)
    require(member, "inspections.view")
    app = app_services(request)
    params = {key: value for key, value in request.query_params.items() if value != ""}
    context: dict[str, Any] = {"params": params, **_choices()}
    try:
        query = search.parse(params)
        found = await in_thread(search.search, app.db, member.auth, query)
    except ApiError as error:
        return render(
            request,
            "inspections.html",
            {**context, "page": None, "error": error.description},
            member=member,
            status_code=error.status,
        )

    def link(**override: Any) -> str:
        return "/dashboard/inspections?" + urlencode(query.params(**override))

    def sort_link(column: str) -> str:
        """The header's link: sorted by `column`, the other way round if it already is."""
        if query.sort == column:
            chosen = "-" + column
        elif query.sort == "-" + column:
            chosen = column
        else:
            chosen = "-created" if column == "created" else column
        return link(sort="" if chosen == search.DEFAULT_SORT else chosen, page="")

    return render(
        request,
        "inspections.html",
        {
            **context,
            "page": found,
            "error": None,
            "link": link,
            "sort_link": sort_link,
            "csv_link": "/dashboard/inspections.csv?" + urlencode(query.params(page="", limit="")),
        },
        member=member,
    )


#: The overview's rows: what an operations team asks first, each a filter of the list.
OVERVIEW_STATUSES = (
    "created",
    "started",
    "processing",
    search.REVIEW_STATUS,
    "blocked",
    "completed",
)
OVERVIEW_VERDICTS = ("approved", "disapproved")
#: Its columns: creation dates, UTC, both included (the list's `from`/`to`).
OVERVIEW_DAYS = {"today": 0, "week": 6}


def _overview(app: Services, member: Member, locale: str) -> dict[str, Any]:
    """How many inspections were created today and in the last 7 days (UTC), in all and by
    status and verdict, each with the link to the list showing them (the list's own search,
    counted up to its cap)."""
    today = app.clock().date()
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for column, days in OVERVIEW_DAYS.items():
        dates = {"from": (today - timedelta(days=days)).isoformat(), "to": today.isoformat()}
        rows: list[tuple[str, dict[str, str]]] = [("all", {})]
        rows += [(status, {"status": status}) for status in OVERVIEW_STATUSES]
        rows += [(verdict, {"veredict": verdict}) for verdict in OVERVIEW_VERDICTS]
        for row, chosen in rows:
            query = search.parse({**dates, **chosen, "limit": "1"})
            found = search.search(app.db, member.auth, query)
            cells[row, column] = {
                "total": found.total,
                "capped": found.capped,
                "link": "/dashboard/inspections?" + urlencode(query.params(limit="")),
            }
    return {
        "cells": cells,
        "statuses": OVERVIEW_STATUSES,
        "verdicts": OVERVIEW_VERDICTS,
        "today": format_date(today, format="long", locale=locale),
    }


@get("/overview", opt=nav(labels._("Overview"), "inspections.view", 5))
async def overview(request: Request[Any, Any, Any]) -> Any:
    """Today's and the week's inspections at a glance, every number a link to the list."""
    member = signed_in(request)
    require(member, "inspections.view")
    locale = member_locale(request, member)
    context = await in_thread(_overview, app_services(request), member, locale)
    return render(request, "overview.html", context, member=member)


@get("/inspections.csv", media_type="text/csv; charset=utf-8")
async def inspection_csv(request: Request[Any, Any, Any]) -> Any:
    """Every inspection the list's query matches, as CSV, streamed in batches (a large export
    never sits whole in memory)."""
    member = signed_in(request)
    require(member, "inspections.view")
    app = app_services(request)
    params = {key: value for key, value in request.query_params.items() if value != ""}
    try:
        query = search.parse(params)
    except ApiError as error:
        return Response(
            content=f"{error.code}: {error.description}\n",
            status_code=error.status,
            media_type="text/plain; charset=utf-8",
        )
    stamp = app.clock().strftime("%Y%m%d-%H%M%S")
    return Stream(
        search.export_csv(app.db, member.auth, query),
        headers={
            "content-disposition": f'attachment; filename="inspections-{stamp}.csv"',
            "cache-control": "private, no-store",
        },
    )


def _choices() -> dict[str, Any]:
    from inspectlang.manifest import INSPECTION_TYPES

    return {
        "statuses": tuple(dict.fromkeys((*listing.STATUSES, search.REVIEW_STATUS))),
        "veredicts": listing.VEREDICTS,
        "types": INSPECTION_TYPES,
        "sorts": tuple(search.SORTS),
        "page_sizes": search.PAGE_SIZES,
    }


def span_text(lines: list[str], span: list[int] | tuple[int, ...]) -> str:
    """The template text under `span` (line, column, end line, end column; 1-based, end
    exclusive), its lines joined by one space; "" when the span is outside the source."""
    if len(span) != 4 or not span[0] or span[0] > len(lines) or span[2] > len(lines):
        return ""
    first, column, last, end = span
    if first == last:
        return lines[first - 1][column - 1 : end - 1].strip()
    parts = [lines[first - 1][column - 1 :]]
    parts += lines[first : last - 1]
    parts.append(lines[last - 1][: end - 1])
    return " ".join(part.strip() for part in parts if part.strip())


def readable_conditions(
    items: list[Any], lines: list[str], conditions: list[Any] | None = None
) -> list[dict[str, Any]]:
    """Each condition of the explanation once, with its own text and, below it, each value it
    read, named by the sub-expression's own text (as `inspectlang simulate` prints them), a
    text read twice shown once. A value whose text cannot be cut from the source (a multi-line
    span, a built-in) is named by what it is and its line."""
    shown = []
    for index, item in enumerate(items):
        # The condition's own span (`when:` / `valid when:`), not its whole line or block.
        node = conditions[index] if conditions is not None and index < len(conditions) else None
        # A typed IR node (`inspectlang.ir`) or, from older manifests, its dict form.
        own = node.get("span") if isinstance(node, dict) else getattr(node, "span", None)
        span: Any = list(own) if own else item.span
        values: list[dict[str, Any]] = []
        seen: set[str] = set()
        for value in item.values:
            text = written_text(value, lines)
            if text in seen:
                continue
            seen.add(text)
            values.append(
                {"text": text, "value": value.value, "line": value.span[0] if value.span else 0}
            )
        shown.append(
            {
                "kind": item.kind,
                "label": item.label,
                "line": item.span[0] if item.span else 0,
                "text": span_text(lines, span),
                "holds": item.holds,
                "decided": item.decided,
                # a check marked `for information`: shown, deciding nothing
                "informational": getattr(item, "informational", False),
                "seen": values,
            }
        )
    return shown


def _detail(
    app: Services, member: Member, inspection_id: str, locale: str | None = None
) -> dict[str, Any]:
    auth = member.auth
    with app.db.session() as session:
        try:
            record = inspections.find_inspection(session, auth, inspection_id, lock=False)
        except ApiError:
            raise NotFound(f"inspection {inspection_id}") from None
        loaded = inspections.load(session, record)
    document = inspections.get_inspection(app.db, app.settings, auth, inspection_id)
    explanation = explain(loaded.program, loaded.state, locale)
    reports_list = reports.list_report_requests(app.db, app.settings, auth, inspection_id)
    source = (
        templates.source_of(app.db, record.manifest_key, record.template_id) or ""
    ).splitlines()
    return {
        "inspection": document,
        "state": loaded.state,
        "manifest": loaded.manifest,
        # the ids of the checks marked `for information` (tagged as such, never a refusal)
        "informational": loaded.program.informational_checks(),
        "explanation": explanation,
        "verdict_lines": readable_conditions(
            explanation.verdict,
            source,
            [when for _reason, when, _span in loaded.program.disapprovals]
            + [loaded.program.approve_when],
        ),
        "check_lines": readable_conditions(
            explanation.checks, source, [check.valid for check in loaded.program.checks]
        ),
        "source": source,
        "reports": reports_list.reportRequests,
        "reportable": record.status in reports.REPORTABLE_STATUSES,
        "resendable": allows(loaded.state, "send_link"),
        "delivery": document.get("delivery") or {},
        "shares": shares.active(app.db, auth, inspection_id, app.clock()),
    }


def _detail_page(
    request: Request[Any, Any, Any],
    member: Member,
    inspection_id: str,
    *,
    share: Any = None,
    error: str | None = None,
    notice: str | None = None,
    status_code: int = 200,
) -> Any:
    locale = member_locale(request, member)
    context = _detail(app_services(request), member, inspection_id, locale)
    context["captures"] = capture.by_image(context["state"], locale)
    # the verdict's reasons in the member's language (the inspection's where it has none)
    context["reasons"] = context["state"].reasons_in(locale)
    context["history"] = inspection_history(app_services(request), context, locale)
    context["history_csv"] = f"/dashboard/inspections/{inspection_id}/history.csv"
    context["photo_names"] = history.photo_names(context["inspection"], locale)
    context["review_reason"] = functools.partial(history.reason_text, locale=locale)
    return render(
        request,
        "inspection.html",
        {**context, "share": share, "error": error, "notice": notice},
        member=member,
        status_code=status_code,
    )


def inspection_history(app: Services, detail: dict[str, Any], locale: str) -> list[history.Step]:
    """The history of the inspection `_detail` read, for a reader of `locale`."""
    names = history.photo_names(detail["inspection"], locale)
    return history.steps(detail["state"].events, names, locale, app.settings.time_zone)


def history_csv(request: Request[Any, Any, Any], member: Member, inspection_id: str) -> Stream:
    """The history as CSV in the member's language: the page's words, cell by cell."""
    app = app_services(request)
    locale = member_locale(request, member)
    found = inspection_history(app, _detail(app, member, inspection_id, locale), locale)
    return Stream(
        history.csv_lines(found, locale),
        media_type="text/csv",  # Litestar adds the charset
        headers={"Content-Disposition": f'attachment; filename="history-{inspection_id}.csv"'},
    )


@get("/inspections/{inspection_id:str}/history.csv")
async def inspection_history_csv(
    request: Request[Any, Any, Any], inspection_id: FromPath[str]
) -> Stream:
    member = signed_in(request)
    if not member.can("review.view"):  # a reviewer exports the history of the case too
        require(member, "inspections.view")
    return await in_thread(history_csv, request, member, inspection_id)


@get("/inspections/{inspection_id:str}")
async def inspection_detail(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    member = signed_in(request)
    require(member, "inspections.view")
    return await in_thread(_detail_page, request, member, inspection_id)


@post("/inspections/{inspection_id:str}/report", status_code=200)
async def request_report(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    member = signed_in(request)
    require(member, "inspections.view")
    app = app_services(request)
    try:
        await in_thread(
            reports.create_report_request,
            app.db,
            app.settings,
            member.auth,
            inspection_id,
            ReportRequestBody(),
        )
    except ApiError as error:
        return await in_thread(
            _detail_page, request, member, inspection_id, error=error.description,
            status_code=error.status,
        )  # fmt: skip
    return Response(
        content=b"",
        status_code=303,
        headers={"location": f"/dashboard/inspections/{inspection_id}#reports"},
    )


@post("/inspections/{inspection_id:str}/share", status_code=200)
async def share(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    """A new share link (a readable page, 7 days, revocable), shown on the page."""
    member = signed_in(request)
    require(member, "inspections.share")
    app = app_services(request)
    try:
        link = await in_thread(
            shares.create, app.db, app.settings, member.auth, inspection_id,
            member.actor.account_id, app.clock(),
        )  # fmt: skip
    except ApiError:
        raise NotFound(f"inspection {inspection_id}") from None
    return await in_thread(_detail_page, request, member, inspection_id, share=link)


@post("/inspections/{inspection_id:str}/share/{share_id:str}/revoke", status_code=200)
async def revoke_share(
    request: Request[Any, Any, Any], inspection_id: FromPath[str], share_id: FromPath[str]
) -> Any:
    """Revoke a share link: its page and its JSON answer 403 `link_revoked` from now on."""
    member = signed_in(request)
    require(member, "inspections.share")
    app = app_services(request)
    done = await in_thread(shares.revoke, app.db, member.auth, inspection_id, share_id, app.clock())
    if not done:
        raise NotFound(f"share link {share_id}")
    return await in_thread(_detail_page, request, member, inspection_id, notice="revoked")


@post("/inspections/{inspection_id:str}/resend", status_code=200)
async def resend(request: Request[Any, Any, Any], inspection_id: FromPath[str]) -> Any:
    """Send the consumer's link again over the last channel and destination (a new code: the
    previous link stops working); the page says what happened or why not."""
    member = signed_in(request)
    require(member, "inspections.share")
    app = app_services(request)
    try:
        await in_thread(
            deliveries.resend, app.db, app.settings, member.auth, inspection_id, None, None, None,
            app.clock(),
        )  # fmt: skip
    except ApiError as error:
        if error.code == "inspection_not_found":
            raise NotFound(f"inspection {inspection_id}") from None
        return await in_thread(
            _detail_page, request, member, inspection_id, error=error.description,
            status_code=error.status,
        )  # fmt: skip
    return await in_thread(_detail_page, request, member, inspection_id, notice="resent")


@get("/inspections/{inspection_id:str}/photos/{image_id:str}")
async def photo(
    request: Request[Any, Any, Any],
    inspection_id: FromPath[str],
    image_id: FromPath[str],
    size: FromQuery[str] = "full",
) -> Response[bytes]:
    member = signed_in(request)
    require(member, "inspections.view")
    app = app_services(request)

    def read() -> tuple[bytes, str | None]:
        try:
            # `?size=thumb`: the photo's thumbnail, made once and kept beside it
            return images.image_content(
                app.db, app.blobs, image_id, auth=member.auth, token=None,
                secret=app.settings.secret, inspection_id=inspection_id,
                thumb=size == "thumb",
            )  # fmt: skip
        except ApiError as error:
            raise NotFound(f"photo {image_id}") from error

    content, filename = await in_thread(read)
    # Never the uploader's declared type: a consumer's `x.html` would run as this member.
    return stored_file_response(content, filename)


ROUTES: list[Any] = [
    inspection_list,
    overview,
    revoke_share,
    resend,
    inspection_csv,
    inspection_detail,
    inspection_history_csv,
    request_report,
    share,
    photo,
]
