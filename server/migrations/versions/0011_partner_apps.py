"""Partner applications through OAuth 2.0 (`server/oauth/`): the registered applications, the
members' authorizations, authorization codes and tokens (every secret stored as its SHA-256);
the inspection's producer as an indexed column (`inspections.producer_id`, filled from each
stored state's `producer.userId`), which a member's own list reads; and who invited each
dashboard account (`dashboard_accounts.invited_by`), which the `all` list reads.

Revision ID: 0011_partner_apps
Revises: 0010_shared_files
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_partner_apps"
down_revision: str | None = "0010_shared_files"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _moment(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "partner_apps",
        sa.Column("id", sa.String(length=64), primary_key=True),
        sa.Column(
            "company_id", sa.String(length=32), sa.ForeignKey("companies.id"), nullable=False
        ),
        sa.Column("mode", sa.String(length=8), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("redirect_uris", sa.JSON(), nullable=False),
        sa.Column("scopes", sa.JSON(), nullable=False),
        sa.Column("secret_hash", sa.String(length=64), nullable=False),
        _moment("created_at"),
        _moment("secret_rotated_at", nullable=True),
    )
    op.create_index("ix_partner_apps_company_id", "partner_apps", ["company_id"])
    op.create_table(
        "partner_authorizations",
        sa.Column("id", sa.String(length=32), primary_key=True),
        sa.Column("app_id", sa.String(length=64), sa.ForeignKey("partner_apps.id"), nullable=False),
        sa.Column("account_id", sa.String(length=32), nullable=False),
        sa.Column(
            "company_id", sa.String(length=32), sa.ForeignKey("companies.id"), nullable=False
        ),
        sa.Column("producer_id", sa.String(length=32), sa.ForeignKey("members.id"), nullable=False),
        sa.Column("scope", sa.String(length=500), nullable=False),
        _moment("created_at"),
        _moment("revoked_at", nullable=True),
        sa.Column("revoked_reason", sa.String(length=32), nullable=True),
    )
    for column in ("app_id", "account_id", "company_id"):
        op.create_index(f"ix_partner_authorizations_{column}", "partner_authorizations", [column])
    op.create_table(
        "partner_codes",
        sa.Column("code_hash", sa.String(length=64), primary_key=True),
        sa.Column(
            "authorization_id",
            sa.String(length=32),
            sa.ForeignKey("partner_authorizations.id"),
            nullable=False,
        ),
        sa.Column("app_id", sa.String(length=64), nullable=False),
        sa.Column("redirect_uri", sa.String(length=2048), nullable=True),
        sa.Column("scope", sa.String(length=500), nullable=False),
        sa.Column("code_challenge", sa.String(length=128), nullable=True),
        sa.Column("code_challenge_method", sa.String(length=16), nullable=True),
        _moment("expires_at"),
        _moment("used_at", nullable=True),
    )
    op.create_index("ix_partner_codes_authorization_id", "partner_codes", ["authorization_id"])
    op.create_table(
        "partner_tokens",
        sa.Column("access_hash", sa.String(length=64), primary_key=True),
        sa.Column("refresh_hash", sa.String(length=64), nullable=False),
        sa.Column(
            "authorization_id",
            sa.String(length=32),
            sa.ForeignKey("partner_authorizations.id"),
            nullable=False,
        ),
        sa.Column("app_id", sa.String(length=64), nullable=False),
        sa.Column("scope", sa.String(length=500), nullable=False),
        _moment("issued_at"),
        _moment("access_expires_at"),
        _moment("refresh_expires_at"),
        _moment("refreshed_at", nullable=True),
        _moment("revoked_at", nullable=True),
    )
    op.create_index("ix_partner_tokens_refresh", "partner_tokens", ["refresh_hash"], unique=True)
    op.create_index("ix_partner_tokens_authorization_id", "partner_tokens", ["authorization_id"])

    op.add_column("inspections", sa.Column("producer_id", sa.String(length=32), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        producer = "NULLIF(state::json -> 'producer' ->> 'userId', '')"
    else:
        producer = "NULLIF(json_extract(state, '$.producer.userId'), '')"
    op.execute(f"UPDATE inspections SET producer_id = {producer}")
    op.create_index(
        "ix_inspections_producer_id",
        "inspections",
        ["company_id", "testing", "producer_id", "created_at", "id"],
    )
    op.add_column(
        "dashboard_accounts", sa.Column("invited_by", sa.String(length=32), nullable=True)
    )


def downgrade() -> None:
    op.drop_column("dashboard_accounts", "invited_by")
    op.drop_index("ix_inspections_producer_id", table_name="inspections")
    op.drop_column("inspections", "producer_id")
    op.drop_index("ix_partner_tokens_authorization_id", table_name="partner_tokens")
    op.drop_index("ix_partner_tokens_refresh", table_name="partner_tokens")
    op.drop_table("partner_tokens")
    op.drop_index("ix_partner_codes_authorization_id", table_name="partner_codes")
    op.drop_table("partner_codes")
    for column in ("app_id", "account_id", "company_id"):
        op.drop_index(f"ix_partner_authorizations_{column}", table_name="partner_authorizations")
    op.drop_table("partner_authorizations")
    op.drop_index("ix_partner_apps_company_id", table_name="partner_apps")
    op.drop_table("partner_apps")
