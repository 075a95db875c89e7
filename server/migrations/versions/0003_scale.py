"""Scaling past one machine: blobs in the database (`blob_chunks`, the `postgresql` blob URL),
per-key rate-limit counters shared by every API process (`rate_limit_counters`), and the
maintained inspection counts (`inspection_counts` plus the triggers that keep it exact, filled
once from the rows already there).

Revision ID: 0003_scale
Revises: 0003_delivery
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003_scale"
down_revision: str | None = "0003_delivery"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The triggers keeping `inspection_counts` exact and the statement filling it, as this revision
# made them: its own text, frozen (`server.inspections.counts.TRIGGERS` is today's definition,
# which a later revision changing them copies from).
POSTGRESQL = [
    (
        "\n"
        "CREATE OR REPLACE FUNCTION inspection_counts_maintain() RETURNS trigger\n"
        "LANGUAGE plpgsql AS $$\n"
        "DECLARE\n"
        "    chosen_shard smallint := floor(random() * 16)::smallint;\n"
        "BEGIN\n"
        "    IF TG_OP = 'INSERT' THEN\n"
        "        INSERT INTO inspection_counts AS c (company_id, testing, status, veredict, "
        "type, shard, count)\n"
        "        SELECT company_id, testing, status, veredict, type, chosen_shard, count(*) FROM "
        "new_rows\n"
        "        GROUP BY company_id, testing, status, veredict, type ORDER BY company_id, "
        "testing, status, veredict, type\n"
        "        ON CONFLICT (company_id, testing, status, veredict, type, shard) DO UPDATE SET "
        "count = c.count + EXCLUDED.count;\n"
        "    ELSIF TG_OP = 'DELETE' THEN\n"
        "        INSERT INTO inspection_counts AS c (company_id, testing, status, veredict, "
        "type, shard, count)\n"
        "        SELECT company_id, testing, status, veredict, type, chosen_shard, -count(*) "
        "FROM old_rows\n"
        "        GROUP BY company_id, testing, status, veredict, type ORDER BY company_id, "
        "testing, status, veredict, type\n"
        "        ON CONFLICT (company_id, testing, status, veredict, type, shard) DO UPDATE SET "
        "count = c.count + EXCLUDED.count;\n"
        "    ELSE\n"
        "        INSERT INTO inspection_counts AS c (company_id, testing, status, veredict, "
        "type, shard, count)\n"
        "        SELECT company_id, testing, status, veredict, type, chosen_shard, sum(delta) "
        "FROM (\n"
        "            SELECT company_id, testing, status, veredict, type, -1 AS delta FROM "
        "old_rows\n"
        "            UNION ALL\n"
        "            SELECT company_id, testing, status, veredict, type, 1 AS delta FROM "
        "new_rows\n"
        "        ) AS moved\n"
        "        GROUP BY company_id, testing, status, veredict, type HAVING sum(delta) <> 0 "
        "ORDER BY company_id, testing, status, veredict, type\n"
        "        ON CONFLICT (company_id, testing, status, veredict, type, shard) DO UPDATE SET "
        "count = c.count + EXCLUDED.count;\n"
        "    END IF;\n"
        "    RETURN NULL;\n"
        "END\n"
        "$$\n"
    ),
    "DROP TRIGGER IF EXISTS inspection_counts_insert ON inspections",
    "DROP TRIGGER IF EXISTS inspection_counts_update ON inspections",
    "DROP TRIGGER IF EXISTS inspection_counts_delete ON inspections",
    """CREATE TRIGGER inspection_counts_insert AFTER INSERT ON inspections
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION inspection_counts_maintain()""",
    """CREATE TRIGGER inspection_counts_update AFTER UPDATE ON inspections
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION inspection_counts_maintain()""",
    """CREATE TRIGGER inspection_counts_delete AFTER DELETE ON inspections
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION inspection_counts_maintain()""",
]
POSTGRESQL_DROP = [
    "DROP TRIGGER IF EXISTS inspection_counts_insert ON inspections",
    "DROP TRIGGER IF EXISTS inspection_counts_update ON inspections",
    "DROP TRIGGER IF EXISTS inspection_counts_delete ON inspections",
    "DROP FUNCTION IF EXISTS inspection_counts_maintain()",
]
SQLITE = [
    "DROP TRIGGER IF EXISTS inspection_counts_insert",
    "DROP TRIGGER IF EXISTS inspection_counts_update",
    "DROP TRIGGER IF EXISTS inspection_counts_delete",
    (
        "CREATE TRIGGER inspection_counts_insert AFTER INSERT ON inspections\n"
        "    BEGIN INSERT INTO inspection_counts (company_id, testing, status, veredict, type, "
        "shard, count) VALUES (NEW.company_id, NEW.testing, NEW.status, NEW.veredict, NEW.type, "
        "0, 1) ON CONFLICT (company_id, testing, status, veredict, type, shard) DO UPDATE SET "
        "count = count + (1); END"
    ),
    (
        "CREATE TRIGGER inspection_counts_update\n"
        "    AFTER UPDATE OF company_id, testing, status, veredict, type ON inspections\n"
        "    WHEN OLD.company_id IS NOT NEW.company_id OR OLD.testing IS NOT NEW.testing\n"
        "      OR OLD.status IS NOT NEW.status OR OLD.veredict IS NOT NEW.veredict\n"
        "      OR OLD.type IS NOT NEW.type\n"
        "    BEGIN INSERT INTO inspection_counts (company_id, testing, status, veredict, type, "
        "shard, count) VALUES (OLD.company_id, OLD.testing, OLD.status, OLD.veredict, OLD.type, "
        "0, -1) ON CONFLICT (company_id, testing, status, veredict, type, shard) DO UPDATE SET "
        "count = count + (-1); INSERT INTO inspection_counts (company_id, testing, status, "
        "veredict, type, shard, count) VALUES (NEW.company_id, NEW.testing, NEW.status, "
        "NEW.veredict, NEW.type, 0, 1) ON CONFLICT (company_id, testing, status, veredict, type, "
        "shard) DO UPDATE SET count = count + (1); END"
    ),
    (
        "CREATE TRIGGER inspection_counts_delete AFTER DELETE ON inspections\n"
        "    BEGIN INSERT INTO inspection_counts (company_id, testing, status, veredict, type, "
        "shard, count) VALUES (OLD.company_id, OLD.testing, OLD.status, OLD.veredict, OLD.type, "
        "0, -1) ON CONFLICT (company_id, testing, status, veredict, type, shard) DO UPDATE SET "
        "count = count + (-1); END"
    ),
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS inspection_counts_insert",
    "DROP TRIGGER IF EXISTS inspection_counts_update",
    "DROP TRIGGER IF EXISTS inspection_counts_delete",
]
BACKFILL = (
    "INSERT INTO inspection_counts (company_id, testing, status, veredict, type, shard, count) "
    "SELECT company_id, testing, status, veredict, type, 0, count(*) FROM inspections GROUP BY "
    "company_id, testing, status, veredict, type"
)


def upgrade() -> None:
    op.create_table(
        "blob_chunks",
        sa.Column("key", sa.String(length=512), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("key", "seq"),
    )
    op.create_table(
        "rate_limit_counters",
        sa.Column("bucket", sa.String(length=96), nullable=False),
        sa.Column("window_start", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("bucket", "window_start"),
    )
    op.create_table(
        "inspection_counts",
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("veredict", sa.String(length=16), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("shard", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("company_id", "testing", "status", "veredict", "type", "shard"),
    )
    connection = op.get_bind()
    if connection.dialect.name == "postgresql":
        # No write to inspections between the backfill and the triggers (the upgrade runs in
        # one transaction; this lock waits for running writers and holds new ones back).
        connection.exec_driver_sql("LOCK TABLE inspections IN SHARE ROW EXCLUSIVE MODE")
    connection.exec_driver_sql(BACKFILL)
    for statement in POSTGRESQL if connection.dialect.name == "postgresql" else SQLITE:
        connection.exec_driver_sql(statement)


def downgrade() -> None:
    connection = op.get_bind()
    drops = POSTGRESQL_DROP if connection.dialect.name == "postgresql" else SQLITE_DROP
    for statement in drops:
        connection.exec_driver_sql(statement)
    op.drop_table("inspection_counts")
    op.drop_table("rate_limit_counters")
    op.drop_table("blob_chunks")
