"""Idempotency claims with an owner and a lease (issue 16): a key claimed by a process that died
before storing its response is taken over by the next retry once the lease lapses, instead of
answering 409 until the record expires 24 hours later.

Revision ID: 0004_idempotency_lease
Revises: 0003_scale
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004_idempotency_lease"
down_revision: str | None = "0003_scale"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("idempotency_records", schema=None) as batch_op:
        batch_op.add_column(sa.Column("owner", sa.String(length=100), nullable=True))
        batch_op.add_column(
            sa.Column("lease_expires_at", sa.DateTime(timezone=True), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("idempotency_records", schema=None) as batch_op:
        batch_op.drop_column("lease_expires_at")
        batch_op.drop_column("owner")
