"""What an editor needs to know about one `.insp` text: its diagnostics, the names it defines and
every place it uses them, and what to show on hover or offer on completion.

Positions here are the language's own: 1-based lines and columns counted in characters, end
exclusive (`inspectlang.ast.Span`). `inspectlang.lsp.server` converts them to the protocol's.
The index is built from the parser's module, which holds every declaration that parsed even
when others did not, so a file with a syntax error still has hover, completion and rename.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from inspectlang import ast, reasons
from inspectlang.compiler import check_file, check_source
from inspectlang.diagnostics import Diagnostic
from inspectlang.includes import DirectoryResolver, IncludeResolver
from inspectlang.ir import QUANTIFIERS
from inspectlang.lsp import texts
from inspectlang.manifest import FEATURE_NAMES, VALIDATION_NAMES
from inspectlang.parser import parse_with_diagnostics
from inspectlang.vocabulary import (
    FUNCTIONS,
    IMAGE,
    INPUT_VALUE_TYPES,
    NAME,
    RECORD_FIELDS,
    VALIDATION,
)

SymbolKind = Literal["variable", "input", "image", "check", "feature"]

#: The text before the cursor when it stands where a select input's option goes:
#: `inputs.use = `, `inputs.use != "com`, `inputs.use in ["a", `.
_COMPARED_WITH_OPTION = re.compile(
    r"\binputs\.(\w+)\s*(?:!?=|\bin)\s*\[?\s*(?:\"[^\"]*\"\s*,\s*)*\"?\w*$"
)

#: The namespace through which expressions reach each kind (`inputs.km`).
_NAMESPACE_KINDS: dict[str, SymbolKind] = {"inputs": "input", "images": "image", "checks": "check"}


@dataclass(frozen=True, slots=True)
class Symbol:
    kind: SymbolKind
    name: str


@dataclass(frozen=True, slots=True)
class Occurrence:
    """A name in the text: where a symbol is defined, or used."""

    symbol: Symbol
    span: ast.Span
    definition: bool = False


@dataclass(frozen=True, slots=True)
class Word:
    """A word with a documented meaning: a function, a validation, a feature or a property."""

    kind: Literal["function", "validation", "feature", "property", "keyword", "include"]
    name: str
    span: ast.Span


@dataclass(frozen=True, slots=True)
class Included:
    """A declaration of an included file: the file's name (a path in the editor), its text, and
    the declaration (spans in that file)."""

    filename: str
    source: str
    declaration: ast.Declaration


@dataclass
class DocumentIndex:
    source: str
    module: ast.Module | None
    occurrences: list[Occurrence] = field(default_factory=list)
    words: list[Word] = field(default_factory=list)
    declarations: dict[Symbol, ast.Declaration] = field(default_factory=dict)
    #: What the file's `include` lines bring in (directly): by symbol, and by include name the
    #: file read (None when the resolver does not know the name).
    included: dict[Symbol, Included] = field(default_factory=dict)
    include_files: dict[str, str | None] = field(default_factory=dict)
    resolver: IncludeResolver | None = None
    filename: str = "<template>"

    # --- queries ------------------------------------------------------------------------------

    def occurrence_at(self, line: int, column: int) -> Occurrence | None:
        return next((o for o in self.occurrences if _inside(o.span, line, column)), None)

    def word_at(self, line: int, column: int) -> Word | None:
        return next((w for w in self.words if _inside(w.span, line, column)), None)

    def definition(self, symbol: Symbol) -> Occurrence | None:
        return next((o for o in self.occurrences if o.symbol == symbol and o.definition), None)

    def references(self, symbol: Symbol) -> list[Occurrence]:
        return [o for o in self.occurrences if o.symbol == symbol]

    def names(self, kind: SymbolKind) -> list[str]:
        local = [s.name for s in self.declarations if s.kind == kind]
        return local + [s.name for s in self.included if s.kind == kind and s.name not in local]

    def include_names(self) -> list[str]:
        """The names an `include` line may give here (the files the resolver knows, not this
        file itself)."""
        if self.resolver is None:
            return []
        own = Path(self.filename).stem
        return [name for name in self.resolver.names() if name != own]

    def date_inputs(self) -> list[str]:
        """The inputs declared `type: date` (what `not before:` / `not after:` may name)."""
        return [
            name
            for name in self.names("input")
            if isinstance(declaration := self._declaration(Symbol("input", name)), ast.InputDecl)
            and _property(declaration.items, "type") == "date"
        ]

    def options(self, input_name: str) -> list[tuple[str, str]]:
        """The (key, label) options of a select or multiselect input, default locale."""
        declaration = self._declaration(Symbol("input", input_name))
        if not isinstance(declaration, ast.InputDecl):
            return []
        return [
            (item.key, item.label)
            for item in declaration.items
            if isinstance(item, ast.Option) and item.locale is None
        ]

    def hover(self, line: int, column: int) -> str | None:
        """Markdown for what stands at a position, or None."""
        occurrence = self.occurrence_at(line, column)
        if occurrence is not None:
            return self._describe(occurrence.symbol)
        word = self.word_at(line, column)
        if word is None:
            return None
        if word.kind == "function" and word.name in texts.FUNCTIONS:
            signature, meaning = texts.FUNCTIONS[word.name]
            return f"```insp\n{signature}\n```\n{meaning}"
        if word.kind == "validation" and word.name in texts.VALIDATIONS:
            return f"**validation `{word.name}`**\n\n{texts.VALIDATIONS[word.name]}"
        if word.kind == "feature" and word.name in texts.FEATURES:
            return f"**feature `{word.name}`**\n\n{texts.FEATURES[word.name]}"
        if word.kind == "keyword" and word.name in texts.KEYWORDS:
            signature, meaning = texts.KEYWORDS[word.name]
            return f"```insp\n{signature}\n```\n{meaning}"
        if word.kind == "property" and word.name in texts.PROPERTIES:
            return f"**{word.name}**\n\n{texts.PROPERTIES[word.name]}"
        if word.kind == "include":
            return self._describe_include(word.name)
        return None

    def _declaration(self, symbol: Symbol) -> ast.Declaration | None:
        declaration = self.declarations.get(symbol)
        if declaration is None and symbol in self.included:
            return self.included[symbol].declaration
        return declaration

    def _describe_include(self, name: str) -> str:
        filename = self.include_files.get(name)
        parts = [f'```insp\ninclude "{name}"\n```', texts.INCLUDE]
        if filename is None:
            parts.append("no such file here")
            return "\n\n".join(parts)
        parts.append(f"file: `{filename}`")
        brought = [
            f"{symbol.kind if symbol.kind != 'variable' else 'let'} `{symbol.name}`"
            for symbol, found in self.included.items()
            if found.filename == filename
        ]
        if brought:
            parts.append("declares: " + ", ".join(brought))
        return "\n\n".join(parts)

    def locales(self) -> list[str]:
        """The locales the header declares (`locales: en_US, es_AR`), the default first."""
        for declaration in self.module.declarations if self.module is not None else ():
            if isinstance(declaration, ast.TemplateDecl):
                for item in declaration.items:
                    if isinstance(item, ast.Property) and item.key == "locales":
                        return [_plain(v) for v in item.values]
        return ["en_US"]

    def _image_fields(self, name: str) -> list[tuple[str, str, str]]:
        """An image's fields, and as validations only those the image declares (an unknown
        image: the fields alone)."""
        fields = [(f, "field", t) for f, t in RECORD_FIELDS[IMAGE].items() if t != VALIDATION]
        declaration = self.declarations.get(Symbol("image", name))
        if isinstance(declaration, ast.ImageDecl):
            fields += [
                (item.name, "validation", texts.VALIDATIONS.get(item.name, ""))
                for item in declaration.items
                if isinstance(item, ast.Validate)
            ]
        return fields

    def _describe(self, symbol: Symbol) -> str:
        declaration = self._declaration(symbol)
        source = self.source
        included = self.included.get(symbol) if symbol not in self.declarations else None
        if included is not None:
            source = included.source
        first_line = _line_of(source, declaration.span.line) if declaration else symbol.name
        parts = [f"```insp\n{first_line.strip()}\n```"]
        if included is not None:
            parts.append(f"from the included file `{included.filename}`")
        if isinstance(declaration, ast.InputDecl):
            kind = _property(declaration.items, "type")
            if kind:
                value_type = INPUT_VALUE_TYPES.get(kind, "?")
                parts.append(f"input of type `{kind}`; in expressions a `{value_type}`")
            label = _property(declaration.items, "label")
            if label:
                parts.append(f"label: {label}")
            options = self.options(symbol.name)
            if options:
                parts.append("options: " + ", ".join(f'`{k}` "{v}"' for k, v in options))
        elif isinstance(declaration, ast.VariableDecl):
            parts.append(f"variable of type `{declaration.variable_type}`")
        elif isinstance(declaration, ast.LetDecl):
            parts.append("derived value: its expression, evaluated where the name is used")
        elif isinstance(declaration, ast.ImageDecl):
            validations = [i.name for i in declaration.items if isinstance(i, ast.Validate)]
            label = _property(declaration.items, "label")
            if label:
                parts.append(f"label: {label}")
            if validations:
                parts.append("validations: " + ", ".join(f"`{v}`" for v in validations))
        elif isinstance(declaration, ast.CheckDecl):
            for key in ("name", "description"):
                value = _property(declaration.items, key)
                if value:
                    parts.append(f"{key}: {value}")
        elif isinstance(declaration, ast.FeatureDecl):
            parts.append(texts.FEATURES.get(symbol.name, ""))
        return "\n\n".join(part for part in parts if part)

    def completions(self, line: int, column: int) -> list[tuple[str, str, str]]:
        """(label, kind, detail) of what may be typed at a position; kind is one of keyword,
        function, variable, input, image, check, field, validation, feature, option."""
        text = _line_of(self.source, line)[: max(column - 1, 0)]
        if re.fullmatch(r'include\s+"[^"]*', text):
            return [(name, "file", "included file") for name in self.include_names()]
        if re.search(r"\bimages\.\w+\.\w+\.\w*$", text):
            return [(f, "field", t) for f, t in RECORD_FIELDS[VALIDATION].items()]
        if match := re.search(r"\bimages\.(\w+)\.\w*$", text):
            return self._image_fields(match.group(1))
        if (match := _COMPARED_WITH_OPTION.search(text)) and self.options(match.group(1)):
            return [(k, "option", label) for k, label in self.options(match.group(1))]
        if match := re.search(r"\b(inputs|images|checks)\.\w*$", text):
            kind = _NAMESPACE_KINDS[match.group(1)]
            return [(name, kind, kind) for name in self.names(kind)]
        if re.fullmatch(r"\s+not (?:before|after):\s*(?:\w+\s*,\s*)*\w*", text):
            # a date order names another date input, bare
            return [(n, "input", "date input") for n in self.date_inputs()]
        if re.search(r"^\s+(?:label|help|name|description|reason|option \w+)\s+\w*$", text):
            # a translated line (`label es_AR:`, `reason pt_BR:`): the template's other locales
            return [(locale, "keyword", "locale") for locale in self.locales()[1:]]
        if re.search(r"^\s+validate\s+\w*$", text):
            return [(n, "validation", texts.VALIDATIONS.get(n, "")) for n in VALIDATION_NAMES]
        if re.search(r"\bfeature\s+\w*$", text):
            return [(n, "feature", texts.FEATURES.get(n, "")) for n in FEATURE_NAMES]
        if re.fullmatch(r"\w*", text):  # at the left margin: a declaration
            return [(k, "keyword", "declaration") for k in texts.DECLARATION_KEYWORDS]
        found = [(k, "keyword", "") for k in texts.INNER_KEYWORDS]
        found += [(n, "function", texts.FUNCTIONS[n][0]) for n in FUNCTIONS if n in texts.FUNCTIONS]
        found += [
            (n, "function", texts.FUNCTIONS[n][0]) for n in QUANTIFIERS if n in texts.FUNCTIONS
        ]
        found += [(n, "variable", "variable") for n in self.names("variable")]
        found += [(n, "keyword", "namespace") for n in texts.NAMESPACES]
        return found


# --- building ---------------------------------------------------------------------------------


def resolver_for(filename: str) -> IncludeResolver | None:
    """Included files are `.insp` files in the document's folder (as on the command line); a
    document that is no file (untitled) has none."""
    if filename.startswith("<") or not Path(filename).is_absolute():
        return None
    return DirectoryResolver(Path(filename).parent)


def diagnostics(source: str, filename: str = "<template>") -> list[Diagnostic]:
    """Every diagnostic of the text, as `inspectlang check` reports them. A problem inside an
    included file is shown on the `include` line that brings it in (the editor shows the
    document's diagnostics), its message naming the file, line and column."""
    if resolver_for(filename) is None:
        return check_source(source, filename)
    # A file: its includes resolve in its folder; a shared file is checked through a template
    # of the folder that includes it.
    found = check_file(source, filename)
    if all(d.filename == filename for d in found):
        return found
    module, _ = parse_with_diagnostics(source, filename)
    includes = [
        d for d in (module.declarations if module else ()) if isinstance(d, ast.IncludeDecl)
    ]
    resolver = resolver_for(filename)
    placed: list[Diagnostic] = []
    for diagnostic in found:
        if diagnostic.filename == filename or not includes:
            placed.append(diagnostic)
            continue
        line = next(
            (
                decl
                for decl in includes
                if resolver is not None and resolver.filename(decl.name) == diagnostic.filename
            ),
            includes[0],
        )
        where = f"{diagnostic.filename}:{diagnostic.span.line}:{diagnostic.span.column}"
        placed.append(
            dataclasses.replace(
                diagnostic,
                message=f"in {where}: {diagnostic.message}",
                span=line.name_span,
                filename=filename,
            )
        )
    return placed


def build_index(source: str, filename: str = "<template>") -> DocumentIndex:
    module, _ = parse_with_diagnostics(source, filename)
    index = DocumentIndex(
        source=source, module=module, resolver=resolver_for(filename), filename=filename
    )
    if module is None:
        return index
    _read_includes(index, module)
    _Indexer(index).run(module)
    return index


def _read_includes(index: DocumentIndex, module: ast.Module) -> None:
    """What the file's own `include` lines declare (not what those files include in turn: the
    editor follows them from the included file). A file that cannot be read or parsed brings
    nothing; the diagnostics say why."""
    for declaration in module.declarations:
        if not isinstance(declaration, ast.IncludeDecl):
            continue
        index.words.append(Word("include", declaration.name, declaration.name_span))
        resolver = index.resolver
        source = resolver.source(declaration.name) if resolver is not None else None
        if resolver is None or source is None:
            index.include_files[declaration.name] = None
            continue
        filename = resolver.filename(declaration.name)
        index.include_files[declaration.name] = filename
        included, _ = parse_with_diagnostics(source, filename)
        for inner in included.declarations if included is not None else ():
            kind = _KINDS.get(type(inner))
            if kind is not None and kind in ("variable", "input", "check"):
                symbol = Symbol(kind, inner.name)  # type: ignore[union-attr]
                index.included.setdefault(symbol, Included(filename, source, inner))


_KINDS: dict[type, SymbolKind] = {
    ast.VariableDecl: "variable",
    ast.LetDecl: "variable",  # a name expressions read, as a variable's
    ast.InputDecl: "input",
    ast.ImageDecl: "image",
    ast.CheckDecl: "check",
    ast.FeatureDecl: "feature",
}


def is_name(text: str) -> bool:
    return NAME.fullmatch(text) is not None


class _Indexer:
    def __init__(self, index: DocumentIndex) -> None:
        self.index = index
        self.variables: set[str] = set()

    def add(self, kind: SymbolKind, name: str, span: ast.Span, *, definition: bool = False) -> None:
        if span.line > 0:
            self.index.occurrences.append(Occurrence(Symbol(kind, name), span, definition))

    def word(self, kind: Any, name: str, span: ast.Span) -> None:
        if span.line > 0:
            self.index.words.append(Word(kind, name, span))

    def run(self, module: ast.Module) -> None:
        self.variables.update(s.name for s in self.index.included if s.kind == "variable")
        for declaration in module.declarations:
            kind = _KINDS.get(type(declaration))
            if kind is not None:
                name = declaration.name  # type: ignore[union-attr]
                symbol = Symbol(kind, name)
                self.index.declarations.setdefault(symbol, declaration)
                span = declaration.name_span  # type: ignore[union-attr]
                self.add(kind, name, span, definition=True)
                if kind == "variable":
                    self.variables.add(name)
                if kind == "feature":
                    self.word("feature", name, span)
        for declaration in module.declarations:
            if isinstance(declaration, ast.VariableDecl):
                self.expression(declaration.initial, frozenset())
            elif isinstance(declaration, ast.LetDecl):
                self.expression(declaration.value, frozenset())
            elif isinstance(declaration, ast.RuleDecl):
                self.event(declaration.event)
                bound = frozenset({"value", "image", "validation", "damage"})
                for statement in declaration.body:
                    self.statement(statement, bound)
            for item in getattr(declaration, "items", ()):
                self.item(item)

    def event(self, event: ast.EventSpec) -> None:
        if event.target is not None:
            if event.event.startswith("input"):
                self.add("input", event.target, event.target_span)
            elif event.event.startswith("image"):
                self.add("image", event.target, event.target_span)
            else:
                self.word("validation", event.target, event.target_span)
        if event.of_image is not None:
            self.add("image", event.of_image, event.of_image_span)

    def item(self, item: Any) -> None:
        if isinstance(item, ast.Property):
            self.word("property", item.key, item.key_span)
            if item.key == "for image":
                for value in item.values:
                    if isinstance(value, ast.Name):
                        self.add("image", value.name, value.span)
                return
            if item.key in ("not before", "not after"):  # another input, bare or `inputs.`
                for value in item.values:
                    if isinstance(value, ast.Name):
                        self.add("input", value.name, value.span)
                    elif _is_expression(value):
                        self.expression(value, frozenset())
                return
            for value in item.values:
                if _is_expression(value):
                    self.expression(value, frozenset())
        elif isinstance(item, ast.Flag):  # `required`, `for information`: shown as a property
            self.word("property", " ".join(item.words.split()), item.span)
        elif isinstance(item, ast.Validate):
            self.word("validation", item.name, item.name_span)
        elif isinstance(item, ast.FeatureUse):
            span = _name_span_within(self.index.source, item.span, item.name)
            self.add("feature", item.name, span)
            self.word("feature", item.name, span)
        else:
            for value in _children(item):
                if _is_expression(value):
                    self.expression(value, frozenset())
            if isinstance(item, ast.Disapprove | ast.Review | ast.Otherwise):
                for value in reasons.values_in(item.reason, item.reason_span, "<template>"):
                    self.expression(value, frozenset())
                for nested in item.translations:  # `reason es_AR: "..."` under the line
                    if not isinstance(nested, ast.Property):
                        continue
                    self.word("property", nested.key, nested.key_span)
                    for text in nested.values:
                        if isinstance(text, ast.Literal) and isinstance(text.value, str):
                            for value in reasons.values_in(text.value, text.span, "<template>"):
                                self.expression(value, frozenset())

    def statement(self, statement: Any, bound: frozenset[str]) -> None:
        """A statement's uses, field by field: a `name` field names a variable (`set`), an
        expression is walked, a nested statement (an `if`'s branches) visited."""
        if hasattr(statement, "name") and hasattr(statement, "name_span"):
            self.add("variable", statement.name, statement.name_span)
        for value in _children(statement):
            if _is_expression(value):
                self.expression(value, bound)
            elif dataclasses.is_dataclass(value) and hasattr(value, "comments"):
                self.statement(value, bound)

    def expression(self, node: Any, bound: frozenset[str]) -> None:
        if isinstance(node, ast.Name):
            if node.name in self.variables and node.name not in bound:
                self.add("variable", node.name, node.span)
        elif isinstance(node, ast.Attribute):
            base = node.value
            if (
                isinstance(base, ast.Name)
                and base.name in _NAMESPACE_KINDS
                and base.name not in bound
            ):
                self.add(_NAMESPACE_KINDS[base.name], node.name, node.name_span)
            elif (
                isinstance(base, ast.Attribute)
                and isinstance(base.value, ast.Name)
                and base.value.name == "images"
                and node.name in VALIDATION_NAMES
            ):
                self.word("validation", node.name, node.name_span)
            self.expression(base, bound)
        elif isinstance(node, ast.Call):
            self.word("function", node.function, node.function_span)
            for argument in node.arguments:
                self.expression(argument, bound)
        elif isinstance(node, ast.Quantifier):
            if node.span.line:  # written `kind(...)`: the word starts the node
                start = node.span
                word = ast.Span(start.line, start.column, start.line, start.column + len(node.kind))
                self.word("function", node.kind, word)
            inner = bound | {node.variable} if node.variable else bound
            self.expression(node.collection, bound)
            for part in (node.condition, node.value):
                if part is not None:
                    self.expression(part, inner)
        elif isinstance(node, ast.Conditional):
            for keyword, span in zip(("if", "then", "else"), node.keyword_spans, strict=True):
                self.word("keyword", keyword, span)
            for part in (node.condition, node.then, node.otherwise):
                self.expression(part, bound)
        elif isinstance(node, ast.Binary):
            # A long `a or b or ...` chain is walked, not recursed into.
            rights = [node.right]
            left = node.left
            while isinstance(left, ast.Binary) and left.operator == node.operator:
                rights.append(left.right)
                left = left.left
            self.expression(left, bound)
            for right in reversed(rights):
                self.expression(right, bound)
        else:
            for child in _children(node):
                if _is_expression(child):
                    self.expression(child, bound)


def _children(node: Any) -> Iterator[Any]:
    if not dataclasses.is_dataclass(node):
        return
    for item in dataclasses.fields(node):
        value = getattr(node, item.name)
        if isinstance(value, tuple):
            yield from value
        else:
            yield value


_EXPRESSIONS = (
    ast.Literal,
    ast.ListExpr,
    ast.Name,
    ast.Attribute,
    ast.Call,
    ast.Quantifier,
    ast.Unary,
    ast.Binary,
    ast.Conditional,
)


def _is_expression(value: Any) -> bool:
    return isinstance(value, _EXPRESSIONS)


def _inside(span: ast.Span, line: int, column: int) -> bool:
    if span.line != span.end_line:
        return (span.line, span.column) <= (line, column) < (span.end_line, span.end_column)
    return span.line == line and span.column <= column <= span.end_column


def _line_of(source: str, line: int) -> str:
    lines = source.splitlines()
    return lines[line - 1] if 1 <= line <= len(lines) else ""


def _name_span_within(source: str, span: ast.Span, name: str) -> ast.Span:
    """The span of `name` inside the first line of `span` (nodes without a name span)."""
    text = _line_of(source, span.line)
    start = text.find(name, max(span.column - 1, 0))
    if start < 0:
        return span
    return ast.Span(span.line, start + 1, span.line, start + 1 + len(name))


def _property(items: tuple[Any, ...], key: str) -> str | None:
    for item in items:
        if isinstance(item, ast.Property) and item.key == key and item.locale is None:
            values = [v.value if isinstance(v, ast.Literal) else _plain(v) for v in item.values]
            return ", ".join(str(v) for v in values)
    return None


def _plain(value: Any) -> str:
    if isinstance(value, ast.Name):
        return value.name
    return type(value).__name__
