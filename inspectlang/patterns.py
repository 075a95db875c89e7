"""Regular expressions as the engine runs them: RE2, so that matching is linear in the text.

One definition of which patterns are accepted, shared by the checker (E029, for `matches`
literals and the text input `pattern`), the creation-body validation (`runtime.intake`,
`inspectlang.schema.creation_validator`) and the runtime's `matches`. RE2 refuses
backreferences, lookaround and repeats over 1000, so a template that compiles also loads, and no
pattern can backtrack catastrophically (`(a+)+$` on a long text). `re2` is imported on first use
so compiling a template without patterns does not pay for it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Protocol

#: Longest pattern given to `matches` or an input's `pattern` (docs/design/ir.md).
MAX_PATTERN = 200
#: Memory RE2 may use for one compiled pattern.
MAX_PATTERN_MEMORY = 1 << 22

#: Constructs Python's `re` runs and RE2 refuses, and why, for a clearer E029 message.
_EXPLANATIONS = (
    (("(?=", "(?!"), "lookahead is not supported"),
    (("(?<=", "(?<!"), "lookbehind is not supported"),
    (("(?P=", *(f"\\{digit}" for digit in "123456789")), "backreferences are not supported"),
)


class Match(Protocol):
    """What a caller needs of a match: the matched text, or a group's."""

    def group(self, index: int = 0) -> str | None: ...


class Pattern(Protocol):
    """What a caller needs of a compiled pattern."""

    @property
    def groups(self) -> int: ...

    def search(self, text: str) -> Match | None: ...


class _Compiled:
    """The outcome of compiling one pattern: the RE2 pattern, or why it is refused."""

    __slots__ = ("pattern", "problem")

    def __init__(self, pattern: Pattern | None, problem: str | None) -> None:
        self.pattern = pattern
        self.problem = problem


def _options() -> Any:
    import re2  # type: ignore[import-untyped]

    options = re2.Options()
    options.log_errors = False  # a refused pattern is our error to report, not a log line
    options.max_mem = MAX_PATTERN_MEMORY
    return options


@lru_cache(maxsize=256)
def _compile(pattern: str) -> _Compiled:
    if len(pattern) > MAX_PATTERN:
        return _Compiled(None, f"the pattern is longer than {MAX_PATTERN} characters")
    import re2

    try:
        compiled: Pattern = re2.compile(pattern, _options())
    except re2.error as error:
        return _Compiled(None, _describe(pattern, error))
    return _Compiled(compiled, None)


def _describe(pattern: str, error: Exception) -> str:
    raw = error.args[0] if error.args else str(error)
    message = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    if message.startswith("invalid repetition size"):
        return f"invalid regular expression: {message} (a repeat count may be at most 1000)"
    if message.startswith(("invalid perl operator", "invalid escape sequence")):
        for constructs, why in _EXPLANATIONS:
            if any(construct in pattern for construct in constructs):
                return f"invalid regular expression: {message} ({why})"
    return f"invalid regular expression: {message}"


def pattern_problem(pattern: str) -> str | None:
    """Why `pattern` is refused (too long, invalid, or a construct RE2 does not run), or None."""
    return _compile(pattern).problem


def compiled_pattern(pattern: str) -> Pattern | None:
    """The pattern compiled by RE2, or None when `pattern_problem` refuses it."""
    return _compile(pattern).pattern


def pattern_search(pattern: str, text: str) -> bool | None:
    """Whether `pattern` occurs in `text` (RE2, linear time), or None for a refused pattern."""
    compiled = _compile(pattern).pattern
    if compiled is None:
        return None
    return compiled.search(text) is not None
