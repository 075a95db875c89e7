"""The ceiling for `bench_api.py`: a bare Litestar app over the same database stack.

`POST /rows` inserts one row through SQLModel in its own transaction; `GET /rows/{id}` reads one
row by primary key. Same SQLAlchemy engine settings as the service (`server.db.Database`: WAL,
`synchronous=FULL`, the same pool), same threading (sync handlers in Litestar's thread pool), same
uvicorn, but no auth, no idempotency, no runtime: whatever the real API reaches is measured
against this.

Run: `python benchmarks/bare_app.py --port 8001 --database-url sqlite:///tmp/bare.sqlite3`.
"""

from __future__ import annotations

import argparse
import secrets
from datetime import UTC, datetime
from typing import Any

import uvicorn
from litestar import Litestar, get, post
from litestar.datastructures import State
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from sqlmodel import Field, SQLModel

from server.db import Database


class BenchRow(SQLModel, table=True):
    __tablename__ = "bench_rows"

    id: str = Field(primary_key=True, max_length=24)
    company_id: str = Field(max_length=32)
    payload: str
    created_at: datetime


@post("/rows", status_code=201, sync_to_thread=True)
def insert_row(state: State) -> dict[str, Any]:
    database: Database = state.db
    row = BenchRow(
        id=secrets.token_hex(12),
        company_id="bench",
        payload='{"plate": "AB123CD"}',
        created_at=datetime.now(UTC),
    )
    with database.session() as session:
        session.add(row)
        session.commit()
    return {"id": row.id}


@get("/rows/{row_id:str}", sync_to_thread=True)
def read_row(state: State, row_id: FromPath[str]) -> dict[str, Any]:
    database: Database = state.db
    with database.session() as session:
        row = session.get(BenchRow, row_id)
        if row is None:
            raise NotFoundException()
        return {"id": row.id, "companyId": row.company_id, "payload": row.payload}


@get("/health", sync_to_thread=False)
def health() -> dict[str, str]:
    return {"status": "ok"}


def create_app(database_url: str) -> Litestar:
    database = Database(database_url)
    SQLModel.metadata.create_all(database.engine, tables=[BenchRow.__table__])  # type: ignore[attr-defined]
    return Litestar(
        route_handlers=[insert_row, read_row, health],
        state=State({"db": database}),
        debug=False,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--database-url", required=True)
    args = parser.parse_args()
    app = create_app(args.database_url)
    uvicorn.run(app, host=args.host, port=args.port, workers=1, ws="none", log_level="info")


if __name__ == "__main__":
    main()
