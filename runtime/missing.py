"""What an inspection still lacks: template photos never uploaded, required inputs never filled.

Every image a template declares is one the consumer must upload (the spec's "images the user
must upload") unless it is `optional` or its `ask when` does not hold; an input is required when
its `validationSchema.required` is true and its `ask when` (if any) holds. At `finish`
each missing item becomes a reason of the verdict, before the template's own reasons, and the
verdict is `disapproved` whatever the template's verdict lines say: an inspection finished
without its evidence must not look complete. The same list feeds the explanation and the report.

A photo counts as uploaded when any product of the inspection has one for that template image,
as `images.NAME.uploaded` in expressions sees it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from runtime.api_view import image_label, input_label
from runtime.evaldata import build_env, unasked
from runtime.program import Program
from runtime.state import InspectionState
from runtime.wording import say


@dataclass(frozen=True, slots=True)
class MissingItem:
    """A template photo or required input the inspection does not have."""

    kind: Literal["photo", "input"]
    identifier: str
    #: Its label in the locale the list was made for.
    label: str
    locale: str = "en_US"

    @property
    def reason(self) -> str:
        """Why it disapproves, in the list's locale."""
        return say(self.kind, self.locale, label=self.label)

    def in_locale(self, program: Program, locale: str) -> MissingItem:
        """The same item as a reader of `locale` reads it (its label and reason)."""
        return MissingItem(self.kind, self.identifier, _label(program, self, locale), locale)


def _label(program: Program, item: MissingItem, locale: str) -> str:
    if item.kind == "photo":
        spec = program.image_spec(item.identifier)
        side = spec.side if spec is not None else item.identifier
        return image_label(program, item.identifier, locale) or side
    found = program.input_spec(item.identifier)
    return input_label(program, found, locale) if found is not None else item.identifier


def missing_items(
    program: Program, state: InspectionState, locale: str | None = None
) -> list[MissingItem]:
    """Photos in template order, then required inputs in template order; labels and reasons in
    `locale` (the inspection's when not given)."""
    locale = locale or state.locale
    uploaded = {
        image.templateImageIdentifier for product in state.products for image in product.images
    }
    skipped = (
        unasked(program, build_env(program, state, state.completedAt or state.updatedAt))
        if program.asks
        else frozenset()
    )
    photos = [
        MissingItem(
            "photo",
            spec.identifier,
            image_label(program, spec.identifier, locale) or spec.side,
            locale,
        )
        for spec in program.manifest.images
        if spec.identifier not in uploaded
        and spec.identifier not in skipped
        and not program.image_optional(spec.identifier)
    ]
    inputs = [
        MissingItem("input", spec.identifier, input_label(program, spec, locale), locale)
        for spec in program.manifest.inputs
        if spec.validationSchema.required
        and state.inputs.get(spec.identifier) is None
        and spec.identifier not in skipped
    ]
    return photos + inputs
