"""No input makes `check`, `compile`, `fmt` or the language server raise (issue 33, item 6).

Whatever the text, each ends in a module, a manifest or diagnostics with positions: random
texts, mutations of every example and built-in, and the long inputs that once drove a walk of
the checker past Python's recursion limit (a chain of 250 `let`s each reading the next one
declared below it). Bytes that are not UTF-8 get an E001 with the line and column of the first
bad byte.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspectlang.cli import main
from inspectlang.compiler import check_source, compile_source
from inspectlang.diagnostics import CODES, TemplateError
from inspectlang.formatter import format_source
from inspectlang.lsp.index import build_index, diagnostics
from inspectlang.parser import decode_source

from .strategies import mutated

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(
    [*ROOT.glob("examples/*.insp"), *ROOT.glob("inspectlang/builtins/*.insp")],
    key=lambda path: path.name,
)
TEXTS = [path.read_text(encoding="utf-8") for path in SOURCES]

COMMON = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_ALPHABET = st.sampled_from(list(' \n"#():,.=<>+-*/[]{}\\x019abinotflsewhr_éЯ\t'))


def _every_tool_ends_in_diagnostics(source: str) -> None:
    """What each entry point of the language does with a text: no exception, and every
    diagnostic has a known code and a position in the file."""
    found = check_source(source, "fuzz.insp")
    for diagnostic in found:
        assert diagnostic.code in CODES, diagnostic
        assert diagnostic.span.line >= 1 and diagnostic.span.column >= 1, diagnostic
    try:
        compile_source(source, "fuzz.insp")
    except TemplateError as error:
        assert error.diagnostics
    try:
        format_source(source, "fuzz.insp")
    except TemplateError as error:
        assert error.diagnostics
    assert all(d.code in CODES for d in diagnostics(source, "fuzz.insp"))
    index = build_index(source, "fuzz.insp")
    index.hover(1, 1)
    index.completions(1, 1)


#: An example or built-in with a few characters or lines deleted, inserted or repeated.
mutated_template = mutated(TEXTS, _ALPHABET)


@COMMON
@given(mutated_template)
def test_mutated_templates_end_in_diagnostics(source: str) -> None:
    _every_tool_ends_in_diagnostics(source)


@COMMON
@given(st.lists(st.text(alphabet=_ALPHABET, max_size=50), max_size=12).map("\n".join))
def test_random_texts_end_in_diagnostics(source: str) -> None:
    _every_tool_ends_in_diagnostics('template "F"\n    type: car\n' + source)


def _chain(count: int, line: str, last: str) -> str:
    """`count` lets, each reading the next one declared below it."""
    lets = [
        f"let l{i} = " + line.format(f"l{i + 1}" if i + 1 < count else last) for i in range(count)
    ]
    return (
        'template "Chain"\n    type: people\n\ninput x\n    type: numeric\n\n'
        + "\n".join(lets)
        + '\n\nverdict\n    disapprove "Too much" when 100 / l0 > 5\n'
    )


@pytest.mark.parametrize(
    ("line", "last", "codes"),
    [
        ("{} + 1", "1", {"E004"}),  # each let adds a level: past 64 it is too deep
        ("{}", "inputs.x", {"W005"}),  # an alias of an alias...: nothing deep, one divisor
        ("{}", "l0", {"E041", "W005"}),  # a cycle through all of them, unbounded
    ],
    ids=["adding", "aliases", "cycle"],
)
def test_a_regression_long_chains_of_lets_end_in_diagnostics(
    line: str, last: str, codes: set[str]
) -> None:
    source = _chain(2000, line, last)
    found = check_source(source, "chain.insp")
    assert {d.code for d in found} == codes
    _every_tool_ends_in_diagnostics(source)


def test_a_cycle_of_lets_is_reported_where_the_recursion_reported_it() -> None:
    source = (
        'template "T"\n    type: people\n\nlet a = b + 1\nlet b = c\nlet c = a * 2\n\n'
        'verdict\n    disapprove "x" when a > 1\n'
    )
    [cycle] = check_source(source, "cycle.insp")
    assert (cycle.code, cycle.span.line, cycle.span.column) == ("E041", 6, 9)
    assert "`let a`" in cycle.message


NOT_UTF8 = b'template "T"\n    type: people\n\nverdict\n    disapprove "caf\xe9 x" when true\n'


def test_bytes_that_are_not_utf8_are_an_e001_at_their_line_and_column() -> None:
    text, problem = decode_source(NOT_UTF8, "latin1.insp")
    assert problem is not None
    assert (problem.code, problem.span.line, problem.span.column) == ("E001", 5, 20)
    assert "0xE9" in problem.message
    assert text.splitlines()[4] == '    disapprove "caf\ufffd x" when true'
    assert decode_source("é".encode(), "fine.insp") == ("é", None)


@pytest.mark.parametrize("command", ["check", "compile", "fmt"])
def test_the_commands_report_a_file_that_is_not_utf8(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "latin1.insp"
    path.write_bytes(NOT_UTF8)
    assert main([command, str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:5:20: error[E001]: byte 0xE9 is not UTF-8" in out
    assert path.read_bytes() == NOT_UTF8  # fmt wrote nothing
