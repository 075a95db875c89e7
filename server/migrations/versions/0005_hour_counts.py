"""Inspections counted per hour of creation (`inspection_hour_counts` and the triggers that keep
it exact, filled once from the rows already there): a deep list page skips whole hours instead
of walking every index entry before it (`server.inspections.hour_counts`).

Revision ID: 0005_hour_counts
Revises: 0004_idempotency_lease
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_hour_counts"
down_revision: str | None = "0004_idempotency_lease"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The triggers keeping `inspection_hour_counts` exact and the statements filling it, as this
# revision made them: its own text, frozen (`server.inspections.hour_counts.TRIGGERS` is
# today's definition, which a later revision changing them copies from).
POSTGRESQL = [
    (
        "\n"
        "CREATE OR REPLACE FUNCTION inspection_hour_counts_maintain() RETURNS trigger\n"
        "LANGUAGE plpgsql AS $$\n"
        "DECLARE\n"
        "    chosen_shard smallint := floor(random() * 16)::smallint;\n"
        "BEGIN\n"
        "    IF TG_OP = 'INSERT' THEN\n"
        "        INSERT INTO inspection_hour_counts AS c (company_id, testing, hour, status, "
        "veredict, type, shard, count)\n"
        "        SELECT company_id, testing, floor(extract(epoch FROM created_at) / "
        "3600)::bigint AS hour, status, veredict, type, chosen_shard, count(*) FROM new_rows\n"
        "        GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6\n"
        "        ON CONFLICT (company_id, testing, hour, status, veredict, type, shard) DO "
        "UPDATE SET count = c.count + EXCLUDED.count;\n"
        "    ELSIF TG_OP = 'DELETE' THEN\n"
        "        INSERT INTO inspection_hour_counts AS c (company_id, testing, hour, status, "
        "veredict, type, shard, count)\n"
        "        SELECT company_id, testing, floor(extract(epoch FROM created_at) / "
        "3600)::bigint AS hour, status, veredict, type, chosen_shard, -count(*) FROM old_rows\n"
        "        GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 3, 4, 5, 6\n"
        "        ON CONFLICT (company_id, testing, hour, status, veredict, type, shard) DO "
        "UPDATE SET count = c.count + EXCLUDED.count;\n"
        "    ELSE\n"
        "        INSERT INTO inspection_hour_counts AS c (company_id, testing, hour, status, "
        "veredict, type, shard, count)\n"
        "        SELECT company_id, testing, hour, status, veredict, type, chosen_shard, "
        "sum(delta) FROM (\n"
        "            SELECT company_id, testing, floor(extract(epoch FROM created_at) / "
        "3600)::bigint AS hour, status, veredict, type, -1 AS delta FROM old_rows\n"
        "            UNION ALL\n"
        "            SELECT company_id, testing, floor(extract(epoch FROM created_at) / "
        "3600)::bigint AS hour, status, veredict, type, 1 AS delta FROM new_rows\n"
        "        ) AS moved\n"
        "        GROUP BY company_id, testing, hour, status, veredict, type HAVING sum(delta) <> "
        "0 ORDER BY company_id, testing, hour, status, veredict, type\n"
        "        ON CONFLICT (company_id, testing, hour, status, veredict, type, shard) DO "
        "UPDATE SET count = c.count + EXCLUDED.count;\n"
        "    END IF;\n"
        "    RETURN NULL;\n"
        "END\n"
        "$$\n"
    ),
    "DROP TRIGGER IF EXISTS inspection_hour_counts_insert ON inspections",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_update ON inspections",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_delete ON inspections",
    """CREATE TRIGGER inspection_hour_counts_insert AFTER INSERT ON inspections
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION inspection_hour_counts_maintain()""",
    """CREATE TRIGGER inspection_hour_counts_update AFTER UPDATE ON inspections
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION inspection_hour_counts_maintain()""",
    """CREATE TRIGGER inspection_hour_counts_delete AFTER DELETE ON inspections
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION inspection_hour_counts_maintain()""",
]
POSTGRESQL_DROP = [
    "DROP TRIGGER IF EXISTS inspection_hour_counts_insert ON inspections",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_update ON inspections",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_delete ON inspections",
    "DROP FUNCTION IF EXISTS inspection_hour_counts_maintain()",
]
SQLITE = [
    "DROP TRIGGER IF EXISTS inspection_hour_counts_insert",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_update",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_delete",
    (
        "CREATE TRIGGER inspection_hour_counts_insert AFTER INSERT ON inspections\n"
        "    BEGIN INSERT INTO inspection_hour_counts (company_id, testing, hour, status, "
        "veredict, type, shard, count) VALUES (NEW.company_id, NEW.testing, CAST(strftime('%s', "
        "substr(NEW.created_at, 1, 19)) AS INTEGER) / 3600, NEW.status, NEW.veredict, NEW.type, "
        "0, 1) ON CONFLICT (company_id, testing, hour, status, veredict, type, shard) DO UPDATE "
        "SET count = count + (1); END"
    ),
    (
        "CREATE TRIGGER inspection_hour_counts_update\n"
        "    AFTER UPDATE OF company_id, testing, created_at, status, veredict, type ON "
        "inspections\n"
        "    WHEN OLD.company_id IS NOT NEW.company_id OR OLD.testing IS NOT NEW.testing\n"
        "      OR OLD.created_at IS NOT NEW.created_at OR OLD.status IS NOT NEW.status\n"
        "      OR OLD.veredict IS NOT NEW.veredict OR OLD.type IS NOT NEW.type\n"
        "    BEGIN INSERT INTO inspection_hour_counts (company_id, testing, hour, status, "
        "veredict, type, shard, count) VALUES (OLD.company_id, OLD.testing, CAST(strftime('%s', "
        "substr(OLD.created_at, 1, 19)) AS INTEGER) / 3600, OLD.status, OLD.veredict, OLD.type, "
        "0, -1) ON CONFLICT (company_id, testing, hour, status, veredict, type, shard) DO UPDATE "
        "SET count = count + (-1); INSERT INTO inspection_hour_counts (company_id, testing, "
        "hour, status, veredict, type, shard, count) VALUES (NEW.company_id, NEW.testing, "
        "CAST(strftime('%s', substr(NEW.created_at, 1, 19)) AS INTEGER) / 3600, NEW.status, "
        "NEW.veredict, NEW.type, 0, 1) ON CONFLICT (company_id, testing, hour, status, veredict, "
        "type, shard) DO UPDATE SET count = count + (1); END"
    ),
    (
        "CREATE TRIGGER inspection_hour_counts_delete AFTER DELETE ON inspections\n"
        "    BEGIN INSERT INTO inspection_hour_counts (company_id, testing, hour, status, "
        "veredict, type, shard, count) VALUES (OLD.company_id, OLD.testing, CAST(strftime('%s', "
        "substr(OLD.created_at, 1, 19)) AS INTEGER) / 3600, OLD.status, OLD.veredict, OLD.type, "
        "0, -1) ON CONFLICT (company_id, testing, hour, status, veredict, type, shard) DO UPDATE "
        "SET count = count + (-1); END"
    ),
]
SQLITE_DROP = [
    "DROP TRIGGER IF EXISTS inspection_hour_counts_insert",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_update",
    "DROP TRIGGER IF EXISTS inspection_hour_counts_delete",
]
BACKFILL_POSTGRESQL = (
    "INSERT INTO inspection_hour_counts (company_id, testing, hour, status, veredict, type, "
    "shard, count) SELECT company_id, testing, floor(extract(epoch FROM created_at) / "
    "3600)::bigint AS hour, status, veredict, type, 0, count(*) FROM inspections GROUP BY 1, 2, "
    "3, 4, 5, 6"
)
BACKFILL_SQLITE = (
    "INSERT INTO inspection_hour_counts (company_id, testing, hour, status, veredict, type, "
    "shard, count) SELECT company_id, testing, CAST(strftime('%s', "
    "substr(inspections.created_at, 1, 19)) AS INTEGER) / 3600 AS hour, status, veredict, type, "
    "0, count(*) FROM inspections GROUP BY 1, 2, 3, 4, 5, 6"
)


def upgrade() -> None:
    op.create_table(
        "inspection_hour_counts",
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("hour", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("veredict", sa.String(length=16), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("shard", sa.Integer(), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint(
            "company_id", "testing", "hour", "status", "veredict", "type", "shard"
        ),
    )
    connection = op.get_bind()
    postgresql = connection.dialect.name == "postgresql"
    if postgresql:
        # No write to inspections between the backfill and the triggers (see 0003_scale).
        connection.exec_driver_sql("LOCK TABLE inspections IN SHARE ROW EXCLUSIVE MODE")
    connection.exec_driver_sql(BACKFILL_POSTGRESQL if postgresql else BACKFILL_SQLITE)
    for statement in POSTGRESQL if postgresql else SQLITE:
        connection.exec_driver_sql(statement)


def downgrade() -> None:
    connection = op.get_bind()
    drops = POSTGRESQL_DROP if connection.dialect.name == "postgresql" else SQLITE_DROP
    for statement in drops:
        connection.exec_driver_sql(statement)
    op.drop_table("inspection_hour_counts")
