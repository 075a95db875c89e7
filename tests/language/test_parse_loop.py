"""`inspectlang.parse_loop` against Lark's own loop: the same parse table, lexers, postlexer and
callbacks, so the same result for every text. A text that parses gives an equal AST (every
example, built-in and a generated 2,000-line template; hypothesis' generated modules and
mutations); a text that does not makes the loop raise `NotParsed` where Lark's loop raises
its `UnexpectedInput`, and `SyntaxProblem` (the postlexer's and callbacks' errors) through
both alike."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given
from lark.exceptions import UnexpectedInput

from inspectlang import ast, parser
from inspectlang.formatter import format_module
from inspectlang.parse_loop import NotParsed, ParseLoop
from inspectlang.tree_builder import ParseState, SourceLines, SyntaxProblem, parsing

from .strategies import modules
from .test_parser_properties import COMMON, mutated_example

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted([*ROOT.glob("examples/**/*.insp"), *ROOT.glob("inspectlang/builtins/*.insp")])


def _outcome(run: object, text: str) -> tuple[str, object]:
    """What one loop makes of `text` (already normalized, ending with a newline)."""
    lines = SourceLines.scan(text.split("\n")[:-1])
    try:
        with parsing(ParseState(lines, "loop.insp")):
            return "module", run(text)  # type: ignore[operator]
    except (NotParsed, UnexpectedInput):
        return "not parsed", None
    except SyntaxProblem as problem:
        return "syntax problem", (problem.code, problem.message, problem.span)


def _agree(text: str) -> str:
    ours = _outcome(parser._loop().parse, text)
    lark = _outcome(parser._parser().parse, text)
    assert ours == lark, text
    return ours[0]


@pytest.mark.parametrize("path", FILES, ids=lambda path: path.name)
def test_every_example_and_built_in_parses_to_the_same_module(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert _agree(text if text.endswith("\n") else text + "\n") == "module"


def _benchmark_template() -> str:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench_compile
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    return bench_compile.generate()


def test_the_benchmark_template_parses_to_the_same_module() -> None:
    assert _agree(_benchmark_template()) == "module"


@COMMON
@given(modules)
def test_generated_modules_parse_to_the_same_module(module: ast.Module) -> None:
    assert _agree(format_module(module)) == "module"


@COMMON
@given(mutated_example())
def test_mutations_fail_where_lark_fails(source: str) -> None:
    _agree(source if source.endswith("\n") else source + "\n")


@pytest.mark.parametrize(
    ("text", "outcome"),
    [
        ('template "x"\n    type: car\nimage front\n    label: "Front"\n', "module"),
        ("image front\n    label: \n", "not parsed"),  # a missing value: no action for _NL
        ('image front\n    label: "x" %\n', "not parsed"),  # no terminal matches `%`
        ('image front\n\tlabel: "x"\n', "syntax problem"),  # the postlexer's E002
        ("let x = " + "(" * 70 + "1" + ")" * 70 + "\n", "syntax problem"),  # E004
        ("verdict\n    approve when\n", "not parsed"),  # the text ends inside a line
    ],
)
def test_each_kind_of_outcome_is_the_same(text: str, outcome: str) -> None:
    assert _agree(text) == outcome


def _tokens(tree: object) -> list[tuple[object, ...]]:
    """Every token of a Lark tree with all its fields (a `Token` compares by its text only)."""
    from lark import Token, Tree

    assert isinstance(tree, Tree)
    return [
        (t.type, t.value, t.start_pos, t.line, t.column, t.end_line, t.end_column, t.end_pos)
        for t in tree.scan_values(lambda value: isinstance(value, Token))
    ]


@pytest.mark.parametrize("path", [*FILES, None], ids=lambda path: path.name if path else "bench")
def test_the_loop_lexes_the_tokens_lark_lexes(path: Path | None) -> None:
    """The loop's own lexing (the lexer of each state, in one generator) gives Lark's tokens,
    every field: a plain parser of the grammar that keeps every token builds the same tree."""
    from lark import Lark

    built = Lark.open_from_package(
        "inspectlang",
        "grammar.lark",
        parser="lalr",
        lexer="contextual",
        postlex=parser.Indentation(),
        maybe_placeholders=True,
        keep_all_tokens=True,
    )
    text = _benchmark_template() if path is None else path.read_text(encoding="utf-8")
    text = text if text.endswith("\n") else text + "\n"
    ours, lark = ParseLoop(built).parse(text), built.parse(text)
    assert ours == lark
    assert _tokens(ours) == _tokens(lark)


def test_a_parser_with_terminal_callbacks_is_refused() -> None:
    from lark import Lark, Transformer

    class Words(Transformer):  # type: ignore[type-arg]
        def WORD(self, token: object) -> object:
            return token

    grammar = "start: WORD\nWORD: /[a-z]+/"
    built = Lark(grammar, parser="lalr", lexer="contextual", transformer=Words())
    with pytest.raises(ValueError, match="terminal callbacks"):
        ParseLoop(built)


def test_a_parser_without_postlexer_runs() -> None:
    from lark import Lark

    grammar = 'start: WORD ("," WORD)*\nWORD: /[a-z]+/\n%ignore " "'
    built = Lark(grammar, parser="lalr", lexer="contextual")
    loop = ParseLoop(built)
    assert loop.parse("ab, cd") == built.parse("ab, cd")
    with pytest.raises(NotParsed):
        loop.parse("ab cd")


def test_the_parser_words_an_error_as_lark_s_loop_does() -> None:
    """The fallback: a text the loop cannot parse is parsed again by Lark's loop, whose error
    the diagnostic words (`expected` names what Lark's parse table expected)."""
    _, diagnostics = parser.parse_with_diagnostics('image front\n    label: "x" %\n', "e.insp")
    assert [(d.code, d.span.line) for d in diagnostics] == [("E001", 2)]
