"""Template tests saved with each revision (`template_revisions.tests`): the cases of the
revision, in the format of `NAME.tests.json` (docs/language.md), run on every save
(server/templates/service.py). Rows written before hold none.

Revision ID: 0013_template_tests
Revises: 0012_review_queue_facts
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_template_tests"
down_revision: str | None = "0012_review_queue_facts"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("template_revisions") as table:
        table.add_column(sa.Column("tests", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("template_revisions") as table:
        table.drop_column("tests")
