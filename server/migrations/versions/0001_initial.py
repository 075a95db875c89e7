"""The schema as create_all made it before migrations

Revision ID: 0001
Revises: (none: the first revision)
Create Date: 2026-11-23
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:

    op.create_table(
        "companies",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("consumed_inspections", sa.Integer(), nullable=False),
        sa.Column("webhook_secret", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.create_table(
        "idempotency_records",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("company_id", sa.String(length=32), nullable=False),
        sa.Column("mode", sa.String(length=8), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("content_type", sa.String(length=200), nullable=True),
        sa.Column("body", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("company_id", "mode", "key", name="uq_idempotency_company_mode_key"),
    )
    with op.batch_alter_table("idempotency_records", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_idempotency_records_expires_at"), ["expires_at"], unique=False
        )

    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("max_attempts", sa.Integer(), nullable=False),
        sa.Column("run_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("locked_by", sa.String(length=64), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index("ix_jobs_claim", ["status", "run_at"], unique=False)
        batch_op.create_index("ix_jobs_lease", ["status", "locked_until"], unique=False)

    op.create_table(
        "report_requests",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("inspection_id", sa.String(length=24), nullable=False),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("callback_url", sa.String(length=2048), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("processing_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("failed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("blob_key", sa.String(length=500), nullable=True),
        sa.Column("size", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("report_requests", schema=None) as batch_op:
        batch_op.create_index(
            "ix_report_requests_inspection",
            ["company_id", "testing", "inspection_id"],
            unique=False,
        )

    op.create_table(
        "retired_webhook_secrets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("secret", sa.String(length=200), nullable=False),
        sa.Column("retired_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("retired_webhook_secrets", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_retired_webhook_secrets_company_id"), ["company_id"], unique=False
        )

    op.create_table(
        "template_manifests",
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("template_id", sa.String(length=64), nullable=False),
        sa.Column("manifest", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    op.create_table(
        "webhook_attempts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("delivery_id", sa.String(length=64), nullable=False),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("url", sa.String(length=2048), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_webhook_attempts_delivery_id"), ["delivery_id"], unique=False
        )

    op.create_table(
        "webhook_subscriptions",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("endpoint", sa.String(length=2048), nullable=False),
        sa.Column("events", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("disabled_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("webhook_subscriptions", schema=None) as batch_op:
        batch_op.create_index(
            "ix_webhook_subscriptions_company", ["company_id", "testing"], unique=False
        )

    op.create_table(
        "api_keys",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("company_id", sa.String(length=32), nullable=False),
        sa.Column("mode", sa.String(length=8), nullable=False),
        sa.Column("key_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_api_keys_company_id"), ["company_id"], unique=False)

    op.create_table(
        "inspections",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("veredict", sa.String(length=16), nullable=False),
        sa.Column("consumer_identification", sa.String(length=200), nullable=True),
        sa.Column("plate", sa.String(length=200), nullable=True),
        sa.Column("template_id", sa.String(length=64), nullable=False),
        sa.Column("manifest_key", sa.String(length=64), nullable=False),
        sa.Column("access_code_hash", sa.String(length=64), nullable=False),
        sa.Column("callback_url", sa.String(length=2048), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("state", sa.JSON(), nullable=False),
        sa.Column("document", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(
            ["manifest_key"],
            ["template_manifests.key"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("inspections", schema=None) as batch_op:
        batch_op.create_index(
            "ix_inspections_chronological",
            ["company_id", "testing", "created_at", "id"],
            unique=False,
        )
        batch_op.create_index(
            "ix_inspections_consumer_identification",
            ["company_id", "testing", "consumer_identification", "created_at", "id"],
            unique=False,
        )
        batch_op.create_index("ix_inspections_expiry", ["status", "expires_at"], unique=False)
        batch_op.create_index(
            "ix_inspections_plate",
            ["company_id", "testing", "plate", "created_at", "id"],
            unique=False,
        )
        batch_op.create_index(
            "ix_inspections_status",
            ["company_id", "testing", "status", "created_at", "id"],
            unique=False,
        )
        batch_op.create_index(
            "ix_inspections_template_id",
            ["company_id", "testing", "template_id", "created_at", "id"],
            unique=False,
        )
        batch_op.create_index(
            "ix_inspections_type",
            ["company_id", "testing", "type", "created_at", "id"],
            unique=False,
        )
        batch_op.create_index(
            "ix_inspections_veredict",
            ["company_id", "testing", "veredict", "created_at", "id"],
            unique=False,
        )

    op.create_table(
        "members",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("company_id", sa.String(length=32), nullable=False),
        sa.Column("internal_id", sa.String(length=200), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=True),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["company_id"],
            ["companies.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("company_id", "internal_id", name="uq_members_internal_id"),
    )
    with op.batch_alter_table("members", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_members_company_id"), ["company_id"], unique=False)

    op.create_table(
        "templates",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=500), nullable=False),
        sa.Column("name_key", sa.String(length=500), nullable=False),
        sa.Column("inspection_type", sa.String(length=16), nullable=False),
        sa.Column("latest_revision", sa.Integer(), nullable=False),
        sa.Column("manifest_key", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["manifest_key"],
            ["template_manifests.key"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("company_id", "name_key", name="uq_templates_company_name"),
    )
    with op.batch_alter_table("templates", schema=None) as batch_op:
        batch_op.create_index(
            "ix_templates_company_type", ["company_id", "inspection_type"], unique=False
        )

    op.create_table(
        "inspection_images",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("inspection_id", sa.String(length=24), nullable=False),
        sa.Column("product_id", sa.String(length=24), nullable=True),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("blob_key", sa.String(length=500), nullable=False),
        sa.Column("content_type", sa.String(length=200), nullable=False),
        sa.Column("size", sa.Integer(), nullable=False),
        sa.Column("filename", sa.String(length=500), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["inspection_id"],
            ["inspections.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("inspection_images", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_inspection_images_inspection_id"), ["inspection_id"], unique=False
        )

    op.create_table(
        "inspection_products",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("inspection_id", sa.String(length=24), nullable=False),
        sa.Column("company_id", sa.String(length=64), nullable=False),
        sa.Column("testing", sa.Boolean(), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["inspection_id"],
            ["inspections.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("inspection_products", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_inspection_products_inspection_id"), ["inspection_id"], unique=False
        )

    op.create_table(
        "template_revisions",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("template_id", sa.String(length=24), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(), nullable=False),
        sa.Column("manifest_key", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["manifest_key"],
            ["template_manifests.key"],
        ),
        sa.ForeignKeyConstraint(
            ["template_id"],
            ["templates.id"],
        ),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("template_id", "number", name="uq_template_revisions_number"),
    )


def downgrade() -> None:

    op.drop_table("template_revisions")
    with op.batch_alter_table("inspection_products", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_inspection_products_inspection_id"))

    op.drop_table("inspection_products")
    with op.batch_alter_table("inspection_images", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_inspection_images_inspection_id"))

    op.drop_table("inspection_images")
    with op.batch_alter_table("templates", schema=None) as batch_op:
        batch_op.drop_index("ix_templates_company_type")

    op.drop_table("templates")
    with op.batch_alter_table("members", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_members_company_id"))

    op.drop_table("members")
    with op.batch_alter_table("inspections", schema=None) as batch_op:
        batch_op.drop_index("ix_inspections_veredict")
        batch_op.drop_index("ix_inspections_type")
        batch_op.drop_index("ix_inspections_template_id")
        batch_op.drop_index("ix_inspections_status")
        batch_op.drop_index("ix_inspections_plate")
        batch_op.drop_index("ix_inspections_expiry")
        batch_op.drop_index("ix_inspections_consumer_identification")
        batch_op.drop_index("ix_inspections_chronological")

    op.drop_table("inspections")
    with op.batch_alter_table("api_keys", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_api_keys_company_id"))

    op.drop_table("api_keys")
    with op.batch_alter_table("webhook_subscriptions", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_subscriptions_company")

    op.drop_table("webhook_subscriptions")
    with op.batch_alter_table("webhook_attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_webhook_attempts_delivery_id"))

    op.drop_table("webhook_attempts")
    op.drop_table("template_manifests")
    with op.batch_alter_table("retired_webhook_secrets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_retired_webhook_secrets_company_id"))

    op.drop_table("retired_webhook_secrets")
    with op.batch_alter_table("report_requests", schema=None) as batch_op:
        batch_op.drop_index("ix_report_requests_inspection")

    op.drop_table("report_requests")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_jobs_lease")
        batch_op.drop_index("ix_jobs_claim")

    op.drop_table("jobs")
    with op.batch_alter_table("idempotency_records", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_idempotency_records_expires_at"))

    op.drop_table("idempotency_records")
    op.drop_table("companies")
