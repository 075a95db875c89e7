"""Properties of inspections over random event sequences (hypothesis).

- The state is a pure function of the events: replaying the log gives the same state, on the
  compiled path and on the reference path.
- A refused event changes nothing; a finished inspection refuses every later event.
- Two inspections from one template never share variables.
- A new template revision never changes an existing inspection.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rt_support import CAR_SOURCE, at, car_program, compile_template, create_body, ids, jpeg

import runtime as rt
from inspectlang.manifest import Template
from runtime import InspectionError, InspectionState, Program

PHOTO = jpeg()
SIDES = ("front", "back", "interior")
VALIDATIONS = ("plate", "color", "damage", "recaptured")

actions = st.one_of(
    st.tuples(st.just("start")),
    st.tuples(st.just("upload"), st.sampled_from(SIDES)),
    st.tuples(
        st.just("result"),
        st.integers(0, 3),
        st.sampled_from(VALIDATIONS),
        st.sampled_from([0, 50, 84.5, 85, 100, 101]),
        st.sampled_from(["AB123CD", "ab123cd", "ZZ1"]),
    ),
    st.tuples(st.just("damage"), st.sampled_from(["minor", "severe", "moderate"])),
    st.tuples(st.just("notes"), st.sampled_from(["ok", "x" * 30])),
    st.tuples(st.just("product"), st.integers(-5, 600000)),
    st.tuples(st.just("finish"), st.sampled_from(["client", "consumer", "expiration"])),
    st.tuples(st.just("expire")),
)


def act(program: Program, state: InspectionState, action: tuple[Any, ...], minute: int) -> Any:
    """Apply one action; the new state, or the refusal."""
    now = at(minute)
    product = state.products[0].id
    name = action[0]
    try:
        if name == "start":
            return rt.start(program, state, now=now)
        if name == "upload":
            upload = rt.ImageUpload(data=PHOTO, side=action[1])
            return rt.add_image(program, state, product, upload, now=now, ids=ids(f"i{minute}"))[0]
        if name == "result":
            images = state.products[0].images
            if not images:
                return InspectionError("image_not_found", "no images yet")
            image = images[action[1] % len(images)]
            result = {"validation": action[2], "confidence": action[3], "result": action[4]}
            return rt.record_validation(program, state, image.id, result, now=now)
        if name == "damage":
            damage = {"part": "door", "damage": "dent", "severity": action[1]}
            return rt.declare_damage(
                program, state, product, damage, now=now, ids=ids(f"d{minute}")
            )
        if name == "notes":
            notes = next(i.identifier for i in program.manifest.inputs if i.label == "Notes")
            body = {"inputs": [{"identifier": notes, "value": action[1]}]}
            return rt.update(program, state, body, now=now)
        if name == "product":
            return rt.update_product(
                program, state, product, {"car": {"milage": action[1]}}, now=now
            )
        if name == "finish":
            return rt.finish(program, state, completed_by=action[1], now=now)
        return rt.expire(program, state, now=now)
    except InspectionError as error:
        return error


def run(program: Program, steps: list[tuple[Any, ...]]) -> tuple[InspectionState, list[Any]]:
    state = rt.create(program, create_body(), inspection_type="car", now=at(0), ids=ids())
    outcomes = []
    for minute, action in enumerate(steps, start=1):
        before = state.model_copy(deep=True)
        outcome = act(program, state, action, minute)
        if isinstance(outcome, InspectionError):
            assert state == before  # a refused event changes nothing
        else:
            state = outcome
        outcomes.append(outcome)
    return state, outcomes


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(actions, max_size=14))
def test_state_is_a_pure_function_of_the_events(steps: list[tuple[Any, ...]]) -> None:
    program = car_program()
    state, _ = run(program, steps)
    assert rt.replay(program, state.events) == state
    reference = program.with_path("reference")
    assert rt.replay(reference, state.events) == state
    reference_state, _ = run(reference, steps)
    assert reference_state.model_dump(exclude={"events"}) == state.model_dump(exclude={"events"})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(actions, max_size=10), later=st.lists(actions, min_size=1, max_size=8))
# Finished by the client while machine results were missing: in review, which a finish by
# expiration ends (it failed once run alone, when hypothesis happened to find it).
@example(
    steps=[("notes", "ok"), ("upload", "front"), ("upload", "back"), ("finish", "client")],
    later=[("result", 0, "plate", 100, "AB123CD"), ("finish", "client")],
)
def test_a_finished_inspection_never_changes(
    steps: list[tuple[Any, ...]], later: list[tuple[Any, ...]]
) -> None:
    program = car_program()
    state, _ = run(program, steps)
    if state.status in ("completed", "blocked"):
        finished = state
    else:
        finished = rt.finish(program, state, completed_by="expiration", now=at(100))
    frozen = finished.model_copy(deep=True)
    for minute, action in enumerate(later, start=200):
        outcome = act(program, finished, action, minute)
        assert isinstance(outcome, InspectionError)
        assert outcome.code in (
            "inspection_not_editable",
            "invalid_status_transition",
            "image_not_found",
        )
    assert finished == frozen


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(severities=st.lists(st.sampled_from(["minor", "severe"]), min_size=1, max_size=5))
def test_two_inspections_never_share_variables(severities: list[str]) -> None:
    program = car_program()
    first = rt.create(program, create_body(), inspection_type="car", now=at(0), ids=ids("a"))
    second = rt.create(program, create_body(), inspection_type="car", now=at(0), ids=ids("b"))
    for minute, severity in enumerate(severities, start=1):
        damage = {"part": "door", "damage": "dent", "severity": severity}
        first = rt.declare_damage(program, first, first.products[0].id, damage, now=at(minute))
    assert second.variables == {"score": 100, "risk": "low", "uploads": 0}
    assert first.variables["score"] < 100
    assert first.variables is not second.variables
    fresh = rt.create(program, create_body(), inspection_type="car", now=at(0), ids=ids("c"))
    assert fresh.variables == second.variables


def test_a_new_revision_never_changes_an_existing_inspection() -> None:
    old = car_program()
    state = rt.create(old, create_body(), inspection_type="car", now=at(0), ids=ids())
    changed_source = CAR_SOURCE.replace("set score to score - 10", "set score to score - 99")
    changed_source = changed_source.replace(
        "variable score: numeric = 100", "variable score: numeric = 7"
    )
    new = rt.load_program(compile_template(changed_source, "car.insp"))
    assert new.revision != old.revision
    assert rt.load_program(old.manifest) is old  # both revisions stay loadable side by side
    damage = {"part": "door", "damage": "dent", "severity": "minor"}
    state = rt.declare_damage(old, state, state.products[0].id, damage, now=at(1))
    assert state.variables["score"] == 90
    assert state.template.revision == old.revision
    newer = rt.create(new, create_body(), inspection_type="car", now=at(0), ids=ids("n"))
    assert newer.variables["score"] == 7
    assert rt.replay(old, state.events) == state
    # the new revision's program is never run on the old inspection: refused, nothing changes
    frozen = state.model_copy(deep=True)
    with pytest.raises(InspectionError) as refused:
        rt.declare_damage(new, state, state.products[0].id, damage, now=at(2))
    assert refused.value.code == "template_revision_mismatch"
    with pytest.raises(InspectionError) as replayed:
        rt.replay(new, state.events)
    assert replayed.value.code == "template_revision_mismatch"
    assert state == frozen


def test_revision_cache_is_keyed_by_revision() -> None:
    program = car_program()
    data = program.manifest.to_api()
    data["logic"]["revision"] = "different-revision"
    data["logic"]["verdict"]["otherwise"] = "changed"
    other = rt.load_program(Template.from_api(data))
    assert other is not program
    assert other.otherwise == "changed"
    assert program.otherwise == "Some photos were not approved"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(actions, max_size=14))
def test_an_event_never_changes_an_earlier_state(steps: list[tuple[Any, ...]]) -> None:
    program = car_program()
    state = rt.create(program, create_body(), inspection_type="car", now=at(0), ids=ids())
    history = [(state, state.model_dump())]
    for minute, action in enumerate(steps, start=1):
        outcome = act(program, state, action, minute)
        if not isinstance(outcome, InspectionError):
            state = outcome
            history.append((state, state.model_dump()))
    for earlier, snapshot in history:
        assert earlier.model_dump() == snapshot
