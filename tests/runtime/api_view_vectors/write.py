"""Writes the Inspection object vectors (`tests/runtime/test_api_view_vectors.py`): each is a
stored state, the template it belongs to, and the JSON `runtime.to_api` wrote for it.

The states come from the built-ins' and examples' cases and events files run through simulate
(every product type), and from scenarios simulate cannot script: a person's results and
decision, a claim, a retake and the photo it replaced, extra photos, identity entities, EXIF
evidence, a second locale. Run `python tests/runtime/api_view_vectors/write.py` to write them
again, only when the Inspection object is meant to change (docs/api.md says how).
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "runtime")]

from api_view_vectors.templates import REVIEW_SOURCE, program_of  # noqa: E402

import runtime as rt  # noqa: E402
from runtime import review as rv  # noqa: E402
from runtime.cli import Simulation, photo  # noqa: E402
from runtime.errors import InspectionError  # noqa: E402
from runtime.program import Program  # noqa: E402
from runtime.state import InspectionState  # noqa: E402
from runtime.validators import REGISTRY  # noqa: E402

#: The vector files' JSON: one state and its document per vector.
Vector = dict[str, Any]


def _simulated(program: Program, script: dict[str, Any]) -> Iterator[tuple[int, InspectionState]]:
    simulation = Simulation(program, script)
    for index, event in enumerate(script["events"], start=1):
        try:
            simulation.apply(event)
        except InspectionError:
            continue
        if simulation.state is not None:
            yield index, simulation.state


def vector(name: str, program: Program, state: InspectionState) -> Vector:
    """The state without its event log (the Inspection object does not show it), and the
    document written for it."""
    stored = state.model_dump(mode="json", by_alias=True, exclude={"events"})
    inspection = rt.to_api(program, state)
    assert json.dumps(rt.to_api(program, InspectionState.model_validate(stored))) == json.dumps(
        inspection
    ), name
    return {"name": name, "state": stored, "inspection": inspection}


def cases_file(template: dict[str, Any], cases: Path) -> list[Vector]:
    """The last state of each case, and the first step of the first (just created)."""
    program = program_of(template)
    vectors: list[Vector] = []
    for number, case in enumerate(json.loads(cases.read_text(encoding="utf-8"))["cases"]):
        steps = list(_simulated(program, case))
        kept = steps[:1] + steps[-1:] if number == 0 else steps[-1:]
        vectors += [vector(f"{case['name']} (event {i})", program, s) for i, s in kept]
    return vectors


def events_file(template: dict[str, Any], events: Path) -> list[Vector]:
    """Every step of an example's events file, in its locale and in the template's others."""
    program = program_of(template)
    script = json.loads(events.read_text(encoding="utf-8"))
    vectors = [vector(f"event {i}", program, s) for i, s in _simulated(program, script)]
    for locale in program.manifest.logic.locales[1:]:
        localized = {**script, "events": [_in_locale(e, locale) for e in script["events"]]}
        steps = list(_simulated(program, localized))
        if steps:
            vectors.append(vector(f"last event in {locale}", program, steps[-1][1]))
    return vectors


def _in_locale(event: dict[str, Any], locale: str) -> dict[str, Any]:
    if event.get("event") != "create":
        return event
    return {**event, "body": {**event.get("body", {}), "locale": locale}}


NOW = dt.datetime(2026, 3, 2, 12, 0, tzinfo=dt.UTC)
ANA = rv.Person.acting("m1", "Ana Reviewer")
GPS = [-34.6037, -58.3816]


def _at(minutes: int) -> dt.datetime:
    return NOW + dt.timedelta(minutes=minutes)


def _counter(prefix: str) -> Any:
    numbers = iter(range(1, 10_000))
    return lambda: f"{prefix}{next(numbers):0{24 - len(prefix)}x}"


def _upload(
    program: Program, state: InspectionState, side: str, minutes: int, prefix: str
) -> tuple[InspectionState, Any]:
    found = program.image_by_side(side)
    upload = rt.ImageUpload(
        photo({"gps": GPS}, _at(minutes)),
        "image/jpeg",
        identifier=found.identifier if found is not None else None,
        side=None if found is not None else side,
        src=f"https://blobs.example/{prefix}/{{id}}.jpg",
    )
    return rt.add_image(
        program,
        state,
        state.products[0].id,
        upload,
        now=_at(minutes),
        ids=_counter(prefix),
        machine=frozenset(REGISTRY),  # a bare install: `recaptured` waits for a person
    )


def review_scenarios() -> list[Vector]:
    """A person's part: results with a note and damages, a claim, a decision, a retake and the
    photo it replaced, an extra photo, EXIF evidence with a device."""
    template = {"source": REVIEW_SOURCE}
    program = program_of(template)
    vectors: list[Vector] = []
    state = rt.create(
        program,
        {
            "locale": "es_AR",
            "car": {"plate": "AB123CD", "year": 2019},
            "consumer": {"firstName": "Ana", "identification": "20123456", "sex": "female"},
            "metadata": {"branch": "7"},
            "inputs": [
                {
                    "identifier": next(i.identifier for i in program.manifest.inputs),
                    "value": "commercial",
                }
            ],
        },
        inspection_type="car",
        now=NOW,
        ids=_counter("c"),
        company_id="c1",
        user_id="u1",
    )
    vectors.append(vector("created in es_AR", program, state))
    state = rt.start(program, state, now=_at(0))
    state, front = _upload(program, state, "front", 1, "f")
    state, _ = _upload(program, state, "back", 2, "b")
    state, _ = _upload(program, state, "roof", 3, "x")  # no such image: an extra photo
    state = rt.declare_damage(
        program,
        state,
        state.products[0].id,
        {"part": "door", "damage": "dent", "severity": "minor", "percentage": 12.5},
        now=_at(3),
        ids=_counter("d"),
    )
    state = rt.finish(program, state, completed_by="consumer", now=_at(5))
    vectors.append(vector("in review", program, state))
    state = rv.claim(program, state, ANA, now=_at(6))
    state = rv.review(
        program,
        state,
        rv.ReviewRequest(
            results=(
                rv.PersonResult(
                    front.id,
                    "plate",
                    True,
                    note="Read by hand",
                    damages=(rv.FoundDamage("bumper", "scratch", "minor", 3),),
                ),
            )
        ),
        ANA,
        now=_at(7),
        ids=_counter("r"),
    )
    vectors.append(vector("claimed, a result recorded by a person", program, state))
    retaken = rv.retake(
        program, state, rv.RetakeRequest((front.id,), "The plate is not readable"), ANA, now=_at(8)
    )
    vectors.append(vector("a retake asked", program, retaken))
    again, _ = _upload(program, retaken, "front", 9, "g")
    vectors.append(vector("the retaken photo uploaded", program, again))
    again = rt.finish(program, again, completed_by="consumer", now=_at(10))
    decided = rv.review(
        program,
        again,
        rv.ReviewRequest(decision=rv.Decision("approved", "Plate checked by hand")),
        ANA,
        now=_at(11),
    )
    vectors.append(vector("decided by a person after a retake", program, decided))
    disapproved = rv.review(
        program,
        state,
        rv.ReviewRequest(decision=rv.Decision("disapproved", "A photo of a screen")),
        ANA,
        now=_at(9),
    )
    vectors.append(vector("disapproved by a person", program, disapproved))
    evidence = state.model_copy(deep=True)
    image = evidence.products[0].images[0]
    image.takenAtSource = "exif"
    image.takenAt = "2026-03-02T11:58:00Z"
    image.locationSource = "exif"
    image.device = {"make": "Acme", "model": "Phone 3", "software": "Camera 1.2"}
    vectors.append(vector("EXIF evidence and a device", program, evidence))
    blank = state.model_copy(deep=True)
    for image in blank.products[0].images:
        image.latitude = image.longitude = None
        image.takenAt = None
        image.takenAtSource = None
    vectors.append(vector("photos without time or place", program, blank))
    custom = state.model_copy(deep=True)  # uploads sent with `target: custom`
    custom.products[0].images[1].target = "custom"
    custom.products[0].extraImages[0].target = "custom"
    vectors.append(vector("photos of the custom part", program, custom))
    return vectors


def identity_scenarios() -> list[Vector]:
    """Entities read from an identity document (the people built-in)."""
    template = {"builtin": ["easy", "people"]}
    program = program_of(template)
    state = rt.create(
        program,
        {
            "locale": "en_US",
            "people": {},
            "consumer": {
                "firstName": "Ana",
                "lastName": "Gómez",
                "identification": "30123456",
                "birthdate": "1990-01-02",
            },
        },
        inspection_type="people",
        now=NOW,
        ids=_counter("p"),
    )
    state = rt.start(program, state, now=_at(0))
    spec = program.manifest.images[0]
    upload = rt.ImageUpload(photo({"gps": GPS}, _at(1)), "image/jpeg", identifier=spec.identifier)
    state, record = rt.add_image(
        program, state, state.products[0].id, upload, now=_at(1), ids=_counter("q")
    )
    validation = next(v for v in record.validations if v.run)
    state = rt.record_validation(
        program,
        state,
        record.id,
        {"validation": validation.validation, "confidence": 91, "result": "30123456"},
        entities=[
            {"entity": "name", "valid": True, "result": "ANA GOMEZ"},
            {"entity": "birthdate", "valid": False, "result": None},
            {"entity": "number", "valid": True, "result": 30123456},
        ],
        now=_at(2),
        ids=_counter("e"),
    )
    return [vector("identity entities", program, state)]


#: Each vector file: its template and how its states are made.
def files() -> Iterator[tuple[str, dict[str, Any], list[Vector]]]:
    builtins = ROOT / "inspectlang" / "builtins"
    for cases in sorted(builtins.glob("*.tests.json")):
        kind, alias = cases.name.removesuffix(".tests.json").split("_")
        template = {"builtin": [alias, kind]}
        yield cases.name.removesuffix(".tests.json"), template, cases_file(template, cases)
    for events in sorted((ROOT / "examples").glob("*.events.json")):
        name = events.name.removesuffix(".events.json")
        template = {"example": f"{name}.insp"}
        vectors = events_file(template, events)
        cases = events.with_name(f"{name}.tests.json")
        if cases.exists():
            vectors += cases_file(template, cases)
        yield f"example_{name}", template, vectors
    yield "review", {"source": REVIEW_SOURCE}, review_scenarios()
    yield "identity", {"builtin": ["easy", "people"]}, identity_scenarios()


def main() -> None:
    for name, template, vectors in files():
        path = HERE / f"{name}.json"
        lines = [json.dumps(v, ensure_ascii=False) for v in vectors]
        text = json.dumps(template, ensure_ascii=False)
        path.write_text(
            '{"template": ' + text + ',\n"vectors": [\n' + ",\n".join(lines) + "\n]}\n",
            encoding="utf-8",
        )
        print(f"{path.relative_to(ROOT)}: {len(vectors)} vectors")


if __name__ == "__main__":
    main()
