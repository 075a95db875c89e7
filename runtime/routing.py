"""Who decides each validation, and why a finished inspection waits for a person.

The deployment says which validations a machine decides here (`machine`: the validators of
this runtime, the local analyzers, the configured outside providers, the names a client posts
to the API); every other run validation is routed to a person when its photo is uploaded
(`ValidationRecord.route`). A person-routed validation never holds `processed` back, so no
inspection stays `processing` waiting on nobody.

At `finish`, `review_reasons` lists why a person must decide before there is a verdict; any
reason puts the inspection in `review` (docs/review.md). The four sources, in this order:

1. `location_declined` / `no_machine_route` / `no_result`: a required validation of a current
   photo has no result (the consumer declined the location it needs, nothing here runs it, or
   its machine had not answered by the finish);
2. `low_confidence`: a machine result below the validation's `reviewBelow` (manifest
   `logic.images.<id>.validations.<name>.reviewBelow`, written by `review below confidence N`);
   the reason keeps the `result`, what the analyzer `seen` when it said, and `machineSaw`, what
   the machine saw as a sentence in the inspection's locale (`runtime.wording.machine_saw`);
3. `rule`: a `review "reason" when ...` rule of the verdict block holds (`Program.reviews`);
4. `rule_error`: a rule of the verdict block could not be evaluated (division by zero, step
   limit...) and the verdict would otherwise approve: fail closed, never `approved` by a
   machine on a rule it could not evaluate.

Reasons 1 and 2 are skipped when the inspection misses a photo or a required input (it is
disapproved on its own, `runtime.missing`); 3 and 4 are not.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from runtime.errors import StepLimitExceeded
from runtime.program import Program
from runtime.state import ImageRecord, InspectionState, RetakeState, Route, ValidationRecord
from runtime.validators import REGISTRY
from runtime.wording import machine_saw, review_reason_text

#: Reason codes of `review.reasons[].code`, with what each means (docs/review.md).
REVIEW_REASON_CODES: dict[str, str] = {
    "no_machine_route": "a required validation no machine of this deployment decides",
    "no_result": "a required validation whose machine had not answered at the finish",
    "low_confidence": "a machine result below the validation's review confidence",
    "rule": "a `review ... when` rule of the template holds",
    "rule_error": "a rule of the verdict could not be evaluated (fail closed)",
    "retake": "photos retaken at a reviewer's request: the reviewer looks at them",
    "location_declined": "a required validation not run: the consumer declined to share the "
    "location it needs",
}


def _reason(code: str, message: str, **where: Any) -> dict[str, Any]:
    """One `review.reasons` item; `code` is one of REVIEW_REASON_CODES."""
    return {"code": code, "message": message, **where}


def route(name: str, machine: Collection[str] | None) -> Route:
    """`machine` when something here decides validation `name`, else `person`.

    `machine=None` means the caller decides every validation itself (an embedder posting
    every result): everything is routed to a machine, as before routing existed.
    """
    if machine is None or name in machine or name in REGISTRY:
        return "machine"
    return "person"


def review_below(program: Program, image: ImageRecord, name: str) -> float | None:
    """The confidence under which a machine result of `name` on this photo goes to a person."""
    logic = program.manifest.logic.images.get(image.templateImageIdentifier or "")
    setting = logic.validations.get(name) if logic is not None else None
    return setting.reviewBelow if setting is not None else None


def low_confidence(program: Program, image: ImageRecord, record: ValidationRecord) -> bool:
    """A machine result under the validation's `reviewBelow`, not yet looked at by a person."""
    limit = review_below(program, image, record.validation)
    return (
        limit is not None
        and record.reported
        and record.reviewedBy is None
        and record.confidence is not None
        and record.confidence < limit
    )


def waits_for_person(program: Program, image: ImageRecord, record: ValidationRecord) -> bool:
    """Whether a person must decide this validation: required with no result, or a machine
    result below its review confidence."""
    if not record.run:
        return False
    if not record.reported:
        return record.required
    return low_confidence(program, image, record)


def pending(program: Program, state: InspectionState) -> list[dict[str, str]]:
    """`review.pending`: `{imageId, validation}` of every current photo's validation waiting
    for a person, in template order."""
    return [
        {"imageId": image.id, "validation": record.validation}
        for product in state.products
        for image in product.images
        for record in image.validations
        if waits_for_person(program, image, record)
    ]


def _validation_reasons(program: Program, state: InspectionState) -> list[dict[str, Any]]:
    locale = state.locale
    reasons: list[dict[str, Any]] = []
    for product in state.products:
        for image in product.images:
            logic = program.manifest.logic.images.get(image.templateImageIdentifier or "")
            label = logic.name if logic is not None else image.side  # the name in the source
            for record in image.validations:
                if not waits_for_person(program, image, record):
                    continue
                where: dict[str, Any] = {
                    "imageId": image.id,
                    "validation": record.validation,
                    "label": label,
                }
                if not record.reported and record.declined == "location":
                    code = "location_declined"
                elif not record.reported and record.route == "person":
                    code = "no_machine_route"
                elif not record.reported:
                    code = "no_result"
                else:
                    code = "low_confidence"
                    where["confidence"] = record.confidence
                    where["reviewBelow"] = review_below(program, image, record.validation)
                    where["result"] = record.result
                    if record.seen is not None:
                        where["seen"] = dict(record.seen)
                reason = _worded(code, locale, **where)
                saw = machine_saw(reason, locale) if code == "low_confidence" else None
                if saw is not None:
                    reason["machineSaw"] = saw
                reasons.append(reason)
    return reasons


def _worded(code: str, locale: str | None, **fields: Any) -> dict[str, Any]:
    """A reason whose message the runtime writes: in `locale`, its fields kept beside it so a
    page re-words it in its reader's language (`runtime.wording.review_reason_text`)."""
    return _reason(code, review_reason_text({"code": code, **fields}, locale), **fields)


def rule_reasons(
    program: Program, env: dict[str, Any], state_locale: str | None = None
) -> list[dict[str, Any]]:
    """The `review ... when` rules that hold, in source order, their reasons in `state_locale`
    where translated; a rule whose condition cannot be evaluated counts as holding (its errors
    are left in `env["errors"]`)."""
    reasons: list[dict[str, Any]] = []
    for index, (_, _, span) in enumerate(program.reviews):
        start = len(env["errors"])
        try:
            reason = program.run_review(index, env, state_locale)
        except StepLimitExceeded:
            env["errors"].append({"code": "step_limit", "span": span})
            reason = None
        if reason is not None:
            reasons.append(_reason("rule", reason, span=list(span)))
        elif len(env["errors"]) > start:
            first = env["errors"][start]
            reasons.append(
                _worded(
                    "rule_error",
                    state_locale,
                    line=span[0],
                    error=str(first["code"]),
                    source="review",
                    span=list(first["span"]),
                )
            )
    return reasons


def error_reasons(errors: list[dict[str, Any]], locale: str | None = None) -> list[dict[str, Any]]:
    """One `rule_error` reason per distinct error of the verdict's evaluation, its message in
    `locale` (`runtime.wording`; English when not given)."""
    seen: set[tuple[str, tuple[int, ...]]] = set()
    reasons: list[dict[str, Any]] = []
    for error in errors:
        key = (str(error["code"]), tuple(error["span"]))
        if key in seen:
            continue
        seen.add(key)
        line = error["span"][0] if error["span"] else 0
        reasons.append(
            _worded(
                "rule_error",
                locale,
                line=line,
                error=str(error["code"]),
                source="verdict",
                span=list(error["span"]),
            )
        )
    return reasons


def retake_reason(retake: RetakeState, locale: str | None = None) -> dict[str, Any]:
    """Why a finish after a reviewer's retake goes back to the reviewer."""
    return _worded("retake", locale, by=retake.by["name"], retakeMessage=retake.message)


def review_reasons(
    program: Program,
    state: InspectionState,
    env: dict[str, Any],
    *,
    missing: bool,
    approved: bool,
    verdict_errors: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Why a person must decide this finished inspection (empty: the machine's verdict
    stands). `approved` is the template verdict's answer, `verdict_errors` the rule errors
    its evaluation left."""
    reasons = [] if missing else _validation_reasons(program, state)
    reasons += rule_reasons(program, env, state.locale)
    if approved and not missing:
        reasons += error_reasons(verdict_errors, state.locale)
    return reasons
