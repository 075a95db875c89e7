"""Inspection events as pure functions: (program, state, request, now) -> new state.

Every public operation validates its request, turns it into an `EventRecord` holding everything
needed to apply it again (generated ids, the outcome of local image validators, never image
bytes), and applies it with `apply_event`. `replay(program, events)` applies a log from nothing,
so the state is a pure function of (program, events). A refused request raises
`InspectionError` and leaves the state untouched. After each event the matching rules run (in
source order) and every global check is recomputed; the verdict is computed at `finish`.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Collection, Iterable
from typing import Any

from inspectlang.manifest import Template
from runtime import evaldata, intake
from runtime import evidence as _evidence  # noqa: F401  (registers duplicate and edited)
from runtime.errors import InspectionError
from runtime.imagemeta import read_meta
from runtime.program import Program
from runtime.routing import route
from runtime.state import (
    MAX_DAMAGES,
    EventRecord,
    ImageRecord,
    InspectionState,
    ValidationRecord,
    require,
    stage,
)
from runtime.transitions import apply_event, find_product, iso, settle
from runtime.validators import (
    REGISTRY,
    ImageUpload,
    ValidationContext,
    capture_fields,
    declined_evidence,
)
from runtime.wording import seen_problem

Ids = Callable[[], str]
#: Most extra images per product.
MAX_EXTRA_IMAGES = 50
#: Most products one `goods` inspection may declare in `products`.
MAX_PRODUCTS = 20


def new_object_id() -> str:
    """A random id of 24 hex characters (the spec's ids look like MongoDB ObjectIds)."""
    return os.urandom(12).hex()


# ----------------------------------------------------------------------------------------------
# Public operations
# ----------------------------------------------------------------------------------------------


def create(
    program: Program,
    body: dict[str, Any],
    *,
    inspection_type: str,
    now: dt.datetime,
    ids: Ids = new_object_id,
    company_id: str = "",
    user_id: str = "",
    testing: bool = False,
) -> InspectionState:
    """A new inspection from the spec's creation body."""
    manifest = program.manifest
    if inspection_type != manifest.inspectionType:
        raise InspectionError(
            "wrong_template_provided",
            f"the template is for {manifest.inspectionType} inspections, not {inspection_type}",
        )
    if not isinstance(body, dict):
        raise InspectionError("invalid_body", "the body must be an object")
    body, further = _split_products(inspection_type, body)
    body = intake.normalize_numbers(body, inspection_type)
    body, further, configuration = _configuration(manifest, inspection_type, body, further)
    locale = intake.check_locale(body)
    initial = intake.check_initial_status(body)
    metadata = intake.check_metadata(body.get("metadata"))
    given = intake.inputs_by_identifier(body.get("inputs"), manifest)
    inputs = intake.check_inputs(
        manifest,
        given,
        stage="create",
        locale=locale,
        unasked=lambda values: evaldata.unasked(
            program,
            evaldata.intake_env(
                program, values, body.get(inspection_type), body.get("consumer"), iso(now)
            ),
        ),
    )
    product = intake.check_product(body.get(inspection_type), inspection_type, inspection_type)
    consumer = intake.check_fields(body.get("consumer"), intake.consumer_fields(), "consumer")
    intake.check_requirements(manifest, product, consumer)
    extra = [
        intake.check_product(item, inspection_type, f"products.{index}")
        for index, item in enumerate(further, start=1)
    ]
    delivery = body.get("delivery")
    producer = body.get("producer")
    data = {
        "id": ids(),
        "productId": ids(),
        "revision": program.revision,  # so a replay under another revision is refused
        "type": inspection_type,
        "locale": locale,
        "initialStatus": initial,
        "metadata": metadata,
        "inputs": inputs,
        "product": product,
        "consumer": consumer,
        "delivery": delivery if isinstance(delivery, dict) else {},
        "producer": {
            "companyId": company_id,
            "userId": user_id,
            **(
                {"internalId": producer["internalId"]}
                if isinstance(producer, dict) and isinstance(producer.get("internalId"), str)
                else {}
            ),
        },
        "testing": testing,
    }
    if extra:
        data["products"] = [{"productId": ids(), "fields": fields} for fields in extra]
    if configuration:
        data["configuration"] = configuration
    return apply_event(program, None, EventRecord(kind="create", at=iso(now), data=data))


def _configuration(
    manifest: Template, inspection_type: str, body: dict[str, Any], further: list[Any]
) -> tuple[dict[str, Any], list[Any], dict[str, dict[str, bool]]]:
    """The body and further products without their `configuration`, and the settings they
    carry (merged in order: the validations' run/required for this inspection only)."""
    merged: dict[str, dict[str, bool]] = {}
    product, settings = intake.split_configuration(
        manifest, body.get(inspection_type), inspection_type
    )
    merged.update(settings)
    if inspection_type in body:
        body = {**body, inspection_type: product}
    rest = []
    for index, item in enumerate(further, start=1):
        item, settings = intake.split_configuration(manifest, item, f"products.{index}")
        for name, setting in settings.items():
            merged[name] = {**merged.get(name, {}), **setting}
        rest.append(item)
    return body, rest, merged


def _split_products(inspection_type: str, body: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """A goods body's several products (`products: [...]`): the first takes the place of
    `goods`, the others are returned to be checked like it (errors name them `products.N`).
    Other types may not send a list."""
    if "products" not in body:
        return body, []
    rest = {key: value for key, value in body.items() if key != "products"}
    products = body["products"]
    if inspection_type != "goods":
        raise InspectionError(
            "invalid_body",
            "only goods inspections declare several products (`products`)",
            [intake.problem("products", "not_allowed", "goods only")],
        )
    if not isinstance(products, list) or not 1 <= len(products) <= MAX_PRODUCTS:
        raise InspectionError(
            "invalid_body",
            f"products must be a list of 1 to {MAX_PRODUCTS} product objects",
            [intake.problem("products", "length", f"expected 1 to {MAX_PRODUCTS} objects")],
        )
    if "goods" in body:
        raise InspectionError(
            "invalid_body",
            "send the products either as `goods` or as `products`, not both",
            [intake.problem("products", "conflict", "also sent goods")],
        )
    rest["goods"] = products[0]
    return rest, products[1:]


def update(
    program: Program, state: InspectionState, body: dict[str, Any], *, now: dt.datetime
) -> InspectionState:
    """The spec's PUT: only consumer fields, metadata keys and inputs not yet defined apply."""
    require(state, "edit")
    if not isinstance(body, dict):
        raise InspectionError("invalid_body", "the body must be an object")
    consumer = intake.check_fields(body.get("consumer"), intake.consumer_fields(), "consumer")
    metadata = intake.check_metadata(body.get("metadata"), state.metadata)
    given = intake.inputs_by_identifier(body.get("inputs"), program.manifest)
    fresh = {k: v for k, v in given.items() if state.inputs.get(k) is None}
    inputs = intake.check_inputs(
        program.manifest, fresh, stage="update", locale=state.locale, known=state.inputs
    )
    data = {
        "consumer": {k: v for k, v in consumer.items() if state.consumer.get(k) is None},
        "metadata": {k: v for k, v in metadata.items() if k not in state.metadata},
        "inputs": inputs,
    }
    return apply_event(program, state, EventRecord(kind="update", at=iso(now), data=data))


def update_product(
    program: Program,
    state: InspectionState,
    product_id: str,
    body: dict[str, Any],
    *,
    now: dt.datetime,
) -> InspectionState:
    """Set product fields (`{"car": {...}}`); omitted fields stay as they are. Any other key,
    at the top or inside the product object, is `unknown_field` (nothing is ignored)."""
    require(state, "edit")
    product = find_product(state, product_id)
    if product.type == "people":
        raise InspectionError(
            "invalid_body", "people inspections have no product data: update the consumer"
        )
    if not isinstance(body, dict):
        raise InspectionError("invalid_body", "the body must be an object")
    intake.refuse_unknown_keys(body, {product.type: intake.product_fields(product.type)})
    fields = intake.check_product(body.get(product.type), product.type, product.type)
    data = {"productId": product_id, "fields": fields}
    return apply_event(program, state, EventRecord(kind="update_product", at=iso(now), data=data))


def add_products(
    program: Program,
    state: InspectionState,
    items: Any,
    *,
    now: dt.datetime,
    ids: Ids = new_object_id,
) -> InspectionState:
    """Add goods to a goods inspection (`{"goods": [...]}` of the client libraries), each
    checked as at creation; at most MAX_PRODUCTS products in all."""
    require(state, "edit")
    if state.type != "goods":
        raise InspectionError(
            "invalid_body",
            "only goods inspections take more products",
            [intake.problem("goods", "not_allowed", "goods only")],
        )
    room = MAX_PRODUCTS - len(state.products)
    if not isinstance(items, list) or not 1 <= len(items) <= room:
        raise InspectionError(
            "invalid_body",
            f"goods must be a list of 1 to {max(room, 0)} product objects "
            f"(at most {MAX_PRODUCTS} products per inspection)",
            [intake.problem("goods", "length", f"expected 1 to {max(room, 0)} objects")],
        )
    products = [
        {"productId": ids(), "fields": intake.check_product(item, "goods", f"goods.{index}")}
        for index, item in enumerate(items)
    ]
    data = {"products": products}
    return apply_event(program, state, EventRecord(kind="add_products", at=iso(now), data=data))


def start(program: Program, state: InspectionState, *, now: dt.datetime) -> InspectionState:
    """created -> started (also while photos taken before the start are still processing)."""
    require(state, "start")
    return apply_event(program, state, EventRecord(kind="start", at=iso(now)))


def add_image(
    program: Program,
    state: InspectionState,
    product_id: str,
    upload: ImageUpload,
    *,
    now: dt.datetime,
    ids: Ids = new_object_id,
    machine: Collection[str] | None = None,
) -> tuple[InspectionState, ImageRecord]:
    """Upload a photo for a template image (by identifier or side) or as an extra image.

    `machine` names the validations a machine decides in this deployment (`runtime.routing`):
    every other one is routed to a person and never holds `processed` back. None: every
    validation waits for a machine's result (the caller posts them all).
    """
    require(state, "edit")
    product = find_product(state, product_id)
    manifest = program.manifest
    spec = None
    if upload.identifier is not None:
        spec = program.image_spec(upload.identifier)
        if spec is None:
            raise InspectionError(
                "image_not_found", f"the template has no image {upload.identifier!r}"
            )
    elif upload.side is not None:
        spec = program.image_by_side(upload.side)
    else:
        raise InspectionError("invalid_body", "an upload needs a side or an identifier")
    _check_upload(upload)
    meta = upload.meta if upload.meta is not None else read_meta(upload.data)
    at = iso(now)
    target = upload.target or ("identity" if state.type == "people" else "product")
    image_id = ids()
    record = ImageRecord(
        id=image_id,
        templateImageIdentifier=spec.identifier if spec is not None else None,
        side=spec.side if spec is not None else str(upload.side)[:100],
        target=target if target in ("product", "identity", "custom") else "product",
        uploadedAt=at,
        src=upload.src.replace("{id}", image_id) if upload.src else None,
        productInspectionId=product_id,
        contentType=upload.content_type,
        size=len(upload.data),
        width=meta.width,
        height=meta.height,
        **capture_fields(upload, meta),
    )
    if spec is None:
        if len(product.extraImages) >= MAX_EXTRA_IMAGES:
            raise InspectionError("max_attempts_exceeded", "too many extra images")
        record.processed = True
        data = {"productId": product_id, "extra": True, "image": record.to_json()}
        new = apply_event(program, state, EventRecord(kind="image", at=at, data=data), owned=True)
        return new, _stored_image(new, product_id, image_id)
    attempts = state.attempts.get(spec.identifier, 0)
    if attempts_left(program, state, spec.identifier) <= 0:
        raise InspectionError(
            "max_attempts_exceeded",
            f"image {spec.side!r} was already uploaded {attempts} times "
            f"(maxAttempts {manifest.parameters.maxAttempts})",
        )
    record.attempt = attempts + 1
    first = _first_location(state)
    located = _locations(state)
    for validation in spec.validations:
        # This inspection's `configuration` overrides the template's run/required.
        setting = state.configuration.get(validation.validation, {})
        item = ValidationRecord(
            id=validation.id,
            validation=validation.validation,
            run=setting.get("run", validation.run),
            required=setting.get("required", validation.required),
            threshold=program.threshold(spec.identifier, validation),
            route=route(validation.validation, machine),
        )
        validator = REGISTRY.get(validation.validation)
        declined = declined_evidence(validation.validation, upload, meta) if item.run else None
        if declined is not None:
            # Not run on evidence the consumer declined: a person decides it (docs/language.md).
            item.declined = declined
            item.route = "person"
        elif item.run and validator is not None:
            options = validation_options(program, spec.identifier, validation.validation)
            context = ValidationContext(
                now=now,
                options=options,
                first_location=first,
                meta=meta,
                locations=located,
                inspection_id=state.id,
                photo_hashes=_photo_hashes(state, spec.identifier),
            )
            outcome = validator.validate(upload, context)
            item.confidence = outcome.confidence
            item.valid = outcome.valid and outcome.confidence >= item.threshold
            item.result = outcome.result
            item.reported = True
            item.local = True
        record.validations.append(item)
    settle(record)
    data = {"productId": product_id, "extra": False, "image": record.to_json()}
    new = apply_event(program, state, EventRecord(kind="image", at=at, data=data), owned=True)
    return new, _stored_image(new, product_id, image_id)


def attempts_left(program: Program, state: InspectionState, identifier: str) -> int:
    """Uploads a template image still takes: `maxAttempts`, plus one per retake of its slot
    (docs/review.md), minus the uploads made."""
    allowed = program.manifest.parameters.maxAttempts + state.extraAttempts.get(identifier, 0)
    return max(0, allowed - state.attempts.get(identifier, 0))


def _check_upload(upload: ImageUpload) -> None:
    """What the client says about a photo: a short date text, coordinates on the globe."""
    problems = []
    if upload.side is not None and (not isinstance(upload.side, str) or not upload.side):
        problems.append(intake.problem("side", "type", "side must be a non-empty text"))
    if upload.date is not None and (not isinstance(upload.date, str) or len(upload.date) > 40):
        problems.append(intake.problem("date", "type", "date must be an ISO 8601 text"))
    for axis, bound in (("latitude", 90), ("longitude", 180)):
        value = getattr(upload, axis)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            problems.append(intake.problem(axis, "type", f"{axis} must be a number"))
        elif not -bound <= value <= bound:  # also refuses NaN
            problems.append(
                intake.problem(axis, "range", f"{axis} must be between -{bound} and {bound}")
            )
    if problems:
        raise InspectionError("invalid_body", "invalid upload", problems)


def _stored_image(state: InspectionState, product_id: str, image_id: str) -> ImageRecord:
    """The image record as the new state holds it (after the event's rules ran)."""
    product = find_product(state, product_id)
    return next(i for i in [*product.images, *product.extraImages] if i.id == image_id)


def record_validation(
    program: Program,
    state: InspectionState,
    image_id: str,
    result: dict[str, Any],
    *,
    damages: Iterable[dict[str, Any]] = (),
    entities: Iterable[dict[str, Any]] = (),
    now: dt.datetime,
    ids: Ids = new_object_id,
) -> InspectionState:
    """A result from an analysis (this runtime's `runtime.vision` or an outside service):
    `{validation, confidence, result}` (and `seen`, what the analyzer saw beyond its result:
    `runtime.wording.SEEN_KINDS`), plus damages it found and identity-document fields it
    read (`entities`: `{entity, valid, result}`). Also taken while the inspection waits in
    `review`: a late machine result fills what the reviewer would otherwise decide."""
    require(state, "result")
    found = state.find_image(image_id)
    if found is None:
        raise InspectionError("image_not_found", f"no image {image_id!r} in this inspection")
    _, image = found
    if not isinstance(result, dict):
        raise InspectionError("invalid_validation_result", "the result must be an object")
    name = result.get("validation")
    record = next((v for v in image.validations if v.validation == name), None)
    if record is None or not record.run:
        raise InspectionError(
            "unknown_validation",
            f"image {image_id} has no validation {name!r} to run"
            if record is None
            else f"validation {name!r} is not run for this image",
        )
    if record.reported:
        raise InspectionError(
            "invalid_validation_result", f"validation {name!r} already has a result"
        )
    confidence = result.get("confidence")
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0 <= confidence <= 100
    ):
        raise InspectionError(
            "invalid_validation_result", "confidence must be a number from 0 to 100"
        )
    value = result.get("result")
    if value is not None and not isinstance(value, str | int | float | bool):
        raise InspectionError("invalid_validation_result", "result must be a text or a number")
    if isinstance(value, str) and len(value) > 1000:
        raise InspectionError("invalid_validation_result", "result has at most 1000 characters")
    seen = result.get("seen")
    problem = None if seen is None else seen_problem(seen)
    if problem is not None:
        raise InspectionError("invalid_validation_result", problem)
    entity_list = [_entity(item) for item in entities]
    if len(entity_list) > MAX_ENTITIES:
        raise InspectionError("invalid_validation_result", f"at most {MAX_ENTITIES} entities")
    damage_list = [intake.read_damage(item, ids, declared=False) for item in damages]
    if state.damage_count() + len(damage_list) > MAX_DAMAGES:
        raise InspectionError("invalid_validation_result", f"at most {MAX_DAMAGES} damages")
    data = {
        "imageId": image_id,
        "validation": name,
        "confidence": confidence,
        "result": value,
        "damages": [d.to_json() for d in damage_list],
    }
    if entity_list:
        data["entities"] = entity_list
    if seen is not None:
        data["seen"] = seen
    event = EventRecord(kind="validation", at=iso(now), data=data)
    return apply_event(program, state, event, owned=True)


#: Fields one validation result may report from a document.
MAX_ENTITIES = 20


def _entity(item: Any) -> dict[str, Any]:
    """One `{entity, valid, result}` read from a document, checked like a result's value."""
    if not isinstance(item, dict) or set(item) - {"entity", "valid", "result"}:
        raise InspectionError(
            "invalid_validation_result", "an entity is an object {entity, valid, result}"
        )
    name, valid, value = item.get("entity"), item.get("valid"), item.get("result")
    if not isinstance(name, str) or not 0 < len(name) <= 100:
        raise InspectionError("invalid_validation_result", "entity must be a text of 1-100")
    if not isinstance(valid, bool):
        raise InspectionError("invalid_validation_result", "an entity's valid is a boolean")
    if value is not None and (
        not isinstance(value, str | int | float) or (isinstance(value, str) and len(value) > 1000)
    ):
        raise InspectionError(
            "invalid_validation_result", "an entity's result is a text (at most 1000) or a number"
        )
    return {"entity": name, "valid": valid, "result": value}


def declare_damage(
    program: Program,
    state: InspectionState,
    product_id: str,
    body: dict[str, Any],
    *,
    now: dt.datetime,
    ids: Ids = new_object_id,
) -> InspectionState:
    """The consumer declares a damage (needs the `damage_declaration` feature)."""
    require(state, "edit")
    product = find_product(state, product_id)
    if not program.feature_enabled("damage_declaration"):
        raise InspectionError(
            "feature_not_enabled", "this template does not enable damage_declaration"
        )
    damage = intake.read_damage(body, ids, declared=True)
    if state.damage_count() >= MAX_DAMAGES:
        raise InspectionError("invalid_body", f"at most {MAX_DAMAGES} damages")
    data = {"productId": product.id, "damage": damage.to_json()}
    event = EventRecord(kind="damage", at=iso(now), data=data)
    return apply_event(program, state, event, owned=True)


def finish(
    program: Program,
    state: InspectionState,
    *,
    completed_by: str = "client",
    now: dt.datetime,
) -> InspectionState:
    """Complete the inspection: the verdict is computed and everything is frozen."""
    if completed_by not in ("client", "consumer", "expiration"):
        raise InspectionError("invalid_body", "completedBy is client, consumer or expiration")
    require(state, "time_out" if completed_by == "expiration" else "finish")
    if completed_by != "expiration":
        skipped = evaldata.unasked(program, evaldata.build_env(program, state, iso(now)))
        specs = [
            spec
            for spec in program.manifest.inputs
            if "update" in spec.stages
            and spec.validationSchema.required
            and state.inputs.get(spec.identifier) is None
            and spec.identifier not in skipped
        ]
        if specs:
            raise InspectionError(
                "update_inputs_missing",
                "required inputs are missing: " + ", ".join(spec.label for spec in specs),
                [
                    intake.problem(spec.identifier, "required", f"input {spec.label!r} is required")
                    for spec in specs
                ],
            )
    data = {"completedBy": completed_by}
    return apply_event(program, state, EventRecord(kind="finish", at=iso(now), data=data))


def expire(program: Program, state: InspectionState, *, now: dt.datetime) -> InspectionState:
    """Block an inspection past its expiry (or whenever the caller decides it expired)."""
    require(state, "expire")
    if state.expiresAt is not None and iso(now) < state.expiresAt:
        raise InspectionError(
            "invalid_status_transition", f"the inspection expires at {state.expiresAt}"
        )
    return apply_event(program, state, EventRecord(kind="expire", at=iso(now)))


def blocked_by_expiry(state: InspectionState) -> bool:
    """Whether the inspection is blocked because its time ran out (not by its attempts): its
    newest `expire` event is later than any `renew`."""
    return stage(state) in ("created_expired", "expired")


def renew(program: Program, state: InspectionState, *, now: dt.datetime) -> InspectionState:
    """A fresh window for the consumer: `expiresAt` becomes now plus the template's lifetime
    (`expiresInHours`), and an inspection blocked by its expiry opens again where it was
    (`started` when it had started, else `created`). Anything else that is not editable is
    refused (a completed inspection stays fixed; one blocked by its attempts stays blocked)."""
    require(state, "renew")
    return apply_event(program, state, EventRecord(kind="renew", at=iso(now)), owned=True)


def replay(program: Program, events: Iterable[EventRecord | dict[str, Any]]) -> InspectionState:
    """The state after applying a log from the start."""
    state: InspectionState | None = None
    for event in events:
        record = event if isinstance(event, EventRecord) else EventRecord.model_validate(event)
        state = apply_event(program, state, record)
    if state is None:
        raise InspectionError("invalid_event", "an empty log has no inspection")
    return state


# ----------------------------------------------------------------------------------------------
# Small helpers
# ----------------------------------------------------------------------------------------------


def validation_options(program: Program, identifier: str, validation: str) -> dict[str, float]:
    options = program.validator_options(identifier, validation)
    parameters = program.manifest.parameters
    defaults = {
        "minWidth": parameters.minImageWidth,
        "minHeight": parameters.minImageHeight,
        "maxAgeHours": parameters.maxPhotoAgeHours,
        "maxDistanceMeters": parameters.maxDistanceMeters,
    }
    for key, value in defaults.items():
        if key not in options and value is not None:
            options[key] = float(value)
    return options


def _locations(state: InspectionState) -> tuple[tuple[float, float], ...]:
    """Where every located photo of the inspection was taken."""
    return tuple(
        (float(image.latitude), float(image.longitude))
        for product in state.products
        for image in [*product.images, *product.extraImages]
        if image.latitude is not None and image.longitude is not None
    )


def _photo_hashes(state: InspectionState, identifier: str) -> tuple[tuple[int, int], ...]:
    """The perceptual hashes (whole, central crop) of the inspection's photos outside the slot
    `identifier` (a retake replaces its own slot's photo: not a duplicate of it)."""
    return tuple(
        (int(image.phash, 16), int(image.phashCenter, 16))
        for product in state.products
        for image in [*product.images, *product.extraImages]
        if image.phash and image.phashCenter and image.templateImageIdentifier != identifier
    )


def _first_location(state: InspectionState) -> tuple[float, float] | None:
    located = [
        image
        for product in state.products
        for image in [*product.images, *product.extraImages]
        if image.latitude is not None and image.longitude is not None
    ]
    if not located:
        return None
    first = min(located, key=lambda image: (image.uploadedAt, image.id))
    return float(first.latitude or 0.0), float(first.longitude or 0.0)
