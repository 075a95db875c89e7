"""Listing inspections: filters on indexed columns, chronological order, offset paging.

The page is found with a deferred join: the ids of the page are read from the composite index
`(company_id, testing, <filter>, created_at, id)` alone (an index-only walk, no sort), and only
those rows' documents are loaded, in the same statement as the total. The total comes from counts
maintained in the same transaction as every write (`server.inspections.counts`) for no filter and
the status, veredict and type filters, and from `count(*)` through the filter's index for the
selective filters (plate, identification, template). The walk costs one index entry per row
skipped (about 0.1 us each on PostgreSQL, 40 ns on SQLite in this process), so a deep page with
counted filters first skips whole hours through `server.inspections.hour_counts` and walks only
inside the hour of its first row. On PostgreSQL the walk stays index-only only while the
visibility map is set, i.e. once (auto)vacuum has passed over the rows (docs/operations.md,
"Listing"). The paging fields are those of the spec (the mongoose-paginate shape).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from typing import cast as cast_

import msgspec
from sqlalchemy import Connection, Select, Text, cast, func, select

from inspectlang.manifest import INSPECTION_TYPES
from runtime.state import STATUSES as STATUSES  # listed here for the filters
from server.auth import AuthContext
from server.common import content_url, sign_sources
from server.db import Database
from server.errors import ApiError
from server.inspections import counts, hour_counts
from server.inspections.searchtext import like_pattern
from server.inspections.service import present, stored_document
from server.inspections.tables import InspectionCountRecord, InspectionRecord
from server.settings import Settings

#: Page size when none is asked for (spec: default 10).
DEFAULT_LIMIT = 10
#: Largest page size; a larger `limit` is refused with 400 `invalid_limit` (not clamped).
MAX_LIMIT = 100
#: Largest page number accepted (keeps the offset arithmetic and the SQL sane).
MAX_PAGE = 10_000_000
#: Longest filter value accepted.
MAX_FILTER_CHARS = 200

VEREDICTS = ("approved", "disapproved", "not_defined", "not_provided")
#: `veredict=not_provided` (the client libraries' value): no verdict given yet, i.e. the
#: verdict is `not_defined` and the inspection is not completed. `not_defined` alone also
#: matches completed inspections whose template reached no verdict.
NOT_PROVIDED = "not_provided"

#: Query parameter -> (column, allowed values or None for free text).
FILTERS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "status": ("status", STATUSES),
    "veredict": ("veredict", VEREDICTS),
    "type": ("type", INSPECTION_TYPES),
    "consumerIdentification": ("consumer_identification", None),
    "plate": ("plate", None),
    "templateId": ("template_id", None),
}


def _positive_int(raw: str | None, *, name: str, code: str, default: int, maximum: int) -> int:
    if raw is None or raw == "":
        return default
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > 12 or int(text) < 1:
        raise ApiError(
            code,
            400,
            f"{name} must be a whole number from 1 to {maximum}.",
            [{"field": name, "message": f"got {raw[:40]!r}"}],
        )
    value = int(text)
    if value > maximum:
        raise ApiError(
            code,
            400,
            f"{name} must be at most {maximum}.",
            [{"field": name, "message": f"got {value}"}],
        )
    return value


def paging(params: Mapping[str, str | None]) -> tuple[int, int]:
    """(page, limit) from the query; `limit` wins over the spec's `limite` spelling."""
    limit_name = "limit"
    raw_limit = params.get("limit")
    if raw_limit is None or raw_limit == "":
        limit_name, raw_limit = "limite", params.get("limite")
    limit = _positive_int(
        raw_limit, name=limit_name, code="invalid_limit", default=DEFAULT_LIMIT, maximum=MAX_LIMIT
    )
    page = _positive_int(
        params.get("page"), name="page", code="invalid_page", default=1, maximum=MAX_PAGE
    )
    return page, limit


def filters(params: Mapping[str, str | None]) -> dict[str, str]:
    """Column -> value of each filter given; 400 `invalid_filter` for a value out of its set."""
    chosen: dict[str, str] = {}
    for name, (column, allowed) in FILTERS.items():
        value = params.get(name)
        if value is None or value == "":
            continue
        if (allowed is not None and value not in allowed) or len(value) > MAX_FILTER_CHARS:
            expected = f"one of {', '.join(allowed)}" if allowed else "a shorter text"
            raise ApiError(
                "invalid_filter",
                400,
                f"The filter {name} must be {expected}.",
                [{"field": name, "message": f"got {value[:40]!r}"}],
            )
        chosen[column] = value
    return chosen


@dataclass(frozen=True, slots=True)
class Narrowing:
    """What a partner application's list (`GET /v1/inspection/{me|all}`) adds to the filters:
    the producers whose inspections it lists, and a creation-time window. The maintained counts
    do not key on these, so such a list counts through the producer index."""

    producers: tuple[str, ...]
    since: datetime | None = None
    until: datetime | None = None
    #: Words every listed inspection's `search_text` holds (`searchtext.terms` of `search`).
    terms: tuple[str, ...] = ()


def _conditions(
    auth: AuthContext, chosen: Mapping[str, str], narrowing: Narrowing | None = None
) -> list[Any]:
    model = cast_any(InspectionRecord)
    conditions = [model.company_id == auth.company_id, model.testing == auth.testing]
    if narrowing is not None:
        conditions.append(model.producer_id.in_(narrowing.producers))
        if narrowing.since is not None:
            conditions.append(model.created_at >= narrowing.since)
        if narrowing.until is not None:
            conditions.append(model.created_at <= narrowing.until)
        for term in narrowing.terms:
            conditions.append(model.search_text.like(like_pattern(term), escape="\\"))
    for column, value in chosen.items():
        if column == "veredict" and value == NOT_PROVIDED:
            conditions += [model.veredict == "not_defined", model.status != "completed"]
        else:
            conditions.append(getattr(model, column) == value)
    return conditions


def count_statement(
    auth: AuthContext, chosen: Mapping[str, str], narrowing: Narrowing | None = None
) -> Select[Any]:
    """The exact total: `count(*)` over the filter's index entries (index-only)."""
    conditions = _conditions(auth, chosen, narrowing)
    return select(func.count()).select_from(InspectionRecord).where(*conditions)


def total_statement(
    auth: AuthContext, chosen: Mapping[str, str], narrowing: Narrowing | None = None
) -> Select[Any]:
    """The total as one statement: a sum over `inspection_counts` for the counted filters
    (`server.inspections.counts`), else `count_statement`."""
    if narrowing is not None or not maintained(chosen):
        return count_statement(auth, chosen, narrowing)
    table = cast_any(InspectionCountRecord).__table__
    conditions = [table.c.company_id == auth.company_id, table.c.testing == auth.testing]
    conditions += [table.c[column] == value for column, value in chosen.items()]
    return select(func.coalesce(func.sum(table.c.count), 0)).where(*conditions)


def total_of(
    connection: Connection,
    auth: AuthContext,
    chosen: Mapping[str, str],
    narrowing: Narrowing | None = None,
) -> int:
    """`totalInspections`: from the maintained counts for no filter or status / veredict / type
    (`server.inspections.counts`), else `count(*)` through the selective filter's index."""
    if narrowing is None and maintained(chosen):
        return counts.total(connection, auth.company_id, auth.testing, chosen)
    return int(connection.execute(count_statement(auth, chosen, narrowing)).scalar_one())


def maintained(chosen: Mapping[str, str]) -> bool:
    """Whether the maintained counts (`counts`, `hour_counts`) hold these filters' rows:
    `veredict=not_provided` is two conditions they do not key on."""
    return counts.counted(chosen) and chosen.get("veredict") != NOT_PROVIDED


def page_ids_statement(
    auth: AuthContext,
    chosen: Mapping[str, str],
    limit: int,
    offset: int,
    since: datetime | None = None,
    narrowing: Narrowing | None = None,
) -> Select[Any]:
    """The ids of one page, walked in the filter index's own order (index-only, no sort); with
    `since`, from that creation time on (the offset then counts from there)."""
    model = cast_any(InspectionRecord)
    conditions = _conditions(auth, chosen, narrowing)
    if since is not None:
        conditions.append(model.created_at >= since)
    return (
        select(model.id)
        .where(*conditions)
        .order_by(model.created_at, model.id)
        .limit(limit)
        .offset(offset)
    )


def page_statement(
    auth: AuthContext,
    chosen: Mapping[str, str],
    limit: int,
    offset: int,
    since: datetime | None = None,
    narrowing: Narrowing | None = None,
) -> Select[Any]:
    """The page's rows and the total in ONE statement (the total is an uncorrelated scalar
    subquery, computed once): a list costs one round trip, as a GET does. The documents come
    as their stored JSON text, decoded by `_document` (see there)."""
    model = cast_any(InspectionRecord)
    page_ids = page_ids_statement(auth, chosen, limit, offset, since, narrowing).scalar_subquery()
    return (
        select(
            model.id,
            cast(model.document, Text),
            model.delivery,
            total_statement(auth, chosen, narrowing).scalar_subquery(),
        )
        .where(model.id.in_(page_ids))
        .order_by(model.created_at, model.id)
    )


def list_inspections(
    db: Database,
    settings: Settings,
    auth: AuthContext,
    params: Mapping[str, str | None],
    narrowing: Narrowing | None = None,
) -> dict[str, Any]:
    """One page of the caller's inspections (its company and key mode), oldest first; with
    `narrowing`, only those of its producers and creation window."""
    page, limit = paging(params)
    chosen = filters(params)
    offset = (page - 1) * limit
    with db.engine.connect() as connection:  # Core: plain reads, no ORM session needed
        found: tuple[datetime | None, int] | None = (None, offset)
        if offset >= hour_counts.MIN_OFFSET and narrowing is None and maintained(chosen):
            # A deep page: skip the whole hours before it, walk only inside its hour.
            found = hour_counts.skip(connection, auth.company_id, auth.testing, chosen, offset)
        rows: Sequence[Any] = ()
        if found is not None:  # None: fewer rows than the offset, an empty page
            since, walk = found
            statement = page_statement(auth, chosen, limit, walk, since, narrowing)
            rows = connection.execute(statement).all()
        # A page past the end has no row to carry the total: count alone (rare).
        total = int(rows[0][3]) if rows else total_of(connection, auth, chosen, narrowing)
    link_prefix = file_link_prefix(settings.public_url)
    documents = []
    for inspection_id, text, delivery, _ in rows:
        if text is None:
            with db.session() as session:
                document = stored_document(session, inspection_id)
            present(document, inspection_id, auth.company_id, auth.testing, settings, delivery)
        else:
            document = _document(text, link_prefix, settings, auth, inspection_id, delivery)
        documents.append(document)
    total_pages = max(1, -(-total // limit))
    has_prev = page > 1
    has_next = page < total_pages
    return {
        "inspections": documents,
        "totalInspections": total,
        "limit": limit,
        "totalPages": total_pages,
        "page": page,
        "pagingCounter": offset + 1,
        "hasPrevPage": has_prev,
        "hasNextPage": has_next,
        "prevPage": page - 1 if has_prev else None,
        "nextPage": page + 1 if has_next else None,
    }


def file_link_prefix(public_url: str) -> str:
    """What every link to a stored file that `sign_sources` signs starts with."""
    return content_url(public_url, "")[: -len("/content")]


_decode = msgspec.json.Decoder(dict[str, Any]).decode


def _document(
    text: str,
    link_prefix: str,
    settings: Settings,
    auth: AuthContext,
    inspection_id: str,
    delivery: dict[str, Any] | None,
) -> dict[str, Any]:
    """`present` for a document read as JSON text: msgspec decodes it (about 3x faster than
    the driver's `json.loads`), and the walk that signs file links runs only when the text
    holds one (that walk was a third of a page's CPU; most documents link no file)."""
    try:
        document = _decode(text)
    except msgspec.DecodeError:  # beyond msgspec's ranges (an integer over 64 bits): as stored
        document = json.loads(text)
    document["_id"] = inspection_id
    document["testing"] = auth.testing
    if delivery is not None:
        document["delivery"] = delivery
    # A backslash may be an escape hiding a link from the plain search: walk then, to be sure.
    if link_prefix in text or "\\" in text:
        sign_sources(settings, document, auth.company_id, auth.testing)
    return document


def cast_any(model: type[Any]) -> Any:
    return cast_(Any, model)
