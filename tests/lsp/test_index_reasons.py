"""Names inside a reason's `{...}` values are indexed like any expression's: hover, definition,
references and rename reach them (issue 15)."""

from __future__ import annotations

from inspectlang.lsp.index import Symbol, build_index

SOURCE = """template "T"
    type: car

input km
    type: numeric
    label: "Mileage"
    asked at: create

verdict
    disapprove "Mileage {inputs.km} km is over {{the}} limit" when inputs.km > 100
    approve when true
    otherwise "Mileage {inputs.km} km"
"""


def column_of(line: int, text: str, nth: int = 0) -> int:
    """1-based column of the `nth` occurrence of `text` on 1-based `line`."""
    content = SOURCE.splitlines()[line - 1]
    start = -1
    for _ in range(nth + 1):
        start = content.index(text, start + 1)
    return start + 1


def test_a_name_inside_a_reason_hovers_and_is_a_reference() -> None:
    index = build_index(SOURCE)
    column = column_of(10, "km}")
    found = index.occurrence_at(10, column)
    assert found is not None and found.symbol == Symbol("input", "km")
    assert (found.span.line, found.span.column, found.span.end_column) == (10, column, column + 2)
    hover = index.hover(10, column)
    assert hover is not None and "input km" in hover and "Mileage" in hover
    references = index.references(Symbol("input", "km"))
    # The declaration, the disapproval's reason and condition, the otherwise reason.
    assert sorted((r.span.line, r.span.column) for r in references) == [
        (4, 7),
        (10, column),
        (10, column_of(10, "km >")),
        (12, column_of(12, "km}")),
    ]


def test_a_reason_that_does_not_parse_adds_nothing() -> None:
    broken = SOURCE.replace("{inputs.km} km is", "{inputs.} km is")
    index = build_index(broken)
    assert len(index.references(Symbol("input", "km"))) == 3


def test_a_review_line_is_indexed_like_a_disapproval() -> None:
    """`review "REASON" when CONDITION`: names in its reason and its condition are uses, and
    `review` is offered as a keyword inside the verdict."""
    source = SOURCE.replace(
        "    approve when true\n",
        '    review "A person checks {inputs.km} km" when inputs.km > 50\n    approve when true\n',
    )
    index = build_index(source)
    line = 11
    content = source.splitlines()[line - 1]
    in_reason = content.index("km}") + 1
    in_condition = content.index("km >") + 1
    for column in (in_reason, in_condition):
        found = index.occurrence_at(line, column)
        assert found is not None and found.symbol == Symbol("input", "km"), column
    assert len(index.references(Symbol("input", "km"))) == 6
    keywords = {label for label, kind, _ in index.completions(line, 5) if kind == "keyword"}
    assert "review" in keywords


TRANSLATED = """template "T"
    type: car
    locales: en_US, es_AR, pt_BR

input km
    type: numeric
    label: "Mileage"
    asked at: create

verdict
    disapprove "Mileage {inputs.km} km" when inputs.km > 100
        reason es_AR: "Kilometraje {inputs.km} km"
"""


def test_a_name_inside_a_translated_reason_is_a_reference_and_renames() -> None:
    """Issue 25: `reason es_AR:` under a verdict line shows values as its line does."""
    index = build_index(TRANSLATED)
    line = TRANSLATED.splitlines()[11]
    column = line.index("km}") + 1
    found = index.occurrence_at(12, column)
    assert found is not None and found.symbol == Symbol("input", "km")
    spans = [(o.span.line, o.span.column) for o in index.references(Symbol("input", "km"))]
    assert (12, column) in spans


def test_the_reason_key_hovers_and_its_locale_is_completed() -> None:
    index = build_index(TRANSLATED)
    hover = index.hover(12, 10)
    assert hover is not None and "reason LOCALE" in hover
    typing = build_index(TRANSLATED + "        reason ")
    found = typing.completions(13, len("        reason ") + 1)
    assert found == [("es_AR", "keyword", "locale"), ("pt_BR", "keyword", "locale")]
