"""The state of one inspection: a pydantic model the server stores as JSON.

The state is a pure function of the program and its event log (`events`): `engine.replay`
rebuilds it from the log alone. Store it with `.model_dump(mode="json", by_alias=True)` and
load it with `InspectionState.model_validate(...)`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Status = Literal["created", "started", "processing", "review", "completed", "blocked"]
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
    status: Status = "created"
    #: The status to go back to when processing ends.
    resumeStatus: Status = "created"
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
