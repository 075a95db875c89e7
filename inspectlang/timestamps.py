"""The spec's timestamp form: ISO 8601 in UTC ending in `Z` (`2026-05-04T10:20:30.123Z`).

Defined once here, the lowest of the three packages, so the compiler, the runtime and the server
write every moment the same way. This module imports only the standard library.
"""

from __future__ import annotations

from datetime import UTC, datetime


def utc_timestamp(moment: datetime, *, milliseconds: bool = False) -> str:
    """`moment` (an aware datetime) in UTC as ISO 8601 with `Z`; with `milliseconds`, exactly
    three fraction digits, else the fraction only when there is one. A naive datetime is a
    `ValueError`: its zone would be a guess."""
    if moment.tzinfo is None:
        raise ValueError("a timestamp needs an aware datetime")
    text = moment.astimezone(UTC).isoformat(timespec="milliseconds" if milliseconds else "auto")
    return text.replace("+00:00", "Z")
