"""One inspection of a template, run symbolically: the verified IR of `runtime.program` as z3
terms.

Every value is a `Value`: a z3 term and a z3 condition saying when it is defined (missing is
`None` in the runtime). Numbers are reals, texts strings, dates the integer of
`date.toordinal()`, booleans booleans; records are dicts of their fields, lists `Items` of
(present, item) pairs. The evaluator follows `runtime.reference.ReferenceEvaluator` node by node
(three-valued `and`/`or`, missing operands, only the chosen side of a conditional evaluated,
rule errors where the runtime records them), and `Scenario` follows `runtime.transitions`:
the triggers of each event, the rules they match in source order, the checks recomputed after
each event, the verdict, the missing photos and the reasons for a person at the finish.

A library function z3 has no theory for (`lower`, `years_between`, `number` of a free text...)
is exact on values known to be one of a few constants (a select's options, literals), computed
by the runtime's own `runtime.values.FUNCTIONS`; on a free value it is an uninterpreted function
whose points the solver learns lazily from the runtime (`Functions.refine`), so a model the
runtime disagrees with is refined away, never reported.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import re._parser as sre  # type: ignore[import-not-found]  # the standard parser of `re`
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import z3

from inspectlang import ir
from inspectlang.manifest import CONSUMER_FIELDS, PRODUCT_FIELDS, InputSpec
from inspectlang.vocabulary import MAX_NUMBER
from inspectlang.vocabulary import MAX_TEXT_LENGTH as MAX_TEXT
from runtime.errors import InspectionRuntimeError
from runtime.evaldata import input_value
from runtime.program import Program
from runtime.proofs.terms import FALSE, TRUE, And, Not, Or
from runtime.validators import REGISTRY
from runtime.values import FUNCTIONS

#: Most damages a scenario declares (`damage declared` events), when the template reads damages.
MAX_DECLARED = 3
#: Longest text a free text leaf takes (the runtime's results are at most 1,000 characters).
MAX_LEAF_TEXT = 1000
#: Most constant cases a value is split into before a function is left uninterpreted.
MAX_CASES = 32
#: The day the scenario's events happen on ranges over these years (`today()`).
YEARS = (2000, 2099)

Guard = Any


class Unsupported(InspectionRuntimeError):
    """A construct the encoding does not express; `verify` says so instead of guessing."""


SORTS: dict[str, Callable[[], z3.SortRef]] = {
    "number": z3.RealSort,
    "text": z3.StringSort,
    "boolean": z3.BoolSort,
    "date": z3.IntSort,
}


def default(type_name: str) -> z3.ExprRef:
    """The term a missing value of `type_name` carries (never read while missing)."""
    return {
        "number": z3.RealVal(0),
        "text": z3.StringVal(""),
        "boolean": FALSE,
        "date": z3.IntVal(1),
    }[type_name]


@dataclass
class Value:
    """A scalar: `term` when `defined` holds, missing otherwise."""

    defined: z3.BoolRef
    term: z3.ExprRef
    #: A text that is always this many decimal digits (an input whose pattern admits nothing
    #: else, an IMEI): one integer 0..9 each, so `substring`, `number`, `length`, `starts_with`
    #: and `matches` of it are arithmetic, which z3 decides, not string constraints it may not.
    digits: tuple[z3.ArithRef, ...] | None = None


def digit_text(digits: tuple[z3.ArithRef, ...]) -> z3.ExprRef:
    """The text its digits write (the term simulate's events read the input from)."""
    chars = [z3.StrFromCode(48 + d) for d in digits]
    if not chars:
        return z3.StringVal("")
    return chars[0] if len(chars) == 1 else z3.Concat(*chars)


def digits_value(digits: tuple[z3.ArithRef, ...]) -> z3.ArithRef:
    """The whole number the digits write, leading zeros included (`number("042")` is 42)."""
    total: z3.ArithRef = z3.IntVal(0)
    for d in digits:
        total = total * 10 + d
    return z3.ToReal(total)


def fixed_digits(pattern: str | None, low: int, high: int) -> int | None:
    """n when the texts `pattern` admits (RE2, searched) within `low`..`high` characters are
    exactly the texts of n ASCII digits; None otherwise."""
    if not pattern:
        return None
    try:
        items = list(sre.parse(pattern))
    except Exception:  # a pattern the checker let through but `re` refuses
        return None
    if len(items) < 3 or str(items[0][0]) != "AT" or str(items[-1][0]) != "AT":
        return None
    if str(items[0][1]) not in ("AT_BEGINNING", "AT_BEGINNING_STRING") or str(items[-1][1]) not in (
        "AT_END",
        "AT_END_STRING",
    ):
        return None

    def digit(item: Any) -> bool:
        op, arg = item
        if str(op) != "IN" or len(arg) != 1:
            return False
        kind, value = arg[0]
        return (str(kind) == "RANGE" and tuple(value) == (48, 57)) or (
            str(kind) == "CATEGORY" and str(value) == "CATEGORY_DIGIT"  # RE2: ASCII only
        )

    least, most = 0, 0
    for op, arg in items[1:-1]:
        if digit((op, arg)):
            least, most = least + 1, most + 1
        elif str(op) == "MAX_REPEAT" and len(arg[2]) == 1 and digit(next(iter(arg[2]))):
            least += arg[0]
            most = most + arg[1] if arg[1] != sre.MAXREPEAT else 10**9
        else:
            return None
    least, most = max(least, low), min(most, high)
    return least if least == most else None


@dataclass
class Items:
    """A list: each item with the condition under which it is in the list; the list itself
    missing unless `defined`."""

    items: list[tuple[z3.BoolRef, Any]]
    defined: z3.BoolRef = TRUE


def missing(type_name: str) -> Value:
    return Value(FALSE, default(type_name))


def known(term: z3.ExprRef) -> Value:
    return Value(TRUE, term)


def ite(condition: z3.BoolRef, then: Any, otherwise: Any) -> Any:
    """`then` where `condition` holds, else `otherwise`: scalars, records and lists alike."""
    if isinstance(then, Value) and isinstance(otherwise, Value):
        return Value(
            z3.If(condition, then.defined, otherwise.defined),
            z3.If(condition, then.term, otherwise.term),
        )
    if isinstance(then, dict) and isinstance(otherwise, dict) and then.keys() == otherwise.keys():
        return {key: ite(condition, then[key], otherwise[key]) for key in then}
    if (
        isinstance(then, Items)
        and isinstance(otherwise, Items)
        and len(then.items) == len(otherwise.items)
    ):
        return Items(
            [
                (z3.If(condition, p, q), ite(condition, a, b))
                for (p, a), (q, b) in zip(then.items, otherwise.items, strict=True)
            ],
            z3.If(condition, then.defined, otherwise.defined),
        )
    raise Unsupported("a conditional choosing between records or lists of different shapes")


# -- constants between Python and z3 -------------------------------------------------------------


def to_python(term: z3.ExprRef, type_name: str) -> Any:
    """A z3 value (of a model or a constant) as the runtime holds it."""
    if type_name == "number":
        value = term.as_fraction() if z3.is_rational_value(term) else None
        if value is None:
            value = Fraction(str(z3.simplify(term).as_decimal(20)).rstrip("?"))
        return int(value) if value.denominator == 1 else float(value)
    if type_name == "text":
        return str(term.as_string())
    if type_name == "boolean":
        return z3.is_true(term)
    if type_name == "date":
        ordinal = int(term.as_long())
        return dt.date.fromordinal(min(max(ordinal, 1), dt.date.max.toordinal())).isoformat()
    raise Unsupported(f"a value of type {type_name}")


def to_term(value: Any, type_name: str) -> Value:
    """A runtime value as a Value (None: missing)."""
    if value is None:
        return missing(type_name)
    if type_name == "number":
        if isinstance(value, bool):
            value = int(value)
        return known(z3.RealVal(Fraction(value) if isinstance(value, float) else value))
    if type_name == "text":
        return known(z3.StringVal(value))
    if type_name == "boolean":
        return known(z3.BoolVal(bool(value)))
    if type_name == "date":
        return known(z3.IntVal(dt.date.fromisoformat(value).toordinal()))
    raise Unsupported(f"a constant of type {type_name}")


def constant_cases(
    term: z3.ExprRef, limit: int = MAX_CASES
) -> list[tuple[Guard, z3.ExprRef]] | None:
    """The term as (condition, constant) cases when it is a tree of `If`s over constants."""
    if z3.is_app_of(term, z3.Z3_OP_ITE):
        condition, then, otherwise = term.children()
        left = constant_cases(then, limit)
        right = constant_cases(otherwise, limit)
        if left is None or right is None or len(left) + len(right) > limit:
            return None
        return [(And(condition, c), t) for c, t in left] + [
            (And(Not(condition), c), t) for c, t in right
        ]
    if z3.is_int_value(term) or z3.is_rational_value(term) or z3.is_string_value(term):
        return [(TRUE, term)]
    if z3.is_true(term) or z3.is_false(term):
        return [(TRUE, term)]
    return None


# -- the library: exact where z3 can, learned lazily where it cannot ------------------------------


@dataclass
class Application:
    """One use of an uninterpreted library function: its runtime name, argument values and
    types, and the terms standing for its result."""

    name: str
    args: list[Value]
    types: list[str]
    result_type: str
    result: Value


class Functions:
    """The uninterpreted stand-ins of library functions, and what the runtime taught them."""

    def __init__(self) -> None:
        self.declared: dict[tuple[str, tuple[str, ...]], tuple[z3.FuncDeclRef, z3.FuncDeclRef]] = {}
        self.applications: list[Application] = []
        self.learned: set[tuple[Any, ...]] = set()
        #: String atoms over a text of digits, each stood for by a free Boolean until the
        #: prover asks for the exact answer (`Prover._check`): the atom's Boolean, the atom, and
        #: the digits it reads. Keyed by the atom's id, so an atom met at every step is one.
        self.deferred: dict[int, tuple[z3.BoolRef, z3.BoolRef, tuple[z3.ArithRef, ...]]] = {}

    def defer(self, atom: z3.BoolRef, digits: tuple[z3.ArithRef, ...]) -> z3.BoolRef:
        """A Boolean standing for `atom`, a string constraint on a text whose digits are
        `digits`. Measured (used_phone_resale, `contains(ocr, inputs.imei)` beside the IMEI's
        Luhn sum): z3 took 0.4 to 1.7 s on each question that held the atom, 0.03 s when the
        digits were solved first and the atom then checked with them fixed."""
        key = atom.get_id()
        found = self.deferred.get(key)
        if found is None:
            found = (z3.Bool(f"deferred#{len(self.deferred)}"), atom, digits)
            self.deferred[key] = found
        return found[0]

    def pinned(self) -> list[z3.ArithRef]:
        """The digits the deferred atoms read, each once."""
        seen: dict[int, z3.ArithRef] = {}
        for _, _, digits in self.deferred.values():
            for d in digits:
                seen.setdefault(d.get_id(), d)
        return list(seen.values())

    def apply(self, name: str, args: list[Value], types: list[str], result_type: str) -> Value:
        key = (name, tuple(types))
        if key not in self.declared:
            sorts = [SORTS[t]() for t in types]
            self.declared[key] = (
                z3.Function(f"{name}({','.join(types)})", *sorts, SORTS[result_type]()),
                z3.Function(f"{name}({','.join(types)})?", *sorts, z3.BoolSort()),
            )
        value, defined = self.declared[key]
        terms = [a.term for a in args]
        given = And(*[a.defined for a in args])
        if name in TOTAL:
            result = Value(given, value(*terms))
        else:
            result = Value(And(given, defined(*terms)), value(*terms))
        self.applications.append(Application(name, args, types, result_type, result))
        return result

    def refine(self, model: z3.ModelRef) -> list[z3.BoolRef]:
        """Facts the runtime states about the points `model` gave the functions: their true
        values there. Empty when the model already agrees."""
        facts: list[z3.BoolRef] = []
        for app in self.applications:
            if not all(z3.is_true(model.eval(a.defined, model_completion=True)) for a in app.args):
                continue
            points = [model.eval(a.term, model_completion=True) for a in app.args]
            python = [to_python(p, t) for p, t in zip(points, app.types, strict=True)]
            key = (app.name, tuple(app.types), tuple(map(repr, python)))
            if key in self.learned:
                continue
            self.learned.add(key)
            true = run_function(app.name, python)
            value, defined = self.declared[(app.name, tuple(app.types))]
            expected = to_term(true, app.result_type)
            facts.append(defined(*points) == expected.defined)
            if true is not None:
                facts.append(value(*points) == expected.term)
        return facts


#: Library functions defined whenever their arguments are (texts within the limit; the
#: scenario's texts are).
TOTAL = frozenset(
    {
        "lower",
        "upper",
        "trim",
        "normalize",
        "text",
        "year",
        "month",
        "day",
        "years_between",
        "months_between",
    }
)


#: Functions that return a plain text as it is (`lower` of a text without capitals...): drawn
#: texts are preferably such texts.
PLAIN_TEXT_FIXED = frozenset({"lower", "upper", "trim", "normalize"})


def run_function(name: str, args: list[Any]) -> Any:
    """The runtime's own function on constants (its errors are the caller's concern)."""
    return FUNCTIONS[name]([], (0, 0, 0, 0), *args)


# -- the evaluator --------------------------------------------------------------------------------


@dataclass
class RuleError:
    """A rule error the runtime would record: its code, span, and when it happens."""

    code: str
    span: tuple[int, ...]
    when: z3.BoolRef
    source: str


@dataclass
class Env:
    """What an expression reads at one moment of the scenario."""

    vars: dict[str, Value]
    inputs: Callable[[str], Any]
    product: Callable[[str], Value]
    consumer: Callable[[str], Value]
    images: dict[str, dict[str, Any]]
    image_list: Items
    damages: Items
    validations: Items
    checks: dict[str, z3.BoolRef]
    event: dict[str, Any]
    today: z3.ArithRef


class Evaluator:
    """Expressions of the verified IR as Values, under a path condition (`guard`): the rule
    errors met are recorded with the condition under which the runtime meets them."""

    def __init__(self, functions: Functions, errors: list[RuleError], source: str) -> None:
        self.functions = functions
        self.errors = errors
        self.source = source
        self.locals: dict[str, Any] = {}
        self.guard: z3.BoolRef = TRUE
        #: Facts the uninterpreted functions used here must satisfy (added to the solver).
        self.axioms: list[z3.BoolRef] = []

    def error(self, code: str, node: ir.Node, when: z3.BoolRef) -> None:
        self.errors.append(
            RuleError(code, tuple(getattr(node, "span", ())), And(self.guard, when), self.source)
        )

    def under(self, condition: z3.BoolRef) -> _Guarded:
        return _Guarded(self, condition)

    def condition(self, node: ir.Expression, env: Env) -> z3.BoolRef:
        """True exactly when the runtime's `is True` holds (missing counts as false)."""
        value = self.value(node, env)
        return And(value.defined, value.term)

    def value(self, node: ir.Expression, env: Env) -> Value:
        result = self.evaluate(node, env)
        if not isinstance(result, Value):
            raise Unsupported(f"{type(node).__name__} used as a plain value")
        return result

    def evaluate(self, node: ir.Expression, env: Env) -> Any:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            raise Unsupported(f"the expression {type(node).__name__}")
        return method(node, env)

    # leaves

    def visit_Literal(self, node: ir.Literal, env: Env) -> Any:
        return to_term(node.value, node.type)

    def visit_ListLiteral(self, node: ir.ListLiteral, env: Env) -> Any:
        values = [self.value(item, env) for item in node.items]
        return Items([(v.defined, v) for v in values])

    def visit_Variable(self, node: ir.Variable, env: Env) -> Any:
        return env.vars[node.name]

    def visit_InputValue(self, node: ir.InputValue, env: Env) -> Any:
        return env.inputs(node.name)

    def visit_ProductField(self, node: ir.ProductField, env: Env) -> Any:
        return env.product(node.name)

    def visit_ConsumerField(self, node: ir.ConsumerField, env: Env) -> Any:
        return env.consumer(node.name)

    def visit_ImageValue(self, node: ir.ImageValue, env: Env) -> Any:
        return env.images[node.name]

    def visit_Images(self, node: ir.Images, env: Env) -> Any:
        return env.image_list

    def visit_Damages(self, node: ir.Damages, env: Env) -> Any:
        return env.damages

    def visit_Validations(self, node: ir.Validations, env: Env) -> Any:
        return env.validations

    def visit_CheckValue(self, node: ir.CheckValue, env: Env) -> Any:
        return known(env.checks[node.name])

    def visit_EventSubject(self, node: ir.EventSubject, env: Env) -> Any:
        found = env.event.get(node.name)
        if found is None:
            return missing(node.type) if node.type in SORTS else None
        return found

    def visit_Local(self, node: ir.Local, env: Env) -> Any:
        return self.locals[node.name]

    def visit_Now(self, node: ir.Now, env: Env) -> Any:
        return known(env.today)

    def visit_RecordField(self, node: ir.RecordField, env: Env) -> Any:
        record = self.evaluate(node.value, env)
        if record is None:
            return missing(node.type) if node.type in SORTS else None
        if not isinstance(record, dict):
            raise Unsupported(f"the field {node.name} of a {node.value.type}")
        found = record.get(node.name)
        if found is None:
            if node.type in SORTS:
                return missing(node.type)
            raise Unsupported(f"the field {node.name}")
        exists = record.get("__exists__", TRUE)
        if isinstance(found, Value):
            return Value(And(exists, found.defined), found.term)
        return found

    # operators

    def visit_Unary(self, node: ir.Unary, env: Env) -> Any:
        operand = self.value(node.operand, env)
        if node.operator == "not":
            return Value(operand.defined, Not(operand.term))
        return self.number(node, Value(operand.defined, -operand.term))

    def visit_Binary(self, node: ir.Binary, env: Env) -> Any:
        operator = node.operator
        if operator in ("and", "or"):
            left = self.value(node.left, env)
            stop = And(left.defined, left.term if operator == "or" else Not(left.term))
            with self.under(Not(stop)):
                right = self.value(node.right, env)
            return three_valued(operator, left, right)
        left_any = self.evaluate(node.left, env)
        right_any = self.evaluate(node.right, env)
        if operator == "in":
            return self.membership(left_any, right_any)
        if isinstance(left_any, Items) or isinstance(right_any, Items):
            if operator in ("=", "!="):
                equal = lists_equal(left_any, right_any)
                return known(equal if operator == "=" else Not(equal))
            raise Unsupported(f"{operator} of lists")
        left, right = left_any, right_any
        if operator in ("=", "!="):
            both = And(left.defined, right.defined)
            equal = Or(
                And(Not(left.defined), Not(right.defined)),
                And(both, left.term == right.term),
            )
            return known(equal if operator == "=" else Not(equal))
        defined = And(left.defined, right.defined)
        a, b = left.term, right.term
        if operator in ("<", "<=", ">", ">="):
            return Value(defined, compare(operator, a, b))
        if node.type == "text":
            joined = z3.Concat(a, b)
            long = z3.Length(joined) > MAX_TEXT
            self.error("text_too_long", node, And(defined, long))
            return Value(And(defined, Not(long)), joined)
        if operator == "/":
            zero = b == 0
            self.error("division_by_zero", node, And(defined, zero))
            return self.number(node, Value(And(defined, Not(zero)), linear_quotient(a, b)))
        if operator == "*":
            return self.number(node, Value(defined, linear_product(a, b)))
        term = {"+": lambda: a + b, "-": lambda: a - b}[operator]()
        return self.number(node, Value(defined, term))

    def number(self, node: ir.Node, value: Value) -> Value:
        """`check_number`: beyond the number range is missing and `number_too_large`."""
        large = Or(value.term > MAX_NUMBER, value.term < -MAX_NUMBER)
        self.error("number_too_large", node, And(value.defined, large))
        return Value(And(value.defined, Not(large)), value.term)

    def membership(self, item: Any, container: Any) -> Value:
        if isinstance(container, Items) and isinstance(item, Value):
            found = Or(
                FALSE,
                *[
                    And(present, other.defined, other.term == item.term)
                    for present, other in container.items
                ],
            )
            return Value(And(item.defined, container.defined), found)
        if isinstance(container, Value) and isinstance(item, Value):
            return Value(
                And(item.defined, container.defined), z3.Contains(container.term, item.term)
            )
        raise Unsupported("`in` of records")

    def visit_Conditional(self, node: ir.Conditional, env: Env) -> Any:
        chosen = self.condition(node.condition, env)
        with self.under(chosen):
            then = self.evaluate(node.then, env)
        with self.under(Not(chosen)):
            otherwise = self.evaluate(node.otherwise, env)
        return ite(chosen, then, otherwise)

    # quantifiers

    def over(self, node: ir.Quantifier, env: Env) -> Items:
        found = self.evaluate(node.collection, env)
        if not isinstance(found, Items):
            raise Unsupported("a quantifier over something that is not a list")
        return found

    def body(self, node: ir.Quantifier, env: Env, present: z3.BoolRef, item: Any) -> Any:
        if node.body is None:
            return item if isinstance(node, ir.SumOf) else known(TRUE)
        saved = dict(self.locals)
        if node.variable is not None:
            self.locals[node.variable] = item
        try:
            with self.under(present):
                return self.evaluate(node.body, env)
        finally:
            self.locals = saved

    def present_items(self, items: Items) -> Iterator[tuple[z3.BoolRef, Any]]:
        """The items the runtime iterates: present and not missing."""
        for present, item in items.items:
            if isinstance(item, Value):
                yield And(present, item.defined), item
            else:
                yield And(present, item.get("__exists__", TRUE)), item

    def visit_CountOf(self, node: ir.CountOf, env: Env) -> Any:
        items = self.over(node, env)
        total: z3.ArithRef = z3.RealVal(0)
        for present, item in self.present_items(items):
            body = self.body(node, env, present, item)
            total = total + z3.If(And(present, body.defined, body.term), 1, 0)
        return Value(items.defined, total)

    def visit_AnyOf(self, node: ir.AnyOf, env: Env) -> Any:
        items = self.over(node, env)
        cases = []
        for present, item in self.present_items(items):
            body = self.body(node, env, present, item)
            cases.append(And(present, body.defined, body.term))
        return Value(items.defined, Or(FALSE, *cases))

    def visit_AllOf(self, node: ir.AllOf, env: Env) -> Any:
        items = self.over(node, env)
        cases = []
        for present, item in self.present_items(items):
            body = self.body(node, env, present, item)
            cases.append(z3.Implies(present, And(body.defined, body.term)))
        return Value(items.defined, And(TRUE, *cases))

    def visit_SumOf(self, node: ir.SumOf, env: Env) -> Any:
        items = self.over(node, env)
        total: z3.ArithRef = z3.RealVal(0)
        for present, item in self.present_items(items):
            body = self.body(node, env, present, item)
            total = total + z3.If(And(present, body.defined), body.term, 0)
        return self.number(node, Value(items.defined, total))

    def visit_FilterOf(self, node: ir.FilterOf, env: Env) -> Any:
        items = self.over(node, env)
        kept = []
        for present, item in self.present_items(items):
            body = self.body(node, env, present, item)
            kept.append((And(present, body.defined, body.term), item))
        return Items(kept, items.defined)

    def visit_MapOf(self, node: ir.MapOf, env: Env) -> Any:
        items = self.over(node, env)
        mapped = []
        for present, item in self.present_items(items):
            body = self.body(node, env, present, item)
            if not isinstance(body, Value):
                raise Unsupported("a map to records")
            mapped.append((And(present, body.defined), body))
        return Items(mapped, items.defined)

    # the library

    def visit_Call(self, node: ir.Call, env: Env) -> Any:
        name = node.function
        if name == "today":
            return known(env.today)
        args = [self.evaluate(arg, env) for arg in node.arguments]
        exact = getattr(self, f"call_{name}", None)
        if exact is not None:
            found = exact(node, args)
            if found is not None:
                return found
        if any(not isinstance(a, Value) for a in args):
            raise Unsupported(f"{name}() of a list")
        return self.library(node, args)

    def library(self, node: ir.Call, args: list[Value]) -> Value:
        """A function of the runtime's library on constants where the arguments are a few
        constants, else uninterpreted (learned lazily)."""
        types = [a.type for a in node.arguments]
        if any(t not in SORTS for t in types) or node.type not in SORTS:
            raise Unsupported(f"{node.function}() on these types")
        split = [constant_cases(a.term) for a in args]
        if all(s is not None for s in split) and _product_size(split) <= MAX_CASES:
            result: Value | None = None
            for combination in itertools.product(*[s for s in split if s is not None]):
                condition = And(TRUE, *[c for c, _ in combination])
                python = [to_python(t, ty) for (_, t), ty in zip(combination, types, strict=True)]
                errors: list[dict[str, Any]] = []
                value = FUNCTIONS[node.function](errors, node.span, *python)
                defined_args = And(*[a.defined for a in args]) if args else TRUE
                for item in errors:
                    self.error(str(item["code"]), node, And(condition, defined_args))
                if node.function == "number" and value is None and python and python[0] is not None:
                    self.error("number_of_text", node, And(condition, defined_args))
                case = to_term(value, node.type)
                if node.function != "defined":
                    case = Value(And(defined_args, case.defined), case.term)
                result = case if result is None else ite(condition, case, result)
            assert result is not None
            return result
        result = self.functions.apply(node.function, args, types, node.type)
        if node.type == "text":
            # `check_text`: a text result is never longer than the limit; `text` of a number
            # or a date is short.
            bound = 40 if node.function == "text" and types[0] != "text" else MAX_TEXT
            self.functions_axiom(z3.Length(result.term) <= bound)
        if node.function == "trim":
            # `str.strip` only removes: never longer than its text.
            self.functions_axiom(z3.Length(result.term) <= z3.Length(args[0].term))
        if node.function == "years_between":
            self.functions_axiom(years_axiom(args[0].term, args[1].term, result.term))
        return result

    def functions_axiom(self, fact: z3.BoolRef) -> None:
        self.axioms.append(fact)

    def call_defined(self, node: ir.Call, args: list[Any]) -> Value | None:
        value = args[0]
        return known(value.defined)

    def call_abs(self, node: ir.Call, args: list[Any]) -> Value | None:
        a = args[0]
        return Value(a.defined, z3.If(a.term < 0, -a.term, a.term))

    def call_floor(self, node: ir.Call, args: list[Any]) -> Value | None:
        a = args[0]
        return Value(a.defined, z3.ToReal(z3.ToInt(a.term)))

    def call_round(self, node: ir.Call, args: list[Any]) -> Value | None:
        if len(args) == 2:
            digits = constant_cases(args[1].term)
            if not (digits and len(digits) == 1 and to_python(digits[0][1], "number") == 0):
                return None
        a = args[0]
        if constant_cases(a.term) is not None:
            return None
        half = a.term + z3.RealVal(Fraction(1, 2))
        floor = z3.ToInt(half)
        tie = z3.IsInt(half)
        even = z3.If(And(tie, floor % 2 == 1), floor - 1, floor)
        defined = And(*[x.defined for x in args])
        return self.number(node, Value(defined, z3.ToReal(even)))

    def call_mod(self, node: ir.Call, args: list[Any]) -> Value | None:
        a, b = args
        defined = And(a.defined, b.defined)
        zero = b.term == 0
        self.error("division_by_zero", node, And(defined, zero))
        quotient = z3.ToReal(z3.ToInt(a.term / b.term))
        return Value(And(defined, Not(zero)), a.term - b.term * quotient)

    def _extreme(self, node: ir.Call, args: list[Any], smaller: bool) -> Value | None:
        if len(args) == 1 and isinstance(args[0], Items):
            best: Value = missing(node.type)
            for present, item in args[0].items:
                here = And(present, item.defined)
                better = compare("<" if smaller else ">", item.term, best.term)
                take = And(here, Or(Not(best.defined), better))
                best = Value(Or(best.defined, here), z3.If(take, item.term, best.term))
            return Value(And(args[0].defined, best.defined), best.term)
        if any(not isinstance(a, Value) for a in args):
            return None
        term = args[0].term
        for other in args[1:]:
            better = compare("<" if smaller else ">", other.term, term)
            term = z3.If(better, other.term, term)
        return Value(And(*[a.defined for a in args]), term)

    def call_min(self, node: ir.Call, args: list[Any]) -> Value | None:
        return self._extreme(node, args, smaller=True)

    def call_max(self, node: ir.Call, args: list[Any]) -> Value | None:
        return self._extreme(node, args, smaller=False)

    def call_length(self, node: ir.Call, args: list[Any]) -> Value | None:
        a = args[0]
        if isinstance(a, Value) and a.digits is not None:
            return Value(a.defined, z3.RealVal(len(a.digits)))
        if isinstance(a, Items):
            count = z3.Sum([z3.If(p, 1, 0) for p, _ in a.items]) if a.items else z3.IntVal(0)
            return Value(a.defined, z3.ToReal(count))
        if constant_cases(a.term) is not None:
            return None
        return Value(a.defined, z3.ToReal(z3.Length(a.term)))

    def call_contains(self, node: ir.Call, args: list[Any]) -> Value | None:
        container, item = args
        if isinstance(container, Items):
            return self.membership(item, container)
        atom = z3.Contains(container.term, item.term)
        digits = (container.digits or ()) + (item.digits or ())
        if digits:
            atom = self.functions.defer(atom, digits)
        return Value(And(container.defined, item.defined), atom)

    def _digits_affix(self, text: Value, affix: Value, start: bool) -> Value | None:
        """`starts_with`/`ends_with` of a text of digits and a constant."""
        cases = constant_cases(affix.term)
        if text.digits is None or cases is None or len(cases) != 1:
            return None
        written = to_python(cases[0][1], "text")
        if len(written) > len(text.digits) or not all(c in "0123456789" for c in written):
            return Value(And(text.defined, affix.defined), FALSE)
        size = len(written)
        part = text.digits[:size] if start else text.digits[len(text.digits) - size :]
        same = And(TRUE, *[d == int(c) for d, c in zip(part, written, strict=True)])
        return Value(And(text.defined, affix.defined), same)

    def call_matches(self, node: ir.Call, args: list[Any]) -> Value | None:
        """`matches` of a text of digits and a constant pattern: decided once for every text of
        that many digits when all or none match; else the pattern's language."""
        text, pattern = args
        cases = constant_cases(pattern.term)
        if text.digits is None or cases is None or len(cases) != 1:
            return None
        written = to_python(cases[0][1], "text")
        from inspectlang.patterns import compiled_pattern

        language = pattern_language(written) if compiled_pattern(written) is not None else None
        if language is None:
            return None
        defined = And(text.defined, pattern.defined)
        every = _digits_all_match(written, len(text.digits))
        if every is not None:
            return Value(defined, TRUE if every else FALSE)
        return Value(defined, z3.InRe(text.term, language))

    def call_starts_with(self, node: ir.Call, args: list[Any]) -> Value | None:
        text, prefix = args
        found = self._digits_affix(text, prefix, start=True)
        if found is not None:
            return found
        return Value(And(text.defined, prefix.defined), z3.PrefixOf(prefix.term, text.term))

    def call_ends_with(self, node: ir.Call, args: list[Any]) -> Value | None:
        text, suffix = args
        found = self._digits_affix(text, suffix, start=False)
        if found is not None:
            return found
        return Value(And(text.defined, suffix.defined), z3.SuffixOf(suffix.term, text.term))

    def call_days_between(self, node: ir.Call, args: list[Any]) -> Value | None:
        a, b = args
        return Value(And(a.defined, b.defined), z3.ToReal(b.term - a.term))

    def call_add_days(self, node: ir.Call, args: list[Any]) -> Value | None:
        day, count = args
        whole = z3.If(count.term >= 0, z3.ToInt(count.term), -z3.ToInt(-count.term))
        result = day.term + whole
        inside = And(result >= 1, result <= dt.date.max.toordinal())
        return Value(And(day.defined, count.defined, inside), result)

    def call_number(self, node: ir.Call, args: list[Any]) -> Value | None:
        a = args[0]
        if node.arguments[0].type == "boolean":
            return Value(a.defined, z3.If(a.term, z3.RealVal(1), z3.RealVal(0)))
        if a.digits is not None:
            if not a.digits:
                self.error("number_of_text", node, a.defined)
                return missing("number")
            return self.number(node, Value(a.defined, digits_value(a.digits)))
        if constant_cases(a.term) is not None:
            return None
        # Whether the text writes a number is exact (`runtime.values._DECIMAL` around spaces);
        # a text of digits is its integer; other values are learned lazily.
        writes = z3.InRe(a.term, decimal_language())
        digits = z3.InRe(a.term, z3.Plus(z3.Range("0", "9")))
        learned = self.functions.apply("number", [a], ["text"], "number")
        value = z3.If(digits, z3.ToReal(z3.StrToInt(a.term)), learned.term)
        self.error("number_of_text", node, And(a.defined, Not(writes)))
        return self.number(node, Value(And(a.defined, writes), value))

    def call_substring(self, node: ir.Call, args: list[Any]) -> Value | None:
        text, *bounds = args
        positions = [constant_cases(b.term) for b in bounds]
        if text.digits is not None and all(p is not None and len(p) == 1 for p in positions):
            # Python's slice of the text is the slice of its digits, negative positions too.
            at = [to_python(p[0][1], "number") for p in positions if p is not None]
            if all(isinstance(x, int) for x in at):
                part = text.digits[slice(*at) if len(at) == 2 else slice(at[0], None)]
                defined = And(*[a.defined for a in args])
                return Value(defined, digit_text(part), part)
        if constant_cases(text.term) is not None or any(
            p is None or len(p) != 1 for p in positions
        ):
            return None
        first, *last = [to_python(p[0][1], "number") for p in positions if p is not None]
        if (
            not isinstance(first, int)
            or first < 0
            or any(not isinstance(x, int) or x < first for x in last)
        ):
            return None
        length = (last[0] - first) if last else MAX_TEXT
        defined = And(*[a.defined for a in args])
        return Value(defined, z3.SubString(text.term, first, length))


class _Guarded:
    def __init__(self, evaluator: Evaluator, condition: z3.BoolRef) -> None:
        self.evaluator = evaluator
        self.condition = condition
        self.saved: z3.BoolRef = TRUE

    def __enter__(self) -> None:
        self.saved = self.evaluator.guard
        self.evaluator.guard = And(self.saved, self.condition)

    def __exit__(self, *exc: object) -> None:
        self.evaluator.guard = self.saved


@functools.lru_cache(maxsize=256)
def _digits_all_match(pattern: str, size: int) -> bool | None:
    """True when `pattern` matches every text of `size` digits, False when none, else None.
    Cached: a check read after every step asked the same two questions each time (34 of them
    for used_phone_resale)."""
    language = pattern_language(pattern)
    if language is None:
        return None
    probe = z3.Solver()
    probe.set("timeout", 500)
    sample = z3.String("digits")
    shape = z3.InRe(sample, z3.Loop(z3.Range("0", "9"), size, size))
    if probe.check(shape, Not(z3.InRe(sample, language))) == z3.unsat:
        return True
    if probe.check(shape, z3.InRe(sample, language)) == z3.unsat:
        return False
    return None


def _product_size(split: list[Any]) -> int:
    size = 1
    for cases in split:
        size *= len(cases)
    return size


def three_valued(operator: str, left: Value, right: Value) -> Value:
    """SQL/Kleene `and`/`or`, as `ReferenceEvaluator.visit_Binary`."""
    lt, lf = And(left.defined, left.term), And(left.defined, Not(left.term))
    rt, rf = And(right.defined, right.term), And(right.defined, Not(right.term))
    if operator == "and":
        true, false = And(lt, rt), Or(lf, rf)
    else:
        true, false = Or(lt, rt), And(lf, rf)
    return Value(Or(true, false), true)


def compare(operator: str, a: z3.ExprRef, b: z3.ExprRef) -> z3.BoolRef:
    if a.sort() == z3.StringSort():
        less = {"<": (a, b), "<=": (a, b), ">": (b, a), ">=": (b, a)}[operator]
        if operator in ("<", ">"):
            return z3.BoolRef(
                z3.Z3_mk_str_lt(a.ctx_ref(), less[0].as_ast(), less[1].as_ast()), a.ctx
            )
        return z3.BoolRef(z3.Z3_mk_str_le(a.ctx_ref(), less[0].as_ast(), less[1].as_ast()), a.ctx)
    return {
        "<": lambda: a < b,
        "<=": lambda: a <= b,
        ">": lambda: a > b,
        ">=": lambda: a >= b,
    }[operator]()


def lists_equal(left: Any, right: Any) -> z3.BoolRef:
    """`=` of two lists: both missing, or the same items in order (missing items left out of
    neither: the runtime compares the Python lists as they are)."""
    if not (isinstance(left, Items) and isinstance(right, Items)):
        raise Unsupported("= of a list and a value")
    if not all(isinstance(i, Value) for _, i in left.items + right.items):
        raise Unsupported("= of lists of records")

    # Equal lists: same count, and the k-th present item of each equal. With up to a few
    # dozen items (literals, multiselects) the positions are enumerated.
    def position(items: Items, index: int) -> tuple[z3.BoolRef, z3.ExprRef]:
        term: z3.ExprRef = default("text")
        found = FALSE
        for k, (present, item) in enumerate(items.items):
            before = z3.Sum([z3.If(p, 1, 0) for p, _ in items.items[:k]]) if k else z3.IntVal(0)
            here = And(present, before == index)
            term = (
                z3.If(here, item.term, term)
                if found is not FALSE
                else z3.If(here, item.term, item.term)
            )
            found = Or(found, here)
        return found, term

    count_left = z3.Sum([z3.If(p, 1, 0) for p, _ in left.items]) if left.items else z3.IntVal(0)
    count_right = z3.Sum([z3.If(p, 1, 0) for p, _ in right.items]) if right.items else z3.IntVal(0)
    same = [count_left == count_right]
    for index in range(max(len(left.items), len(right.items))):
        has_left, at_left = position(left, index)
        has_right, at_right = position(right, index)
        same.append(z3.Implies(And(has_left, has_right), at_left == at_right))
    both_defined = And(left.defined, right.defined, *same)
    return Or(And(Not(left.defined), Not(right.defined)), both_defined)


def finite_values(term: z3.ExprRef, limit: int = MAX_CASES) -> list[Fraction] | None:
    """Every value a numeric term can take, when it is built from constants by `If`, `+`, `-`,
    `*` and counts (`If(p, 1, 0)`), at most `limit` of them; None otherwise. A superset is
    sound: a product by the term is then a choice among constant products."""

    def combine(
        parts: list[list[Fraction]], join: Callable[[Fraction, Fraction], Fraction]
    ) -> list[Fraction] | None:
        found = parts[0]
        for part in parts[1:]:
            if len(found) * len(part) > limit * limit:
                return None
            found = sorted({join(x, y) for x in found for y in part})
            if len(found) > limit:
                return None
        return found

    def walk(t: z3.ExprRef) -> list[Fraction] | None:
        if z3.is_rational_value(t) or z3.is_int_value(t):
            return [Fraction(t.as_fraction() if z3.is_rational_value(t) else t.as_long())]
        if z3.is_app_of(t, z3.Z3_OP_ITE):
            left, right = walk(t.arg(1)), walk(t.arg(2))
            if left is None or right is None:
                return None
            both = sorted(set(left) | set(right))
            return both if len(both) <= limit else None
        if z3.is_app_of(t, z3.Z3_OP_TO_REAL) or z3.is_app_of(t, z3.Z3_OP_TO_INT):
            inner = walk(t.arg(0))
            if inner is None or z3.is_app_of(t, z3.Z3_OP_TO_REAL):
                return inner
            return sorted({Fraction(x.numerator // x.denominator) for x in inner})
        if z3.is_app_of(t, z3.Z3_OP_UMINUS):
            inner = walk(t.arg(0))
            return None if inner is None else sorted({-x for x in inner})
        joins: dict[int, Callable[[Fraction, Fraction], Fraction]] = {
            z3.Z3_OP_ADD: lambda x, y: x + y,
            z3.Z3_OP_SUB: lambda x, y: x - y,
            z3.Z3_OP_MUL: lambda x, y: x * y,
        }
        for op, join in joins.items():
            if z3.is_app_of(t, op):
                parts = [walk(c) for c in t.children()]
                if any(p is None for p in parts):
                    return None
                return combine([p for p in parts if p is not None], join)
        return None

    return walk(term)


def _by_cases(factor: z3.ExprRef, values: list[Fraction], each: Callable[[Any], Any]) -> Any:
    """`each(v)` for the value v the factor takes (the last case without a test: the factor
    takes one of the values)."""
    result = each(z3.RealVal(values[-1]))
    for value in reversed(values[:-1]):
        result = z3.If(factor == z3.RealVal(value), each(z3.RealVal(value)), result)
    return result


def linear_product(a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
    """`a * b`, linear where a factor takes a few values (a price times a deduction of a few
    steps): nonlinear arithmetic made z3 give up within the time limit."""
    if constant_cases(a) is None and constant_cases(b) is None:
        values = finite_values(b)
        if values is not None:
            return _by_cases(b, values, lambda v: a * v)
        values = finite_values(a)
        if values is not None:
            return _by_cases(a, values, lambda v: v * b)
    return a * b


def linear_quotient(a: z3.ExprRef, b: z3.ExprRef) -> z3.ExprRef:
    """`a / b`, linear where the divisor takes a few values (never read when it is 0)."""
    if constant_cases(b) is None:
        values = finite_values(b)
        if values is not None:
            nonzero = [v for v in values if v != 0] or [Fraction(1)]
            return _by_cases(b, nonzero, lambda v: a / v)
    return a / b


def years_axiom(first: z3.ExprRef, second: z3.ExprRef, years: z3.ExprRef) -> z3.BoolRef:
    """What whole years between two dates must be, whatever the calendar: a year is 365 or 366
    days, so `years` lies between (days - 366) / 366 and days / 365 + 1, roughly; stated
    loosely enough to hold for every pair (the runtime's exact values are learned lazily)."""
    days = z3.ToReal(second - first)
    return And(
        z3.IsInt(years),
        days >= 366 * years - 366,
        days <= 366 * years + 366,
        days >= 365 * years - 366,
        days <= 365 * years + 366,
    )


def decimal_language() -> z3.ReRef:
    """The texts `number()` reads (`runtime.values._DECIMAL`, spaces around ignored)."""
    digit = z3.Range("0", "9")
    space = z3.Star(z3.Union(*[z3.Re(z3.StringVal(c)) for c in " \t\n\r\x0b\x0c"]))
    sign = z3.Option(z3.Union(z3.Re("+"), z3.Re("-")))
    point = z3.Re(".")
    body = z3.Union(
        z3.Concat(z3.Plus(digit), z3.Option(z3.Concat(point, z3.Star(digit)))),
        z3.Concat(point, z3.Plus(digit)),
    )
    return z3.Concat(space, sign, body, space)


def file_name(media_types: list[str] | None) -> str:
    """A file name the media types accept (`runtime.intake` reads its extension)."""
    import mimetypes

    for media_type in media_types or []:
        extension = mimetypes.guess_extension(media_type)
        if extension:
            return f"evidence{extension}"
    return "evidence.pdf"


def pattern_language(pattern: str) -> z3.ReRef | None:
    """The texts `pattern_search(pattern, text)` accepts, as a z3 regular expression, for the
    patterns of literals, classes, repeats, groups and alternatives; None for anything else
    (the input is then left free, and a replay the runtime refuses is `unknown`)."""
    try:
        parsed = sre.parse(pattern)
    except Exception:  # a pattern the checker let through but `re` refuses
        return None
    anywhere = z3.Full(z3.ReSort(z3.StringSort()))

    def char_range(low: int, high: int) -> z3.ReRef:
        return z3.Range(chr(low), chr(high))

    def convert(items: Any) -> z3.ReRef | None:
        parts: list[z3.ReRef] = []
        for op, arg in items:
            name = str(op)
            if name == "LITERAL":
                parts.append(z3.Re(z3.StringVal(chr(arg))))
            elif name == "ANY":
                parts.append(z3.AllChar(z3.ReSort(z3.StringSort())))
            elif name == "IN":
                options: list[z3.ReRef] = []
                for kind, value in arg:
                    if str(kind) == "LITERAL":
                        options.append(z3.Re(z3.StringVal(chr(value))))
                    elif str(kind) == "RANGE":
                        options.append(char_range(*value))
                    elif str(kind) == "CATEGORY" and str(value) == "CATEGORY_DIGIT":
                        options.append(char_range(48, 57))
                    else:
                        return None
                parts.append(options[0] if len(options) == 1 else z3.Union(*options))
            elif name in ("MAX_REPEAT", "MIN_REPEAT"):
                low, high, sub = arg
                inner = convert(sub)
                if inner is None:
                    return None
                if high == sre.MAXREPEAT:
                    parts.append(
                        z3.Concat(*([inner] * low), z3.Star(inner)) if low else z3.Star(inner)
                    )
                else:
                    parts.append(z3.Loop(inner, low, high))
            elif name == "SUBPATTERN":
                inner = convert(arg[-1])
                if inner is None:
                    return None
                parts.append(inner)
            elif name == "BRANCH":
                branches = [convert(b) for b in arg[1]]
                if any(b is None for b in branches):
                    return None
                parts.append(z3.Union(*branches))
            elif name == "AT" and str(arg) in (
                "AT_BEGINNING",
                "AT_END",
                "AT_BEGINNING_STRING",
                "AT_END_STRING",
            ):
                parts.append(z3.Re(z3.StringVal("")))
            else:
                return None
        if not parts:
            return z3.Re(z3.StringVal(""))
        return parts[0] if len(parts) == 1 else z3.Concat(*parts)

    items = list(parsed)
    starts = (
        bool(items) and str(items[0][0]) == "AT" and str(items[0][1]).startswith("AT_BEGINNING")
    )
    ends = bool(items) and str(items[-1][0]) == "AT" and str(items[-1][1]).startswith("AT_END")
    body = convert(items)
    if body is None:
        return None
    return (
        z3.Concat(*([] if starts else [anywhere]), body, *([] if ends else [anywhere]))
        if not (starts and ends)
        else body
    )


# -- the scenario ---------------------------------------------------------------------------------


@dataclass
class ValidationLeaf:
    """One validation of one template photo in the scenario."""

    name: str
    run: bool
    required: bool
    local: bool
    threshold: float
    review_below: float | None
    reported: z3.BoolRef
    confidence: z3.ArithRef
    valid: z3.BoolRef
    result: Value
    #: The damages a `damage` result reports (when the template reads damages).
    damages: list[DamageLeaf] = field(default_factory=list)


@dataclass
class ImageLeaf:
    identifier: str
    name: str
    side: str
    optional: bool
    uploaded: z3.BoolRef
    validations: list[ValidationLeaf]
    #: The retake: an earlier upload of the same photo, refused, before this one (the leaves of
    #: its validations); None when the scenario does not model one for this photo.
    first: list[ValidationLeaf] | None = None
    retaken: z3.BoolRef = FALSE


@dataclass
class DamageLeaf:
    present: z3.BoolRef
    part: z3.SeqRef
    damage: z3.SeqRef
    severity: z3.SeqRef
    percentage: Value
    declared: bool

    def record(self) -> dict[str, Any]:
        return {
            "part": known(self.part),
            "damage": known(self.damage),
            "severity": known(self.severity),
            "percentage": self.percentage,
            "declared": known(z3.BoolVal(self.declared)),
        }


@dataclass
class InputLeaf:
    spec: InputSpec
    name: str
    given: z3.BoolRef
    #: numeric: Real; text: String; date: Int; check: Bool; select: Int (option index);
    #: multiselect: one Bool per option.
    raw: Any
    value: Any
    #: Given at the scenario's update rather than at the create (FALSE where its moment
    #: changes nothing the template reads, `late_inputs`).
    late: z3.BoolRef = FALSE


@dataclass
class FieldLeaf:
    given: z3.BoolRef
    term: z3.ExprRef
    type: str


@dataclass(frozen=True)
class Place:
    """A place the scenario's update may come at: before the start, before an upload of photo
    `image` (`first`: before its refused first upload), before the declared damages, or before
    the finish."""

    before: str
    image: int = -1
    first: bool = False


@dataclass
class Step:
    """One event of the scenario: when it happens, and the triggers it fires."""

    kind: str
    happens: z3.BoolRef
    triggers: list[tuple[str, z3.BoolRef, dict[str, Any], dict[str, str]]]
    image: int | None = None
    validation: int | None = None
    damage: int | None = None
    #: The step belongs to the refused first upload of a retaken photo.
    first: bool = False
    #: How many of the update's possible places come before the step (the update's own place
    #: included): its inputs are those given at the create, and the update's when it came.
    moment: int = 0
    #: An update step's place.
    place: Place | None = None


@dataclass
class Outcome:
    """What the scenario ends in, as formulas."""

    blocked: z3.BoolRef
    review: z3.BoolRef
    approved: z3.BoolRef
    disapproved: z3.BoolRef
    missing_photo: z3.BoolRef
    #: A required input asked at the finish was never given (`Scenario._missing_inputs`).
    missing_input: z3.BoolRef
    unreported_required: z3.BoolRef
    #: A photo the template requires was uploaded and refused (a required validation failed).
    refused_photo: z3.BoolRef
    #: Each disapprove line: (holds, its condition defined).
    disapprove_lines: list[tuple[z3.BoolRef, z3.BoolRef]]
    #: Each review line: (holds, its condition defined).
    review_lines: list[tuple[z3.BoolRef, z3.BoolRef]]
    #: The approval line: (holds, defined); None when the template has none.
    approve_line: tuple[z3.BoolRef, z3.BoolRef] | None
    #: No disapproval held and the approval did not: the `otherwise` reason.
    otherwise: z3.BoolRef
    #: Every `if` of every rule: (rule index, span, branch) -> taken at some event.
    branches: dict[tuple[int, tuple[int, ...], str], z3.BoolRef]
    errors: list[RuleError]


class Scenario:
    """The leaves of one symbolic inspection of `program` and what it ends in."""

    def __init__(
        self,
        program: Program,
        functions: Functions | None = None,
        prefix: str = "",
        shared: Scenario | None = None,
        late: frozenset[str] | None = None,
    ) -> None:
        self.program = program
        self.manifest = program.manifest
        self.functions = functions or Functions()
        self.prefix = prefix
        self.shared = shared
        self.constraints: list[z3.BoolRef] = []
        #: Constraints only the runtime's own simulation needs to realize a model (photos
        #: simulate can draw, fixed e-mail addresses): tried first, dropped when they make a
        #: question unsatisfiable (then the answer is only as good as its replay).
        self.realizable: list[z3.BoolRef] = []
        self.errors: list[RuleError] = []
        self.axioms: list[z3.BoolRef] = []
        self.inputs: dict[str, InputLeaf] = shared.inputs if shared else {}
        #: The date inputs this run has read, and the (later, earlier) identifier pairs of
        #: the template's date orders (`validationSchema.notBefore` / `notAfter`).
        self.dates: dict[str, InputLeaf] = {}
        #: The date orders between the dates this run read, as the runtime's intake enforces
        #: them: facts for `verify`; for `diff`, what each revision accepts (`accepted`), since
        #: an inspection one revision refuses at intake may be one the other approves.
        self.intake: list[z3.BoolRef] = []
        self.date_orders = [
            pair
            for spec in self.manifest.inputs
            for pair in [
                *((spec.identifier, o) for o in spec.validationSchema.notBefore or ()),
                *((o, spec.identifier) for o in spec.validationSchema.notAfter or ()),
            ]
        ]
        self.product: dict[str, FieldLeaf] = shared.product if shared else {}
        self.consumer: dict[str, FieldLeaf] = shared.consumer if shared else {}
        self.today: Any = shared.today if shared else z3.Int(f"{prefix}today")
        #: The names of the inputs the scenario may give at its update (`late_inputs`; `diff`
        #: passes both revisions' together).
        self.late = late_inputs(program) if late is None else late
        #: The update's possible places in event order, each with the leaf saying it comes
        #: there (named by what it precedes: two revisions share the places they both have).
        self.places: list[tuple[Place, z3.BoolRef]] = []
        if not shared:
            self.constraints += [
                self.today >= dt.date(YEARS[0], 1, 1).toordinal(),
                self.today <= dt.date(YEARS[1], 12, 31).toordinal(),
            ]
        self.reads_damages = _reads(program, _damage_node)
        #: Checks are recomputed after every event only when a rule reads one; else only
        #: their values at the finish matter.
        self._rules_read_checks = _reads(
            program, lambda n: isinstance(n, ir.CheckValue), rules_only=True
        )
        self._reads_attempts = _reads(
            program, lambda n: isinstance(n, ir.RecordField) and n.name == "attempts"
        )
        self.images = self._images()
        self.declared = self._declared()
        self.outcome = self._run()

    # -- leaves ---------------------------------------------------------------------------------

    def name(self, text: str) -> str:
        return f"{self.prefix}{text}"

    def input_leaf(self, identifier: str) -> InputLeaf:
        """The scenario's value of an input (shared by name between two revisions)."""
        spec = self.program.input_spec(identifier)
        assert spec is not None
        logic = self.manifest.logic.inputs.get(identifier)
        name = logic.name if logic is not None else identifier
        key = f"{name}:{spec.type}"
        if key in self.inputs:
            return self._ordered(identifier, self.inputs[key])
        given = z3.Bool(f"input.{name}?")
        late = z3.Bool(f"input.{name}.late") if name in self.late else FALSE
        if not z3.is_false(late):
            self.constraints.append(z3.Implies(late, given))
        rules = spec.validationSchema
        raw: Any
        value: Any
        if spec.type == "numeric":
            raw = z3.Real(f"input.{name}")
            low = rules.minimum if rules.minimum is not None else -MAX_NUMBER
            high = rules.maximum if rules.maximum is not None else MAX_NUMBER
            self.constraints += [raw >= max(low, -MAX_NUMBER), raw <= min(high, MAX_NUMBER)]
            if rules.integer:
                self.constraints.append(z3.IsInt(raw))
            value = Value(given, raw)
        elif spec.type in ("text", "textarea", "file", "video"):
            size = fixed_digits(rules.pattern, rules.minLength or 0, rules.maxLength or MAX_TEXT)
            if size is not None and spec.type in ("text", "textarea"):
                digits = tuple(z3.Int(f"input.{name}[{k}]") for k in range(size))
                self.constraints += [And(d >= 0, d <= 9) for d in digits]
                raw = digit_text(digits)
                leaf = InputLeaf(spec, name, given, raw, Value(given, raw, digits), late)
                self.inputs[key] = leaf
                return leaf
            raw = z3.String(f"input.{name}")
            self.constraints.append(z3.Length(raw) <= (rules.maxLength or MAX_TEXT))
            self.constraints.append(z3.Length(raw) >= (rules.minLength or 0))
            if rules.email:
                self.realizable.append(Or(raw == "ana@example.com", raw == "bo@example.org"))
            if rules.pattern:
                language = pattern_language(rules.pattern)
                if language is not None:
                    self.constraints.append(z3.InRe(raw, language))
            if spec.type in ("file", "video"):
                # A stored file's name: one the input's media types accept (its text is
                # rarely what a rule reads).
                self.constraints.append(raw == z3.StringVal(file_name(rules.mediaTypes)))
            value = Value(given, raw)
        elif spec.type == "date":
            raw = z3.Int(f"input.{name}")
            low_date = (
                dt.date.fromisoformat(rules.minDate) if rules.minDate else dt.date(1900, 1, 1)
            )
            high_date = (
                dt.date.fromisoformat(rules.maxDate) if rules.maxDate else dt.date(2099, 12, 31)
            )
            self.constraints += [raw >= low_date.toordinal(), raw <= high_date.toordinal()]
            value = Value(given, raw)
        elif spec.type == "check":
            raw = z3.Bool(f"input.{name}")
            value = Value(given, raw)
        elif spec.type == "select":
            options = spec.options or []
            raw = z3.Int(f"input.{name}")
            self.constraints += [raw >= 0, raw < max(len(options), 1)]
            term: z3.ExprRef = z3.StringVal("")
            for index in reversed(range(len(options))):
                seen = input_value(self.program, identifier, options[index].label)
                term = (
                    z3.If(raw == index, z3.StringVal(str(seen)), term)
                    if index < len(options) - 1
                    else z3.StringVal(str(seen))
                )
            value = Value(given, term)
        elif spec.type == "multiselect":
            options = spec.options or []
            raw = [z3.Bool(f"input.{name}[{k}]") for k in range(len(options))]
            count = z3.Sum([z3.If(b, 1, 0) for b in raw]) if raw else z3.IntVal(0)
            if rules.minItems is not None:
                self.constraints.append(z3.Implies(given, count >= rules.minItems))
            if rules.maxItems is not None:
                self.constraints.append(z3.Implies(given, count <= rules.maxItems))
            value = Items(
                [
                    (
                        b,
                        known(
                            z3.StringVal(str(input_value(self.program, identifier, [o.label])[0]))
                        ),
                    )
                    for b, o in zip(raw, options, strict=True)
                ],
                given,
            )
        else:
            raise Unsupported(f"an input of type {spec.type}")
        leaf = InputLeaf(spec, name, given, raw, value, late)
        self.inputs[key] = leaf
        return self._ordered(identifier, leaf)

    def _ordered(self, identifier: str, leaf: InputLeaf) -> InputLeaf:
        """`leaf`, with the date orders (`not before` / `not after`) between it and the dates
        this run has already read: the later date is on or after the earlier one whenever both
        are given, as the runtime enforces at create and update (`runtime.intake`). Only
        direct orders: through a third date the runtime orders nothing while it is missing."""
        if leaf.spec.type != "date" or identifier in self.dates:
            return leaf
        self.dates[identifier] = leaf
        for later, earlier in self.date_orders:
            if identifier not in (later, earlier):
                continue
            other = self.dates.get(earlier if identifier == later else later)
            if other is not None and other is not leaf:
                a, b = (leaf, other) if identifier == later else (other, leaf)
                self.intake.append(z3.Implies(And(a.given, b.given), a.raw >= b.raw))
        return leaf

    @property
    def accepted(self) -> z3.BoolRef:
        """The runtime's intake takes this run's inputs (its date orders hold)."""
        return And(*self.intake)

    def input_value(self, identifier: str) -> Any:
        return self.input_leaf(identifier).value

    def input_at(self, identifier: str, moment: int | None) -> Any:
        """The input's value at a step with `moment` of the update's places before it (None:
        at the finish): missing before the update when it is given there."""
        leaf = self.input_leaf(identifier)
        if moment is None or z3.is_false(leaf.late):
            return leaf.value
        if moment >= len(self.places):
            return leaf.value
        came = Or(FALSE, *[flag for _, flag in self.places[:moment]])
        defined = And(leaf.given, Or(Not(leaf.late), came))
        if isinstance(leaf.value, Items):
            return Items(leaf.value.items, defined)
        return Value(defined, leaf.value.term, leaf.value.digits)

    def field_leaf(
        self, table: dict[str, FieldLeaf], kind: str, name: str, type_name: str
    ) -> FieldLeaf:
        if name in table:
            return table[name]
        given = z3.Bool(f"{kind}.{name}?")
        sort = SORTS[type_name]()
        term = z3.Const(f"{kind}.{name}", sort)
        if type_name == "text":
            self.constraints.append(z3.Length(term) <= MAX_LEAF_TEXT)
            if name == "email":
                self.realizable.append(Or(term == "ana@example.com", term == "bo@example.org"))
        if type_name == "number":
            self.constraints += [term >= -MAX_NUMBER, term <= MAX_NUMBER]
            if name == "sex":
                self.constraints.append(Or(term == 1, term == 2, term == 9))
        if type_name == "date":
            self.constraints += [
                term >= dt.date(1900, 1, 1).toordinal(),
                term <= dt.date(2099, 12, 31).toordinal(),
            ]
        leaf = FieldLeaf(given, term, type_name)
        table[name] = leaf
        return leaf

    def product_value(self, name: str) -> Value:
        types = PRODUCT_FIELDS.get(self.manifest.inspectionType, {})
        if name not in types:
            return missing("text")
        leaf = self.field_leaf(self.product, "product", name, types[name])
        return Value(leaf.given, leaf.term)

    def consumer_value(self, name: str) -> Value:
        if name not in CONSUMER_FIELDS:
            return missing("text")
        leaf = self.field_leaf(self.consumer, "consumer", name, CONSUMER_FIELDS[name])
        return Value(leaf.given, leaf.term)

    def _images(self) -> list[ImageLeaf]:
        images = []
        uploaded_before: list[z3.BoolRef] = []
        for spec in self.manifest.images:
            logic = self.manifest.logic.images.get(spec.identifier)
            name = logic.name if logic is not None else spec.side
            uploaded = z3.Bool(self.name(f"image.{name}?"))
            validations = []
            for v in spec.validations:
                setting = logic.validations.get(v.validation) if logic is not None else None
                where = f"image.{name}.{v.validation}"
                local = v.validation in REGISTRY
                reported = z3.Bool(self.name(f"{where}.ran"))
                confidence = z3.Real(self.name(f"{where}.confidence"))
                result = Value(
                    z3.Bool(self.name(f"{where}.result?")), z3.String(self.name(f"{where}.result"))
                )
                threshold = self.program.threshold(spec.identifier, v)
                self.constraints += [
                    confidence >= 0,
                    confidence <= 100,
                    z3.Length(result.term) <= MAX_LEAF_TEXT,
                ]
                if not v.run:
                    self.constraints.append(Not(reported))
                if local:
                    outcome = z3.Bool(self.name(f"{where}.valid"))
                    if v.run:
                        self.constraints.append(reported)
                    if v.validation in ("complete", "date", "distance"):
                        self.constraints.append(confidence == z3.If(outcome, 100, 0))
                        valid = outcome
                    else:
                        valid = And(outcome, confidence >= threshold)
                    if v.validation == "edited":
                        self.realizable.append(Not(outcome))
                    if v.validation == "duplicate":
                        self.realizable.append(outcome == Not(Or(FALSE, *uploaded_before)))
                    if v.validation in ("date", "distance"):
                        self.realizable.append(Not(result.defined))
                else:
                    valid = confidence >= threshold
                    if v.validation == "age":
                        valid = And(valid, z3.Bool(self.name(f"{where}.old_enough")))
                        self.realizable.append(z3.Bool(self.name(f"{where}.old_enough")))
                damages = []
                if self.reads_damages and v.validation == "damage" and v.run:
                    damages.append(self._damage(f"{where}.damage", declared=False))
                    self.constraints.append(z3.Implies(damages[0].present, reported))
                validations.append(
                    ValidationLeaf(
                        v.validation,
                        v.run,
                        v.required,
                        local,
                        threshold,
                        setting.reviewBelow if setting is not None else None,
                        reported,
                        confidence,
                        valid,
                        result,
                        damages,
                    )
                )
            leaf = ImageLeaf(
                spec.identifier,
                name,
                spec.side,
                self.program.image_optional(spec.identifier),
                uploaded,
                validations,
            )
            if self._retakes(spec.identifier, validations):
                self._first_attempt(leaf)
            images.append(leaf)
            uploaded_before.append(uploaded)
        return images

    def _retakes(self, identifier: str, validations: list[ValidationLeaf]) -> bool:
        """Whether the scenario models a retake of this photo: the template allows a second
        attempt, and reads what one changes (an image's `attempts`, or a rule on this photo's
        upload, results or processing). Not for photos whose upload checks a second upload of
        the same photo changes (`duplicate`), whose `age` result or damages the scenario
        would need twice."""
        if self.manifest.parameters.maxAttempts < 2:
            return False
        if any(v.run and (v.name in ("duplicate", "age") or v.damages) for v in validations):
            return False
        attrs = {"image": identifier}
        if self._reads_attempts or self._matching("image_uploaded", attrs):
            return True
        if self._matching("image_processed", attrs):
            return True
        return any(
            self._matching(event, {**attrs, "validation": v.name})
            for v in validations
            if v.run
            for event in ("validation_passed", "validation_failed")
        )

    def _first_attempt(self, image: ImageLeaf) -> None:
        """The leaves of a refused first upload of the same photo: each upload check the same
        as on the retake (the same photo), each machine result its own; all results in, and
        the photo not approved (else nothing asks for a retake)."""
        retaken = z3.Bool(self.name(f"image.{image.name}.retaken"))
        first: list[ValidationLeaf] = []
        refused = []
        for v in image.validations:
            where = f"image.{image.name}#1.{v.name}"
            if v.local or not v.run:
                leaf = ValidationLeaf(**{**v.__dict__, "damages": []})
            else:
                reported = z3.Bool(self.name(f"{where}.ran"))
                confidence = z3.Real(self.name(f"{where}.confidence"))
                result = Value(
                    z3.Bool(self.name(f"{where}.result?")), z3.String(self.name(f"{where}.result"))
                )
                self.constraints += [
                    confidence >= 0,
                    confidence <= 100,
                    z3.Length(result.term) <= MAX_LEAF_TEXT,
                    z3.Implies(retaken, reported),
                ]
                valid = confidence >= v.threshold
                leaf = ValidationLeaf(
                    v.name,
                    v.run,
                    v.required,
                    v.local,
                    v.threshold,
                    v.review_below,
                    reported,
                    confidence,
                    valid,
                    result,
                )
            if v.run and v.required:
                refused.append(Not(leaf.valid))
            first.append(leaf)
        self.constraints += [
            z3.Implies(retaken, image.uploaded),
            z3.Implies(retaken, Or(FALSE, *refused)),
        ]
        image.first = first
        image.retaken = retaken

    def _damage(self, where: str, declared: bool) -> DamageLeaf:
        leaf = DamageLeaf(
            z3.Bool(self.name(f"{where}?")),
            z3.String(self.name(f"{where}.part")),
            z3.String(self.name(f"{where}.damage")),
            z3.String(self.name(f"{where}.severity")),
            Value(
                z3.Bool(self.name(f"{where}.percentage?")),
                z3.Real(self.name(f"{where}.percentage")),
            ),
            declared,
        )
        for text in (leaf.part, leaf.damage, leaf.severity):
            self.constraints += [z3.Length(text) >= 1, z3.Length(text) <= 100]
        self.constraints += [leaf.percentage.term >= 0, leaf.percentage.term <= 100]
        return leaf

    def _declared(self) -> list[DamageLeaf]:
        if not self.reads_damages or not self.program.feature_enabled("damage_declaration"):
            return []
        leaves = [self._damage(f"damage[{k}]", declared=True) for k in range(MAX_DECLARED)]
        for earlier, later in itertools.pairwise(leaves):
            self.constraints.append(z3.Implies(later.present, earlier.present))
        return leaves

    # -- the timeline -----------------------------------------------------------------------------

    def _steps(self) -> list[Step]:
        """The scenario's events in the order `events` writes them, each with its triggers;
        with inputs that may come late, an update step at each of its places (one of them
        happens exactly when some input is given there)."""
        steps = [Step("create", TRUE, [("inspection_created", TRUE, {}, {})])]
        late: list[tuple[str, InputLeaf]] = []
        for spec in self.manifest.inputs:
            if spec.identifier in self._given_inputs():
                leaf = self.input_leaf(spec.identifier)
                at_create = leaf.given
                if not z3.is_false(leaf.late):
                    at_create = And(leaf.given, Not(leaf.late))
                    late.append((spec.identifier, leaf))
                steps[0].triggers.append(
                    ("input_set", at_create, {"value": leaf.value}, {"input": spec.identifier})
                )
        updated = Or(FALSE, *[leaf.late for _, leaf in late])
        self.places = []

        def place(where: Place, before: str) -> None:
            if late:
                happens = z3.Bool(self.name(f"update before {before}"))
                self.places.append((where, happens))
                triggers = [
                    ("input_set", leaf.late, {"value": leaf.value}, {"input": identifier})
                    for identifier, leaf in late
                ]
                steps.append(
                    Step("update", happens, triggers, moment=len(self.places), place=where)
                )

        def add(*new: Step) -> None:
            for step in new:
                step.moment = len(self.places)
                steps.append(step)

        place(Place("start"), "start")
        add(Step("start", TRUE, [("inspection_started", TRUE, {}, {})]))
        for k, image in enumerate(self.images):
            if image.first is not None:
                place(Place("image", k, first=True), f"image.{image.name}#1")
                add(*self._upload_steps(k, image, image.first, image.retaken, first=True))
            place(Place("image", k), f"image.{image.name}")
            add(*self._upload_steps(k, image, image.validations, image.uploaded))
        if self.declared:
            place(Place("damage"), "damages")
        for d, damage in enumerate(self.declared):
            add(
                Step(
                    "damage",
                    damage.present,
                    [("damage_declared", TRUE, {"damage": damage.record()}, {})],
                    damage=d,
                )
            )
        place(Place("finish"), "finish")
        add(Step("finish", TRUE, [("finish", TRUE, {}, {})]))
        if late:
            # One update, at one place, exactly when some input comes late.
            flags = [flag for _, flag in self.places]
            self.constraints += [z3.AtMost(*flags, 1), updated == Or(*flags)]
        return steps

    def _upload_steps(
        self,
        k: int,
        image: ImageLeaf,
        leaves: list[ValidationLeaf],
        uploaded: z3.BoolRef,
        first: bool = False,
    ) -> list[Step]:
        """One upload of photo k and its machine results, each a step with its triggers."""
        upload = Step("image", uploaded, [], image=k, first=first)
        upload.triggers.append(("image_uploaded", TRUE, {"image": k}, {"image": image.identifier}))
        for j, v in enumerate(leaves):
            if v.local and v.run:
                self._validation_triggers(upload, image, j, leaves)
        upload.triggers.append(
            (
                "image_processed",
                self._processed(leaves, upload_only=True),
                {"image": k},
                {"image": image.identifier},
            )
        )
        steps = [upload]
        for j, v in enumerate(leaves):
            if v.local or not v.run:
                continue
            step = Step(
                "validation", And(uploaded, v.reported), [], image=k, validation=j, first=first
            )
            self._validation_triggers(step, image, j, leaves)
            before = self._processed(leaves, upto=j, include=False)
            after = self._processed(leaves, upto=j, include=True)
            step.triggers.append(
                (
                    "image_processed",
                    And(after, Not(before)),
                    {"image": k},
                    {"image": image.identifier},
                )
            )
            steps.append(step)
        return steps

    def _given_inputs(self) -> set[str]:
        """Inputs the scenario may give: all of them (each given or not)."""
        return {spec.identifier for spec in self.manifest.inputs}

    def _validation_triggers(
        self, step: Step, image: ImageLeaf, j: int, leaves: list[ValidationLeaf]
    ) -> None:
        v = leaves[j]
        subject = {"image": self.images.index(image), "validation": (image, j)}
        attrs = {"image": image.identifier, "validation": v.name}
        step.triggers.append(("validation_passed", v.valid, subject, attrs))
        step.triggers.append(("validation_failed", Not(v.valid), subject, attrs))

    def _processed(
        self,
        leaves: list[ValidationLeaf],
        upload_only: bool = False,
        upto: int = -1,
        include: bool = True,
    ) -> z3.BoolRef:
        """Every run validation has a result (all are machine-routed in a simulation)."""
        parts = []
        for j, v in enumerate(leaves):
            if not v.run:
                continue
            if v.local:
                continue
            if upload_only or j > upto or (j == upto and not include):
                parts.append(FALSE)
            else:
                parts.append(v.reported)
        return And(TRUE, *parts)

    def _visible(self, image: ImageLeaf, j: int, position: tuple[int, int]) -> z3.BoolRef:
        """Whether validation j of `image` has its result at scenario `position` (image index,
        validation index or -1 for the upload itself)."""
        v = image.validations[j]
        k = self.images.index(image)
        if not v.run:
            return FALSE
        if v.local:
            return And(image.uploaded, z3.BoolVal(position[0] >= k))
        if position[0] > k or (position[0] == k and position[1] >= j):
            return And(image.uploaded, v.reported)
        return FALSE

    def _env(
        self,
        position: tuple[int, int],
        damages_declared: int,
        variables: dict[str, Value],
        checks: dict[str, z3.BoolRef],
        first: bool = False,
        moment: int | None = None,
    ) -> Env:
        images: dict[str, dict[str, Any]] = {}
        image_list: list[tuple[z3.BoolRef, Any]] = []
        all_validations: list[tuple[z3.BoolRef, Any]] = []
        all_damages: list[tuple[z3.BoolRef, Any]] = []
        asked_env: Env | None = None
        for k, image in enumerate(self.images):
            leaves = image.validations
            if first and position[0] == k and image.first is not None:
                # the refused first upload of a retaken photo, its results as they come in
                leaves = image.first
                uploaded = image.retaken
                reported = [
                    FALSE
                    if not v.run
                    else uploaded
                    if v.local
                    else And(uploaded, v.reported)
                    if j <= position[1]
                    else FALSE
                    for j, v in enumerate(leaves)
                ]
                attempts: z3.ArithRef = z3.If(uploaded, z3.RealVal(1), z3.RealVal(0))
            else:
                uploaded = And(image.uploaded, z3.BoolVal(position[0] >= k))
                reported = [self._visible(image, j, position) for j in range(len(leaves))]
                attempts = z3.If(
                    uploaded, z3.If(image.retaken, z3.RealVal(2), z3.RealVal(1)), z3.RealVal(0)
                )
            ran = [r for v, r in zip(leaves, reported, strict=True) if v.run]
            processed = And(uploaded, *ran)
            approved = And(
                processed,
                *[
                    And(r, v.valid)
                    for v, r in zip(leaves, reported, strict=True)
                    if v.run and v.required
                ],
            )
            records = []
            damages: list[tuple[z3.BoolRef, Any]] = []
            for v, r in zip(leaves, reported, strict=True):
                record = {
                    "name": known(z3.StringVal(v.name)),
                    "valid": Value(r, v.valid),
                    "confidence": Value(r, v.confidence),
                    "result": Value(And(r, v.result.defined), v.result.term),
                    "ran": known(r),
                    "required": known(z3.BoolVal(v.required)),
                }
                records.append(record)
                for leaf in v.damages:
                    damages.append((And(r, leaf.present), leaf.record()))
            record_of_image: dict[str, Any] = {
                "side": known(z3.StringVal(image.side)),
                "label": known(
                    z3.StringVal(
                        self.program.image_labels(self.manifest.logic.locales[0]).get(
                            image.identifier, image.side
                        )
                    )
                ),
                "approved": known(approved),
                "processed": known(processed),
                "uploaded": known(uploaded),
                "attempts": known(attempts),
                "uploaded_at": Value(uploaded, self.today),
                "validations": Items([(uploaded, r) for r in records]),
                "damages": Items(damages),
            }
            for v, r in zip(leaves, records, strict=True):
                record_of_image[v.name] = r
            images[image.identifier] = record_of_image
            all_validations += [(uploaded, r) for r in records]
            all_damages += damages
            if image.identifier in self.program.asks:
                if asked_env is None:
                    asked_env = self._bare_env(moment)
                evaluator = Evaluator(self.functions, [], "ask")
                evaluator.axioms = self.axioms
                asked = evaluator.condition(self.program.asks[image.identifier][1], asked_env)
            else:
                asked = TRUE
            listed = And(asked, Or(uploaded, z3.BoolVal(not image.optional)))
            image_list.append((listed, record_of_image))
        declared = [(leaf.present, leaf.record()) for leaf in self.declared[:damages_declared]]
        return Env(
            vars=variables,
            inputs=lambda identifier: self.input_at(identifier, moment),
            product=self.product_value,
            consumer=self.consumer_value,
            images=images,
            image_list=Items(image_list),
            damages=Items(declared + all_damages),
            validations=Items(all_validations),
            checks=checks,
            event={},
            today=self.today,
        )

    def _bare_env(self, moment: int | None = None) -> Env:
        return Env(
            {},
            lambda identifier: self.input_at(identifier, moment),
            self.product_value,
            self.consumer_value,
            {},
            Items([]),
            Items([]),
            Items([]),
            {},
            {},
            self.today,
        )

    def asked(self, identifier: str, moment: int | None = None) -> z3.BoolRef:
        """Whether an input or image's `ask when` holds on the scenario's data at the finish
        (`moment` 0: at the create, before the update)."""
        if identifier not in self.program.asks:
            return TRUE
        evaluator = Evaluator(self.functions, [], "ask")
        evaluator.axioms = self.axioms
        return evaluator.condition(self.program.asks[identifier][1], self._bare_env(moment))

    def _updates(self) -> bool:
        """Whether the scenario holds an update: some input of the template may come late."""
        logic = self.manifest.logic.inputs
        return any(
            (logic[spec.identifier].name if spec.identifier in logic else spec.identifier)
            in self.late
            for spec in self.manifest.inputs
        )

    def _require_inputs(self) -> None:
        """Required inputs are given whenever asked, else the create or the finish is refused:
        one asked at `create` on the create's data is given there, one asked at `update` on
        the finish's data by then (`runtime.engine`). Without an update in the scenario, the
        two are the same data and every input comes at the create."""
        updates = self._updates()
        for spec in self.manifest.inputs:
            if not spec.validationSchema.required:
                continue
            leaf = self.input_leaf(spec.identifier)
            if not updates:
                self.constraints.append(Or(leaf.given, Not(self.asked(spec.identifier))))
                continue
            if "create" in spec.stages:
                at_create = And(leaf.given, Not(leaf.late))
                self.constraints.append(Or(at_create, Not(self.asked(spec.identifier, 0))))
            if "update" in spec.stages:
                self.constraints.append(Or(leaf.given, Not(self.asked(spec.identifier))))

    def _missing_inputs(self) -> z3.BoolRef:
        """A required input asked at the finish and never given (asked at `create` only, its
        `ask when` false at the create and true after the update): the verdict disapproves."""
        if not self._updates():
            return FALSE
        return Or(
            FALSE,
            *[
                And(
                    self.asked(spec.identifier),
                    Not(self.input_leaf(spec.identifier).given),
                )
                for spec in self.manifest.inputs
                if spec.validationSchema.required and "update" not in spec.stages
            ],
        )

    def _run(self) -> Outcome:
        program = self.program
        if self._updates():
            steps = self._steps()  # first: the update's places say what the create saw
            self._require_inputs()
        else:
            # The order of the solver's assertions as before updates were modelled: z3's
            # search follows it, and a template without an update keeps its question whole.
            self._require_inputs()
            steps = self._steps()
        self._require_fields()
        variables = {
            v.name: to_term(v.initialValue, "number" if v.type == "numeric" else "text")
            for v in self.manifest.variables
        }
        checks = {c.id: FALSE for c in program.checks}
        branches: dict[tuple[int, tuple[int, ...], str], z3.BoolRef] = {}
        blocked: z3.BoolRef = FALSE
        declared = 0
        finish_env: Env | None = None
        for step in steps:
            happens = And(step.happens, Not(blocked))
            first = step.first
            if step.kind == "damage":
                declared += 1
            if step.kind in ("image", "validation"):
                assert step.image is not None
                position = (step.image, -1 if step.validation is None else step.validation)
            elif step.kind in ("create", "start"):
                position = (-1, -1)
            elif step.place is not None:
                # An inspection that is no longer editable refuses the update.
                self.constraints.append(z3.Implies(step.happens, Not(blocked)))
                position, first = self._place_position(step.place)
            else:
                position = (len(self.images), 0)
            matching = [
                (name, condition, subject, attrs, rules)
                for name, condition, subject, attrs in step.triggers
                if (rules := self._matching(name, attrs))
            ]
            recheck = step.kind == "finish" or self._rules_read_checks
            exhausted = self._exhausted(step)
            if not matching and not recheck and z3.is_false(exhausted):
                continue
            env = self._env(position, declared, variables, checks, first, step.moment)
            for _, condition, subject, _, rules in matching:
                env.event = self._subject(env, subject)
                for index, rule in rules:
                    evaluator = Evaluator(self.functions, self.errors, f"rule:{rule.id}")
                    evaluator.axioms = self.axioms
                    evaluator.guard = And(happens, condition)
                    self._statements(evaluator, rule.body, env, index, branches)
                env.vars = variables
            env.event = {}
            if not z3.is_false(exhausted):
                assert step.image is not None
                env_images = env.images[self.images[step.image].identifier]
                blocked_here = And(
                    happens,
                    exhausted,
                    env_images["processed"].term,
                    Not(env_images["approved"].term),
                )
            else:
                blocked_here = FALSE
            new_checks = {}
            for check in program.checks:
                evaluator = Evaluator(self.functions, self.errors, f"check:{check.id}")
                evaluator.axioms = self.axioms
                evaluator.guard = happens
                valid = evaluator.condition(check.valid, env)
                new_checks[check.id] = z3.If(happens, valid, checks[check.id])
                env.checks = {**checks, **new_checks}
            checks.update(new_checks)
            blocked = Or(blocked, blocked_here)
            if step.kind == "finish":
                finish_env = env
                finish_happens = happens
        assert finish_env is not None
        return self._verdict(finish_env, finish_happens, blocked, branches)

    def _place_position(self, place: Place) -> tuple[tuple[int, int], bool]:
        """The scenario position (`_env`) an update at `place` sees: every step before it done
        (before photo k's upload: the photos before it with all their results; between a
        retaken photo's first upload and its retake: that first upload, refused)."""
        if place.before == "start":
            return (-1, -1), False
        if place.before != "image":
            return (len(self.images), 0), False
        if not place.first and self.images[place.image].first is not None:
            return (place.image, len(self.images[place.image].validations)), True
        return (place.image - 1, len(self.images[max(place.image - 1, 0)].validations)), False

    def _exhausted(self, step: Step) -> z3.BoolRef:
        """Whether an upload step uses the photo's last attempt (a refused photo then blocks
        the inspection, `runtime.transitions._after_results`)."""
        if step.kind not in ("image", "validation") or step.image is None:
            return FALSE
        most = self.manifest.parameters.maxAttempts
        image = self.images[step.image]
        if step.first:
            return FALSE  # the first of at least two
        if image.first is not None:
            return And(image.retaken, z3.BoolVal(most <= 2))
        return z3.BoolVal(most <= 1)

    def _matching(self, name: str, attrs: dict[str, str]) -> list[tuple[int, Any]]:
        """The rules a trigger runs, in source order (`runtime.transitions._matches`)."""
        return [
            (index, rule)
            for index, rule in enumerate(self.program.rules)
            if rule.event == name
            and (rule.input is None or attrs.get("input") == rule.input)
            and (rule.image is None or attrs.get("image") == rule.image)
            and (rule.validation is None or attrs.get("validation") == rule.validation)
        ]

    def _require_fields(self) -> None:
        """Product and consumer fields the template `require`s are always given."""
        properties = (self.manifest.schema_ or {}).get("properties", {})
        product = properties.get(self.manifest.inspectionType, {}).get("properties", {})
        required_product = [k for k, v in product.items() if v.get("required")]
        consumer = properties.get("consumer", {}).get("properties", {})
        required_consumer = [k for k, v in consumer.items() if v.get("required")]
        types = PRODUCT_FIELDS.get(self.manifest.inspectionType, {})
        for name in dict.fromkeys(required_product):
            if name in types:
                self.constraints.append(
                    self.field_leaf(self.product, "product", name, types[name]).given
                )
        for name in dict.fromkeys(required_consumer):
            if name in CONSUMER_FIELDS:
                self.constraints.append(
                    self.field_leaf(self.consumer, "consumer", name, CONSUMER_FIELDS[name]).given
                )

    def _subject(self, env: Env, subject: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        if "image" in subject:
            result["image"] = env.images[self.images[subject["image"]].identifier]
        if "validation" in subject:
            image, j = subject["validation"]
            result["validation"] = env.images[image.identifier][image.validations[j].name]
        if "damage" in subject:
            result["damage"] = subject["damage"]
        if "value" in subject:
            result["value"] = subject["value"]
        return result

    def _statements(
        self,
        evaluator: Evaluator,
        body: tuple[ir.Statement, ...] | list[ir.Statement],
        env: Env,
        rule: int,
        branches: dict[tuple[int, tuple[int, ...], str], z3.BoolRef],
    ) -> None:
        for statement in body:
            if isinstance(statement, ir.SetStatement):
                value = evaluator.value(statement.value, env)
                evaluator.error("missing_value", statement, Not(value.defined))
                old = env.vars[statement.name]
                runs = And(evaluator.guard, value.defined)
                env.vars[statement.name] = ite(runs, value, old)
            elif isinstance(statement, ir.IfStatement):
                condition = evaluator.condition(statement.condition, env)
                for branch, taken, nodes in (
                    ("then", condition, statement.then),
                    ("else", Not(condition), statement.otherwise),
                ):
                    key = (rule, tuple(statement.span), branch)
                    branches[key] = Or(branches.get(key, FALSE), And(evaluator.guard, taken))
                    with evaluator.under(taken):
                        self._statements(evaluator, nodes, env, rule, branches)
            else:
                raise Unsupported(f"the statement {type(statement).__name__}")

    def _verdict(
        self, env: Env, happens: z3.BoolRef, blocked: z3.BoolRef, branches: dict[Any, z3.BoolRef]
    ) -> Outcome:
        program = self.program
        verdict_errors: list[RuleError] = []
        evaluator = Evaluator(self.functions, verdict_errors, "verdict")
        evaluator.axioms = self.axioms
        evaluator.guard = happens
        disapprove_lines = []
        for reason, when, _ in program.disapprovals:
            value = evaluator.value(when, env)
            holds = And(value.defined, value.term)
            disapprove_lines.append((holds, value.defined))
            if not isinstance(reason, str):
                with evaluator.under(holds):
                    evaluator.value(reason[1], env)
        none_held = Not(Or(FALSE, *[h for h, _ in disapprove_lines]))
        approve_line = None
        if program.approve_when is not None:
            with evaluator.under(none_held):
                value = evaluator.value(program.approve_when, env)
            approve_line = (And(value.defined, value.term), value.defined)
            approved_template = And(none_held, approve_line[0])
        else:
            approved_template = none_held
        otherwise = And(none_held, Not(approved_template))
        if not isinstance(program.otherwise, str):
            with evaluator.under(otherwise):
                evaluator.value(program.otherwise[1], env)
        missing_photo = FALSE
        unreported_required = FALSE
        refused_photo = FALSE
        waits = FALSE
        for image in self.images:
            record = env.images[image.identifier]
            uploaded = record["uploaded"].term
            if not image.optional:
                # A photo its `ask when` does not ask for is not required, missing or refused.
                asked = self.asked(image.identifier)
                missing_photo = Or(missing_photo, And(asked, Not(uploaded)))
                refused = And(record["processed"].term, Not(record["approved"].term))
                refused_photo = Or(
                    refused_photo, refused if z3.is_true(asked) else And(asked, refused)
                )
            for v in image.validations:
                if not v.run:
                    continue
                reported = And(uploaded, v.reported) if not v.local else uploaded
                if v.required:
                    unreported_required = Or(unreported_required, And(uploaded, Not(reported)))
                    waits = Or(waits, And(uploaded, Not(reported)))
                if v.review_below is not None:
                    waits = Or(waits, And(reported, v.confidence < v.review_below))
        missing_input = self._missing_inputs()
        missing = missing_photo if z3.is_false(missing_input) else Or(missing_photo, missing_input)
        machine_approved = And(approved_template, Not(missing))
        review_errors: list[RuleError] = []
        review_lines = []
        review_rule = FALSE
        for reason, when, _ in program.reviews:
            checker = Evaluator(self.functions, review_errors, "review")
            checker.axioms = self.axioms
            checker.guard = happens
            start = len(review_errors)
            value = checker.value(when, env)
            holds = And(value.defined, value.term)
            if not isinstance(reason, str):
                with checker.under(holds):
                    checker.value(reason[1], env)
            erred = Or(FALSE, *[e.when for e in review_errors[start:]])
            review_lines.append((holds, value.defined))
            review_rule = Or(review_rule, holds, erred)
        verdict_erred = Or(FALSE, *[e.when for e in verdict_errors])
        review = Or(
            And(Not(missing), waits),
            review_rule,
            And(machine_approved, verdict_erred),
        )
        review = And(Not(blocked), review)
        completed = And(Not(blocked), Not(review))
        self.errors += verdict_errors + review_errors
        self.constraints += self.axioms
        for app in self.functions.applications:
            if app.name in PLAIN_TEXT_FIXED:
                self.realizable.append(app.result.term == app.args[0].term)
        return Outcome(
            blocked=blocked,
            review=review,
            approved=And(completed, machine_approved),
            disapproved=And(completed, Not(machine_approved)),
            missing_photo=missing_photo,
            missing_input=missing_input,
            refused_photo=refused_photo,
            unreported_required=unreported_required,
            disapprove_lines=disapprove_lines,
            review_lines=review_lines,
            approve_line=approve_line,
            otherwise=otherwise,
            branches=branches,
            errors=self.errors,
        )


def _damage_node(node: Any) -> bool:
    return (
        isinstance(node, ir.Damages)
        or (isinstance(node, ir.RecordField) and node.name == "damages")
        or (isinstance(node, ir.EventSubject) and node.name == "damage")
    )


def _inputs_read(*roots: Any) -> set[str]:
    """The identifiers of the inputs the expressions or statements under `roots` read."""
    found: set[str] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if isinstance(node, ir.InputValue):
            found.add(node.name)
        elif isinstance(node, ir.Node):
            stack += ir.child_nodes(node)
        elif isinstance(node, list | tuple):
            stack += node
    return found


def late_inputs(program: Program) -> frozenset[str]:
    """The names of the inputs the scenario may give at an update instead of the create: those
    whose moment changes what the template reads. A rule reads an input while it runs (one
    before the update sees it missing), an `on input set` rule runs at the update, a rule
    reading `images` or the checks sees the photos an input's `ask when` asks or the checks as
    they are at that event; and an input named by a required input's `ask when` decides
    whether that one is required at the create. What reads inputs only at the finish (the
    verdict, `on finish` rules: every input given is there by then) needs no update, nor an
    input the create always requires (required at `create`, no `ask when`): the question
    stays its size."""
    asks = program.asks
    found = _inputs_read(*(rule.body for rule in program.rules if rule.event != "finish"))
    for rule in program.rules:
        if rule.event == "input_set":
            if rule.input is None:
                found |= {spec.identifier for spec in program.manifest.inputs}
            else:
                found.add(rule.input)
    if _reads(program, lambda n: isinstance(n, ir.Images), rules_only=True):
        found |= _inputs_read(
            *(asks[i.identifier][1] for i in program.manifest.images if i.identifier in asks)
        )
    if _reads(program, lambda n: isinstance(n, ir.CheckValue), rules_only=True):
        found |= _inputs_read(*(check.valid for check in program.checks))
    if not found:
        return frozenset()
    required = [
        spec.identifier
        for spec in program.manifest.inputs
        if spec.validationSchema.required and spec.identifier in asks
    ]
    while True:
        more = _inputs_read(*(asks[i][1] for i in required if i in found)) - found
        if not more:
            break
        found |= more
    names = set()
    for spec in program.manifest.inputs:
        if (
            spec.validationSchema.required
            and "create" in spec.stages
            and spec.identifier not in asks
        ):
            found.discard(spec.identifier)
    for identifier in found:
        logic = program.manifest.logic.inputs.get(identifier)
        names.add(logic.name if logic is not None else identifier)
    return frozenset(names)


def _reads(program: Program, wanted: Callable[[Any], bool], rules_only: bool = False) -> bool:
    """Whether a node of the template's logic (its rules only, with `rules_only`) is
    `wanted`: damages read (else the scenario declares none), checks read by rules."""
    found = False

    def visit(node: Any) -> None:
        nonlocal found
        if found:
            return
        if wanted(node):
            found = True
            return
        if isinstance(node, ir.Node):
            for child in ir.child_nodes(node):
                visit(child)
        elif isinstance(node, list | tuple):
            for item in node:
                visit(item)

    for rule in program.rules:
        if rule.event == "damage_declared" and not rules_only:
            return True
        visit(list(rule.body))
    if rules_only:
        return found
    for check in program.checks:
        visit(check.valid)
    for reason, when, _ in (*program.disapprovals, *program.reviews):
        visit(when)
        if not isinstance(reason, str):
            visit(reason[1])
    visit(program.approve_when)
    return found
