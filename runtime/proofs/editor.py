"""Failing template tests as editor diagnostics: the language server's provider of the group
`inspectlang.diagnostics` (`inspectlang.lsp.plugins`, declared in pyproject.toml).

For a template `NAME.insp` with cases in `NAME.tests.json` beside it, each failing case gives
an error at the case in the tests file (`T001`, the line its object begins) and a warning at
each template line that decided its run (`T001`, the verdict lines in the case's `lines`); a
tests file that is not one gives `T002` at its first line. A template that does not compile
gives none: the checker's diagnostics say why.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspectlang.ast import Span
from inspectlang.compiler import compile_source
from inspectlang.diagnostics import Diagnostic, TemplateError
from inspectlang.includes import DirectoryResolver
from runtime.errors import InvalidProgram
from runtime.program import load_program
from runtime.proofs.cases import CasesError, case_lines, read_cases, run_cases, tests_path

#: The code of a failing case, and of a tests file that cannot be read as one.
FAILING_CASE = "T001"
UNREADABLE_TESTS = "T002"


def diagnostics(path: str, source: str) -> list[Diagnostic]:
    """The failing cases of the template at `path` (text `source`), in both files."""
    template = Path(path)
    if template.suffix != ".insp":
        return []
    tests = tests_path(template)
    try:
        text = tests.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return []
    try:
        cases = read_cases(json.loads(text))
    except (ValueError, CasesError) as error:
        message = f"these template tests cannot be read: {error}"
        return [Diagnostic(UNREADABLE_TESTS, message, Span(1, 1, 1, 2), str(tests))]
    try:
        manifest = compile_source(source, path, includes=DirectoryResolver(template.parent))
        program = load_program(manifest)
    except (TemplateError, InvalidProgram):
        return []
    report = run_cases(program, cases)
    starts = case_lines(text)
    text_lines = text.splitlines()
    source_lines = source.splitlines()
    found: list[Diagnostic] = []
    for index, case in enumerate(report.cases):
        if case.passed:
            continue
        problems = "; ".join(case.texts)
        line = starts[index] if index < len(starts) else 1
        found.append(
            Diagnostic(
                FAILING_CASE,
                f"template test {case.name!r} fails: {problems}",
                _line_span(text_lines, line),
                str(tests),
            )
        )
        for decided in case.lines:
            found.append(
                Diagnostic(
                    FAILING_CASE,
                    f"template test {case.name!r} ({tests.name}:{line}) fails here: {problems}",
                    _line_span(source_lines, decided),
                    path,
                    "warning",
                )
            )
    return found


def _line_span(lines: list[str], line: int) -> Span:
    """The span of a line's text, from its first non-blank character."""
    text = lines[line - 1] if 1 <= line <= len(lines) else ""
    start = len(text) - len(text.lstrip()) + 1
    return Span(line, start, line, max(len(text) + 1, start + 1))
