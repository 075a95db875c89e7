"""`inspectlang.lexer.QuickStartLexer` produces exactly the tokens of Lark's own contextual lexer,
while its states borrow the alternation of all terminals and after they compiled their own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from inspectlang import lexer as quick_lexer
from inspectlang.parser import _Indentation

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted([*ROOT.glob("examples/**/*.insp"), *ROOT.glob("inspectlang/builtins/*.insp")])

#: Lines where a keyword or a property key is read as a name, or the other way round.
TRICKY = """\
template "Keywords as names"
    type: car

variable approved: numeric = 0
variable on_time: text = "yes"
feature damage_declaration: on

input set
    type: select
    label: "Set"
    option on: "On"
    option off es_AR: "Apagado"

on input set set
    if inputs.set = "on" and not (approved in [1, 2]) or -approved < 3
        set approved to approved + 1
    else if approved >= 2
        set on_time to "no"
    else
        set approved to count(i in images where i.approved)

check of
    name: "Of"
    description: "of"
    valid when: sum(i in images of i.attempts) <= 3

verdict
    disapprove "not \\"ok\\"" when not checks.of
    approve when approved = 1
    otherwise "no"
"""

BROKEN = [
    'template "x"\n    type: car\n\non input set\n    set = 3\n',
    "image front\n    validate date, within\n",
    'verdict\n    approve when (a and\n    otherwise "x"\n',
    "variable x numeric = 1\n",
    'template "x\n',
    "check c\n    valid when: a ! b\n",
]


def _lark(plugins: dict[str, Any]) -> Lark:
    return Lark.open_from_package(
        "inspectlang",
        "grammar.lark",
        parser="lalr",
        lexer="contextual",
        postlex=_Indentation(),
        maybe_placeholders=True,
        keep_all_tokens=True,
        _plugins=plugins,
    )


def _tokens(tree: Tree[Token]) -> list[tuple[object, ...]]:
    return [
        (t.type, t.value, t.line, t.column, t.end_line, t.end_column)
        for t in tree.scan_values(lambda value: isinstance(value, Token))
    ]


def _outcome(parser: Lark, text: str) -> object:
    try:
        tree = parser.parse(text)
    except UnexpectedInput as error:
        return (type(error).__name__, error.line, error.column, getattr(error, "token", None))
    return (tree.pretty(), _tokens(tree))


@pytest.fixture(scope="module")
def stock() -> Lark:
    return _lark({})


@pytest.mark.parametrize("limit", [1, quick_lexer.BORROW_LIMIT, 10**9])
def test_same_tokens_and_errors_as_lark(
    stock: Lark, limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(quick_lexer, "BORROW_LIMIT", limit)
    quick = _lark({"ContextualLexer": quick_lexer.QuickStartLexer})
    texts = [TRICKY, *BROKEN, *(path.read_text(encoding="utf-8") for path in SOURCES)]
    for _ in range(2):  # the second round runs on the scanners the first one compiled
        for text in texts:
            assert _outcome(quick, text) == _outcome(stock, text)
    states = set(quick.parser.lexer.lexer.lexers.values())
    borrowed = sum(state.borrowed for state in states)
    assert borrowed > 0
    if limit == 10**9:
        assert any(state.root is not None for state in states)  # still borrowing
