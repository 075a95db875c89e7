"""The compiled path's shortcuts: each must keep the meaning of the reference path.

Range checks are skipped only where the operands are proved in range (literals, counts bounded
by the step limit); reads of data no generated code changes are done once per call; verdict
results are constant tuples. Each test checks the generated source AND the values on both paths.
"""

from __future__ import annotations

from typing import Any

import pytest
from rt_support import car_program, complete_run

from inspectlang.compiler import compile_expression
from runtime.codegen import generate_expression
from runtime.expression import Context, compile_ir, context_template
from runtime.verify import Scope, Verifier

SCORE = (
    '100 - 10 * count(d in damages where d.severity = "minor")'
    ' - 40 * count(d in damages where d.severity = "severe")'
)


def source_of(expression: str, variables: dict[str, str] | None = None) -> str:
    """The generated Python source of one expression."""
    node = compile_expression(expression, variables=variables or {})
    verifier = Verifier(context_template(Context(dict(variables or {}), {}, (), {})))
    normalized = verifier.expression(node, Scope(**verifier.base.__dict__), "expression")
    return generate_expression("expression", normalized)


def run_both(expression: str, data: dict[str, Any], **kwargs: Any) -> list[Any]:
    compiled = compile_ir(compile_expression(expression, **kwargs), **kwargs)
    return [compiled.run(data, path=path) for path in ("compiled", "reference")]


def damages(*severities: str) -> list[dict[str, Any]]:
    return [
        {"part": "door", "damage": "dent", "severity": s, "percentage": None, "declared": True}
        for s in severities
    ]


def test_score_from_counts_has_no_range_checks() -> None:
    source = source_of(SCORE)
    assert "_too_large" not in source
    assert "is None" not in source  # counts of a data list are never missing


@pytest.mark.parametrize(
    ("severities", "score"),
    [((), 100), (("minor",) * 4, 60), (("minor", "severe"), 50), (("severe",) * 3, -20)],
)
def test_score_from_counts_on_both_paths(severities: tuple[str, ...], score: int) -> None:
    for value, errors in run_both(SCORE, {"damages": damages(*severities)}):
        assert (value, errors) == (score, [])


def test_unproved_arithmetic_keeps_its_range_check() -> None:
    # 10**15 * count can exceed the largest number: the check stays and gives missing
    expression = '1000000000000000 * count(d in damages where d.severity = "minor")'
    assert "_too_large" in source_of(expression)
    for value, errors in run_both(expression, {"damages": damages("minor", "minor")}):
        assert value is None
        assert [e["code"] for e in errors] == ["number_too_large"]


def test_variables_keep_their_range_check() -> None:
    # a variable may hold any number up to the limit: x * 10 is checked
    assert "_too_large" in source_of("x * 10", {"x": "numeric"})
    for value, errors in run_both("x * 10", {"vars": {"x": 1e15}}, variables={"x": "numeric"}):
        assert value is None
        assert [e["code"] for e in errors] == ["number_too_large"]


def test_product_fields_are_read_once() -> None:
    source = source_of("car.milage >= 0 and car.milage <= 500000")
    assert source.count("get('milage')") == 1
    for milage, expected in ((42000, True), (-1, False), (600000, False), (None, None)):
        product = {} if milage is None else {"milage": milage}
        for value, errors in run_both(
            "car.milage >= 0 and car.milage <= 500000", {"product": product}
        ):
            assert (value, errors) == (expected, [])


def test_verdict_returns_constant_tuples_and_the_state_holds_lists() -> None:
    program = car_program()
    assert "return (True, ())" in program.source
    state = complete_run(program)
    assert isinstance(state.reasons, list)
    assert state.model_dump(mode="json")["reasons"] == state.reasons
