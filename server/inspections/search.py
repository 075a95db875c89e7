"""Finding inspections the way an operations team asks: by a partial plate, a consumer's name
typed without accents, an email, an identification, an inspection id or a metadata value, with
filters (status, verdict, type, template, creation dates, needs review), a sort, and a CSV export
of everything that matches, streamed.

Search matches one normalized column, `search_text`, written with the filter columns on every
save (`search_text(document)`): the values above, accent-folded, case-folded, each as its words
and as one compact word ("Ana Pérez" -> `ana perez anaperez`, "AB-123-CD" -> `ab 123 cd
ab123cd`). A query is split into terms the same way (accents, case and punctuation inside a term
dropped); every term must appear in the row's text as a substring, so "perez", "PÉREZ", "b12",
"ana.perez@mail" all find Ana. On PostgreSQL a trigram GIN index (`pg_trgm`,
`ix_inspections_search`) answers `LIKE '%term%'` without reading the table; SQLite scans.

Totals: exact from the maintained counts when nothing but counted filters is asked
(`listing.total_of`), otherwise counted up to `COUNT_CAP` ("more than 1,000"): an exact count of
a broad search would read every match, and no one pages through a thousand results.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import msgspec
from sqlalchemy import Connection, Select, Text, cast, func, select

from server.auth import AuthContext
from server.db import Database
from server.errors import ApiError
from server.inspections import listing
from server.inspections.searchtext import like_pattern, terms
from server.inspections.tables import InspectionRecord


def create_search_index(connection: Connection) -> None:
    """The trigram index of `search_text` on PostgreSQL (revision 0006 made it so, from its own
    copy): its operator class named with the schema `pg_trgm` lives in (an extension is once
    per database, whatever schema the app's `search_path` names)."""
    connection.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
    schema = connection.exec_driver_sql(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
        " WHERE e.extname = 'pg_trgm'"
    ).scalar_one()
    connection.exec_driver_sql(
        "CREATE INDEX IF NOT EXISTS ix_inspections_search ON inspections"
        f' USING gin (search_text "{schema}".gin_trgm_ops)'
    )


#: The status of an inspection waiting for a person's decision (the review queue's status).
REVIEW_STATUS = "review"
#: Page sizes the dashboard offers; the default first.
PAGE_SIZES = (25, 50, 100)
#: A count past this many matches stops and says "more than".
COUNT_CAP = 1000
#: Longest query accepted (characters), and most terms in one.
MAX_QUERY_CHARS = 200
MAX_TERMS = 8
#: `sort` values: a column of the row and the direction (`-` first: descending).
SORTS: dict[str, str] = {
    "created": "created_at",
    "status": "status",
    "veredict": "veredict",
    "plate": "plate",
    "type": "type",
}
DEFAULT_SORT = "-created"
#: Rows fetched per round trip while exporting (memory stays one batch, whatever the total).
EXPORT_BATCH = 1000
#: The CSV's columns, in order.
CSV_COLUMNS = (
    "id",
    "created",
    "consumer",
    "identification",
    "email",
    "plate_or_product",
    "type",
    "status",
    "verdict",
    "template",
    "delivery_channel",
    "delivery_status",
)


# --- the query ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchQuery:
    """What the list asks for, parsed and checked (`parse`)."""

    text: str = ""
    terms: tuple[str, ...] = ()
    filters: dict[str, str] = field(default_factory=dict)
    needs_review: bool = False
    created_from: date | None = None
    created_to: date | None = None
    sort: str = DEFAULT_SORT
    page: int = 1
    limit: int = PAGE_SIZES[0]

    def params(self, **override: Any) -> dict[str, str]:
        """The query as URL parameters (what `parse` reads back), empty ones left out."""
        names = {v[0]: k for k, v in listing.FILTERS.items()}
        values: dict[str, Any] = {
            "q": self.text,
            **{names[column]: value for column, value in self.filters.items()},
            "review": "1" if self.needs_review else "",
            "from": self.created_from.isoformat() if self.created_from else "",
            "to": self.created_to.isoformat() if self.created_to else "",
            "sort": "" if self.sort == DEFAULT_SORT else self.sort,
            "page": "" if self.page == 1 else str(self.page),
            "limit": "" if self.limit == PAGE_SIZES[0] else str(self.limit),
            **override,
        }
        return {key: str(value) for key, value in values.items() if value not in ("", None)}


def _bad(name: str, code: str, description: str, raw: str) -> ApiError:
    return ApiError(code, 400, description, [{"field": name, "message": f"got {raw[:40]!r}"}])


def _date(params: Mapping[str, str | None], name: str) -> date | None:
    raw = (params.get(name) or "").strip()
    if not raw:
        return None
    try:
        return date.fromisoformat(raw)
    except ValueError:
        raise _bad(name, "invalid_date", f"{name} must be a date, YYYY-MM-DD.", raw) from None


def parse(params: Mapping[str, str | None]) -> SearchQuery:
    """A `SearchQuery` from URL parameters: `q`, the API's filters (`status`, `veredict`,
    `type`, `templateId`, `plate`, `consumerIdentification`), `review=1`, `from`/`to`
    (creation dates, UTC, both inclusive), `sort`, `page`, `limit`. Bad values are refused
    with 400 and a stable code (`invalid_query`, `invalid_filter`, `invalid_date`,
    `invalid_sort`, `invalid_page`, `invalid_limit`)."""
    text = (params.get("q") or "").strip()
    if len(text) > MAX_QUERY_CHARS:
        raise _bad(
            "q", "invalid_query", f"The search has at most {MAX_QUERY_CHARS} characters.", text
        )
    found = terms(text)
    if len(found) > MAX_TERMS:
        raise _bad("q", "invalid_query", f"The search has at most {MAX_TERMS} words.", text)
    status = params.get("status") or ""
    checked = dict(params)
    if status == REVIEW_STATUS and REVIEW_STATUS not in listing.STATUSES:
        checked.pop("status")  # asked as a status before the review status is known here
    chosen = listing.filters(checked)
    if status == REVIEW_STATUS:
        chosen["status"] = REVIEW_STATUS
    created_from, created_to = _date(params, "from"), _date(params, "to")
    if created_from and created_to and created_to < created_from:
        raise _bad("to", "invalid_date", "to must not be before from.", created_to.isoformat())
    sort = params.get("sort") or DEFAULT_SORT
    if sort.removeprefix("-") not in SORTS:
        raise _bad(
            "sort",
            "invalid_sort",
            f"sort must be one of {', '.join(SORTS)} (- first: descending).",
            sort,
        )
    page, limit = listing.paging(
        {"page": params.get("page"), "limit": params.get("limit") or str(PAGE_SIZES[0])}
    )
    return SearchQuery(
        text=text,
        terms=tuple(found),
        filters=chosen,
        needs_review=(params.get("review") or "") in ("1", "true", "on"),
        created_from=created_from,
        created_to=created_to,
        sort=sort,
        page=page,
        limit=limit,
    )


def _conditions(auth: AuthContext, query: SearchQuery) -> list[Any]:
    model = listing.cast_any(InspectionRecord)
    conditions = listing._conditions(auth, query.filters)
    if query.needs_review:
        conditions.append(model.status == REVIEW_STATUS)
    if query.created_from is not None:
        conditions.append(model.created_at >= datetime.combine(query.created_from, time(), UTC))
    if query.created_to is not None:
        end = datetime.combine(query.created_to + timedelta(days=1), time(), UTC)
        conditions.append(model.created_at < end)
    for term in query.terms:
        conditions.append(model.search_text.like(like_pattern(term), escape="\\"))
    return conditions


def _ordered(statement: Select[Any], query: SearchQuery) -> Select[Any]:
    model = listing.cast_any(InspectionRecord)
    descending = query.sort.startswith("-")
    column = getattr(model, SORTS[query.sort.removeprefix("-")])
    keys = [column] if column is not model.created_at else []
    keys += [model.created_at, model.id]
    return statement.order_by(*(key.desc() if descending else key.asc() for key in keys))


def _rows_statement(auth: AuthContext, query: SearchQuery) -> Select[Any]:
    model = listing.cast_any(InspectionRecord)
    return _ordered(
        select(
            model.id,
            model.created_at,
            model.type,
            model.status,
            model.veredict,
            model.plate,
            model.consumer_identification,
            cast(model.document, Text),
            model.delivery,
        ).where(*_conditions(auth, query)),
        query,
    )


def exact_total_available(query: SearchQuery) -> bool:
    """Whether the maintained counts give this query's total (no search, no dates, no review
    flag, only counted filters)."""
    return (
        not query.terms
        and query.created_from is None
        and query.created_to is None
        and not query.needs_review
        and listing.maintained(query.filters)
    )


# --- results ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Row:
    """One inspection as the list shows it."""

    id: str
    created_at: datetime
    type: str
    status: str
    veredict: str
    consumer: str
    identification: str
    email: str
    product: str
    template: str
    delivery_channel: str
    delivery_status: str


@dataclass(frozen=True, slots=True)
class Page:
    rows: list[Row]
    #: Matches counted, exact when `capped` is False, else "more than `total`".
    total: int
    capped: bool
    has_next: bool
    query: SearchQuery


_decode = msgspec.json.Decoder(dict[str, Any]).decode


def _product_label(document: Mapping[str, Any], plate: str | None) -> str:
    if plate:
        return plate
    for product in document.get("products") or []:
        if not isinstance(product, Mapping):
            continue
        data: Any = product.get(product.get("type") or "")
        if not isinstance(data, Mapping):
            data = product.get("data")
        if not isinstance(data, Mapping):
            data = {}
        words = [str(data[k]) for k in ("make", "model", "name", "year") if data.get(k)]
        if words:
            return " ".join(words)
        if product.get("type"):
            return str(product["type"])
    return ""


def _row(raw: Any) -> Row:
    inspection_id, created, kind, status, veredict, plate, identification, text, delivery = raw
    try:
        document = _decode(text) if text else {}
    except msgspec.DecodeError:
        document = {}
    # The Inspection object carries the consumer as `identity` (the state's `consumer`).
    consumer: dict[str, Any] = next(
        (document[k] for k in ("identity", "consumer") if isinstance(document.get(k), dict)), {}
    )
    name = " ".join(
        str(consumer[k]) for k in ("firstName", "lastName") if isinstance(consumer.get(k), str)
    )
    template: Any = document.get("template")
    if not isinstance(template, dict):
        template = {}
    delivery = delivery if isinstance(delivery, dict) else {}
    if created is not None and created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return Row(
        id=inspection_id,
        created_at=created,
        type=kind,
        status=status,
        veredict=veredict,
        consumer=name,
        identification=identification or str(consumer.get("identification") or ""),
        email=str(consumer.get("email") or ""),
        product=_product_label(document, plate),
        template=str(template.get("name") or ""),
        delivery_channel=str(delivery.get("channel") or ""),
        delivery_status=str(delivery.get("status") or ""),
    )


def search(db: Database, auth: AuthContext, query: SearchQuery) -> Page:
    """One page of the caller's inspections (its company and key mode) matching `query`."""
    offset = (query.page - 1) * query.limit
    statement = _rows_statement(auth, query).limit(query.limit + 1).offset(offset)
    with db.engine.connect() as connection:
        raw = connection.execute(statement).all()
        if exact_total_available(query):
            total, capped = listing.total_of(connection, auth, query.filters), False
        else:
            model = listing.cast_any(InspectionRecord)
            matches = (
                select(model.id).where(*_conditions(auth, query)).limit(COUNT_CAP + 1).subquery()
            )
            counted = int(
                connection.execute(select(func.count()).select_from(matches)).scalar_one()
            )
            total, capped = min(counted, COUNT_CAP), counted > COUNT_CAP
    rows = [_row(item) for item in raw[: query.limit]]
    return Page(rows=rows, total=total, capped=capped, has_next=len(raw) > query.limit, query=query)


def export_rows(db: Database, auth: AuthContext, query: SearchQuery) -> Iterator[Row]:
    """Every match of `query` (its page and limit ignored), in its sort order, read in batches
    of `EXPORT_BATCH` through a server-side cursor: memory holds one batch."""
    statement = _rows_statement(auth, query).execution_options(
        stream_results=True, yield_per=EXPORT_BATCH
    )
    with db.engine.connect() as connection:
        for raw in connection.execute(statement):
            yield _row(raw)


def _cell(value: str) -> str:
    """A CSV cell a spreadsheet does not run: a leading =, +, -, @, tab or CR gets a quote
    (OWASP's CSV injection advice)."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def export_csv(db: Database, auth: AuthContext, query: SearchQuery) -> Iterator[bytes]:
    """The CSV of `export_rows`, as chunks of encoded lines (a header first, UTF-8 with a BOM
    so spreadsheets read accents)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(CSV_COLUMNS)
    chunk = "\ufeff" + buffer.getvalue()
    buffer.seek(0)
    buffer.truncate()
    yield chunk.encode()
    for count, row in enumerate(export_rows(db, auth, query), start=1):
        writer.writerow(
            [
                row.id,
                row.created_at.isoformat(timespec="seconds").replace("+00:00", "Z"),
                _cell(row.consumer),
                _cell(row.identification),
                _cell(row.email),
                _cell(row.product),
                row.type,
                row.status,
                row.veredict,
                _cell(row.template),
                row.delivery_channel,
                row.delivery_status,
            ]
        )
        if count % 500 == 0:
            yield buffer.getvalue().encode()
            buffer.seek(0)
            buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue().encode()
