"""W005: a divisor whose range includes 0 (issue 25: a division by zero silently approved).

What the checker knows of a number expression's range is an interval: a literal is itself, an
input its `minimum`/`maximum` (unbounded where it writes none), `count` and `length` are at
least 0, and `+ - * /`, unary minus, `abs`, `round`, `floor`, `min`, `max` and `mod` combine
intervals; anything else (variables, event values, sums, `number(...)`) may be anything. A
divisor (of `/` or `mod`) whose interval includes 0 gets W005, unless the expression is guarded:
the left side of an `and` or the condition of an `if` says it is not 0 (`inputs.km > 0 and
... / inputs.km`, `if n != 0`). A literal 0 is E030, not this.

At run time such a division gives missing and the rule error `division_by_zero`; a verdict
that would approve with such an error does not (docs/language.md, "Missing values and errors
at run time"). The walk covers lets, variables' initial values, properties (`valid when`,
`ask when`), rules and the verdict's conditions (a value in a reason that fails only leaves its
text empty); it is iterative.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property

from inspectlang import ast
from inspectlang.checker.context import Run
from inspectlang.checker.walk import children, dependencies_first

Interval = tuple[float, float]
ANY: Interval = (-math.inf, math.inf)
_NOT_NEGATIVE: Interval = (0.0, math.inf)

Warn = Callable[[str, str, ast.Span], None]


def _includes_zero(interval: Interval) -> bool:
    return interval[0] <= 0 <= interval[1]


def _products(a: Interval, b: Interval) -> Interval:
    values = []
    for x in a:
        for y in b:
            # 0 * inf is 0 here: a bound of 0 stays 0 whatever the other side
            values.append(0.0 if x == 0 or y == 0 else x * y)
    return (min(values), max(values))


def literal_number(node: ast.Expr) -> float | None:
    """The value of a number literal, or of a minus before one; None for anything else."""
    if isinstance(node, ast.Literal) and not isinstance(node.value, bool | str):
        return float(node.value)
    if isinstance(node, ast.Unary) and node.operator == "-":
        inner = literal_number(node.operand)
        return None if inner is None else -inner
    return None


def written(node: ast.Expr) -> str | None:
    """A key for an expression: equal for the same expression written again. None for one that
    cannot be written back (a number literal beyond the limit, already E019): it matches no
    fact and gets no warning."""
    from inspectlang.formatter import format_expression

    try:
        return format_expression(node)
    except ValueError:
        return None


@dataclass(slots=True)
class Ranges:
    """The intervals of a template's inputs and lets, and the guard facts in scope."""

    inputs: dict[str, Interval] = field(default_factory=dict)
    lets: dict[str, ast.Expr] = field(default_factory=dict)
    _let_intervals: dict[str, Interval] = field(default_factory=dict)

    @classmethod
    def of(cls, module: ast.Module) -> Ranges:
        ranges = cls()
        decls: list[ast.LetDecl] = []
        sources: dict[str, ast.LetDecl] = {}
        for declaration in module.declarations:
            if isinstance(declaration, ast.InputDecl):
                ranges.inputs[declaration.name] = _input_interval(declaration)
            elif isinstance(declaration, ast.LetDecl):
                decls.append(declaration)
                sources.setdefault(declaration.name, declaration)
                ranges.lets.setdefault(declaration.name, declaration.value)
        # each let after those it reads, so a let's interval never waits on another's (a let
        # in a cycle, E041, reads the one not yet known as unbounded)
        for let, _in_progress in dependencies_first(sources, decls):
            ranges._let_intervals[let.name] = ranges._interval(let.value)
        return ranges

    def interval(self, node: ast.Expr, nonzero: frozenset[str] = frozenset()) -> Interval:
        found = self._interval(node)
        if (
            nonzero
            and _includes_zero(found)
            and (key := written(node)) is not None
            and key in nonzero
        ):
            return (math.nextafter(0.0, 1.0), math.inf) if found[0] >= 0 else found
        return found

    def _interval(self, node: ast.Expr) -> Interval:
        constant = literal_number(node)
        if constant is not None:
            return (constant, constant)
        match node:
            case ast.Attribute(value=ast.Name(name="inputs"), name=name):
                return self.inputs.get(name, ANY)
            case ast.Name(name=name) if name in self.lets:
                return self._let_intervals.get(name, ANY)
            case ast.Unary(operator="-", operand=operand):
                low, high = self._interval(operand)
                return (-high, -low)
            case ast.Binary(operator="+", left=left, right=right):
                a, b = self._interval(left), self._interval(right)
                return (a[0] + b[0], a[1] + b[1])
            case ast.Binary(operator="-", left=left, right=right):
                a, b = self._interval(left), self._interval(right)
                return (a[0] - b[1], a[1] - b[0])
            case ast.Binary(operator="*", left=left, right=right):
                return _products(self._interval(left), self._interval(right))
            case ast.Binary(operator="/", left=left, right=right):
                divisor = self._interval(right)
                if _includes_zero(divisor):
                    return ANY
                inverse = (1 / divisor[1], 1 / divisor[0])
                return _products(self._interval(left), inverse)
            case ast.Quantifier(kind="count"):
                return _NOT_NEGATIVE
            case ast.Conditional(then=then, otherwise=otherwise):
                a, b = self._interval(then), self._interval(otherwise)
                return (min(a[0], b[0]), max(a[1], b[1]))
            case ast.Call(function="count" | "length"):
                return _NOT_NEGATIVE
            case ast.Call(function="abs", arguments=(argument,)):
                low, high = self._interval(argument)
                if low >= 0:
                    return (low, high)
                if high <= 0:
                    return (-high, -low)
                return (0.0, max(-low, high))
            case ast.Call(function="floor", arguments=(argument,)):
                low, high = self._interval(argument)
                return (math.floor(low) if math.isfinite(low) else low, high)
            case ast.Call(function="round", arguments=(argument,)):
                low, high = self._interval(argument)
                return (
                    math.floor(low) if math.isfinite(low) else low,
                    math.ceil(high) if math.isfinite(high) else high,
                )
            case ast.Call(function="mod", arguments=(_, divisor)):
                low, high = self._interval(divisor)
                largest = max(abs(low), abs(high))
                return (0.0 if low > 0 else -largest, 0.0 if high < 0 else largest)
            case ast.Call(function="min" | "max" as function, arguments=arguments) if (
                len(arguments) > 1
            ):
                intervals = [self._interval(a) for a in arguments]
                pick = min if function == "min" else max
                return (pick(i[0] for i in intervals), pick(i[1] for i in intervals))
        return ANY


def _input_interval(declaration: ast.InputDecl) -> Interval:
    low, high = ANY
    for item in declaration.items:
        if isinstance(item, ast.Property) and len(item.values) == 1:
            value = (
                literal_number(item.values[0])
                if not isinstance(item.values[0], ast.Quantity | ast.Size)
                else None
            )
            if value is None:
                continue
            if item.key == "minimum":
                low = value
            elif item.key == "maximum":
                high = value
    return (low, high)


def _nonzero_facts(condition: ast.Expr) -> Iterator[str]:
    """Expressions a condition that holds says are not 0: `E > 0`, `E != 0`, `E >= 1`,
    `E < 0`, `0 < E`..., and each side of an `and`."""
    if isinstance(condition, ast.Binary) and condition.operator == "and":
        yield from _nonzero_facts(condition.left)
        yield from _nonzero_facts(condition.right)
        return
    if not isinstance(condition, ast.Binary):
        return
    operator, left, right = condition.operator, condition.left, condition.right
    bound = literal_number(right)
    subject = left
    if bound is None:
        bound = literal_number(left)
        subject = right
        operator = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}.get(operator, operator)
    if bound is None:
        return
    if (
        (operator == "!=" and bound == 0)
        or (operator == ">" and bound >= 0)
        or (operator == ">=" and bound > 0)
        or (operator == "<" and bound <= 0)
        or (operator == "<=" and bound < 0)
        or (operator == "=" and bound != 0)
    ):
        key = written(subject)
        if key is not None:
            yield key


class DivisorCheck:
    """Walks every expression of a module once and warns (W005) at each divisor that may be 0."""

    def __init__(self, module: ast.Module, warn: Warn) -> None:
        self.warn = warn
        self.module = module

    @cached_property
    def ranges(self) -> Ranges:
        """What the module bounds, read at the first divisor that is no literal (most modules
        have none)."""
        return Ranges.of(self.module)

    def run(self) -> None:
        for declaration in self.module.declarations:
            if isinstance(declaration, ast.LetDecl):
                self.expression(declaration.value, frozenset())
            elif isinstance(declaration, ast.VariableDecl):
                self.expression(declaration.initial, frozenset())
            elif isinstance(declaration, ast.RuleDecl):
                self.statements(declaration.body, frozenset())
            for item in getattr(declaration, "items", ()):
                if isinstance(item, ast.Property):
                    for value in item.values:
                        if not isinstance(value, ast.Quantity | ast.Size):
                            self.expression(value, frozenset())
                elif isinstance(item, ast.Disapprove | ast.Review | ast.Approve):
                    self.expression(item.condition, frozenset())

    def statements(self, body: Iterable[ast.Statement], facts: frozenset[str]) -> None:
        pending: list[tuple[ast.Statement, frozenset[str]]] = [(s, facts) for s in body]
        while pending:
            statement, known = pending.pop()
            if isinstance(statement, ast.IfStatement):
                self.expression(statement.condition, known)
                inner = known | frozenset(_nonzero_facts(statement.condition))
                pending.extend((s, inner) for s in statement.then)
                pending.extend((s, known) for s in statement.otherwise)
            else:  # a one-line statement (`set`): each of its expressions
                for name in _field_names(type(statement)):
                    value = getattr(statement, name)
                    if isinstance(value, ast.Expr):
                        self.expression(value, known)

    def expression(self, node: ast.Expr, facts: frozenset[str]) -> None:
        if not _divides(node):
            return  # the walk below only ever acts at a division or a `mod`
        pending: list[tuple[ast.Expr, frozenset[str]]] = [(node, facts)]
        while pending:
            current, known = pending.pop()
            match current:
                case ast.Binary(operator="and", left=left, right=right):
                    pending.append((left, known))
                    pending.append((right, known | frozenset(_nonzero_facts(left))))
                    continue
                case ast.Binary(operator="/", right=divisor):
                    self._divisor(divisor, known)
                case ast.Call(function="mod", arguments=(_, divisor)):
                    self._divisor(divisor, known)
            pending.extend((child, known) for child in children(current))

    def _divisor(self, divisor: ast.Expr, facts: frozenset[str]) -> None:
        if literal_number(divisor) is not None:
            return  # a literal: 0 is E030, anything else is fine
        low, high = self.ranges.interval(divisor, facts)
        if not _includes_zero((low, high)):
            return
        text = written(divisor)
        if text is None:
            return
        if math.isinf(low) and math.isinf(high):
            known = "nothing bounds it"
        elif math.isinf(low):
            known = f"it has no minimum and is at most {high:g}"
        elif math.isinf(high):
            known = f"it is at least {low:g}"
        else:
            known = f"it is {low:g} to {high:g}"
        bound = ""
        if isinstance(divisor, ast.Attribute) and (
            isinstance(divisor.value, ast.Name) and divisor.value.name == "inputs"
        ):
            bound = f", or give input `{divisor.name}` a `minimum:` above 0"
        self.warn(
            "W005",
            f"`{text}` may be 0 here ({known}): the division then fails at run time and "
            f"what it decides cannot count; guard it (`{text} > 0 and ...`){bound}",
            divisor.span,
        )


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(kind: type) -> tuple[str, ...]:
    """A statement class's field names (`dataclasses.fields`, kept per class)."""
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(item.name for item in dataclasses.fields(kind))
    return names


#: Per expression class, the fields holding one child expression (None: absent) and the fields
#: holding a tuple of them: `_divides`' walk, the same children as `children`.
_CHILD_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {
    ast.Binary: (("left", "right"), ()),
    ast.Unary: (("operand",), ()),
    ast.Conditional: (("condition", "then", "otherwise"), ()),
    ast.Attribute: (("value",), ()),
    ast.Call: ((), ("arguments",)),
    ast.ListExpr: ((), ("items",)),
    ast.Quantifier: (("collection", "condition", "value"), ()),
    ast.Literal: ((), ()),
    ast.Name: ((), ()),
}


def _divides(node: ast.Expr) -> bool:
    """Whether `node` holds, anywhere, a division or a `mod` call whose divisor is no literal
    number: the only places `DivisorCheck` acts (a cheap walk that lets it skip the expressions
    with nothing to check, most of them)."""
    pending: list[ast.Expr] = [node]
    while pending:
        current = pending.pop()
        kind = type(current)
        if kind is ast.Binary:
            if current.operator == "/" and literal_number(current.right) is None:  # type: ignore[union-attr]
                return True
        elif kind is ast.Call and current.function == "mod":  # type: ignore[union-attr]
            arguments = current.arguments  # type: ignore[union-attr]
            if len(arguments) == 2 and literal_number(arguments[1]) is None:
                return True
        fields = _CHILD_FIELDS.get(kind)
        if fields is None:
            pending.extend(children(current))  # a class this table does not know yet
            continue
        single, several = fields
        for name in single:
            child = getattr(current, name)
            if child is not None:
                pending.append(child)
        for name in several:
            pending.extend(getattr(current, name))
    return False


def warn_divisors(run: Run) -> None:
    """The checker's stage: W005 at every divisor that may be 0 (not where a constant zero was
    already E030). A module the parser saw no such divisor in (`ast.Module.divides`) has none
    to walk for: most templates."""
    if not run.module.divides:
        return
    zero = {d.span for d in run.reporter.diagnostics if d.code == "E030"}

    def warn(code: str, message: str, span: ast.Span) -> None:
        if span not in zero:
            run.reporter.warn(code, message, span)

    DivisorCheck(run.module, warn).run()
