"""The consumer's steps, worked out from the template and the inspection's state.

welcome (consent) -> details (the template's `update`-stage inputs, when it has any) -> one
photo step per template image -> damage (when the template enables `damage_declaration`) ->
review -> thank-you. `resume_step` is where a consumer who comes back continues: the first step
not yet done, judged from the state (inputs given, photos uploaded) and the session's flags
(consent, details and damage steps passed).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from inspectlang.manifest import ImageSpec, InputSpec, Template
from runtime import InspectionState, Program
from runtime.api_view import image_label, input_label, localized_value
from runtime.evaldata import asked_images, build_env, unasked
from runtime.validators import NEEDS_EVIDENCE
from server.consumer.messages import field_messages, localized

#: Validations whose name says the photo is of the person (front camera).
SELFIE_HINTS = ("selfie", "face")


@dataclass(frozen=True)
class Step:
    key: str  # "welcome", "details", "photo-<n>", "damage", "review"
    kind: str
    image: ImageSpec | None = None
    number: int = 0


@dataclass
class Field:
    """One input as the details page shows it."""

    identifier: str
    type: str
    label: str
    help: str | None
    required: bool
    #: (value sent, text shown): the option's default label, its label in the locale.
    options: list[tuple[str, str]] = field(default_factory=list)
    schema: dict[str, Any] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    #: Already given (update applies only inputs not yet defined): shown, not editable.
    value: Any = None
    shown_value: Any = None
    error: str | None = None

    @property
    def locked(self) -> bool:
        return self.value is not None

    @property
    def rules_json(self) -> str:
        return json.dumps({"type": self.type, "required": self.required, **self.schema})

    @property
    def messages_json(self) -> str:
        return json.dumps(self.messages, ensure_ascii=False)

    def selected(self, option_value: str) -> bool:
        if isinstance(self.value, list):
            return option_value in self.value
        return bool(self.value == option_value)


#: `image=` value meaning every input, whichever image it belongs to.
EVERY = "*"


def image_of_input(manifest: Template, spec: InputSpec) -> str | None:
    """The identifier of the image a per-image input (`for image: IMAGE`) is asked with."""
    logic = manifest.logic.inputs.get(spec.identifier)
    name = logic.image if logic is not None else None
    if not name:
        return None
    for identifier, image in manifest.logic.images.items():
        if name in (image.name, identifier):
            return identifier
    return None


def update_inputs(manifest: Template, image: str | None = EVERY) -> list[InputSpec]:
    """The inputs asked of the consumer: all (`EVERY`), the general ones (None), or those asked
    next to one image (its identifier)."""
    return [
        spec
        for spec in manifest.inputs
        if "update" in spec.stages and (image == EVERY or image_of_input(manifest, spec) == image)
    ]


def damage_enabled(program: Program) -> bool:
    return program.feature_enabled("damage_declaration")


def steps(program: Program, state: InspectionState | None = None) -> list[Step]:
    """The pages in order. With the inspection's `state`, a photo whose `ask when` does not hold
    on the values saved so far is left out (its step keeps its number: links stay valid)."""
    manifest = program.manifest
    found = [Step("welcome", "welcome")]
    if update_inputs(manifest, None):
        found.append(Step("details", "details"))
    asked = (
        set(asked_images(program, build_env(program, state, state.updatedAt)))
        if state is not None and program.asks
        else None
    )
    for number, image in enumerate(manifest.images, start=1):
        if asked is not None and image.identifier not in asked:
            continue
        found.append(Step(f"photo-{number}", "photo", image, number))
    if damage_enabled(program):
        found.append(Step("damage", "damage"))
    found.append(Step("review", "review"))
    return found


def photo_of(state: InspectionState, identifier: str) -> Any | None:
    for product in state.products:
        for image in product.images:
            if image.templateImageIdentifier == identifier:
                return image
    return None


def resume_step(program: Program, state: InspectionState, flags: dict[str, Any]) -> Step:
    """The first step not yet done (an optional photo left out counts as done)."""
    for step in steps(program, state):
        if step.kind == "welcome" and not flags.get("consent"):
            return step
        unanswered = any(
            state.inputs.get(spec.identifier) is None
            for spec in update_inputs(program.manifest, None)
        )
        if step.kind == "details" and not flags.get("details") and unanswered:
            return step
        if (
            step.kind == "photo"
            and step.image is not None
            and photo_of(state, step.image.identifier) is None
            and not program.image_optional(step.image.identifier)
        ):
            return step
        if step.kind == "damage" and not flags.get("damage"):
            return step
    return steps(program)[-1]


def after_photo(
    program: Program, state: InspectionState, flags: dict[str, Any], key: str
) -> Step | None:
    """Where a photo step's Continue goes: the first later step not done yet (a photo with
    none, an optional one too, the details or damage step not passed), else the review. After
    one retaken photo the consumer goes on to Send, not through the photos already taken."""
    shown = steps(program, state)
    index = next((i for i, step in enumerate(shown) if step.key == key), None)
    if index is None:
        return neighbours(program, key, state)[1]
    for step in shown[index + 1 :]:
        if step.kind == "photo" and step.image is not None:
            if photo_of(state, step.image.identifier) is None:
                return step
        elif step.kind in ("details", "damage") and not flags.get(step.kind):
            return step
    return shown[-1]


def step_by_key(program: Program, key: str) -> Step | None:
    return next((step for step in steps(program) if step.key == key), None)


def neighbours(
    program: Program, key: str, state: InspectionState | None = None
) -> tuple[Step | None, Step | None]:
    """The steps before and after `key` among those shown (`steps(program, state)`); a step
    not shown any more is placed where it stands in the template."""
    every = steps(program)
    shown = steps(program, state)
    keys = {step.key for step in shown}
    if key not in keys:
        index = next(i for i, step in enumerate(every) if step.key == key)
        before = [s for s in every[:index] if s.key in keys]
        after = [s for s in every[index + 1 :] if s.key in keys]
        return (before[-1] if before else None, after[0] if after else None)
    found = shown
    index = next(i for i, step in enumerate(found) if step.key == key)
    return (
        found[index - 1] if index > 0 else None,
        found[index + 1] if index + 1 < len(found) else None,
    )


def helper_message(program: Program, spec: InputSpec, locale: str) -> str | None:
    logic = program.manifest.logic.inputs.get(spec.identifier)
    translation = logic.translations.get(locale) if logic is not None else None
    if translation is not None and translation.helperMessage:
        return translation.helperMessage
    return spec.helperMessage


def fields(
    program: Program, state: InspectionState, locale: str, image: str | None = EVERY
) -> list[Field]:
    """The inputs as the pages show them (see `update_inputs` for `image`), without those whose
    `ask when` does not hold on the values saved so far: each render decides again."""
    manifest = program.manifest
    result = []
    skipped = (
        unasked(program, build_env(program, state, state.updatedAt))
        if program.asks
        else frozenset()
    )
    for spec in update_inputs(manifest, image):
        if spec.identifier in skipped:
            continue
        labels = [option.label for option in spec.options or []]
        shown = localized_value(program, spec, locale, labels) if labels else []
        schema = {
            key: value
            for key, value in spec.validationSchema.model_dump(exclude_none=True).items()
            if key != "required"
        }
        messages = field_messages(manifest, spec, locale)
        if spec.type == "date":
            _stored_order(program, spec, state, locale, schema, messages)
        value = state.inputs.get(spec.identifier)
        result.append(
            Field(
                identifier=spec.identifier,
                type=spec.type,
                label=input_label(program, spec, locale),
                help=helper_message(program, spec, locale),
                required=spec.validationSchema.required,
                options=list(zip(labels, shown, strict=True)),
                schema=schema,
                messages=messages,
                value=value,
                shown_value=localized_value(program, spec, locale, value),
            )
        )
    return result


def _stored_order(
    program: Program,
    spec: InputSpec,
    state: InspectionState,
    locale: str,
    schema: dict[str, Any],
    messages: dict[str, str],
) -> None:
    """The page's own check of a date order against a date already stored: the closest stored
    date this one may not precede (`orderMin`) or follow (`orderMax`) in `schema` (the field's
    rules: `consumer.js` checks them, and the date control's `min`/`max` narrows to them), and
    the catalog's words naming that date in `messages`. A date sent in the same form is
    checked by the server alone (`runtime.intake.order_problems`)."""
    own = spec.identifier
    inputs = program.manifest.inputs
    earlier = list(spec.validationSchema.notBefore or [])
    earlier += [s.identifier for s in inputs if own in (s.validationSchema.notAfter or ())]
    later = list(spec.validationSchema.notAfter or [])
    later += [s.identifier for s in inputs if own in (s.validationSchema.notBefore or ())]
    specs = {s.identifier: s for s in inputs}
    for key, code, others, pick in (
        ("orderMin", "not_before", earlier, max),
        ("orderMax", "not_after", later, min),
    ):
        stored = [(str(state.inputs[o])[:10], o) for o in others if state.inputs.get(o)]
        if stored:
            day, other = pick(stored)
            schema[key] = day
            label = input_label(program, specs[other], locale)
            messages[code] = localized(spec, code, "", locale, label)


def photo_label(program: Program, image: ImageSpec, locale: str) -> str:
    return image_label(program, image.identifier, locale) or image.side


def capture_mode(image: ImageSpec) -> str:
    """`user` (front camera) for a selfie, `environment` (back camera) otherwise."""
    names = [image.side.lower(), image.identifier.lower()]
    names += [v.validation for v in image.validations]
    return "user" if any(hint in name for name in names for hint in SELFIE_HINTS) else "environment"


def location_use(program: Program) -> str | None:
    """What declining the location means for this template: `required` (a required check
    needs it: a person decides instead), `optional` (a check needing it is left out), None (no
    check needs it). docs/language.md, "Declined evidence"."""
    needing = [
        validation
        for image in program.manifest.images
        for validation in image.validations
        if validation.run and NEEDS_EVIDENCE.get(validation.validation) == "location"
    ]
    if any(validation.required for validation in needing):
        return "required"
    return "optional" if needing else None
