"""The dashboard's inspection list: search by a partial plate, a name typed without accents or in
another case, an email, an identification, an inspection id or a metadata value; the filters
(status, verdict, type, template, dates, needs review), the sort, everything in the URL; bad
parameters answered 400 with their code on the page; the CSV export of the filtered list, and
that the export streams (100,000 rows never sit in memory at once)."""

from __future__ import annotations

import csv
import io
import secrets
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote_plus

import httpx
import pytest

from server.auth import AuthContext
from server.dashboard import accounts
from server.inspections import search
from server.inspections.searchtext import fold, search_text, terms
from tests.server.test_dashboard_pages import PASSWORD, Browserish

PEOPLE = [
    ("Ana", "Pérez", "20111222", "ana.perez@correo.com.ar", "AB123CD", {"poliza": "POL-7788"}),
    ("João", "Gonçalves", "30999888", "joao@exemplo.com.br", "XYZ9K87", {"poliza": "POL-1234"}),
    ("MARIA", "NUÑEZ", "27555666", "maria@example.com", "AB 999 ZZ", {"sucursal": "Córdoba"}),
]


def test_search_text_folds_accents_case_and_punctuation() -> None:
    assert fold("Pérez-NÚÑEZ  de la Cruz") == "perez nunez de la cruz"
    document = {
        "_id": "0123456789abcdef01234567",
        "consumer": {"firstName": "Ana", "lastName": "Pérez", "email": "Ana.Perez@x.com"},
        "products": [{"type": "car", "data": {"plate": "AB-123-CD", "make": "Toyota"}}],
        "metadata": {"poliza": "POL-7788"},
    }
    text = search_text(document)
    for wanted in ("ana", "perez", "anaperez", "ab123cd", "anaperezxcom", "pol7788", "toyota"):
        assert wanted in text.split(), (wanted, text)
    assert terms("  PÉREZ ana.perez@x  pérez ") == ["perez", "anaperezx"]
    assert search_text({"metadata": {"k": "x" * 5000}}) == "x" * 2000


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"sort": "price"}, "invalid_sort"),
        ({"from": "yesterday"}, "invalid_date"),
        ({"from": "2026-05-02", "to": "2026-05-01"}, "invalid_date"),
        ({"status": "lost"}, "invalid_filter"),
        ({"q": "x" * 201}, "invalid_query"),
        ({"q": "a b c d e f g h i"}, "invalid_query"),
        ({"limit": "1000"}, "invalid_limit"),
        ({"page": "0"}, "invalid_page"),
    ],
)
def test_bad_parameters_have_codes(params: dict[str, str], code: str) -> None:
    with pytest.raises(Exception) as raised:
        search.parse(params)
    assert getattr(raised.value, "code", None) == code


def test_query_round_trips_through_the_url() -> None:
    params = {"q": "perez", "status": "completed", "review": "1", "from": "2026-01-02",
              "to": "2026-02-03", "sort": "plate", "page": "3", "limit": "50"}  # fmt: skip
    assert search.parse(params).params() == params
    assert search.parse({}).params() == {}


#: Each query and the people (indexes into PEOPLE) it lists.
QUERIES = [
    ("q=perez", [0]),
    ("q=P%C3%89REZ", [0]),  # PÉREZ
    ("q=ana+perez", [0]),
    ("q=joao+goncalves", [1]),
    ("q=nunez", [2]),
    ("q=b123", [0]),  # part of a plate
    ("q=AB", [0, 2]),
    ("q=ab+999", [2]),
    ("q=ab999zz", [2]),
    ("q=30999888", [1]),
    ("q=maria%40example.com", [2]),
    ("q=pol-1234", [1]),
    ("q=cordoba", [2]),
    ("q=nobody", []),
    ("q=100%25", []),  # LIKE's wildcard is a character, not "anything"
]
#: The terms of those queries that could also be part of a random hex id: the id is searched
#: like any field (`search_text`), so an id holding "ab" is listed for `q=ab`, as it should be
#: ("100%" is the term "100": a query's punctuation folds away).
HEX_TERMS = sorted(
    {
        term
        for query, _ in QUERIES
        for term in terms(unquote_plus(query.removeprefix("q=")))
        if set(term) <= set("0123456789abcdef")
    }
)


@pytest.fixture(scope="module")
def people(live_server: str, db: Any) -> Iterator[dict[str, Any]]:
    # About one run in four, one of the three random ids holds a term of the queries above
    # ("ab" is in ~9% of ids): the people are then made again in a new company, so the expected
    # lists stay exact instead of failing by chance.
    for _ in range(20):
        made = _make_people(live_server, db)
        if not any(term in i for i in made["ids"] for term in HEX_TERMS):
            break
    else:
        raise AssertionError("20 companies in a row drew an id holding a query term")
    client = Browserish(live_server)
    assert client.sign_in(made["email"]).status_code == 303
    yield {**made, "client": client}
    client.http.close()


def _make_people(live_server: str, db: Any) -> dict[str, Any]:
    from server.auth import create_company

    company = create_company(db, f"Search {secrets.token_hex(3)}", ["m"])
    email = f"owner-{secrets.token_hex(3)}@example.com"
    accounts.create_account(db, company["companyId"], email, "owner", PASSWORD)
    ids = []
    for first, last, identification, mail, plate, metadata in PEOPLE:
        body = {
            "templateId": "easy",
            "locale": "es_AR",
            "consumer": {"firstName": first, "lastName": last,
                         "identification": identification, "email": mail},
            "metadata": metadata,
            "delivery": {"channel": "email", "destination": mail},
            "car": {"plate": plate},
        }  # fmt: skip
        response = httpx.post(
            f"{live_server}/v1/inspection/car", json=body, headers={"x-api-key": company["testKey"]}
        )
        assert response.status_code == 201, response.text
        ids.append(response.json()["inspectionId"])
    return {**company, "ids": ids, "email": email}


def _listed(people: dict[str, Any], query: str) -> list[str]:
    response = people["client"].get(f"/dashboard/inspections?{query}")
    assert response.status_code == 200, response.text
    return [i for i in people["ids"] if f"/dashboard/inspections/{i}" in response.text]


@pytest.mark.parametrize(("query", "who"), QUERIES)
def test_search_finds_by_every_field(people: dict[str, Any], query: str, who: list[int]) -> None:
    assert _listed(people, query) == [people["ids"][i] for i in who]


def test_search_by_inspection_id(people: dict[str, Any]) -> None:
    wanted = people["ids"][1]
    assert _listed(people, f"q={wanted[:12]}") == [wanted]


def test_filters_dates_and_sort_are_in_the_url(people: dict[str, Any]) -> None:
    today = datetime.now(UTC).date()
    assert len(_listed(people, f"from={today}&to={today}")) == 3
    assert _listed(people, f"to={today - timedelta(days=1)}") == []
    assert _listed(people, "status=completed") == []
    assert len(_listed(people, "status=created&veredict=not_provided&type=car")) == 3
    assert _listed(people, "review=1") == []
    assert _listed(people, "status=review") == []
    page = people["client"].get("/dashboard/inspections?q=ab&sort=plate").text
    # By the plate as stored: "AB 999 ZZ" before "AB123CD" (a space sorts before a digit).
    assert page.index(people["ids"][2]) < page.index(people["ids"][0])
    assert 'aria-sort="ascending"' in page
    # The header links keep the search and flip the direction.
    assert "q=ab&amp;sort=-plate" in page
    refused = people["client"].get("/dashboard/inspections?sort=price")
    assert refused.status_code == 400 and "sort must be one of" in refused.text


def test_csv_export_is_the_filtered_list(people: dict[str, Any]) -> None:
    response = people["client"].http.get("/dashboard/inspections.csv?q=ab&sort=-created")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/csv"), response.text[:300]
    assert "attachment" in response.headers["content-disposition"]
    assert "content-length" not in response.headers  # streamed, chunk by chunk
    rows = list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert [row["id"] for row in rows] == [people["ids"][2], people["ids"][0]]
    assert rows[1]["consumer"] == "Ana Pérez"
    assert rows[1]["plate_or_product"] == "AB123CD"
    assert rows[1]["email"] == "ana.perez@correo.com.ar"
    assert people["client"].http.get("/dashboard/inspections.csv?sort=x").status_code == 400


def test_csv_cells_do_not_run_as_formulas() -> None:
    assert search._cell("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert search._cell("@SUM") == "'@SUM"
    assert search._cell("Ana") == "Ana"


def test_export_of_100000_rows_streams(db: Any) -> None:
    """100,000 matching rows exported while tracemalloc watches: the peak stays far below what
    the rows would take at once (about 100 MB of decoded documents, 15 MB of CSV)."""
    from sqlalchemy import insert

    from server.auth import create_company
    from server.inspections.tables import InspectionRecord

    company = create_company(db, f"Export {secrets.token_hex(3)}", ["m"])
    auth = AuthContext(company_id=company["companyId"], mode="test", key_id="t")
    table = InspectionRecord.__table__  # type: ignore[attr-defined]
    document = {"consumer": {"firstName": "Ana", "lastName": "Pérez", "email": "a@b.c"},
                "template": {"name": "Easy"}, "padding": "p" * 800}  # fmt: skip
    start = datetime(2026, 1, 1, tzinfo=UTC)
    total = 100_000
    manifest_key = _any_manifest_key(db)  # once: a query per row took most of this test's time
    with db.engine.begin() as connection:
        for batch in range(0, total, 5000):
            connection.execute(
                insert(table),
                [
                    {"id": f"{company['companyId'][:8]}{n:016x}", "company_id": auth.company_id,
                     "testing": True, "type": "car", "status": "completed",
                     "veredict": "approved", "plate": f"AA{n:06d}", "template_id": "easy",
                     "manifest_key": manifest_key, "access_code_hash": "0" * 64,
                     "created_at": start + timedelta(seconds=n),
                     "updated_at": start + timedelta(seconds=n), "state": {},
                     "document": document, "search_text": f"ana perez aa{n:06d}"}
                    for n in range(batch, batch + 5000)
                ],
            )  # fmt: skip
    query = search.parse({"q": "perez"})
    lines = 0
    size = 0
    tracemalloc.start()
    try:
        for chunk in search.export_csv(db, auth, query):
            lines += chunk.count(b"\n")
            size += len(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert lines == total + 1
    assert size > 10_000_000
    assert peak < 12_000_000, f"peak {peak / 1e6:.1f} MB while exporting {size / 1e6:.1f} MB"


def _any_manifest_key(db: Any) -> str:
    """The key of a stored manifest for the rows to point at: the car built-in's, stored here so
    the test does not depend on an earlier test having made an inspection."""
    from inspectlang.builtins import get_builtin
    from server.templates.service import manifest_key, store_manifest

    manifest = get_builtin("easy", "car")
    assert manifest is not None
    key = manifest_key(manifest)
    with db.session() as session:
        store_manifest(session, key, manifest, datetime.now(UTC))
        session.commit()
    return key
