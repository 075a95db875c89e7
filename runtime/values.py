"""Values, limits and the function library shared by both evaluation paths.

Missing is `None`. Every helper here is total: bad or missing operands give `None` and, where
docs/design/ir.md says so, append a rule error `{"code", "span"}` to the `errors` list it gets.
The compiled path calls these helpers (or inlines the same logic) and the reference path calls
them too, so both give the same values and record the same errors.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable
from typing import Any

# One definition of what a pattern may be, shared with the checker (E029): RE2, linear time.
from inspectlang.patterns import compiled_pattern
from inspectlang.vocabulary import MAX_LITERAL_INTEGER_DIGITS, MAX_NUMBER
from inspectlang.vocabulary import MAX_TEXT_LENGTH as MAX_TEXT

#: Node evaluations allowed per event (rules, checks and verdict together).
MAX_STEPS = 100_000

Span = tuple[int, int, int, int]
Errors = list[dict[str, Any]]


def record(errors: Errors, code: str, span: Span) -> None:
    """Append a rule error; the engine adds where it happened (rule, check, verdict)."""
    errors.append({"code": code, "span": list(span)})


def too_large(errors: Errors, span: Span) -> None:
    record(errors, "number_too_large", span)
    return None


def too_long(errors: Errors, span: Span) -> None:
    record(errors, "text_too_long", span)
    return None


def division_by_zero(errors: Errors, span: Span) -> None:
    record(errors, "division_by_zero", span)
    return None


def check_number(errors: Errors, span: Span, value: Any) -> Any:
    """The number itself, or missing when it is too large (or not a number at all: NaN)."""
    if not -MAX_NUMBER <= value <= MAX_NUMBER:
        too_large(errors, span)
        return None
    return value


def check_text(errors: Errors, span: Span, value: str) -> str | None:
    if len(value) > MAX_TEXT:
        too_long(errors, span)
        return None
    return value


def parse_date(value: Any) -> dt.date | None:
    """An ISO `YYYY-MM-DD` text as a date, or None."""
    if not isinstance(value, str) or len(value) != 10:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        return None


# ----------------------------------------------------------------------------------------------
# Library functions (docs/design/syntax.md). Signature: (errors, span, *arguments).
# ----------------------------------------------------------------------------------------------


def fn_lower(errors: Errors, span: Span, text: Any) -> Any:
    return None if text is None else check_text(errors, span, text.lower())


def fn_upper(errors: Errors, span: Span, text: Any) -> Any:
    return None if text is None else check_text(errors, span, text.upper())


def fn_trim(errors: Errors, span: Span, text: Any) -> Any:
    return None if text is None else text.strip()


def fn_length(errors: Errors, span: Span, value: Any) -> Any:
    return None if value is None else len(value)


def fn_contains(errors: Errors, span: Span, container: Any, item: Any) -> Any:
    if container is None or item is None:
        return None
    return item in container


def fn_starts_with(errors: Errors, span: Span, text: Any, prefix: Any) -> Any:
    if text is None or prefix is None:
        return None
    return bool(text.startswith(prefix))


def fn_ends_with(errors: Errors, span: Span, text: Any, suffix: Any) -> Any:
    if text is None or suffix is None:
        return None
    return bool(text.endswith(suffix))


def fn_matches(errors: Errors, span: Span, text: Any, pattern: Any) -> Any:
    if text is None or pattern is None:
        return None
    compiled = compiled_pattern(pattern)
    if compiled is None:
        record(errors, "invalid_pattern", span)
        return None
    return compiled.search(text) is not None


def fn_round(errors: Errors, span: Span, number: Any, digits: Any = 0) -> Any:
    if number is None or digits is None:
        return None
    places = int(digits)
    if not -20 <= places <= 20:
        return None
    result = round(number, places) if places else round(number)
    return check_number(errors, span, result)


def fn_abs(errors: Errors, span: Span, number: Any) -> Any:
    return None if number is None else abs(number)


def _extreme(pick: Callable[..., Any], arguments: tuple[Any, ...]) -> Any:
    """min/max of a list (missing items skipped; empty gives missing) or of 2+ numbers."""
    if len(arguments) == 1 and isinstance(arguments[0], list):
        present = [v for v in arguments[0] if v is not None]
        return pick(present) if present else None
    if any(v is None for v in arguments):
        return None
    return pick(arguments)


def fn_min(errors: Errors, span: Span, *arguments: Any) -> Any:
    return _extreme(min, arguments)


def fn_max(errors: Errors, span: Span, *arguments: Any) -> Any:
    return _extreme(max, arguments)


def fn_defined(errors: Errors, span: Span, value: Any) -> Any:
    return value is not None


def fn_date(errors: Errors, span: Span, text: Any) -> Any:
    parsed = parse_date(text)
    return None if parsed is None else parsed.isoformat()


def fn_add_days(errors: Errors, span: Span, date: Any, days: Any) -> Any:
    start = parse_date(date)
    if start is None or days is None:
        return None
    try:
        return (start + dt.timedelta(days=int(days))).isoformat()
    except (OverflowError, ValueError):
        return None


def fn_days_between(errors: Errors, span: Span, first: Any, second: Any) -> Any:
    a, b = parse_date(first), parse_date(second)
    if a is None or b is None:
        return None
    return (b - a).days


def fn_years_between(errors: Errors, span: Span, first: Any, second: Any) -> Any:
    a, b = parse_date(first), parse_date(second)
    if a is None or b is None:
        return None
    return b.year - a.year - ((b.month, b.day) < (a.month, a.day))


def as_text(value: Any) -> str:
    """How a value reads inside a text (`text(x)`, `{...}` in a reason): missing is empty,
    booleans `true`/`false`, whole numbers without a point, other numbers with at most 6
    decimals, a date `YYYY-MM-DD`, a list its items joined by `, `."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        rounded = round(value, 6)
        return str(int(rounded)) if rounded.is_integer() else repr(rounded)
    if isinstance(value, list):
        return ", ".join(as_text(item) for item in value if item is not None)
    return str(value)


def fn_text(errors: Errors, span: Span, value: Any) -> Any:
    return check_text(errors, span, as_text(value))


def fn_replace(errors: Errors, span: Span, text: Any, old: Any, new: Any) -> Any:
    """Every occurrence of `old` replaced by `new` (an empty `old` changes nothing)."""
    if text is None or old is None or new is None:
        return None
    if old == "":
        return text
    if new and text.count(old) * max(len(new) - len(old), 0) + len(text) > MAX_TEXT:
        too_long(errors, span)
        return None
    return check_text(errors, span, text.replace(old, new))


def _index(value: Any) -> int | None:
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    return value if isinstance(value, int) else None


def fn_substring(errors: Errors, span: Span, text: Any, start: Any, end: Any = None) -> Any:
    """Characters from `start` (0 is the first) up to `end` excluded (the end when omitted);
    a negative position counts from the end. A position that is not whole gives missing."""
    if text is None or start is None:
        return None
    first = _index(start)
    last = len(text) if end is None else _index(end)
    if first is None or last is None:
        return None
    return text[first:last]


def fn_normalize(errors: Errors, span: Span, text: Any) -> Any:
    """Accents removed, lower case, spaces trimmed and every run of white space one space."""
    if text is None:
        return None
    import unicodedata

    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return check_text(errors, span, " ".join(unicodedata.normalize("NFC", bare).lower().split()))


def fn_extract(errors: Errors, span: Span, text: Any, pattern: Any) -> Any:
    """The first match of `pattern` in `text` (its first group, when it has groups); missing
    when nothing matches."""
    if text is None or pattern is None:
        return None
    compiled = compiled_pattern(pattern)
    if compiled is None:
        record(errors, "invalid_pattern", span)
        return None
    found = compiled.search(text)
    if found is None:
        return None
    return found.group(1) if compiled.groups else found.group(0)


#: What `number(t)` reads: an optional sign, digits with at most one decimal point, nothing
#: else (no exponent, no `_`, no `inf`); spaces around are ignored.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def fn_number(errors: Errors, span: Span, text: Any) -> Any:
    """The number a text writes (`" 042 "` is 42, `"3.5"` 3.5); missing when it writes none or
    one beyond the number range (that records `number_too_large`). A boolean is 1 or 0 (for
    weights and scores: `number(inputs.cracked) * 20`)."""
    if text is None:
        return None
    if isinstance(text, bool):
        return 1 if text else 0
    written = text.strip()
    if _DECIMAL.fullmatch(written) is None:
        return None
    whole = written.lstrip("+-").partition(".")[0].lstrip("0")
    if len(whole) > MAX_LITERAL_INTEGER_DIGITS:
        return too_large(errors, span)
    value: int | float = float(written) if "." in written else int(written)
    return check_number(errors, span, value)


def fn_floor(errors: Errors, span: Span, number: Any) -> Any:
    """The largest whole number not above `number` (`floor(-2.5)` is -3)."""
    return None if number is None else math.floor(number)


def fn_mod(errors: Errors, span: Span, number: Any, divisor: Any) -> Any:
    """The remainder of `number / divisor`, with the divisor's sign (`mod(-1, 10)` is 9, as a
    check digit needs); a zero divisor is missing and records `division_by_zero`."""
    if number is None or divisor is None:
        return None
    if divisor == 0:
        return division_by_zero(errors, span)
    return number % divisor


#: Library functions by name; `today` is not here: it reads the event date (`now` in the data).
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "lower": fn_lower,
    "upper": fn_upper,
    "trim": fn_trim,
    "length": fn_length,
    "contains": fn_contains,
    "starts_with": fn_starts_with,
    "ends_with": fn_ends_with,
    "matches": fn_matches,
    "round": fn_round,
    "abs": fn_abs,
    "min": fn_min,
    "max": fn_max,
    "defined": fn_defined,
    "date": fn_date,
    "add_days": fn_add_days,
    "days_between": fn_days_between,
    "years_between": fn_years_between,
    "text": fn_text,
    "replace": fn_replace,
    "substring": fn_substring,
    "normalize": fn_normalize,
    "extract": fn_extract,
    "number": fn_number,
    "floor": fn_floor,
    "mod": fn_mod,
}


def typed(value: Any, type_name: str) -> Any:
    """The value when it has the expression type `type_name`, else missing (event `value`)."""
    if value is None:
        return None
    if type_name == "number":
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif type_name in ("text", "date"):
        ok = isinstance(value, str) and (type_name == "text" or parse_date(value) is not None)
    elif type_name == "boolean":
        ok = isinstance(value, bool)
    elif type_name == "list<text>":
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    else:
        ok = False
    return value if ok else None
