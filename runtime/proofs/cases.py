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


#: What a tests file may get wrong, by `CasesError.code`, in English (its text; a page words the
#: code and values in its own language).
TESTS_FILE_PROBLEMS: dict[str, str] = {
    "not_a_tests_document": 'a tests file is {{"cases": [...]}}, nothing else',
    "too_many_cases": "at most {limit} cases, not {count}",
    "case_not_object": "a case is an object",
    "case_without_name": "a case needs a name",
    "events_empty": "events is a non-empty list",
    "too_many_events": "at most {limit} events, not {count}",
    "event_not_object": "event {event} is not an object",
    "photo_side": "event {event}'s {side} is a whole number from 1 to {limit}",
    "too_much_in_all": (
        "the cases hold more than {events} events or {megapixels} megapixels of photos in all"
    ),
    "expect_empty": "expect states status, veredict or reasons",
    "unknown_expectation": "unknown expectation {expectation!r}; expected one of {expected}",
    "not_text": "{key} is text",
    "not_texts": "{key} is a list of texts",
    "unreadable_file": "{detail}",
}


class CasesError(InspectionRuntimeError, ValueError):
    """The tests file is not a list of cases as the module says: a `code` of
    `TESTS_FILE_PROBLEMS` with its `values`, and where: the case's index and name (None for the
    file as a whole) and, read from a file, its path."""

    def __init__(
        self,
        code: str,
        *,
        case: int | None = None,
        name: str | None = None,
        path: Path | None = None,
        **values: Any,
    ) -> None:
        self.code, self.values = code, values
        self.case, self.name, self.path = case, name, path
        where = "" if case is None else f"cases[{case}]" + ("" if name is None else f" ({name})")
        text = TESTS_FILE_PROBLEMS[code].format(**values)
        text = f"{where}: {text}" if where else text
        super().__init__(f"{path}: {text}" if path is not None else text)

    def at(self, path: Path) -> CasesError:
        """The same problem, in the file at `path`."""
        return CasesError(self.code, case=self.case, name=self.name, path=path, **self.values)


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
        raise CasesError("not_a_tests_document")
    cases = document["cases"]
    if len(cases) > MAX_CASES:
        raise CasesError("too_many_cases", limit=MAX_CASES, count=len(cases))
    events = pixels = 0
    for index, case in enumerate(cases):
        if not isinstance(case, dict):
            raise CasesError("case_not_object", case=index)
        if not isinstance(case.get("name"), str) or not case["name"]:
            raise CasesError("case_without_name", case=index)
        name = case["name"]
        if not isinstance(case.get("events"), list) or not case["events"]:
            raise CasesError("events_empty", case=index, name=name)
        _check_events(index, name, case["events"])
        events += len(case["events"])
        pixels += sum(
            int(event.get("width", 1280)) * int(event.get("height", 960))
            for event in case["events"]
            if event.get("event") == "image"
        )
        if events > MAX_TOTAL_EVENTS or pixels > MAX_TOTAL_PIXELS:
            raise CasesError(
                "too_much_in_all",
                case=index,
                name=name,
                events=MAX_TOTAL_EVENTS,
                megapixels=MAX_TOTAL_PIXELS // 1_000_000,
            )
        expect = case.get("expect")
        if not isinstance(expect, dict) or not expect:
            raise CasesError("expect_empty", case=index, name=name)
        unknown = set(expect) - set(EXPECTATIONS)
        if unknown:
            raise CasesError(
                "unknown_expectation",
                case=index,
                name=name,
                expectation=sorted(unknown)[0],
                expected=", ".join(EXPECTATIONS),
            )
        _check_types(index, name, case, expect)
    return list(cases)


def _check_types(index: int, name: str, case: dict[str, Any], expect: dict[str, Any]) -> None:
    """`start`, `status` and `veredict` are text; `reasons` and `reasonsInclude` lists of text
    (`TESTS_SCHEMA`)."""
    texts = [("start", case.get("start", "")), *[(k, expect.get(k, "")) for k in EXPECTATIONS[:2]]]
    for key, value in texts:
        if not isinstance(value, str):
            raise CasesError("not_text", case=index, name=name, key=key)
    for key in EXPECTATIONS[2:]:
        value = expect.get(key, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise CasesError("not_texts", case=index, name=name, key=key)


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


def _check_events(index: int, name: str, events: list[Any]) -> None:
    if len(events) > MAX_CASE_EVENTS:
        raise CasesError(
            "too_many_events", case=index, name=name, limit=MAX_CASE_EVENTS, count=len(events)
        )
    for number, event in enumerate(events, start=1):
        if not isinstance(event, dict):
            raise CasesError("event_not_object", case=index, name=name, event=number)
        for side in ("width", "height"):
            value = event.get(side, 1)
            # JSON has one number type: 640.0 is a whole number (JSON Schema's `integer`).
            whole = type(value) is int or (type(value) is float and value.is_integer())
            if not whole or not 1 <= value <= MAX_PHOTO_SIDE:
                raise CasesError(
                    "photo_side", case=index, name=name, event=number, side=side,
                    limit=MAX_PHOTO_SIDE,
                )  # fmt: skip


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


#: A decision outcome in English, by `Decision.kind` (the `covered` and `uncovered` texts).
DECISION_TEXTS: dict[str, str] = {
    "disapprove": "disapprove line {line} holds",
    "review": "review line {line} holds",
    "approve": "approve line {line} approves",
    "approve_by_default": "approved (no disapproval held)",
    "otherwise": "the approval at line {line} does not hold (otherwise)",
    "then": "the then branch of the `if` at line {line}",
    "else": "the else branch of the `if` at line {line}",
    "check_true": "check {check} (line {line}) true",
    "check_false": "check {check} (line {line}) false",
}


@dataclass(frozen=True)
class Decision:
    """A decision outcome of the template, as data: its `kind` (`DECISION_TEXTS`), the
    template line it is at (none for an approval by default) and, for a check, its key."""

    kind: str
    line: int | None = None
    check: str | None = None

    @property
    def text(self) -> str:
        return DECISION_TEXTS[self.kind].format(line=self.line, check=self.check)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "line": self.line}
        return data if self.check is None else {**data, "check": self.check}


def decisions(program: Program) -> dict[tuple[str, ...], Decision]:
    """Every decision outcome of the template, by the key a run notes it under."""
    found: dict[tuple[str, ...], Decision] = {}
    for _, _, span in program.disapprovals:
        found[("disapprove", str(span[0]))] = Decision("disapprove", span[0])
    for _, _, span in program.reviews:
        found[("review", str(span[0]))] = Decision("review", span[0])
    if program.approve_when is not None:
        line = program.approve_when.span[0]
        found[("approve",)] = Decision("approve", line)
        found[("otherwise",)] = Decision("otherwise", line)
    else:
        found[("approve",)] = Decision("approve_by_default")

    def walk(rule: int, body: Sequence[ir.Statement]) -> None:
        for node in body:
            if isinstance(node, ir.IfStatement):
                for branch in ("then", "else"):
                    found[branch_key(rule, node, branch)] = Decision(branch, node.span[0])
                walk(rule, node.then)
                walk(rule, node.otherwise)

    for index, rule in enumerate(program.rules):
        walk(index, rule.body)
    for check in program.checks:
        line = check.span[0]
        found[("check", check.key, "true")] = Decision("check_true", line, check.key)
        found[("check", check.key, "false")] = Decision("check_false", line, check.key)
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


#: Why a case fails, by `Problem.code`, in English: the `problems` of `testResults` and what
#: `inspectlang test` prints. `failures` gives each as its code and values, for a page to word.
CASE_PROBLEMS: dict[str, str] = {
    "start_invalid": "start: {detail}",
    "event_refused": "event {event} ({kind}) refused: {error}",
    "event_invalid": "event {event}: {detail}",
    "status_differs": "status is {actual}, expected {expected}",
    "veredict_differs": "veredict is {actual}, expected {expected}",
    "reasons_differ": "reasons are {actual}, expected {expected}",
    "reason_missing": "reason {reason!r} missing from {actual}",
}


@dataclass(frozen=True)
class Problem:
    """Why a case fails, as data: a code of `CASE_PROBLEMS` and its values (JSON values)."""

    code: str
    values: dict[str, Any]

    @property
    def text(self) -> str:
        return CASE_PROBLEMS[self.code].format(**self.values)

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, **self.values}


def _event_invalid(number: int, event: dict[str, Any], error: Exception) -> Problem:
    """An event the runtime could not read: the script's own problem (`ScriptError.code`, with
    the name it could not find) or `unreadable` (a field of the wrong form: a date, a number)."""
    values = {"event": number, "kind": event.get("event"), "detail": str(error)}
    if isinstance(error, ScriptError):
        return Problem("event_invalid", {**values, "reason": error.code, "name": error.name})
    return Problem("event_invalid", {**values, "reason": "unreadable", "name": None})


@dataclass
class CaseResult:
    name: str
    passed: bool
    problems: list[Problem]
    status: str | None
    veredict: str | None
    reasons: list[str]
    #: The template lines of the verdict lines that decided the run (each disapprove and review
    #: line that held, the approve line approving or refusing): where a failure shows.
    lines: list[int] = field(default_factory=list)

    @property
    def texts(self) -> list[str]:
        """The problems in English."""
        return [problem.text for problem in self.problems]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "problems": self.texts,
            "failures": [problem.to_json() for problem in self.problems],
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
    #: The decisions no case exercised, as data (`uncovered` says them in English).
    missed: list[Decision] = field(default_factory=list)

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
            "uncoveredDecisions": [decision.to_json() for decision in self.missed],
        }


def run_case(program: Program, case: dict[str, Any]) -> tuple[CaseResult, set[tuple[str, ...]]]:
    """One case through simulate: whether it ends as expected, and the decisions it took."""
    watched = observed(program)
    script = {"events": case["events"], **({"start": case["start"]} if "start" in case else {})}
    problems: list[Problem] = []
    try:
        simulation = Simulation(watched, script)
    except (TypeError, ValueError) as error:
        start = {"start": case.get("start"), "detail": str(error)}
        return _unrun(case, [Problem("start_invalid", start)]), set()
    for index, event in enumerate(case["events"], start=1):
        try:
            simulation.apply(event)
        except InspectionError as error:
            refused = {"event": index, "kind": event.get("event"), "error": error.code}
            problems.append(Problem("event_refused", refused))
        except (ScriptError, LookupError, TypeError, ValueError, AttributeError) as error:
            problems.append(_event_invalid(index, event, error))
        except ArithmeticError as error:  # a clock moved past the calendar's end
            problems.append(_event_invalid(index, event, error))
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
    for key, actual in (("status", status), ("veredict", veredict)):
        if key in expect and expect[key] != actual:
            differs = {"actual": actual, "expected": expect[key]}
            problems.append(Problem(f"{key}_differs", differs))
    if "reasons" in expect and expect["reasons"] != reasons:
        problems.append(
            Problem("reasons_differ", {"actual": reasons, "expected": expect["reasons"]})
        )
    for reason in expect.get("reasonsInclude", []):
        if reason not in reasons:
            problems.append(Problem("reason_missing", {"reason": reason, "actual": reasons}))
    result = CaseResult(case["name"], not problems, problems, status, veredict, reasons, lines)
    return result, taken


def _unrun(case: dict[str, Any], problems: list[Problem]) -> CaseResult:
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
    covered = [decision.text for key, decision in every.items() if key in taken]
    missed = [decision for key, decision in every.items() if key not in taken]
    return Report(results, covered, [decision.text for decision in missed], missed)


def load_cases(path: Path) -> list[dict[str, Any]]:
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CasesError("unreadable_file", path=path, detail=str(error)) from None
    try:
        return read_cases(document)
    except CasesError as error:
        raise error.at(path) from None
