"""The state of one inspection: a pydantic model the server stores as JSON.

The state is a pure function of the program and its event log (`events`): `engine.replay`
rebuilds it from the log alone. Store it with `.model_dump(mode="json", by_alias=True)` and
load it with `InspectionState.model_validate(...)`.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from runtime.errors import InspectionError

Status = Literal["created", "started", "processing", "review", "completed", "blocked"]
#: Every status, in the order of an inspection's life (lists and filters show them so).
STATUSES: tuple[Status, ...] = get_args(Status)
Veredict = Literal["approved", "disapproved", "not_defined"]
CompletedBy = Literal["client", "consumer", "expiration", "reviewer"]
#: Who decides a validation in this deployment (`runtime.routing`): a machine (a validator of
#: this runtime, a local analyzer, an outside provider, a service posting to the API) or a
#: person (nothing here runs it: it never holds `processed` back and waits for a reviewer).
Route = Literal["machine", "person"]


#: Most damages one inspection may hold (declared plus reported).
MAX_DAMAGES = 1_000


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    def to_json(self) -> dict[str, Any]:
        """The record as events and the stored state hold it (JSON, by alias)."""
        return dict(self.model_dump(mode="json", by_alias=True))


class ValidationRecord(_Model):
    """One validation of one uploaded image; `reported` once its result is in."""

    id: str = Field(alias="_id")
    validation: str
    run: bool = True
    required: bool = True
    threshold: float = 80
    confidence: float | None = None
    valid: bool | None = None
    result: Any = None
    #: What the analyzer saw beyond `result` (`runtime.wording.SEEN_KINDS`), when it said.
    seen: dict[str, Any] | None = None
    reported: bool = False
    #: Computed by a validator of this runtime (complete, date, distance) rather than reported.
    local: bool = False
    #: Who decides it here, fixed at upload (`runtime.routing.route`).
    route: Route = "machine"
    #: The person who recorded this result (`{id, name}`), when a reviewer did.
    reviewedBy: dict[str, str] | None = None
    reviewedAt: str | None = None
    #: A reviewer's note on the result.
    note: str | None = None
    #: The evidence the consumer declined to give that this validation needs (`location`):
    #: the validation was not run; routed to a person, who decides it when it is required
    #: (`runtime.validators.declined_evidence`, docs/language.md "Declined evidence").
    declined: str | None = None


class DamageRecord(_Model):
    id: str = Field(alias="_id")
    part: str
    damage: str
    severity: str
    percentage: float | None = None
    #: True when the consumer declared it, False when a damage validation reported it.
    declared: bool = True
    imageId: str | None = None


class ImageRecord(_Model):
    """The latest upload of one template image (or of an extra image)."""

    id: str = Field(alias="_id")
    templateImageIdentifier: str | None = None
    side: str
    target: Literal["product", "identity", "custom"] = "product"
    type: str = "normal"
    processed: bool = False
    approved: bool = False
    uploadedAt: str
    src: str | None = None
    productInspectionId: str | None = None
    attempt: int = 1
    contentType: str | None = None
    size: int = 0
    width: int | None = None
    height: int | None = None
    #: When and where the photo was taken, as `date` and `distance` judged it, and where each
    #: came from: `exif` (the photo's own data), `browser` (what the uploading client declared),
    #: `upload` (no capture time: `takenAt` is empty and only `uploadedAt` is known).
    takenAt: str | None = None
    takenAtSource: str | None = None
    latitude: float | None = None
    longitude: float | None = None
    locationSource: str | None = None
    #: The camera and the software of the file (EXIF Make, Model, Software), when it says.
    device: dict[str, str] | None = None
    #: The photo's 64-bit perceptual hashes in hex, whole and central crop (`runtime.photohash`),
    #: for `duplicate`.
    phash: str | None = None
    phashCenter: str | None = None
    validations: list[ValidationRecord] = Field(default_factory=list)
    damages: list[DamageRecord] = Field(default_factory=list)
    #: Fields read from an identity document (`{entity, valid, result}`), by the validations
    #: that read it; a later reading of the same entity replaces the earlier one.
    entities: list[dict[str, Any]] = Field(default_factory=list)
    #: When a reviewer's retake reopened this photo's slot (the photo stays in the history).
    replacedAt: str | None = None


class ProductState(_Model):
    id: str = Field(alias="_id")
    type: str
    #: The product's fields (`plate`, `year`, ...), as given at creation or product update.
    data: dict[str, Any] = Field(default_factory=dict)
    images: list[ImageRecord] = Field(default_factory=list)
    extraImages: list[ImageRecord] = Field(default_factory=list)
    #: Damages declared by the consumer (damages reported by validations live on the image).
    damages: list[DamageRecord] = Field(default_factory=list)
    #: Photos a reviewer's retake replaced, oldest first (`replacedAt` set on each).
    replacedImages: list[ImageRecord] = Field(default_factory=list)


class TemplateRef(_Model):
    id: str = Field(alias="_id")
    name: str
    type: str = "custom"
    revision: str = ""


class RuleErrorRecord(_Model):
    """A rule error: evaluation went on, but this expression gave no value."""

    code: str
    span: list[int]
    #: `rule:<id>`, `check:<id>` or `verdict`.
    source: str
    #: Index of the event (in `events`) that was being processed.
    event: int


class EventRecord(_Model):
    """One accepted event: enough to apply it again without the original request's bytes."""

    kind: str
    at: str
    data: dict[str, Any] = Field(default_factory=dict)


class GlobalValidation(_Model):
    id: str = Field(alias="_id")
    name: str
    description: str
    valid: bool


class ReviewState(_Model):
    """What a person's review needs and did (`runtime.review`): why the inspection waits,
    who holds it, the decisions and every human action (the audit trail)."""

    #: Why a person must decide: `{code, message, imageId?, validation?, span?}`.
    reasons: list[dict[str, Any]] = Field(default_factory=list)
    #: When the inspection last entered `review`.
    since: str | None = None
    #: When it first entered `review`: a decision's waiting time counts from here, so a retake
    #: (which sends it back to the consumer and then to review again) does not restart it.
    firstSince: str | None = None
    #: Who finished it (`client` or `consumer`) before it went to review.
    finishedBy: str | None = None
    #: What the template's verdict said at the finish (`{veredict, reasons}`): a suggestion.
    machine: dict[str, Any] | None = None
    #: The suggestion's reasons in the other locales where they differ (as
    #: `InspectionState.localizedReasons`): a reviewer reads them in their language.
    localizedMachine: dict[str, list[str]] = Field(default_factory=dict)
    #: The reviewer holding the case (`{id, name}`, claimed from the queue).
    assignee: dict[str, str] | None = None
    #: `{veredict, reason, by, at}`, oldest first.
    decisions: list[dict[str, Any]] = Field(default_factory=list)
    #: Every human action: `{action, by, at, before, after}` (action: claim, result,
    #: damage, decision, retake).
    audit: list[dict[str, Any]] = Field(default_factory=list)


class RetakeState(_Model):
    """A retake a reviewer asked for: the slots to photograph again and the message."""

    identifiers: list[str]
    message: str
    at: str
    by: dict[str, str]


class InspectionState(_Model):
    id: str = Field(alias="_id")
    type: str
    #: Set only by `move` (the table `MOVES`); `stage(state)` refines it.
    status: Status = "created"
    veredict: Veredict = "not_defined"
    #: Why the verdict is what it is, in the inspection's locale (the template's default
    #: text where a reason is not translated).
    reasons: list[str] = Field(default_factory=list)
    #: The same reasons in the other locales the template or the runtime writes them in, where
    #: they differ: a page or report in another language reads its own (`reasons_in`).
    localizedReasons: dict[str, list[str]] = Field(default_factory=dict)
    completedBy: CompletedBy | None = None
    template: TemplateRef
    producer: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, str] = Field(default_factory=dict)
    locale: str = "en_US"
    delivery: dict[str, Any] = Field(default_factory=dict)
    consumer: dict[str, Any] = Field(default_factory=dict)
    #: Input values by identifier, as validated (numbers, texts, lists of option keys...).
    inputs: dict[str, Any] = Field(default_factory=dict)
    products: list[ProductState] = Field(default_factory=list)
    #: Validation name -> `{run?, required?}` sent at creation (`<product>.configuration`):
    #: overrides the template's settings for this inspection's images only.
    configuration: dict[str, dict[str, bool]] = Field(default_factory=dict)
    #: This inspection's own copy of the template variables.
    variables: dict[str, Any] = Field(default_factory=dict)
    globalValidations: list[GlobalValidation] = Field(default_factory=list)
    #: Uploads per template image identifier.
    attempts: dict[str, int] = Field(default_factory=dict)
    events: list[EventRecord] = Field(default_factory=list)
    ruleErrors: list[RuleErrorRecord] = Field(default_factory=list)
    #: Which rule ran on which event (`{event, rule, trigger}`), for the explanation.
    ruleRuns: list[dict[str, Any]] = Field(default_factory=list)
    #: Set once the inspection has been sent to a person (or a person acted on it).
    review: ReviewState | None = None
    #: The retake asked last, while its slots wait for new photos.
    retake: RetakeState | None = None
    #: Uploads a retake added to a slot beyond `maxAttempts`, per template image identifier.
    extraAttempts: dict[str, int] = Field(default_factory=dict)
    createdAt: str
    updatedAt: str
    startedAt: str | None = None
    completedAt: str | None = None
    expiresAt: str | None = None
    testing: bool = False

    @model_validator(mode="before")
    @classmethod
    def _drop_resume_status(cls, data: Any) -> Any:
        """Documents stored before the moves became one table carry `resumeStatus`, which
        `startedAt` now says (`stage`): read them, drop it."""
        if isinstance(data, dict) and "resumeStatus" in data:
            data = {key: value for key, value in data.items() if key != "resumeStatus"}
        return data

    def reasons_in(self, locale: str | None) -> list[str]:
        """The verdict's reasons as a reader of `locale` reads them (the inspection's own when
        the verdict has none in that locale)."""
        if locale is None or locale == self.locale:
            return self.reasons
        return self.localizedReasons.get(locale, self.reasons)

    def product(self, product_id: str) -> ProductState | None:
        return next((p for p in self.products if p.id == product_id), None)

    def damage_count(self) -> int:
        """The damages the inspection holds, declared and reported (at most MAX_DAMAGES)."""
        return sum(len(p.damages) + sum(len(i.damages) for i in p.images) for p in self.products)

    def find_image(self, image_id: str) -> tuple[ProductState, ImageRecord] | None:
        for product in self.products:
            for image in product.images:
                if image.id == image_id:
                    return product, image
        return None


# ----------------------------------------------------------------------------------------------
# The moves: one table (stage, event) -> stage
# ----------------------------------------------------------------------------------------------

#: Where an inspection is, as the moves must know it: its status, with `processing` and
#: `blocked` told apart by what they return to. `created_processing` is `processing` entered
#: before the start (its analysis over, it is `created` again); `created_expired` and `expired`
#: are `blocked` by the expiry (before and after the start), which `renew` reopens; `blocked`
#: alone is blocked by its attempts, for good. `stage(state)` reads it from the status,
#: `startedAt` and the event log; STAGE_STATUS gives the status each stage shows.
Stage = Literal[
    "created",
    "started",
    "created_processing",
    "processing",
    "review",
    "completed",
    "blocked",
    "created_expired",
    "expired",
]
#: The statuses `create` may start in (`initialStatus`).
INITIAL_STATUSES: tuple[Status, ...] = ("created", "started")
STAGE_STATUS: dict[Stage, Status] = {
    "created": "created",
    "started": "started",
    "created_processing": "processing",
    "processing": "processing",
    "review": "review",
    "completed": "completed",
    "blocked": "blocked",
    "created_expired": "blocked",
    "expired": "blocked",
}

#: What happens to an inspection. A request is one of the first group; the runtime follows it
#: with the second's when the data says so (an upload leaves analysis pending: `analyse`; the
#: last result arrives: `analysed`; a slot's attempts run out unapproved: `exhaust`; the
#: verdict needs a person: `refer` instead of `finish`; the last result a review waited for
#: lets the verdict decide: `conclude`).
Event = Literal[
    "start",
    "edit",
    "result",
    "finish",
    "time_out",
    "expire",
    "renew",
    "send_link",
    "claim",
    "record",
    "decide",
    "retake",
    "analyse",
    "analysed",
    "exhaust",
    "refer",
    "conclude",
]
EVENTS: tuple[Event, ...] = get_args(Event)

_EDITABLE: tuple[Stage, ...] = ("created", "started", "created_processing", "processing")


def _stay(*stages: Stage) -> dict[Stage, Stage]:
    return {stage: stage for stage in stages}


#: The state machine: event -> {stage it may happen in: stage it leads to}. A pair not in the
#: table is refused (REFUSALS). Every guard of the runtime and the server asks `allows` or
#: `require`; only `move` sets `status`.
MOVES: dict[Event, dict[Stage, Stage]] = {
    # The consumer or the client starts: photos taken before keep processing.
    "start": {"created": "started", "created_processing": "processing"},
    # Update, product update, more products, upload, declared damage.
    "edit": _stay(*_EDITABLE),
    # A machine's result: also while a person reviews (a late result fills what they would).
    "result": _stay(*_EDITABLE, "review"),
    # A client's or consumer's finish whose verdict the machine decides...
    "finish": dict.fromkeys(_EDITABLE, "completed"),
    # ...or that waits for a person (also a late result that still leaves one to decide).
    "refer": {**dict.fromkeys(_EDITABLE, "review"), "review": "review"},
    # A finish by a timeout (`completedBy: expiration`): never waits for a person, so it
    # also ends a review (a finish always ends with a verdict).
    "time_out": dict.fromkeys((*_EDITABLE, "review"), "completed"),
    # Past `expiresAt`: blocked until a renewal.
    "expire": {
        "created": "created_expired",
        "created_processing": "created_expired",
        "started": "expired",
        "processing": "expired",
    },
    # A fresh window; an expired inspection reopens where it was.
    "renew": {**_stay(*_EDITABLE), "created_expired": "created", "expired": "started"},
    # The consumer's link is (re)sent while the consumer has something to do.
    "send_link": _stay("created", "started"),
    # A person's part (`runtime.review`).
    "claim": _stay("review"),
    "record": _stay("review"),
    "decide": {"review": "completed"},
    # A reviewer reopens photo slots: the inspection is started again.
    "retake": dict.fromkeys((*_EDITABLE, "review"), "started"),
    # Follow-ups the runtime picks from the data.
    "analyse": {"created": "created_processing", "started": "processing"},
    "analysed": {"created_processing": "created", "processing": "started"},
    "exhaust": dict.fromkeys(_EDITABLE, "blocked"),
    # The machine answered everything a review waited for: the verdict decides, no person.
    "conclude": {"review": "completed"},
}

#: The stable code (and the words) of each refused event; `{status}` is the inspection's.
REFUSALS: dict[Event, tuple[str, str]] = {
    "start": ("invalid_status_transition", "cannot start an inspection that is {status}"),
    "edit": (
        "inspection_not_editable",
        "the inspection is {status}; it can change only while created or started",
    ),
    "result": (
        "inspection_not_editable",
        "the inspection is {status}; results are taken until it is completed",
    ),
    "finish": ("invalid_status_transition", "cannot finish an inspection that is {status}"),
    "time_out": ("invalid_status_transition", "cannot finish an inspection that is {status}"),
    "expire": ("invalid_status_transition", "cannot expire an inspection that is {status}"),
    "renew": ("invalid_status_transition", "cannot renew an inspection that is {status}"),
    "send_link": (
        "delivery_not_possible",
        "the inspection is {status}: its link is only sent while it is created or started",
    ),
    "claim": ("inspection_not_in_review", "the inspection is {status}, not in review"),
    "record": ("inspection_not_in_review", "the inspection is {status}, not in review"),
    "decide": ("inspection_not_in_review", "the inspection is {status}, not in review"),
    "retake": (
        "retake_not_possible",
        "the inspection is {status}: a retake is possible until it is completed",
    ),
    "analyse": ("invalid_event", "no analysis can start while the inspection is {status}"),
    "analysed": ("invalid_event", "no analysis is pending while the inspection is {status}"),
    "exhaust": ("invalid_event", "attempts cannot block an inspection that is {status}"),
    "refer": ("invalid_event", "an inspection that is {status} cannot go to review"),
    "conclude": ("invalid_event", "an inspection that is {status} waits for no result"),
}


def stage(state: InspectionState) -> Stage:
    """Where the inspection is in the table (`Stage`): its status, refined by whether it had
    started (`startedAt`) and, blocked, whether its newest `expire` is later than any `renew`."""
    status = state.status
    started = state.startedAt is not None
    if status == "processing":
        return "processing" if started else "created_processing"
    if status == "blocked":
        for event in reversed(state.events):
            if event.kind in ("expire", "renew"):
                if event.kind == "expire":
                    return "expired" if started else "created_expired"
                break
        return "blocked"
    return status


def allows(state: InspectionState, event: Event) -> bool:
    """Whether `event` may happen to the inspection now (the one answer to "can it ...?")."""
    return stage(state) in MOVES[event]


def require(state: InspectionState, event: Event) -> None:
    """Refuse `event` with its stable code (REFUSALS) unless the table allows it."""
    if not allows(state, event):
        code, words = REFUSALS[event]
        raise InspectionError(code, words.format(status=state.status))


def move(state: InspectionState, event: Event) -> None:
    """Apply `event`'s move to `state` (a copy the event owns): the only place a status is
    set. A move the table does not allow is refused (`require`)."""
    require(state, event)
    state.status = STAGE_STATUS[MOVES[event][stage(state)]]


def statuses_allowing(event: Event) -> tuple[Status, ...]:
    """The statuses in which some stage allows `event` (a query filter on the status column
    narrows by these, then asks `allows` of each inspection)."""
    return tuple(s for s in STATUSES if any(STAGE_STATUS[x] == s for x in MOVES[event]))
