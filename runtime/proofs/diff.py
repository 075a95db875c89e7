"""`inspectlang diff OLD.insp NEW.insp`: what a new revision of a template decides differently.

Both revisions run over one shared scenario (`runtime.proofs.symbolic.Scenario` with `shared`:
the same inputs, product and consumer fields by name, the same photos and results by image and
validation name, the same update at the same place), and the solver looks for an inspection one
approves and the other does not, in each direction. Each example is two events files (one per
revision: an input the other revision does not declare is left out of its create), each
replayed through simulate; or the answer is "equivalent": no inspection of the scenario's shape
is approved by one revision and not by the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import z3

from runtime.program import Program
from runtime.proofs.properties import Prover, summary
from runtime.proofs.symbolic import Unsupported

Answer = Literal["differs", "same", "unknown"]
#: Why an answer is `unknown`: a construct the encoding does not express, or no answer within
#: the time budget (the solver gave up, or it and the runtime did not agree in time).
Unknown = Literal["not_expressed", "undecided"]


@dataclass
class Direction:
    """One direction of the difference: approved by `by`, not by the other."""

    key: str
    description: str
    answer: Answer
    detail: str = ""
    old_events: dict[str, Any] | None = None
    new_events: dict[str, Any] | None = None
    old_end: dict[str, Any] | None = None
    new_end: dict[str, Any] | None = None
    #: With `unknown`: why, as a code (`detail` says it in English).
    reason: Unknown | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "difference": self.key,
            "description": self.description,
            "answer": self.answer,
        }
        if self.detail:
            data["detail"] = self.detail
        if self.reason is not None:
            data["reason"] = self.reason
        if self.answer == "differs":
            data["example"] = {
                "old": {"events": self.old_events, "ends": self.old_end},
                "new": {"events": self.new_events, "ends": self.new_end},
            }
        return data


@dataclass
class Difference:
    directions: list[Direction]

    @property
    def equivalent(self) -> bool:
        return all(d.answer == "same" for d in self.directions)

    def to_json(self) -> dict[str, Any]:
        return {
            "equivalent": self.equivalent,
            "differences": [d.to_json() for d in self.directions],
        }


def difference(old: Program, new: Program) -> Difference:
    """Inspections approved by one revision and not by the other, each way."""
    try:
        prover = Prover(old, new)
    except Unsupported as error:
        why = f"not expressed: {error}"
        return Difference(
            [
                Direction(key, description, "unknown", why, reason="not_expressed")
                for key, description in (
                    ("approved_by_new_only", "approved by NEW and not by OLD"),
                    ("approved_by_old_only", "approved by OLD and not by NEW"),
                )
            ]
        )
    # An inspection a revision's intake refuses (a date order broken) is not approved by it.
    before, after = (z3.And(s.accepted, s.outcome.approved) for s in prover.scenarios)
    asked = [
        (
            "approved_by_new_only",
            "approved by NEW and not by OLD",
            z3.And(after, z3.Not(before)),
        ),
        (
            "approved_by_old_only",
            "approved by OLD and not by NEW",
            z3.And(before, z3.Not(after)),
        ),
    ]
    directions = []
    for key, description, goal in asked:
        found = prover.find(goal)
        if found.unknown:
            unknown = Direction(key, description, "unknown", found.unknown, reason="undecided")
            directions.append(unknown)
        elif found.model is None or len(found.replays) != 2:
            directions.append(Direction(key, description, "same"))
        else:
            directions.append(
                Direction(
                    key,
                    description,
                    "differs",
                    "",
                    found.scripts[0],
                    found.scripts[1],
                    summary(found.replays[0]),
                    summary(found.replays[1]),
                )
            )
    return Difference(directions)
