"""A person's part: claim a case, record results and decide, ask for a retake.

Pure functions like `runtime.engine`'s: each checks its request against the state, builds one
event (`claim`, `review`, `retake`) holding who did it, and applies it with `apply_event`, so the
audit trail is the event log (`review.audit` keeps each action's before and after). The
contract is docs/review.md; `who` is the `Person` acting (a member or an API key), made once at
the server's edge.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from runtime.engine import new_object_id
from runtime.errors import InspectionError
from runtime.program import Program
from runtime.state import (
    MAX_DAMAGES,
    DamageRecord,
    Event,
    EventRecord,
    InspectionState,
    allows,
    require,
)
from runtime.transitions import apply_event, iso

Ids = Any
#: Longest reason of a decision, note of a result and message of a retake (characters).
MAX_REASON_CHARS = 2_000
#: Most results one review request may record.
MAX_RESULTS = 200
#: Most photos one retake names (unknown ids are 404 `image_not_found`).
MAX_RETAKE_IMAGES = 50
#: Longest name of a person acting, as the audit trail keeps it (characters).
MAX_NAME_CHARS = 200
#: A person's verdict.
Veredict = Literal["approved", "disapproved"]


# The requests, as typed values: the server decodes each body once, at its edge, into one of
# these (`server.review.schemas`), with the stable codes of a bad body (`invalid_body`,
# `reason_required`); the functions below take them as they are.


@dataclass(frozen=True, slots=True)
class FoundDamage:
    """A damage a reviewer found on a photo: part, kind and severity (1 to 100 characters)."""

    part: str
    damage: str
    severity: str
    percentage: float | None = None


@dataclass(frozen=True, slots=True)
class PersonResult:
    """One validation's result on one photo, as a person's; `note` trimmed, never blank."""

    image_id: str
    validation: str
    valid: bool
    note: str | None = None
    damages: tuple[FoundDamage, ...] = ()


@dataclass(frozen=True, slots=True)
class Decision:
    """A person's verdict and its reason (trimmed, never blank)."""

    veredict: Veredict
    reason: str


@dataclass(frozen=True, slots=True)
class ReviewRequest:
    """Results to record (at most `MAX_RESULTS`), a decision, or both."""

    results: tuple[PersonResult, ...] = ()
    decision: Decision | None = None


@dataclass(frozen=True, slots=True)
class Person:
    """Who acts: a dashboard member or an API key (`id`), and the name the audit trail shows.
    Made with `Person.acting`, which holds what every event's `by` must be."""

    id: str
    name: str

    @classmethod
    def acting(cls, identifier: str, name: str | None = None) -> Person:
        """A person with a non-empty id; the name trimmed to `MAX_NAME_CHARS`, the id when
        blank. An empty id is `ValueError`: the server's edge makes persons from its own
        accounts and keys, never from a request body."""
        if not identifier:
            raise ValueError("a person acting needs an id")
        return cls(identifier, (name or identifier)[:MAX_NAME_CHARS])

    def to_json(self) -> dict[str, str]:
        """As the events and the audit trail hold it: `{id, name}`."""
        return {"id": self.id, "name": self.name}


@dataclass(frozen=True, slots=True)
class RetakeRequest:
    """The photos to take again (ids as sent, repeats allowed) and the consumer's message."""

    images: tuple[str, ...]
    message: str


def _in_review(state: InspectionState, event: Event) -> None:
    """409 unless the inspection waits for a person (`event` is allowed); `review_conflict` when
    another person's decision closed it meanwhile (two reviewers deciding at once: one wins)."""
    if allows(state, event):
        return
    if state.status == "completed" and state.completedBy == "reviewer" and state.review:
        last = state.review.decisions[-1] if state.review.decisions else {}
        who = (last.get("by") or {}).get("name", "another reviewer")
        raise InspectionError(
            "review_conflict",
            f"{who} decided this inspection at {last.get('at')}: {last.get('veredict')}",
        )
    require(state, event)


def claim(
    program: Program,
    state: InspectionState,
    who: Person,
    *,
    release: bool = False,
    now: dt.datetime,
) -> InspectionState:
    """Take a case of the queue (or give it back): 409 `review_conflict` when another person
    holds it."""
    _in_review(state, "claim")
    holder = state.review.assignee if state.review is not None else None
    if holder is not None and holder["id"] != who.id:
        raise InspectionError("review_conflict", f"{holder['name']} already holds this case")
    if release and holder is None:
        return state
    if not release and holder is not None:
        return state  # already theirs
    data = {"by": who.to_json(), "release": release}
    return apply_event(program, state, EventRecord(kind="claim", at=iso(now), data=data))


def review(
    program: Program,
    state: InspectionState,
    request: ReviewRequest,
    who: Person,
    *,
    now: dt.datetime,
    ids: Ids = new_object_id,
) -> InspectionState:
    """`POST /v1/inspection/:id/review`: record each result as a person's and, with a
    `decision`, complete the inspection (`completedBy: reviewer`). The request is already of
    its type (the server decodes the body at its edge); what is left to refuse here is what
    only the state can tell: a photo or validation it does not have, another person's result,
    too many damages."""
    _in_review(state, "decide" if request.decision is not None else "record")
    if not request.results and request.decision is None:
        return state  # nothing to record
    results = list(_results(state, request.results, who, ids))
    if state.damage_count() + sum(len(r["damages"]) for r in results) > MAX_DAMAGES:
        raise InspectionError("invalid_body", f"at most {MAX_DAMAGES} damages")
    data: dict[str, Any] = {"by": who.to_json(), "results": results}
    if request.decision is not None:
        data["veredict"] = request.decision.veredict
        data["reason"] = request.decision.reason
    return apply_event(program, state, EventRecord(kind="review", at=iso(now), data=data))


def _results(
    state: InspectionState,
    results: Sequence[PersonResult],
    person: Person,
    ids: Ids,
) -> Iterable[dict[str, Any]]:
    seen: set[tuple[str, str]] = set()
    for index, result in enumerate(results):
        image_id, name = result.image_id, result.validation
        found = state.find_image(image_id)
        if found is None:
            raise InspectionError("image_not_found", f"no current photo {image_id!r}")
        record = next((v for v in found[1].validations if v.validation == name and v.run), None)
        if record is None:
            raise InspectionError(
                "validation_not_found", f"photo {image_id} has no validation {name!r}"
            )
        if record.reviewedBy is not None and record.reviewedBy["id"] != person.id:
            raise InspectionError(
                "review_conflict",
                f"{record.reviewedBy['name']} already recorded {name} on photo {image_id}",
            )
        key = (found[1].id, record.validation)
        if key in seen:
            raise InspectionError(
                "invalid_body", f"validations.{index}: {name} on {image_id} twice"
            )
        seen.add(key)
        yield {
            "imageId": image_id,
            "validation": name,
            "valid": result.valid,
            "note": result.note,
            # Recorded as found on the photo by the reviewer.
            "damages": [
                {
                    **DamageRecord(
                        id=ids(),
                        part=damage.part,
                        damage=damage.damage,
                        severity=damage.severity,
                        percentage=damage.percentage,
                    ).to_json(),
                    "declared": False,
                    "imageId": image_id,
                }
                for damage in result.damages
            ],
        }


def retake(
    program: Program,
    state: InspectionState,
    request: RetakeRequest,
    who: Person,
    *,
    now: dt.datetime,
) -> InspectionState:
    """`POST /v1/inspection/:id/retake`: the named photos' slots reopen, the inspection goes
    back to `started`; 409 `retake_not_possible` once completed or blocked."""
    require(state, "retake")
    unique = list(dict.fromkeys(request.images))
    for image_id in unique:
        found = state.find_image(image_id)
        if found is None or found[1].templateImageIdentifier is None:
            raise InspectionError("image_not_found", f"no current template photo {image_id!r}")
    data = {"by": who.to_json(), "images": unique, "message": request.message}
    return apply_event(program, state, EventRecord(kind="retake", at=iso(now), data=data))
