"""The client libraries' goods requests: `POST /v1/inspection/goods/:id` with `{goods: [...]}`
adds goods to an inspection, with `{good: {...}}` updates one product. The id says which: an
inspection id adds, a product id updates (ids are unique across both, 24 hex characters)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import runtime
from runtime import new_object_id
from server.auth import AuthContext
from server.blobs import BlobStore
from server.common import run_runtime
from server.db import Database
from server.errors import ApiError
from server.inspections import client_shapes
from server.inspections import service as inspections
from server.inspections.tables import InspectionRecord, ProductRecord
from server.settings import Settings


def _owned(record: Any, auth: AuthContext) -> bool:
    return (
        record is not None
        and record.company_id == auth.company_id
        and record.testing == auth.testing
    )


def post_goods(
    db: Database,
    settings: Settings,
    blobs: BlobStore,
    auth: AuthContext,
    target_id: str,
    body: dict[str, Any],
    now: datetime,
) -> tuple[int, dict[str, Any]]:
    """(status, body): 201 `{productIds}` when `target_id` is an inspection, 200 `{message}`
    when it is a goods product; 404 `inspection_not_found` when it is neither."""
    with db.session() as session:
        inspection = session.get(InspectionRecord, target_id)
        product = None if _owned(inspection, auth) else session.get(ProductRecord, target_id)
    if _owned(inspection, auth):
        return 201, add_goods(db, auth, target_id, body, now)
    if _owned(product, auth):
        update = client_shapes.goods_update_body(body, target_id)
        return 200, inspections.update_product(
            db, settings, blobs, auth, "goods", target_id, update, {}, now
        )
    raise ApiError.of("inspection_not_found", "No inspection or goods product with that id.")


def add_goods(
    db: Database, auth: AuthContext, inspection_id: str, body: dict[str, Any], now: datetime
) -> dict[str, Any]:
    """Add `body["goods"]` to the inspection (checked by `runtime.add_products`)."""
    unknown = sorted(set(body) - {"goods"})
    if unknown:
        raise ApiError.of(
            "unknown_field",
            f"unknown fields: {', '.join(unknown)[:200]}",
            [{"field": name[:120], "code": "unknown_field"} for name in unknown[:50]],
        )
    added: list[str] = []

    def ids() -> str:
        added.append(new_object_id())
        return added[-1]

    inspections.change(
        db,
        auth,
        inspection_id,
        lambda loaded: run_runtime(
            runtime.add_products, loaded.program, loaded.state, body.get("goods"), now=now, ids=ids
        ),
        now,
    )  # `save` adds the new products' rows
    return {"message": "Goods added", "productIds": added}
