"""The dashboard's inspection list at scale: a search page against a plain list page, same run.

Loads `BENCH_ROWS` (default 1,000,000) inspections of one company on PostgreSQL (a fresh
schema, migrated: the trigram index of `search_text` included), each a clone of one real
inspection with its own consumer (names with accents, from 40 first and 60 last names), plate,
identification, email and metadata value, through `COPY`; then `VACUUM ANALYZE` (what
autovacuum does after a load). Serves the app (`python -m server serve`, this tree), signs
in a dashboard member and measures, in interleaved rounds, the p50 time of:

- `plain`: `/dashboard/inspections` (newest first, the first page, its exact total);
- each search: a last name typed without its accent (about 1 row in 60 matches), a first and
  last name, a partial plate, a whole email, an identification, an inspection id prefix, a
  metadata value, a search with a status filter, a date range, and a search sorted by plate.

The last line is one JSON object: `rows`, `plain_p50_ms`, each search's p50, and
`worst_search_vs_plain` (the largest search p50 over the plain p50; the target is <= 2).
`BENCH_POSTGRES_URL` picks the server; `BENCH_ROUNDS` (default 25) the requests per page.
"""

from __future__ import annotations

import json
import os
import random
import secrets
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_api import free_port, postgres_schema, running  # noqa: E402

ROWS = int(os.environ.get("BENCH_ROWS", "1000000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "25"))
PASSWORD = "bench dashboard password"
FIRST = ["Ana", "María", "José", "João", "Lucía", "Martín", "Sofía", "Tomás", "Valentina",
         "Mateo", "Camila", "Joaquín", "Isabella", "Benjamín", "Emilia", "Agustín", "Julieta",
         "Nicolás", "Florencia", "Ramón", "Inés", "Héctor", "Adrián", "Mónica", "Raúl", "Andrés",
         "Beatriz", "Cecília", "Conceição", "Estêvão", "Gonçalo", "Letícia", "Márcio", "Sebastián",
         "Verónica", "Zoé", "Noé", "Jesús", "Iván", "Óscar"]  # fmt: skip
LAST = ["Pérez", "González", "Rodríguez", "Fernández", "López", "Martínez", "Gómez", "Díaz",
        "Sánchez", "Romero", "Sosa", "Álvarez", "Torres", "Ruiz", "Ramírez", "Flores", "Acosta",
        "Benítez", "Medina", "Suárez", "Herrera", "Aguirre", "Pereyra", "Gutiérrez", "Giménez",
        "Molina", "Silva", "Castro", "Rojas", "Ortiz", "Núñez", "Luna", "Juárez", "Cabrera",
        "Ríos", "Ferreyra", "Godoy", "Morales", "Domínguez", "Moreno", "Peralta", "Vega",
        "Carrizo", "Quiroga", "Castillo", "Ledesma", "Muñoz", "Ojeda", "Ponce", "Vera",
        "Gonçalves", "Araújo", "Conceição", "Magalhães", "Brandão", "Falcão", "Simões",
        "Guimarães", "Assunção", "Lôbo"]  # fmt: skip
CREATE_BODY = {
    "templateId": "easy",
    "locale": "es_AR",
    "consumer": {"firstName": "Ana", "lastName": "Pérez", "identification": "20111222",
                 "email": "ana.perez@correo.com.ar"},
    "metadata": {"poliza": "POL-0000001"},
    "delivery": {"channel": "email", "destination": "ana.perez@correo.com.ar"},
    "car": {"plate": "AA000AA"},
}  # fmt: skip


def person(index: int, rng: random.Random) -> dict[str, str]:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    letters = "ABCDEFGHJKLMNPRSTUVWXYZ"
    plate = (rng.choice(letters) + rng.choice(letters) + f"{rng.randrange(1000):03d}"
             + rng.choice(letters) + rng.choice(letters))  # fmt: skip
    ascii_last = last.encode("ascii", "ignore").decode().lower()
    return {
        "first": first,
        "last": last,
        "identification": f"{20_000_000 + index}",
        "email": f"{first[0].lower()}.{ascii_last}{index}@correo.com.ar",
        "plate": plate,
        "poliza": f"POL-{index:07d}",
    }


def load(database_url: str, inspection_id: str, rows: int) -> dict[str, str]:
    """`rows` clones of the real inspection, each its own person; returns one clone's fields
    (searched for below) and its id."""
    from sqlalchemy import select

    from server.db import Database
    from server.inspections.searchtext import search_text
    from server.inspections.tables import InspectionRecord

    table = InspectionRecord.__table__  # type: ignore[attr-defined]
    database = Database(database_url)
    with database.engine.begin() as connection:
        template = dict(
            connection.execute(select(table).where(table.c.id == inspection_id)).mappings().one()
        )
    columns = [column.name for column in table.columns]
    state_text = json.dumps(template["state"])
    document_text = json.dumps(template["document"])
    delivery_text = json.dumps(template["delivery"]) if template["delivery"] else None
    base = CREATE_BODY["consumer"]
    rng = random.Random(7)
    now = template["created_at"]
    chosen: dict[str, str] = {}
    raw = database.engine.raw_connection()
    try:
        cursor = raw.cursor()
        with cursor.copy(f"COPY {table.name} ({', '.join(columns)}) FROM STDIN") as copy:
            for index in range(rows):
                who = person(index, rng)
                new_id = secrets.token_hex(12)

                def swap(text: str, new_id: str = new_id, who: dict[str, str] = who) -> str:
                    return (
                        text.replace(inspection_id, new_id)
                        .replace(json.dumps(base["firstName"])[1:-1], who["first"])
                        .replace(json.dumps(base["lastName"])[1:-1], who["last"])
                        .replace(base["identification"], who["identification"])
                        .replace(base["email"], who["email"])
                        .replace("AA000AA", who["plate"])
                        .replace("POL-0000001", who["poliza"])
                    )

                state = swap(state_text)
                created = now - timedelta(seconds=rows - index)
                values = {
                    **template,
                    "id": new_id,
                    "created_at": created,
                    "updated_at": created,
                    "plate": who["plate"],
                    "consumer_identification": who["identification"],
                    "state": state,
                    "document": swap(document_text),
                    "delivery": delivery_text,
                    "search_text": search_text(json.loads(state)),
                }
                copy.write_row([values[name] for name in columns])
                if index == rows // 2:
                    chosen = {**who, "id": new_id}
        raw.commit()
    finally:
        raw.close()
    autocommit = database.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
    with autocommit as connection:
        connection.exec_driver_sql(f"VACUUM ANALYZE {table.name}")
        connection.exec_driver_sql("VACUUM ANALYZE inspection_counts")
        connection.exec_driver_sql("VACUUM ANALYZE inspection_hour_counts")
    database.dispose()
    return chosen


def sign_in(base_url: str, email: str) -> httpx.Client:
    import re

    client = httpx.Client(base_url=base_url, timeout=60)
    page = client.get("/dashboard/sign-in").text
    token = re.search(r'name="csrf-token" content="([^"]+)"', page)
    assert token is not None
    answer = client.post("/dashboard/sign-in", data={"email": email, "password": PASSWORD},
                         headers={"x-csrftoken": token.group(1)})  # fmt: skip
    assert answer.status_code == 303, answer.text[:300]
    return client


def main() -> None:
    from server import migrate
    from server.auth import create_company
    from server.dashboard import accounts
    from server.db import Database
    from server.inspections.searchtext import fold

    with postgres_schema() as url, tempfile.TemporaryDirectory() as folder:
        if url is None:
            raise SystemExit("this benchmark needs PostgreSQL (BENCH_POSTGRES_URL)")
        database = Database(url)
        migrate.upgrade(database)
        keys = create_company(database, "Bench Company", ["bench-user"])
        email = "owner@bench.example.com"
        accounts.create_account(database, keys["companyId"], email, "owner", PASSWORD)
        database.dispose()
        port = free_port()
        env = {**os.environ, "INSPECTLANG_WORKER": "0", "INSPECTLANG_SECRET": "b" * 48,
               "INSPECTLANG_RATE_LIMIT_REQUESTS": "0"}  # fmt: skip
        command = [sys.executable, "-m", "server", "serve", "--no-worker", "--port",
                   str(port), "--data-dir", folder, "--database-url", url]  # fmt: skip
        with running(command, port, env, Path(folder) / "serve.log") as base_url:
            created = httpx.post(f"{base_url}/v1/inspection/car", json=CREATE_BODY,
                                 headers={"x-api-key": keys["testKey"]})  # fmt: skip
            created.raise_for_status()
            started = time.perf_counter()
            who = load(url, created.json()["inspectionId"], ROWS)
            print(f"loaded {ROWS} inspections in {time.perf_counter() - started:.0f}s")
            client = sign_in(base_url, email)
            today = datetime.now(UTC).date()
            week = (datetime.now(UTC) - timedelta(days=3)).date()
            last = fold(who["last"])  # "Núñez" typed as "nunez"
            pages = {
                "plain": "",
                "last_name_unaccented": f"q={last}",
                "first_and_last_name": f"q={who['first']}+{who['last']}",
                "partial_plate": f"q={who['plate'][1:5]}",
                "email": f"q={who['email']}",
                "identification": f"q={who['identification']}",
                "id_prefix": f"q={who['id'][:10]}",
                "metadata_value": f"q={who['poliza']}",
                "name_and_status": f"q={last}&status=created",
                "date_range": f"from={week}&to={today}",
                "name_sorted_by_plate": f"q={last}&sort=plate",
            }
            times: dict[str, list[float]] = {name: [] for name in pages}
            for name, query in pages.items():  # warm-up, and each page must answer
                answer = client.get(f"/dashboard/inspections?{query}")
                assert answer.status_code == 200, (name, answer.status_code, answer.text[:300])
            for _ in range(ROUNDS):
                for name, query in pages.items():
                    began = time.perf_counter()
                    answer = client.get(f"/dashboard/inspections?{query}")
                    times[name].append((time.perf_counter() - began) * 1000)
                    assert answer.status_code == 200
            client.close()
    p50 = {name: round(statistics.median(values), 2) for name, values in times.items()}
    for name, value in p50.items():
        print(f"{name:<24} p50 {value:8.2f} ms   ({value / p50['plain']:.2f}x plain)")
    searches = {name: value for name, value in p50.items() if name != "plain"}
    worst = max(searches, key=lambda name: searches[name])
    result: dict[str, Any] = {
        "rows": ROWS,
        "plain_p50_ms": p50["plain"],
        **{f"{name}_p50_ms": value for name, value in searches.items()},
        "worst_search": worst,
        "worst_search_vs_plain": round(searches[worst] / p50["plain"], 2),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
