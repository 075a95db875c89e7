"""The properties `inspectlang verify` proves, one function per property, each answering
`holds` or `fails` with an events file (`unknown` when the solver or the replay cannot say).

A property is a question "is there an inspection where X?" put to the solver. Safety
properties hold when there is none; reachability properties (approval reachable, each line
and rule branch reachable) hold when there is one, and their example is kept. Every model the
answer rests on is replayed through `simulate` (`runtime.proofs.events`) and must end in the
status and verdict the formula predicts, and in the property's own observation (a rule error
recorded, a line's condition true) where the runtime's state shows it; a model the runtime
disagrees with teaches the uninterpreted functions their true values and is asked again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import z3

from runtime.evaldata import build_env
from runtime.program import Program
from runtime.proofs.events import Replayed, events_of, replay
from runtime.proofs.symbolic import (
    MAX_DECLARED,
    Functions,
    Outcome,
    Scenario,
    Unsupported,
    late_inputs,
)
from runtime.proofs.terms import FALSE
from runtime.reference import ReferenceEvaluator

Answer = Literal["holds", "fails", "unknown"]
#: Refinements of one question before its answer is `unknown`.
MAX_ROUNDS = 8
#: Milliseconds of wall time z3 may take on one question (a loaded machine gave 2 s questions
#: that take 0.3 s of CPU alone `unknown`).
SOLVER_TIMEOUT_MS = 5_000
#: Seconds one `verify` or `diff` may spend in all; the questions left are `unknown` (a
#: template of many text functions met the per-question limit on every refinement round).
BUDGET_SECONDS = 60.0


@dataclass
class Result:
    """One property's answer."""

    name: str
    description: str
    answer: Answer
    #: Why it fails or is unknown, or what the example shows.
    detail: str = ""
    #: The counterexample (fails) or example (reachability holds) as an events file.
    events: dict[str, Any] | None = None
    #: What simulate made of the events: status, veredict.
    replayed: dict[str, Any] | None = None
    model: Any = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "property": self.name,
            "description": self.description,
            "answer": self.answer,
        }
        if self.detail:
            data["detail"] = self.detail
        if self.events is not None:
            data["events"] = self.events
        if self.replayed is not None:
            data["replayed"] = self.replayed
        return data


Observation = Callable[[Program, Replayed], bool]


@dataclass
class Found:
    """A scenario the runtime agrees with, or why there is none to report."""

    events: dict[str, Any] | None
    replayed: Replayed | None
    unknown: str = ""
    model: z3.ModelRef | None = None
    #: One events file and replay per program (`diff` asks two).
    scripts: list[dict[str, Any]] = field(default_factory=list)
    replays: list[Replayed] = field(default_factory=list)


class Prover:
    """One solver over one scenario of a template, asked question after question."""

    def __init__(self, program: Program, *others: Program) -> None:
        self.program = program
        self.programs = (program, *others)
        functions = Functions()
        self.functions = functions
        #: The inputs an update may give, in either revision: one inspection for both.
        late = frozenset().union(*(late_inputs(p) for p in self.programs))
        first = Scenario(program, functions, late=late)
        #: One scenario per program, sharing their leaves (inputs, product and consumer fields
        #: by name, photos and results by image and validation name, the update's place):
        #: `diff` compares them.
        self.scenarios = [first] + [Scenario(p, functions, shared=first, late=late) for p in others]
        self.scenario = first
        #: What every question is asked under: the scenarios' constraints, and the facts the
        #: runtime taught the uninterpreted functions so far.
        self.base: list[z3.BoolRef] = [c for s in self.scenarios for c in s.constraints]
        if not others:
            # One revision: only the inspections its intake takes are asked about.
            self.base += first.intake
        #: Assumed first: the constraints only simulate's drawing needs (`Scenario.realizable`).
        self.drawable = z3.Bool("drawable by simulate")
        self.base.append(
            z3.Implies(
                self.drawable,
                z3.And(True, *[c for scenario in self.scenarios for c in scenario.realizable]),
            )
        )
        #: Assumed where a model must be exact: each deferred string atom is its Boolean.
        self.exact = z3.Bool("deferred atoms exact")
        self.base.append(
            z3.Implies(
                self.exact,
                z3.And(True, *[b == atom for b, atom, _ in functions.deferred.values()]),
            )
        )
        self.pinned = functions.pinned()
        self.questions = 0
        self.outcome: Outcome = first.outcome
        self.deadline = time.perf_counter() + BUDGET_SECONDS
        #: Models the runtime agreed with, with their events and replays.
        self.seen: list[tuple[z3.ModelRef, list[dict[str, Any]], list[Replayed]]] = []

    def predicted(self, model: z3.ModelRef, outcome: Outcome | None = None) -> tuple[str, str]:
        """(status, veredict) the formula says the model ends in."""
        outcome = outcome or self.outcome

        def true(term: z3.BoolRef) -> bool:
            return bool(z3.is_true(model.eval(term, model_completion=True)))

        if true(outcome.blocked):
            return "blocked", "not_defined"
        if true(outcome.review):
            return "review", "not_defined"
        return "completed", "approved" if true(outcome.approved) else "disapproved"

    def find(
        self, goal: z3.BoolRef, observe: Observation | None = None, expected: bool = True
    ) -> Found:
        """A scenario where `goal` holds, replayed; `Found(None, None)` when there is none.
        `expected`: whether one is likely (a reachability question; a safety question expects
        none, so its solver is asked first without the drawing constraints)."""
        for model, scripts, replays in self.seen:
            # An inspection replayed for an earlier question may answer this one too.
            if z3.is_true(model.eval(goal, model_completion=True)) and (
                observe is None or observe(self.program, replays[0])
            ):
                return Found(scripts[0], replays[0], model=model, scripts=scripts, replays=replays)
        self.questions += 1
        for _ in range(MAX_ROUNDS):
            left = self.deadline - time.perf_counter()
            if left <= 0:
                return Found(None, None, f"the time budget ({BUDGET_SECONDS:g} s) was spent")
            timeout = int(min(SOLVER_TIMEOUT_MS, left * 1000)) + 1
            model, realizable = self._model(goal, timeout, expected)
            if model is None:
                return Found(None, None, realizable)
            scripts = [events_of(scenario, model) for scenario in self.scenarios]
            replays = [
                replay(program, script)
                for program, script in zip(self.programs, scripts, strict=True)
            ]
            disagreements = [
                _disagreement(replayed, self.predicted(model, scenario.outcome))
                if z3.is_true(model.eval(scenario.accepted, model_completion=True))
                else _refusal_disagreement(replayed)
                for scenario, replayed in zip(self.scenarios, replays, strict=True)
            ]
            if not any(disagreements) and (observe is None or observe(self.program, replays[0])):
                self.seen.append((model, scripts, replays))
                return Found(scripts[0], replays[0], model=model, scripts=scripts, replays=replays)
            facts = self.scenario.functions.refine(model)
            if not facts:
                why = next((d for d in disagreements if d), "the property is not observed")
                return Found(
                    scripts[0], replays[0], f"the runtime disagrees with the solver: {why}"
                )
            self.base += facts
        return Found(None, None, f"no agreement with the runtime after {MAX_ROUNDS} rounds")

    def _model(
        self, goal: z3.BoolRef, timeout_ms: int, expected: bool = True
    ) -> tuple[z3.ModelRef | None, str]:
        """A model of the goal, preferring one simulate can draw; (None, "") when there is
        none, (None, why) when the solver cannot tell.

        Each question gets a fresh solver over `base`, never the earlier questions. Measured
        (goods_delivery, used_phone_resale): one solver asked question after question (each an
        assumed literal) timed out on every question after the first that timed out, and
        slowed as the questions piled up, where a fresh solver answered each in 0.3 s."""
        solver = new_solver(timeout_ms)
        solver.add(self.base)
        solver.add(goal)
        if not expected:
            # Most safety questions are unsatisfiable: one check says so; a model found is
            # then redrawn under the drawing constraints when it can be.
            answer = self._check(solver)
            if answer != z3.sat:
                why = f"the solver gave up: {solver.reason_unknown()}"
                return None, why if answer == z3.unknown else ""
            plain = solver.model()
            return (solver.model() if self._check(solver, self.drawable) == z3.sat else plain), ""
        answer = self._check(solver, self.drawable)
        if answer == z3.sat:
            return solver.model(), ""
        if answer == z3.unknown:
            solver = new_solver(timeout_ms)
            solver.add(self.base)
            solver.add(goal)
        answer = self._check(solver)
        if answer == z3.sat:
            return solver.model(), ""
        if answer == z3.unknown:
            return None, f"the solver gave up: {solver.reason_unknown()}"
        return None, ""

    def _check(self, solver: z3.Solver, *assumptions: z3.BoolRef) -> z3.CheckSatResult:
        """The solver's answer with the deferred string atoms exact; when `sat`, the solver's
        model is exact too.

        The atoms are first left free (`exact` assumed false: merely unassumed, the solver still
        searched the strings): `unsat` then is the answer (any exact model is one of
        these). Otherwise the digits they read are fixed to the free model's, which leaves the
        string solver texts of known digits; only when that fails is the whole question asked
        exactly."""
        if not self.functions.deferred:
            return solver.check(*assumptions)
        answer = solver.check(*assumptions, z3.Not(self.exact))
        if answer != z3.sat:
            return answer
        model = solver.model()
        pins = [d == model.eval(d, model_completion=True) for d in self.pinned]
        if solver.check(*assumptions, self.exact, *pins) == z3.sat:
            return z3.sat
        return solver.check(*assumptions, self.exact)


def new_solver(timeout_ms: int = SOLVER_TIMEOUT_MS) -> z3.Solver:
    """z3's SMT solver behind its simplifier and equation solver: each check first folds the
    scenario's definitions (the leaves fixed by equalities, constants propagated). Measured
    (used_phone_resale, one question): 1.6 s with the plain incremental solver, 0.36 s so."""
    solver = z3.Then("simplify", "propagate-values", "solve-eqs", "smt").solver()
    solver.set("timeout", timeout_ms)
    return solver


def _disagreement(replayed: Replayed, expected: tuple[str, str]) -> str:
    """Why simulate's end is not the formula's ("" when they agree)."""
    if replayed.refused:
        return "; ".join(replayed.refused)
    if (replayed.status, replayed.veredict) != expected:
        return (
            f"simulate ends {replayed.status}/{replayed.veredict}, "
            f"the formula {expected[0]}/{expected[1]}"
        )
    return ""


def _refusal_disagreement(replayed: Replayed) -> str:
    """Why simulate did not refuse at intake what the formula says the revision's intake
    refuses (a date order broken): "" when its first refusal is the inputs'."""
    if replayed.refused and "invalid_input_value" in replayed.refused[0]:
        return ""
    return "simulate took inputs the formula says the revision's intake refuses"


def _replayed(found: Found) -> dict[str, Any] | None:
    return None if found.replayed is None else summary(found.replayed)


def summary(replayed: Replayed) -> dict[str, Any] | None:
    """What simulate made of an events file: status, veredict, reasons, rule errors."""
    state = replayed.state
    if state is None:
        return {"refused": list(replayed.refused)} if replayed.refused else None
    data: dict[str, Any] = {"status": state.status, "veredict": state.veredict}
    if replayed.refused:
        data["refused"] = list(replayed.refused)
    if state.reasons:
        data["reasons"] = list(state.reasons)
    if state.review is not None and state.review.reasons:
        data["review"] = [r.get("message") for r in state.review.reasons]
    if state.ruleErrors:
        data["ruleErrors"] = sorted({e.code for e in state.ruleErrors})
    return data


def reachable(
    prover: Prover,
    name: str,
    description: str,
    goal: z3.BoolRef,
    observe: Observation | None = None,
) -> Result:
    found = prover.find(goal, observe)
    if found.unknown:
        return Result(name, description, "unknown", found.unknown, found.events, _replayed(found))
    if found.events is None:
        return Result(
            name,
            description,
            "fails",
            "no inspection reaches it (within the scenario: inputs given at the create or one "
            "update, each photo uploaded once, or retaken once where the template reads "
            f"retakes, at most {MAX_DECLARED} declared damages, docs/language.md)",
        )
    return Result(name, description, "holds", "", found.events, _replayed(found))


def never(
    prover: Prover,
    name: str,
    description: str,
    bad: z3.BoolRef,
    observe: Observation | None = None,
    explain: str = "",
) -> Result:
    found = prover.find(bad, observe, expected=False)
    if found.unknown:
        return Result(name, description, "unknown", found.unknown, found.events, _replayed(found))
    if found.events is None:
        return Result(name, description, "holds")
    result = Result(name, description, "fails", explain, found.events, _replayed(found))
    result.model = found.model
    return result


def _line_holds(kind: str, index: int) -> Observation:
    """The runtime's own evaluation of a verdict line on the final state."""

    def observe(program: Program, replayed: Replayed) -> bool:
        state = replayed.state
        if state is None:
            return False
        env = build_env(program, state, state.completedAt or state.updatedAt)
        lines = program.disapprovals if kind == "disapprove" else program.reviews
        return ReferenceEvaluator().condition(lines[index][1], env) is True

    return observe


def _line_missing(program: Program, replayed: Replayed) -> bool:
    state = replayed.state
    if state is None:
        return False
    env = build_env(program, state, state.completedAt or state.updatedAt)
    lines = [when for _, when, _ in (*program.disapprovals, *program.reviews)]
    return any(ReferenceEvaluator().condition(when, env) is None for when in lines)


def _errs(code: str) -> Observation:
    def observe(program: Program, replayed: Replayed) -> bool:
        return code == "number_of_text" or code in replayed.rule_errors

    return observe


def _line(program: Program, span: list[int] | tuple[int, ...]) -> int:
    return int(span[0]) if span else 0


def verify(program: Program) -> list[Result]:
    """Every property of `inspectlang verify`, in the order it prints them."""
    try:
        prover = Prover(program)
    except Unsupported as error:
        return [
            Result("encoding", "the template as a formula", "unknown", f"not expressed: {error}")
        ]
    outcome = prover.outcome
    results = [
        reachable(prover, "approval_reachable", "some inspection is approved", outcome.approved),
        reachable(
            prover, "disapproval_reachable", "some inspection is disapproved", outcome.disapproved
        ),
        never(
            prover,
            "no_approval_without_evidence",
            "no inspection is approved while a required photo is missing or a required "
            "validation has not run",
            z3.And(outcome.approved, z3.Or(outcome.missing_photo, outcome.unreported_required)),
        ),
        never(
            prover,
            "no_approval_with_refused_photo",
            "no inspection is approved while a required photo was refused (a required validation "
            "failed on it)",
            z3.And(outcome.approved, outcome.refused_photo),
            explain="the approval does not read the photos' `approved` (write "
            "`all(i in images where i.approved)` into it)",
        ),
        never(
            prover,
            "no_approval_on_missing_value",
            "no inspection is approved because a disapprove or review line's condition was missing",
            z3.And(
                outcome.approved,
                z3.Or(
                    FALSE,
                    *[
                        z3.Not(defined)
                        for _, defined in outcome.disapprove_lines + outcome.review_lines
                    ],
                ),
            ),
            _line_missing,
            "a line that should have refused read a missing value (missing counts as false)",
        ),
    ]
    codes: dict[str, list[Any]] = {}
    for site in outcome.errors:
        codes.setdefault(site.code, []).append(site)
    for code in sorted(codes):
        sites = codes[code]
        if code == "missing_value":
            description = (
                "no `set` is given a missing value (it would leave the variable as it was)"
            )
        elif code == "number_of_text":
            description = "number() is never given a text that writes no number"
        else:
            description = f"no rule error {code}"
        result = never(
            prover, f"no_{code}", description, z3.Or(*[e.when for e in sites]), _errs(code)
        )
        if result.answer == "fails" and result.model is not None:
            model = result.model
            lines = sorted(
                {
                    _line(program, e.span)
                    for e in sites
                    if z3.is_true(model.eval(e.when, model_completion=True))
                }
            )
            result.detail = f"at line {', '.join(map(str, lines))} in this inspection"
        results.append(result)
    for index, (holds, _) in enumerate(outcome.disapprove_lines):
        span = program.disapprovals[index][2]
        results.append(
            reachable(
                prover,
                f"disapprove_line_{_line(program, span)}",
                f"the disapprove line at line {_line(program, span)} can hold at the finish",
                z3.And(holds, z3.Not(outcome.blocked)),
                _line_holds("disapprove", index),
            )
        )
        if outcome.review_lines:
            # Review outranks disapprove: a line every review line takes first never refuses.
            results.append(
                reachable(
                    prover,
                    f"disapprove_line_{_line(program, span)}_decides",
                    f"the disapprove line at line {_line(program, span)} can refuse an inspection "
                    "(no review line sends it to a person first)",
                    z3.And(holds, outcome.disapproved),
                    _line_holds("disapprove", index),
                )
            )
    for index, (holds, _) in enumerate(outcome.review_lines):
        span = program.reviews[index][2]
        results.append(
            reachable(
                prover,
                f"review_line_{_line(program, span)}",
                f"the review line at line {_line(program, span)} can hold at the finish",
                z3.And(holds, z3.Not(outcome.blocked)),
                _line_holds("review", index),
            )
        )
    if outcome.approve_line is not None:
        results.append(
            reachable(prover, "approve_line", "the approve line can decide", outcome.approved)
        )
        results.append(
            reachable(
                prover,
                "otherwise_line",
                "the otherwise line can decide (no disapproval, the approval does not hold)",
                z3.And(outcome.otherwise, outcome.disapproved),
            )
        )
    for (rule, where, branch), taken in outcome.branches.items():
        line = _line(program, where)
        results.append(
            reachable(
                prover,
                f"rule_{rule}_line_{line}_{branch}",
                f"the {branch} branch of the `if` at line {line} runs in some inspection",
                taken,
            )
        )
    return results


def timed_verify(program: Program) -> tuple[list[Result], float]:
    start = time.perf_counter()
    results = verify(program)
    return results, time.perf_counter() - start


__all__ = ["Found", "Prover", "Result", "timed_verify", "verify"]
