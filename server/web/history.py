"""An inspection's history as people read it: every step, in order, saying who did what, on
which photo, when and why, in the reader's language and the company's time zone.

The steps are read from the inspection's events (the runtime's record of everything that
happened, the person's actions with their notes and reasons included), so the dashboard's
inspection page, the review page, the PDF report and the CSV export say the same words: they
all call `steps`. No code, field key, Python literal or ISO timestamp reaches the text.

Who did a step the events do not name (creation, the photos, the finish) is read from what the
events say: changes of the declared data come from the company's API; the photos and the start
come from the consumer when the consumer sent the inspection (`finish` by `consumer`), else
from the API.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from runtime.api_view import Inspection, every_image
from runtime.wording import machine_saw, review_reason_text
from server.web import i18n, moments
from server.web.validations import validation_label
from server.web.words import side_word, value_word


def _(message: str) -> str:
    """Marks a message for the catalog extraction (domain `web`); translated by `steps`."""
    return message


#: Who did a step, when the event does not name a person.
THE_API = _("The company (API)")
THE_CONSUMER = _("The consumer")
THE_SYSTEM = _("The system")
A_MACHINE = _("A machine")

#: What each kind of event did, when one sentence says it.
SAID = {
    "create": _("Created the inspection"),
    "update": _("Changed the declared data"),
    "update_product": _("Changed the declared data"),
    "add_products": _("Added products"),
    "start": _("Opened the link and started"),
    "expire": _("The link expired: the inspection was blocked"),
    "renew": _("Sent a new link"),
}
FINISHED = {
    "consumer": _("Sent the inspection"),
    "client": _("Finished the inspection"),
    "expiration": _("Finished the inspection when the link expired"),
}
#: The CSV export's header, in the reader's language.
COLUMNS = (_("When"), _("Who"), _("What"), _("Photo"), _("Why"))


@dataclass(frozen=True, slots=True)
class Step:
    """One line of the history."""

    #: The moment as ISO 8601 (for `<time datetime>` only; never shown as text).
    at: str
    #: The moment as the reader reads it, with the zone's name.
    when: str
    who: str
    what: str
    #: The photo the step was about ("" when none).
    photo: str
    #: The note, reason or message a person wrote ("" when none).
    why: str


def photo_names(document: Inspection, locale: str | None) -> dict[str, str]:
    """Image id -> the photo's label (its side in words of `locale` when unlabelled, as the PDF
    says it) from an Inspection object: current and replaced photos of every product, the
    identity and custom images."""
    return {
        image["_id"]: image.get("label") or side_word(str(image.get("side") or ""), locale)
        for image, _target in every_image(document)
    }


def steps(
    events: Iterable[Any],
    photos: Mapping[str, str],
    locale: str,
    zone: str | None,
) -> list[Step]:
    """The history of `events` (the state's `EventRecord`s, oldest first) for a reader of
    `locale` in the company's `zone`; `photos` names the images (`photo_names`)."""
    chosen = i18n.choose_locale(locale)
    say = i18n.translations(chosen).gettext
    events = list(events)
    by_consumer = any(
        e.kind == "finish" and (e.data or {}).get("completedBy") == "consumer" for e in events
    )
    sender = say(THE_CONSUMER if by_consumer else THE_API)
    found: list[Step] = []

    def add(event: Any, who: str, what: str, photo: str = "", why: str = "") -> None:
        when = moments.format_moment(event.at, chosen, zone)
        found.append(Step(event.at, when, who, what, photo, why))

    def name(image_id: Any) -> str:
        return photos.get(str(image_id), "") if image_id else ""

    def person(data: Mapping[str, Any]) -> str:
        return str((data.get("by") or {}).get("name") or say(THE_SYSTEM))

    for event in events:
        data = event.data or {}
        kind = event.kind
        if kind in SAID:
            who = {"start": sender, "expire": say(THE_SYSTEM)}.get(kind, say(THE_API))
            add(event, who, say(SAID[kind]))
        elif kind == "image":
            image = data.get("image") or {}
            again = int(image.get("attempt") or 1) > 1
            what = say(_("Sent the photo again")) if again else say(_("Sent a photo"))
            add(event, sender, what, name(image.get("_id") or image.get("id")))
        elif kind == "finish":
            finished_by = str(data.get("completedBy") or "client")
            who = {"consumer": say(THE_CONSUMER), "expiration": say(THE_SYSTEM)}.get(
                finished_by, say(THE_API)
            )
            add(event, who, say(FINISHED.get(finished_by, FINISHED["client"])))
        elif kind == "validation":
            label = quoted_validation(data.get("validation"), chosen)
            what = say(_("Read %(validation)s")) % {"validation": label}
            saw = machine_saw_text(data, chosen) or ""
            add(event, say(A_MACHINE), what, name(data.get("imageId")), saw)
        elif kind == "damage":
            add(event, say(THE_API), say(_("Recorded a damage")), why=damage_text(data, chosen))
        elif kind == "claim":
            released = bool(data.get("release"))
            what = say(_("Released the case")) if released else say(_("Took the case"))
            add(event, person(data), what)
        elif kind == "review":
            _review_steps(event, data, add, person(data), name, chosen, say)
        elif kind == "retake":
            images = ", ".join(name(i) for i in data.get("images") or [])
            what = say(_("Asked the consumer to take photos again"))
            add(event, person(data), what, images, str(data.get("message") or ""))
    return found


def _review_steps(
    event: Any, data: Mapping[str, Any], add: Any, who: str, name: Any, locale: str, say: Any
) -> None:
    """A person's results (one step each, with their damages) and decision."""
    for result in data.get("results") or []:
        label = quoted_validation(result.get("validation"), locale)
        if result.get("valid"):
            what = say(_("Marked %(validation)s as valid")) % {"validation": label}
        else:
            what = say(_("Marked %(validation)s as not valid")) % {"validation": label}
        add(event, who, what, name(result.get("imageId")), str(result.get("note") or ""))
        for damage in result.get("damages") or []:
            add(event, who, say(_("Recorded a damage")), name(result.get("imageId")),
                damage_text({"damage": damage}, locale))  # fmt: skip
    verdict = data.get("veredict")
    if verdict == "approved":
        add(event, who, say(_("Approved the inspection")), why=str(data.get("reason") or ""))
    elif verdict == "disapproved":
        add(event, who, say(_("Disapproved the inspection")), why=str(data.get("reason") or ""))


def damage_text(data: Mapping[str, Any], locale: str) -> str:
    """`baúl · abolladura · leve`: what a person or service wrote, in its order, each coded value
    in words of `locale` (as the PDF says it); a part of its own (`rear bumper`) as written."""
    damage = data.get("damage") or {}
    if not isinstance(damage, Mapping):
        return ""
    parts = (damage.get(key) for key in ("part", "damage", "severity"))
    return " · ".join(
        value_word(part, locale) or str(part) for part in parts if part not in (None, "")
    )


def quoted_validation(name: Any, locale: str) -> str:
    """A validation by its name for people, quoted so a sentence reads around it:
    `Marcó “No es foto de una pantalla” como válida`."""
    return f"“{validation_label(str(name or ''), locale)}”"


def reason_text(reason: Mapping[str, Any], locale: str | None) -> str:
    """Why a case waits for a person (a `review.reasons` item), as a reader of `locale` reads
    it: the validation by its name for people (“Not a photo of a screen”), never its code."""
    chosen = i18n.choose_locale(locale)
    found = dict(reason)
    if isinstance(found.get("validation"), str):
        found["validation"] = quoted_validation(found["validation"], chosen)
    return review_reason_text(found, chosen)


def machine_saw_text(fields: Mapping[str, Any], locale: str | None) -> str | None:
    """What the machine saw for a result (a `validation` event's data, or a `low_confidence`
    reason), as a reader of `locale` reads it: the validation by its name for people, a coded
    value read in words ("gris", as the PDF says it); None for a result with no confidence
    (`runtime.wording.machine_saw`)."""
    chosen = i18n.choose_locale(locale)
    found = dict(fields)
    if isinstance(found.get("validation"), str):
        found["validation"] = quoted_validation(found["validation"], chosen)
    found["result"] = value_word(found.get("result"), chosen) or found.get("result")
    return machine_saw(found, chosen)


def csv_lines(found: list[Step], locale: str) -> Iterator[str]:
    """The history as CSV (header in the reader's language), the page's words in each cell."""
    say = i18n.translations(i18n.choose_locale(locale)).gettext
    header = [say(column) for column in COLUMNS]
    rows = ((step.when, step.who, step.what, step.photo, step.why) for step in found)
    return csv_rows([header, *rows])


def csv_rows(rows: Iterable[Iterable[Any]]) -> Iterator[str]:
    """Rows as CSV lines, one at a time (a long export is streamed), every text cell made safe
    for a spreadsheet and None as an empty cell."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for values in rows:
        buffer.seek(0)
        buffer.truncate()
        writer.writerow(
            ["" if v is None else spreadsheet_safe(v) if isinstance(v, str) else v for v in values]
        )
        yield buffer.getvalue()


def spreadsheet_safe(value: str) -> str:
    """A cell a spreadsheet will not run as a formula (OWASP CSV injection)."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value
