"""Property: every template the checker accepts loads in the runtime and runs a sequence of
events on both evaluation paths, with no exception escaping and the same outcome on each.

The generator writes well-typed expressions (so that the checker accepts most of them) of every
function of the vocabulary, quantifiers over images and list literals, and shapes that reach the
limits both sides must agree on: long `+` chains near the expression depth, quantifiers nested
near the quantifier depth, literals near and past the largest number, computed patterns.
Templates the checker refuses are fine; a template it accepts and the runtime refuses, or one
whose run raises, is the bug this guards against (issue 9: accepted with 201, then every create
answered 500).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import runtime as rt
from inspectlang import check_source, compile_source
from inspectlang.vocabulary import MAX_EXPRESSION_DEPTH, MAX_QUANTIFIER_DEPTH
from runtime import ImageUpload, load_program
from runtime.program import Program
from tests.runtime.rt_support import NOW, at, ids, jpeg

HEADER = """\
template "Generated"
    type: car
    locales: en_US

input km
    type: numeric
    label: "Km"
    asked at: create

input t
    type: text
    label: "T"
    asked at: create

input flag
    type: check
    label: "Flag"
    asked at: update

image front
    validate plate, optional

variable n: numeric = 1
variable s: text = "a"

"""

Draw = st.DrawFn


def number_literal(draw: Draw) -> str:
    value = draw(
        st.one_of(
            st.integers(0, 1000),
            st.sampled_from([10**15, 10**15 + 1, 10**16, 10**300, 10**400]),
            st.floats(0, 1e6, allow_nan=False).map(lambda x: round(x, 3)),
        )
    )
    return str(value)


@st.composite
def numbers(draw: Draw, depth: int = 0, loops: int = 0, bound: str | None = None) -> str:
    if depth > 4:
        return draw(st.sampled_from(["inputs.km", "n", "1"]))
    choice = draw(st.integers(0, 12))
    sub = depth + 1
    if choice == 0:
        return number_literal(draw)
    if choice == 1:
        return draw(st.sampled_from(["inputs.km", "n", "images.front.attempts"]))
    if choice == 2:
        operator = draw(st.sampled_from(["+", "-", "*", "/"]))
        left = draw(numbers(sub, loops, bound))
        right = draw(numbers(sub, loops, bound))
        return f"({left} {operator} {right})"
    if choice == 3:
        function = draw(st.sampled_from(["abs", "round", "length"]))
        argument = draw(texts(sub, loops)) if function == "length" else draw(numbers(sub, loops))
        return f"{function}({argument})"
    if choice == 4:
        function = draw(st.sampled_from(["min", "max"]))
        arguments = draw(st.lists(numbers(sub, loops, bound), min_size=1, max_size=3))
        return f"{function}({', '.join(arguments)})"
    if choice == 5:
        return f"round({draw(numbers(sub, loops))}, {draw(st.integers(0, 3))})"
    if choice == 6 and loops < MAX_QUANTIFIER_DEPTH + 1:
        var = f"q{loops}"
        return f"count({var} in images where {draw(image_conditions(var, sub, loops + 1))})"
    if choice == 7 and loops < MAX_QUANTIFIER_DEPTH + 1:
        var = f"q{loops}"
        return f"sum({var} in [1, 2, 3] of {var} * {draw(numbers(sub, loops + 1, var))})"
    if choice == 8:
        return f"days_between({draw(dates(sub))}, {draw(dates(sub))})"
    if choice == 9:
        # A long chain near the depth limit both sides share.
        terms = draw(st.integers(MAX_EXPRESSION_DEPTH - 8, MAX_EXPRESSION_DEPTH + 2))
        return "(" + " + ".join(["inputs.km"] * terms) + ")"
    if choice == 10 and bound is not None:
        return bound
    return draw(st.sampled_from(["inputs.km", "n", "0.5"]))


@st.composite
def texts(draw: Draw, depth: int = 0, loops: int = 0) -> str:
    if depth > 4:
        return draw(st.sampled_from(['"x"', "inputs.t", "s"]))
    choice = draw(st.integers(0, 4))
    if choice == 0:
        return draw(
            st.sampled_from(['"abc"', '""', '"ÁÉ í"', "inputs.t", "s", "images.front.side"])
        )
    if choice == 1:
        function = draw(st.sampled_from(["lower", "upper", "trim", "normalize", "text"]))
        return f"{function}({draw(texts(depth + 1, loops))})"
    if choice == 3:
        sub = depth + 1
        return draw(
            st.sampled_from(
                [
                    f'replace({draw(texts(sub, loops))}, {draw(texts(sub, loops))}, "-")',
                    f"substring({draw(texts(sub, loops))}, {draw(numbers(sub, loops))})",
                    f'extract({draw(texts(sub, loops))}, "[a-z]+")',
                    f"text({draw(numbers(sub, loops))})",
                ]
            )
        )
    if choice == 2:
        return "images.front.plate.result"
    return draw(st.sampled_from(["inputs.t", "s"]))


@st.composite
def dates(draw: Draw, depth: int = 0) -> str:
    choice = draw(st.integers(0, 2))
    if choice == 0:
        return "today()"
    if choice == 1:
        return 'date("2024-02-29")'
    return f"add_days(today(), {draw(numbers(depth + 1))})"


@st.composite
def image_conditions(draw: Draw, var: str, depth: int, loops: int) -> str:
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return f"{var}.approved"
    if choice == 1:
        return f"{var}.attempts > {draw(numbers(depth + 1, loops))}"
    if choice == 2 and loops < MAX_QUANTIFIER_DEPTH + 1:
        inner = f"q{loops}"
        return f"any({inner} in images where {draw(image_conditions(inner, depth + 1, loops + 1))})"
    return draw(conditions(depth + 1, loops))


@st.composite
def conditions(draw: Draw, depth: int = 0, loops: int = 0) -> str:
    if depth > 4:
        return draw(st.sampled_from(["true", "inputs.flag", "n > 0"]))
    choice = draw(st.integers(0, 10))
    sub = depth + 1
    if choice == 0:
        operator = draw(st.sampled_from(["<", "<=", ">", ">=", "=", "!="]))
        return f"{draw(numbers(sub, loops))} {operator} {draw(numbers(sub, loops))}"
    if choice == 1:
        return f"{draw(texts(sub, loops))} = {draw(texts(sub, loops))}"
    if choice == 2:
        operator = draw(st.sampled_from(["and", "or"]))
        return f"({draw(conditions(sub, loops))} {operator} {draw(conditions(sub, loops))})"
    if choice == 3:
        return f"not {draw(conditions(sub, loops))}"
    if choice == 4:
        function = draw(st.sampled_from(["contains", "starts_with", "ends_with", "matches"]))
        return f"{function}({draw(texts(sub, loops))}, {draw(texts(sub, loops))})"
    if choice == 5:
        pattern = draw(st.sampled_from(['"^a"', '"[0-9]+"', '"b|c"']))
        return f"matches({draw(texts(sub, loops))}, {pattern})"
    if choice == 6:
        return f"defined({draw(st.sampled_from(['inputs.km', 'inputs.flag', 'inputs.t']))})"
    if choice == 7 and loops < MAX_QUANTIFIER_DEPTH + 1:
        kind = draw(st.sampled_from(["any", "all"]))
        var = f"q{loops}"
        return f"{kind}({var} in images where {draw(image_conditions(var, sub, loops + 1))})"
    if choice == 8:
        return f"{draw(dates(sub))} <= today()"
    if choice == 9:
        # A flat `and`/`or` chain: one level of the language, however long (issue 15).
        operator = draw(st.sampled_from(["and", "or"]))
        terms = draw(st.sampled_from([2, 63, 64, 65, 300]))
        inner = draw(conditions(sub, loops))
        return "(" + f" {operator} ".join([*(["inputs.flag"] * (terms - 1)), inner]) + ")"
    return draw(st.sampled_from(["inputs.flag", "images.front.approved", "n > 0", "false"]))


@st.composite
def templates(draw: Draw) -> str:
    rule = (
        "on input set\n"
        f"    set n to {draw(numbers())}\n"
        f"    if {draw(conditions())}\n"
        f"        set s to {draw(texts())}\n"
    )
    check = f'check c\n    name: "C"\n    description: "D"\n    valid when: {draw(conditions())}\n'
    verdict = (
        "verdict\n"
        f'    disapprove "Too far" when {draw(conditions())}\n'
        f"    approve when checks.c or {draw(conditions())}\n"
    )
    return HEADER + rule + "\n" + check + "\n" + verdict


def run(program: Program, km: Any, text: str) -> tuple[Any, ...]:
    """Create, update, upload the photo, finish; the outcome the two paths must share."""
    state = rt.create(
        program,
        {
            "locale": "en_US",
            "delivery": {"channel": "email", "destination": "a@example.com"},
            "car": {"plate": "AB123CD"},
            "inputs": [
                {"identifier": spec.identifier, "value": value}
                for spec, value in zip(program.manifest.inputs[:2], (km, text), strict=True)
            ],
        },
        inspection_type="car",
        now=NOW,
        ids=ids(),
        company_id="c1",
        user_id="u1",
    )
    flag = program.manifest.inputs[2].identifier
    state = rt.update(program, state, {"inputs": [{"identifier": flag, "value": True}]}, now=at(1))
    product = state.products[0].id
    state, _ = rt.add_image(
        program, state, product, ImageUpload(data=jpeg(), side="front"), now=at(2), ids=ids("i")
    )
    state = rt.finish(program, state, now=at(3))
    return (
        state.veredict,
        tuple(state.reasons),
        tuple(sorted(state.variables.items())),
        tuple(g.valid for g in state.globalValidations),
    )


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(templates(), st.sampled_from([0, 7, 10**15]), st.sampled_from(["abc", "", "Ñandú 12"]))
def test_what_the_checker_accepts_loads_and_runs_alike_on_both_paths(
    source: str, km: Any, text: str
) -> None:
    errors = sorted({d.code for d in check_source(source) if d.severity == "error"})
    event(f"refused: {', '.join(errors)}" if errors else "accepted")
    if errors:
        return  # refused with a diagnostic: nothing the runtime has to run
    program = load_program(compile_source(source))  # never InvalidProgram
    compiled = run(program.with_path("compiled"), km, text)
    reference = run(program.with_path("reference"), km, text)
    assert compiled == reference
