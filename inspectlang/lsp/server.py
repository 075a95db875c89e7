"""`inspectlang lsp`: the Language Server for `.insp` files, over stdio, with pygls.

Diagnostics as you type (the compiler's, with codes and did-you-mean), hover, completion, go to
definition, references, rename, formatting (`inspectlang fmt`) and quick fixes that apply a
did-you-mean. What the language knows lives in `inspectlang.lsp.index`; this module converts
positions (the language counts characters from 1, the protocol code units from 0) and wires
the protocol's requests to it.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from inspectlang import __version__ as _version
from inspectlang.ast import Span
from inspectlang.diagnostics import Diagnostic
from inspectlang.errors import InspectlangError
from inspectlang.formatter import format_source
from inspectlang.lsp.index import DocumentIndex, build_index, diagnostics, is_name

SOURCE = "inspectlang"

_KINDS = {
    "keyword": types.CompletionItemKind.Keyword,
    "function": types.CompletionItemKind.Function,
    "variable": types.CompletionItemKind.Variable,
    "input": types.CompletionItemKind.Field,
    "image": types.CompletionItemKind.Field,
    "check": types.CompletionItemKind.Field,
    "field": types.CompletionItemKind.Property,
    "validation": types.CompletionItemKind.EnumMember,
    "feature": types.CompletionItemKind.EnumMember,
    "option": types.CompletionItemKind.EnumMember,
}


def _to_range(document: TextDocument, span: Span) -> types.Range:
    if span.line <= 0:
        return types.Range(types.Position(0, 0), types.Position(0, 0))
    server = ServerTextRange(
        ServerTextPosition(span.line - 1, max(span.column - 1, 0)),
        ServerTextPosition(span.end_line - 1, max(span.end_column - 1, 0)),
    )
    return document.range_to_client_units(server)


def _from_position(document: TextDocument, position: types.Position) -> tuple[int, int]:
    server = document.position_from_client_units(position)
    return server.line + 1, server.character + 1


def _to_lsp(document: TextDocument, diagnostic: Diagnostic) -> types.Diagnostic:
    message = diagnostic.message
    if diagnostic.suggestion is not None:
        message += f" (did you mean `{diagnostic.suggestion}`?)"
    for note in diagnostic.notes:
        message += f"\n{note}"
    return types.Diagnostic(
        range=_to_range(document, diagnostic.span),
        message=message,
        severity=(
            types.DiagnosticSeverity.Error
            if diagnostic.severity == "error"
            else types.DiagnosticSeverity.Warning
        ),
        code=diagnostic.code,
        source=SOURCE,
        data={"suggestion": diagnostic.suggestion} if diagnostic.suggestion else None,
    )


class InspServer(LanguageServer):
    """Keeps the last index of each open document (rebuilt on every change)."""

    def __init__(self) -> None:
        super().__init__(
            "inspectlang", _version, text_document_sync_kind=types.TextDocumentSyncKind.Full
        )
        self.indexes: dict[str, DocumentIndex] = {}

    def refresh(self, uri: str) -> None:
        document = self.workspace.get_text_document(uri)
        self.indexes[uri] = build_index(document.source, document.filename or "<template>")
        found = [_to_lsp(document, d) for d in diagnostics(document.source, _name(document))]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=found, version=document.version)
        )

    def index(self, uri: str) -> tuple[TextDocument, DocumentIndex]:
        document = self.workspace.get_text_document(uri)
        index = self.indexes.get(uri)
        if index is None or index.source != document.source:
            index = build_index(document.source)
            self.indexes[uri] = index
        return document, index


def _name(document: TextDocument) -> str:
    return document.filename or "<template>"


def create_server() -> InspServer:
    server = InspServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: InspServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.refresh(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: InspServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.refresh(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: InspServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.indexes.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: InspServer, params: types.HoverParams) -> types.Hover | None:
        document, index = ls.index(params.text_document.uri)
        text = index.hover(*_from_position(document, params.position))
        if text is None:
            return None
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text))

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=[".", " ", '"']),
    )
    def completion(ls: InspServer, params: types.CompletionParams) -> types.CompletionList:
        document, index = ls.index(params.text_document.uri)
        items = [
            types.CompletionItem(label=label, kind=_KINDS.get(kind), detail=detail or None)
            for label, kind, detail in index.completions(*_from_position(document, params.position))
        ]
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: InspServer, params: types.DefinitionParams) -> types.Location | None:
        document, index = ls.index(params.text_document.uri)
        occurrence = index.occurrence_at(*_from_position(document, params.position))
        if occurrence is None:
            return None
        target = index.definition(occurrence.symbol)
        if target is None:
            return None
        return types.Location(uri=document.uri, range=_to_range(document, target.span))

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    def references(ls: InspServer, params: types.ReferenceParams) -> list[types.Location]:
        document, index = ls.index(params.text_document.uri)
        occurrence = index.occurrence_at(*_from_position(document, params.position))
        if occurrence is None:
            return []
        return [
            types.Location(uri=document.uri, range=_to_range(document, found.span))
            for found in index.references(occurrence.symbol)
            if params.context.include_declaration or not found.definition
        ]

    @server.feature(types.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(ls: InspServer, params: types.PrepareRenameParams) -> types.Range | None:
        document, index = ls.index(params.text_document.uri)
        occurrence = index.occurrence_at(*_from_position(document, params.position))
        return None if occurrence is None else _to_range(document, occurrence.span)

    @server.feature(types.TEXT_DOCUMENT_RENAME)
    def rename(ls: InspServer, params: types.RenameParams) -> types.WorkspaceEdit | None:
        document, index = ls.index(params.text_document.uri)
        occurrence = index.occurrence_at(*_from_position(document, params.position))
        if occurrence is None:
            return None
        if not is_name(params.new_name):
            raise ValueError(
                f"{params.new_name!r} is not a name: a letter, then letters, digits or _"
            )
        edits = [
            types.TextEdit(range=_to_range(document, found.span), new_text=params.new_name)
            for found in index.references(occurrence.symbol)
        ]
        return types.WorkspaceEdit(changes={document.uri: edits})

    @server.feature(types.TEXT_DOCUMENT_FORMATTING)
    def formatting(
        ls: InspServer, params: types.DocumentFormattingParams
    ) -> list[types.TextEdit] | None:
        document = ls.workspace.get_text_document(params.text_document.uri)
        try:
            formatted = format_source(document.source, _name(document))
        except InspectlangError:
            return None  # a file that does not parse is left as it is (its errors are shown)
        if formatted == document.source:
            return []
        lines = document.lines
        end = types.Position(len(lines), 0)
        return [types.TextEdit(range=types.Range(types.Position(0, 0), end), new_text=formatted)]

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls: InspServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        actions = []
        for diagnostic in params.context.diagnostics:
            data: Any = diagnostic.data
            suggestion = data.get("suggestion") if isinstance(data, dict) else None
            if diagnostic.source != SOURCE or not suggestion:
                continue
            edit = types.TextEdit(range=diagnostic.range, new_text=suggestion)
            actions.append(
                types.CodeAction(
                    title=f"Change to `{suggestion}`",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    is_preferred=True,
                    edit=types.WorkspaceEdit(changes={params.text_document.uri: [edit]}),
                )
            )
        return actions

    return server


def main() -> int:
    create_server().start_io()
    return 0
