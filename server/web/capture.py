"""What a photo was judged on, in words, for the pages and the PDF report (issue 23 §1): the
capture time and where it came from, the place and where it came from, the device, and the
photo's upload attempt in its slot. One wording, used by the dashboard's partial
(`dashboard/capture.html`) and the report's image facts; the values are the API's own
(`runtime.api_view.capture_view`, `docs/api.md` "What a photo was judged on")."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from babel.dates import format_datetime

from runtime.api_view import Capture, Image, capture_view
from runtime.state import ImageRecord, InspectionState
from server.web.templating import gettext


def _sources(locale: str) -> dict[str, str]:
    return {
        "exif": gettext(locale, "from the photo (EXIF)"),
        "browser": gettext(locale, "declared by the uploading device"),
        "upload": gettext(locale, "upload time: the photo states none"),
    }


def _moment(text: Any, locale: str) -> str:
    """An ISO 8601 moment as people read it in `locale`, in UTC (`Nov 20, 2026, 9:50:00 AM
    UTC`), as the dashboard's other times are shown."""
    if not isinstance(text, str) or not text:
        return "-"
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return f"{format_datetime(moment, 'medium', tzinfo=UTC, locale=locale)} UTC"


#: Writes an ISO 8601 moment for people (the report passes its own: language and time zone).
MomentWriter = Callable[[Any], str]


def describe(
    capture: Capture,
    attempt: int | None,
    locale: str,
    moment: MomentWriter | None = None,
) -> list[tuple[str, str]]:
    """Label and value pairs: Taken, Place, Device, Upload attempt; the capture time written
    by `moment` (default: in `locale`, in UTC). Read with `get`: a stored document may be one
    written before a key existed."""
    sources = _sources(locale)
    raw = capture.get("takenAt")
    taken = moment(raw) if moment is not None else _moment(raw, locale)
    facts = [
        (
            gettext(locale, "Taken"),
            f"{taken} · {sources.get(capture.get('takenAtSource') or 'upload', '-')}",
        )
    ]
    latitude, longitude = capture.get("latitude"), capture.get("longitude")
    if latitude is not None and longitude is not None:
        place = f"{latitude:.5f}, {longitude:.5f}"
        place += f" · {sources.get(capture.get('locationSource') or 'browser', '-')}"
    else:
        place = gettext(locale, "not known")
    facts.append((gettext(locale, "Place"), place))
    device = capture.get("device") or {}
    camera = " ".join(part for part in (device.get("make"), device.get("model")) if part)
    software = device.get("software")
    if camera or software:
        said = camera or gettext(locale, "camera not stated")
        if software:
            said += f" · {gettext(locale, 'software')} {software}"
    else:
        said = gettext(locale, "not stated in the photo")
    facts.append((gettext(locale, "Device"), said))
    if attempt is not None:
        facts.append((gettext(locale, "Upload attempt"), str(attempt)))
    return facts


def of_record(
    record: Image, locale: str, moment: MomentWriter | None = None
) -> list[tuple[str, str]]:
    """The pairs for an image record of an Inspection object (`capture`, `attempt`): none for
    a record stored before photos had a `capture`."""
    capture = record.get("capture")
    if capture is None:
        return []
    attempt = record.get("attempt")
    return describe(capture, attempt if isinstance(attempt, int) else None, locale, moment)


def by_image(state: InspectionState, locale: str) -> dict[str, list[tuple[str, str]]]:
    """The pairs of every image of an inspection, by image id."""
    images: list[ImageRecord] = [
        image for product in state.products for image in [*product.images, *product.extraImages]
    ]
    return {
        image.id: describe(
            capture_view(image), image.attempt if image.templateImageIdentifier else None, locale
        )
        for image in images
    }
