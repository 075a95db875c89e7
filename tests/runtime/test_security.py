"""Sandbox tests in the style of jinja's test_security.py: every escape we could think of.

The runtime never trusts a manifest's logic: each malicious node must be refused at load with
`InvalidProgram` (and an exact message) before any code is generated, and everything that loads
must stay within the limits at run time, on both evaluation paths.
"""

from __future__ import annotations

import copy
import io
import keyword
import tokenize
from typing import Any

import pytest
from rt_support import NOW, car_program, compile_template, create_body, ids

import runtime as rt
from inspectlang.manifest import Template
from inspectlang.vocabulary import MAX_EXPRESSION_DEPTH
from runtime import codegen
from runtime.errors import InvalidProgram
from runtime.expression import compile_ir
from runtime.program import build_program

SPAN = [1, 1, 1, 2]
FRONT = "image_34e34991-46dc-5612-964f-72a0f1661d33"


def lit(value: Any, kind: str | None = None) -> dict[str, Any]:
    node: dict[str, Any] = {"op": "literal", "value": value, "span": SPAN}
    if kind:
        node["type"] = kind
    return node


def image() -> dict[str, Any]:
    return {"op": "image", "id": FRONT, "span": SPAN}


def base() -> dict[str, Any]:
    return car_program().manifest.to_api()


def with_check(valid: dict[str, Any], data: dict[str, Any] | None = None) -> Template:
    data = copy.deepcopy(data or base())
    data["logic"]["checks"][0]["valid"] = valid
    data["logic"]["revision"] = ""
    return Template.from_api(data)


def refused(manifest: Template) -> str:
    with pytest.raises(InvalidProgram) as caught:
        build_program(manifest)
    return caught.value.message


def eq(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    return {"op": "binary", "operator": "=", "left": left, "right": right, "span": SPAN}


# -- attribute and dunder access through every construct ------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("__class__", "invalid name '__class__'"),
        ("__dict__", "invalid name '__dict__'"),
        ("__globals__", "invalid name '__globals__'"),
        ("__init__", "invalid name '__init__'"),
        ("mro", "no field 'mro' on image"),
        ("format", "no field 'format' on image"),
        ("get", "no field 'get' on image"),
        ("keys", "no field 'keys' on image"),
    ],
)
def test_field_on_image_refused(name: str, message: str) -> None:
    node = eq({"op": "field", "of": image(), "name": name, "span": SPAN}, lit(1))
    assert refused(with_check(node)) == message


@pytest.mark.parametrize("name", ["__class__", "__subclasses__", "__builtins__"])
def test_field_on_field_refused(name: str) -> None:
    plate = {"op": "field", "of": image(), "name": "plate", "span": SPAN}
    node = eq({"op": "field", "of": plate, "name": name, "span": SPAN}, lit(1))
    assert refused(with_check(node)) == f"invalid name {name!r}"


def test_field_on_a_number_refused() -> None:
    node = eq({"op": "field", "of": lit(1), "name": "real", "span": SPAN}, lit(1))
    assert refused(with_check(node)) == "no field 'real' on number"


@pytest.mark.parametrize("name", ["open", "eval", "exec", "compile", "getattr"])
def test_python_builtins_are_unknown_variables(name: str) -> None:
    node = eq({"op": "var", "name": name, "span": SPAN}, lit(1))
    assert refused(with_check(node)) == f"unknown variable {name!r}"


def test_dunder_variable_is_an_invalid_name() -> None:
    node = eq({"op": "var", "name": "__import__", "span": SPAN}, lit(1))
    assert refused(with_check(node)) == "invalid name '__import__'"


@pytest.mark.parametrize("fn", ["eval", "open", "__import__", "getattr", "lower(); import os"])
def test_unknown_functions_refused(fn: str) -> None:
    node = {"op": "call", "fn": fn, "args": [lit("x")], "span": SPAN}
    assert refused(with_check(eq(node, lit("x")))) == f"no function {fn!r} taking (text)"


def test_template_variable_with_dunder_name_refused() -> None:
    data = base()
    data["variables"].append({"name": "__import__", "type": "numeric", "initialValue": 0})
    assert refused(Template.from_api(data)) == "invalid name '__import__'"


# -- names with quotes and newlines: refused at load, never compiled ---------------------------


@pytest.mark.parametrize(
    "bad", ["x'] or __import__('os') or d['", 'a"b', "a\nb", "a b", "", "a" * 200, "é"]
)
def test_injected_names_refused(bad: str) -> None:
    for node in (
        {"op": "var", "name": bad, "span": SPAN},
        {"op": "input", "id": bad, "span": SPAN},
        {"op": "image", "id": bad, "span": SPAN},
        {"op": "check", "id": bad, "span": SPAN},
    ):
        # a variable name is a name; input, image and check ids are identifiers
        expected = f"invalid name {bad!r}" if node["op"] == "var" else f"invalid identifier {bad!r}"
        assert refused(with_check(eq(node, lit(1)))) == expected


def test_check_id_with_quote_refused() -> None:
    data = base()
    data["logic"]["checks"][0]["_id"] = "x'); import os; ('"
    assert refused(Template.from_api(data)) == "invalid identifier \"x'); import os; ('\""


@pytest.mark.parametrize("span", [[1, "1)\nimport os", 1, 2], [1, 2, 3], [True, 1, 1, 1], "x"])
def test_injected_spans_refused(span: Any) -> None:
    node = {"op": "literal", "value": True, "type": "boolean", "span": span}
    assert refused(with_check(node)) == f"invalid span {span!r}"


# -- ops and operators outside the whitelist -----------------------------------------------------


@pytest.mark.parametrize("op", ["attr", "getattr", "subscript", "lambda", "import", "exec", None])
def test_unknown_ops_refused(op: Any) -> None:
    assert refused(with_check({"op": op, "span": SPAN})) == f"unknown expression op {op!r}"


@pytest.mark.parametrize("operator", ["**", "//", "%", "<<", "is", "+ __import__('os') +"])
def test_unknown_operators_refused(operator: str) -> None:
    node = {"op": "binary", "operator": operator, "left": lit(2), "right": lit(3), "span": SPAN}
    assert refused(with_check(eq(node, lit(1)))) == f"unknown operator {operator!r}"


def test_text_times_number_refused() -> None:
    node = {"op": "binary", "operator": "*", "left": lit("a"), "right": lit(10**9), "span": SPAN}
    assert refused(with_check(eq(node, lit("a")))) == "operator '*' on text and number"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (None, "invalid literal None"),
        ({"a": 1}, "invalid literal {'a': 1}"),
        ([1], "invalid literal [1]"),
        (float("inf"), "a number literal out of range"),
        (float("nan"), "a number literal out of range"),
        (10**16, "a number literal out of range"),
    ],
)
def test_bad_literals_refused(value: Any, message: str) -> None:
    assert refused(with_check(eq(lit(value), lit(1)))) == message


def test_statement_ops_refused() -> None:
    data = base()
    data["logic"]["rules"][0]["body"] = [{"op": "exec", "code": "import os"}]
    assert refused(Template.from_api(data)) == "unknown statement op 'exec'"


def test_set_of_unknown_variable_refused() -> None:
    data = base()
    data["logic"]["rules"][0]["body"] = [
        {"op": "set", "name": "__builtins__", "value": lit(1), "span": SPAN}
    ]
    assert refused(Template.from_api(data)) == "invalid name '__builtins__'"


def test_matches_with_a_computed_pattern_loads() -> None:
    """docs/language.md allows a computed pattern: it is checked when evaluated (an invalid one
    gives missing and `invalid_pattern`, tests/runtime/test_runtime_vocabulary_agreement.py)."""
    plate = {"op": "product", "field": "plate", "span": SPAN}
    node = {"op": "call", "fn": "matches", "args": [lit("a"), plate], "span": SPAN}
    build_program(with_check(node))


def test_matches_pattern_too_long_refused() -> None:
    node = {"op": "call", "fn": "matches", "args": [lit("a"), lit("a" * 201)], "span": SPAN}
    assert refused(with_check(node)) == "invalid or too long matches pattern"


@pytest.mark.parametrize(
    "pattern",
    [r"(a)\1", r"(?P<x>a)(?P=x)", r"a(?=b)", r"a(?!b)", r"(?<=a)b", r"(?<!a)b", r"a{1001}", "["],
)
def test_matches_backtracking_constructs_refused(pattern: str) -> None:
    # backreferences and lookaround are what RE2 (linear time) cannot run: refused at load
    node = {"op": "call", "fn": "matches", "args": [lit("a"), lit(pattern)], "span": SPAN}
    assert refused(with_check(node)) == "invalid or too long matches pattern"


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        (r"^(a+)+$", "a" * 5000 + "!"),
        (r"^(a|aa)+$", "a" * 5000 + "!"),
        (r"^(a|a?)+$", "a" * 5000 + "!"),
        (r"(.*a){12}", "a" * 5000),
        (r"^(\w+\s?)*$", "word " * 1000 + "!"),
        (r".*.*.*.*.*.*=", "x" * 10000),
    ],
)
@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_matches_cannot_backtrack_catastrophically(pattern: str, text: str, path: str) -> None:
    # with a backtracking engine each of these runs for longer than the universe has existed;
    # on RE2 each is a linear scan (the test timeout would stop a regression)
    node = {"op": "call", "fn": "matches", "args": [lit(text), lit(pattern)], "span": SPAN}
    expected = pattern.startswith("(.*a)")
    assert compile_ir(node).run({}, path=path) == (expected, [])


# -- format strings are plain text ---------------------------------------------------------------


@pytest.mark.parametrize("text", ["{0.__class__}", "%(x)s", "{__import__}", "'; import os; '"])
@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_format_strings_are_just_text(text: str, path: str) -> None:
    expression = compile_ir(
        {"op": "binary", "operator": "+", "left": lit(text), "right": lit("!"), "span": SPAN}
    )
    assert expression.run({}, path=path) == (text + "!", [])


# -- generated code ----------------------------------------------------------------------------


ALLOWED_NAMES = {"env", "d_err", "None", "True", "False"} | set(codegen.HELPERS)


def test_generated_code_names_only_generated_identifiers() -> None:
    data = base()
    data["variables"].append({"name": "evil_name", "type": "text", "initialValue": "__import__"})
    program = build_program(Template.from_api(data))
    source = program.source
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    for token in tokens:
        if token.type != tokenize.NAME or keyword.iskeyword(token.string):
            continue
        name = token.string
        assert (
            name in ALLOWED_NAMES
            or name.startswith(("l_", "d_", "rule_", "check_"))
            or name in ("verdict", "get", "append", "lower", "upper")
        ), name
    assert "evil_name" not in source.replace("'evil_name'", "")


def test_generated_functions_have_no_builtins() -> None:
    program = car_program()
    for function in program.functions.values():
        assert function.__globals__["__builtins__"] == {}
        assert set(function.__globals__) <= set(codegen.HELPERS) | set(program.functions)


def test_compile_once_per_revision() -> None:
    first = car_program()
    second = car_program()
    assert first is second
    assert first.functions["verdict"] is second.functions["verdict"]


# -- sizes: numbers, texts, nesting, comprehension bombs -------------------------------------


def chain(operator: str, leaf: dict[str, Any], count: int) -> dict[str, Any]:
    node = leaf
    for _ in range(count):
        node = {"op": "binary", "operator": operator, "left": node, "right": leaf, "span": SPAN}
    return node


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_huge_multiplication_gives_missing(path: str) -> None:
    expression = compile_ir(chain("*", lit(10), 40))
    value, errors = expression.run({}, path=path)
    assert value is None
    assert [e["code"] for e in errors][:1] == ["number_too_large"]


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_huge_concatenation_gives_missing(path: str) -> None:
    expression = compile_ir(
        chain("+", {"op": "var", "name": "s", "span": SPAN}, 30), variables={"s": "text"}
    )
    value, errors = expression.run({"vars": {"s": "a" * 1000}}, path=path)
    assert value is None
    assert errors[0]["code"] == "text_too_long"


def test_deep_nesting_refused() -> None:
    node: dict[str, Any] = lit(True)
    for _ in range(1000):
        node = {"op": "unary", "operator": "not", "operand": node, "span": SPAN}
    assert refused(with_check(node)) == f"expressions nested deeper than {MAX_EXPRESSION_DEPTH}"


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_nesting_at_the_limit_compiles_and_runs(path: str) -> None:
    node: dict[str, Any] = lit(True)
    for index in range(40):
        operator = "and" if index % 2 else "or"
        node = {
            "op": "binary",
            "operator": operator,
            "left": lit(index % 2 == 1),
            "right": node,
            "span": SPAN,
        }
    assert compile_ir(node).run({}, path=path) == (True, [])


def quantifier(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = lit(True)
    for level in range(depth):
        node = {
            "op": "any",
            "var": f"x{level}",
            "over": {"op": "validations", "span": SPAN},
            "where": node,
            "span": SPAN,
        }
    return node


def test_quantifier_nesting_refused() -> None:
    assert refused(with_check(quantifier(9))) == "count/any/all/sum nested deeper than 8"


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_comprehension_bomb_stops_at_step_limit(path: str) -> None:
    expression = compile_ir(quantifier(8))
    records = [
        {
            "name": "plate",
            "valid": False,
            "confidence": 1,
            "result": None,
            "ran": True,
            "required": True,
        }
    ] * 10_000
    bomb = {
        "op": "count",
        "var": "a",
        "over": {"op": "validations", "span": SPAN},
        "where": {
            "op": "binary",
            "operator": ">",
            "span": SPAN,
            "left": {
                "op": "count",
                "var": "b",
                "over": {"op": "validations", "span": SPAN},
                "where": lit(True),
                "span": SPAN,
            },
            "right": lit(0),
        },
        "span": SPAN,
    }
    value, errors = compile_ir(bomb).run({"validations": records}, path=path)
    assert value is None
    assert errors == [{"code": "step_limit", "span": SPAN}]
    assert expression.run({"validations": records[:3]}, path=path) == (True, [])


def test_list_literal_too_long_refused() -> None:
    node = {"op": "list", "items": [lit(1)] * 10_001, "span": SPAN}
    count = {"op": "count", "var": None, "where": None, "over": node, "span": SPAN}
    assert refused(with_check(eq(count, lit(1)))) == "a list needs at most 10000 items"


def test_text_literal_too_long_refused() -> None:
    assert (
        refused(with_check(eq(lit("a" * 10_001), lit("a")))) == "a text literal longer than 10000"
    )


# -- whole inspections: loops of rules stay bounded ----------------------------------------------

LOOP_SOURCE = """
template "Loop"
    type: car

variable s: text = "ab"
variable n: numeric = 2

image front
    validate plate

on image uploaded
    set s to s + s + s + s
    set s to s + s + s + s
    set s to s + s + s + s
    set s to s + s + s + s
    set s to s + s + s + s
    set s to s + s + s + s
    set s to s + s + s + s
    set s to s + s + s + s
    set n to n * n * n * n
    set n to n * n * n * n
    set n to n * n * n * n
    set n to n * n * n * n
    set n to n * n * n * n
    set n to n * n * n * n
    set n to n * n * n * n
    set n to n * n * n * n

verdict
    approve when length(s) > 0
"""


@pytest.mark.parametrize("path", ["compiled", "reference"])
def test_repeated_concatenation_across_events_stays_bounded(path: str) -> None:
    program = rt.load_program(compile_template(LOOP_SOURCE)).with_path(path)
    body = {
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@b.co"},
        "car": {},
        "inputs": [],
    }
    state = rt.create(program, body, inspection_type="car", now=NOW, ids=ids())
    product = state.products[0].id
    image_ids = ids("f")
    for _ in range(3):
        upload = rt.ImageUpload(data=b"not an image", side="front")
        state, _ = rt.add_image(program, state, product, upload, now=NOW, ids=image_ids)
    assert len(state.variables["s"]) <= 10_000
    assert abs(state.variables["n"]) <= 1e15
    codes = {error.code for error in state.ruleErrors}
    assert codes == {"text_too_long", "number_too_large", "missing_value"}


def test_create_body_is_not_code() -> None:
    program = car_program()
    body = create_body(metadata={"__class__": "{0.__globals__}"})
    body["car"]["plate"] = "__import__('os').system('x')"
    state = rt.create(program, body, inspection_type="car", now=NOW, ids=ids())
    assert state.product(state.products[0].id).data["plate"] == "__import__('os').system('x')"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ({"op": "local", "name": "__class__", "span": SPAN}, "invalid name '__class__'"),
        (
            {"op": "event", "field": "__globals__", "span": SPAN},
            "unknown event subject '__globals__'",
        ),
        ({"op": "product", "field": "__dict__", "span": SPAN}, "unknown product field '__dict__'"),
        ({"op": "consumer", "field": "mro", "span": SPAN}, "unknown consumer field 'mro'"),
        (
            {"op": "field", "of": {"op": "now", "span": SPAN}, "name": "format", "span": SPAN},
            "no field 'format' on date",
        ),
        (
            {"op": "field", "of": {"op": "damages", "span": SPAN}, "name": "pop", "span": SPAN},
            "no field 'pop' on list<damage>",
        ),
    ],
)
def test_dunders_through_every_source_refused(node: dict[str, Any], message: str) -> None:
    assert refused(with_check(eq(node, lit(1)))) == message
