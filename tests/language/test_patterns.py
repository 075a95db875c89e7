"""Regular expressions: the checker refuses exactly what the runtime's RE2 refuses (E029 with the
pattern's position), and validating a creation body never backtracks on a hostile pattern."""

from __future__ import annotations

import pytest

from inspectlang.compiler import check_source, compile_source
from inspectlang.diagnostics import Diagnostic
from inspectlang.manifest import Template
from inspectlang.patterns import MAX_PATTERN, compiled_pattern, pattern_problem, pattern_search
from inspectlang.schema import creation_validator
from runtime import values
from runtime.errors import InspectionError
from runtime.intake import check_input_value, check_inputs

HEADER = 'template "T"\n    type: car\n'
VERDICT = "verdict\n    approve when all(i in images where i.approved)\n"
#: Exponential for a backtracking engine on `"a" * n + "!"`; linear for RE2.
NESTED = "(a+)+$"
HOSTILE_VALUE = "a" * 50_000 + "!"

REFUSED = {
    "(?=a)a": "lookahead",
    "a(?!b)": "lookahead",
    "(?<=x)y": "lookbehind",
    "(?<!x)y": "lookbehind",
    "(a)\\1": "backreferences",
    "(?P<n>a)(?P=n)": "backreferences",
    "a{1001}": "at most 1000",
    "[a-": "missing ]",
    "(": "missing )",
    "x" * (MAX_PATTERN + 1): "longer than 200",
}
ACCEPTED = ["^[A-Z]{3}$", NESTED, "a{1000}", "(?i)abc", "\\d+", "\\bfoo\\b", "(?P<n>a)", "x" * 200]


def only_e029(diagnostics: list[Diagnostic]) -> Diagnostic:
    assert [d.code for d in diagnostics] == ["E029"], [d.render() for d in diagnostics]
    return diagnostics[0]


def quoted(pattern: str) -> str:
    return '"' + pattern.replace("\\", "\\\\") + '"'


@pytest.mark.parametrize(("pattern", "why"), REFUSED.items())
def test_the_checker_refuses_an_input_pattern_re2_refuses(pattern: str, why: str) -> None:
    source = HEADER + f"input code\n    type: text\n    pattern: {quoted(pattern)}\n" + VERDICT
    diagnostic = only_e029(check_source(source, "t.insp"))
    assert (diagnostic.span.line, diagnostic.span.column) == (5, 14)
    assert why in diagnostic.message


@pytest.mark.parametrize(("pattern", "why"), REFUSED.items())
def test_the_checker_refuses_a_matches_literal_re2_refuses(pattern: str, why: str) -> None:
    source = (
        HEADER
        + 'variable t: text = ""\ncheck c\n'
        + f"    valid when: matches(t, {quoted(pattern)})\n"
        + VERDICT
    )
    diagnostic = only_e029(check_source(source, "t.insp"))
    assert (diagnostic.span.line, diagnostic.span.column) == (5, 28)
    assert why in diagnostic.message


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_patterns_re2_runs_compile(pattern: str) -> None:
    source = (
        HEADER
        + f"input code\n    type: text\n    pattern: {quoted(pattern)}\n"
        + 'variable t: text = ""\ncheck c\n'
        + f"    valid when: matches(t, {quoted(pattern)})\n    for information\n"
        + VERDICT
    )
    assert check_source(source, "t.insp") == []


def test_the_runtime_uses_the_checkers_pattern_rules() -> None:
    # One definition: what E029 refuses is exactly what `matches` cannot run.
    assert values.compiled_pattern is compiled_pattern


@pytest.mark.parametrize("pattern", [*REFUSED, *ACCEPTED])
def test_a_pattern_compiles_exactly_when_it_has_no_problem(pattern: str) -> None:
    assert (compiled_pattern(pattern) is None) == (pattern_problem(pattern) is not None)


@pytest.fixture(scope="module")
def nested() -> Template:
    source = HEADER + f"input code\n    type: text\n    pattern: {quoted(NESTED)}\n" + VERDICT
    return compile_source(source, "nested.insp")


def test_the_schema_refuses_a_hostile_value_of_a_nested_repeat(nested: Template) -> None:
    identifier = nested.inputs[0].identifier
    body = {"locale": "es_AR", "delivery": {"channel": "email", "destination": "a@b.co"}}
    errors = list(
        creation_validator(nested).iter_errors({**body, "inputs": {identifier: HOSTILE_VALUE}})
    )
    assert [error.validator for error in errors] == ["pattern"]
    assert "does not match '(a+)+$'" in errors[0].message
    assert (
        list(creation_validator(nested).iter_errors({**body, "inputs": {identifier: "aaa"}})) == []
    )


def test_intake_refuses_a_hostile_value_of_a_nested_repeat(nested: Template) -> None:
    spec = nested.inputs[0]
    _, problems = check_input_value(nested, spec, HOSTILE_VALUE)
    assert problems == [
        {"field": spec.identifier, "code": "max_length", "message": "at most 10000 characters"},
        {"field": spec.identifier, "code": "pattern", "message": "must match (a+)+$"},
    ]
    short = "a" * 9_999 + "!"  # within the length limit: only the pattern is broken
    assert [p["code"] for p in check_input_value(nested, spec, short)[1]] == ["pattern"]
    assert check_input_value(nested, spec, "a" * 10_000) == ("a" * 10_000, [])
    with pytest.raises(InspectionError) as raised:
        check_inputs(nested, {spec.identifier: HOSTILE_VALUE}, stage="create", locale="es_AR")
    assert raised.value.code == "invalid_input_value"


def test_a_manifest_whose_pattern_re2_refuses_gets_a_clear_problem(nested: Template) -> None:
    """A manifest loaded from JSON skips the checker; its pattern is refused, never run by `re`."""
    data = nested.to_api()
    identifier = nested.inputs[0].identifier
    data["inputs"][0]["validationSchema"]["pattern"] = "(a)\\1"
    data["schema"]["properties"]["inputs"]["properties"][identifier]["pattern"] = "(a)\\1"
    hand_made = Template.from_api(data)
    spec = hand_made.inputs[0]
    assert check_input_value(hand_made, spec, "aa")[1] == [
        {
            "field": spec.identifier,
            "code": "pattern",
            "message": "the template's pattern cannot be used",
        }
    ]
    with pytest.raises(InspectionError) as raised:
        check_inputs(hand_made, {spec.identifier: "aa"}, stage="create", locale="es_AR")
    assert raised.value.code == "invalid_input_value"
    assert raised.value.errors[0]["code"] == "pattern"


def test_pattern_search_is_none_only_for_refused_patterns() -> None:
    assert pattern_search(NESTED, HOSTILE_VALUE) is False
    assert pattern_search("b", "abc") is True
    assert pattern_search("(?=a)", "abc") is None
