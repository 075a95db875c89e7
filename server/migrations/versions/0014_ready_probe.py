"""The readiness probe's row: on PostgreSQL `/ready` writes it (an UPSERT in a short transaction
of its own, `server.db.Database.check_writable`), so a read-only database or a full disk shows
as the database check failing, where `SHOW transaction_read_only` said "ok" while writes failed.

Revision ID: 0014_ready_probe
Revises: 0013_template_tests
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_ready_probe"
down_revision: str | None = "0013_template_tests"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ready_probe",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("written_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name"),
    )


def downgrade() -> None:
    op.drop_table("ready_probe")
