"""`inspectlang lsp`: the Language Server for `.insp` files, over stdio, with pygls.

Diagnostics as you type (the compiler's, with codes and did-you-mean), hover, completion, go to
definition, references, rename, formatting (`inspectlang fmt`) and quick fixes that apply a
did-you-mean. What the language knows lives in `inspectlang.lsp.index`; this module converts
positions (the language counts characters from 1, the protocol code units from 0) and wires
the protocol's requests to it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import select
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from inspectlang import __version__ as _version
from inspectlang.ast import Span
from inspectlang.diagnostics import Diagnostic
from inspectlang.errors import InspectlangError
from inspectlang.formatter import format_source
from inspectlang.lsp.index import DocumentIndex, Symbol, build_index, diagnostics, is_name
from inspectlang.lsp.plugins import provided

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
    "file": types.CompletionItemKind.File,
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
        severity=_SEVERITIES[diagnostic.severity],
        code=diagnostic.code,
        source=SOURCE,
        data={"suggestion": diagnostic.suggestion} if diagnostic.suggestion else None,
    )


_SEVERITIES = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning}


#: How long the server waits, once a change has come while a check ran (or while more input
#: is waiting to be read), before checking again: a burst of changes (a paste, an editor
#: applying several edits, fast typing) is checked for its last text and published once. A
#: change after a quiet moment is checked at once, so a single edit shows its diagnostics as
#: fast as before (benchmarks/bench_lsp.py measures both).
DEBOUNCE_SECONDS = 0.01
#: How many times a publication waits for input still waiting to be read before it goes out
#: anyway (a client that never stops sending still sees diagnostics).
_MAX_WAITS = 20

#: LSP's `RequestFailed`: a well-formed request the server cannot carry out (the message says
#: why; editors show it, e.g. for a rename).
REQUEST_FAILED = types.LSPErrorCodes.RequestFailed

logger = logging.getLogger(__name__)


class InspServer(LanguageServer):
    """Keeps the last index of each open document (rebuilt when asked for after a change) and
    checks each document in a worker thread, publishing only for its latest text."""

    def __init__(self) -> None:
        super().__init__(
            "inspectlang", _version, text_document_sync_kind=types.TextDocumentSyncKind.Full
        )
        self.indexes: dict[str, DocumentIndex] = {}
        #: The task waiting to check each document; a change while it waits or checks is
        #: picked up by it (the result for an older text is dropped, never published).
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.checker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="insp-check")
        #: The plug-ins run beside the checker: a template's tests taking seconds after a save
        #: never hold up the diagnostics of the next keystroke.
        self.plugins = ThreadPoolExecutor(max_workers=1, thread_name_prefix="insp-plugins")
        #: How many plug-in runs each template has asked for: only the latest one publishes.
        self.provisions: dict[str, int] = {}
        self.input = StandardInput()
        #: The plug-ins' diagnostics of each template (`inspectlang.lsp.plugins`), with the
        #: text they were found for: published beside the checker's while the text is that one.
        self.extra: dict[str, tuple[str, list[Diagnostic]]] = {}
        #: The other files each template's plug-in diagnostics were last published to (a file
        #: no longer reported on is published empty).
        self.extra_files: dict[str, set[str]] = {}

    def document(self, uri: str) -> TextDocument:
        """An open document; a request about one the editor never opened is an error."""
        document: TextDocument | None = self.workspace.text_documents.get(uri)
        if document is None:
            raise JsonRpcInvalidParams(
                f"{uri} is not open: the server answers for documents opened with didOpen"
            )
        return document

    def schedule(self, uri: str, delay: float = 0) -> None:
        """Check `uri` after `delay` unless a check of it is already waiting or running."""
        if uri not in self.pending:
            self.pending[uri] = asyncio.get_running_loop().create_task(self._check(uri, delay))

    def forget(self, uri: str) -> None:
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.indexes.pop(uri, None)
        self.extra.pop(uri, None)

    async def _check(self, uri: str, delay: float) -> None:
        loop = asyncio.get_running_loop()
        checked: tuple[str, int | None] | None = None
        found: list[Diagnostic] = []
        try:
            for waits in range(_MAX_WAITS + 1):
                await asyncio.sleep(delay)
                delay = DEBOUNCE_SECONDS
                document = self.workspace.text_documents.get(uri)
                if document is None:
                    return
                if checked != (document.source, document.version):
                    checked = (document.source, document.version)
                    found = await loop.run_in_executor(
                        self.checker, safe_diagnostics, document.source, _name(document)
                    )
                latest = self.workspace.text_documents.get(uri)
                if latest is None:
                    return
                if checked != (latest.source, latest.version):
                    continue  # changed while it was checked: check the newest text
                if self.input.pending() and waits < _MAX_WAITS:
                    continue  # more messages are arriving (likely changes): let them in first
                # Nothing awaits between the test above and the publication, so no change can
                # slip in unseen (handlers run on this same event loop).
                self.publish(latest, found)
                return
        finally:
            if self.pending.get(uri) is asyncio.current_task():
                del self.pending[uri]

    def publish(self, document: TextDocument, found: list[Diagnostic]) -> None:
        source, extra = self.extra.get(document.uri, ("", []))
        if source == document.source:
            found = [*found, *extra]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=document.uri,
                diagnostics=[_to_lsp(document, d) for d in found],
                version=document.version,
            )
        )

    async def provide(self, uri: str) -> None:
        """Run the plug-ins' providers on the saved template `uri` (or the template beside the
        tests file `uri`): their diagnostics of the template join the checker's; those of
        other files are published under each file's URI."""
        template = _template_of(uri)
        if template is None:
            return
        document = self.workspace.text_documents.get(template)
        if document is not None:
            path, source = _name(document), document.source
        else:
            path = self.workspace.get_text_document(template).path
            try:
                source = Path(path).read_text(encoding="utf-8")
            except (OSError, ValueError):
                return
        loop = asyncio.get_running_loop()
        run = self.provisions[template] = self.provisions.get(template, 0) + 1
        found = await loop.run_in_executor(self.plugins, provided, path, source)
        if self.provisions[template] != run:
            return  # a later save asked again: its run publishes
        own = [d for d in found if d.filename == path]
        _, before = self.extra.get(template, ("", []))
        self.extra[template] = (source, own)
        by_file: dict[str, list[Diagnostic]] = {}
        for diagnostic in found:
            if diagnostic.filename != path:
                by_file.setdefault(Path(diagnostic.filename).as_uri(), []).append(diagnostic)
        for other in self.extra_files.get(template, set()) - set(by_file):
            by_file[other] = []
        self.extra_files[template] = {other for other, items in by_file.items() if items}
        for other, items in by_file.items():
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(
                    uri=other, diagnostics=[_file_diagnostic(d) for d in items]
                )
            )
        if document is not None and (own or before):
            # Published again only when the plug-ins' part of it changes: passing tests after
            # an open add nothing, and a second publication of the same text is noise.
            self.schedule(template)

    def index(self, uri: str) -> tuple[TextDocument, DocumentIndex]:
        document = self.document(uri)
        index = self.indexes.get(uri)
        if index is None or index.source != document.source:
            index = build_index(document.source, _name(document))
            self.indexes[uri] = index
        return document, index


class StandardInput:
    """Standard input as pygls reads it (`readline`, `read`), which can also tell whether more
    input is waiting: bytes read but not consumed yet, or bytes in the pipe."""

    def __init__(self, fd: int | None = None) -> None:
        self.fd = sys.stdin.fileno() if fd is None else fd
        self.buffer = bytearray()

    def _fill(self) -> bool:
        chunk = os.read(self.fd, 65536)
        self.buffer += chunk
        return bool(chunk)

    def readline(self) -> bytes:
        while (end := self.buffer.find(b"\n")) < 0:
            if not self._fill():
                end = len(self.buffer) - 1
                break
        line = bytes(self.buffer[: end + 1])
        del self.buffer[: end + 1]
        return line

    def read(self, size: int) -> bytes:
        while len(self.buffer) < size and self._fill():
            pass
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    def pending(self) -> bool:
        if self.buffer:
            return True
        if os.name == "nt":  # select() takes sockets only there: tell nothing
            return False
        readable, _, _ = select.select([self.fd], [], [], 0)
        return bool(readable)


def safe_diagnostics(source: str, filename: str) -> list[Diagnostic]:
    """The file's diagnostics; should checking itself fail (a bug), one diagnostic that says so
    at the top of the file, instead of an error the editor pops up on every keystroke."""
    try:
        return diagnostics(source, filename)
    except Exception as error:  # the editor must keep working whatever the checker does
        logger.exception("checking %s failed", filename)
        message = (
            f"inspectlang could not check this file ({type(error).__name__}: {error}); "
            "please report it with the file"
        )
        return [Diagnostic("internal", message, Span(1, 1, 1, 2), filename)]


def _name(document: TextDocument) -> str:
    """The document's path when it is a file (its `include` lines resolve in its folder)."""
    if document.uri.startswith("file:") and document.path:
        return document.path
    return document.filename or "<template>"


def _template_of(uri: str) -> str | None:
    """The template a saved file's diagnostics belong to: itself, or `NAME.insp` beside the
    tests file `NAME.tests.json`; None for any other file."""
    if uri.endswith(".insp"):
        return uri
    if uri.endswith(".tests.json"):
        return uri.removesuffix(".tests.json") + ".insp"
    return None


def _file_diagnostic(diagnostic: Diagnostic) -> types.Diagnostic:
    """A diagnostic of a file that may not be open (its columns counted in characters)."""
    span = diagnostic.span
    return types.Diagnostic(
        range=types.Range(
            types.Position(span.line - 1, span.column - 1),
            types.Position(span.end_line - 1, span.end_column - 1),
        ),
        message=diagnostic.message,
        severity=_SEVERITIES[diagnostic.severity],
        code=diagnostic.code,
        source=SOURCE,
    )


def _included_definition(index: DocumentIndex, symbol: Symbol) -> types.Location | None:
    """Where a name an included file declares is declared, in that file (not open in the
    editor: its columns are counted in characters)."""
    found = index.included.get(symbol)
    if found is None:
        return None
    declaration = found.declaration
    span = getattr(declaration, "name_span", declaration.span)
    return types.Location(
        uri=Path(found.filename).as_uri(),
        range=types.Range(
            types.Position(span.line - 1, span.column - 1),
            types.Position(span.end_line - 1, span.end_column - 1),
        ),
    )


def create_server() -> InspServer:
    server = InspServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: InspServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        if not uri.endswith(".tests.json"):  # a tests file is no template: no checker
            ls.forget(uri)
            ls.schedule(uri)
        await ls.provide(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: InspServer, params: types.DidSaveTextDocumentParams) -> None:
        await ls.provide(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: InspServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: InspServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.forget(params.text_document.uri)
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
        position = _from_position(document, params.position)
        occurrence = index.occurrence_at(*position)
        if occurrence is None:
            word = index.word_at(*position)
            is_include = word is not None and word.kind == "include"
            filename = index.include_files.get(word.name) if word and is_include else None
            if filename is None:
                return None
            start = types.Position(0, 0)
            return types.Location(uri=Path(filename).as_uri(), range=types.Range(start, start))
        target = index.definition(occurrence.symbol)
        if target is None:
            return _included_definition(index, occurrence.symbol)
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
            raise JsonRpcException(
                f"{params.new_name!r} is not a name: a letter, then letters, digits or _",
                REQUEST_FAILED,
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
        document = ls.document(params.text_document.uri)
        try:
            formatted = format_source(document.source, _name(document))
        except InspectlangError:
            # A file that does not parse, or holds a number too long to write, is left as it is
            # (its errors are shown).
            return None
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
    """Serve on stdin/stdout; 0 after the editor's `shutdown` then `exit`, 1 after an `exit`
    without `shutdown` (the protocol's rule)."""
    server = create_server()
    # pygls closes the stream it writes to on `exit`: it gets its own handle on stdout, so the
    # interpreter's `sys.stdout` stays open for the CLI to flush on the way out.
    output = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    server.start_io(stdin=server.input, stdout=output)  # type: ignore[arg-type]
    server.checker.shutdown(wait=False, cancel_futures=True)
    return 0 if server.protocol._shutdown else 1
