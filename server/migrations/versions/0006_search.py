"""The dashboard members' language (`dashboard_preferences`), its share links
(`inspection_share_links`: listed, revocable) and its search:
`inspections.search_text` (accent- and case-folded plate, consumer
name, identification, email, id and metadata values; `server.inspections.searchtext`), filled
from the rows already there, and on PostgreSQL its trigram index (`pg_trgm`, GIN) so that
`LIKE '%term%'` does not read the table.

Revision ID: 0006_search
Revises: 0005_hour_counts
Create Date: 2026-11-25
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0006_search"
down_revision: str | None = "0005_hour_counts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Rows read and written per round trip while filling the column.
BATCH = 2000

# The search text as this revision computed it (frozen: `server.inspections.searchtext` is
# today's, which the service writes on every save).

#: Longest `search_text` stored (characters).
MAX_SEARCH_CHARS = 2000
#: Product fields searched beside the plate.
PRODUCT_FIELDS = ("plate", "make", "model", "vin", "serial", "name", "imei")
#: Consumer fields searched.
CONSUMER_FIELDS = ("identification", "email", "phone")


def fold(text: str) -> str:
    """Accent- and case-folded, every run of non-alphanumerics one space."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return " ".join("".join(c if c.isalnum() else " " for c in plain).split())


def _words(value: Any) -> list[str]:
    if value is None or isinstance(value, (dict, list, bool)):
        return []
    words = fold(str(value)).split()
    return [*words, "".join(words)] if len(words) > 1 else words


def search_text(document: Mapping[str, Any]) -> str:
    """The normalized text a search matches, from a stored state document."""
    parts: list[str] = []
    parts += _words(document.get("_id") or document.get("id"))
    consumer = document.get("consumer")
    if isinstance(consumer, Mapping):
        name = " ".join(
            str(consumer[key])
            for key in ("firstName", "lastName")
            if isinstance(consumer.get(key), str)
        )
        parts += _words(name)
        for key in CONSUMER_FIELDS:
            parts += _words(consumer.get(key))
    for product in document.get("products") or []:
        if not isinstance(product, Mapping):
            continue
        data = product.get("data")
        if not isinstance(data, Mapping):
            data = product.get(product.get("type") or "")
        if isinstance(data, Mapping):
            for key in PRODUCT_FIELDS:
                parts += _words(data.get(key))
    metadata = document.get("metadata")
    if isinstance(metadata, Mapping):
        for value in metadata.values():
            parts += _words(value)
    seen: dict[str, None] = dict.fromkeys(parts)
    return " ".join(seen)[:MAX_SEARCH_CHARS]


def upgrade() -> None:
    op.create_table(
        "dashboard_preferences",
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("locale", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(["account_id"], ["dashboard_accounts.id"]),
        sa.PrimaryKeyConstraint("account_id"),
    )
    op.create_table(
        "inspection_share_links",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("inspection_id", sa.String(length=24), nullable=False),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("created_by", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["inspection_id"], ["inspections.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_inspection_share_links_inspection_id", "inspection_share_links", ["inspection_id"]
    )
    op.add_column("inspections", sa.Column("search_text", sa.Text(), nullable=True))
    connection = op.get_bind()
    table = sa.table(
        "inspections",
        sa.column("id", sa.String()),
        sa.column("state", sa.JSON()),
        sa.column("search_text", sa.Text()),
    )
    last = ""
    while True:
        rows = connection.execute(
            sa.select(table.c.id, table.c.state)
            .where(table.c.id > last)
            .order_by(table.c.id)
            .limit(BATCH)
        ).all()
        if not rows:
            break
        values: list[dict[str, Any]] = [
            {"key": row.id, "text": search_text(row.state if isinstance(row.state, dict) else {})}
            for row in rows
        ]
        connection.execute(
            table.update()
            .where(table.c.id == sa.bindparam("key"))
            .values(search_text=sa.bindparam("text")),
            values,
        )
        last = rows[-1].id
    if connection.dialect.name == "postgresql":
        create_search_index(connection)


def create_search_index(connection: sa.Connection) -> None:
    """The trigram index, its operator class named with the schema `pg_trgm` lives in (an
    extension is once per database, whatever schema the app's `search_path` names)."""
    connection.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
    schema = connection.exec_driver_sql(
        "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
        " WHERE e.extname = 'pg_trgm'"
    ).scalar_one()
    connection.exec_driver_sql(
        "CREATE INDEX ix_inspections_search ON inspections"
        f' USING gin (search_text "{schema}".gin_trgm_ops)'
    )


def downgrade() -> None:
    op.drop_table("dashboard_preferences")
    op.drop_index("ix_inspection_share_links_inspection_id", "inspection_share_links")
    op.drop_table("inspection_share_links")
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index("ix_inspections_search", table_name="inspections")
    op.drop_column("inspections", "search_text")
