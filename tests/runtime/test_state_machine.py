"""The inspection's moves are one table (`runtime.state.MOVES`): walk it (issue 38).

From every state the scripts and random walks reach, every request either moves as the table
says (the new stage is the table's target, then only the follow-ups the data may add) or, where
the table has no move, is refused with the event's stable code and changes nothing.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rt_support import at, car_program, create_body, ids, input_id, jpeg

import runtime as rt
from runtime import review as rv
from runtime.errors import InspectionError
from runtime.program import Program
from runtime.state import (
    EVENTS,
    MOVES,
    REFUSALS,
    STAGE_STATUS,
    Event,
    InspectionState,
    Stage,
    allows,
    stage,
)

PHOTO = jpeg()
ANA = rv.Person.acting("m1", "Ana Reviewer")
#: The codes that say "not in this status": a request the table allows never gets one.
STATUS_CODES = frozenset(code for code, _ in REFUSALS.values())


@dataclass(frozen=True)
class Request:
    """One thing a caller may ask: the table event it is, the other events the runtime may
    make of it instead (`finish` ends in `refer` when a person must decide), and the follow-ups
    the data may add after it."""

    run: Callable[[Program, InspectionState, dt.datetime], InspectionState]
    event: Event
    instead: tuple[Event, ...] = ()
    follow_ups: tuple[Event, ...] = ()


def _upload(side: str) -> Callable[[Program, InspectionState, dt.datetime], InspectionState]:
    def run(program: Program, state: InspectionState, now: dt.datetime) -> InspectionState:
        upload = rt.ImageUpload(data=PHOTO, side=side)
        product = state.products[0].id
        made = ids(f"{side[0]}{now:%M}")
        return rt.add_image(program, state, product, upload, now=now, ids=made)[0]

    return run


def _waiting(state: InspectionState) -> tuple[str, str] | None:
    """The first current photo's first run validation with no result (image id, name)."""
    for image in state.products[0].images:
        for record in image.validations:
            if record.run and not record.reported:
                return image.id, record.validation
    return None


Run = Callable[[Program, InspectionState, dt.datetime], InspectionState]


def _result(confidence: float) -> Run:
    def run(program: Program, state: InspectionState, now: dt.datetime) -> InspectionState:
        found = _waiting(state)
        image_id, name = found if found is not None else ("0" * 24, "plate")
        result = {"validation": name, "confidence": confidence, "result": "AB123CD"}
        return rt.record_validation(program, state, image_id, result, now=now)

    return run


def _notes(program: Program, state: InspectionState, now: dt.datetime) -> InspectionState:
    body = {"inputs": [{"identifier": input_id(program, "Notes"), "value": "ok"}]}
    return rt.update(program, state, body, now=now)


def _damage(program: Program, state: InspectionState, now: dt.datetime) -> InspectionState:
    damage = {"part": "door", "damage": "dent", "severity": "minor"}
    return rt.declare_damage(program, state, state.products[0].id, damage, now=now, ids=ids("d"))


def _record(program: Program, state: InspectionState, now: dt.datetime) -> InspectionState:
    found = _waiting(state) or ("0" * 24, "plate")
    request = rv.ReviewRequest(results=(rv.PersonResult(found[0], found[1], valid=True),))
    return rv.review(program, state, request, ANA, now=now)


def _decide(program: Program, state: InspectionState, now: dt.datetime) -> InspectionState:
    request = rv.ReviewRequest(decision=rv.Decision("approved", "looked at it"))
    return rv.review(program, state, request, ANA, now=now)


def _retake(program: Program, state: InspectionState, now: dt.datetime) -> InspectionState:
    images = [image.id for image in state.products[0].images] or ["0" * 24]
    return rv.retake(program, state, rv.RetakeRequest(tuple(images[:1]), "again"), ANA, now=now)


#: What a machine's result may lead to: the analysis over, a slot blocked, or a review's end.
LATER: tuple[Event, ...] = ("analysed", "exhaust", "conclude", "refer")

REQUESTS: dict[str, Request] = {
    "start": Request(lambda p, s, n: rt.start(p, s, now=n), "start"),
    "notes": Request(_notes, "edit"),
    "damage": Request(_damage, "edit"),
    "front": Request(_upload("front"), "edit", follow_ups=("analyse", "analysed", "exhaust")),
    "back": Request(_upload("back"), "edit", follow_ups=("analyse", "analysed", "exhaust")),
    "pass": Request(_result(100), "result", follow_ups=LATER),
    "fail": Request(_result(0), "result", follow_ups=LATER),
    "finish": Request(
        lambda p, s, n: rt.finish(p, s, completed_by="client", now=n), "finish", ("refer",)
    ),
    "time_out": Request(
        lambda p, s, n: rt.finish(p, s, completed_by="expiration", now=n), "time_out"
    ),
    "expire": Request(lambda p, s, n: rt.expire(p, s, now=n), "expire"),
    "renew": Request(lambda p, s, n: rt.renew(p, s, now=n), "renew", follow_ups=("analyse",)),
    "claim": Request(lambda p, s, n: rv.claim(p, s, ANA, now=n), "claim"),
    "record": Request(_record, "record"),
    "decide": Request(_decide, "decide"),
    "retake": Request(_retake, "retake", follow_ups=("analyse",)),
}

#: Paths to every stage of the table (each state on the way is walked too).
SCRIPTS: list[list[str]] = [
    ["start", "front", "pass", "pass", "back", "pass", "pass"],
    ["front", "start", "notes", "finish", "claim", "record", "decide"],
    ["front", "back", "notes", "finish", "retake", "pass", "finish", "pass", "pass"],
    ["front", "expire", "renew", "start", "expire", "renew", "notes", "time_out"],
    ["start", "front", "fail", "fail", "front", "fail", "fail"],
    ["notes", "front", "back", "finish", "time_out"],
    ["notes", "front", "back", "finish", "pass", "pass", "pass", "pass"],
    ["damage", "notes", "finish"],
]


def _reach(source: Stage, events: tuple[Event, ...], follow_ups: tuple[Event, ...]) -> set[Stage]:
    """The stages `events` may lead to from `source`, with up to two follow-ups after."""
    found = {MOVES[event][source] for event in events if source in MOVES[event]}
    for _ in range(2):
        found |= {MOVES[e][s] for s in found for e in follow_ups if s in MOVES[e]}
    return found


def check_request(
    program: Program, state: InspectionState, name: str, now: dt.datetime
) -> InspectionState | None:
    """Make request `name` and check it against the table; the new state, or None."""
    request = REQUESTS[name]
    before, frozen = stage(state), state.model_dump()
    try:
        new = request.run(program, state, now)
    except InspectionError as error:
        assert state.model_dump() == frozen, f"{name} refused, but changed the state"
        if allows(state, request.event):
            assert error.code not in STATUS_CODES or error.code == "review_conflict", (
                f"{name} from {before}: the table allows it, refused with {error.code}"
            )
        else:
            code = REFUSALS[request.event][0]
            decided = state.status == "completed" and state.completedBy == "reviewer"
            assert error.code == code or (decided and error.code == "review_conflict"), (
                f"{name} from {before}: {error.code}, the table says {code}"
            )
        return None
    assert allows(state, request.event), f"{name} from {before}: accepted, the table refuses it"
    targets = _reach(before, (request.event, *request.instead), request.follow_ups)
    assert stage(new) in targets, f"{name} from {before} -> {stage(new)}, not in {targets}"
    assert new.status == STAGE_STATUS[stage(new)]
    return new


def walk(program: Program, steps: list[str]) -> set[Stage]:
    """Follow `steps`, trying every request from each state on the way; the stages seen."""
    state = rt.create(program, create_body(), inspection_type="car", now=at(0), ids=ids())
    seen = {stage(state)}
    for minute, name in enumerate(steps, start=1):
        for other in REQUESTS:
            new = check_request(program, state, other, at(minute))
            if new is not None:
                seen.add(stage(new))
        new = check_request(program, state, name, at(minute))
        if new is not None:
            state = new
    for other in REQUESTS:
        check_request(program, state, other, at(len(steps) + 1))
    return seen


def test_the_table_is_whole() -> None:
    """Every event has a refusal, every stage shows a status, and every stage a move reaches is
    one the table knows."""
    assert set(REFUSALS) == set(EVENTS) == set(MOVES)
    for moves in MOVES.values():
        assert set(moves) | set(moves.values()) <= set(STAGE_STATUS)


def test_every_stage_is_reached_and_every_request_obeys_the_table() -> None:
    program = car_program()
    seen: set[Stage] = set()
    for script in SCRIPTS:
        seen |= walk(program, script)
    assert seen == set(STAGE_STATUS)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.sampled_from(sorted(REQUESTS)), max_size=14))
def test_random_walks_obey_the_table(steps: list[str]) -> None:
    program = car_program()
    state = rt.create(program, create_body(), inspection_type="car", now=at(0), ids=ids())
    for minute, name in enumerate(steps, start=1):
        state = check_request(program, state, name, at(minute)) or state


def test_a_finish_is_one_move_to_review() -> None:
    """A finish that needs a person goes to `review` in one move: no `completed` on the way."""
    program = car_program()
    state = rt.create(program, create_body(), inspection_type="car", now=at(0), ids=ids())
    for minute, name in enumerate(["notes", "front", "back"], start=1):
        state = REQUESTS[name].run(program, state, at(minute))
    finished = rt.finish(program, state, completed_by="client", now=at(9))
    assert finished.status == "review"
    assert finished.completedBy is None and finished.completedAt is None
    assert finished.review is not None and finished.review.finishedBy == "client"


@pytest.mark.parametrize("document", [{"resumeStatus": "started"}, {}])
def test_a_stored_state_from_before_the_table_still_loads(document: dict[str, Any]) -> None:
    program = car_program()
    state = rt.create(program, create_body(), inspection_type="car", now=at(0), ids=ids())
    stored = {**state.model_dump(mode="json", by_alias=True), **document}
    assert InspectionState.model_validate(stored) == state
