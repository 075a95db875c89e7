"""Template tests: cases written beside a template, run through `simulate`, with the decision
coverage they reach.

A template `NAME.insp` has its cases in `NAME.tests.json` beside it:

    {"cases": [
      {"name": "a clean car is approved",
       "start": "2024-05-01T12:00:00Z",            (optional, as in an events file)
       "events": [ ...the events of an events file... ],
       "expect": {"status": "completed", "veredict": "approved",
                  "reasons": [...],                  (optional: exactly these, in order)
                  "reasonsInclude": [...]}}          (optional: at least these)
    ]}

Each case runs as `inspectlang simulate` runs its events (`runtime.cli.Simulation`), on the
reference path with every `if` decision noted, so the run also says which *decisions* the cases
exercised: each disapprove and review line holding, the approve line approving and the
`otherwise` refusing, each branch of each `if` of each rule, and each check both true and false
at the finish. `inspectlang test --min-coverage N` fails under N percent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from inspectlang import ir
from runtime.cli import ScriptError, Simulation
from runtime.errors import InspectionError, InspectionRuntimeError
from runtime.evaldata import build_env
from runtime.program import Program
from runtime.reference import Env, ReferenceEvaluator
from runtime.state import InspectionState

#: The expectations a case may state.
EXPECTATIONS = ("status", "veredict", "reasons", "reasonsInclude")
#: Most cases one tests file holds, and most events one case holds: a template saved through
#: the API runs its cases in the request (server/templates/service.py).
MAX_CASES = 200
MAX_CASE_EVENTS = 200
#: Widest and tallest photo an `image` event may ask for, in pixels (`runtime.cli.photo`
#: draws it in memory: 4096 x 4096 is 48 MiB).
MAX_PHOTO_SIDE = 4096
#: Most events, and most photo pixels (an image event without a size is 1280 x 960), one tests
#: file holds in all: a save runs them all in its request. Measured on this 2-core machine
#: (load average 17): a 4096 x 4096 photo takes 0.33 s to draw, a 1280 x 960 one 0.02 s; the
#: largest file of examples/ (motor_insurance: 104 events, 53 photos, 61 megapixels) ran in
#: 7 to 10 s, two thirds of it the runtime reading the photos' metadata.
MAX_TOTAL_EVENTS = 2_000
MAX_TOTAL_PIXELS = 200_000_000


class CasesError(InspectionRuntimeError, ValueError):
    """The tests file is not a list of cases as the module says (with where)."""


def tests_path(template: Path) -> Path:
    """Where a template's cases are: `NAME.tests.json` beside `NAME.insp`."""
    return template.with_name(template.name.removesuffix(".insp") + ".tests.json")


def read_cases(document: Any) -> list[dict[str, Any]]:
    """The cases of a tests document, checked; `CasesError` says what is wrong and where."""
    if (
        not isinstance(document, dict)
        or not isinstance(document.get("cases"), list)
        or set(document) != {"cases"}
    ):
        raise CasesError('a tests file is {"cases": [...]}, nothing else')
    cases = document["cases"]
    if len(cases) > MAX_CASES:
        raise CasesError(f"at most {MAX_CASES} cases, not {len(cases)}")
    events = pixels = 0
    for index, case in enumerate(cases):
        where = f"cases[{index}]"
        if not isinstance(case, dict):
            raise CasesError(f"{where}: a case is an object")
        if not isinstance(case.get("name"), str) or not case["name"]:
            raise CasesError(f"{where}: a case needs a name")
        if not isinstance(case.get("events"), list) or not case["events"]:
            raise CasesError(f"{where} ({case['name']}): events is a non-empty list")
        _check_events(f"{where} ({case['name']})", case["events"])
        events += len(case["events"])
        pixels += sum(
            int(event.get("width", 1280)) * int(event.get("height", 960))
            for event in case["events"]
            if event.get("event") == "image"
        )
        if events > MAX_TOTAL_EVENTS or pixels > MAX_TOTAL_PIXELS:
            raise CasesError(
                f"{where} ({case['name']}): the cases hold more than {MAX_TOTAL_EVENTS} events "
                f"or {MAX_TOTAL_PIXELS // 1_000_000} megapixels of photos in all"
            )
        expect = case.get("expect")
        if not isinstance(expect, dict) or not expect:
            raise CasesError(f"{where} ({case['name']}): expect states status, veredict or reasons")
        unknown = set(expect) - set(EXPECTATIONS)
        if unknown:
            raise CasesError(
                f"{where} ({case['name']}): unknown expectation {sorted(unknown)[0]!r}; "
                f"expected one of {', '.join(EXPECTATIONS)}"
            )
        _check_types(f"{where} ({case['name']})", case, expect)
    return list(cases)


def _check_types(where: str, case: dict[str, Any], expect: dict[str, Any]) -> None:
    """`start`, `status` and `veredict` are text; `reasons` and `reasonsInclude` lists of text
    (`TESTS_SCHEMA`)."""
    texts = [("start", case.get("start", "")), *[(k, expect.get(k, "")) for k in EXPECTATIONS[:2]]]
    for key, value in texts:
        if not isinstance(value, str):
            raise CasesError(f"{where}: {key} is text")
    for key in EXPECTATIONS[2:]:
        value = expect.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise CasesError(f"{where}: {key} is a list of texts")


#: The JSON Schema of a tests document, as `read_cases` checks it (the API documents it).
_TEXTS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
TESTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["cases"],
    "additionalProperties": False,
    "properties": {
        "cases": {
            "type": "array",
            "maxItems": MAX_CASES,
            "items": {
                "type": "object",
                "required": ["name", "events", "expect"],
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "start": {"type": "string"},
                    "events": {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": MAX_CASE_EVENTS,
                        "items": {
                            "type": "object",
                            "properties": {
                                side: {"type": "integer", "minimum": 1, "maximum": MAX_PHOTO_SIDE}
                                for side in ("width", "height")
                            },
                        },
                    },
                    "expect": {
                        "type": "object",
                        "minProperties": 1,
                        "additionalProperties": False,
                        "properties": {
                            "status": {"type": "string"},
                            "veredict": {"type": "string"},
                            "reasons": _TEXTS,
                            "reasonsInclude": _TEXTS,
                        },
                    },
                },
            },
        }
    },
}


def _check_events(where: str, events: list[Any]) -> None:
    if len(events) > MAX_CASE_EVENTS:
        raise CasesError(f"{where}: at most {MAX_CASE_EVENTS} events, not {len(events)}")
    for number, event in enumerate(events, start=1):
        if not isinstance(event, dict):
            raise CasesError(f"{where}: event {number} is not an object")
        for side in ("width", "height"):
            value = event.get(side, 1)
            # JSON has one number type: 640.0 is a whole number (JSON Schema's `integer`).
            whole = type(value) is int or (type(value) is float and value.is_integer())
            if not whole or not 1 <= value <= MAX_PHOTO_SIDE:
                raise CasesError(
                    f"{where}: event {number}'s {side} is a whole number from 1 to {MAX_PHOTO_SIDE}"
                )


def case_lines(text: str) -> list[int]:
    """The line (from 1) where each case of a tests file's `cases` list begins, in order; an
    empty list when the text is not a tests document. Read with a small scanner because
    `json` keeps no positions."""
    starts: list[int] = []
    depth = 0
    key: str | None = None
    in_cases = False
    index = 0
    while index < len(text):
        char = text[index]
        if char == '"':
            end = index + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            if depth == 1:
                key = text[index + 1 : end]
            index = end + 1
            continue
        if char in "[{":
            if in_cases and depth == 2 and char == "{":
                starts.append(text.count("\n", 0, index) + 1)
            depth += 1
            if depth == 2 and char == "[" and key == "cases":
                in_cases = True
        elif char in "]}":
            depth -= 1
            if depth == 1:
                in_cases = False
        index += 1
    return starts


class _Recorder(ReferenceEvaluator):
    """The reference evaluator, noting which branch each `if` of rule `rule` takes."""

    def __init__(self, rule: int, taken: set[tuple[str, ...]]) -> None:
        super().__init__()
        self.rule = rule
        self.taken = taken
        self.conditions: dict[int, ir.IfStatement] = {}

    def statements(self, nodes: Sequence[ir.Statement], env: Env) -> None:
        for node in nodes:
            if isinstance(node, ir.IfStatement):
                self.conditions[id(node.condition)] = node
        super().statements(nodes, env)

    def evaluate(self, node: ir.Expression, env: Env) -> Any:
        value = super().evaluate(node, env)
        statement = self.conditions.pop(id(node), None)
        if statement is not None:
            branch = "then" if value is True else "else"
            self.taken.add(branch_key(self.rule, statement, branch))
        return value


def branch_key(rule: int, statement: ir.IfStatement, branch: str) -> tuple[str, ...]:
    return ("branch", str(rule), str(statement.span[0]), str(statement.span[1]), branch)


@dataclass(frozen=True)
class _Observed(Program):
    """The program on the reference path, its rules run by a `_Recorder`."""

    taken: set[tuple[str, ...]] = field(default_factory=set)

    def run_rule(self, index: int, env: dict[str, Any]) -> None:
        _Recorder(index, self.taken).statements(self.rules[index].body, env)


def observed(program: Program) -> _Observed:
    values = {f.name: getattr(program, f.name) for f in fields(program) if f.init}
    values["path"] = "reference"
    return _Observed(**values, taken=set())


def decisions(program: Program) -> dict[tuple[str, ...], str]:
    """Every decision outcome of the template, with how a reader names it."""
    found: dict[tuple[str, ...], str] = {}
    for _, _, span in program.disapprovals:
        found[("disapprove", str(span[0]))] = f"disapprove line {span[0]} holds"
    for _, _, span in program.reviews:
        found[("review", str(span[0]))] = f"review line {span[0]} holds"
    if program.approve_when is not None:
        line = program.approve_when.span[0]
        found[("approve",)] = f"approve line {line} approves"
        found[("otherwise",)] = f"the approval at line {line} does not hold (otherwise)"
    else:
        found[("approve",)] = "approved (no disapproval held)"

    def walk(rule: int, body: Sequence[ir.Statement]) -> None:
        for node in body:
            if isinstance(node, ir.IfStatement):
                for branch in ("then", "else"):
                    key = branch_key(rule, node, branch)
                    found[key] = f"the {branch} branch of the `if` at line {node.span[0]}"
                walk(rule, node.then)
                walk(rule, node.otherwise)

    for index, rule in enumerate(program.rules):
        walk(index, rule.body)
    for check in program.checks:
        line = check.span[0]
        found[("check", check.key, "true")] = f"check {check.key} (line {line}) true"
        found[("check", check.key, "false")] = f"check {check.key} (line {line}) false"
    return found


def _outcomes(program: Program, state: InspectionState) -> set[tuple[str, ...]]:
    """The verdict and check decisions a finished state shows."""
    env = build_env(program, state, state.completedAt or state.updatedAt)
    env["steps"] = -(10**12)
    seen: set[tuple[str, ...]] = set()
    held = False
    for _, when, span in program.disapprovals:
        if ReferenceEvaluator().condition(when, env) is True:
            seen.add(("disapprove", str(span[0])))
            held = True
    for _, when, span in program.reviews:
        if ReferenceEvaluator().condition(when, env) is True:
            seen.add(("review", str(span[0])))
    if not held and program.approve_when is not None:
        approves = ReferenceEvaluator().condition(program.approve_when, env) is True
        seen.add(("approve",) if approves else ("otherwise",))
    elif not held:
        seen.add(("approve",))
    for check in program.checks:
        valid = ReferenceEvaluator().condition(check.valid, env) is True
        seen.add(("check", check.key, "true" if valid else "false"))
    return seen


@dataclass
class CaseResult:
    name: str
    passed: bool
    problems: list[str]
    status: str | None
    veredict: str | None
    reasons: list[str]
    #: The template lines of the verdict lines that decided the run (each disapprove and review
    #: line that held, the approve line approving or refusing): where a failure shows.
    lines: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "problems": self.problems,
            "status": self.status,
            "veredict": self.veredict,
            "reasons": self.reasons,
            "lines": self.lines,
        }


@dataclass
class Report:
    cases: list[CaseResult]
    covered: list[str]
    uncovered: list[str]

    @property
    def coverage(self) -> float:
        total = len(self.covered) + len(self.uncovered)
        return 100.0 if total == 0 else 100.0 * len(self.covered) / total

    @property
    def passed(self) -> bool:
        return all(case.passed for case in self.cases)

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "cases": [case.to_json() for case in self.cases],
            "coverage": round(self.coverage, 1),
            "covered": self.covered,
            "uncovered": self.uncovered,
        }


def run_case(program: Program, case: dict[str, Any]) -> tuple[CaseResult, set[tuple[str, ...]]]:
    """One case through simulate: whether it ends as expected, and the decisions it took."""
    watched = observed(program)
    script = {"events": case["events"], **({"start": case["start"]} if "start" in case else {})}
    problems: list[str] = []
    try:
        simulation = Simulation(watched, script)
    except (TypeError, ValueError) as error:
        return _unrun(case, [f"start: {error}"]), set()
    for index, event in enumerate(case["events"], start=1):
        try:
            simulation.apply(event)
        except InspectionError as error:
            problems.append(f"event {index} ({event.get('event')}) refused: {error.code}")
        except (ScriptError, LookupError, TypeError, ValueError, AttributeError) as error:
            problems.append(f"event {index}: {error}")
        except ArithmeticError as error:  # a clock moved past the calendar's end
            problems.append(f"event {index}: {error}")
    state = simulation.state
    taken = set(watched.taken)
    lines: list[int] = []
    if state is not None and state.status in ("completed", "review"):
        decided = _outcomes(watched, state)
        taken |= decided
        lines = _decided_lines(program, decided)
    status = state.status if state is not None else None
    veredict = state.veredict if state is not None else None
    reasons = list(state.reasons) if state is not None else []
    expect = case["expect"]
    if "status" in expect and expect["status"] != status:
        problems.append(f"status is {status}, expected {expect['status']}")
    if "veredict" in expect and expect["veredict"] != veredict:
        problems.append(f"veredict is {veredict}, expected {expect['veredict']}")
    if "reasons" in expect and expect["reasons"] != reasons:
        problems.append(f"reasons are {reasons}, expected {expect['reasons']}")
    for reason in expect.get("reasonsInclude", []):
        if reason not in reasons:
            problems.append(f"reason {reason!r} missing from {reasons}")
    result = CaseResult(case["name"], not problems, problems, status, veredict, reasons, lines)
    return result, taken


def _unrun(case: dict[str, Any], problems: list[str]) -> CaseResult:
    return CaseResult(case["name"], False, problems, None, None, [])


def _decided_lines(program: Program, decided: set[tuple[str, ...]]) -> list[int]:
    lines = {int(key[1]) for key in decided if key[0] in ("disapprove", "review")}
    if program.approve_when is not None and ({("approve",), ("otherwise",)} & decided):
        lines.add(program.approve_when.span[0])
    return sorted(lines)


def run_cases(program: Program, cases: list[dict[str, Any]]) -> Report:
    results = []
    taken: set[tuple[str, ...]] = set()
    for case in cases:
        result, seen = run_case(program, case)
        results.append(result)
        taken |= seen
    every = decisions(program)
    covered = [text for key, text in every.items() if key in taken]
    uncovered = [text for key, text in every.items() if key not in taken]
    return Report(results, covered, uncovered)


def load_cases(path: Path) -> list[dict[str, Any]]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CasesError(f"{path}: {error}") from None
    try:
        return read_cases(document)
    except CasesError as error:
        raise CasesError(f"{path}: {error}") from None
