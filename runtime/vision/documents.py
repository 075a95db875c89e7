"""What an identity document says: its MRZ when it has one, else its printed, labelled fields.

`read_document(lines)` turns OCR lines into a `DocumentReading`. The MRZ wins when found
(`machine_readable_zone`): its check digits say which fields are right. Without one, labels
("Apellido / Surname", "Documento / DNI", "Fecha de nacimiento / Date of birth", "Sexo / Sex")
are found and their values taken on the same line after a colon or on the line below; those
fields carry the OCR's confidence only, never more than `OCR_CEILING`.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass, field, replace

from runtime.vision.machine_readable_zone import MachineZone, clean_line, find_zone
from runtime.vision.ocr import TextLine, same_row

__all__ = ["DocumentReading", "read_document", "rows_of"]

#: Confidence of a field whose MRZ check digit holds, and of MRZ fields without one (names,
#: sex, nationality) when the composite check digit holds.
VERIFIED = 0.99
#: Confidence at most of a field read from printed text (no check digit to confirm it).
OCR_CEILING = 0.9
#: A reading's fields, in the order they are reported.
FIELDS = ("document_number", "surname", "given_names", "birthdate", "sex", "expiry", "nationality")
#: Labels by field, as letters only, upper case, accents removed (OCR drops spaces anyway); a
#: line is a label when it contains one of these words and is short (`MAX_LABEL`).
#: Order matters: "SURNAME" is tested before "NAME", "VENCIMIENTO" before "NACIMIENTO".
LABELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("surname", ("APELLIDO", "SURNAME")),
    ("expiry", ("VENCIMIENTO", "EXPIRY", "EXPIRATION", "DATEOFEXP", "VALIDUNTIL")),
    ("birthdate", ("NACIMIENTO", "BIRTH", "NAISSANCE")),
    ("given_names", ("NOMBRE", "GIVENNAME", "NAME", "PRENOM")),
    ("nationality", ("NACIONALIDAD", "NATIONALITY")),
    ("sex", ("SEXO", "SEX")),
    ("document_number", ("DOCUMENTO", "DOCUMENT", "DNI", "NUMERO", "PASSPORTNO", "IDNO")),
)
#: Letters at most in a label line ("Fecha de vencimiento / Date of expiry" has 30).
MAX_LABEL = 40
_MONTHS = {
    name: number
    for number, names in enumerate(
        (("JAN", "ENE"), ("FEB",), ("MAR",), ("APR", "ABR"), ("MAY",), ("JUN",), ("JUL",),
         ("AUG", "AGO"), ("SEP", "SET"), ("OCT",), ("NOV",), ("DEC", "DIC")),
        start=1,
    )
    for name in names
}  # fmt: skip
_NUMERIC_DATE = re.compile(r"(\d{1,2})\s*[/.\-]\s*(\d{1,2})\s*[/.\-]\s*(\d{4})")
_NAMED_DATE = re.compile(r"(\d{1,2})\s*([A-Z]{3})[A-Z/]*\s*(\d{4})")


@dataclass(frozen=True)
class DocumentReading:
    """The fields read from one identity document; None where a field was not read.
    `confidences` holds each read field's confidence (0..1): `VERIFIED` for MRZ fields with a
    good check digit, the OCR's own (capped) otherwise. `confidence` is the reading's overall
    one: the share of MRZ check digits that hold, or the mean OCR confidence of the fields."""

    source: str  # "mrz" or "ocr"
    confidence: float
    document_number: str | None = None
    surname: str | None = None
    given_names: str | None = None
    birthdate: dt.date | None = None
    sex: str | None = None  # "M", "F" or "X" (unspecified)
    expiry: dt.date | None = None
    nationality: str | None = None
    confidences: dict[str, float] = field(default_factory=dict)
    #: Every (surname, given names) read, MRZ first then printed: names have no check digit,
    #: and OCR drops a letter in one place more often than in both.
    names: tuple[tuple[str, str], ...] = ()
    #: The OCR's confidence (0..1) in the least sure letter of the MRZ's names, None when not
    #: known: no check digit covers a name (the composite's covers the other rows), so this is
    #: what tells a name misread (`N` for `LIN` at 0.42) from one read well.
    name_letters: float | None = None


def rows_of(lines: list[TextLine]) -> list[list[TextLine]]:
    """Lines grouped by row (`ocr.same_row`), each row left to right, rows top to bottom: an
    MRZ line OCR split in two boxes becomes one row again, while two tilted MRZ lines (whose
    bounding rectangles overlap) stay two rows."""
    rows: list[list[TextLine]] = []
    for line in sorted(lines, key=lambda item: item.middle):
        row = next((row for row in rows if any(same_row(line, other) for other in row)), None)
        if row is None:
            rows.append([line])
        else:
            row.append(line)
    rows.sort(key=lambda row: min(line.middle for line in row))
    return [sorted(row, key=lambda item: item.left) for row in rows]


def _from_zone(
    zone: MachineZone, ocr_confidence: float, name_letters: float | None = None
) -> DocumentReading:
    checked = {"document_number", "birthdate", "expiry"}
    unchecked = VERIFIED if "composite" in zone.verified else min(OCR_CEILING, ocr_confidence)
    confidences = {
        name: (VERIFIED if name in zone.verified else 0.3) if name in checked else unchecked
        for name in FIELDS
    }
    for name in ("surname", "given_names"):
        if not getattr(zone, name):  # a name not read is not confirmed by any check digit
            del confidences[name]
    if not (len(zone.nationality) == 3 and zone.nationality.isalpha()):
        confidences["nationality"] = 0.3  # a lost character: no check digit would tell
    return DocumentReading(
        source="mrz",
        confidence=len(zone.verified) / 4,
        document_number=zone.document_number or None,
        surname=zone.surname or None,
        given_names=zone.given_names or None,
        birthdate=zone.birthdate,
        sex=zone.sex,
        expiry=zone.expiry,
        nationality=zone.nationality or None,
        confidences=confidences,
        names=((zone.surname, zone.given_names),),
        name_letters=name_letters,
    )


def _letters_only(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed.upper() if c.isascii() and c.isalpha())


def _label_of(text: str) -> tuple[str, str] | None:
    """(field, value after the label on the same line) when a line starts with a label."""
    head, colon, tail = text.partition(":")
    letters = _letters_only(head if colon else text)
    if len(letters) > MAX_LABEL:
        return None
    for name, words in LABELS:
        if any(word in letters for word in words):
            return name, tail.strip() if colon else ""
    return None


def parse_date(text: str) -> dt.date | None:
    """A printed date: `15/02/1990`, `15.02.1990`, `15 FEB 1990`, `15 FEB/FEV 1990`."""
    upper = text.upper()
    try:
        if match := _NUMERIC_DATE.search(upper):
            return dt.date(int(match[3]), int(match[2]), int(match[1]))
        if (match := _NAMED_DATE.search(upper)) and match[2] in _MONTHS:
            return dt.date(int(match[3]), _MONTHS[match[2]], int(match[1]))
    except ValueError:
        return None
    return None


def _value(name: str, text: str) -> str | dt.date | None:
    if name in ("birthdate", "expiry"):
        return parse_date(text)
    if name == "sex":
        letters = _letters_only(text)
        return letters[0] if letters[:1] in ("M", "F") else None
    if name == "document_number":
        code = re.sub(r"[^0-9A-Z]", "", text.upper())
        return code if len(code) >= 5 and any(c.isdigit() for c in code) else None
    value = " ".join(re.sub(r"[^\w' -]", " ", text).split())
    return value.upper() if value and not _label_of(text) else None


def _below(label: TextLine, lines: list[TextLine]) -> list[TextLine]:
    """Lines under a label, nearest first (down plus across): their middle lower than the
    label's by at least half its text height and at most three, overlapping it across (a
    value is printed under its caption; boxes OCR draws overlap a little)."""
    found = [
        line
        for line in lines
        if line is not label
        and 0.5 * label.thickness < line.middle - label.middle < 3 * label.thickness
        and line.left < label.right + label.thickness
        and label.left - label.thickness < line.right
    ]
    return sorted(found, key=lambda line: line.middle - label.middle + abs(line.left - label.left))


def _from_labels(lines: list[TextLine]) -> DocumentReading | None:
    values: dict[str, str | dt.date] = {}
    confidences: dict[str, float] = {}
    for line in sorted(lines, key=lambda item: (item.top, item.left)):
        label = _label_of(line.text)
        if label is None or label[0] in values:
            continue
        name, inline = label
        options = [(inline, line.confidence)] if inline else []
        options += [(other.text, other.confidence) for other in _below(line, lines)]
        for text, confidence in options:
            value = _value(name, text)
            if value is not None:
                values[name] = value
                confidences[name] = min(OCR_CEILING, confidence)
                break
    if not values:
        return None

    def text_of(name: str) -> str | None:
        value = values.get(name)
        return value if isinstance(value, str) else None

    def date_of(name: str) -> dt.date | None:
        value = values.get(name)
        return value if isinstance(value, dt.date) else None

    return DocumentReading(
        source="ocr",
        confidence=sum(confidences.values()) / len(confidences),
        document_number=text_of("document_number"),
        surname=text_of("surname"),
        given_names=text_of("given_names"),
        birthdate=date_of("birthdate"),
        sex=text_of("sex"),
        expiry=date_of("expiry"),
        nationality=text_of("nationality"),
        confidences=confidences,
        names=((text_of("surname") or "", text_of("given_names") or ""),),
    )


def _merged(mrz: DocumentReading, printed: DocumentReading | None) -> DocumentReading:
    """The MRZ reading, where a field its check digits do not confirm is taken from the
    printed fields instead (at their OCR confidence) when those have it."""
    if printed is None:
        return mrz
    changes: dict[str, object] = {"names": mrz.names + printed.names}
    confidences = dict(mrz.confidences)
    for name in FIELDS:
        printed_value = getattr(printed, name)
        weak = confidences.get(name, 0.0) < printed.confidences.get(name, 0.0)
        if printed_value is not None and (getattr(mrz, name) is None or weak):
            changes[name] = printed_value
            confidences[name] = printed.confidences[name]
    return replace(mrz, **changes, confidences=confidences)  # type: ignore[arg-type]


#: Line fragments below this confidence are left out of an MRZ row (chevrons read as `222`).
MIN_FRAGMENT = 0.6


def read_document(lines: list[TextLine]) -> DocumentReading | None:
    """The document in OCR lines: the MRZ's fields when there is an MRZ (with printed fields
    standing in for those its check digits refuse), else the labelled printed fields; None
    when neither is found."""
    rows = [
        [line for index, line in enumerate(row) if index == 0 or line.confidence >= MIN_FRAGMENT]
        for row in rows_of(lines)
    ]
    texts = ["".join(line.text for line in row) for row in rows]
    zone = find_zone(texts)
    printed = _from_labels(lines)
    if zone is not None:
        zone = settle_century(zone, [line.text for line in lines])
        mrz_rows = [row for row, text in zip(rows, texts, strict=True) if "<" in text]
        scores = [line.confidence for row in mrz_rows for line in row] or [0.0]
        name_row = rows[zone.rows[0 if zone.kind == "TD3" else -1]] if zone.rows else None
        letters = _name_letters(name_row, skip=5 if zone.kind == "TD3" else 0)
        return _merged(_from_zone(zone, sum(scores) / len(scores), letters), printed)
    return printed


def _name_letters(row: list[TextLine] | None, skip: int) -> float | None:
    """The confidence of the least sure letter of the names on an MRZ name row: its MRZ
    characters (`clean_line`'s) after the first `skip` (a passport's `P<UTO`), up to the
    filler run that ends the given names. None without a row or a letter."""
    if row is None:
        return None
    characters = [
        (char, line.character_confidence(index))
        for line in row
        for index, letter in enumerate(line.text)
        for char in clean_line(letter)
    ]
    names = "".join(char for char, _ in characters[skip:])
    end = names.find("<<<")
    kept = characters[skip : skip + end] if end >= 0 else characters[skip:]
    letters = [confidence for char, confidence in kept if char.isalpha()]
    return min(letters) if letters else None


def settle_century(zone: MachineZone, texts: list[str]) -> MachineZone:
    """The MRZ's birthdate with its century settled by the document itself.

    The MRZ prints two digits of the year (`110101` is 1911 or 2011). A date printed on the
    document with the same day, month and last two digits of the year decides (a passport
    prints `01.01.1911` above its MRZ); without one, a birthdate in this century that would
    fall after the document's expiry, or less than `MIN_AGE_AT_EXPIRY` years before it, is
    taken as the previous century's: a document expires years after it is issued, and is
    issued after its holder is born."""
    born = zone.birthdate
    if born is None:
        return zone
    for text in texts:
        printed = parse_date(text)
        if (
            printed is not None
            and (printed.day, printed.month) == (born.day, born.month)
            and printed.year % 100 == born.year % 100
        ):
            return replace(zone, birthdate=printed) if printed != born else zone
    if born.year >= 2000 and zone.expiry is not None:
        try:
            earlier = born.replace(year=born.year - 100)
        except ValueError:  # 29 February of a year that was not leap a century before
            return zone
        if born >= zone.expiry or (zone.expiry - born).days < MIN_AGE_AT_EXPIRY * 365:
            return replace(zone, birthdate=earlier)
    return zone


#: Without a printed date, a birthdate in this century closer than this (years) to the
#: document's expiry is read as the previous century's: passports of newborns are valid for
#: at least one year (Czech, German, US children's passports: 5 or 6).
MIN_AGE_AT_EXPIRY = 1
