"""runtime: runs inspections from compiled template manifests, with no server.

The API (docs/design/runtime-api.md): `load_program(manifest)` once per template revision, then
pure functions from state to state for each event, `to_api` for the spec's Inspection object and
`explain` for why the verdict is what it is.
"""

from __future__ import annotations

from runtime.api_view import to_api
from runtime.engine import (
    add_image,
    add_products,
    blocked_by_expiry,
    create,
    declare_damage,
    expire,
    finish,
    new_object_id,
    record_validation,
    renew,
    replay,
    start,
    update,
    update_product,
)
from runtime.errors import InspectionError, InspectionRuntimeError, InvalidProgram
from runtime.explain import explain
from runtime.program import Program, load_program
from runtime.state import InspectionState
from runtime.transitions import apply_event
from runtime.validators import ImageUpload, ValidationOutcome

__all__ = [
    "ImageUpload",
    "InspectionError",
    "InspectionRuntimeError",
    "InspectionState",
    "InvalidProgram",
    "Program",
    "ValidationOutcome",
    "add_image",
    "add_products",
    "apply_event",
    "blocked_by_expiry",
    "create",
    "declare_damage",
    "expire",
    "explain",
    "finish",
    "load_program",
    "new_object_id",
    "record_validation",
    "renew",
    "replay",
    "start",
    "to_api",
    "update",
    "update_product",
]
