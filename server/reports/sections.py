"""What a report says, as plain rows and tables, independent of the PDF library.

`build_sections(report)` turns `ReportData` into an ordered list of `Section`s (a title plus
key/value rows, tables and paragraphs). The borb renderer only lays these out, so the content
(masking, labels in the inspection's locale, which product fields a car shows) is decided and
tested here without borb.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, cast

from babel import numbers as babel_numbers

from inspectlang.product_fields import fields_of
from runtime.api_view import ImageValidation, Inspection
from server.reports.data import ReportData, ReportImage
from server.web import capture, i18n, moments
from server.web.validations import validation_label
from server.web.words import TYPE_WORDS, side_word, value_word


def _(message: str) -> str:
    """Marks a message for the catalog extraction (domain `reports`); `Words` translates."""
    return message


#: Decimals kept for numbers (a confidence of 99.97768539238172 prints as 99.98).
DECIMALS = 2

#: Consumer fields shown, with labels; identification-like fields are masked.
CONSUMER_FIELD_LABELS: list[tuple[str, str]] = [
    ("firstName", _("First name")),
    ("lastName", _("Last name")),
    ("identification", _("Identification")),
    ("email", _("Email")),
    ("phone", _("Phone")),
    ("birthdate", _("Birthdate")),
    ("address", _("Address")),
    ("city", _("City")),
    ("state", _("State or province")),
    ("country", _("Country")),
]

#: How the explanation's missing items (`runtime.missing`) are named, by kind.
MISSING_KINDS: dict[str, str] = {"photo": _("Missing photo"), "input": _("Missing input")}


#: Fields whose value is masked but for the last four characters.
MASKED_FIELDS: frozenset[str] = frozenset({"identification", "phone", "imei"})


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    #: Relative column widths (None: equal).
    weights: list[int] | None = None


@dataclass
class ImageBlock:
    """One image: its thumbnail source bytes, a caption, and its validation/damage tables."""

    caption: str
    content: bytes | None
    facts: list[tuple[str, str]]
    validations: Table
    damages: Table | None


@dataclass
class Section:
    title: str
    rows: list[tuple[str, str]] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    paragraphs: list[str] = field(default_factory=list)
    images: list[ImageBlock] = field(default_factory=list)


@dataclass
class Headline:
    """The top of page one: who, what, and the verdict in large type."""

    company: str
    template: str
    inspection_id: str
    verdict: str
    reasons: list[str]
    #: The same, worded in the inspection's language for the page.
    title: str = ""
    subtitle: str = ""
    verdict_text: str = ""
    #: The footer of each page, with `%(page)s` and `%(total)s` left to fill.
    footer: str = ""
    #: "None." and "(image not available)" in the report's language.
    none_text: str = "None."
    no_image_text: str = "(image not available)"
    #: "Reviewed by … on …: reason", one per person's decision (docs/review.md).
    reviewed: list[str] = field(default_factory=list)


def reviewed_lines(inspection: Inspection, w: Words | None = None) -> list[str]:
    """A person's decisions, as the report states them under the verdict, in the report's
    language (moments in its time zone)."""
    w = w or Words("en_US")
    review = inspection.get("review") or {}
    return [
        w(_("Reviewed by %(who)s on %(when)s: %(reason)s (%(verdict)s)"))
        % {
            "who": show((item.get("by") or {}).get("name")),
            "when": w.moment(item.get("at")),
            "reason": show(item.get("reason")),
            "verdict": w.verdict(item.get("veredict")),
        }
        for item in review.get("decisions") or []
        if isinstance(item, dict)
    ]


def mask(value: str, keep: int = 4) -> str:
    """`12345678` -> `****5678`; short values are masked entirely."""
    if len(value) <= keep:
        return "*" * len(value)
    return "*" * max(4, len(value) - keep) + value[-keep:]


def show(value: Any) -> str:
    """A value as report text: booleans as Yes/No, missing as a dash, lists joined."""
    if value is None or value == "":
        return "-"
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return ", ".join(show(item) for item in value) or "-"
    if isinstance(value, dict):
        return ", ".join(f"{key}: {show(item)}" for key, item in value.items()) or "-"
    return str(value)


class Words:
    """The report's wording in the inspection's language: labels through the catalogs (domain
    `reports`), numbers rounded and grouped by Babel, moments in the inspection's time zone."""

    def __init__(self, locale: str, zone: str = "UTC") -> None:
        self.locale = i18n.choose_locale(locale)
        self.translations = i18n.translations(self.locale)
        #: The company's time zone (`Settings.time_zone`), the one rule of every page.
        self.zone = zone

    def __call__(self, message: str) -> str:
        return str(self.translations.gettext(message))

    def value(self, value: Any, digits: int = DECIMALS) -> str:
        """`show`, with yes/no in the language and numbers rounded to `digits` decimals."""
        if isinstance(value, bool):
            return self(_("Yes")) if value else self(_("No"))
        if isinstance(value, float):
            pattern = "#,##0." + "#" * digits
            return babel_numbers.format_decimal(value, format=pattern, locale=self.locale)
        if isinstance(value, list):
            return ", ".join(self.value(item) for item in value) or "-"
        if isinstance(value, dict):
            return ", ".join(f"{k}: {self.value(item)}" for k, item in value.items()) or "-"
        return show(value)

    def word(self, value: Any) -> str:
        """A coded value (`grey`, `minor`, `trunk`) in words; any other value as `value`."""
        found = value_word(value, self.locale)
        return self.value(value) if found is None else found

    def moment(self, value: Any) -> str:
        """An ISO 8601 moment as `25 nov 2026, 11:03:00 (hora de Argentina)`: the language, the
        company's time zone and its name, as every page shows it (`server.web.moments`)."""
        if not isinstance(value, str) or not value:
            return show(value)
        return moments.format_moment(value, self.locale, self.zone)

    def status(self, code: Any) -> str:
        return self(STATUS_WORDS.get(str(code), str(code)))

    def verdict(self, code: Any) -> str:
        return self(VERDICT_WORDS.get(str(code), str(code).replace("_", " ")))


#: Status and verdict codes in words (translated by `Words`).
STATUS_WORDS = {
    "created": _("Created"),
    "started": _("Started"),
    "processing": _("Processing"),
    "completed": _("Completed"),
    "blocked": _("Blocked"),
    "review": _("Needs review"),
}
VERDICT_WORDS = {
    "approved": _("Approved"),
    "disapproved": _("Disapproved"),
    "not_defined": _("No verdict"),
}


def verdict_reasons(inspection: Inspection, explanation: dict[str, Any]) -> list[str]:
    """The reasons behind the verdict, from the runtime's explanation (or the inspection), each
    once: a person's reason is printed in their decision's line (`reviewed_lines`), not again
    here."""
    raw = explanation.get("reasons")
    if raw is None:
        raw = inspection.get("reasons", [])
    reasons: list[str] = []
    for reason in raw if isinstance(raw, list) else [raw]:
        if isinstance(reason, dict):
            text = reason.get("reason") or reason.get("message") or reason.get("text")
            reasons.append(show(text if text is not None else reason))
        else:
            reasons.append(show(reason))
    decided = {
        show(item.get("reason")).strip()
        for item in (inspection.get("review") or {}).get("decisions") or []
        if isinstance(item, dict)
    }
    return list(dict.fromkeys(r for r in reasons if r.strip() not in decided))


def report_locale(report: ReportData) -> str:
    locale = report.inspection.get("locale")
    if isinstance(locale, str) and locale:
        return locale
    locales = report.template.get("logic", {}).get("locales") or ["en_US"]
    return str(locales[0])


def words(report: ReportData) -> Words:
    return Words(report_locale(report), report.time_zone)


def input_label(report: ReportData, identifier: str, fallback: str, locale: str) -> str:
    """The input's label in the inspection's locale, else its default label."""
    logic_input = report.template.get("logic", {}).get("inputs", {}).get(identifier, {})
    translation = logic_input.get("translations", {}).get(locale, {})
    label = translation.get("label") if isinstance(translation, dict) else None
    return str(label or fallback or identifier)


def image_label(report: ReportData, identifier: str | None, side: str, locale: str) -> str:
    """The photo's label in the report's language, else its side in words."""
    images = report.template.get("logic", {}).get("images", {})
    labels = images.get(identifier or "", {}).get("labels", {}) if identifier else {}
    found = labels.get(locale) or labels.get("")
    if found:
        return str(found)
    return side_word(side, locale) or "-"


def headline(report: ReportData) -> Headline:
    inspection = report.inspection
    template = inspection.get("template") or {}
    verdict = inspection.get("veredict") or report.explanation.get("veredict") or "not_defined"
    w = words(report)
    name = show(template.get("name") or report.template.get("name"))
    inspection_id = show(inspection.get("_id"))
    return Headline(
        company=report.company_name,
        template=name,
        inspection_id=inspection_id,
        verdict=str(verdict),
        reasons=verdict_reasons(inspection, report.explanation),
        title=w(_("Inspection report - %(template)s")) % {"template": name},
        subtitle=w(_("Inspection %(id)s")) % {"id": inspection_id},
        verdict_text=w.verdict(verdict).upper(),
        footer=w(_("Inspection %(id)s - page %(page)s of %(total)s")).replace(
            "%(id)s", inspection_id
        ),
        none_text=w(_("None.")),
        no_image_text=w(_("(image not available)")),
        reviewed=reviewed_lines(inspection, w),
    )


def producer_text(report: ReportData) -> str:
    """Who asked for the inspection: the company, and the member by name when one is known."""
    if report.producer_name:
        return f"{report.company_name} - {report.producer_name}"
    return report.company_name


#: Who completed the inspection (`completedBy`), in words.
COMPLETED_BY_WORDS = {
    "consumer": _("The consumer"),
    "client": _("The company (API)"),
    "reviewer": _("A person, on review"),
    "expiration": _("The link's expiry"),
}


def completed_by_text(inspection: Inspection, w: Words) -> str:
    """`completedBy` in words; for a review, with the reviewer's name."""
    code = inspection.get("completedBy")
    if code is None:
        return "-"
    text = w(COMPLETED_BY_WORDS.get(str(code), str(code)))
    decisions = (inspection.get("review") or {}).get("decisions") or []
    if code == "reviewer" and decisions and isinstance(decisions[-1], dict):
        text += f" ({show((decisions[-1].get('by') or {}).get('name'))})"
    return text


def history_section(report: ReportData) -> Section | None:
    """Every step, who did what on which photo, when and why: the page's and the CSV's words."""
    if not report.history:
        return None
    w = words(report)
    header = [w(_("When")), w(_("Who")), w(_("What")), w(_("Photo")), w(_("Why"))]
    rows = [[s.when, s.who, s.what, s.photo or "-", s.why or "-"] for s in report.history]
    return Section(w(_("History")), tables=[Table(header, rows, weights=[3, 3, 4, 2, 4])])


def summary_section(report: ReportData) -> Section:
    inspection = report.inspection
    w = words(report)
    rows = [
        (w(_("Inspection")), show(inspection.get("_id"))),
        (
            w(_("Type")),
            w(TYPE_WORDS.get(str(inspection.get("type")), show(inspection.get("type")))),
        ),
        (w(_("Status")), w.status(inspection.get("status"))),
        (w(_("Completed by")), completed_by_text(inspection, w)),
        (w(_("Template")), show((inspection.get("template") or {}).get("name"))),
        (w(_("Producer")), producer_text(report)),
    ]
    moments: tuple[tuple[Literal["createdAt", "startedAt", "completedAt", "expiresAt"], str], ...]
    moments = (
        ("createdAt", _("Created")),
        ("startedAt", _("Started")),
        ("completedAt", _("Completed")),
        ("expiresAt", _("Expires")),
    )
    for key, label in moments:
        if inspection.get(key):
            rows.append((w(label), w.moment(inspection.get(key))))
    rows.append((w(_("Report generated")), w.moment(report.generated_at)))
    if inspection.get("testing"):
        rows.append((w(_("Mode")), w(_("TEST (created with a test key)"))))
    return Section(w(_("Inspection")), rows=rows)


def product_sections(report: ReportData) -> list[Section]:
    sections: list[Section] = []
    w = words(report)
    products = report.inspection.get("products") or []
    for index, product in enumerate(products, start=1):
        kind = str(product.get("type") or report.inspection.get("type") or "custom")
        # The product data, under its type's name.
        data = cast(dict[str, Any], product).get(kind)
        data = data if isinstance(data, dict) else {}
        rows = [(w(_("Type")), w(TYPE_WORDS.get(kind, kind)))]
        for product_field in fields_of(kind):  # the language's table: order and labels
            key = product_field.name
            value = data.get(key) if key != "milage" else data.get("milage", data.get("mileage"))
            if value in (None, ""):
                continue
            shown = w.word(value) if not isinstance(value, int) else str(value)
            label = product_field.label(w.locale)
            rows.append((label, mask(shown) if key in MASKED_FIELDS else shown))
        for product_input in product.get("inputs") or []:
            label = input_label(
                report,
                str(product_input.get("identifier", "")),
                show(product_input.get("label")),
                report_locale(report),
            )
            rows.append((label, w.value(product_input.get("value"))))
        title = (
            w(_("Declared product"))
            if len(products) == 1
            else f"{w(_('Declared product'))} {index}"
        )
        sections.append(Section(title, rows=rows))
    return sections


def consumer_section(report: ReportData) -> Section | None:
    consumer = report.inspection.get("identity") or {}
    if not consumer:
        return None
    w = words(report)
    rows: list[tuple[str, str]] = []
    for key, label in CONSUMER_FIELD_LABELS:
        value = consumer.get(key)
        if value in (None, ""):
            continue
        rows.append((w(label), mask(show(value)) if key in MASKED_FIELDS else w.value(value)))
    return Section(w(_("Consumer")), rows=rows) if rows else None


def inputs_section(report: ReportData, locale: str) -> Section | None:
    template_ref = report.inspection.get("template") or {}
    values = template_ref.get("inputs") or []
    w = words(report)
    rows = [
        (
            input_label(report, str(item.get("identifier", "")), show(item.get("label")), locale),
            w.value(item.get("value")),
        )
        for item in values
        if isinstance(item, dict)
    ]
    return Section(w(_("Inputs")), rows=rows) if rows else None


def metadata_section(report: ReportData) -> Section | None:
    """The client's key-value metadata (policy or claim numbers and the like)."""
    metadata = report.inspection.get("metadata") or {}
    rows = [(show(key), show(value)) for key, value in metadata.items()]
    return Section(words(report)(_("Metadata")), rows=rows) if rows else None


def variables_section(report: ReportData) -> Section | None:
    variables = report.inspection.get("variables") or []
    w = words(report)
    rows = [(show(item.get("name")), w.value(item.get("value"))) for item in variables]
    return Section(w(_("Variables")), rows=rows) if rows else None


def informational_checks(template: dict[str, Any]) -> frozenset[str]:
    """The ids of the manifest's checks marked `for information` (`logic.checks[]`)."""
    logic = template.get("logic") or {}
    return frozenset(
        str(check.get("_id"))
        for check in logic.get("checks") or []
        if isinstance(check, dict) and check.get("informational")
    )


def global_validations_section(report: ReportData) -> Section | None:
    checks = report.inspection.get("globalValidations") or []
    if not checks:
        return None
    w = words(report)
    informational = informational_checks(report.template)
    table = Table(
        [w(_("Validation")), w(_("Description")), w(_("Valid"))],
        [
            [
                # a check kept `for information` decides nothing: the reader must tell it apart
                w(_("%(check)s (for information)")) % {"check": show(item.get("name"))}
                if item.get("_id") in informational
                else show(item.get("name")),
                show(item.get("description")),
                w.value(item.get("valid")),
            ]
            for item in checks
        ],
        weights=[3, 6, 2],
    )
    return Section(w(_("Global validations")), tables=[table])


def image_block(report: ReportData, image: ReportImage, locale: str) -> ImageBlock:
    record = image.record
    w = words(report)
    side = show(record.get("side"))
    label = str(record.get("label") or "") or image_label(
        report, record.get("templateImageIdentifier"), side, locale
    )
    facts = [
        (w(_("Approved")), w.value(record.get("approved"))),
        (w(_("Uploaded")), w.moment(record.get("uploadedAt"))),
    ]
    if record.get("replaced"):
        # The earlier photo of a retake: when it was replaced, who asked and why.
        label = w(_("%(photo)s (replaced)")) % {"photo": label}
        facts += [
            (w(_("Replaced")), w.moment(record.get("replacedAt"))),
            (w(_("Retake asked by")), image.replaced_by or "-"),
            (w(_("Why")), image.replaced_because or "-"),
        ]
    # What the photo was judged on (`server.web.capture`: time, place, device, attempt), its
    # capture time written as the report writes moments (language, time zone).
    facts += capture.of_record(record, w.locale, w.moment)
    # Fields read from an identity document (`entities`), each with whether it matched.
    facts += [
        (
            w(_("Read: %(field)s")) % {"field": show(entity.get("entity"))},
            w.value(entity.get("result"))
            + " ("
            + (w(_("matches")) if entity.get("valid") else w(_("no match")))
            + ")",
        )
        for entity in record.get("entities") or []
        if isinstance(entity, dict)
    ]
    validations = Table(
        [w(_("Validation")), w(_("Confidence")), w(_("Value")), w(_("Valid"))],
        [
            [
                validation_label(str(item.get("validation")), w.locale),
                w.value(item.get("confidence")),
                result_text(item, report, w),
                w(_("pending")) if item.get("valid") is None else w.value(item.get("valid")),
            ]
            for item in record.get("validations") or []
        ],
        weights=[4, 2, 4, 2],
    )
    damages_raw = record.get("damages") or []
    damages = (
        Table(
            [w(_("Part")), w(_("Damage")), w(_("Severity")), w(_("Percentage"))],
            [
                [
                    w.word(item.get("part")),
                    w.word(item.get("damage")),
                    w.word(item.get("severity")),
                    w.value(item.get("percentage")),
                ]
                for item in damages_raw
            ],
        )
        if damages_raw
        else None
    )
    return ImageBlock(label, image.content, facts, validations, damages)


#: The runtime's rule errors (`runtime.errors.RULE_ERROR_CODES`) in words, never by code.
RULE_ERROR_WORDS: dict[str, str] = {
    "division_by_zero": _("a division by zero (the result is missing)"),
    "number_too_large": _("a number too large (the result is missing)"),
    "text_too_long": _("a text too long (the result is missing)"),
    "list_too_long": _("a list too long (the result is missing)"),
    "missing_value": _("a missing value (the variable keeps its value)"),
    "step_limit": _("too many steps (the rest was skipped)"),
    "invalid_pattern": _("a pattern that cannot be read (the result is missing)"),
}

#: Validations whose result names another inspection (the one that holds the same photo).
NAMES_AN_INSPECTION = frozenset({"duplicate"})


def result_text(item: ImageValidation, report: ReportData, w: Words) -> str:
    """What a validation read, in words: a coded value in the report's language, a duplicate's
    inspection named as such (this one, or the other's id on a line of its own, so it wraps
    inside its column), and a person's note after it."""
    result = item.get("result")
    if item.get("validation") in NAMES_AN_INSPECTION and isinstance(result, str) and result:
        if result == report.inspection.get("_id"):
            text = w(_("Already in this inspection"))
        else:
            text = w(_("Already in inspection %(id)s")) % {"id": result}
    else:
        text = w.word(result)
    note = item.get("note")
    if isinstance(note, str) and note.strip():
        said = w(_("Note: %(note)s")) % {"note": f"\u201c{note.strip()}\u201d"}
        text = said if text == "-" else f"{text} - {said}"
    return text


def condition_text(kind: str, label: str, w: Words | None = None) -> str:
    """A verdict condition in words. The label of `approve_when` is the reason given when it
    does not hold, so it is shown as such."""
    w = w or Words("en_US")
    if kind == "disapprove":
        return w(_("Disapproval: %(reason)s")) % {"reason": label}
    if kind == "approve_when":
        return w(_("Approval condition (if not met: %(reason)s)")) % {"reason": label}
    return f"{kind}: {label}"


def explanation_section(report: ReportData) -> Section | None:
    """How the verdict was reached (the runtime's explanation): what is missing, conditions and
    rule errors."""
    w = words(report)
    conditions = [
        item
        for item in report.explanation.get("verdict") or []
        if isinstance(item, dict) and item.get("label")
    ]
    tables: list[Table] = []
    missing = [item for item in report.explanation.get("missing") or [] if isinstance(item, dict)]
    if missing:
        tables.append(
            Table(
                [w(_("Missing (disapproves the inspection)")), w(_("Label"))],
                [
                    [
                        w(MISSING_KINDS.get(str(item.get("kind"))) or _("Missing item")),
                        show(item.get("label")),
                    ]
                    for item in missing
                ],
                weights=[5, 7],
            )
        )
    if conditions:
        tables.append(
            Table(
                [w(_("Condition")), w(_("Holds")), w(_("Decided the verdict"))],
                [
                    [
                        condition_text(str(item.get("kind")), show(item.get("label")), w),
                        w.value(item.get("holds")),
                        w.value(item.get("decided")),
                    ]
                    for item in conditions
                ],
                weights=[7, 2, 3],
            )
        )
    paragraphs: list[str] = []
    for error in report.explanation.get("ruleErrors") or []:
        if isinstance(error, dict):
            what = RULE_ERROR_WORDS.get(str(error.get("code")), _("an error"))
            paragraphs.append(
                w(_("A rule could not be evaluated, %(what)s: %(message)s"))
                % {"what": w(what), "message": show(error.get("message"))}
            )
    if not tables and not paragraphs:
        return None
    return Section(w(_("How the verdict was reached")), tables=tables, paragraphs=paragraphs)


def build_sections(report: ReportData) -> tuple[Headline, list[Section]]:
    """The report's headline and its sections, in reading order."""
    locale = report_locale(report)
    sections: list[Section] = [summary_section(report)]
    sections.extend(product_sections(report))
    for optional in (
        consumer_section(report),
        metadata_section(report),
        inputs_section(report, locale),
        variables_section(report),
        global_validations_section(report),
    ):
        if optional is not None:
            sections.append(optional)
    current = [img for img in report.images if not img.record.get("replaced")]
    replaced = [img for img in report.images if img.record.get("replaced")]
    for title, group in ((_("Photos"), current), (_("Replaced photos"), replaced)):
        if group:
            blocks = [image_block(report, img, locale) for img in group]
            sections.append(Section(words(report)(title), images=blocks))
    notes = explanation_section(report)
    if notes is not None:
        sections.append(notes)
    steps = history_section(report)
    if steps is not None:
        sections.append(steps)
    return headline(report), sections
