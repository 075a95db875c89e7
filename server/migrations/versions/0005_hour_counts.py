"""Inspections counted per hour of creation (`inspection_hour_counts` and the triggers that keep
it exact, filled once from the rows already there): a deep list page skips whole hours instead
of walking every index entry before it (`server.inspections.hour_counts`).

Revision ID: 0005_hour_counts
Revises: 0004_idempotency_lease
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from server.inspections import hour_counts

revision: str = "0005_hour_counts"
down_revision: str | None = "0004_idempotency_lease"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "inspection_hour_counts",
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("hour", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("veredict", sa.String(length=16), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("shard", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint(
            "company_id", "testing", "hour", "status", "veredict", "type", "shard"
        ),
    )
    connection = op.get_bind()
    if connection.dialect.name == "postgresql":
        # No write to inspections between the backfill and the triggers (see 0003_scale).
        connection.exec_driver_sql("LOCK TABLE inspections IN SHARE ROW EXCLUSIVE MODE")
    hour_counts.backfill(connection)
    hour_counts.install(connection)


def downgrade() -> None:
    hour_counts.uninstall(op.get_bind())
    op.drop_table("inspection_hour_counts")
