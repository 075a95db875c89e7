"""What a template's conditions mean, given what it declares (issue 33): the mistakes of meaning
that names and types cannot catch, each at its position with a fix.

The analysis is over the AST, once every name has checked (a module with errors is not read:
its expressions may name nothing). It knows, of a template:

- each number's interval (`checker.ranges.Ranges`: an input's `minimum`/`maximum`, literals,
  lets, arithmetic), and that a validation's `confidence` and a damage's `percentage` are 0 to
  100, an image's `attempts` and any `count` or `length` at least 0;
- the facts of the records: a validation's `valid`, `confidence` or `result` is missing until
  it `ran` (so `plate.valid and not plate.ran` never holds), an image is `approved` or
  `processed` only once `uploaded`;
- which inputs may be missing (not `required`), which photos may be
  absent (`optional`, or asked only `when`), and each select's option keys.

The codes (docs/language.md, "Diagnostics"): W008 a condition, or a part of one, that the
declarations decide (always true when its values are given, or never true), E034 an approval
that can never hold, E048 `number()` of a select whose keys are not numbers, E049 two names that
differ only in case, W009 `all(...)` over photos that may all be absent, W010 a confidence
written as a fraction, W011 a review band under the minimum confidence, W012 a date difference
whose sign is fixed (its arguments reversed), W013 an `otherwise` with no `approve`, W014 a
quantifier's item hiding a let or a variable, W015 a reason not translated to a declared locale,
W016 a disapproval that reads an input which may be missing, W017 a check nothing reads and not
marked `for information`, W018 a date difference whose dates' names say it counts backwards
(`event_words`), W019 a check marked `for information` that a verdict line reads.

Every walk is iterative; the stage reads each expression once, and the intervals only when a
comparison with a number needs them (`bench_compile`'s `compile_vs_parse` measures the cost).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from inspectlang import ast
from inspectlang.checker.checked import CheckedInput
from inspectlang.checker.context import Run
from inspectlang.checker.event_words import date_role
from inspectlang.checker.ranges import ANY, Interval, Ranges, literal_number, written
from inspectlang.checker.walk import children

#: Number fields of records, with the values they can take.
FIELD_INTERVALS: dict[str, Interval] = {
    "confidence": (0.0, 100.0),
    "percentage": (0.0, 100.0),
    "attempts": (0.0, math.inf),
}
#: A validation's fields that are missing until it ran.
_RESULT_FIELDS = frozenset({"valid", "confidence", "result"})
#: An image's fields that are true only once a photo is uploaded.
_UPLOADED_FIELDS = frozenset({"approved", "processed"})
_DATE_DIFFERENCES = frozenset({"years_between", "months_between", "days_between"})
#: Words in a date input's name that say it is in the past (a birth date).
_PAST_WORDS = ("birth", "nacim", "nasc")
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}
#: The roles of the verdict's lines.
_VERDICT_ROLES = frozenset({"approve", "disapprove", "review"})
#: The functions whose calls `MeaningCheck.call` reads.
_CALLS_READ = frozenset({"number", *_DATE_DIFFERENCES})


def _shown(value: float) -> str:
    return f"{value:g}"


def _decided(operator: str, low: float, high: float, bound: float) -> bool | None:
    """Whether `x OPERATOR bound` always holds (True) or never does (False) for every x in
    [low, high]; None when it depends."""
    if operator == ">":
        return True if low > bound else False if high <= bound else None
    if operator == ">=":
        return True if low >= bound else False if high < bound else None
    if operator == "<":
        return True if high < bound else False if low >= bound else None
    if operator == "<=":
        return True if high <= bound else False if low > bound else None
    outside = bound < low or bound > high
    point = low == high == bound
    if operator == "=":
        return True if point else False if outside else None
    if operator == "!=":
        return True if outside else False if point else None
    return None


def _narrowed(interval: Interval, operator: str, bound: float) -> Interval:
    """The part of `interval` where `x OPERATOR bound` holds (empty: low > high)."""
    low, high = interval
    if operator == ">":
        return (max(low, math.nextafter(bound, math.inf)), high)
    if operator == ">=":
        return (max(low, bound), high)
    if operator == "<":
        return (low, min(high, math.nextafter(bound, -math.inf)))
    if operator == "<=":
        return (low, min(high, bound))
    if operator == "=":
        return (max(low, bound), min(high, bound))
    return interval


def _terms(node: ast.Expr, operator: str = "and") -> list[ast.Expr]:
    """The parts of an `and` (or `or`) chain, in order."""
    terms: list[ast.Expr] = []
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Binary) and current.operator == operator:
            pending.append(current.right)
            pending.append(current.left)
        else:
            terms.append(current)
    return terms


@dataclass(frozen=True, slots=True)
class _Binding:
    """On the walk's stack around a quantifier's condition and value: its item is bound
    (`change` 1) before them and unbound (-1) after."""

    variable: str
    change: int


def _and_nodes(node: ast.Expr) -> Iterator[ast.Expr]:
    """The `and` nodes of the chain `node` tops."""
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.Binary) and current.operator == "and":
            yield current
            pending.append(current.right)
            pending.append(current.left)


def _path(node: ast.Expr) -> tuple[str, ...] | None:
    """The names of `images.front.plate.valid` (`value`: one), or None for anything else."""
    names: list[str] = []
    while type(node) is ast.Attribute:
        names.append(node.name)
        node = node.value
    if type(node) is not ast.Name:
        return None
    names.append(node.name)
    return tuple(reversed(names))


@dataclass(slots=True)
class _Facts:
    """What the conjuncts of one `and` chain require: number intervals and truth values by
    the expression they are about, and the records whose result they need."""

    # Keyed by the path of names (`("inputs", "km")`): cheap to hash, and the formatter is
    # needed only for a message.
    intervals: dict[tuple[str, ...], Interval] = field(default_factory=dict)
    truths: dict[tuple[str, ...], bool] = field(default_factory=dict)
    needs_ran: dict[tuple[str, ...], ast.Expr] = field(default_factory=dict)
    needs_upload: dict[tuple[str, ...], ast.Expr] = field(default_factory=dict)
    #: The comparisons asked of each number (`> 100000`), for the message.
    asked: dict[tuple[str, ...], list[tuple[str, float]]] = field(default_factory=dict)


class MeaningCheck:
    """The stage's state: the run, and what it learned of the template's declarations."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.reporter = run.reporter
        #: Conditions proven never to hold, by id (an `approve` made of one is E034).
        self.never: dict[int, str] = {}
        #: The `approve` condition being read (a part that makes it never hold gives way to
        #: the line's E034).
        self.approve_condition: ast.Expr | None = None
        #: Intervals already computed, by node.
        self.intervals: dict[int, Interval] = {}
        #: The input `value` is in the rule being read (`on input set NAME`), else None.
        self.value_input: str | None = None
        #: `and` nodes already read as part of a chain (a chain is read once, at its top).
        self.inner: set[int] = set()
        #: The checks some expression reads (`checks.NAME`); the others are W017.
        self.checks_read: set[str] = set()
        #: Where a verdict line first reads each check (one marked `for information` is W019).
        self.checks_deciding: dict[str, ast.Expr] = {}

    @cached_property
    def ranges(self) -> Ranges:
        return Ranges.of(self.run.module)

    @cached_property
    def optional_inputs(self) -> frozenset[str]:
        # a required input asked only `when` is missing only when not asked: the author's own
        # "does not apply here" (the tutorial's carbon_damage, asked for carbon frames)
        return frozenset(i.name for i in self.run.template.inputs if not i.required)

    @cached_property
    def past_dates(self) -> frozenset[str]:
        """Date inputs named for a birth: a date in the past, whatever the day the template is
        checked (a `latest:` would depend on that day: the checker's answer must not)."""
        past = set()
        for item in self.run.template.inputs:
            if item.input_type != "date":
                continue
            name = item.name.lower()
            if any(word in name for word in _PAST_WORDS):
                past.add(item.name)
        return frozenset(past)

    # -- the walk ----------------------------------------------------------------------------

    def expressions(self) -> Iterator[tuple[ast.Expr, str]]:
        """Every expression of the module with what it is (`approve`, `disapprove`, `review`,
        `condition`, `value`)."""
        for declaration in self.run.module.declarations:
            if isinstance(declaration, ast.LetDecl):
                yield declaration.value, "value"
            elif isinstance(declaration, ast.RuleDecl):
                spec = declaration.event
                # `value` in `on input set km` is `inputs.km`, with its range
                self.value_input = (
                    spec.target if " ".join(spec.event.split()) == "input set" else None
                )
                pending = list(declaration.body)
                while pending:
                    statement = pending.pop()
                    if isinstance(statement, ast.IfStatement):
                        yield statement.condition, "condition"
                        pending.extend(statement.then)
                        pending.extend(statement.otherwise)
                    elif isinstance(statement, ast.SetStatement):
                        yield statement.value, "value"
            elif isinstance(declaration, ast.VerdictDecl):
                self.value_input = None
                for item in declaration.items:
                    if isinstance(item, ast.Approve):
                        yield item.condition, "approve"
                    elif isinstance(item, ast.Disapprove):
                        yield item.condition, "disapprove"
                    elif isinstance(item, ast.Review):
                        yield item.condition, "review"
            elif isinstance(declaration, ast.CheckDecl | ast.InputDecl | ast.ImageDecl):
                for item in declaration.items:
                    if isinstance(item, ast.Property) and item.key in ("valid when", "ask when"):
                        for value in item.values:
                            if not isinstance(value, ast.Quantity | ast.Size):
                                yield value, "condition"

    def run_all(self) -> None:
        for expression, role in self.expressions():
            if role == "approve":
                self.approve_condition = expression
            self.expression(expression, role)
            why = self.never_holds(expression) if role == "approve" else None
            if why is not None:
                self.reporter.report(
                    "E034",
                    f"`approve when` can never hold with what the template declares ({why}): "
                    "no inspection can be approved; fix the condition or the declaration",
                    expression.span,
                )
            self.approve_condition = None
        self.declarations()

    @cached_property
    def hidden(self) -> frozenset[str]:
        """Names a quantifier's item must not take: the lets and the variables."""
        return frozenset(self.run.scope.let_sources) | frozenset(self.run.scope.variables)

    def expression(self, root: ast.Expr, role: str) -> None:
        """Read one expression, each node once (a plain stack: this runs on every expression
        of every template checked, `bench_compile` counts it). A quantifier whose item hides a
        let, a variable or an outer item is W014 and is not read further: what its names mean
        inside is not what the ranges know."""
        stack: list[ast.Expr | _Binding] = [root]
        bound: dict[str, int] = {}
        seen_inputs: set[str] = set()
        hidden = self.hidden
        while stack:
            node: Any = stack.pop()  # its class is read once, below, not narrowed by mypy
            kind = type(node)
            if kind is ast.Binary:
                operator = node.operator
                if operator == "and":
                    if id(node) not in self.inner:
                        self.conjunction(node, role)
                elif operator == "in":
                    self.empty_list(node, role)
                elif operator in _FLIPPED:
                    self.comparison(node, role)
                stack.append(node.right)
                stack.append(node.left)
            elif kind is ast.Attribute:
                if role == "disapprove":
                    self.optional_input(node, root, seen_inputs)
                value = node.value
                if type(value) is ast.Name and value.name == "checks":
                    self.checks_read.add(node.name)
                    if role in _VERDICT_ROLES:
                        self.checks_deciding.setdefault(node.name, node)
                stack.append(value)
            elif kind is ast.Call:
                if node.function in _CALLS_READ:
                    self.call(node)
                stack.extend(node.arguments)
            elif kind is ast.Quantifier:
                variable = node.variable
                if variable is not None and (variable in hidden or bound.get(variable)):
                    what = "an outer item" if bound.get(variable) else "a let or variable"
                    self.shadowing(node, what)
                    continue
                self.quantifier(node, role)
                # read in this order: the collection (outside the item's binding), the item
                # bound, its condition and value, the item unbound
                if variable is not None:
                    stack.append(_Binding(variable, -1))
                for part in (node.value, node.condition):
                    if part is not None:
                        stack.append(part)
                if variable is not None:
                    stack.append(_Binding(variable, 1))
                stack.append(node.collection)
            elif kind is _Binding:
                bound[node.variable] = bound.get(node.variable, 0) + node.change
            elif kind is ast.Unary:
                stack.append(node.operand)
            elif kind is ast.Conditional or kind is ast.ListExpr:
                stack.extend(children(node))

    def never_holds(self, node: ast.Expr) -> str | None:
        """Why a condition can never hold (an atom the declarations decide, `and` parts that
        contradict each other, `or` parts none of which holds), or None. Recursion only at
        each change between `and` and `or`: the checker bounds that nesting (E004)."""
        known = self.never.get(id(node))
        if known is not None:
            return known
        if isinstance(node, ast.Binary) and node.operator == "and":
            for term in _terms(node):
                if term is not node and (why := self.never_holds(term)) is not None:
                    return why
        elif isinstance(node, ast.Binary) and node.operator == "or":
            terms = _terms(node, "or")
            reasons = [self.never_holds(term) for term in terms]
            if all(reason is not None for reason in reasons):
                return "; ".join(reason for reason in reasons if reason is not None)
        return None

    def shadowing(self, node: ast.Quantifier, what: str) -> None:
        self.reporter.warn(
            "W014",
            f"the item `{node.variable}` hides {what} of that name inside this "
            f"`{node.kind}`: rename the item (`{node.variable}_item`)",
            node.span,
        )

    # -- conditions --------------------------------------------------------------------------

    def empty_list(self, node: ast.Binary, role: str) -> None:
        if isinstance(node.right, ast.ListExpr) and not node.right.items:
            because = "nothing is in the empty list `[]`"
            self.never[id(node)] = f"`{written(node)}`: {because}"
            self.decided(node, False, because, role)

    def comparison(self, node: ast.Binary, role: str) -> None:
        subject, operator, bound = node.left, node.operator, literal_number(node.right)
        if bound is None:
            subject, operator, bound = (
                node.right,
                _FLIPPED[node.operator],
                literal_number(node.left),
            )
        if bound is None:
            return
        self.fraction(subject, bound, node)
        low, high = self.interval(subject)
        if low == high or (low == -math.inf and high == math.inf):
            # a constant (`let limit = 10`, `10 / 5 > 1`) is the author's to compare, the same
            # whatever the inspection: no declaration decides it; unbounded: nothing known
            return
        decided = _decided(operator, low, high, bound)
        if decided is None:
            return
        text = written(subject)
        if text is None:
            return
        known = (
            f"it is {_shown(low)}"
            if low == high
            else f"it is at least {_shown(low)}"
            if high == math.inf
            else f"it is at most {_shown(high)}"
            if low == -math.inf
            else f"it is {_shown(low)} to {_shown(high)}"
        )
        because = f"`{text}` is declared so ({known})"
        if decided is False:
            self.never[id(node)] = f"`{written(node)}`: {because}"
        self.decided(node, decided, because, role)

    def interval(self, node: ast.Expr) -> Interval:
        """A number's interval (kept by node: an `and` chain and its comparison ask twice)."""
        known = self.intervals.get(id(node))
        if known is None:
            known = self.intervals[id(node)] = self._interval(node)
        return known

    def _interval(self, node: ast.Expr) -> Interval:
        if isinstance(node, ast.Attribute) and node.name in FIELD_INTERVALS:
            return FIELD_INTERVALS[node.name]
        if isinstance(node, ast.Call) and node.function in _DATE_DIFFERENCES:
            return ANY  # W012 says what is wrong with it
        if type(node) is ast.Name and node.name == "value" and self.value_input is not None:
            return self.ranges.inputs.get(self.value_input, ANY)
        return self.ranges.interval(node)

    def decided(self, node: ast.Expr, holds: bool, because: str, role: str) -> None:
        text = written(node) or "this condition"
        if holds:
            message = (
                f"`{text}` always holds when its values are given: {because}; the test "
                "decides nothing (drop it, or compare with a value the template allows)"
            )
        else:
            message = (
                f"`{text}` can never hold: {because}; what it guards never applies (fix the "
                "comparison or the declaration)"
            )
        if role == "approve" and not holds and self._is_whole_approval(node):
            return  # the line's E034 says it
        self.reporter.warn("W008", message, node.span)

    def _is_whole_approval(self, node: ast.Expr) -> bool:
        approve = self.approve_condition
        return approve is not None and (
            node is approve or any(term is node for term in _terms(approve))
        )

    def conjunction(self, node: ast.Binary, role: str) -> None:
        """An `and` chain (read once, at its top): conjuncts that cannot hold together."""
        terms = _terms(node)
        self.inner.update(id(inner) for inner in _and_nodes(node))
        if len(terms) < 2:
            return
        facts = _Facts()
        conflict: str | None = None
        for term in terms:
            conflict = conflict or self.require(term, facts)
        for record, where in facts.needs_ran.items():
            if facts.truths.get((*record, "ran")) is False:
                conflict = conflict or (
                    f"`{written(where)}` is missing until the validation ran, and this asks "
                    f"`not {'.'.join(record)}.ran`"
                )
        for record, where in facts.needs_upload.items():
            if facts.truths.get((*record, "uploaded")) is False:
                conflict = conflict or (
                    f"`{written(where)}` needs a photo uploaded, and this asks "
                    f"`not {'.'.join(record)}.uploaded`"
                )
        if conflict is None:
            return
        text = written(node) or "this condition"
        self.never[id(node)] = f"`{text}`: {conflict}"
        if role == "approve" and self._is_whole_approval(node):
            return
        self.reporter.warn(
            "W008",
            f"`{text}` can never hold: {conflict}; fix the comparison (`or` where either "
            "may hold?)",
            node.span,
        )

    def require(self, term: ast.Expr, facts: _Facts) -> str | None:
        """Add what one conjunct requires to `facts`; a text saying why, when it contradicts
        what the others required. Only names and fields (`inputs.km`, `value`,
        `images.front.plate.valid`) are compared, by their path."""
        truth = True
        while type(term) is ast.Unary and term.operator == "not":
            term, truth = term.operand, not truth
        if type(term) is ast.Binary and term.operator in _FLIPPED:
            subject, operator, bound = term.left, term.operator, literal_number(term.right)
            if bound is None:
                subject, operator, bound = term.right, _FLIPPED[operator], literal_number(term.left)
            if bound is None or not truth or operator == "!=":
                return None
            path = _path(subject)
            if path is None:
                return None
            self._needs(path, subject, facts)
            before = facts.intervals.get(path) or self.interval(subject)
            after = _narrowed(before, operator, bound)
            facts.intervals[path] = after
            asked = facts.asked.setdefault(path, [])
            asked.append((operator, bound))
            if after[0] > after[1] and len(asked) > 1:  # one alone: `comparison` says it
                both = " and ".join(f"{o} {_shown(b)}" for o, b in asked)
                return f"`{'.'.join(path)}` cannot be {both} at once"
            return None
        path = _path(term)
        if path is None:
            return None
        self._needs(path, term, facts)
        if facts.truths.get(path, truth) != truth:
            shown = ".".join(path)
            return f"it asks both `{shown}` and `not {shown}`"
        facts.truths[path] = truth
        return None

    @staticmethod
    def _needs(path: tuple[str, ...], subject: ast.Expr, facts: _Facts) -> None:
        name = path[-1]
        if name in _RESULT_FIELDS:
            facts.needs_ran.setdefault(path[:-1], subject)
        elif name in _UPLOADED_FIELDS:
            facts.needs_upload.setdefault(path[:-1], subject)

    def fraction(self, subject: ast.Expr, bound: float, node: ast.Expr) -> None:
        if not 0 < bound < 1:
            return
        if isinstance(subject, ast.Quantifier) and subject.kind == "sum":
            # `sum(d in damages of d.percentage) > 0.3`: a sum of percents is in percent too
            subject = subject.value if subject.value is not None else subject
        if isinstance(subject, ast.Attribute) and subject.name in ("confidence", "percentage"):
            self.reporter.report(
                "W010",
                f"a {subject.name} is 0 to 100: {_shown(bound)} is {_shown(bound * 100)}%? "
                f"write {_shown(bound * 100)}",
                node.span,
                severity="warning",
            )

    # -- calls, quantifiers, inputs ----------------------------------------------------------

    def call(self, node: ast.Call) -> None:
        function, arguments = node.function, node.arguments
        if function == "number" and len(arguments) == 1:
            self.number_of_options(node, arguments[0])
        elif function in _DATE_DIFFERENCES and len(arguments) == 2:
            first, second = arguments
            if (
                isinstance(first, ast.Call)
                and first.function == "today"
                and self._in_the_past(second)
            ):
                swapped = f"{function}({written(second)}, today())"
                self.reporter.report(
                    "W012",
                    f"`{written(node)}` counts from today back to `{written(second)}`, a date "
                    f"in the past: it is never positive (an age is `{swapped}`)",
                    node.span,
                    suggestion=swapped,
                    severity="warning",
                )
            else:
                self.date_order(node, first, second)

    def date_order(self, node: ast.Call, first: ast.Expr, second: ast.Expr) -> None:
        """A date difference that counts backwards: W012 when the inputs' declared order
        (`not before` / `not after`) proves it (the first date is never before the second, so
        the count is never positive), nothing when the order proves it counts forwards, else
        W018 when the names say so (the first date named for an event that ends a span, the
        second for one that starts it)."""
        function = node.function
        swapped = f"{function}({written(second)}, {written(first)})"
        declared = self._declared_order(first, second)
        if declared == "forwards":
            return
        if declared is not None:
            self.reporter.report(
                "W012",
                f"`{written(node)}` is never positive: {declared}, and `{function}(a, b)` is "
                f"b - a; write `{swapped}`",
                node.span,
                suggestion=swapped,
                notes=(f"to count back on purpose, write `-{swapped}`",),
                severity="warning",
            )
            return
        if self._date_role(first) != "end" or self._date_role(second) != "start":
            return
        self.reporter.report(
            "W018",
            f"`{written(node)}` counts from `{written(first)}` back to `{written(second)}`: "
            f"`{function}(a, b)` is b - a, and the names say `{written(second)}` comes first, "
            f"so a later `{written(first)}` gives a negative count; write `{swapped}`",
            node.span,
            suggestion=swapped,
            notes=(
                f"to count back on purpose, write `-{swapped}`: the same number, with the "
                "order the names say",
            ),
            severity="warning",
        )

    def _date_role(self, node: ast.Expr) -> str | None:
        """What a date's name and labels say it is (`event_words.date_role`)."""
        if not isinstance(node, ast.Attribute):
            return None
        texts = [node.name]
        if isinstance(node.value, ast.Name) and node.value.name == "inputs":
            found = self.date_inputs.get(node.name)
            if found is None:
                return None
            texts.append(found.label)
            texts.extend(str(t.get("label", "")) for t in found.translations.values())
        return date_role(texts)

    def _declared_order(self, first: ast.Expr, second: ast.Expr) -> str | None:
        """ "forwards" when the inputs' declared orders make `first` never after `second`, the
        reason (the chain of orders) when they make it never before, else None."""
        a, b = (
            self.date_inputs.get(n.name)
            if isinstance(n, ast.Attribute)
            and isinstance(n.value, ast.Name)
            and n.value.name == "inputs"
            else None
            for n in (first, second)
        )
        if a is None or b is None or a is b:
            return None
        if b.identifier in self.later_dates.get(a.identifier, ()):
            return "forwards"
        if a.identifier in self.later_dates.get(b.identifier, ()):
            return f"input `{a.name}` is declared never before `{b.name}`"
        return None

    @cached_property
    def later_dates(self) -> dict[str, frozenset[str]]:
        """Date input identifier -> the identifiers declared never before it (`not before` /
        `not after`, resolved by `date_order`). Direct orders only: the runtime enforces an
        order when both its dates are given, so `a >= b >= c` says nothing of `a` and `c`
        while `b` is missing."""
        later: dict[str, set[str]] = {}
        for checked in self.date_inputs.values():
            for other in checked.checks.get("notBefore", ()):
                later.setdefault(other, set()).add(checked.identifier)
            for other in checked.checks.get("notAfter", ()):
                later.setdefault(checked.identifier, set()).add(other)
        return {earlier: frozenset(dates) for earlier, dates in later.items()}

    @cached_property
    def date_inputs(self) -> dict[str, CheckedInput]:
        return {i.name: i for i in self.run.template.inputs if i.input_type == "date"}

    def _in_the_past(self, node: ast.Expr) -> bool:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.name == "consumer":
                return node.name == "birthdate"
            if node.value.name == "inputs":
                return node.name in self.past_dates
        return False

    def number_of_options(self, node: ast.Call, argument: ast.Expr) -> None:
        if not (
            isinstance(argument, ast.Attribute)
            and isinstance(argument.value, ast.Name)
            and argument.value.name == "inputs"
        ):
            return
        found = self.run.scope.inputs.get(argument.name)
        if found is None or found.input_type not in ("select", "multiselect"):
            return
        words = [key for key in found.options if _number_text(key) is None]
        if words:
            self.reporter.report(
                "E048",
                f"`number(inputs.{argument.name})` is missing for the option"
                f"{'s' if len(words) > 1 else ''} {', '.join(f'`{w}`' for w in words)}: "
                "an option's key is not a number, and a missing value makes a comparison "
                "false (so a disapproval does not apply)",
                node.span,
                notes=(
                    f'compare the key instead (`inputs.{argument.name} = "{words[0]}"`), or '
                    "give the options number keys",
                ),
            )

    def quantifier(self, node: ast.Quantifier, role: str) -> None:
        if isinstance(node.collection, ast.ListExpr) and not node.collection.items:
            result = {"all": "always true", "any": "never true"}.get(node.kind, "empty or 0")
            self.reporter.warn(
                "W008",
                f"`{written(node)}` reads the empty list `[]`: it is {result} whatever the "
                "inspection; name the list it should read",
                node.span,
            )
            if node.kind == "any":
                self.never[id(node)] = f"`{written(node)}`: nothing is in `[]`"
            return
        if node.kind != "all" or role == "value":
            return
        collection = node.collection
        over = collection.name if isinstance(collection, ast.Name) else None
        if over not in ("images", "validations"):
            return
        images = self.run.template.images
        if not images or any(not i.optional and i.ask_when is None for i in images):
            return  # a photo is always asked (a template of no photo asks none: nothing to say)
        every = "every photo is optional or asked only `when`"
        text = written(node) or "all(...)"
        self.reporter.warn(
            "W009",
            f"`{text}` holds when no photo is uploaded at all ({every}): an empty list makes "
            f"`all` true; write `count({over}) > 0 and {text}`, or make a photo required",
            node.span,
        )

    def optional_input(self, node: ast.Attribute, condition: ast.Expr, seen: set[str]) -> None:
        if not (isinstance(node.value, ast.Name) and node.value.name == "inputs"):
            return
        if node.name not in self.optional_inputs or node.name in seen:
            return
        seen.add(node.name)
        if _tests_defined(condition, node):
            return
        self.reporter.warn(
            "W016",
            f"input `{node.name}` may be missing (it is not `required`): "
            "then this disapproval does not apply; make it `required`, or write "
            f"`not defined(inputs.{node.name}) or ...` to disapprove without it",
            node.span,
        )

    # -- declarations ------------------------------------------------------------------------

    def declarations(self) -> None:
        self.same_names_but_case()
        self.confidences()
        self.verdict_lines()
        self.unread_checks()

    def unread_checks(self) -> None:
        """W017: a check no verdict line, rule, let or other check reads, and not marked
        `for information`: it is computed and shown and decides nothing, whatever else the
        verdict reads (the line that reads it is missing, or it is there for information and
        should say so). A check marked `for information` is never reported."""
        informational = {c.key for c in self.run.template.checks if c.informational}
        for name in sorted(informational & self.checks_deciding.keys()):
            where = self.checks_deciding[name]
            self.reporter.warn(
                "W019",
                f"check `{name}` is marked `for information`, and this verdict line reads it: "
                "it decides; drop `for information`, or the line's use of it",
                where.span,
            )
        for declaration in self.run.module.declarations:
            if (
                isinstance(declaration, ast.CheckDecl)
                and declaration.name not in self.checks_read
                and declaration.name not in informational
            ):
                self.reporter.warn(
                    "W017",
                    f"check `{declaration.name}` is read by no verdict line, rule or let: it "
                    'is shown and decides nothing; read it (`disapprove "..." when not '
                    f"checks.{declaration.name}`), mark it `for information` under its "
                    "`valid when:`, or drop it",
                    declaration.name_span,
                )

    def same_names_but_case(self) -> None:
        groups: tuple[tuple[type, ...], ...] = (
            (ast.ImageDecl,),
            (ast.InputDecl,),
            (ast.CheckDecl,),
            (ast.LetDecl, ast.VariableDecl),
        )
        for kinds in groups:
            seen: dict[str, str] = {}
            for declaration in self.run.module.declarations:
                if not isinstance(declaration, kinds):
                    continue
                name = str(getattr(declaration, "name", ""))
                folded = name.casefold()
                first = seen.setdefault(folded, name)
                if first != name:
                    where = getattr(declaration, "name_span", declaration.span)
                    self.reporter.report(
                        "E049",
                        f"`{name}` differs from `{first}` only in case: a reader (and a "
                        "reviewer on the phone) cannot tell them apart; rename one",
                        where if where.line else declaration.span,
                    )

    def confidences(self) -> None:
        for declaration in self.run.module.declarations:
            if isinstance(declaration, ast.SettingsDecl):
                for item in declaration.items:
                    if isinstance(item, ast.Property) and item.key == "minimum confidence":
                        for value in item.values:
                            if isinstance(value, ast.Quantity | ast.Size):
                                continue
                            number = literal_number(value)
                            if number is not None and 0 < number <= 1:
                                self._fraction(number, value.span, "minimum confidence")
            elif isinstance(declaration, ast.ImageDecl):
                self.image_confidences(declaration)

    def image_confidences(self, declaration: ast.ImageDecl) -> None:
        image = next((i for i in self.run.template.images if i.name == declaration.name), None)
        for item in declaration.items:
            if not isinstance(item, ast.Validate):
                continue
            checked = None
            if image is not None:
                checked = next((v for v in image.validations if v.name == item.name), None)
            for modifier in item.modifiers:
                value = modifier.value
                if modifier.words in ("minimum confidence", "review below confidence") and (
                    isinstance(value, int | float) and 0 < value <= 1
                ):
                    self._fraction(float(value), modifier.span, modifier.words)
                if (
                    modifier.words == "review below confidence"
                    and checked is not None
                    and checked.review_below is not None
                    and checked.review_below <= checked.min_confidence
                ):
                    minimum = _shown(checked.min_confidence)
                    above = _shown(min(100.0, checked.min_confidence + 10))
                    self.reporter.warn(
                        "W011",
                        f"`review below confidence {_shown(checked.review_below)}` is not above "
                        f"the minimum confidence {minimum}: a result under {minimum} is refused "
                        "by the machine and never reaches a person; a review band is above the "
                        f"minimum (`review below confidence {above}`)",
                        modifier.span,
                    )

    def _fraction(self, value: float, span: ast.Span, what: str) -> None:
        self.reporter.report(
            "W010",
            f"`{what}` is a percent, 0 to 100: {_shown(value)} accepts almost any result "
            f"(a fraction? {_shown(value)} is {_shown(value * 100)}%)",
            span,
            suggestion=_shown(value * 100),
            severity="warning",
        )

    def verdict_lines(self) -> None:
        locales = self.run.template.locales[1:]
        for declaration in self.run.module.declarations:
            if not isinstance(declaration, ast.VerdictDecl):
                continue
            approves = any(isinstance(item, ast.Approve) for item in declaration.items)
            for item in declaration.items:
                if isinstance(item, ast.Otherwise) and not approves:
                    self.reporter.warn(
                        "W013",
                        "`otherwise` is never used: with no `approve when` line, an inspection "
                        "no disapproval matched is approved; add `approve when CONDITION` "
                        "above it, or remove it",
                        item.span,
                    )
                if isinstance(item, ast.Disapprove | ast.Review | ast.Otherwise):
                    self.translated(item, locales)

    def translated(
        self, item: ast.Disapprove | ast.Review | ast.Otherwise, locales: list[str]
    ) -> None:
        given = {t.locale for t in item.translations if isinstance(t, ast.Property)}
        missing = [locale for locale in locales if locale not in given]
        if given and missing:
            self.reporter.warn(
                "W015",
                f"this reason is translated, but not to {', '.join(missing)} (declared in "
                f"`locales`): an inspection in {missing[0]} gets the default text; add "
                f'`reason {missing[0]}: "..."` under it',
                item.reason_span if item.reason_span.line else item.span,
            )


def _tests_defined(condition: ast.Expr, value: ast.Expr) -> bool:
    """Whether a condition asks `defined(VALUE)` somewhere (it says what missing means)."""
    pending = [condition]
    while pending:
        current = pending.pop()
        if (
            isinstance(current, ast.Call)
            and current.function == "defined"
            and current.arguments == (value,)
        ):
            return True
        pending.extend(children(current))
    return False


def _number_text(text: str) -> float | None:
    """The number an option key writes as `number()` reads it, or None."""
    stripped = text.strip()
    body = stripped.lstrip("+-")
    if not body or body.count(".") > 1 or not body.replace(".", "").isdigit():
        return None
    return float(stripped)


def check_meaning(run: Run) -> None:
    """The checker's stage: the mistakes of meaning (the module docstring's list), read only
    when names and types checked (a module with errors says nothing of meaning yet)."""
    if run.reporter.has_errors():
        return
    MeaningCheck(run).run_all()
