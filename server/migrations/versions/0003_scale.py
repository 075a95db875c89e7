"""Scaling past one machine: blobs in the database (`blob_chunks`, the `postgresql` blob URL),
per-key rate-limit counters shared by every API process (`rate_limit_counters`), and the
maintained inspection counts (`inspection_counts` plus the triggers that keep it exact, filled
once from the rows already there).

Revision ID: 0003_scale
Revises: 0003_delivery
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from server.inspections import counts

revision: str = "0003_scale"
down_revision: str | None = "0003_delivery"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "blob_chunks",
        sa.Column("key", sa.String(length=512), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("key", "seq"),
    )
    op.create_table(
        "rate_limit_counters",
        sa.Column("bucket", sa.String(length=96), nullable=False),
        sa.Column("window_start", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("bucket", "window_start"),
    )
    op.create_table(
        "inspection_counts",
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("veredict", sa.String(length=16), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("shard", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("company_id", "testing", "status", "veredict", "type", "shard"),
    )
    connection = op.get_bind()
    if connection.dialect.name == "postgresql":
        # No write to inspections between the backfill and the triggers (the upgrade runs in
        # one transaction; this lock waits for running writers and holds new ones back).
        connection.exec_driver_sql("LOCK TABLE inspections IN SHARE ROW EXCLUSIVE MODE")
    connection.exec_driver_sql(counts.BACKFILL)
    counts.install(connection)


def downgrade() -> None:
    counts.uninstall(op.get_bind())
    op.drop_table("inspection_counts")
    op.drop_table("rate_limit_counters")
    op.drop_table("blob_chunks")
