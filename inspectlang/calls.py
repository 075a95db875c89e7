"""Library calls in expressions: arity, argument types and the IR `call` node (split from
`inspectlang.types`). Signatures of the newer functions are `vocabulary.SIGNATURES`, shared with
the runtime's verifier; the older ones are checked here case by case, as `runtime.verify` does.
"""

from __future__ import annotations

from inspectlang import ast, choices
from inspectlang.diagnostics import did_you_mean
from inspectlang.expression_types import (
    ANY,
    ERROR,
    QUANTIFIERS,
    ExpressionChecking,
    compatible,
    describe,
    element_of,
    ir_type,
    is_iso_date,
    list_of,
    regex_problem,
)
from inspectlang.manifest import IRNode
from inspectlang.vocabulary import (
    BOOLEAN,
    DATE,
    FUNCTIONS,
    NUMBER,
    SIGNATURES,
    TEXT,
    accepts,
)


def check_call(checker: ExpressionChecking, expr: ast.Call) -> tuple[str, IRNode]:
    name, args = expr.function, expr.arguments
    function_span = expr.function_span if expr.function_span.line else expr.span
    if name in QUANTIFIERS:
        if len(args) != 1:
            return checker.error(
                "E022", f"`{name}` takes a list: `{name}(x in LIST where CONDITION)`", expr.span
            )
        return checker._quantifier(ast.Quantifier(name, None, args[0], span=expr.span))
    arity = FUNCTIONS.get(name)
    if arity is None:
        return checker.error(
            "E022",
            f"unknown function `{name}`",
            function_span,
            did_you_mean(name, [*FUNCTIONS, *QUANTIFIERS]),
        )
    low, high = arity
    if len(args) < low or (high is not None and len(args) > high):
        wanted = (
            str(low) if low == high else f"{low} or more" if high is None else f"{low} to {high}"
        )
        return checker.error(
            "E022",
            f"`{name}` takes {wanted} argument{'s' if wanted != '1' else ''}, not {len(args)}",
            expr.span,
        )
    if name == "date" and isinstance(args[0], ast.Literal) and isinstance(args[0].value, str):
        if not is_iso_date(args[0].value):
            return checker.error(
                "E019", f"`{args[0].value}` is not a date of the form YYYY-MM-DD", args[0].span
            )
        return DATE, {
            "op": "literal",
            "value": args[0].value,
            "type": DATE,
            "span": expr.span.as_list(),
        }
    typed = [checker.check(arg) for arg in args]
    types = [t for t, _ in typed]
    result = call_type(checker, expr, types)
    choices.check_call(checker._report, checker.scope, expr, [node for _, node in typed])
    if (
        name in ("matches", "extract")
        and isinstance(args[1], ast.Literal)
        and isinstance(args[1].value, str)
    ):
        problem = regex_problem(args[1].value)
        if problem is not None:
            checker.error("E029", problem, args[1].span)
    return result, {
        "op": "call",
        "fn": name,
        "args": [node for _, node in typed],
        "type": ir_type(result),
        "span": expr.span.as_list(),
    }


def expect(
    checker: ExpressionChecking, expr: ast.Call, index: int, actual: str, *wanted: str
) -> None:
    if (
        actual != ERROR
        and actual not in wanted
        and not (ANY in (element_of(actual) or "") and any(element_of(w) for w in wanted))
    ):
        names = " or ".join(describe(w) for w in wanted)
        checker.error(
            "E023",
            f"argument {index + 1} of `{expr.function}` must be a {names}, not {describe(actual)}",
            expr.arguments[index].span,
        )


def call_type(checker: ExpressionChecking, expr: ast.Call, types: list[str]) -> str:
    name = expr.function
    if name in SIGNATURES:
        wanted, result = SIGNATURES[name]
        for index, (want, actual) in enumerate(zip(wanted, types, strict=False)):
            if actual != ERROR and not accepts(want, actual):
                what = "number, text, boolean, date or list" if want == "value" else want
                checker.error(
                    "E023",
                    f"argument {index + 1} of `{name}` must be a {what}, not {describe(actual)}",
                    expr.arguments[index].span,
                )
        return result
    if name in ("lower", "upper", "trim"):
        expect(checker, expr, 0, types[0], TEXT)
        return TEXT
    if name == "length":
        if element_of(types[0]) is None:
            expect(checker, expr, 0, types[0], TEXT)
        return NUMBER
    if name == "contains":
        element = element_of(types[0])
        if element is not None:
            if not compatible(element, types[1]):
                expect(checker, expr, 1, types[1], element)
        else:
            expect(checker, expr, 0, types[0], TEXT)
            expect(checker, expr, 1, types[1], TEXT)
        return BOOLEAN
    if name in ("starts_with", "ends_with", "matches"):
        expect(checker, expr, 0, types[0], TEXT)
        expect(checker, expr, 1, types[1], TEXT)
        return BOOLEAN
    if name in ("round", "abs"):
        for index, type_ in enumerate(types):
            expect(checker, expr, index, type_, NUMBER)
        return NUMBER
    if name in ("min", "max"):
        if len(types) == 1:
            expect(checker, expr, 0, types[0], list_of(NUMBER))
        else:
            for index, type_ in enumerate(types):
                expect(checker, expr, index, type_, NUMBER)
        return NUMBER
    if name == "defined":
        return BOOLEAN
    if name == "date":
        expect(checker, expr, 0, types[0], TEXT)
        return DATE
    if name == "today":
        return DATE
    if name == "add_days":
        expect(checker, expr, 0, types[0], DATE)
        expect(checker, expr, 1, types[1], NUMBER)
        return DATE
    # days_between, years_between
    expect(checker, expr, 0, types[0], DATE)
    expect(checker, expr, 1, types[1], DATE)
    return NUMBER
