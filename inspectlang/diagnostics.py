"""Diagnostics: template problems as values, with a position the author can act on.

Every problem has a stable code (`E0xx` errors, `W0xx` warnings), a message, the file and a span.
`render` prints the source line with a caret under the span, the way compilers do; `to_dict`
gives the JSON form used by `--format json` and by the server's 422 response.
The table of codes is `CODES`; `docs/language.md` documents each one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from inspectlang.ast import Span
from inspectlang.errors import InspectlangError

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One error or warning about a template, at a source span."""

    code: str
    message: str
    span: Span
    filename: str = "<template>"
    severity: Severity = "error"
    #: A "did you mean" suggestion, when a close name exists.
    suggestion: str | None = None
    notes: tuple[str, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "file": self.filename,
            "line": self.span.line,
            "column": self.span.column,
            "endLine": self.span.end_line,
            "endColumn": self.span.end_column,
        }
        if self.suggestion is not None:
            data["suggestion"] = self.suggestion
        if self.notes:
            data["notes"] = list(self.notes)
        return data

    def render(self, source: str | None = None) -> str:
        """`file:line:column: error[E012]: message`, the source line and a caret under the span."""
        head = (
            f"{self.filename}:{self.span.line}:{self.span.column}: "
            f"{self.severity}[{self.code}]: {self.message}"
        )
        lines = [head]
        if source is not None and self.span.line >= 1:
            source_lines = source.splitlines()
            if self.span.line <= len(source_lines):
                text = source_lines[self.span.line - 1]
                gutter = f"{self.span.line:>4} | "
                lines.append(gutter + text)
                start = max(self.span.column, 1)
                if self.span.end_line == self.span.line and self.span.end_column > start:
                    width = self.span.end_column - start
                else:
                    width = max(len(text) - start + 1, 1)
                lines.append(" " * (len(gutter) + start - 1) + "^" * width)
        if self.suggestion is not None:
            lines.append(f"     = help: did you mean `{self.suggestion}`?")
        lines.extend(f"     = note: {note}" for note in self.notes)
        return "\n".join(lines)


class TemplateError(InspectlangError):
    """Raised when a template cannot be compiled; carries every diagnostic of the file."""

    def __init__(
        self,
        diagnostics: Sequence[Diagnostic],
        source: str | None = None,
        sources: Mapping[str, str] | None = None,
    ) -> None:
        self.diagnostics = list(diagnostics)
        self.source = source
        #: The text of each file by name, when diagnostics are in included files too.
        self.sources = dict(sources or {})
        first = self.diagnostics[0] if self.diagnostics else None
        summary = first.render() if first else "template error"
        more = len(self.diagnostics) - 1
        super().__init__(summary + (f" (and {more} more)" if more > 0 else ""))

    def render(self) -> str:
        return "\n\n".join(
            d.render(self.sources.get(d.filename, self.source)) for d in self.diagnostics
        )

    def to_list(self) -> list[dict[str, Any]]:
        return [d.to_dict() for d in self.diagnostics]


class Reporter:
    """Collects the diagnostics of one file: every stage of the checker reports through one."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.diagnostics: list[Diagnostic] = []

    def report(
        self,
        code: str,
        message: str,
        span: Span,
        suggestion: str | None = None,
        severity: Severity = "error",
        notes: tuple[str, ...] = (),
    ) -> None:
        self.diagnostics.append(
            Diagnostic(code, message, span, self.filename, severity, suggestion, notes)
        )

    def warn(self, code: str, message: str, span: Span) -> None:
        self.report(code, message, span, severity="warning")

    def limit(self, count: int, maximum: int, what: str, span: Span) -> bool:
        """False (after E037) when `count` is over `maximum`."""
        if count > maximum:
            self.report("E037", f"too many {what}: {count} (at most {maximum})", span)
            return False
        return True

    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """The closest candidate to a misspelt name, if one is close enough. (difflib is imported
    here: a template without mistakes never needs it.)"""
    import difflib

    matches = difflib.get_close_matches(name, list(candidates), n=1, cutoff=0.6)
    return matches[0] if matches else None


#: Every diagnostic code with a one-line meaning. Codes are stable: never reuse or renumber.
CODES: dict[str, str] = {
    # Syntax (parser)
    "E001": "syntax error: unexpected token or character",
    "E002": "bad indentation",
    "E003": "unterminated text",
    "E004": "nesting too deep",
    "E005": "file too large",
    # Structure
    "E010": "unknown declaration or property",
    "E011": "missing template header or required property",
    "E012": "duplicate declaration",
    "E013": "duplicate image side",
    "E014": "duplicate identifier",
    "E015": "invalid identifier format",
    "E016": "unknown inspection type",
    "E017": "property not allowed for this input type",
    "E018": "options on a non-choice input, or a choice input without options",
    "E019": "invalid value for a property",
    # Names and types
    "E020": "unknown name",
    "E021": "unknown field",
    "E022": "unknown function or wrong number of arguments",
    "E023": "type mismatch",
    "E024": "initial value of the wrong type",
    "E025": "assignment to something that is not a variable",
    "E026": "unknown validation name",
    "E027": "unknown feature name",
    "E028": "unknown locale or locale not declared",
    "E029": "invalid regular expression",
    # Logic
    "E030": "division by a literal zero",
    "E031": "a required input cannot be asked at create (built-in/alias templates)",
    "E032": "value out of the input's own bounds",
    "E033": "cycle between checks",
    "E034": "verdict missing or can never be reached",
    "E035": "a rule can never fire",
    "E036": "event subject used outside its event",
    "E037": "template too large: too many images, inputs, options, rules, checks or variables",
    "E038": "invalid name for a variable or a bound item",
    "E039": "the runtime cannot run what the checker accepted (a bug: please report it)",
    "E040": "a select or multiselect compared with a text that is not one of its option keys",
    "E041": "a definition depends on itself (an input's `ask when`, a derived value)",
    "E042": "an input asked only at create whose `ask when` reads an input asked only later",
    "E043": "an included file that cannot be found (or a name that cannot name one)",
    "E044": "a file that includes itself, directly or through other files",
    "E045": "a name declared both in the template and in an included file (or in two)",
    "E046": "an `include` line after another declaration",
    "E047": "a declaration an included file may not hold (only `let`, `check`, `input`)",
    "E048": "`number()` of a select or multiselect whose option keys are not numbers",
    "E049": "two names of one kind that differ only in case",
    "E050": "a date input's `not before` or `not after` names an input that is not a date",
    "E051": "dates ordered in a round (`not before` itself, or through other inputs)",
    "W001": "condition is always true or always false",
    "W002": "variable is never used",
    "W003": "a disapproval or review line can never match",
    "W004": "the verdict is empty",
    "W005": "a divisor may be 0",
    "W006": "a `let` is never used",
    "W007": "a translated reason shows other values than its line",
    "W008": "a condition, or a part of one, that the template's declarations decide",
    "W009": "`all(...)` over photos that may all be absent holds with no photo at all",
    "W010": "a confidence or percentage written as a fraction where a percent (0 to 100) is meant",
    "W011": "a review band not above the minimum confidence: no result reaches a person",
    "W012": "a date difference whose sign is fixed: its arguments are reversed",
    "W013": "an `otherwise` with no `approve when` line is never used",
    "W014": "a quantifier's item hides a let, a variable or an outer item of that name",
    "W015": "a reason translated to some declared locales, not to all",
    "W016": "a disapproval that reads an input which may be missing",
    "W017": "a check that nothing reads, not marked `for information`",
    "W018": "a date difference whose dates' names say it counts backwards",
    "W019": "a check marked `for information` that a verdict line reads",
}
