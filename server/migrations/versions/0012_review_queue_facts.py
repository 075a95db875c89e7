"""The review queue's row names the case as a reviewer looks for it: the declared plate (or
the product's first declared value) and the consumer's name, kept in step by
`server.inspections.review_queue.sync` (rows written before stay empty until their next change).

Revision ID: 0012_review_queue_facts
Revises: 0011_partner_apps
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_review_queue_facts"
down_revision: str | None = "0011_partner_apps"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("review_queue") as table:
        table.add_column(sa.Column("product", sa.String(length=200), nullable=True))
        table.add_column(sa.Column("consumer_name", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("review_queue") as table:
        table.drop_column("consumer_name")
        table.drop_column("product")
