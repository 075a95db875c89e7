"""Machine readable zones (ICAO 9303) of identity documents: TD1 cards (3 lines of 30) and TD3
passports (2 lines of 44), parsed from OCR text with their check digits verified.

OCR of an MRZ errs in known ways: runs of `<` come out a few characters short or long, `<` is
read as `K` or `«`, and `O`/`0`, `I`/`1` swap. Lengths are repaired at the filler runs;
numeric fields take the digit look-alike; the document number, which may hold letters, is
tried in at most three spellings (as read, letters only before its first digit, all digits),
the one its check digit confirms winning: few tries, so that a misread rarely passes by
chance. A field whose check digit fails stays unverified: the caller decides what an
unverified field is worth.

The check digit is ten lines of ICAO 9303 part 3 (weights 7, 3, 1) written here rather than
imported: the `mrz` package that also computes it is GPL-3.0, which the runtime must not pull
in; the tests check this implementation against `mrz` on generated documents.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from runtime.vision.codes import to_digit, to_letter

__all__ = ["MachineZone", "check_digit", "find_zone", "parse_td1", "parse_td3"]

_WEIGHTS = (7, 3, 1)


def _value(char: str) -> int:
    if char.isdigit():
        return int(char)
    if "A" <= char <= "Z":
        return ord(char) - ord("A") + 10
    return 0  # "<" and anything else


def check_digit(data: str) -> str:
    """The ICAO 9303 check digit of `data` (digits, A-Z, `<`)."""
    return str(sum(_value(c) * _WEIGHTS[i % 3] for i, c in enumerate(data)) % 10)


@dataclass(frozen=True)
class MachineZone:
    """The fields of one MRZ, as printed (fillers removed), and which ones their check digits
    confirm (`document_number`, `birthdate`, `expiry`, `composite`)."""

    kind: str  # "TD1" or "TD3"
    document_type: str
    issuer: str
    document_number: str
    surname: str
    given_names: str
    nationality: str
    birthdate: dt.date | None
    sex: str | None  # "M", "F", "X" (unspecified), None when unreadable
    expiry: dt.date | None
    verified: frozenset[str] = field(default_factory=frozenset)
    #: Indices of the OCR texts (`find_zone`'s) the zone was read from, top to bottom: the
    #: name row is the first of a TD3's two and the last of a TD1's three. Empty when the
    #: zone was read from its data line alone (the name row lost).
    rows: tuple[int, ...] = ()

    @property
    def all_verified(self) -> bool:
        return {"document_number", "birthdate", "expiry", "composite"} <= self.verified


def clean_line(text: str) -> str:
    """An OCR line as MRZ characters: upper case, no spaces, chevrons unified to `<`."""
    text = text.upper().replace("«", "<<").replace("\u2039", "<").replace("\uff1c", "<")
    return re.sub(r"[^A-Z0-9<]", "", text)


def fit_length(line: str, length: int) -> str:
    """`line` at exactly `length` characters, adding or removing `<` in its longest filler run
    (where OCR miscounts), else at the end."""
    while len(line) != length:
        runs = list(re.finditer(r"<+", line))
        if len(line) < length:
            at = max(runs, key=lambda m: len(m.group())).end() if runs else len(line)
            line = line[:at] + "<" + line[at:]
        else:
            if runs:
                longest = max(runs, key=lambda m: len(m.group()))
                line = line[: longest.start()] + line[longest.start() + 1 :]
            else:
                line = line[:-1]
    return line


def _aligned(line: str, length: int, checks: Callable[[str], int], slots: tuple[int, ...]) -> str:
    """`line` at `length` characters: a lost `<` goes back into the longest filler run, or at
    one of `slots` when more check digits (`checks`) hold that way. OCR drops the single `<`
    between a short document number and its check digit (`12345678<9`); the slots are only
    such known places, so that a search over many places cannot make a check digit hold by
    chance."""
    best = fit_length(line, length)
    if len(line) >= length:
        return best
    best_checks = checks(best)
    for slot in slots:
        candidate = fit_length(line[:slot] + "<" + line[slot:], length)
        if (found := checks(candidate)) > best_checks:
            best, best_checks = candidate, found
    return best


def _digits(text: str) -> str:
    """A numeric field with letters read as their digit look-alikes (`<` kept)."""
    return "".join(c if c == "<" else (to_digit(c) or c) for c in text)


def _letters(text: str) -> str:
    return "".join(c if c == "<" else (to_letter(c) or c) for c in text)


def _number(raw: str, check: str) -> tuple[str, bool]:
    """The document number field and whether its check digit holds. At most three spellings
    are tried, so that a wrong reading rarely passes by chance: as read; letters kept only
    before the first digit (`AAB123456`) with look-alikes after it made digits; all digits.
    Trailing `K`s are fillers."""
    check = _digits(check)
    body = raw.rstrip("<K")
    fillers = "<" * (len(raw) - len(body))
    first_digit = next((i for i, c in enumerate(body) if c.isdigit()), len(body))
    prefixed = body[:first_digit] + _digits(body[first_digit:])
    for spelled in (raw, prefixed + fillers, _digits(body) + fillers):
        if check_digit(spelled) == check:
            return spelled, True
    return raw, False


def _date(field_text: str, check: str, future: bool) -> tuple[str, dt.date | None, bool]:
    """A YYMMDD field (digit look-alikes fixed), its date, and whether its check digit holds.
    Birthdates are in the past century when the year is ahead of today; expiries never are."""
    digits = _digits(field_text)
    verified = check_digit(digits) == _digits(check)
    try:
        year = int(digits[:2])
        this_year = dt.date.today().year % 100
        century = 2000 if future or year <= this_year else 1900
        return digits, dt.date(century + year, int(digits[2:4]), int(digits[4:6])), verified
    except ValueError:
        return digits, None, verified


def _names(zone: str) -> tuple[str, str]:
    """Surname and given names of an MRZ name field (`PEREZ<GOMEZ<<MARIA<JOSE<<<`). Fillers
    read as `K` are trailing `K` runs of three or more, or any `K` after the first `<`."""
    trailing = re.search(r"[<K]*$", zone)
    if trailing is not None:
        run = trailing.group()
        first_filler = run.find("<")
        if first_filler >= 0 or len(run) >= 3:
            keep = run[: max(first_filler, 0)] if first_filler > 0 else ""
            zone = zone[: trailing.start()] + keep
    if "<<" not in zone and "KK" in zone:
        zone = zone.replace("KK", "<<", 1)
    zone = _letters(zone)  # names hold no digits: 0 is O, 1 is I
    surname, _, rest = zone.partition("<<")
    given = rest.lstrip("<").partition("<<")[
        0
    ]  # only fillers (or OCR debris) follow the given names
    return surname.replace("<", " ").strip(), given.replace("<", " ").strip()


def _sex(char: str) -> str | None:
    """`M`, `F`, `X` (unspecified, also printed `<`), or None when unreadable."""
    return char if char in ("M", "F", "X") else "X" if char == "<" else None


def _td3_second_checks(line: str) -> int:
    return sum(
        (
            _number(line[0:9], line[9])[1],
            check_digit(_digits(line[13:19])) == _digits(line[19]),
            check_digit(_digits(line[21:27])) == _digits(line[27]),
        )
    )


def parse_td3(first: str, second: str) -> MachineZone:
    """A passport's two 44-character lines (lengths repaired here)."""
    first = fit_length(first, 44)
    second = _aligned(second, 44, _td3_second_checks, slots=(8,))
    number, number_ok = _number(second[0:9], second[9])
    birth_text, birthdate, birth_ok = _date(second[13:19], second[19], future=False)
    expiry_text, expiry, expiry_ok = _date(second[21:27], second[27], future=True)
    optional = second[28:43]
    composite = number + _digits(second[9]) + birth_text + _digits(second[19])
    composite += expiry_text + _digits(second[27]) + optional
    composite_ok = check_digit(composite) == _digits(second[43])
    surname, given = _names(first[5:])
    checks = {"document_number": number_ok, "birthdate": birth_ok, "expiry": expiry_ok}
    checks["composite"] = composite_ok
    return MachineZone(
        kind="TD3",
        document_type=first[0:2].replace("<", ""),
        issuer=_letters(first[2:5]).replace("<", ""),
        document_number=number.replace("<", ""),
        surname=surname,
        given_names=given,
        nationality=_letters(second[10:13]).replace("<", ""),
        birthdate=birthdate,
        sex=_sex(second[20]),
        expiry=expiry,
        verified=frozenset(name for name, ok in checks.items() if ok),
    )


def parse_td1(first: str, second: str, third: str) -> MachineZone:
    """An ID card's three 30-character lines (lengths repaired here)."""
    first = _aligned(first, 30, lambda line: _number(line[5:14], line[14])[1], slots=(13,))
    second = fit_length(second, 30)
    third = fit_length(third, 30)
    number, number_ok = _number(first[5:14], first[14])
    birth_text, birthdate, birth_ok = _date(second[0:6], second[6], future=False)
    expiry_text, expiry, expiry_ok = _date(second[8:14], second[14], future=True)
    composite = number + _digits(first[14]) + first[15:30]
    composite += birth_text + _digits(second[6]) + expiry_text + _digits(second[14])
    composite += second[18:29]
    composite_ok = check_digit(composite) == _digits(second[29])
    surname, given = _names(third)
    checks = {"document_number": number_ok, "birthdate": birth_ok, "expiry": expiry_ok}
    checks["composite"] = composite_ok
    return MachineZone(
        kind="TD1",
        document_type=first[0:2].replace("<", ""),
        issuer=_letters(first[2:5]).replace("<", ""),
        document_number=number.replace("<", ""),
        surname=surname,
        given_names=given,
        nationality=_letters(second[15:18]).replace("<", ""),
        birthdate=birthdate,
        sex=_sex(second[7]),
        expiry=expiry,
        verified=frozenset(name for name, ok in checks.items() if ok),
    )


def _looks_like_mrz(line: str) -> bool:
    return len(line) >= 20 and (line.count("<") >= 2 or line.count("K") >= 4)


def find_zone(texts: list[str]) -> MachineZone | None:
    """The MRZ among OCR lines (top to bottom, one text per row): the last two lines of about
    44 characters (TD3) or three of about 30 (TD1); the reading with most check digits
    confirmed when both shapes fit. None when there is no MRZ."""
    rows = [clean_line(text) for text in texts]
    readings: list[MachineZone] = []
    for index in range(len(rows) - 1):
        a, b = rows[index], rows[index + 1]
        # The name line may lose its long filler run to the detector: a short line starting
        # with P above a full second line is still a passport's.
        first_fits = 38 <= len(a) <= 50 or (a.startswith("P") and len(a) >= 10 and "<" in a)
        if first_fits and 38 <= len(b) <= 50 and (_looks_like_mrz(a) or _looks_like_mrz(b)):
            readings.append(replace(parse_td3(a, b), rows=(index, index + 1)))
    for index in range(len(rows) - 2):
        trio = rows[index : index + 3]
        # The detector often cuts a line's trailing filler run: two full lines suffice.
        full = sum(24 <= len(line) <= 36 for line in trio)
        if (
            full >= 2
            and all(12 <= len(line) <= 36 for line in trio)
            and _looks_like_mrz("".join(trio))
        ):
            readings.append(replace(parse_td1(*trio), rows=(index, index + 1, index + 2)))
    if not readings:
        # A passport whose name line OCR lost (a faint or cut first line) still has its data
        # line: alone it gives the number, dates, sex and nationality, each under its check
        # digit; without two of them holding, it is not taken.
        for row in rows:
            if 42 <= len(row) <= 46 and _looks_like_mrz(row) and row[13:19].isdigit():
                zone = parse_td3("P<" + "<" * 42, row)
                if len(zone.verified & {"document_number", "birthdate", "expiry"}) >= 2:
                    readings.append(zone)
    if not readings:
        return None
    return max(readings, key=lambda zone: len(zone.verified))
