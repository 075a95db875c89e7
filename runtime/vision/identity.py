"""Identity analyzers: `dni`, `full_name`, `birthdate`, `age` and `sex`, each comparing one
field of the document read from a photo (`documents.read_document`) with what the consumer
declared.

A template usually asks all five of one photo, so the reading is cached by the photo's hash
(`CACHE_SIZE` photos): five validations cost one OCR. Two threads asking for a photo not yet
cached may both read it; the results are equal and the second simply replaces the first.
Every outcome carries the document's fields as `entities` (`{entity, valid, result}`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import threading
import unicodedata
from collections import OrderedDict
from typing import Any, ClassVar

from runtime.validators import ValidationOutcome, old_enough
from runtime.vision import AnalysisSubject, register
from runtime.vision.codes import UNSURE, decide, normalize_code, same_code
from runtime.vision.documents import DocumentReading, read_document
from runtime.vision.mrz_band import mrz_rows
from runtime.vision.ocr import RECOGNITION_BATCH, THREADS, long_box, read_lines
from runtime.vision.pictures import UnreadablePhoto

__all__ = [
    "UNSURE",
    "age_at",
    "document_reading",
    "entities",
    "forget_readings",
    "iso_sex",
    "name_tokens",
    "same_name",
]

#: Longest side the text detector sees on a document photo: its lines are small and dense
#: (names, an MRZ of 44 characters across the card); at the 800 px of a plate photo the drawn
#: set's names were cut more often (full_name 0.917 against 0.972 at 1280).
DOCUMENT_DETECTION_SIDE = 1280
#: Longest side of the page at whose scale the text detector sees the MRZ's rows: the
#: document's (`DOCUMENT_DETECTION_SIDE`). With the whole page looked at for the MRZ, at 800 the
#: MRZ was found at 70% of the CPU, but names (no check digit) came out worse: VOR for VZOR,
#: 61/66 fields right against 62/66 (benchmarks/bench_vision_cost.py, docs/vision.md).
MRZ_DETECTION_SIDE = DOCUMENT_DETECTION_SIDE
#: An MRZ row's box is 20-30 times longer than high (30 or 44 characters); boxes at least this
#: long are the first read on a document photo (a row cut in two by the detector still is).
MRZ_RATIO = 8.0
#: Photos whose reading is kept (a reading is a few hundred bytes).
CACHE_SIZE = 64
#: Field confidence (0..1) at and above which a field counts as read.
READ_BOUNDARY = 0.5
#: ISO/IEC 5218 codes of the sexes a document prints.
ISO_SEX = {"M": 1, "F": 2, "X": 9}

_cache: OrderedDict[bytes, DocumentReading | None] = OrderedDict()
_cache_lock = threading.Lock()


def document_reading(
    data: bytes,
    *,
    detection_side: int = DOCUMENT_DETECTION_SIDE,
    threads: int = THREADS,
    mrz_first: bool = True,
    mrz_side: int = MRZ_DETECTION_SIDE,
    mrz_band: bool = True,
    batch: int = RECOGNITION_BATCH,
) -> DocumentReading | None:
    """The document in a photo, read once per distinct photo (LRU keyed by SHA-256).

    With `mrz_first`, the long lines (`MRZ_RATIO`) found by a detection at `mrz_side` in the
    rows where the MRZ is (`mrz_band.mrz_rows`; the whole page without `mrz_band`) are
    recognized first: when they hold an MRZ whose check digits all hold and whose birthdate's
    century is not open (`_century_open`), that is the reading and the rest of the document is
    neither detected nor recognized (most of a document's OCR cost: a passport has 20-40
    lines); else the document is read whole, detected at `detection_side`, as without
    `mrz_first`. The options are the cost benchmark's."""
    options = f":{detection_side}:{threads}:{mrz_first}:{mrz_side}:{mrz_band}:{batch}"
    key = hashlib.sha256(data).digest() + options.encode()
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    try:
        reading = None
        if mrz_first:
            long_lines = read_lines(
                data,
                detection_side=mrz_side,
                threads=threads,
                keep=_mrz_shaped,
                rows=mrz_rows if mrz_band else None,
                batch=batch,
            )
            reading = read_document(long_lines)
        if (
            reading is None
            or reading.source != "mrz"
            or reading.confidence < 1.0
            or _century_open(reading)
        ):
            reading = read_document(
                read_lines(data, detection_side=detection_side, threads=threads, batch=batch)
            )
    except UnreadablePhoto:
        reading = None
    with _cache_lock:
        _cache[key] = reading
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return reading


def _century_open(reading: DocumentReading) -> bool:
    """Whether the MRZ's birthdate may be a century earlier: one read in this century could be
    a holder's born 100 years before, which only a date printed on the document settles
    (`documents.settle_century`: the Czech specimen's 110101 is 1911, printed 01.01.1911)."""
    return reading.birthdate is not None and reading.birthdate.year >= 2000


def _mrz_shaped(box: tuple[tuple[float, float], ...]) -> bool:
    return long_box(box, MRZ_RATIO)


def forget_readings() -> None:
    """Empty the reading cache (benchmarks timing the OCR; tests)."""
    with _cache_lock:
        _cache.clear()


#: ICAO 9303 part 3 (section 6 and appendix B) transliterations of Latin letters that are not
#: a base letter plus accents: each letter's spellings in an MRZ, the recommended one first.
#: Letters with diaereses may be spelt with the base letter too (`Ö` as `OE` or `O`); accented
#: letters (`Ó`, `Ñ`, `Č`) are their base letter once accents are removed.
TRANSLITERATIONS: dict[str, tuple[str, ...]] = {
    "Þ": ("TH",),
    "Ð": ("D",),
    "Æ": ("AE",),
    "Œ": ("OE",),
    "Ø": ("OE", "O"),
    "Ä": ("AE", "A"),
    "Ö": ("OE", "O"),
    "Ü": ("UE", "U"),
    "Å": ("AA", "A"),
    "ß": ("SS",),
    "Ł": ("L",),
    "Ħ": ("H",),
    "Ŀ": ("L",),
    "Ĳ": ("IJ",),
    "Ŋ": ("N",),
    "ĸ": ("K",),
}
#: Declared names are matched in at most this many spellings (each `Ö` doubles them).
MAX_SPELLINGS = 64


def _spellings(word: str) -> list[str]:
    """A declared word as an MRZ may spell it (ICAO 9303): `Þuríður` -> [`THURIDUR`],
    `Jörg` -> [`JOERG`, `JORG`]. Letters with acute, grave... accents also take the `E`
    of the umlaut spelling (`Ósp` -> `OSP`, `OESP`): people often declare `Ó` for `Ö`."""
    spellings = [""]
    for letter in word:
        char = letter if letter in TRANSLITERATIONS else letter.upper()
        options: tuple[str, ...]
        if char in TRANSLITERATIONS:
            options = TRANSLITERATIONS[char]
        else:
            decomposed = unicodedata.normalize("NFKD", char)
            base = "".join(c for c in decomposed if not unicodedata.combining(c))
            accented = base != char and base in ("A", "O", "U")
            options = (base, base + "E") if accented else (base,)
        spellings = [prefix + option for prefix in spellings for option in options]
        spellings = spellings[:MAX_SPELLINGS]
    return spellings


def name_tokens(text: str) -> frozenset[str]:
    """A name's words, accents and case ignored, as ICAO 9303 transliterates them:
    `María José` -> {MARIA, JOSE}, `Þuríður` -> {THURIDUR} (the first spelling of each word;
    `same_name` tries the others)."""
    return frozenset(words[0] for words in _word_spellings(text))


def _word_spellings(text: str) -> list[list[str]]:
    """Each word of a name with its possible MRZ spellings (letters A-Z only)."""
    found = []
    for word in re.split(r"[^\w]+|_|\d", text):
        spellings = [
            "".join(c for c in spelt if c.isascii() and c.isalpha()) for spelt in _spellings(word)
        ]
        spellings = [spelt for spelt in dict.fromkeys(spellings) if spelt]
        if spellings:
            found.append(spellings)
    return found


def same_name(read: str, declared: str) -> bool:
    """Whether two names have the same words, in any order, accents and case ignored, each
    declared word in any of its ICAO 9303 spellings (`Þuríður Ösp Ævarsdóttir` is
    `AEVARSDOTTIR THURIDUR OESP`)."""
    wanted = list({tuple(spellings): spellings for spellings in _word_spellings(declared)}.values())
    words = set(name_tokens(read))
    if not wanted or len(wanted) != len(words):
        return False
    for spellings in wanted:
        match = next((spelt for spelt in spellings if spelt in words), None)
        if match is None:
            return False
        words.discard(match)
    return not words


def iso_sex(value: Any) -> int | None:
    """A sex as its ISO/IEC 5218 code: `M`/1 -> 1, `F`/2 -> 2, `X`/9 -> 9 (not
    applicable); None otherwise."""
    text = str(value).strip().upper()
    if text in ISO_SEX:
        return ISO_SEX[text]
    return int(text) if text in ("0", "1", "2", "9") else None


def age_at(birthdate: dt.date, now: dt.date) -> int:
    """Whole years from `birthdate` to `now`."""
    before_birthday = (now.month, now.day) < (birthdate.month, birthdate.day)
    return now.year - birthdate.year - before_birthday


def _declared_date(value: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def _full_name(reading: DocumentReading) -> str | None:
    parts = [part for part in (reading.given_names, reading.surname) if part]
    return " ".join(parts) or None


def _field_checks(
    reading: DocumentReading, declared: dict[str, Any], now: dt.datetime
) -> dict[str, tuple[Any, bool]]:
    """Per entity read: (result, valid). Valid means it matches the declared value, or with
    nothing declared, that it was read with confidence (a good MRZ check digit)."""
    confidences = reading.confidences

    def read_well(name: str) -> bool:
        return confidences.get(name, 0.0) >= READ_BOUNDARY

    checks: dict[str, tuple[Any, bool]] = {}
    if reading.document_number:
        wanted = declared.get("identification")
        ok = same_code(reading.document_number, str(wanted)) if wanted else True
        checks["documentNumber"] = (reading.document_number, ok and read_well("document_number"))
    if reading.given_names:
        wanted = declared.get("firstName")
        givens = [reading.given_names] + [given for _, given in reading.names]
        ok = any(same_name(given, str(wanted)) for given in givens) if wanted else True
        checks["firstName"] = (reading.given_names, ok and read_well("given_names"))
    if reading.surname:
        wanted = declared.get("lastName")
        surnames = [reading.surname] + [surname for surname, _ in reading.names]
        ok = any(same_name(surname, str(wanted)) for surname in surnames) if wanted else True
        checks["lastName"] = (reading.surname, ok and read_well("surname"))
    if reading.birthdate:
        wanted = declared.get("birthdate")
        ok = _declared_date(wanted) == reading.birthdate if wanted else True
        checks["birthdate"] = (reading.birthdate.isoformat(), ok and read_well("birthdate"))
    if reading.sex:
        wanted = declared.get("sex")
        ok = iso_sex(wanted) == iso_sex(reading.sex) if wanted is not None else True
        checks["sex"] = (iso_sex(reading.sex), ok and read_well("sex"))
    if reading.expiry:
        ok = reading.expiry >= now.date()
        checks["expiry"] = (reading.expiry.isoformat(), ok and read_well("expiry"))
    if reading.nationality:
        checks["nationality"] = (reading.nationality, read_well("nationality"))
    return checks


def entities(
    reading: DocumentReading | None, declared: dict[str, Any], now: dt.datetime
) -> tuple[dict[str, Any], ...]:
    """The document's fields as the spec's identity entities: one per field read."""
    if reading is None:
        return ()
    return tuple(
        {"entity": name, "valid": valid, "result": result}
        for name, (result, valid) in _field_checks(reading, declared, now).items()
    )


#: An MRZ name whose least sure letter the OCR read under this (0..1) refuses no declared name:
#: `READ_BOUNDARY`, what counts as read for every field, not fitted to the real specimens
#: (`benchmarks/vision/real.py` `documents_selective` chooses it leave one document out among
#: `NAME_LETTER_FLOORS` and reports what each fold chose).
NAME_LETTER_FLOOR = READ_BOUNDARY
#: A name read at least this similar to the declared one (difflib's ratio over letters, the
#: words sorted) is unsure rather than different: OCR drops or adds a letter or two.
CLOSE_NAME = 0.6


def _outcome(score: float, result: Any, found: tuple[dict[str, Any], ...]) -> ValidationOutcome:
    confidence, valid = decide(score, READ_BOUNDARY)
    return ValidationOutcome(confidence, valid, result, found)


def _judged(
    read: Any, matches: bool, score: float, found: tuple[dict[str, Any], ...], close: bool = False
) -> ValidationOutcome:
    """A field's outcome: decided when read well and matching (or well and clearly not),
    `UNSURE` (`codes.UNSURE`) when not read, read under `READ_BOUNDARY`, or only `close`."""
    if read is None or (matches and score < READ_BOUNDARY) or (not matches and close):
        return ValidationOutcome(UNSURE, False, read, found)
    return _outcome(score if matches else 0.0, read, found)


def weak_name(reading: DocumentReading, letter_floor: float = NAME_LETTER_FLOOR) -> bool:
    """Whether the name read cannot refuse a declared one: a part of it not read (its
    confidence under `READ_BOUNDARY`), or a letter of the MRZ's names the OCR read under
    `letter_floor` (`documents.DocumentReading.name_letters`). A name that matches is
    still accepted: a misread matching the declaration by chance is not what OCR does."""
    fields = [reading.confidences.get(name, 0.0) for name in ("given_names", "surname")]
    letters = reading.name_letters
    return min(fields) < READ_BOUNDARY or (letters is not None and letters < letter_floor)


def close_name(read: str, declared: str) -> bool:
    """Whether two names differ only by what OCR does to a name (a letter or two)."""
    from difflib import SequenceMatcher

    def letters(text: str) -> str:
        return " ".join(sorted(name_tokens(text)))

    return SequenceMatcher(None, letters(read), letters(declared)).ratio() >= CLOSE_NAME


class _IdentityAnalyzer:
    """Shared steps: read (cached), then `judge` one field."""

    name: ClassVar[str]
    needs: ClassVar[frozenset[str]] = frozenset()

    def analyze(self, subject: AnalysisSubject) -> ValidationOutcome:
        reading = document_reading(subject.data)
        if reading is None:  # no document read: a person looks
            return _judged(None, False, 0.0, ())
        return self.judge(reading, subject, entities(reading, subject.declared, subject.now))

    def judge(
        self, reading: DocumentReading, subject: AnalysisSubject, found: tuple[dict[str, Any], ...]
    ) -> ValidationOutcome:
        raise NotImplementedError


@register
class DocumentNumberAnalyzer(_IdentityAnalyzer):
    """`dni`: the document number read equals the declared `identification` (separators and
    look-alikes ignored); with none declared, a document number was read."""

    name: ClassVar[str] = "dni"

    def judge(
        self, reading: DocumentReading, subject: AnalysisSubject, found: tuple[dict[str, Any], ...]
    ) -> ValidationOutcome:
        number = reading.document_number
        wanted = subject.declared.get("identification")
        matches = number is not None and (not wanted or same_code(number, str(wanted)))
        score = reading.confidences.get("document_number", 0.0)
        read = normalize_code(number) if number else None
        return _judged(read, matches, score, found, close=score < READ_BOUNDARY)


@register
class FullNameAnalyzer(_IdentityAnalyzer):
    """`full_name`: the name read has the words of the declared `firstName` + `lastName`, in
    any order, accents and case ignored; with none declared, a name was read."""

    name: ClassVar[str] = "full_name"

    def __init__(self, letter_floor: float = NAME_LETTER_FLOOR) -> None:
        self.letter_floor = letter_floor  # the benchmark's leave-one-out tries others

    def judge(
        self, reading: DocumentReading, subject: AnalysisSubject, found: tuple[dict[str, Any], ...]
    ) -> ValidationOutcome:
        parts = (subject.declared.get("firstName"), subject.declared.get("lastName"))
        wanted = " ".join(str(part) for part in parts if part)
        read = _full_name(reading)
        if wanted:
            variants = [f"{given} {surname}".strip() for surname, given in reading.names]
            read = next((name for name in variants if same_name(name, wanted)), read)
        if read is not None and not name_tokens(read):
            read = None  # no Latin letter (a name printed in Chinese characters): not compared
        matches = read is not None and (not wanted or same_name(read, wanted))
        fields = [reading.confidences.get(name, 0.0) for name in ("given_names", "surname")]
        names = [f"{given} {surname}".strip() for surname, given in reading.names]
        close = bool(wanted) and any(close_name(name, wanted) for name in [*names, read or ""])
        close = close or weak_name(reading, self.letter_floor)
        return _judged(read, matches, min(fields), found, close=close)


@register
class BirthdateAnalyzer(_IdentityAnalyzer):
    """`birthdate`: the birthdate read equals the declared one (ISO 8601); with none declared,
    a birthdate was read (its MRZ check digit good)."""

    name: ClassVar[str] = "birthdate"

    def judge(
        self, reading: DocumentReading, subject: AnalysisSubject, found: tuple[dict[str, Any], ...]
    ) -> ValidationOutcome:
        read = reading.birthdate
        wanted = subject.declared.get("birthdate")
        matches = read is not None and (not wanted or _declared_date(wanted) == read)
        score = reading.confidences.get("birthdate", 0.0)
        text = read.isoformat() if read else None
        return _judged(text, matches, score, found, close=score < READ_BOUNDARY)


@register
class AgeAnalyzer(_IdentityAnalyzer):
    """`age`: the age at `subject.now` from the birthdate read is at least the `minAge`
    option (`DEFAULT_MIN_AGE` by default); the result is the age in years."""

    name: ClassVar[str] = "age"

    def judge(
        self, reading: DocumentReading, subject: AnalysisSubject, found: tuple[dict[str, Any], ...]
    ) -> ValidationOutcome:
        if reading.birthdate is None:  # not read: a person looks
            return _judged(None, False, 0.0, found)
        age = age_at(reading.birthdate, subject.now.date())
        accepted = bool(old_enough(age, subject.options))  # an int age: never None
        score = reading.confidences.get("birthdate", 0.0)
        return _judged(age, accepted, score, found, close=score < READ_BOUNDARY)


@register
class SexAnalyzer(_IdentityAnalyzer):
    """`sex`: the sex printed (M/F) equals the declared ISO/IEC 5218 code (1 male, 2 female);
    with none declared, a sex was read. The result is the ISO/IEC 5218 code read."""

    name: ClassVar[str] = "sex"

    def judge(
        self, reading: DocumentReading, subject: AnalysisSubject, found: tuple[dict[str, Any], ...]
    ) -> ValidationOutcome:
        read = iso_sex(reading.sex) if reading.sex else None
        wanted = subject.declared.get("sex")
        matches = read is not None and (wanted is None or iso_sex(wanted) == read)
        score = reading.confidences.get("sex", 0.0)
        return _judged(read, matches, score, found, close=score < READ_BOUNDARY)
