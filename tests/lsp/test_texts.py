"""Every name of the vocabulary has a hover text, and the index finds what a template uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspectlang.lsp import texts
from inspectlang.lsp.index import Symbol, build_index
from inspectlang.manifest import FEATURE_NAMES, VALIDATION_NAMES
from inspectlang.vocabulary import FUNCTIONS

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.insp"))


def test_every_function_validation_and_feature_has_a_hover_text() -> None:
    assert set(FUNCTIONS) <= set(texts.FUNCTIONS)
    assert set(VALIDATION_NAMES) <= set(texts.VALIDATIONS)
    assert all(texts.VALIDATIONS.values())  # each entry of inspectlang.validations says it
    assert set(FEATURE_NAMES) <= set(texts.FEATURES)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_use_of_a_declared_name_points_at_its_declaration(path: Path) -> None:
    source = path.read_text()
    index = build_index(source)
    lines = source.splitlines()
    assert index.occurrences
    for occurrence in index.occurrences:
        span = occurrence.span
        assert lines[span.line - 1][span.column - 1 : span.end_column - 1] == occurrence.symbol.name
        if not occurrence.definition and occurrence.symbol.kind != "feature":
            assert index.definition(occurrence.symbol) is not None, occurrence


def test_a_quantifier_variable_is_not_the_variable_it_shadows() -> None:
    source = (
        'template "Shadow"\n    type: car\n\nvariable i: numeric = 0\n\n'
        "verdict\n    approve when all(i in images where i.approved) and i = 0\n"
    )
    index = build_index(source)
    uses = [o for o in index.references(Symbol("variable", "i")) if not o.definition]
    column = source.splitlines()[6].rindex("i = 0") + 1
    assert [(o.span.line, o.span.column) for o in uses] == [(7, column)]


def test_hover_and_completion_know_the_list_functions() -> None:
    source = (
        'template "Lists"\n    type: car\n\nimage front\n\n'
        'let failed = join(map(i in filter(i in images where not i.approved) of i.side), ", ")\n'
        'let parts = split(car.plate, " ")\n\n'
        'verdict\n    disapprove "Not approved: {failed}" when count(parts) > 3\n'
    )
    index = build_index(source)
    line = source.splitlines()[5]
    for name in ("join", "map", "filter"):
        hover = index.hover(6, line.index(f"{name}(") + 2)
        assert hover is not None and f"{name}(" in hover, name
    split = index.hover(7, source.splitlines()[6].index("split(") + 2)
    assert split is not None and "list of text" in split
    offered = {label for label, kind, _ in index.completions(6, 14) if kind == "function"}
    assert {"filter", "map", "join", "split"} <= offered


def test_hover_explains_an_if_then_else_expression_on_each_of_its_words() -> None:
    source = (
        'template "Scores"\n    type: car\n\n'
        "let score = (if car.year < 2010 then 3 else 0) + number(car.year < 2000)\n\n"
        "verdict\n    approve when score < 3\n"
    )
    index = build_index(source)
    line = source.splitlines()[3]
    for word in ("if", "then", "else"):
        hover = index.hover(4, line.index(f"{word} ") + 1)
        assert hover is not None and "if C then A else B" in hover, word


def test_for_information_hovers_and_is_completed() -> None:
    source = (
        'template "Info"\n    type: car\n\ninput km\n    type: numeric\n    required\n\n'
        "check low\n    valid when: inputs.km < 300000\n    for information\n\n"
        "verdict\n    approve when true\n"
    )
    index = build_index(source)
    hover = index.hover(10, 9)
    assert hover is not None and "**for information**" in hover and "W017" in hover
    required = index.hover(6, 6)
    assert required is not None and "**required**" in required
    typing = build_index(source.replace("    for information\n", "    for \n"))
    assert ("for information", "keyword", "") in typing.completions(10, 9)
