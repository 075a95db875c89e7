"""A solver's model as an events file, and that file replayed through `simulate`'s Simulation.

The file is the one `inspectlang simulate TEMPLATE EVENTS` reads (`runtime.cli`): a create
with the model's inputs, product and consumer fields, the start, each photo the model uploads
(in template order, with the results of its validations; the photo is drawn so the runtime's
own upload checks give the model's outcome: a blank 1x1 photo fails `complete`, no capture time
fails `date`, no position fails `distance`), the declared damages and the finish; the inputs the
model gives late in an `update` at the place it chose among these.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import z3

from runtime.cli import ScriptError, Simulation
from runtime.errors import InspectionError
from runtime.program import Program
from runtime.proofs.symbolic import (
    FieldLeaf,
    ImageLeaf,
    InputLeaf,
    Place,
    Scenario,
    ValidationLeaf,
    to_python,
)
from runtime.state import InspectionState

#: Where the simulated photos are taken (a point in Buenos Aires), when they carry a position.
PLACE = [-34.6037, -58.3816]


def _value(model: z3.ModelRef, term: z3.ExprRef, type_name: str) -> Any:
    return to_python(model.eval(term, model_completion=True), type_name)


def _true(model: z3.ModelRef, term: z3.ExprRef) -> bool:
    return bool(z3.is_true(model.eval(term, model_completion=True)))


def _input(model: z3.ModelRef, leaf: InputLeaf) -> Any:
    spec = leaf.spec
    if spec.type == "numeric":
        return _value(model, leaf.raw, "number")
    if spec.type == "date":
        return _value(model, leaf.raw, "date")
    if spec.type == "check":
        return _true(model, leaf.raw)
    if spec.type == "select":
        index = model.eval(leaf.raw, model_completion=True).as_long()
        return (spec.options or [])[int(index)].label
    if spec.type == "multiselect":
        return [
            option.label
            for chosen, option in zip(leaf.raw, spec.options or [], strict=True)
            if _true(model, chosen)
        ]
    return _value(model, leaf.raw, "text")


def _fields(model: z3.ModelRef, table: dict[str, FieldLeaf]) -> dict[str, Any]:
    return {
        name: _value(model, leaf.term, leaf.type)
        for name, leaf in table.items()
        if _true(model, leaf.given)
    }


def _damage(model: z3.ModelRef, leaf: Any) -> dict[str, Any]:
    body = {
        "part": _value(model, leaf.part, "text"),
        "damage": _value(model, leaf.damage, "text"),
        "severity": _value(model, leaf.severity, "text"),
    }
    if _true(model, leaf.percentage.defined):
        body["percentage"] = _value(model, leaf.percentage.term, "number")
    return body


def events_of(scenario: Scenario, model: z3.ModelRef) -> dict[str, Any]:
    """The events file of `model`, for `scenario`'s template."""
    today = dt.date.fromisoformat(_value(model, scenario.today, "date"))
    inputs: list[dict[str, Any]] = []
    late: list[dict[str, Any]] = []
    for spec in scenario.manifest.inputs:
        logic = scenario.manifest.logic.inputs.get(spec.identifier)
        name = logic.name if logic is not None else spec.identifier
        leaf = scenario.inputs.get(f"{name}:{spec.type}")
        if leaf is not None and _true(model, leaf.given):
            given = late if _true(model, leaf.late) else inputs
            given.append({"input": name, "value": _input(model, leaf)})
    # The update, at its place among the events (`Scenario.places`).
    update = next((where for where, flag in scenario.places if late and _true(model, flag)), None)
    body: dict[str, Any] = {"inputs": inputs}
    product = _fields(model, scenario.product)
    if product or scenario.manifest.inspectionType != "people":
        body[scenario.manifest.inspectionType] = product
    consumer = _fields(model, scenario.consumer)
    if consumer:
        body["consumer"] = consumer
    events: list[dict[str, Any]] = [{"event": "create", "body": body}]

    def place(where: Place) -> None:
        if where == update:
            events.append({"event": "update", "body": {"inputs": late}})

    place(Place("start"))
    events.append({"event": "start"})
    for k, image in enumerate(scenario.images):
        if image.first is not None:
            place(Place("image", k, first=True))
            if _true(model, image.uploaded) and _true(model, image.retaken):
                # the refused first upload of the same photo, then the retake
                events.append(_upload(scenario, model, image, image.first))
        place(Place("image", k))
        if _true(model, image.uploaded):
            events.append(_upload(scenario, model, image, image.validations))
    if scenario.declared:
        place(Place("damage"))
    for damage in scenario.declared:
        if _true(model, damage.present):
            events.append({"event": "damage", "body": _damage(model, damage)})
    place(Place("finish"))
    events.append({"event": "finish", "completedBy": "client"})
    return {"start": f"{today.isoformat()}T12:00:00Z", "events": events}


def _upload(
    scenario: Scenario, model: z3.ModelRef, image: ImageLeaf, leaves: list[ValidationLeaf]
) -> dict[str, Any]:
    """One upload of a photo with the machine results `leaves` give it."""
    event: dict[str, Any] = {"event": "image", "image": image.name}
    results = []
    for v in leaves:
        if not v.run:
            continue
        if v.local:
            valid = _true(model, z3.Bool(scenario.name(f"image.{image.name}.{v.name}.valid")))
            if v.name == "complete" and not valid:
                event["width"], event["height"] = 1, 1
            if v.name == "date" and not valid:
                event["exifDate"] = None
            if v.name == "distance" and valid:
                event["gps"] = PLACE
            continue
        if not _true(model, v.reported):
            continue
        result: dict[str, Any] = {
            "validation": v.name,
            "confidence": _value(model, v.confidence, "number"),
        }
        if _true(model, v.result.defined):
            result["result"] = _value(model, v.result.term, "text")
        damages = [_damage(model, d) for d in v.damages if _true(model, d.present)]
        if damages:
            result["damages"] = damages
        results.append(result)
    if results:
        event["validations"] = results
    return event


@dataclass
class Replayed:
    """What `simulate` made of an events file."""

    state: InspectionState | None
    refused: list[str] = field(default_factory=list)

    @property
    def status(self) -> str | None:
        return None if self.state is None else self.state.status

    @property
    def veredict(self) -> str | None:
        return None if self.state is None else self.state.veredict

    @property
    def rule_errors(self) -> set[str]:
        if self.state is None:
            return set()
        return {error.code for error in self.state.ruleErrors}


def replay(program: Program, script: dict[str, Any]) -> Replayed:
    """Run `script` as `inspectlang simulate` does (each refused event noted, not fatal)."""
    simulation = Simulation(program, script)
    refused: list[str] = []
    for index, event in enumerate(script["events"], start=1):
        try:
            simulation.apply(event)
        except InspectionError as error:
            refused.append(f"event {index} ({event.get('event')}): {error.code}")
        except (ScriptError, KeyError, TypeError, ValueError) as error:
            refused.append(f"event {index} ({event.get('event')}): {error}")
    return Replayed(simulation.state, refused)
