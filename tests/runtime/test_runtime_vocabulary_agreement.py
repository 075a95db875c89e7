"""The checker and the runtime agree: what the checker accepts loads and runs on both
evaluation paths, and what the runtime would refuse the checker refuses with a positioned
diagnostic. Regressions from issue 9: each of these templates was accepted (201) and then every
create was a 500, or crashed the checker with a traceback.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import runtime as rt
from inspectlang import check_source, compile_source
from inspectlang.vocabulary import (
    ARITHMETIC_OPERATORS,
    BINARY_OPERATORS,
    CHAIN_OPERATORS,
    MAX_EXPRESSION_DEPTH,
    MAX_QUANTIFIER_DEPTH,
    UNARY_OPERATORS,
)
from runtime import load_program
from runtime.program import Program
from tests.runtime.rt_support import NOW, ids

HEADER = """\
template "Agreement"
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

input p
    type: text
    label: "P"
    asked at: create

"""


def with_check(condition: str) -> str:
    return (
        HEADER
        + f"""check c
    name: "C"
    description: "D"
    valid when: {condition}

verdict
    approve when checks.c
"""
    )


def errors_of(source: str) -> list[tuple[str, int]]:
    return [(d.code, d.span.line) for d in check_source(source) if d.severity == "error"]


def run_both_paths(source: str, text: str = "abc", pattern: str = "b") -> list[Any]:
    """Create and finish one inspection on each evaluation path; the two verdicts."""
    program = load_program(compile_source(source))
    verdicts = []
    for path in ("compiled", "reference"):
        on_path: Program = program.with_path(path)  # type: ignore[arg-type]
        values = {"Km": 3, "T": text, "P": pattern}
        inputs = [
            {"identifier": spec.identifier, "value": values[spec.label]}
            for spec in on_path.manifest.inputs
        ]
        state = rt.create(
            on_path,
            {
                "locale": "en_US",
                "delivery": {"channel": "email", "destination": "a@example.com"},
                "car": {"plate": "AB123CD"},
                "inputs": inputs,
            },
            inspection_type="car",
            now=NOW,
            ids=ids(),
            company_id="c1",
            user_id="u1",
        )
        finished = rt.finish(on_path, state, now=NOW)
        verdicts.append((finished.veredict, [g.valid for g in finished.globalValidations]))
    assert verdicts[0] == verdicts[1]
    return verdicts


def deepest_accepted_sum() -> int:
    """The most terms `inputs.km + ... > 1` may have before the checker says E004."""
    terms = 1
    while not errors_of(with_check(" + ".join(["inputs.km"] * (terms + 1)) + " > 1")):
        terms += 1
        assert terms < 4 * MAX_EXPRESSION_DEPTH
    return terms


def test_the_deepest_sum_the_checker_accepts_loads_and_runs() -> None:
    terms = deepest_accepted_sum()
    assert terms >= 45  # the 45-term sum is accepted, and runs
    run_both_paths(with_check(" + ".join(["inputs.km"] * terms) + " > 1"))
    too_deep = with_check(" + ".join(["inputs.km"] * (terms + 1)) + " > 1")
    assert [code for code, _ in errors_of(too_deep)] == ["E004"]


def nested_any(levels: int) -> str:
    opening = "".join(f"any(x{i} in [1, 2] where " for i in range(levels))
    return opening + "inputs.km > 1" + ")" * levels


def test_quantifiers_nest_as_deep_as_the_runtime_allows_and_no_deeper() -> None:
    run_both_paths(with_check(nested_any(MAX_QUANTIFIER_DEPTH)))
    refused = errors_of(with_check(nested_any(MAX_QUANTIFIER_DEPTH + 1)))
    assert refused == [("E004", 23)], refused


def test_matches_with_a_pattern_from_an_input() -> None:
    """docs/language.md allows a computed pattern: it runs, and an invalid one is missing."""
    source = with_check("matches(inputs.t, inputs.p)")
    assert errors_of(source) == []
    assert run_both_paths(source, "abc", "^a.c$")[0] == ("approved", [True])
    assert run_both_paths(source, "abc", "(")[0][1] == [False]  # missing: not valid


def test_a_variable_named_like_a_dunder_is_refused() -> None:
    source = HEADER + 'variable __init__: text = ""\n\nverdict\n    approve when inputs.km > 1\n'
    assert ("E038", 20) in errors_of(source)


@pytest.mark.parametrize(
    ("place", "line"),
    [
        ("variable n: numeric = 0\n\non finish\n    set n to {big}\n", 23),
        ("settings\n    max attempts: {big}\n", 21),
        ("settings\n    link expires after: {big} hours\n", 21),
        ("image front\n    validate date, within {big} hours\n", 21),
        ("image front\n    validate distance, within {big} meters\n", 21),
    ],
)
@pytest.mark.parametrize("digits", [309, 400, 5000, 100_000])
def test_a_literal_of_any_length_is_a_diagnostic(place: str, line: int, digits: int) -> None:
    source = HEADER + place.format(big="9" * digits) + "\nverdict\n    approve when inputs.km > 1\n"
    assert ("E019", line) in errors_of(source)


def test_a_long_maximum_is_a_diagnostic() -> None:
    source = (
        HEADER.replace('    label: "Km"\n', '    label: "Km"\n    maximum: ' + "9" * 400 + "\n", 1)
        + "verdict\n    approve when inputs.km > 1\n"
    )
    assert ("E019", 8) in errors_of(source)


def test_the_command_line_prints_diagnostics_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "big.insp"
    path.write_text(
        HEADER
        + "settings\n    max attempts: "
        + "9" * 5000
        + "\n\nverdict\n    approve when true\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", "from inspectlang.cli import main; raise SystemExit(main())",
         "check", str(path)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    assert "Traceback" not in result.stderr + result.stdout
    assert "error[E019]" in result.stdout + result.stderr


def or_chain(terms: int) -> str:
    return " or ".join(["inputs.km = 1"] * (terms - 1) + ["inputs.km > 1"])


def test_regression_a_flat_or_of_64_terms_is_not_64_levels_deep() -> None:
    for terms in (64, 65, 1000):
        assert errors_of(with_check(or_chain(terms))) == []
        run_both_paths(with_check(or_chain(terms)))


def test_a_chain_inside_the_deepest_nesting_the_checker_accepts_loads_and_runs() -> None:
    """Parser, checker and verifier count a chain as its balanced depth (ceil(log2 terms))."""
    levels = 0
    while not errors_of(with_check("not " * (levels + 1) + f"({or_chain(64)})")):
        levels += 1
        assert levels < 2 * MAX_EXPRESSION_DEPTH
    run_both_paths(with_check("not " * levels + f"({or_chain(64)})"))
    too_deep = with_check("not " * (levels + 1) + f"({or_chain(64)})")
    assert [code for code, _ in errors_of(too_deep)] == ["E004"]
    assert levels >= MAX_EXPRESSION_DEPTH - 10  # the chain costs 6 levels plus its operand's


def test_a_chain_past_the_node_limit_is_refused_by_the_checker_not_the_runtime() -> None:
    # Each `inputs.km = 1` is 3 nodes, each `or` 1: the runtime refuses past MAX_NODES.
    assert [code for code, _ in errors_of(with_check(or_chain(12_600)))] == ["E037"]
    assert errors_of(with_check(or_chain(12_400))) == []
    load_program(compile_source(with_check(or_chain(12_400))))


def test_every_use_of_a_let_counts_toward_the_node_limit() -> None:
    source = with_check("big and big and big and big and big").replace(
        "check c", f"let big = {or_chain(4_000)}\n\ncheck c"
    )
    assert [code for code, _ in errors_of(source)] == ["E037"]


def test_the_deepest_value_a_reason_may_show_loads_and_runs() -> None:
    def source(levels: int) -> str:
        value = "(" * levels + "inputs.km" + ")" * levels
        shown = "-" * levels + "inputs.km"
        return with_check("inputs.km > 1").replace(
            "    approve when checks.c\n",
            f'    disapprove "a {{{value}}} b {{{shown}}} c" when inputs.km > 100\n'
            "    approve when checks.c\n",
        )

    levels = 0
    while not errors_of(source(levels + 1)):
        levels += 1
        assert levels < 2 * MAX_EXPRESSION_DEPTH
    run_both_paths(source(levels))
    assert [code for code, _ in errors_of(source(levels + 1))] == ["E004"]


# -- one operator table: the checker, the verifier and both evaluation paths read it -----------

#: An expression of each type the operators meet (no literal zero: `/ 0` is E030 on its own).
EXEMPLARS = {
    "number": "2",
    "text": '"a"',
    "boolean": "true",
    "date": 'date("2024-01-31")',
    "list<number>": "[1, 2]",
    "list<text>": '["a", "b"]',
}


def _checker_accepts(source: str) -> Any:
    from inspectlang.compiler import compile_expression
    from inspectlang.diagnostics import TemplateError

    try:
        return compile_expression(source)
    except TemplateError:
        return None


@pytest.mark.parametrize("operator", sorted(BINARY_OPERATORS))
def test_the_checker_and_the_runtime_accept_the_same_operands(operator: str) -> None:
    """For every operator of the vocabulary and every pair of operand types: the checker
    accepts exactly what the runtime's verifier accepts, and what both accept gives the same
    value on both evaluation paths."""
    from runtime.errors import InvalidProgram
    from runtime.expression import compile_ir

    disagreements = []
    for left_type, left in EXEMPLARS.items():
        for right_type, right in EXEMPLARS.items():
            node = _checker_accepts(f"{left} {operator} {right}")
            if node is None:
                continue  # refused with a diagnostic: nothing reaches the runtime
            try:
                expression = compile_ir(node)
            except InvalidProgram as error:
                disagreements.append((left_type, right_type, error.message))
                continue
            assert expression.run({}, path="compiled") == expression.run({}, path="reference")
    assert disagreements == []


def test_every_operator_has_one_meaning_on_each_evaluation_path() -> None:
    """The evaluators translate the vocabulary's operators; they define none of their own."""
    from runtime import codegen, reference

    chains = CHAIN_OPERATORS
    assert set(codegen.COMPARE) | set(codegen.ARITHMETIC) | {"in"} | chains == set(BINARY_OPERATORS)
    assert set(codegen.ARITHMETIC) == set(ARITHMETIC_OPERATORS)
    leaves = set(reference._LEAF_SOURCES) - {"-unary"}
    assert leaves | chains == set(BINARY_OPERATORS) | {"not"}
    assert set(UNARY_OPERATORS) == {"not", "-"}


def test_what_the_parser_reads_the_checker_and_the_runtime_accept_for_its_depth() -> None:
    """One depth limit (`vocabulary.MAX_NESTING` is `MAX_EXPRESSION_DEPTH`): the deepest `-`
    nesting the parser reads is checked without E004, loads and runs alike on both paths; one
    more is refused, by the parser."""
    from inspectlang import parser

    assert parser.MAX_NESTING == MAX_EXPRESSION_DEPTH

    def source(minuses: int) -> str:
        return with_check("-" * minuses + "inputs.km > 0")

    deepest = max(
        n
        for n in range(MAX_EXPRESSION_DEPTH + 2)
        if parser.parse_with_diagnostics(source(n))[1] == []
    )
    assert deepest >= MAX_EXPRESSION_DEPTH - 4
    assert errors_of(source(deepest)) == []
    compiled, reference = run_both_paths(source(deepest))
    assert compiled == reference
    assert [code for code, _ in errors_of(source(deepest + 1))] == ["E004"]
