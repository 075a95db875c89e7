"""What a report says, as plain rows and tables, independent of the PDF library.

`build_sections(report)` turns `ReportData` into an ordered list of `Section`s (a title plus
key/value rows, tables and paragraphs). The borb renderer only lays these out, so the content
(masking, labels in the inspection's locale, which product fields a car shows) is decided and
tested here without borb.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from server.reports.data import ReportData, ReportImage
from server.web import capture
from server.web.i18n import DEFAULT_LOCALE

#: Product fields shown per inspection type, in this order, with their English label.
PRODUCT_FIELD_LABELS: dict[str, list[tuple[str, str]]] = {
    "car": [
        ("plate", "Plate"),
        ("make", "Make"),
        ("model", "Model"),
        ("year", "Year"),
        ("color", "Color"),
        ("use", "Use"),
        ("milage", "Mileage"),
        ("vin", "VIN"),
        ("chassis", "Chassis"),
    ],
    "moto": [
        ("plate", "Plate"),
        ("make", "Make"),
        ("model", "Model"),
        ("year", "Year"),
        ("color", "Color"),
        ("use", "Use"),
        ("milage", "Mileage"),
        ("chassis", "Chassis"),
    ],
    "bike": [
        ("make", "Make"),
        ("model", "Model"),
        ("color", "Color"),
        ("year", "Year"),
        ("serial", "Serial"),
        ("serialNumber", "Serial number"),
        ("price", "Price"),
    ],
    "machinery": [
        ("make", "Make"),
        ("model", "Model"),
        ("year", "Year"),
        ("serial", "Serial"),
        ("hours", "Hours"),
        ("type", "Type"),
        ("purpose", "Purpose"),
        ("use", "Use"),
        ("color", "Color"),
        ("plate", "Plate"),
    ],
    "goods": [
        ("description", "Description"),
        ("quantity", "Quantity"),
        ("value", "Value"),
        ("serial", "Serial"),
        ("make", "Make"),
        ("model", "Model"),
        ("type", "Type"),
        ("category", "Category"),
        ("serialNumber", "Serial number"),
        ("price", "Price"),
    ],
    "custom": [("description", "Description"), ("reference", "Reference")],
    "cellphone": [
        ("make", "Make"),
        ("model", "Model"),
        ("color", "Color"),
        ("imei", "IMEI"),
        ("year", "Year"),
        ("serialNumber", "Serial number"),
        ("price", "Price"),
    ],
}

#: Consumer fields shown, with labels; identification-like fields are masked.
CONSUMER_FIELD_LABELS: list[tuple[str, str]] = [
    ("firstName", "First name"),
    ("lastName", "Last name"),
    ("identification", "Identification"),
    ("email", "Email"),
    ("phone", "Phone"),
    ("birthdate", "Birthdate"),
    ("address", "Address"),
    ("city", "City"),
    ("state", "State"),
    ("country", "Country"),
]

#: How the explanation's missing items (`runtime.missing`) are named, by kind.
MISSING_KINDS: dict[str, str] = {"photo": "Missing photo", "input": "Missing input"}

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
    #: "Reviewed by … on …: reason", one per person's decision (docs/review.md).
    reviewed: list[str] = field(default_factory=list)


def reviewed_lines(inspection: dict[str, Any]) -> list[str]:
    """A person's decisions, as the report states them under the verdict."""
    review = inspection.get("review") or {}
    return [
        f"Reviewed by {show((item.get('by') or {}).get('name'))} on {_minute(item.get('at'))}: "
        f"{show(item.get('reason'))} ({show(item.get('veredict'))})"
        for item in review.get("decisions") or []
    ]


def _minute(moment: Any) -> str:
    """`2026-11-25T16:21:06.508Z` as `2026-11-25 16:21 UTC` (the state's moments are UTC)."""
    text = show(moment)
    return f"{text[:10]} {text[11:16]} UTC" if len(text) >= 16 and text[10] == "T" else text


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


def verdict_reasons(inspection: dict[str, Any], explanation: dict[str, Any]) -> list[str]:
    """The reasons behind the verdict, from the runtime's explanation (or the inspection)."""
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
    return reasons


def report_locale(report: ReportData) -> str:
    locale = report.inspection.get("locale")
    if isinstance(locale, str) and locale:
        return locale
    locales = report.template.get("logic", {}).get("locales") or ["en_US"]
    return str(locales[0])


def input_label(report: ReportData, identifier: str, fallback: str, locale: str) -> str:
    """The input's label in the inspection's locale, else its default label."""
    logic_input = report.template.get("logic", {}).get("inputs", {}).get(identifier, {})
    translation = logic_input.get("translations", {}).get(locale, {})
    label = translation.get("label") if isinstance(translation, dict) else None
    return str(label or fallback or identifier)


def image_label(report: ReportData, identifier: str | None, side: str, locale: str) -> str:
    images = report.template.get("logic", {}).get("images", {})
    labels = images.get(identifier or "", {}).get("labels", {}) if identifier else {}
    return str(labels.get(locale) or labels.get("") or side or "image")


def headline(report: ReportData) -> Headline:
    inspection = report.inspection
    template = inspection.get("template") or {}
    verdict = inspection.get("veredict") or report.explanation.get("veredict") or "not_defined"
    return Headline(
        company=report.company_name,
        template=show(template.get("name") or report.template.get("name")),
        inspection_id=show(inspection.get("_id")),
        verdict=str(verdict),
        reasons=verdict_reasons(inspection, report.explanation),
        reviewed=reviewed_lines(inspection),
    )


def summary_section(report: ReportData) -> Section:
    inspection = report.inspection
    producer = inspection.get("producer") or {}
    rows = [
        ("Inspection", show(inspection.get("_id"))),
        ("Type", show(inspection.get("type"))),
        ("Status", show(inspection.get("status"))),
        ("Completed by", show(inspection.get("completedBy"))),
        ("Template", show((inspection.get("template") or {}).get("name"))),
        ("Locale", report_locale(report)),
        ("Producer", show(producer.get("userId") or producer.get("companyId"))),
    ]
    for key, label in (
        ("createdAt", "Created"),
        ("startedAt", "Started"),
        ("completedAt", "Completed"),
        ("expiresAt", "Expires"),
    ):
        if inspection.get(key):
            rows.append((label, show(inspection[key])))
    rows.append(("Report generated", show(report.generated_at)))
    if inspection.get("testing"):
        rows.append(("Mode", "TEST (created with a test key)"))
    return Section("Inspection", rows=rows)


def product_sections(report: ReportData) -> list[Section]:
    sections: list[Section] = []
    for index, product in enumerate(report.inspection.get("products") or [], start=1):
        kind = str(product.get("type") or report.inspection.get("type") or "custom")
        data = product.get(kind) if isinstance(product.get(kind), dict) else {}
        rows = [("Product", show(product.get("_id"))), ("Type", kind)]
        for key, label in PRODUCT_FIELD_LABELS.get(kind, []):
            value = data.get(key) if key != "milage" else data.get("milage", data.get("mileage"))
            shown = show(value)
            rows.append((label, mask(shown) if key in MASKED_FIELDS and value else shown))
        for product_input in product.get("inputs") or []:
            label = input_label(
                report,
                str(product_input.get("identifier", "")),
                show(product_input.get("label")),
                report_locale(report),
            )
            rows.append((label, show(product_input.get("value"))))
        sections.append(Section(f"Product {index}", rows=rows))
    return sections


def consumer_section(report: ReportData) -> Section | None:
    consumer = report.inspection.get("consumer") or report.inspection.get("identity") or {}
    if not consumer:
        return None
    rows: list[tuple[str, str]] = []
    for key, label in CONSUMER_FIELD_LABELS:
        value = consumer.get(key)
        if value in (None, ""):
            continue
        rows.append((label, mask(show(value)) if key in MASKED_FIELDS else show(value)))
    return Section("Consumer", rows=rows) if rows else None


def inputs_section(report: ReportData, locale: str) -> Section | None:
    template_ref = report.inspection.get("template") or {}
    values = template_ref.get("inputs") or report.inspection.get("inputs") or []
    rows = [
        (
            input_label(report, str(item.get("identifier", "")), show(item.get("label")), locale),
            show(item.get("value")),
        )
        for item in values
        if isinstance(item, dict)
    ]
    return Section("Inputs", rows=rows) if rows else None


def metadata_section(report: ReportData) -> Section | None:
    """The client's key-value metadata (policy or claim numbers and the like)."""
    metadata = report.inspection.get("metadata") or {}
    rows = [(show(key), show(value)) for key, value in metadata.items()]
    return Section("Metadata", rows=rows) if rows else None


def variables_section(report: ReportData) -> Section | None:
    variables = report.inspection.get("variables") or []
    rows = [(show(item.get("name")), show(item.get("value"))) for item in variables]
    return Section("Variables", rows=rows) if rows else None


def global_validations_section(report: ReportData) -> Section | None:
    checks = report.inspection.get("globalValidations") or []
    if not checks:
        return None
    table = Table(
        ["Validation", "Description", "Valid"],
        [
            [show(item.get("name")), show(item.get("description")), show(item.get("valid"))]
            for item in checks
        ],
        weights=[3, 6, 2],
    )
    return Section("Global validations", tables=[table])


def image_block(report: ReportData, image: ReportImage, locale: str) -> ImageBlock:
    record = image.record
    side = show(record.get("side"))
    label = image_label(report, record.get("templateImageIdentifier"), side, locale)
    facts = [
        ("Side", side),
        ("Target", show(record.get("target") or image.target)),
        ("Processed", show(record.get("processed"))),
        ("Approved", show(record.get("approved"))),
        ("Uploaded", show(record.get("uploadedAt"))),
    ]
    # What the photo was judged on: capture time, place, device, attempt (server.web.capture),
    # in English like the report's other fixed labels (input labels follow the locale).
    facts += capture.of_record(record, DEFAULT_LOCALE)
    # Fields read from an identity document (`entities`), each with whether it matched.
    facts += [
        (
            f"Read: {show(entity.get('entity'))}",
            f"{show(entity.get('result'))} ({'matches' if entity.get('valid') else 'no match'})",
        )
        for entity in record.get("entities") or []
        if isinstance(entity, dict)
    ]
    validations = Table(
        ["Validation", "Confidence", "Value", "Valid"],
        [
            [
                show(item.get("validation")),
                show(item.get("confidence")),
                show(item.get("result")),
                show(item.get("valid")),
            ]
            for item in record.get("validations") or []
        ],
        weights=[4, 2, 3, 2],
    )
    damages_raw = record.get("damages") or []
    damages = (
        Table(
            ["Part", "Damage", "Severity", "Percentage"],
            [
                [
                    show(item.get("part")),
                    show(item.get("damage")),
                    show(item.get("severity")),
                    show(item.get("percentage")),
                ]
                for item in damages_raw
            ],
        )
        if damages_raw
        else None
    )
    return ImageBlock(label, image.content, facts, validations, damages)


def condition_text(kind: str, label: str) -> str:
    """A verdict condition in words. The label of `approve_when` is the reason given when it
    does not hold, so it is shown as such."""
    if kind == "disapprove":
        return f"Disapproval: {label}"
    if kind == "approve_when":
        return f"Approval condition (if not met: {label})"
    return f"{kind}: {label}"


def explanation_section(report: ReportData) -> Section | None:
    """How the verdict was reached (the runtime's explanation): what is missing, conditions and
    rule errors."""
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
                ["Missing (disapproves the inspection)", "Label"],
                [
                    [
                        MISSING_KINDS.get(str(item.get("kind")), "Missing item"),
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
                ["Condition", "Holds", "Decided the verdict"],
                [
                    [
                        condition_text(str(item.get("kind")), show(item.get("label"))),
                        show(item.get("holds")),
                        show(item.get("decided")),
                    ]
                    for item in conditions
                ],
                weights=[7, 2, 3],
            )
        )
    paragraphs: list[str] = []
    for error in report.explanation.get("ruleErrors") or []:
        if isinstance(error, dict):
            paragraphs.append(f"Rule error {show(error.get('code'))}: {show(error.get('message'))}")
    if not tables and not paragraphs:
        return None
    return Section("How the verdict was reached", tables=tables, paragraphs=paragraphs)


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
    if report.images:
        sections.append(
            Section("Images", images=[image_block(report, img, locale) for img in report.images])
        )
    notes = explanation_section(report)
    if notes is not None:
        sections.append(notes)
    return headline(report), sections
