"""The LALR loop that runs a built Lark parser on a valid text, faster than Lark's own.

Lark's loop (`lark.parsers.lalr_parser_state.ParserState.feed_token`) is written for every use
of the library: a method call per token, and per reduction a `Rule` looked up in the callbacks
through its Python `__hash__`, compared by its Python `__eq__` in an `assert`, and measured
(`len(rule.expansion)`) each time. This loop runs the same parse table, lexers, postlexer and
callbacks in one function over a table made once per parser: a shift is the next state (an
int), a reduction the tuple `(size, callback, origin)`, and a unit rule's reduction
(`?sum: product`, whose callback returns its one child: half of all reductions) only the name
of the rule, whose goto replaces the top state. Its tokens come from the lexer of the parser's
state as Lark's contextual lexer gives them (`BasicLexer.next_token`: the same regular
expressions, callbacks and positions), lexed in one generator instead of seven Python calls per
token. On the benchmark template (2,000 lines; valgrind, issue 33) the parse takes 396M instructions
against 524M for Lark's own parse of it (`benchmarks/bench_compile.py`'s `lark_loop` variant
swaps this module for Lark's loop and lexer).

It only runs texts that parse. At the first thing Lark would report (a character no terminal
of the state matches, a token the state has no action for), it raises `NotParsed`, and the
caller parses the text again with Lark's own loop, which raises Lark's error with its expected
tokens and interactive parser (what `inspectlang.syntax_errors` words). Anything else the
postlexer or a callback raises (`SyntaxProblem`) goes through unchanged, as through Lark's.
"""

from __future__ import annotations

from itertools import chain
from typing import Any

from lark import Lark, Token
from lark.exceptions import UnexpectedInput
from lark.parse_tree_builder import ExpandSingleChild
from lark.parser_frontends import PostLexConnector
from lark.parsers.lalr_analysis import Shift

from inspectlang.errors import InspectlangError

#: Builds a token (a `str` subclass) as Lark's `Token._future_new` does, its fields set after.
_new_text = str.__new__
#: A state's lexer as `ParseLoop.parse` lexes with it: its regular expressions' `match`, the
#: terminals it skips, those that may hold a newline, and Lark's callbacks by terminal (a
#: keyword that a name's pattern also matches).
_Scanner = tuple[tuple[Any, ...], frozenset[str], frozenset[str], dict[str, Any]]

#: What follows the last token: Lark's `$END`, which only ever reduces.
_END_OF_TEXT = (Token("$END", ""),)


class NotParsed(InspectlangError):
    """The text does not parse: Lark's own loop says why."""


class ParseLoop:
    """The loop over one built LALR parser with a contextual lexer (the parser's options
    `parser="lalr"`, `lexer="contextual"`, a postlexer or none) and no terminal callbacks."""

    def __init__(self, parser: Lark) -> None:
        frontend: Any = parser.parser
        lalr = frontend.parser.parser
        callbacks = lalr.callbacks
        if any(isinstance(key, str) for key in callbacks):
            raise ValueError("ParseLoop runs no terminal callbacks")
        lexer = frontend.lexer
        self._postlex = None
        if isinstance(lexer, PostLexConnector):
            lexer, self._postlex = lexer.lexer, lexer.postlexer
        self._lexers = lexer.lexers  # the contextual lexer: one lexer per parser state
        self._scanners: dict[int, _Scanner] = {}
        table = lalr.parse_table
        self._start = table.start_states["start"]
        self._end = table.end_states["start"]
        reductions: dict[int, tuple[int, Any, str] | str] = {}
        self._states: dict[int, dict[str, Any]] = {}
        for state, actions in table.states.items():
            row: dict[str, Any] = {}
            for kind, (action, argument) in actions.items():
                if action is Shift:
                    row[kind] = argument
                    continue
                reduction = reductions.get(id(argument))
                if reduction is None:
                    size, callback = len(argument.expansion), callbacks[argument]
                    origin = argument.origin.name
                    unit = size == 1 and type(callback) is ExpandSingleChild
                    if unit and origin not in table.start_states:
                        # `?sum: product`: the value is its one child's. A plain `str` (a
                        # parser just built names its rules with Lark's `Token`s)
                        reduction = str(origin)
                    else:
                        reduction = (size, callback, origin)
                    reductions[id(argument)] = reduction
                row[kind] = reduction
            self._states[state] = row

    def _scanner(self, state: int) -> _Scanner:
        """What lexing in `state` needs of its lexer (Lark builds the lexer's scanner, one
        regular expression of the terminals the state accepts, when first asked)."""
        lexer = self._lexers[state]
        scanner = lexer.scanner
        found = (
            # Lark's compiled patterns (private: Lark is pinned, and tests/language/
            # test_parse_loop.py holds every token's fields equal to those Lark's lexer gives)
            tuple(pattern.match for pattern in scanner._mres),
            lexer.ignore_types,
            lexer.newline_types,
            lexer.callback,
        )
        self._scanners[state] = found
        return found

    def parse(self, text: str) -> Any:
        """What the start rule's callback returns for `text`; `NotParsed` when it does not
        parse."""
        states, scanners = self._states, self._scanners
        state_stack = [self._start]
        value_stack: list[Any] = []

        def tokens() -> Any:
            """Lark's `BasicLexer.next_token` with the lexer of the parser's state, in one
            frame: the same match, token and positions (lines counted in the terminals that
            may hold a newline), without its seven Python calls per token (`next_token`,
            `match`, `scanner`, `Scanner.match`, `Token`, `Token._future_new`,
            `LineCounter.feed`)."""
            position, line, line_start, size = 0, 1, 0, len(text)
            while position < size:
                state = state_stack[-1]
                matchers, ignored, newlines, callbacks = scanners.get(state) or self._scanner(state)
                for match in matchers:
                    found = match(text, position)
                    if found:
                        break
                else:
                    raise NotParsed  # no terminal of the state matches: Lark's loop words it
                value, kind = found.group(0), found.lastgroup
                start, start_line, column = position, line, position - line_start + 1
                position += len(value)
                if kind in newlines and "\n" in value:
                    line += value.count("\n")
                    line_start = start + value.rindex("\n") + 1
                if kind in ignored and kind not in callbacks:
                    continue
                token = _new_text(Token, value)
                token.type, token.value, token.start_pos = kind, value, start
                token.line, token.column, token.end_line = start_line, column, line
                token.end_column, token.end_pos = position - line_start + 1, position
                if kind in callbacks:
                    token = callbacks[kind](token)
                if kind not in ignored:
                    yield token

        stream = tokens() if self._postlex is None else self._postlex.process(tokens())
        end = self._end
        try:
            for token in chain(stream, _END_OF_TEXT):
                kind = token.type
                while True:
                    action = states[state_stack[-1]][kind]
                    if action.__class__ is int:
                        state_stack.append(action)
                        value_stack.append(token)
                        break
                    if action.__class__ is str:  # `?sum: product`: only the state changes
                        state_stack[-1] = states[state_stack[-2]][action]
                        continue
                    size, callback, origin = action
                    if size:
                        children = value_stack[-size:]
                        del state_stack[-size:]
                        del value_stack[-size:]
                    else:
                        children = []
                    value = callback(children)
                    state = states[state_stack[-1]][origin]
                    if state == end:  # the start rule, reduced at the end of the text
                        return value
                    state_stack.append(state)
                    value_stack.append(value)
        except (KeyError, UnexpectedInput) as error:
            raise NotParsed from error
        raise NotParsed  # the end of the text was shifted, not accepted: Lark refuses it too
