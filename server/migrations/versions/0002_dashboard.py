"""Dashboard accounts, email-link tokens and the sign-in throttle

Revision ID: 0002_dashboard
Revises: 0002_consumer (the web layer's sessions, which dashboard sign-ins use)
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002_dashboard"
down_revision: str | None = "0002_consumer"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "dashboard_accounts",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("company_id", sa.String(length=32), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("password_hash", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["company_id"], ["companies.id"]),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("email", name="uq_dashboard_accounts_email"),
    )
    with op.batch_alter_table("dashboard_accounts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_dashboard_accounts_company_id"), ["company_id"], unique=False
        )
    op.create_table(
        "dashboard_tokens",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["account_id"], ["dashboard_accounts.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("dashboard_tokens", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_dashboard_tokens_account_id"), ["account_id"], unique=False
        )
    op.create_table(
        "dashboard_login_throttle",
        sa.Column("key", sa.String(length=400), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("window_started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("key"),
    )
    with op.batch_alter_table("dashboard_login_throttle", schema=None) as batch_op:
        batch_op.create_index("ix_dashboard_login_throttle_locked", ["locked_until"], unique=False)


def downgrade() -> None:
    op.drop_table("dashboard_login_throttle")
    op.drop_table("dashboard_tokens")
    op.drop_table("dashboard_accounts")
