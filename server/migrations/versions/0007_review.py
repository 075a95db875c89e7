"""The review (issue 22): the queue of inspections waiting for a person, their decisions, and
the reviewer's message a retake's link carries.

Revision ID: 0007_review
Revises: 0006_search
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_review"
down_revision: str | None = "0006_search"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "review_queue",
        sa.Column("inspection_id", sa.String(length=24), nullable=False),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("template_name", sa.String(length=200), nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reasons", sa.JSON(), nullable=True),
        sa.Column("pending", sa.Integer(), nullable=False),
        sa.Column("assignee_id", sa.String(length=64), nullable=True),
        sa.Column("assignee_name", sa.String(length=200), nullable=True),
        sa.ForeignKeyConstraint(["inspection_id"], ["inspections.id"]),
        sa.PrimaryKeyConstraint("inspection_id"),
    )
    op.create_index(
        "ix_review_queue_oldest",
        "review_queue",
        ["company_id", "testing", "since", "inspection_id"],
        unique=False,
    )
    op.create_table(
        "review_decisions",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("inspection_id", sa.String(length=24), nullable=False),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("template_name", sa.String(length=200), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("reviewer_id", sa.String(length=64), nullable=False),
        sa.Column("reviewer_name", sa.String(length=200), nullable=False),
        sa.Column("veredict", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("waited_seconds", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["inspection_id"], ["inspections.id"]),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_index(
        "ix_review_decisions_company",
        "review_decisions",
        ["company_id", "testing", "decided_at", "id"],
        unique=False,
    )
    op.create_index(
        "ix_review_decisions_inspection_id", "review_decisions", ["inspection_id"], unique=False
    )
    with op.batch_alter_table("link_deliveries", schema=None) as batch_op:
        batch_op.add_column(sa.Column("note", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("link_deliveries", schema=None) as batch_op:
        batch_op.drop_column("note")
    op.drop_index("ix_review_decisions_inspection_id", table_name="review_decisions")
    op.drop_index("ix_review_decisions_company", table_name="review_decisions")
    op.drop_table("review_decisions")
    op.drop_index("ix_review_queue_oldest", table_name="review_queue")
    op.drop_table("review_queue")
