"""Image validators that run inside the runtime, and the registry that finds them by name.

A validator is one small class with a `name` and `validate(image, context)`; registering it is
`@register`. The runtime runs the registered ones when an image is uploaded (`complete`,
`date`, `distance`); every other validation (plate, color, damage, face_comparison...) is
reported from outside through `record_validation`.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from PIL import Image, ImageStat

from inspectlang.timestamps import utc_timestamp
from inspectlang.validations import entry_of
from runtime.imagemeta import ImageMeta, parse_timestamp, read_meta

EARTH_RADIUS_METERS = 6_371_000.0
#: Clock skew tolerated for photos "from the future".
FUTURE_SKEW = dt.timedelta(minutes=10)


#: `age`: the youngest age accepted when the template writes no `minimum age` (docs/language.md).
DEFAULT_MIN_AGE = 18


def old_enough(age: Any, options: dict[str, float]) -> bool | None:
    """An `age` result against the template's `minimum age` (`options["minAge"]`): whether the
    age is at least it; None when the result is no number (nothing to compare). The same rule
    for an age this runtime reads (`runtime.vision.identity`) and one an outside service
    reports (`record_validation`)."""
    if isinstance(age, bool):
        return None
    try:
        years = float(age)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(years):
        return None
    return years >= options.get("minAge", DEFAULT_MIN_AGE)


@dataclass(frozen=True)
class ImageUpload:
    """An uploaded photo: its bytes and what the client said about it."""

    data: bytes
    content_type: str | None = None
    side: str | None = None
    identifier: str | None = None
    #: Capture time the client reports (ISO 8601), used when the photo has no EXIF date.
    date: str | None = None
    latitude: float | None = None
    longitude: float | None = None
    target: str | None = None
    #: The image's address; `{id}` in it is replaced by the new image's id.
    src: str | None = None
    #: What decoding the bytes found, when the caller already decoded them (the server does,
    #: to refuse what is not a photo): the engine then does not decode them again.
    meta: ImageMeta | None = None
    #: Evidence the person taking the photo declined to give (`location`: no position from
    #: the browser): a validation that needs it is not run on a photo that lacks it.
    declined: frozenset[str] = frozenset()
    #: Earlier photos of the company's other inspections near this one, as the caller's
    #: history found them (`runtime.evidence.DuplicateMatch`; the server's look-up is
    #: `server/images/duplicates.py`): `duplicate` fails on them.
    duplicates: tuple[Any, ...] = ()


@dataclass(frozen=True)
class ValidationContext:
    """What a validator may know besides the photo."""

    now: dt.datetime
    #: Options of this validation (`minWidth`, `maxAgeHours`, `maxDistanceMeters`...).
    options: dict[str, float] = field(default_factory=dict)
    #: Position of the inspection's first located photo, if any.
    first_location: tuple[float, float] | None = None
    meta: ImageMeta | None = None
    #: Positions of every located photo the inspection already has (the first one included).
    locations: tuple[tuple[float, float], ...] = ()
    #: The inspection's id, and the perceptual hashes (whole, central crop) of its photos in
    #: other slots: `duplicate` compares with them.
    inspection_id: str | None = None
    photo_hashes: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class ValidationOutcome:
    """A validator's verdict on one photo: `confidence` 0-100, `valid`, and `result`, the value
    behind it (the plate read, the color found, the face distance, the photo's age in hours...).
    `entities` are fields read from an identity document (`{entity, valid, result}`, the spec's
    Identity image shape). `seen` is what the machine saw beyond `result`, for a reviewer
    (`runtime.wording.SEEN_KINDS`: the two colors a body reads between, a face distance and
    its limit); a person deciding a review-band case reads it in their language."""

    confidence: float
    valid: bool
    result: Any = None
    entities: tuple[dict[str, Any], ...] = ()
    seen: dict[str, Any] | None = None


class Validator(Protocol):
    name: ClassVar[str]

    def validate(self, image: ImageUpload, context: ValidationContext) -> ValidationOutcome: ...


#: Validators run by the runtime, by validation name.
REGISTRY: dict[str, Validator] = {}


def register(cls: type[Any]) -> type[Any]:
    """Class decorator: add a validator to the registry under its `name`, a validation of
    `inspectlang.validations` (any other name is refused: no template could ask for it)."""
    REGISTRY[entry_of(cls.name).name] = cls()
    return cls


def _meta(image: ImageUpload, context: ValidationContext) -> ImageMeta:
    return context.meta if context.meta is not None else read_meta(image.data)


def _outcome(valid: bool, result: Any) -> ValidationOutcome:
    return ValidationOutcome(confidence=100.0 if valid else 0.0, valid=valid, result=result)


#: A photo whose color channels all vary less than this (standard deviation of 0-255 levels,
#: on a 64 px thumbnail) is blank: a covered lens, a black or white frame, a plain fill. Real
#: photos, even dark ones, vary far more; a solid-color file varies by 0-1 (JPEG noise).
BLANK_MAX_DEVIATION = 2.0


def near_uniform(picture: Image.Image) -> bool:
    """The blank-photo rule, on a decoded picture (any size, RGB or grey): `complete` refuses
    what it calls blank, and the upload's quality check (`runtime.vision.quality`) flags it."""
    thumbnail = picture.copy()
    thumbnail.thumbnail((64, 64))
    return max(ImageStat.Stat(thumbnail).stddev) < BLANK_MAX_DEVIATION


def is_blank(meta: ImageMeta) -> bool:
    """Whether the decoded photo is near-uniform, on the upload's shared reduced copy
    (`runtime.imagemeta`: nothing is decoded again)."""
    if meta.picture is None:
        raise ValueError("the photo did not decode")
    return near_uniform(meta.picture)


@register
class CompleteValidator:
    """The upload decodes as a picture of at least the template's minimum size, and shows
    something (it is not blank)."""

    name: ClassVar[str] = "complete"

    def validate(self, image: ImageUpload, context: ValidationContext) -> ValidationOutcome:
        meta = _meta(image, context)
        if not meta.decoded or meta.width is None or meta.height is None:
            return _outcome(False, "not an image")
        try:
            blank = is_blank(meta)
        except Exception:  # untrusted bytes the size check let through but that do not decode
            return _outcome(False, "not an image")
        if blank:
            return _outcome(False, "blank photo")
        min_width = context.options.get("minWidth", 0)
        min_height = context.options.get("minHeight", 0)
        size = f"{meta.width}x{meta.height}"
        return _outcome(meta.width >= min_width and meta.height >= min_height, size)


def taken_at(image: ImageUpload, meta: ImageMeta) -> dt.datetime | None:
    """When the photo was taken: its EXIF time first, else the time the client declared.

    An EXIF time without its own offset (OffsetTimeOriginal) is the camera's local clock: it is
    read in the UTC offset of the declared `date` when that has one (the consumer's page sends
    the phone's local time with its offset), else as UTC."""
    declared = parse_timestamp(image.date)
    moment = meta.taken_at
    if moment is None:
        return declared
    if not meta.taken_at_has_offset and isinstance(image.date, str):
        offset = _declared_offset(image.date)
        if offset is not None:
            moment = moment.replace(tzinfo=dt.timezone(offset)).astimezone(dt.UTC)
    return moment


def _declared_offset(text: str) -> dt.timedelta | None:
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.utcoffset()


def taken_at_source(image: ImageUpload, meta: ImageMeta) -> str:
    """Where the capture time judged comes from: `exif` (the photo's own data), `browser` (the
    `date` the uploading client declared), `upload` (neither: only the upload time is known)."""
    if meta.taken_at is not None:
        return "exif"
    return "browser" if parse_timestamp(image.date) is not None else "upload"


@register
class DateValidator:
    """The photo was taken (EXIF DateTimeOriginal, else the upload's `date`) within the window;
    the result is the photo's age in hours."""

    name: ClassVar[str] = "date"

    def validate(self, image: ImageUpload, context: ValidationContext) -> ValidationOutcome:
        moment = taken_at(image, _meta(image, context))
        if moment is None:
            return _outcome(False, None)
        hours = context.options.get("maxAgeHours")
        earliest = context.now - dt.timedelta(hours=hours) if hours is not None else None
        on_time = moment <= context.now + FUTURE_SKEW and (earliest is None or moment >= earliest)
        # The value behind the verdict: the photo's age in hours when it was checked (negative
        # for a photo dated in the future).
        age_hours = (context.now - moment).total_seconds() / 3600
        return _outcome(on_time, round(age_hours, 2))


def location(image: ImageUpload, meta: ImageMeta) -> tuple[float, float] | None:
    """Where the photo was taken: its EXIF GPS position first, else the client's."""
    if meta.latitude is not None and meta.longitude is not None:
        return meta.latitude, meta.longitude
    if image.latitude is not None and image.longitude is not None:
        return float(image.latitude), float(image.longitude)
    return None


def location_source(image: ImageUpload, meta: ImageMeta) -> str | None:
    """`exif`, `browser` (the client's `coordinates`) or None (no position)."""
    if meta.latitude is not None and meta.longitude is not None:
        return "exif"
    if image.latitude is not None and image.longitude is not None:
        return "browser"
    return None


def capture_fields(image: ImageUpload, meta: ImageMeta) -> dict[str, Any]:
    """What the image record keeps of the capture: the time and place `date` and `distance`
    judge, where each came from, the device, and the perceptual hash `duplicate` compares."""
    moment = taken_at(image, meta)
    here = location(image, meta)
    device = {
        name: value
        for name, value in (("make", meta.make), ("model", meta.model), ("software", meta.software))
        if value
    }
    return {
        "takenAt": utc_timestamp(moment, milliseconds=True) if moment is not None else None,
        "takenAtSource": taken_at_source(image, meta),
        "latitude": here[0] if here is not None else None,
        "longitude": here[1] if here is not None else None,
        "locationSource": location_source(image, meta),
        "device": device or None,
        "phash": f"{meta.phash:016x}" if meta.phash is not None else None,
        "phashCenter": f"{meta.phash_center:016x}" if meta.phash_center is not None else None,
    }


def haversine_meters(a: tuple[float, float], b: tuple[float, float]) -> float:
    lat1, lon1, lat2, lon2 = (math.radians(v) for v in (*a, *b))
    h = (
        math.sin((lat2 - lat1) / 2) ** 2
        + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    )
    return 2 * EARTH_RADIUS_METERS * math.asin(min(1.0, math.sqrt(h)))


#: The evidence a consumer may decline to give, and the validations that need it.
NEEDS_EVIDENCE: dict[str, str] = {"distance": "location"}


def declined_evidence(name: str, image: ImageUpload, meta: ImageMeta) -> str | None:
    """The evidence validation `name` needs that the consumer declined to give and the photo
    does not carry itself (a photo's own EXIF position still counts), else None. Such a
    validation is not run: it is neither passed nor failed, and a person decides it when it is
    required (`runtime.routing`, reason `location_declined`)."""
    evidence = NEEDS_EVIDENCE.get(name)
    if evidence is None or evidence not in image.declined:
        return None
    if evidence == "location" and location(image, meta) is not None:
        return None
    return evidence


@register
class DistanceValidator:
    """The photos were taken within the template's radius of each other.

    The new photo is measured against every located photo the inspection already has (so every
    pair is checked when its later photo arrives); the result is the largest distance, in metres.
    """

    name: ClassVar[str] = "distance"

    def validate(self, image: ImageUpload, context: ValidationContext) -> ValidationOutcome:
        here = location(image, _meta(image, context))
        if here is None:
            return _outcome(False, None)
        others = set(context.locations)
        if context.first_location is not None:
            others.add(context.first_location)
        meters = max((haversine_meters(other, here) for other in others), default=0.0)
        limit = context.options.get("maxDistanceMeters")
        return _outcome(limit is None or meters <= limit, round(meters, 1))
