"""Invitations to addresses that have an account with another company
(`dashboard_pending_invitations`): listed on the inviter's members page like any invitation not
yet accepted (`server/dashboard/accounts.py`), so the page does not tell which addresses are
taken elsewhere.

Revision ID: 0009_pending_invitations
Revises: 0008_photo_hashes
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_pending_invitations"
down_revision: str | None = "0008_photo_hashes"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "dashboard_pending_invitations",
        sa.Column("id", sa.String(length=32), primary_key=True),
        sa.Column(
            "company_id", sa.String(length=32), sa.ForeignKey("companies.id"), nullable=False
        ),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("company_id", "email", name="uq_dashboard_pending_invitations_email"),
    )
    op.create_index(
        "ix_dashboard_pending_invitations_company_id",
        "dashboard_pending_invitations",
        ["company_id"],
    )


def downgrade() -> None:
    op.drop_index(
        "ix_dashboard_pending_invitations_company_id", table_name="dashboard_pending_invitations"
    )
    op.drop_table("dashboard_pending_invitations")
