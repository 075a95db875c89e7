"""Magic-link delivery: `link_deliveries`, the development `outbox_messages`, and the
inspection's `delivery` view column.

Revision ID: 0003_delivery
Revises: 0002_dashboard
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_delivery"
down_revision: str | None = "0002_dashboard"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "link_deliveries",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("inspection_id", sa.String(length=24), nullable=False),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("channel", sa.String(length=8), nullable=False),
        sa.Column("destination", sa.String(length=320), nullable=False),
        sa.Column("locale", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(length=16), nullable=True),
        sa.Column("provider_message_id", sa.String(length=200), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("link", sa.Text(), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["inspection_id"], ["inspections.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("link_deliveries", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_link_deliveries_inspection_id"), ["inspection_id"], unique=False
        )
    op.create_table(
        "outbox_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("delivery_id", sa.String(length=24), nullable=False),
        sa.Column("channel", sa.String(length=8), nullable=False),
        sa.Column("to", sa.String(length=320), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("html", sa.Text(), nullable=True),
        sa.Column("headers", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("outbox_messages", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_outbox_messages_delivery_id"), ["delivery_id"], unique=False
        )
    with op.batch_alter_table("inspections", schema=None) as batch_op:
        batch_op.add_column(sa.Column("delivery", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("inspections", schema=None) as batch_op:
        batch_op.drop_column("delivery")
    with op.batch_alter_table("outbox_messages", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_outbox_messages_delivery_id"))
    op.drop_table("outbox_messages")
    with op.batch_alter_table("link_deliveries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_link_deliveries_inspection_id"))
    op.drop_table("link_deliveries")
