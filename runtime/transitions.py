"""Applying events: each accepted event changes a copy of the state, then rules and checks run.

`apply_event(program, state, event)` is the only place the state changes. It takes an
`EventRecord` that already holds everything needed (ids, validator outcomes), so applying the
same log again (`engine.replay`) gives the same state. After the change, the rules matching
the event's triggers run in source order, every global check is recomputed in dependency order
and, on `finish`, the verdict is computed (a missing photo or required input disapproves,
`runtime.missing`); rule errors are kept in the state, once each.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from inspectlang.timestamps import utc_timestamp
from runtime.errors import InspectionError, StepLimitExceeded
from runtime.evaldata import build_env, damage_record, input_value, relabel, validation_record
from runtime.missing import MissingItem, missing_items
from runtime.program import Program
from runtime.routing import error_reasons, pending, retake_reason, review_reasons
from runtime.state import (
    DamageRecord,
    Event,
    EventRecord,
    GlobalValidation,
    ImageRecord,
    InspectionState,
    ProductState,
    RetakeState,
    ReviewState,
    RuleErrorRecord,
    TemplateRef,
    ValidationRecord,
    allows,
    move,
    require,
)
from runtime.validators import old_enough
from runtime.wording import LOCALES, say

#: Rule runs kept for the explanation.
MAX_RULE_RUNS = 5_000


def iso(moment: dt.datetime) -> str:
    """An aware datetime as ISO 8601 UTC with milliseconds and `Z` (a naive one: ValueError)."""
    return utc_timestamp(moment, milliseconds=True)


Trigger = tuple[str, dict[str, Any], dict[str, Any]]


def apply_event(
    program: Program, state: InspectionState | None, event: EventRecord, *, owned: bool = False
) -> InspectionState:
    """Apply one event: the new state (the old one is never modified).

    The log keeps a deep copy of `event`, unless `owned` says the caller made it for this call
    alone and will never touch it again (the engine's own events, built from fresh data).
    """
    if event.kind == "create":
        if state is not None:
            raise InspectionError("invalid_event", "create must be the first event")
        _same_revision(program, event.data.get("revision"))
        new, triggers = _apply_create(program, event)
    else:
        if state is None:
            raise InspectionError("invalid_event", "the first event must be create")
        _same_revision(program, state.template.revision)
        new = _copy_state(state)
        handler = _HANDLERS.get(event.kind)
        if handler is None:
            raise InspectionError("invalid_event", f"unknown event kind {event.kind!r}")
        triggers = handler(program, new, event)
    new.events.append(event if owned else event.model_copy(deep=True))
    new.updatedAt = event.at
    _evaluate(program, new, triggers, event)
    return new


def _same_revision(program: Program, revision: str | None) -> None:
    """An inspection keeps the revision it was created from: never run another's rules."""
    if revision and revision != program.revision:
        raise InspectionError(
            "template_revision_mismatch",
            f"the inspection was created from template revision {revision!r},"
            f" not {program.revision!r}",
        )


def _copy_state(state: InspectionState) -> InspectionState:
    """A copy the event may change without touching `state` (copy on write).

    Containers are copied; items of the append-only logs are shared (they never change);
    products are shared until a handler takes its own copy with `own_product`.
    """
    return state.model_copy(
        update={
            "reasons": list(state.reasons),
            "producer": dict(state.producer),
            "metadata": dict(state.metadata),
            "delivery": dict(state.delivery),
            "consumer": dict(state.consumer),
            "inputs": dict(state.inputs),
            "products": list(state.products),
            "variables": dict(state.variables),
            "globalValidations": [item.model_copy() for item in state.globalValidations],
            "attempts": dict(state.attempts),
            "events": list(state.events),
            "ruleErrors": list(state.ruleErrors),
            "ruleRuns": list(state.ruleRuns),
            "extraAttempts": dict(state.extraAttempts),
            "review": _copy_review(state.review),
        }
    )


def _copy_review(review: ReviewState | None) -> ReviewState | None:
    """The review part, with its lists copied (handlers append to them)."""
    if review is None:
        return None
    return review.model_copy(
        update={
            "reasons": list(review.reasons),
            "decisions": list(review.decisions),
            "audit": list(review.audit),
        }
    )


def own_product(state: InspectionState, product_id: str) -> ProductState:
    """The product, copied into `state` first, so the handler may change its fields and lists.

    Its image records stay shared: a handler that changes one takes its own with `own_image`.
    """
    product = find_product(state, product_id)
    owned = product.model_copy(
        update={
            "data": dict(product.data),
            "images": list(product.images),
            "extraImages": list(product.extraImages),
            "damages": list(product.damages),
            "replacedImages": list(product.replacedImages),
        }
    )
    state.products[state.products.index(product)] = owned
    return owned


def own_image(product: ProductState, image_id: str) -> ImageRecord:
    """The image record of an owned product, copied first so the handler may change it.

    Its validation records are copied too (handlers change them); damages are append-only.
    """
    index = next(i for i, image in enumerate(product.images) if image.id == image_id)
    image = product.images[index]
    owned = image.model_copy(
        update={
            "validations": [v.model_copy() for v in image.validations],
            "damages": list(image.damages),
        }
    )
    product.images[index] = owned
    return owned


def _apply_create(program: Program, event: EventRecord) -> tuple[InspectionState, list[Trigger]]:
    data = event.data
    manifest = program.manifest
    expires = manifest.parameters.expiresInHours
    at = dt.datetime.fromisoformat(event.at.replace("Z", "+00:00"))
    state = InspectionState(
        id=data["id"],
        type=data["type"],
        status=data["initialStatus"],
        template=TemplateRef(
            id=manifest.id, name=manifest.name, type="custom", revision=program.revision
        ),
        producer=data["producer"],
        metadata=data["metadata"],
        locale=data["locale"],
        delivery=data["delivery"],
        consumer=data["consumer"],
        inputs=data["inputs"],
        configuration=data.get("configuration", {}),
        products=[
            ProductState(id=data["productId"], type=data["type"], data=data["product"]),
            *(
                ProductState(id=item["productId"], type=data["type"], data=item["fields"])
                for item in data.get("products", ())
            ),
        ],
        variables={v.name: v.initialValue for v in manifest.variables},
        globalValidations=[
            GlobalValidation(id=c.id, name=name, description=description, valid=False)
            for c in program.checks
            for name, description in [c.texts(data["locale"])]
        ],
        createdAt=event.at,
        updatedAt=event.at,
        startedAt=event.at if data["initialStatus"] == "started" else None,
        expiresAt=iso(at + dt.timedelta(hours=expires)) if expires is not None else None,
        testing=bool(data["testing"]),
    )
    triggers: list[Trigger] = [("inspection_created", {}, {})]
    triggers += _input_triggers(program, data["inputs"])
    if data["initialStatus"] == "started":
        triggers.append(("inspection_started", {}, {}))
    return state, triggers


def _input_triggers(program: Program, inputs: dict[str, Any]) -> list[Trigger]:
    return [
        (
            "input_set",
            {"value": input_value(program, spec.identifier, inputs[spec.identifier])},
            {"input": spec.identifier},
        )
        for spec in program.manifest.inputs
        if spec.identifier in inputs
    ]


def _apply_update(program: Program, state: InspectionState, event: EventRecord) -> list[Trigger]:
    move(state, "edit")
    state.consumer.update(event.data["consumer"])
    state.metadata.update(event.data["metadata"])
    state.inputs.update(event.data["inputs"])
    return _input_triggers(program, event.data["inputs"])


def _apply_update_product(
    program: Program, state: InspectionState, event: EventRecord
) -> list[Trigger]:
    move(state, "edit")
    own_product(state, event.data["productId"]).data.update(event.data["fields"])
    return []


def _apply_add_products(
    program: Program, state: InspectionState, event: EventRecord
) -> list[Trigger]:
    move(state, "edit")
    state.products.extend(
        ProductState(id=item["productId"], type=state.type, data=item["fields"])
        for item in event.data["products"]
    )
    return []


def _apply_start(program: Program, state: InspectionState, event: EventRecord) -> list[Trigger]:
    move(state, "start")
    state.startedAt = event.at
    return [("inspection_started", {}, {})]


def _apply_image(program: Program, state: InspectionState, event: EventRecord) -> list[Trigger]:
    move(state, "edit")
    product = own_product(state, event.data["productId"])
    record = ImageRecord.model_validate(event.data["image"])
    if event.data["extra"]:
        product.extraImages.append(record)
        return []
    identifier = record.templateImageIdentifier or ""
    state.attempts[identifier] = state.attempts.get(identifier, 0) + 1
    product.images = [i for i in product.images if i.templateImageIdentifier != identifier]
    product.images.append(record)
    product.images.sort(key=lambda image: _template_order(program, image))
    triggers: list[Trigger] = [("image_uploaded", {"image": identifier}, {"image": identifier})]
    for validation in record.validations:
        if validation.reported:
            triggers.append(_validation_trigger(identifier, validation))
    triggers += _after_results(program, state, record, was_processed=False)
    return triggers


def _apply_validation(
    program: Program, state: InspectionState, event: EventRecord
) -> list[Trigger]:
    move(state, "result")
    found = state.find_image(event.data["imageId"])
    if found is None:
        raise InspectionError("invalid_event", "a validation for an unknown image")
    image = own_image(own_product(state, found[0].id), event.data["imageId"])
    was_processed = image.processed
    record = next(v for v in image.validations if v.validation == event.data["validation"])
    record.confidence = float(event.data["confidence"])
    record.valid = record.confidence >= record.threshold
    record.result = event.data["result"]
    record.seen = event.data.get("seen")
    record.reported = True
    identifier = image.templateImageIdentifier or ""
    if record.validation == "age" and record.valid:
        # A reported age below the template's `minimum age` is not valid, however sure the
        # reader is of it (as for an age this runtime reads itself).
        options = program.validator_options(identifier, "age")
        record.valid = old_enough(record.result, options) is not False
    image.damages.extend(DamageRecord.model_validate(d) for d in event.data["damages"])
    read = {entity["entity"]: entity for entity in event.data.get("entities", ())}
    if read:
        image.entities = [e for e in image.entities if e["entity"] not in read] + list(
            read.values()
        )
    return [
        _validation_trigger(identifier, record),
        *_after_results(program, state, image, was_processed),
    ]


def _apply_damage(program: Program, state: InspectionState, event: EventRecord) -> list[Trigger]:
    move(state, "edit")
    damage = DamageRecord.model_validate(event.data["damage"])
    own_product(state, event.data["productId"]).damages.append(damage)
    return [("damage_declared", {"damage": damage_record(damage)}, {})]


def _apply_finish(program: Program, state: InspectionState, event: EventRecord) -> list[Trigger]:
    """The `on finish` rules run; the verdict then makes the one move (`_verdict`)."""
    require(state, _finish_event(event.data["completedBy"]))
    return [("finish", {}, {})]


def _finish_event(finished_by: str) -> Event:
    """A finish by a timeout never waits for a person (`time_out`); any other may (`finish`)."""
    return "time_out" if finished_by == "expiration" else "finish"


def _review_of(state: InspectionState) -> ReviewState:
    if state.review is None:
        state.review = ReviewState()
    return state.review


def _apply_claim(program: Program, state: InspectionState, event: EventRecord) -> list[Trigger]:
    """A reviewer takes (or, with `release`, gives back) a case of the review queue."""
    move(state, "claim")
    review = _review_of(state)
    before = review.assignee
    review.assignee = None if event.data.get("release") else dict(event.data["by"])
    review.audit.append(_audit("claim", event, {"assignee": before}, {"assignee": review.assignee}))
    return []


def _audit(
    action: str, event: EventRecord, before: Any, after: Any, **where: Any
) -> dict[str, Any]:
    return {
        "action": action,
        "by": dict(event.data["by"]),
        "at": event.at,
        **where,
        "before": before,
        "after": after,
    }


def _apply_review(program: Program, state: InspectionState, event: EventRecord) -> list[Trigger]:
    """A person's results (confidence 100 or 0), damages, and maybe the decision."""
    move(state, "record")
    review = _review_of(state)
    by = dict(event.data["by"])
    triggers: list[Trigger] = []
    for item in event.data.get("results", ()):
        found = state.find_image(item["imageId"])
        if found is None:
            raise InspectionError("invalid_event", "a review result for an unknown image")
        image = own_image(own_product(state, found[0].id), item["imageId"])
        was_processed = image.processed
        record = next(v for v in image.validations if v.validation == item["validation"])
        before = _result_view(record)
        record.confidence = 100.0 if item["valid"] else 0.0
        record.valid = bool(item["valid"])
        record.reported = True
        record.reviewedBy = by
        record.reviewedAt = event.at
        record.note = item.get("note")
        damages = [DamageRecord.model_validate(d) for d in item.get("damages", ())]
        image.damages.extend(damages)
        where = {"imageId": image.id, "validation": record.validation}
        review.audit.append(_audit("result", event, before, _result_view(record), **where))
        for damage in damages:
            after = {"part": damage.part, "damage": damage.damage, "severity": damage.severity}
            review.audit.append(_audit("damage", event, None, after, **where))
        identifier = image.templateImageIdentifier or ""
        triggers.append(_validation_trigger(identifier, record))
        triggers += _after_results(program, state, image, was_processed)
    veredict = event.data.get("veredict")
    if veredict is not None:
        reason = str(event.data["reason"])
        decision = {"veredict": veredict, "reason": reason, "by": by, "at": event.at}
        before = {"status": state.status, "veredict": state.veredict}
        move(state, "decide")
        state.completedBy = "reviewer"
        state.completedAt = event.at
        state.veredict = veredict
        state.reasons = [reason] if veredict == "disapproved" else []
        state.localizedReasons = {}  # a person's reason, in the words they wrote
        state.retake = None
        review.decisions.append(decision)
        after = {"status": "completed", "veredict": veredict, "reason": reason}
        review.audit.append(_audit("decision", event, before, after))
    return triggers


def _result_view(record: ValidationRecord) -> dict[str, Any] | None:
    if not record.reported:
        return None
    return {
        "valid": record.valid,
        "confidence": record.confidence,
        "source": "person" if record.reviewedBy is not None else "machine",
    }


def _apply_retake(program: Program, state: InspectionState, event: EventRecord) -> list[Trigger]:
    """Reopen the named photo slots: their photos move to the history (`replacedImages`), the
    slots take one more upload each, and the inspection goes back to `started`."""
    review = _review_of(state)
    identifiers: list[str] = []
    for image_id in event.data["images"]:
        found = state.find_image(image_id)
        if found is None:
            raise InspectionError("invalid_event", "a retake of an unknown image")
        product = own_product(state, found[0].id)
        image = found[1].model_copy(update={"replacedAt": event.at})
        product.images = [i for i in product.images if i.id != image_id]
        product.replacedImages.append(image)
        identifier = image.templateImageIdentifier or ""
        identifiers.append(identifier)
        state.extraAttempts[identifier] = state.extraAttempts.get(identifier, 0) + 1
    before = {"status": state.status}
    move(state, "retake")
    state.startedAt = state.startedAt or event.at  # started again, if it never was
    if _analysis_pending(state):
        move(state, "analyse")
    state.veredict = "not_defined"
    state.reasons = []
    state.localizedReasons = {}
    state.completedAt = None
    state.completedBy = None
    message = str(event.data["message"])
    state.retake = RetakeState(
        identifiers=identifiers, message=message, at=event.at, by=dict(event.data["by"])
    )
    after = {"status": state.status, "images": list(event.data["images"]), "message": message}
    review.audit.append(_audit("retake", event, before, after))
    return []


def _apply_expire(program: Program, state: InspectionState, event: EventRecord) -> list[Trigger]:
    move(state, "expire")
    return []


def _apply_renew(program: Program, state: InspectionState, event: EventRecord) -> list[Trigger]:
    """A fresh window from `event.at` (`runtime.engine.renew` says when it is allowed)."""
    move(state, "renew")
    if not allows(state, "analysed") and _analysis_pending(state):
        move(state, "analyse")  # it expired while its photos were being analysed
    hours = program.manifest.parameters.expiresInHours
    at = dt.datetime.fromisoformat(event.at.replace("Z", "+00:00"))
    state.expiresAt = iso(at + dt.timedelta(hours=hours)) if hours is not None else None
    return []


_HANDLERS: dict[str, Callable[[Program, InspectionState, EventRecord], list[Trigger]]] = {
    "update": _apply_update,
    "update_product": _apply_update_product,
    "add_products": _apply_add_products,
    "start": _apply_start,
    "image": _apply_image,
    "validation": _apply_validation,
    "damage": _apply_damage,
    "finish": _apply_finish,
    "expire": _apply_expire,
    "claim": _apply_claim,
    "review": _apply_review,
    "retake": _apply_retake,
    "renew": _apply_renew,
}


def _validation_trigger(identifier: str, record: ValidationRecord) -> Trigger:
    return (
        "validation_passed" if record.valid else "validation_failed",
        {"image": identifier, "validation": validation_record(record)},
        {"image": identifier, "validation": record.validation},
    )


def settle(image: ImageRecord) -> None:
    """`processed` once every run validation a machine decides has a result (one routed to a
    person never holds it back); `approved` once every required one has passed."""
    run = [v for v in image.validations if v.run]
    image.processed = all(v.reported for v in run if v.route == "machine")
    image.approved = image.processed and all(v.reported and v.valid for v in run if v.required)


def _analysis_pending(state: InspectionState) -> bool:
    """Whether a current photo still waits for a machine's result (`processing`)."""
    return any(not i.processed for p in state.products for i in p.images)


def _after_results(
    program: Program, state: InspectionState, image: ImageRecord, was_processed: bool
) -> list[Trigger]:
    """Settle an image after a result and move the status in or out of processing."""
    settle(image)
    triggers: list[Trigger] = []
    identifier = image.templateImageIdentifier or ""
    if image.processed and not was_processed:
        triggers.append(("image_processed", {"image": identifier}, {"image": identifier}))
    pending = _analysis_pending(state)
    if pending and allows(state, "analyse"):
        move(state, "analyse")
    elif not pending and allows(state, "analysed"):
        move(state, "analysed")
    attempts = state.attempts.get(identifier, 0)
    allowed = program.manifest.parameters.maxAttempts + state.extraAttempts.get(identifier, 0)
    if (
        image.processed
        and not image.approved
        and allows(state, "exhaust")
        and not any(v.run and v.required and not v.reported for v in image.validations)
        and attempts >= allowed
    ):
        move(state, "exhaust")
    return triggers


def _matches(rule: Any, trigger: Trigger) -> bool:
    name, _, attrs = trigger
    if rule.event != name:
        return False
    if rule.input is not None and attrs.get("input") != rule.input:
        return False
    if rule.image is not None and attrs.get("image") != rule.image:
        return False
    return rule.validation is None or attrs.get("validation") == rule.validation


def _evaluate(
    program: Program, state: InspectionState, triggers: list[Trigger], event: EventRecord
) -> None:
    """Run the matching rules, recompute the checks and, on finish, the verdict."""
    index = len(state.events) - 1
    env = build_env(program, state, event.at)
    errors: list[RuleErrorRecord] = []

    def collect(source: str, start: int) -> None:
        for item in env["errors"][start:]:
            errors.append(
                RuleErrorRecord(code=item["code"], span=item["span"], source=source, event=index)
            )

    stopped = False
    for name, subject, attrs in triggers:
        if stopped:
            break
        env["event"] = _subject(env, subject)
        for position, rule in enumerate(program.rules):
            if not _matches(rule, (name, subject, attrs)):
                continue
            start = len(env["errors"])
            if len(state.ruleRuns) < MAX_RULE_RUNS:
                state.ruleRuns.append({"event": index, "rule": rule.id, "trigger": name})
            try:
                program.run_rule(position, env)
            except StepLimitExceeded:
                env["errors"].append({"code": "step_limit", "span": rule.span})
                stopped = True
            collect(f"rule:{rule.id}", start)
            if stopped:
                break
    env["event"] = {}
    for position, check in enumerate(program.checks):
        start = len(env["errors"])
        try:
            valid = program.run_check(position, env) if not stopped else False
        except StepLimitExceeded:
            env["errors"].append({"code": "step_limit", "span": check.span})
            valid, stopped = False, True
        env["checks"][check.id] = valid
        collect(f"check:{check.id}", start)
    for item in state.globalValidations:
        item.valid = bool(env["checks"].get(item.id, False))
    start = len(env["errors"])
    if event.kind == "finish":
        finished_by = event.data["completedBy"]
        _verdict(program, state, env, event, stopped=stopped, finished_by=finished_by)
        collect("verdict", start)
    elif event.kind == "validation" and _late_results_complete(program, state):
        # Machine results that came after the finish and were all the review waited for:
        # the template's verdict decides after all, as at the finish.
        finished_by = state.review.finishedBy if state.review is not None else None
        _verdict(program, state, env, event, stopped=stopped, finished_by=finished_by or "client")
        collect("verdict", start)
    elif event.kind == "review" and state.status == "review" and state.review is not None:
        # What the template's verdict says now that a person recorded results: a suggestion
        # the reviewer sees (the `on finish` rules do not run again).
        _verdict(program, state, env, event, stopped=stopped, finished_by=None)
        collect("verdict", start)
    seen = {(e.code, tuple(e.span), e.source) for e in state.ruleErrors}
    for error in errors:
        key = (error.code, tuple(error.span), error.source)
        if key not in seen and len(state.ruleErrors) < 1000:
            seen.add(key)
            state.ruleErrors.append(error)


def _late_results_complete(program: Program, state: InspectionState) -> bool:
    """In review only because machines had not answered by the finish, and now they have."""
    review = state.review
    return (
        state.status == "review"
        and review is not None
        and bool(review.reasons)
        and all(reason["code"] == "no_result" for reason in review.reasons)
        and not pending(program, state)
    )


def _verdict(
    program: Program,
    state: InspectionState,
    env: dict[str, Any],
    event: EventRecord,
    *,
    stopped: bool,
    finished_by: str | None,
) -> None:
    """The template's verdict on this state. With `finished_by` (who finished it), it decides,
    in one move: the inspection is completed with it (`finish`, `time_out`, or `conclude` for a
    review whose late results came in), or goes to `review` when a person must decide
    (`refer`, `runtime.routing`); without, it is only the suggestion a reviewer sees
    (`review.machine`)."""
    start, steps_before = len(env["errors"]), env["steps"]
    try:
        if stopped:
            raise StepLimitExceeded()
        approved, reasons = program.run_verdict(env, state.locale)
    except StepLimitExceeded:
        env["errors"].append({"code": "step_limit", "span": [0, 0, 0, 0]})
        approved, reasons = False, [say("step_limit", state.locale)]
    verdict_errors = list(env["errors"][start:])
    # Missing photos and required inputs decide on their own, whatever the template says;
    # they are computed from the state alone, so both evaluation paths agree by design.
    items = missing_items(program, state)
    missing = [item.reason for item in items]
    machine = "approved" if approved and not missing else "disapproved"
    # Fail closed: a verdict that disapproves names the rules it could not evaluate.
    named: list[str] = []
    if verdict_errors and machine == "disapproved":
        named = [r["message"] for r in error_reasons(verdict_errors, state.locale)]
        reasons = reasons + named
    verdict = (items, missing + reasons, named, verdict_errors)

    def elsewhere() -> dict[str, list[str]]:
        if machine == "approved":
            return {}
        return _reasons_elsewhere(
            program, state, env, verdict, steps_before=steps_before, stopped=stopped
        )

    if finished_by is None:
        if state.review is not None:
            state.review.machine = {"veredict": machine, "reasons": missing + reasons}
            state.review.localizedMachine = elsewhere()
        return
    expiry = finished_by == "expiration"
    found = (
        review_reasons(
            program,
            state,
            env,
            missing=bool(missing),
            approved=machine == "approved",
            verdict_errors=verdict_errors,
        )
        if not expiry
        else []
    )
    if state.retake is not None and not expiry:
        # The reviewer who asked for new photos looks at them before any verdict.
        found.append(retake_reason(state.retake, state.locale))
    state.retake = None
    if found:
        _send_to_review(state, event, found, machine, missing + reasons, finished_by)
        _review_of(state).localizedMachine = elsewhere()
    else:
        in_review = state.status == "review"
        move(state, "time_out" if expiry else "conclude" if in_review else "finish")
        state.completedBy = finished_by  # type: ignore[assignment]
        state.completedAt = event.at
        state.veredict = machine  # type: ignore[assignment]
        state.reasons = missing + reasons
        state.localizedReasons = elsewhere()


def _reasons_elsewhere(
    program: Program,
    state: InspectionState,
    env: dict[str, Any],
    verdict: tuple[list[MissingItem], list[str], list[str], list[dict[str, Any]]],
    *,
    steps_before: int,
    stopped: bool,
) -> dict[str, list[str]]:
    """The completed verdict's reasons in the other locales the template (`reason es_AR:`,
    labels) or the runtime (`runtime.wording`) write, where they differ from the inspection's
    own. `verdict` is (its missing items, its reasons (the missing items' first, the rule
    errors it names last), those names, the errors). The verdict is evaluated again for a
    locale whose reasons differ or show values (`i.label` is that locale's), from the step
    count it started from (so it stops where the inspection's did), its errors dropped after:
    the inspection is charged once. Its cost, measured on a two-photo template whose
    `otherwise` shows a value (best of 5 x 2000 finishes): a disapproved finish takes 155 us,
    70 us before reasons were kept per locale; an approved finish keeps none."""
    items, reasons, named, verdict_errors = verdict
    found: dict[str, list[str]] = {}
    locales = dict.fromkeys([*program.manifest.logic.locales, *program.localized, *LOCALES])
    own = reasons[len(items) : len(reasons) - len(named)]
    shows_values = any(
        not isinstance(reason, str)
        for reason in (program.otherwise, *(reason for reason, _, _ in program.disapprovals))
    )
    steps, errors = env["steps"], len(env["errors"])
    try:
        for locale in locales:
            if locale == state.locale:
                continue
            texts = [say("step_limit", locale)] if stopped else own
            if not stopped and (
                shows_values
                or program.reasons_in(locale) != program.reasons_in(state.locale)
                or own == [say("otherwise", state.locale)]
            ):
                env["steps"] = steps_before
                relabel(program, env, locale)
                try:
                    texts = program.run_verdict(env, locale)[1]
                except StepLimitExceeded:
                    if own == [say("step_limit", state.locale)]:
                        texts = [say("step_limit", locale)]
                del env["errors"][errors:]
            missing = [item.in_locale(program, locale).reason for item in items]
            errors_named = (
                [r["message"] for r in error_reasons(verdict_errors, locale)] if named else []
            )
            localized = missing + texts + errors_named
            if localized != reasons:
                found[locale] = localized
    finally:
        env["steps"] = steps
        del env["errors"][errors:]
        relabel(program, env, state.locale)
    return found


def _send_to_review(
    state: InspectionState,
    event: EventRecord,
    reasons: list[dict[str, Any]],
    machine: str,
    machine_reasons: list[str],
    finished_by: str,
) -> None:
    """The finish leaves the verdict to a person: status `review`, no verdict yet."""
    review = _review_of(state)
    if state.status != "review":
        review.since = event.at
        review.firstSince = review.firstSince or event.at
        review.finishedBy = finished_by
    review.reasons = reasons
    review.machine = {"veredict": machine, "reasons": machine_reasons}
    move(state, "refer")
    state.completedBy = None
    state.completedAt = None
    state.veredict = "not_defined"
    state.reasons = []
    state.localizedReasons = {}


def _subject(env: dict[str, Any], subject: dict[str, Any]) -> dict[str, Any]:
    """The event subject as records: an image identifier becomes that image's record."""
    result = dict(subject)
    if isinstance(result.get("image"), str):
        result["image"] = env["images"].get(result["image"])
    return result


def find_product(state: InspectionState, product_id: str) -> ProductState:
    product = state.product(product_id)
    if product is None:
        raise InspectionError("product_not_found", f"no product {product_id!r} in this inspection")
    return product


def _template_order(program: Program, image: ImageRecord) -> int:
    identifiers = [spec.identifier for spec in program.manifest.images]
    ident = image.templateImageIdentifier
    return identifiers.index(ident) if ident in identifiers else len(identifiers)
