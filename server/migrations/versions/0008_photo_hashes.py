"""The photos' perceptual hashes (`photo_hashes`), for the `duplicate` validation's look-up
across a company's inspections: one row per uploaded photo, its two 64-bit hashes and their
eight 16-bit bands, each band indexed after the company (`server/images/duplicates.py`).
Photos uploaded before this revision have no row: they are not found as duplicates.

Revision ID: 0008_photo_hashes
Revises: 0007_review
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008_photo_hashes"
down_revision: str | None = "0007_review"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The table as this revision made it (frozen; `server.images.tables` is today's): the id's type,
# the eight 16-bit band columns (whole photo `w0`-`w3`, central crop `c0`-`c3`) and what each
# band index carries on PostgreSQL (`INCLUDE`, for index-only look-ups).
ID_TYPE = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
BAND_COLUMNS = ["w0", "w1", "w2", "w3", "c0", "c1", "c2", "c3"]
INCLUDED_COLUMNS = ["testing", "inspection_id", "image_id", "phash", "phash_center"]


def upgrade() -> None:
    op.create_table(
        "photo_hashes",
        sa.Column("id", ID_TYPE, primary_key=True),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("inspection_id", sa.String(length=24), nullable=False),
        sa.Column("image_id", sa.String(length=24), nullable=False),
        sa.Column("phash", sa.BigInteger(), nullable=False),
        sa.Column("phash_center", sa.BigInteger(), nullable=False),
        *(sa.Column(column, sa.Integer(), nullable=False) for column in BAND_COLUMNS),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    for column in BAND_COLUMNS:
        op.create_index(
            f"ix_photo_hashes_{column}",
            "photo_hashes",
            ["company_id", column],
            postgresql_include=INCLUDED_COLUMNS,
        )


def downgrade() -> None:
    for column in BAND_COLUMNS:
        op.drop_index(f"ix_photo_hashes_{column}", table_name="photo_hashes")
    op.drop_table("photo_hashes")
