"""Lark's contextual lexer, quicker to start: the first parse of a process no longer compiles one
regular expression per parser state.

Lark's contextual lexer matches, in each parser state, only the terminals that state accepts:
one alternation of those terminals per state, compiled by Python's `re` the first time the state
is met. A first parse meets a few dozen states, and compiling their alternations was more than
half of its time. Here a state whose own alternation is not compiled yet first tries the
alternation of *all* terminals, compiled once per process, and keeps the answer when the terminal
found is one the state accepts. That answer is the one the state's own alternation would give:
both list the terminals in the same order (Lark sorts them by priority, then length, then name)
and a regular expression alternation takes its first alternative that matches, so when the first
terminal of the whole list that matches is accepted, no accepted terminal before it matched.
Otherwise, or after `BORROW_LIMIT` tokens (a state met that often is worth its own, smaller and
faster, alternation), the state compiles its own, exactly as Lark does.

The shortcut is only taken when no terminal has an "unless" callback (a string terminal shadowed
by a regular expression one, which Lark rewrites per state) and no lexer callback is set; with
this grammar there is none. Installed through Lark's `_plugins` option.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from lark.common import LexerConf
from lark.lexer import BasicLexer, ContextualLexer

#: Tokens a state lexes with the alternation of all terminals before it compiles its own.
BORROW_LIMIT = 24


class _StateLexer(BasicLexer):
    """The lexer of one parser state, borrowing the root lexer's alternation while it may."""

    def __init__(self, conf: LexerConf, comparator: Any = None) -> None:
        super().__init__(conf, comparator)
        self.accepted = frozenset(terminal.name for terminal in self.terminals)
        self.root: _StateLexer | None = None
        self.borrowed = 0

    def match(self, text: Any, pos: int) -> Any:
        root = self.root
        if root is not None and self._scanner is None:
            found = root.scanner.match(text, pos)
            if found is not None and found[1] in self.accepted:
                self.borrowed += 1
                if self.borrowed >= BORROW_LIMIT:
                    self.root = None
                return found
            self.root = None
        return self.scanner.match(text, pos)


class QuickStartLexer(ContextualLexer):
    """`ContextualLexer` whose state lexers borrow the root lexer's alternation at first."""

    BasicLexer = _StateLexer

    def __init__(
        self,
        conf: LexerConf,
        states: dict[int, Collection[str]],
        always_accept: Collection[str] = (),
    ) -> None:
        super().__init__(conf, states, always_accept)
        root = self.root_lexer
        assert isinstance(root, _StateLexer)
        if conf.callbacks:
            return
        # Compiling the root alternation also computes the "unless" callbacks of all terminals.
        root.scanner  # noqa: B018
        if root.callback:
            return
        for lexer in self.lexers.values():
            assert isinstance(lexer, _StateLexer)
            lexer.root = root
            lexer.callback = {}  # what its own scanner would compute: no callback
