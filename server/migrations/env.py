"""Alembic's environment: runs the migrations on the connection `server.migrate` hands over."""

from __future__ import annotations

from typing import Any, Literal

from alembic import context
from alembic.autogenerate.api import AutogenContext
from sqlalchemy.types import DateTime, String
from sqlmodel import SQLModel
from sqlmodel.sql.sqltypes import AutoString

from server.db import import_table_modules
from server.tables import UtcDateTime

import_table_modules()


def render_item(kind: str, item: Any, autogen: AutogenContext) -> str | Literal[False]:
    """Write columns as plain SQLAlchemy types, so a migration never imports the app's code
    (`UtcDateTime` is a `DateTime(timezone=True)` in the database; `AutoString` a `String`)."""
    if kind == "type" and isinstance(item, UtcDateTime):
        return repr(DateTime(timezone=True)).replace("DateTime", "sa.DateTime")
    if kind == "type" and isinstance(item, AutoString):
        return "sa." + repr(String(length=item.length))
    return False


connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=SQLModel.metadata,
    # SQLite alters a table by copying it: batch mode writes migrations that way.
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
    render_item=render_item,
)
with context.begin_transaction():
    context.run_migrations()
