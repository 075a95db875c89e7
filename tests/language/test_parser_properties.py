"""Property tests of the parser and the formatter (hypothesis).

`parse(format_module(tree)) == tree` for generated trees of every kind; formatting is
idempotent; and no input at all, random or a mutation of the syntax.md example, makes the parser
raise anything but diagnostics with positions.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspectlang import ast
from inspectlang.diagnostics import CODES
from inspectlang.formatter import format_module, format_source
from inspectlang.parser import parse, parse_with_diagnostics

from .strategies import expressions, modules, mutated

SYNTAX_MD = Path(__file__).resolve().parents[2] / "docs" / "design" / "syntax.md"
EXAMPLE = SYNTAX_MD.read_text(encoding="utf-8").split("```\n", 2)[1].split("```")[0]

COMMON = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@COMMON
@given(modules)
def test_parse_of_format_gives_the_same_tree(module: ast.Module) -> None:
    text = format_module(module)
    assert parse(text, "generated.insp") == module, text


@COMMON
@given(modules)
def test_format_is_idempotent(module: ast.Module) -> None:
    text = format_module(module)
    assert format_source(text) == text


@COMMON
@given(expressions)
def test_every_expression_round_trips_inside_a_check(expression: ast.Expr) -> None:
    check = ast.CheckDecl("c", (ast.Property("valid when", (expression,)),))
    module = ast.Module((check,))
    assert parse(format_module(module)) == module


def _assert_well_formed(source: str) -> None:
    module, diagnostics = parse_with_diagnostics(source, "fuzz.insp")
    if not diagnostics:
        assert module is not None
        return
    # Lines end with \n, \r\n or a lone \r (old Mac), as the parser reads them.
    line_count = max(source.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1, 1)
    for diagnostic in diagnostics:
        assert diagnostic.code in CODES
        assert diagnostic.filename == "fuzz.insp"
        span = diagnostic.span
        assert 1 <= span.line <= line_count + 1
        assert span.column >= 1
        assert (span.end_line, span.end_column) > (span.line, span.column)


@COMMON
@given(st.text(max_size=300))
def test_arbitrary_text_gives_a_module_or_diagnostics(source: str) -> None:
    _assert_well_formed(source)


_SOURCE_ALPHABET = st.sampled_from(list(' \t\n"#():,.=<>+-*/[]\\x0123456789abcnotifelsewhr'))


@COMMON
@given(st.lists(st.text(alphabet=_SOURCE_ALPHABET, max_size=40), max_size=10).map("\n".join))
def test_text_made_of_syntax_characters_never_breaks_the_parser(source: str) -> None:
    _assert_well_formed(source)


def mutated_example() -> st.SearchStrategy[str]:
    """The syntax.md example with a few characters or lines deleted, inserted or duplicated."""
    return mutated([EXAMPLE], _SOURCE_ALPHABET)


@COMMON
@given(mutated_example())
def test_mutations_of_the_example_give_a_module_or_diagnostics(source: str) -> None:
    _assert_well_formed(source)
    module, diagnostics = parse_with_diagnostics(source, "fuzz.insp")
    # Recovery: a problem in one declaration never loses all the others.
    assert module is not None and (not diagnostics or len(module.declarations) > 0)
