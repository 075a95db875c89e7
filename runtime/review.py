"""A person's part: claim a case, record results and decide, ask for a retake.

Pure functions like `runtime.engine`'s: each checks its request against the state, builds one
event (`claim`, `review`, `retake`) holding who did it, and applies it with `apply_event`, so the
audit trail is the event log (`review.audit` keeps each action's before and after). The
contract is docs/review.md; `who` is `{"id", "name"}` of the member or API key acting.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from runtime.engine import new_object_id
from runtime.errors import InspectionError
from runtime.intake import problem, read_damage
from runtime.program import Program
from runtime.state import MAX_DAMAGES, Event, EventRecord, InspectionState, allows, require
from runtime.transitions import apply_event, iso

Ids = Any
#: Longest reason of a decision, note of a result and message of a retake (characters).
MAX_REASON_CHARS = 2_000
#: Most results one review request may record.
MAX_RESULTS = 200
#: Most photos one retake names (unknown ids are 404 `image_not_found`).
MAX_RETAKE_IMAGES = 50
VEREDICTS = ("approved", "disapproved")


def _who(who: dict[str, str]) -> dict[str, str]:
    if not isinstance(who.get("id"), str) or not who["id"]:
        raise InspectionError("invalid_body", "a person acting needs an id")
    return {"id": who["id"], "name": str(who.get("name") or who["id"])[:200]}


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


def _text(value: Any, field: str, *, required: bool, code: str = "reason_required") -> str | None:
    """A trimmed text of at most MAX_REASON_CHARS; a required one missing or blank is `code`."""
    if value is None or (isinstance(value, str) and not value.strip() and not required):
        if required:
            raise InspectionError(
                code,
                f"{field} is required",
                [problem(field, "required", f"{field} is required")],
            )
        return None
    if not isinstance(value, str) or not value.strip():
        raise InspectionError(
            code if required else "invalid_body",
            f"{field} must be a non-empty text",
            [problem(field, "required", "a non-empty text")],
        )
    if len(value) > MAX_REASON_CHARS:
        raise InspectionError(
            "invalid_body",
            f"{field} has at most {MAX_REASON_CHARS} characters",
            [problem(field, "length", f"at most {MAX_REASON_CHARS}")],
        )
    return value.strip()


def claim(
    program: Program,
    state: InspectionState,
    who: dict[str, str],
    *,
    release: bool = False,
    now: dt.datetime,
) -> InspectionState:
    """Take a case of the queue (or give it back): 409 `review_conflict` when another person
    holds it."""
    _in_review(state, "claim")
    person = _who(who)
    holder = state.review.assignee if state.review is not None else None
    if holder is not None and holder["id"] != person["id"]:
        raise InspectionError("review_conflict", f"{holder['name']} already holds this case")
    if release and holder is None:
        return state
    if not release and holder is not None:
        return state  # already theirs
    data = {"by": person, "release": release}
    return apply_event(program, state, EventRecord(kind="claim", at=iso(now), data=data))


def review(
    program: Program,
    state: InspectionState,
    body: dict[str, Any],
    who: dict[str, str],
    *,
    now: dt.datetime,
    ids: Ids = new_object_id,
) -> InspectionState:
    """`POST /v1/inspection/:id/review`: record each result as a person's and, with
    `veredict`, complete the inspection (`completedBy: reviewer`)."""
    if not isinstance(body, dict):
        raise InspectionError("invalid_body", "the body must be an object")
    unknown = set(body) - {"validations", "veredict", "reason"}
    if unknown:
        raise InspectionError(
            "invalid_body",
            f"unknown field {sorted(unknown)[0]!r}",
            [problem(name, "unknown_field", "not allowed") for name in unknown],
        )
    veredict = body.get("veredict")
    if veredict is not None and veredict not in VEREDICTS:
        raise InspectionError(
            "invalid_body",
            "veredict is approved or disapproved",
            [problem("veredict", "enum", "approved or disapproved")],
        )
    reason = _text(body.get("reason"), "reason", required=veredict is not None)
    items = body.get("validations", [])
    if not isinstance(items, list) or len(items) > MAX_RESULTS:
        raise InspectionError(
            "invalid_body",
            f"validations is a list of at most {MAX_RESULTS} results",
            [problem("validations", "type", "a list")],
        )
    if not items and veredict is None:
        raise InspectionError(
            "invalid_body", "send validations to record, a veredict with its reason, or both"
        )
    person = _who(who)
    _in_review(state, "decide" if veredict is not None else "record")
    results = list(_results(state, items, person, ids))
    if state.damage_count() + sum(len(r["damages"]) for r in results) > MAX_DAMAGES:
        raise InspectionError("invalid_body", f"at most {MAX_DAMAGES} damages")
    data: dict[str, Any] = {"by": person, "results": results}
    if veredict is not None:
        data["veredict"] = veredict
        data["reason"] = reason
    return apply_event(program, state, EventRecord(kind="review", at=iso(now), data=data))


def _results(
    state: InspectionState, items: list[Any], person: dict[str, str], ids: Ids
) -> Iterable[dict[str, Any]]:
    seen: set[tuple[str, str]] = set()
    for index, item in enumerate(items):
        where = f"validations.{index}"
        if not isinstance(item, dict) or set(item) - {
            "imageId",
            "validation",
            "valid",
            "note",
            "damages",
        }:
            raise InspectionError(
                "invalid_body",
                f"{where}: a result is {{imageId, validation, valid, note?, damages?}}",
                [problem(where, "type", "a result object")],
            )
        image_id, name, valid = item.get("imageId"), item.get("validation"), item.get("valid")
        if not isinstance(valid, bool):
            raise InspectionError(
                "invalid_body",
                f"{where}.valid must be true or false",
                [problem(f"{where}.valid", "type", "a boolean")],
            )
        found = state.find_image(image_id) if isinstance(image_id, str) else None
        if found is None:
            raise InspectionError("image_not_found", f"no current photo {image_id!r}")
        record = next((v for v in found[1].validations if v.validation == name and v.run), None)
        if record is None:
            raise InspectionError(
                "validation_not_found", f"photo {image_id} has no validation {name!r}"
            )
        if record.reviewedBy is not None and record.reviewedBy["id"] != person["id"]:
            raise InspectionError(
                "review_conflict",
                f"{record.reviewedBy['name']} already recorded {name} on photo {image_id}",
            )
        key = (found[1].id, record.validation)
        if key in seen:
            raise InspectionError("invalid_body", f"{where}: {name} on {image_id} twice")
        seen.add(key)
        damages = item.get("damages") or []
        if not isinstance(damages, list):
            raise InspectionError(
                "invalid_body",
                f"{where}.damages is a list of {{part, damage, severity}}",
                [problem(f"{where}.damages", "type", "a list")],
            )
        result: dict[str, Any] = {
            "imageId": image_id,
            "validation": name,
            "valid": valid,
            "note": _text(item.get("note"), f"{where}.note", required=False),
            # Checked as a declared damage (a bad one is `invalid_body`), recorded as found on
            # the photo by the reviewer.
            "damages": [
                {
                    **read_damage(d, ids, declared=True).to_json(),
                    "declared": False,
                    "imageId": image_id,
                }
                for d in damages
            ],
        }
        yield result


def retake(
    program: Program,
    state: InspectionState,
    body: dict[str, Any],
    who: dict[str, str],
    *,
    now: dt.datetime,
) -> InspectionState:
    """`POST /v1/inspection/:id/retake`: the named photos' slots reopen, the inspection goes
    back to `started`; 409 `retake_not_possible` once completed or blocked."""
    if not isinstance(body, dict) or set(body) - {"images", "message"}:
        raise InspectionError("invalid_body", "the body is {images: [imageId, ...], message}")
    images = body.get("images")
    if (
        not isinstance(images, list)
        or not images
        or not all(isinstance(i, str) for i in images)
        or len(images) > MAX_RETAKE_IMAGES
    ):
        raise InspectionError(
            "invalid_body",
            "images is a non-empty list of image ids",
            [problem("images", "type", "a list of image ids")],
        )
    message = _text(body.get("message"), "message", required=True, code="invalid_body")
    require(state, "retake")
    person = _who(who)
    unique = list(dict.fromkeys(images))
    for image_id in unique:
        found = state.find_image(image_id)
        if found is None or found[1].templateImageIdentifier is None:
            raise InspectionError("image_not_found", f"no current template photo {image_id!r}")
    data = {"by": person, "images": unique, "message": message}
    return apply_event(program, state, EventRecord(kind="retake", at=iso(now), data=data))
