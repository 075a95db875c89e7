"""Companies' shared template files (`template_shared_files`): the lets, checks and inputs their
templates `include "NAME"`, read when a template is saved (server/templates/service.py).

Revision ID: 0010_shared_files
Revises: 0009_pending_invitations
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_shared_files"
down_revision: str | None = "0009_pending_invitations"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "template_shared_files",
        sa.Column("pk", sa.Integer(), primary_key=True),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("company_id", "name", name="uq_template_shared_files_name"),
    )


def downgrade() -> None:
    op.drop_table("template_shared_files")
