"""`include "NAME"`: another file's lets, checks and inputs, inlined before checking.

The library has no opinion on where files live: the caller passes a resolver (a name -> the
file's source, `IncludeResolver`; a plain mapping will do). The command line resolves names as
files in the including file's folder (`DirectoryResolver`); the server resolves them against
the company's shared files when a template is saved, so the stored manifest is self-contained
(docs/language.md, "Reuse across files").

`expand` reads every file a module includes (and what those include), refuses what an included
file may not hold, and returns one module: the included declarations first (in include order),
then the including file's own. The checker then checks that module as if it were one file.
To keep each diagnostic in the file it belongs to, the lines of included file number k are
moved by k * `INCLUDE_LINES` (no file has that many lines: `MAX_SOURCE_BYTES`) while it is
checked; `Expansion.place` moves a diagnostic back to its file and line, and
`Expansion.manifest_span` gives what the manifest records for an included node: the span of the
`include` line of the saved file that brought it in (the manifest has no other file to point to).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from inspectlang import ast
from inspectlang.ast import Span
from inspectlang.diagnostics import Diagnostic, Reporter, did_you_mean
from inspectlang.vocabulary import MAX_INCLUDED_FILES, MAX_SOURCE_BYTES

__all__ = [
    "ALLOWED",
    "INCLUDE_LINES",
    "INCLUDE_NAME",
    "DirectoryResolver",
    "Expansion",
    "IncludeResolver",
    "MappingResolver",
    "Overlay",
    "check_shared_file",
    "expand",
    "includers",
    "is_shared_file",
    "resolver_of",
]

#: The line offset of each included file while the merged module is checked (see the module's
#: docstring): more lines than any file can have.
INCLUDE_LINES = 10_000_000
assert INCLUDE_LINES > MAX_SOURCE_BYTES

#: What an included file may declare: shared definitions that mean the same in every template.
#: (Its own header, settings, photos, variables, rules or verdict would make it a template.)
ALLOWED: tuple[type, ...] = (ast.IncludeDecl, ast.LetDecl, ast.CheckDecl, ast.InputDecl)

#: An include name: a file name without folders or extension (`vehicle-common`): letters,
#: digits, `_` and `-`, with single spaces inside, at most 100 characters. (No `.`: nothing
#: like `..` can name a file outside the folder, and the server's URL path is the name.)
INCLUDE_NAME = re.compile(r"[A-Za-z0-9_-](?:[A-Za-z0-9_ -]{0,98}[A-Za-z0-9_-])?")
#: What an E043 says of a name that cannot be one.
_NAME_RULE = (
    "letters, digits, `_` and `-`, spaces inside, at most 100 characters, no folders and no "
    "extension"
)

#: The words a declaration of each kind is called in messages.
_KIND = {
    ast.TemplateDecl: "a `template` header",
    ast.SettingsDecl: "`settings`",
    ast.VariableDecl: "a `variable`",
    ast.ProductDecl: "`product`",
    ast.ConsumerDecl: "`consumer`",
    ast.ImageDecl: "an `image`",
    ast.FeatureDecl: "a `feature`",
    ast.RuleDecl: "a rule (`on ...`)",
    ast.VerdictDecl: "a `verdict`",
}


@runtime_checkable
class IncludeResolver(Protocol):
    """Where included files come from: the source of a name (None when there is no such file),
    the file name its diagnostics carry, and the names it knows (for "did you mean" and the
    editor's completion; an empty collection when it cannot list them)."""

    def source(self, name: str) -> str | None: ...

    def filename(self, name: str) -> str: ...

    def names(self) -> Collection[str]: ...


@dataclass(frozen=True, slots=True)
class MappingResolver:
    """Included files from a mapping name -> source (tests, the server, conformance vectors)."""

    files: Mapping[str, str]

    def source(self, name: str) -> str | None:
        return self.files.get(name)

    def filename(self, name: str) -> str:
        return name

    def names(self) -> Collection[str]:
        return list(self.files)


@dataclass(frozen=True, slots=True)
class DirectoryResolver:
    """Included files in one folder: `include "vehicle-common"` is `vehicle-common.insp` there
    (the command line and the editor: the folder of the including file)."""

    folder: Path

    def path(self, name: str) -> Path:
        return self.folder / f"{name}.insp"

    def source(self, name: str) -> str | None:
        if INCLUDE_NAME.fullmatch(name) is None:
            return None  # never a path out of the folder, whoever asks
        path = self.path(name)
        try:
            if not path.is_file() or path.stat().st_size > MAX_SOURCE_BYTES:
                return None
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def filename(self, name: str) -> str:
        return str(self.path(name))

    def names(self) -> Collection[str]:
        try:
            return sorted(path.stem for path in self.folder.glob("*.insp"))
        except OSError:
            return []


def resolver_of(includes: IncludeResolver | Mapping[str, str] | None) -> IncludeResolver | None:
    """The resolver the API was given (a mapping is wrapped)."""
    if includes is None or isinstance(includes, IncludeResolver):
        return includes
    return MappingResolver(includes)


@dataclass(frozen=True, slots=True)
class IncludedFile:
    """One included file: its include name, the file name of its diagnostics, its source, and
    the span of the including file's `include` line that brought it in (for the manifest)."""

    name: str
    filename: str
    source: str
    root_span: Span


@dataclass(slots=True)
class Expansion:
    """A module with its includes inlined, the problems met reading them, and the files read
    (file number k is `files[k - 1]`)."""

    module: ast.Module
    diagnostics: list[Diagnostic] = field(default_factory=list)
    files: list[IncludedFile] = field(default_factory=list)
    #: The syntax diagnostics of each included file (by file name, in its own lines).
    syntax: dict[str, list[Diagnostic]] = field(default_factory=dict)

    def place(self, diagnostic: Diagnostic) -> Diagnostic:
        """A diagnostic of the merged module moved to the file and line it is about; a line
        named in its message or notes ("first declared at line N") too."""
        number = diagnostic.span.line // INCLUDE_LINES
        message = self._lines_named(diagnostic.message)
        notes = tuple(self._lines_named(note) for note in diagnostic.notes)
        if number == 0 or number > len(self.files):
            if message == diagnostic.message and notes == diagnostic.notes:
                return diagnostic
            return dataclasses.replace(diagnostic, message=message, notes=notes)
        return dataclasses.replace(
            diagnostic,
            span=_moved_span(diagnostic.span, -number * INCLUDE_LINES),
            filename=self.files[number - 1].filename,
            message=message,
            notes=notes,
        )

    def _lines_named(self, text: str) -> str:
        def named(match: re.Match[str]) -> str:
            line = int(match.group(1))
            number = line // INCLUDE_LINES
            if number == 0 or number > len(self.files):
                return match.group(0)
            return f"line {line % INCLUDE_LINES} of {self.files[number - 1].filename}"

        return re.sub(r"line (\d{8,})", named, text) if "line " in text else text

    def where(self, span: Span) -> str:
        """`file:line:column` of a span of the merged module."""
        number = span.line // INCLUDE_LINES
        if 0 < number <= len(self.files):
            name = self.files[number - 1].filename
            return f"{name}:{span.line % INCLUDE_LINES}:{span.column}"
        return f"{self.module.filename}:{span.line}:{span.column}"

    def manifest_span(self, span: list[int]) -> list[int]:
        """What the manifest records for a span of the merged module: an included file's span
        becomes the span of the `include` line that brought the file in."""
        number = span[0] // INCLUDE_LINES if span else 0
        if 0 < number <= len(self.files):
            return self.files[number - 1].root_span.as_list()
        return span


def _moved_span(span: Span, lines: int) -> Span:
    if span.line == 0:
        return span
    return Span(span.line + lines, span.column, span.end_line + lines, span.end_column)


_Node = TypeVar("_Node")


def _moved(node: _Node, lines: int) -> _Node:
    """`node` with every span `lines` lines down (the AST is frozen dataclasses and tuples;
    expressions nest at most MAX_NESTING deep, so the recursion is bounded)."""
    if isinstance(node, Span):
        return _moved_span(node, lines)  # type: ignore[return-value]
    if isinstance(node, tuple):
        return tuple(_moved(item, lines) for item in node)  # type: ignore[return-value]
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        changes = {}
        for item in dataclasses.fields(node):
            value = getattr(node, item.name)
            if item.init and (
                isinstance(value, Span | tuple)
                or (dataclasses.is_dataclass(value) and not isinstance(value, type))
            ):
                changes[item.name] = _moved(value, lines)
        return dataclasses.replace(node, **changes)
    return node


def _where_declared(decl: Any) -> Span:
    span: Span = getattr(decl, "name_span", decl.span)
    return span if span.line else decl.span


def _defines(decl: ast.Declaration) -> tuple[str, str] | None:
    """The name a declaration defines, in its namespace: lets and variables share one (both are
    bare names in expressions), checks and inputs have their own."""
    match decl:
        case ast.LetDecl(name=name) | ast.VariableDecl(name=name):
            return ("value", name)
        case ast.CheckDecl(name=name):
            return ("check", name)
        case ast.InputDecl(name=name):
            return ("input", name)
    return None


_WHAT = {"value": "`{}`", "check": "check `{}`", "input": "input `{}`"}

Parse = Callable[[str, str], "tuple[ast.Module | None, list[Diagnostic]]"]


class _Expander:
    def __init__(self, module: ast.Module, resolver: IncludeResolver | None, parse: Parse):
        self.root = module
        self.resolver = resolver
        self.parse = parse
        self.result = Expansion(module)
        # The include problems are the root file's: one reporter, writing into the result.
        self.reporter = Reporter(module.filename)
        self.reporter.diagnostics = self.result.diagnostics
        self.report = self.reporter.report
        #: File number (0 the root) of each name read, and the declarations taken.
        self.read: dict[str, int] = {}
        self.taken: list[ast.Declaration] = []
        #: Whether a file read may divide by a non-literal (`ast.Module.divides`).
        self.divides = False

    def run(self) -> Expansion:
        self.visit(self.root, 0, (self.root.filename,), None)
        own = [d for d in self.root.declarations if not isinstance(d, ast.IncludeDecl)]
        merged = self.without_clashes(own)
        self.result.module = dataclasses.replace(
            self.root, declarations=tuple(merged), divides=self.divides
        )
        return self.result

    def visit(
        self, module: ast.Module, number: int, chain: tuple[str, ...], root_span: Span | None
    ) -> None:
        """Read the files `module` (file `number`) includes, then take its own declarations."""
        seen_other = False
        names_here: set[str] = set()
        self.divides = self.divides or module.divides
        for decl in module.declarations:
            if not isinstance(decl, ast.IncludeDecl):
                seen_other = True
                if number and not isinstance(decl, ALLOWED):
                    what = _KIND.get(type(decl), "this declaration")
                    self.report(
                        "E047",
                        f"an included file holds only `let`, `check` and `input` declarations "
                        f"(and `include`s), not {what}: those belong to the including template",
                        decl.span,
                    )
                elif number:
                    self.taken.append(decl)
                continue
            if seen_other:
                self.report(
                    "E046",
                    "`include` lines come first in a file, before any other declaration",
                    decl.span,
                )
                continue
            if decl.name in names_here:
                self.report("E012", f"`{decl.name}` is included twice", decl.name_span)
                continue
            names_here.add(decl.name)
            self.include(decl, number, chain, root_span or decl.span)

    def include(
        self, decl: ast.IncludeDecl, number: int, chain: tuple[str, ...], root_span: Span
    ) -> None:
        name = decl.name
        if name in chain[1:] or name == self.root.filename:
            self.report(
                "E044",
                "an include cycle: " + " includes ".join([*chain, name]),
                decl.name_span,
            )
            return
        if name in self.read:
            return  # read through another include already: its declarations are taken once
        if self.resolver is None:
            self.report(
                "E043",
                f'`include "{name}"` cannot be resolved here: nothing reads other files (pass '
                "a resolver to the API; the command line and the server have one)",
                decl.name_span,
            )
            return
        if INCLUDE_NAME.fullmatch(name) is None:
            message = f"`{name}` cannot name an included file: {_NAME_RULE}"
            self.report("E043", message, decl.name_span)
            return
        source = self.resolver.source(name)
        if source is None:
            known = [n for n in self.resolver.names() if n not in chain]
            self.report(
                "E043",
                f"no file `{name}` to include",
                decl.name_span,
                did_you_mean(name, known),
            )
            return
        if len(self.result.files) >= MAX_INCLUDED_FILES:
            self.report(
                "E037",
                f"too many included files: more than {MAX_INCLUDED_FILES}",
                decl.name_span,
            )
            return
        filename = self.resolver.filename(name)
        parsed, syntax = self.parse(source, filename)
        file_number = len(self.result.files) + 1
        self.read[name] = file_number
        self.result.files.append(IncludedFile(name, filename, source, root_span))
        lines = file_number * INCLUDE_LINES
        if syntax:
            self.result.syntax[filename] = syntax
            self.result.diagnostics.extend(
                dataclasses.replace(d, span=_moved_span(d.span, lines)) for d in syntax
            )
        if parsed is None:
            return
        self.visit(_moved(parsed, lines), file_number, (*chain, name), root_span)

    def without_clashes(self, own: Sequence[ast.Declaration]) -> list[ast.Declaration]:
        """The included declarations, then the file's own; an included name the template (or an
        earlier included file) already defines is E045, with both positions."""
        owner: dict[tuple[str, str], ast.Declaration] = {}
        for decl in own:
            key = _defines(decl)
            if key is not None:
                owner.setdefault(key, decl)
        first_included: dict[tuple[str, str], ast.Declaration] = {}
        taken: list[ast.Declaration] = []
        for decl in self.taken:
            key = _defines(decl)
            if key is None:
                taken.append(decl)
                continue
            here = _where_declared(decl)
            if key in owner:
                local = owner[key]
                self.report(
                    "E045",
                    f"{_WHAT[key[0]].format(key[1])} is declared here and in an included file",
                    _where_declared(local),
                    notes=(f"also declared at {self.result.where(here)}",),
                )
                continue
            earlier = first_included.get(key)
            if earlier is not None and _file_of(earlier) != _file_of(decl):
                self.report(
                    "E045",
                    f"{_WHAT[key[0]].format(key[1])} is declared in two included files",
                    here,
                    notes=(f"also declared at {self.result.where(_where_declared(earlier))}",),
                )
                continue
            first_included.setdefault(key, decl)
            taken.append(decl)
        return [*taken, *own]


def _file_of(decl: Any) -> int:
    return int(decl.span.line // INCLUDE_LINES)


def check_shared_file(source: str, name: str) -> list[Diagnostic]:
    """The problems a file has on its own, as an included file: syntax, a bad name (E043), a
    declaration it may not hold (E047), an `include` after another declaration (E046). Its
    names are checked in each template that includes it (they may use the template's)."""
    from inspectlang.parser import parse_with_diagnostics

    if INCLUDE_NAME.fullmatch(name) is None:
        message = f"`{name}` cannot name an included file: {_NAME_RULE}"
        return [Diagnostic("E043", message, Span(1, 1, 1, 2), name)]
    module, found = parse_with_diagnostics(source, name)
    if module is None:
        return found
    expander = _Expander(ast.Module((), filename=name), None, parse_with_diagnostics)
    expander.visit(module, 1, (name,), None)
    problems = [d for d in expander.result.diagnostics if d.code in ("E046", "E047")]
    placed = [dataclasses.replace(d, filename=name) for d in problems]
    return sorted([*found, *placed], key=lambda d: (d.span.line, d.span.column))


def is_shared_file(module: ast.Module) -> bool:
    """A file with no `template` header whose declarations an included file may all hold: a
    shared file (checked through the templates that include it), not a broken template."""
    declarations = module.declarations
    return bool(declarations) and all(isinstance(d, ALLOWED) for d in declarations)


@dataclass(frozen=True, slots=True)
class Overlay:
    """A folder's files, with one of them as the editor holds it (not yet saved)."""

    folder: DirectoryResolver
    name: str
    text: str

    def source(self, name: str) -> str | None:
        return self.text if name == self.name else self.folder.source(name)

    def filename(self, name: str) -> str:
        return self.folder.filename(name)

    def names(self) -> Collection[str]:
        return self.folder.names()


#: Compiled by `re` (its own cache) when first used: a compile never needs it.
_INCLUDE_LINE = r'^include[ \t]+"([^"\n]*)"'


def includers(path: Path) -> list[Path]:
    """The `.insp` files of `path`'s folder whose `include` lines name it, by name."""
    found = []
    try:
        candidates = sorted(path.parent.glob("*.insp"))
    except OSError:
        return []
    for candidate in candidates:
        if candidate == path:
            continue
        try:
            text = candidate.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if path.stem in re.findall(_INCLUDE_LINE, text, re.MULTILINE):
            found.append(candidate)
    return found


def expand(module: ast.Module, resolver: IncludeResolver | None, parse: Parse) -> Expansion:
    """`module` with every include inlined (see the module's docstring). `parse` reads an
    included file (source, file name -> module or None, syntax diagnostics)."""
    if not any(isinstance(d, ast.IncludeDecl) for d in module.declarations):
        return Expansion(module)
    return _Expander(module, resolver, parse).run()
