"""Runtime errors: refused requests (`InspectionError`) and refused programs (`InvalidProgram`).

Every exception class of the runtime package derives from `InspectionRuntimeError`.

A refused request never changes the state; its `code` is stable (docs/runtime.md lists every
code) and the server maps it to an HTTP status. A refused program is a manifest whose logic the
runtime will not compile (unknown op, bad name, wrong types, nesting too deep).
"""

from __future__ import annotations

from typing import Any

#: Every request error code with its meaning (kept in step with docs/runtime.md).
ERROR_CODES: dict[str, str] = {
    "wrong_template_provided": "the template is for another inspection type",
    "input_value_not_provided": "a required create input is missing",
    "invalid_input_value": "an input value breaks its validation",
    "invalid_body": "a required product/consumer field is missing, a field has the wrong type, "
    "or the request's shape is wrong",
    "invalid_metadata": "metadata breaks the spec's limits (pairs, key and value length, texts)",
    "invalid_locale": "locale not of the form xx_YY",
    "invalid_initial_status": "initialStatus not created or started",
    "inspection_not_editable": "the inspection is not created, started or processing",
    "invalid_status_transition": "the move is not allowed from the current status",
    "product_not_found": "unknown product id in this inspection",
    "image_not_found": "unknown image id",
    "max_attempts_exceeded": "an upload past the template image's maxAttempts",
    "unknown_validation": "a result for a validation the image does not have or does not run",
    "invalid_validation_result": "confidence outside 0..100 or a malformed result",
    "feature_not_enabled": "the feature (e.g. damage_declaration) is not enabled",
    "update_inputs_missing": "finish while a required update input is still missing",
    "unknown_field": "a product update with a key other than the product's type or its fields",
    "invalid_event": "an event in a log cannot be replayed",
    "template_revision_mismatch": "an event applied with another template revision's program",
    "reason_required": "a reviewer's decision without its reason",
    "inspection_not_in_review": "a review of an inspection that is not waiting for a person",
    "review_conflict": "another person decided, recorded or holds it meanwhile",
    "retake_not_possible": "a retake of an inspection already completed or blocked",
    "validation_not_found": "a review result for a validation the photo does not have",
}

#: Rule errors: evaluation goes on, the expression gives missing, the error is kept in the state.
RULE_ERROR_CODES: dict[str, str] = {
    "division_by_zero": "a division by zero (the result is missing)",
    "number_too_large": "a number result beyond 1e15 in magnitude (the result is missing)",
    "text_too_long": "a text result longer than 10,000 characters (the result is missing)",
    "missing_value": "`set` of a missing value (the variable keeps its value)",
    "step_limit": "more than 100,000 node evaluations in one event (the rest is skipped)",
    "invalid_pattern": "a `matches` pattern that does not compile (the result is missing)",
}


class InspectionRuntimeError(Exception):
    """The base of every exception the runtime package defines."""


class InspectionError(InspectionRuntimeError):
    """A refused request: a stable `code`, a description and per-field `errors`."""

    def __init__(
        self,
        code: str,
        description: str,
        errors: list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(f"{code}: {description}")
        self.code = code
        self.description = description
        self.errors: list[dict[str, Any]] = list(errors or [])

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "description": self.description}
        if self.errors:
            data["errors"] = self.errors
        return data


class InvalidProgram(InspectionRuntimeError):
    """A manifest's logic the runtime refuses to compile; `path` says where in the IR."""

    def __init__(self, message: str, path: str = "logic") -> None:
        super().__init__(f"{path}: {message}")
        self.message = message
        self.path = path


class StepLimitExceeded(InspectionRuntimeError):
    """Raised inside an evaluation when an event used more than `MAX_STEPS` node evaluations."""
