"""`not before: OTHER` / `not after: OTHER` of a date input: the key hovers, the other input's
name is a reference to it (hover, rename), and after the key the date inputs are offered."""

from __future__ import annotations

from inspectlang.lsp.index import Symbol, build_index

SOURCE = """template "T"
    type: goods

input promised
    type: date
    label: "Promised date"

input count
    type: numeric

input delivered
    type: date
    asked at: update
    not before: promised
"""


def test_the_order_hovers_and_names_its_input() -> None:
    index = build_index(SOURCE)
    hover = index.hover(14, 6)
    assert hover is not None and "not before" in hover and "refused" in hover
    column = SOURCE.splitlines()[13].index("promised") + 1
    found = index.occurrence_at(14, column)
    assert found is not None and found.symbol == Symbol("input", "promised")
    named = index.hover(14, column)
    assert named is not None and "Promised date" in named
    spans = [(r.span.line, r.span.column) for r in index.references(Symbol("input", "promised"))]
    assert spans == [(4, 7), (14, column)]


def test_after_the_key_only_date_inputs_are_offered() -> None:
    typing = build_index(SOURCE + "    not after: pro\n")
    found = typing.completions(15, len("    not after: p") + 1)
    assert found == [("promised", "input", "date input"), ("delivered", "input", "date input")]
