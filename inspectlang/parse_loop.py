"""The LALR loop that runs a built Lark parser on a valid text, faster than Lark's own.

Lark's loop (`lark.parsers.lalr_parser_state.ParserState.feed_token`) is written for every use
of the library: a method call per token, and per reduction a `Rule` looked up in the callbacks
through its Python `__hash__`, compared by its Python `__eq__` in an `assert`, and measured
(`len(rule.expansion)`) each time. This loop runs the same parse table, lexers, postlexer and
callbacks in one function over a table made once per parser: a shift is the next state (an
int), a reduction the tuple `(size, callback, origin)`. The benchmark template (2,000 lines)
parses in 52.6 ms instead of 61.5 (`benchmarks/bench_compile.py`'s `lark_loop` variant swaps
this module for Lark's loop).

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
from lark.lexer import LexerThread
from lark.parse_tree_builder import ExpandSingleChild
from lark.parser_frontends import PostLexConnector
from lark.parsers.lalr_analysis import Shift

from inspectlang.errors import InspectlangError

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
                        reduction = origin  # `?sum: product`: the value is its one child's
                    else:
                        reduction = (size, callback, origin)
                    reductions[id(argument)] = reduction
                row[kind] = reduction
            self._states[state] = row

    def parse(self, text: str) -> Any:
        """What the start rule's callback returns for `text`; `NotParsed` when it does not
        parse."""
        states, lexers = self._states, self._lexers
        state_stack = [self._start]
        value_stack: list[Any] = []
        lexer_state = LexerThread.from_text(None, text).state  # type: ignore[arg-type]

        def tokens() -> Any:
            try:
                while True:
                    yield lexers[state_stack[-1]].next_token(lexer_state, None)
            except EOFError:
                return

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
