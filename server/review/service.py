"""The review's operations, shared by the API and the dashboard's review pages.

Each change goes through the inspection service's `change` (one locked transaction: the
runtime's pure function, the saved state, the queue and decision rows, the webhook events);
reads of the queue and of decisions use their own narrow tables (`review_tables`), never the
inspections' documents in bulk.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlmodel import Session

from runtime import InspectionState, Program
from runtime import review as runtime_review
from runtime.api_view import Damage, Image, ImageValidation, Inspection, every_image
from server.auth import AuthContext
from server.common import run_runtime
from server.db import Database
from server.delivery.messages import Message
from server.errors import ApiError
from server.inspections import review_queue
from server.inspections import service as inspections
from server.inspections.deliveries import deliver_retake, retake_message
from server.settings import Settings
from server.web import history

#: Cases per page of the review queue.
QUEUE_PAGE_SIZE = 50
#: Most decisions one CSV export holds (newest first).
MAX_CSV_ROWS = 100_000

#: Who acts (`runtime.review.Person`): made here, at the edge, from the key or the member.
Who = runtime_review.Person


def api_actor(auth: AuthContext) -> Who:
    """Who acts through the API: the key (its id), named as such in the audit trail."""
    return Who.acting(f"key:{auth.key_id}", f"API key {auth.key_id[:8]}")


def review(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    request: runtime_review.ReviewRequest | ApiError,
    who: Who,
    now: datetime,
) -> dict[str, Any]:
    """`POST /v1/inspection/:id/review`: the Inspection after the person's results (and
    decision); `inspection_reviewed` is published on a decision. `request` is the body decoded
    at the edge, or its 400, raised once the inspection is found
    (`schemas.decoded_or_refusal`)."""

    def operation(loaded: inspections.Loaded) -> InspectionState:
        if isinstance(request, ApiError):
            raise request
        return run_runtime(
            runtime_review.review, loaded.program, loaded.state, request, who, now=now
        )

    def events(
        loaded: inspections.Loaded, state: InspectionState
    ) -> list[tuple[str, dict[str, Any]]]:
        if state.status == "completed" and loaded.state.status == "review":
            return [("inspection_reviewed", {"previousStatus": "review"})]
        return []

    # Answered, with an Idempotency-Key, from the decision's own transaction: a retry after a
    # crash replays the 200, where running the decision again was 409 `review_conflict`.
    return inspections.changed_document(
        db, settings, auth, inspection_id, operation, now, events=events
    )


def retake(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    request: runtime_review.RetakeRequest | ApiError,
    who: Who,
    now: datetime,
) -> dict[str, Any]:
    """`POST /v1/inspection/:id/retake`: the slots reopen and a new link carries the message
    through the inspection's channel (202 with the link and the delivery); `request` as in
    `review`."""
    sent: dict[str, Any] = {}

    def operation(loaded: inspections.Loaded) -> InspectionState:
        if isinstance(request, ApiError):
            raise request
        return run_runtime(
            runtime_review.retake, loaded.program, loaded.state, request, who, now=now
        )

    def events(
        loaded: inspections.Loaded, state: InspectionState
    ) -> list[tuple[str, dict[str, Any]]]:
        return [("retake_requested", {"previousStatus": loaded.state.status})]

    def deliver(session: Session, loaded: inspections.Loaded, state: InspectionState) -> None:
        assert state.retake is not None
        link, delivery = deliver_retake(session, settings, loaded, state, state.retake.message, now)
        sent.update(
            message="Retake requested",
            status=state.status,
            images=list(request.images) if not isinstance(request, ApiError) else [],
            magicLink=link,
            delivery=delivery,
        )
        # With an Idempotency-Key, the 202 is stored in the retake's own transaction: a retry
        # after a crash replays it, where running the retake again found no photo to retake.
        inspections.store_answer(session, 202, sent)

    inspections.change(db, auth, inspection_id, operation, now, events=events, after=deliver)
    return sent


def claim(
    db: Database,
    auth: AuthContext,
    inspection_id: str,
    who: Who,
    now: datetime,
    *,
    release: bool = False,
) -> InspectionState:
    """Take (or give back) a case of the queue; 409 `review_conflict` when someone holds it."""

    def operation(loaded: inspections.Loaded) -> InspectionState:
        return run_runtime(
            runtime_review.claim, loaded.program, loaded.state, who, release=release, now=now
        )

    return inspections.change(db, auth, inspection_id, operation, now)[1]


# --- reading -----------------------------------------------------------------------------------

#: Consumer fields shown as "declared" beside the photos (the first and last name as one `name`).
DECLARED_CONSUMER = ("identification", "birthdate", "sex", "email", "phone")


@dataclass(frozen=True, slots=True)
class Photo:
    """One current photo of a case: what the machine read, what a person may decide."""

    id: str
    label: str
    src: str | None
    validations: list[ImageValidation]
    #: Validation names a person may record here: those pending, and `damage` when it runs.
    decidable: list[str]
    pending: list[str]
    damages: list[Damage]


@dataclass(frozen=True, slots=True)
class CaseCheck:
    """One of the template's checks (`globalValidations`) as the reviewer reads it."""

    name: str
    description: str
    valid: bool
    #: Marked `for information`: shown, deciding nothing (its failure is no refusal).
    informational: bool


@dataclass(frozen=True, slots=True)
class Case:
    """What the review page shows of one inspection."""

    id: str
    status: str
    veredict: str
    completed_by: str | None
    template_name: str
    type: str
    locale: str
    declared: list[tuple[str, str]]
    photos: list[Photo]
    #: The template's checks, in the reader's language.
    checks: list[CaseCheck]
    replaced: list[Image]
    reasons: list[dict[str, Any]]
    decisions: list[dict[str, Any]]
    #: Every step, who did what on which photo, when and why (`server.web.history`).
    history: list[history.Step]
    suggestion: dict[str, Any] | None
    assignee: dict[str, str] | None
    retake: dict[str, Any] | None
    age: str | None


def age(since: datetime | None, now: datetime) -> str:
    """How long a case has waited, for a person: `3 d 4 h`, `2 h 5 min`, `12 min`."""
    if since is None:
        return ""
    seconds = max(0, int((now - since).total_seconds()))
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes = rest // 60
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    return f"{minutes} min"


def case(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    now: datetime,
    reader_locale: str | None = None,
) -> Case:
    """The review page's data: the Inspection object (signed photo links) and its state; the
    rules' suggestion in `reader_locale` where the verdict says it in that language."""
    # The stored Inspection object, read through its typed view.
    document = cast(Inspection, inspections.get_inspection(db, settings, auth, inspection_id))
    with db.session() as session:
        loaded = inspections.load(
            session, inspections.find_inspection(session, auth, inspection_id, lock=False)
        )
    state = loaded.state
    review = document.get("review") or {}
    pending = {(p["imageId"], p["validation"]) for p in review.get("pending") or []}
    views: dict[str, Image] = {view["_id"]: view for view, _target in every_image(document)}
    photos = []
    replaced: list[Image] = []
    for product in state.products:
        for image in product.images:
            view = views.get(image.id) or {"_id": image.id}
            waiting = [
                v.validation for v in image.validations if (image.id, v.validation) in pending
            ]
            runs_damage = any(v.validation == "damage" and v.run for v in image.validations)
            photos.append(
                Photo(
                    id=image.id,
                    label=str(view.get("label") or image.side),
                    src=view.get("src"),
                    validations=list(view.get("validations") or []),
                    decidable=waiting
                    + (["damage"] if runs_damage and "damage" not in waiting else []),
                    pending=waiting,
                    damages=list(view.get("damages") or []),
                )
            )
    for product_view in document.get("products", []):
        replaced += list(product_view.get("replacedImages") or [])
    declared = [
        (str(key), str(value))
        for product in state.products[:1]
        for key, value in product.data.items()
        if value not in (None, "") and not isinstance(value, (dict, list, bool))
    ]
    name = " ".join(str(state.consumer.get(k) or "") for k in ("firstName", "lastName")).strip()
    declared += [("name", name)] if name else []
    declared += [
        (key, str(state.consumer[key]))
        for key in DECLARED_CONSUMER
        if state.consumer.get(key) not in (None, "")
    ]
    since = inspections.parse_moment(review.get("since"))
    locale = reader_locale or state.locale
    return Case(
        id=inspection_id,
        status=state.status,
        veredict=state.veredict,
        completed_by=state.completedBy,
        template_name=state.template.name,
        type=state.type,
        locale=state.locale,
        declared=declared,
        photos=photos,
        checks=case_checks(loaded.program, state, locale),
        replaced=replaced,
        # Why a person decides, while one does: after a retake the old reasons no longer hold.
        reasons=[
            _reworded(reason, locale)
            for reason in (review.get("reasons") or [] if state.status == "review" else [])
        ],
        decisions=list(review.get("decisions") or []),
        history=history.steps(
            state.events, history.photo_names(document, locale), locale, settings.time_zone
        ),
        suggestion=_suggestion(review.get("suggestion"), state, reader_locale),
        assignee=review.get("assignee"),
        retake=review.get("retake"),
        age=age(since, now) if state.status == "review" else None,
    )


def case_checks(program: Program, state: InspectionState, locale: str) -> list[CaseCheck]:
    """The template's checks with their results, named in `locale` where the template
    translates them."""
    valid = {item.id: item.valid for item in state.globalValidations}
    return [
        CaseCheck(*check.texts(locale), valid.get(check.id, False), check.informational)
        for check in program.checks
        if check.id in valid
    ]


def _reworded(reason: dict[str, Any], locale: str | None) -> dict[str, Any]:
    """A reason in the reader's language: its message, and what the machine saw when it keeps
    that (`low_confidence`)."""
    found = {**reason, "message": history.reason_text(reason, locale)}
    if reason.get("machineSaw") is not None:
        found["machineSaw"] = history.machine_saw_text(reason, locale) or reason["machineSaw"]
    return found


def reason_texts(reasons: list[dict[str, Any]], locale: str | None) -> list[str]:
    """Why cases wait, as a reader of `locale` reads it (the queue page)."""
    return [history.reason_text(reason, locale) for reason in reasons]


def _suggestion(
    suggestion: dict[str, Any] | None, state: Any, reader_locale: str | None
) -> dict[str, Any] | None:
    """What the rules say now, its reasons in the reader's language when kept in it."""
    if suggestion is None or reader_locale is None or state.review is None:
        return suggestion
    localized = state.review.localizedMachine.get(reader_locale)
    return suggestion if localized is None else {**suggestion, "reasons": localized}


def retake_preview(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    message: str,
    now: datetime,
) -> Message:
    """The retake's message as the consumer will receive it, in their locale."""
    return retake_message(db, settings, auth, inspection_id, message.strip() or "…", now)


def queue(db: Database, auth: AuthContext, who_id: str, page: int = 1) -> review_queue.QueuePage:
    """The company's inspections in `review`, oldest first, one page."""
    return review_queue.queue_page(db, auth, who_id, page, QUEUE_PAGE_SIZE)


CSV_COLUMNS = (
    "decided_at",
    "inspection_id",
    "type",
    "template",
    "veredict",
    "reason",
    "reviewer_id",
    "reviewer",
    "waited_seconds",
)


def decisions_csv(db: Database, auth: AuthContext) -> Iterator[str]:
    """Every decision of the company (newest first) as CSV lines, header first."""
    rows = (
        [
            row.decided_at.isoformat(),
            row.inspection_id,
            row.type,
            row.template_name,
            row.veredict,
            row.reason,
            row.reviewer_id,
            row.reviewer_name,
            row.waited_seconds,
        ]
        for row in review_queue.decisions(db, auth, MAX_CSV_ROWS)
    )
    return history.csv_rows(itertools.chain([list(CSV_COLUMNS)], rows))
