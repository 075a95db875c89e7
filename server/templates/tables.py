"""Tables of templates: compiled manifests (by content key), custom templates and their immutable
revisions.

Template revisions are immutable: a changed template is a new `template_revisions` row, and the
manifest an inspection runs on is referenced by its content key in `template_manifests` (built-in
manifests are stored there too, the first time an inspection uses them), so a later revision or a
code upgrade never changes an existing inspection.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Column, Index, UniqueConstraint
from sqlmodel import Field, SQLModel

from server.tables import timestamp_field


class TemplateManifestRecord(SQLModel, table=True):
    """A compiled manifest, stored once per content key (a hash of its JSON form)."""

    __tablename__ = "template_manifests"

    key: str = Field(primary_key=True, max_length=64)
    template_id: str = Field(max_length=64)
    manifest: dict[str, Any] = Field(sa_column=Column(JSON, nullable=False))
    created_at: datetime = timestamp_field()


class TemplateRecord(SQLModel, table=True):
    """A company's custom template: its stable id, current name and latest revision."""

    __tablename__ = "templates"
    __table_args__ = (
        UniqueConstraint("company_id", "name_key", name="uq_templates_company_name"),
        Index("ix_templates_company_type", "company_id", "inspection_type"),
    )

    id: str = Field(primary_key=True, max_length=24)
    company_id: str = Field(max_length=64)
    name: str = Field(max_length=500)
    #: The name folded to lower case with spaces collapsed: names are unique per company on this.
    name_key: str = Field(max_length=500)
    inspection_type: str = Field(max_length=16)
    latest_revision: int = 1
    manifest_key: str = Field(foreign_key="template_manifests.key", max_length=64)
    created_at: datetime = timestamp_field()
    updated_at: datetime = timestamp_field()


class TemplateRevisionRecord(SQLModel, table=True):
    """One revision of a custom template: the source as written and the manifest it compiled to."""

    __tablename__ = "template_revisions"
    __table_args__ = (
        UniqueConstraint("template_id", "number", name="uq_template_revisions_number"),
    )

    pk: int | None = Field(default=None, primary_key=True)
    template_id: str = Field(foreign_key="templates.id", max_length=24)
    number: int
    source: str
    manifest_key: str = Field(foreign_key="template_manifests.key", max_length=64)
    #: The revision's template tests, `{"cases": [...]}` as in `NAME.tests.json`; None: none.
    tests: dict[str, Any] | None = Field(default=None, sa_column=Column(JSON, nullable=True))
    created_at: datetime = timestamp_field()


class SharedFileRecord(SQLModel, table=True):
    """A company's shared file: lets, checks and inputs its templates `include` by name. It is
    read when a template including it is saved (the manifest then holds its declarations), so
    changing it changes no saved revision (docs/language.md, "Reuse across files")."""

    __tablename__ = "template_shared_files"
    __table_args__ = (UniqueConstraint("company_id", "name", name="uq_template_shared_files_name"),)

    pk: int | None = Field(default=None, primary_key=True)
    company_id: str = Field(max_length=64)
    #: The name `include "NAME"` gives, exactly (`inspectlang.includes.INCLUDE_NAME`).
    name: str = Field(max_length=100)
    source: str
    created_at: datetime = timestamp_field()
    updated_at: datetime = timestamp_field()
