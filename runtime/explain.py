"""Why the verdict is what it is: validations, checks, rules and verdict lines, with values.

`explain(program, state)` re-evaluates the checks and the verdict conditions on the reference
path over the state (variables and checks are frozen at completion, so this gives what `finish`
computed) and keeps each condition's trace: the values seen and the template span each comes
from. `render_text` turns it into lines for the CLI.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from inspectlang import ir
from runtime.errors import StepLimitExceeded
from runtime.evaldata import build_env
from runtime.missing import missing_items
from runtime.program import Program
from runtime.reference import ReferenceEvaluator
from runtime.state import InspectionState
from runtime.statements import semantics_of

#: Trace ops worth showing: where a value came from, not intermediate arithmetic.
SHOWN_OPS = frozenset({"var", "input", "product", "consumer", "field", "check", "event", "call"})


class SeenValue(BaseModel):
    op: str
    span: list[int]
    value: Any


class ConditionExplanation(BaseModel):
    kind: str  # "disapprove", "approve_when", "check"
    label: str
    span: list[int]
    holds: bool | None
    decided: bool
    values: list[SeenValue] = Field(default_factory=list)
    #: A check marked `for information`: shown, deciding nothing, so never `decided`.
    informational: bool = False


class ValidationExplanation(BaseModel):
    image: str | None
    side: str
    validation: str
    required: bool
    reported: bool
    confidence: float | None
    threshold: float
    valid: bool | None
    #: A required validation without a passing result: it keeps its image from approval.
    decided: bool = False


class RuleExplanation(BaseModel):
    rule: str
    #: The event the rule reacts to (`damage_declared`, `finish`...).
    on: str
    span: list[int]
    events: list[int]
    sets: list[str]


class MissingExplanation(BaseModel):
    """A template photo never uploaded or a required input never filled."""

    kind: str  # "photo", "input"
    identifier: str
    label: str
    reason: str


class Explanation(BaseModel):
    veredict: str
    reasons: list[str]
    status: str
    #: What the inspection lacks; at completion each item disapproved it (`runtime.missing`).
    missing: list[MissingExplanation] = Field(default_factory=list)
    verdict: list[ConditionExplanation]
    checks: list[ConditionExplanation]
    validations: list[ValidationExplanation]
    rules: list[RuleExplanation]
    variables: dict[str, Any]
    ruleErrors: list[dict[str, Any]]
    #: Why the inspection waits for a person, when its status is `review`: the review's
    #: reasons (`{code, message, ...}`, docs/review.md), empty otherwise.
    reviewReasons: list[dict[str, Any]] = Field(default_factory=list)
    #: What the template's verdict said at the finish, the suggestion the person sees
    #: (`{veredict, reasons}`), when it went to review.
    machine: dict[str, Any] | None = None


def _values(trace: list[dict[str, Any]]) -> list[SeenValue]:
    seen: list[SeenValue] = []
    keys: set[tuple[str, tuple[int, ...]]] = set()
    for step in trace:
        key = (step["op"], tuple(step["span"]))
        if (
            step["op"] in SHOWN_OPS
            and key not in keys
            and not isinstance(step["value"], dict | list)
        ):
            keys.add(key)
            seen.append(SeenValue(op=step["op"], span=step["span"], value=step["value"]))
    return seen


def _condition(
    kind: str, label: str, span: list[int], node: ir.Expression, env: dict[str, Any]
) -> ConditionExplanation:
    trace: list[dict[str, Any]] = []
    try:
        value = ReferenceEvaluator(trace).evaluate(node, env)
    except StepLimitExceeded:
        value = None
    return ConditionExplanation(
        kind=kind,
        label=label,
        span=span,
        holds=value if isinstance(value, bool) else None,
        decided=False,
        values=_values(trace),
    )


def _sets(body: Sequence[ir.Statement]) -> list[str]:
    """The variables a rule body may set."""
    return sorted({name for node in body for name in semantics_of(node, "explanation").sets(node)})


def explain(program: Program, state: InspectionState, locale: str | None = None) -> Explanation:
    """The explanation of the state's verdict (or of where it stands, before completion); its
    reasons, verdict lines and missing items in `locale` (a reader's language: the dashboard
    member's), the inspection's own when not given or not translated."""
    locale = locale or state.locale
    now = state.completedAt or state.updatedAt
    env = build_env(program, state, now)
    env["steps"] = -(10**12)  # explaining is not an event: no step limit
    missing = [
        MissingExplanation(
            kind=item.kind, identifier=item.identifier, label=item.label, reason=item.reason
        )
        for item in missing_items(program, state, locale)
    ]
    checks = [
        _condition("check", check.texts(locale)[0], check.span, check.valid, env)
        for check in program.checks
    ]
    for item, check in zip(checks, program.checks, strict=True):
        item.informational = check.informational
        item.decided = item.holds is not True and not check.informational
    texts = program.reasons_in(locale)
    verdict = [
        _condition("disapprove", ReferenceEvaluator().reason(reason, env), span, when, env)
        for reason, (_, when, span) in zip(texts.disapprovals, program.disapprovals, strict=True)
    ]
    for item in verdict:
        item.decided = item.holds is True
    if program.approve_when is not None:
        approve = _condition(
            "approve_when",
            ReferenceEvaluator().reason(texts.otherwise, env),
            list(program.approve_when.span),
            program.approve_when,
            env,
        )
        # Missing items disapprove on their own: then a holding approval decides nothing.
        approve.decided = not any(item.decided for item in verdict) and not (
            missing and approve.holds is True
        )
        verdict.append(approve)
    validations = [
        ValidationExplanation(
            image=image.templateImageIdentifier,
            side=image.side,
            validation=v.validation,
            required=v.required,
            reported=v.reported,
            confidence=v.confidence,
            threshold=v.threshold,
            valid=v.valid,
            decided=v.required and v.valid is not True,
        )
        for product in state.products
        for image in product.images
        for v in image.validations
        if v.run
    ]
    runs: dict[str, list[int]] = {}
    for run in state.ruleRuns:
        runs.setdefault(run["rule"], []).append(run["event"])
    rules = [
        RuleExplanation(
            rule=rule.id, on=rule.event, span=rule.span, events=runs[rule.id], sets=_sets(rule.body)
        )
        for rule in program.rules
        if rule.id in runs
    ]
    review = state.review if state.status == "review" else None
    return Explanation(
        veredict=state.veredict,
        reasons=list(state.reasons_in(locale)),
        status=state.status,
        missing=missing,
        verdict=verdict,
        checks=checks,
        validations=validations,
        rules=rules,
        variables=dict(state.variables),
        ruleErrors=[e.model_dump() for e in state.ruleErrors],
        reviewReasons=list(review.reasons) if review is not None else [],
        machine=review.machine if review is not None else None,
    )


def _written(value: SeenValue, source_lines: list[str] | None) -> str:
    """The source text a value was computed from, or where it stands."""
    span = value.span
    if source_lines is not None and len(span) == 4 and span[0] == span[2] and span[0] > 0:
        line = source_lines[span[0] - 1] if span[0] <= len(source_lines) else ""
        text = line[span[1] - 1 : span[3] - 1]
        if text.startswith('include "'):
            # A node of an included file: the manifest points it at the `include` line
            # (docs/design/ir.md); say what it is and where it came from.
            return f"{value.op} from {text}"
        if text:
            return text
    return f"{value.op} at {_where(span)} col {span[1] if span else '?'}"


def _where(span: list[int]) -> str:
    return f"line {span[0]}" if span and span[0] else "built in"


def shown(value: Any) -> str:
    """A value as the text explanation writes it: a missing one is `missing` (never Python's
    `None`), a text in quotes, anything else as Python writes it."""
    return "missing" if value is None else repr(value)


def render_text(explanation: Explanation, source: str | None = None) -> str:
    """A readable rendering for the CLI. With the template's `source`, each value is shown
    next to the text it was computed from (`inputs.km = 42`), else next to its position."""
    lines = [f"Verdict: {explanation.veredict} (status {explanation.status})"]
    lines += [f"  reason: {reason}" for reason in explanation.reasons]
    if explanation.reviewReasons:
        lines.append("  waits for a person because:")
        lines += [f"    [{r.get('code')}] {r.get('message')}" for r in explanation.reviewReasons]
    if explanation.machine is not None:
        machine = explanation.machine
        said = "; ".join(machine.get("reasons") or []) or "no reason"
        lines.append(f"  the machine's suggestion: {machine.get('veredict')} ({said})")
    lines += [f"Missing: {item.kind} {item.label}" for item in explanation.missing]
    source_lines = source.splitlines() if source is not None else None

    def value_lines(values: list[SeenValue]) -> list[str]:
        return [f"      {_written(v, source_lines)} = {shown(v.value)}" for v in values]

    if explanation.verdict:
        lines.append("Verdict lines:")
    for item in explanation.verdict:
        mark = "*" if item.decided else " "
        holds = "missing" if item.holds is None else item.holds
        if item.kind == "disapprove":
            lines.append(f" {mark} disapprove [{_where(item.span)}]: {item.label!r} -> {holds}")
        else:
            # The approval's label is the `otherwise` reason: it applies only when it fails.
            otherwise = f" (otherwise: {item.label!r})" if item.holds is not True else ""
            lines.append(f" {mark} approve when [{_where(item.span)}] -> {holds}{otherwise}")
        lines += value_lines(item.values)
    if explanation.checks:
        lines.append("Checks:")
    for item in explanation.checks:
        lines.append(f"   {item.label} [{_where(item.span)}]: {shown(item.holds)}")
        lines += value_lines(item.values)
    if explanation.validations:
        lines.append("Validations:")
    for v in explanation.validations:
        state = "pending" if not v.reported else ("valid" if v.valid else "NOT valid")
        mark = "*" if v.decided else " "
        confidence = "" if v.confidence is None else f"confidence {v.confidence}, "
        lines.append(
            f" {mark} {v.side}.{v.validation}: {state} ({confidence}"
            f"threshold {v.threshold}{', required' if v.required else ''})"
        )
    if explanation.rules:
        lines.append("Rules that ran:")
    for rule in explanation.rules:
        sets = ", ".join(rule.sets) or "-"
        count = len(rule.events)
        lines.append(f"   on {rule.on} [{_where(rule.span)}]: ran {count} time(s), sets {sets}")
    lines.append(
        "Variables: " + ", ".join(f"{k} = {shown(v)}" for k, v in explanation.variables.items())
    )
    for error in explanation.ruleErrors:
        lines.append(f"Rule error {error['code']} at {_where(error['span'])} ({error['source']})")
    return "\n".join(lines)
