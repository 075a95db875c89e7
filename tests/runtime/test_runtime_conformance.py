"""Every expression vector of `tests/conformance/` (the files of `evaluation/`; their format is
tests/conformance/README.md), on the compiled path and on the reference path: an `expression`
(source compiled with `compile_expression`) or `ir`, optional `data`, and exactly one of
`value` (the result, with no rule error), `error` (the result is missing and that rule error is
recorded) or `refused` (the runtime refuses the IR at load).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from inspectlang.compiler import compile_expression
from runtime.errors import InvalidProgram
from runtime.expression import compile_ir
from tests.conformance.vectors import vectors

VECTORS = Path(__file__).resolve().parents[1] / "conformance" / "evaluation"
PATHS = ("compiled", "reference")


def expand(value: Any) -> Any:
    """`"@N"` is N times "a", `"@ßN"` N times "ß", `"@@validationsN"` N validation records.

    (Keeps long texts and lists out of the JSON files.)
    """
    if isinstance(value, str) and value.startswith("@@validations"):
        record = {
            "name": "plate",
            "valid": True,
            "confidence": 90,
            "result": "X",
            "ran": True,
            "required": True,
        }
        return [dict(record) for _ in range(int(value[len("@@validations") :]))]
    if isinstance(value, str) and value.startswith("@ß") and value[2:].isdigit():
        return "ß" * int(value[2:])
    if isinstance(value, str) and value.startswith("@") and value[1:].isdigit():
        return "a" * int(value[1:])
    if isinstance(value, dict):
        return {k: expand(v) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v) for v in value]
    return value


CASES = [
    pytest.param(vector.context, vector.test, path, id=f"{vector.id}-{path}")
    for vector in vectors("expression")
    for path in PATHS
]


def build(context: dict[str, Any], test: dict[str, Any]) -> Any:
    variables = context.get("variables", {})
    local_types = {**context.get("locals", {}), **test.get("locals", {})}
    if "expression" in test:
        node = compile_expression(test["expression"], variables=variables, locals=local_types)
    else:
        node = test["ir"]
    return compile_ir(
        node,
        variables=variables,
        inputs=context.get("inputs", {}),
        images=tuple(context.get("images", [])),
        locals=local_types,
    )


def same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return actual is expected
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(same(a, e) for a, e in zip(actual, expected, strict=True))
        )
    return bool(actual == expected)


@pytest.mark.parametrize(("context", "test", "path"), CASES)
def test_vector(context: dict[str, Any], test: dict[str, Any], path: str) -> None:
    if test.get("refused"):
        with pytest.raises(InvalidProgram):
            build(context, test)
        return
    expression = build(context, test)
    value, errors = expression.run(expand(test.get("data", {})), path=path)
    codes = [error["code"] for error in errors]
    if "error" in test:
        assert value is None
        assert test["error"] in codes
        span = next(error["span"] for error in errors if error["code"] == test["error"])
        assert len(span) == 4 and span[0] >= 1
    else:
        assert codes == []
        assert same(value, expand(test["value"])), f"got {value!r}"


def test_every_area_has_vectors() -> None:
    areas = sorted(path.stem for path in VECTORS.glob("*.json"))
    assert areas == sorted(
        [
            "arithmetic",
            "comparison",
            "dates",
            "functions",
            "logic",
            "missing",
            "quantifiers",
            "records",
            "refused",
            "text",
            "limits",
            "lists",
        ]
    )
