"""Moments as people read them: one rule for every page, the PDF and the exports.

A moment is shown in the reader's language and in the company's time zone
(`INSPECTLANG_TIME_ZONE`, an IANA name such as `America/Argentina/Buenos_Aires`; UTC when
unset), followed by that zone's name in the reader's language (`hora de Argentina`), so a
dashboard, a report and a CSV of the same inspection say the same time the same way.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from babel import dates as babel_dates

#: The zone when none is configured.
DEFAULT_ZONE = "UTC"


@cache
def zone_of(name: str | None) -> Any:
    """The `tzinfo` of an IANA zone name; UTC for None or a name this machine does not know."""
    if not name or name.upper() == "UTC":
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return UTC


@cache
def zone_name(name: str | None, locale: str) -> str:
    """The zone's name for a reader of `locale`: `hora de Argentina`, `Horário de Brasília`;
    `UTC` for UTC (Babel's long name for it reads "Unknown Region (UTC) Time")."""
    zone = zone_of(name)
    if zone is UTC:
        return "UTC"
    return str(babel_dates.get_timezone_name(zone, locale=locale))


def parse(value: datetime | str | None) -> datetime | None:
    """A moment from a `datetime` or an ISO 8601 string (`...Z` too); None when it is neither."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def format_moment(
    value: datetime | str | None,
    locale: str,
    zone: str | None,
    width: str = "medium",
    *,
    with_zone: bool = True,
) -> str:
    """`28 nov 2026, 10:43:13 (hora de Argentina)`; "" for no moment, the text itself for a
    string that is not one."""
    moment = parse(value)
    if moment is None:
        return "" if value in (None, "") else str(value)
    text = babel_dates.format_datetime(moment, width, tzinfo=zone_of(zone), locale=locale)
    return f"{text} ({zone_name(zone, locale)})" if with_zone else text
