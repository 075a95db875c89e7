"""The Language Server over a real stdio pipe: `inspectlang lsp` started as a subprocess and
driven by pygls's own LanguageClient, the way an editor drives it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "used_phone_resale.insp"

#: A template with one mistake the compiler can name: `deductoin` for `deduction`.
TYPO = """\
template "Typo"
    type: car

variable deduction: numeric = 0

input km
    type: numeric
    label: "Kilometres"
    asked at: create

on finish
    set deductoin to inputs.km / 1000

verdict
    approve when deduction < 10
"""


class Editor:
    """A LanguageClient that keeps the diagnostics the server publishes, per document."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.published: dict[str, list[types.Diagnostic]] = {}
        #: Every publication, in order: (uri, version).
        self.log: list[tuple[str, int | None]] = []
        self.event = asyncio.Event()

    async def open(self, uri: str, text: str, version: int = 1) -> list[types.Diagnostic]:
        self.event.clear()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="insp", version=version, text=text)
            )
        )
        return await self.diagnostics(uri)

    async def change(self, uri: str, text: str, version: int) -> list[types.Diagnostic]:
        self.event.clear()
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return await self.diagnostics(uri)

    async def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        await asyncio.wait_for(self.event.wait(), 30)
        return self.published[uri]


@pytest.fixture
async def editor() -> AsyncIterator[Editor]:
    client = LanguageClient("test-editor", "1")
    editor = Editor(client)

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: types.PublishDiagnosticsParams) -> None:
        editor.published[params.uri] = params.diagnostics
        editor.log.append((params.uri, params.version))
        editor.event.set()

    await client.start_io(sys.executable, "-m", "inspectlang", "lsp")
    await client.initialize_async(
        types.InitializeParams(
            process_id=None, root_uri=ROOT.as_uri(), capabilities=types.ClientCapabilities()
        )
    )
    client.initialized(types.InitializedParams())
    yield editor
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def at(text: str, needle: str, nth: int = 0, offset: int = 1) -> types.Position:
    """The position `offset` characters into the `nth` occurrence of `needle`."""
    start = -1
    for _ in range(nth + 1):
        start = text.index(needle, start + 1)
    line = text.count("\n", 0, start)
    column = start - (text.rfind("\n", 0, start) + 1)
    return types.Position(line=line, character=column + offset)


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_diagnostics_as_you_type_with_codes_ranges_and_quick_fix(editor: Editor) -> None:
    uri = "file:///tmp/typo.insp"
    found = await editor.open(uri, TYPO)
    assert [d.code for d in found] == ["E025"]
    typo = found[0]
    assert typo.source == "inspectlang" and "deduction" in typo.message
    assert typo.range.start == at(TYPO, "deductoin", offset=0)
    assert typo.range.end.character - typo.range.start.character == len("deductoin")

    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=doc(uri),
            range=typo.range,
            context=types.CodeActionContext(diagnostics=[typo]),
        )
    )
    assert actions is not None and len(actions) == 1
    action = actions[0]
    assert isinstance(action, types.CodeAction) and action.edit is not None
    (edit,) = action.edit.changes[uri]  # type: ignore[index]
    assert (edit.new_text, edit.range) == ("deduction", typo.range)

    fixed = TYPO.replace("deductoin", "deduction")
    assert not await editor.change(uri, fixed, version=2)


async def test_hover_on_names_functions_validations_and_properties(editor: Editor) -> None:
    uri = EXAMPLE.as_uri()
    text = EXAMPLE.read_text()
    assert not await editor.open(uri, text)

    async def hover(position: types.Position) -> str:
        result = await editor.client.text_document_hover_async(
            types.HoverParams(text_document=doc(uri), position=position)
        )
        assert result is not None, position
        return result.contents.value  # type: ignore[union-attr]

    accessories = await hover(at(text, "inputs.accessories", offset=8))
    assert "multiselect" in accessories and "`charger`" in accessories
    assert "variable of type `numeric`" in await hover(at(text, "set price", offset=5))
    assert "round(n: number" in await hover(at(text, "round("))
    assert "screen or a print" in await hover(at(text, "validate recaptured", offset=10))
    assert "upload each image" in await hover(at(text, "max attempts"))
    assert "IMEI matches" in await hover(at(text, "checks.imei_matches", offset=8))


async def test_completion_offers_names_fields_validations_and_option_keys(editor: Editor) -> None:
    uri = "file:///tmp/complete.insp"
    text = EXAMPLE.read_text() + "\ncheck storage_known\n    valid when: inputs.storage = \n"
    await editor.open(uri, text)

    async def labels(position: types.Position) -> set[str]:
        result = await editor.client.text_document_completion_async(
            types.CompletionParams(text_document=doc(uri), position=position)
        )
        assert isinstance(result, types.CompletionList)
        return {item.label for item in result.items}

    assert {"imei", "storage", "accessories"} <= await labels(at(text, "inputs.imei", offset=7))
    assert {"gb64", "gb512"} <= await labels(at(text, "inputs.storage = ", offset=17))
    screen = await labels(at(text, "images.screen.damage", offset=14))
    assert {"approved", "attempts", "recaptured", "damage", "complete"} <= screen
    # only the validations `screen` declares, not every validation of the language
    assert not {"plate", "face_comparison", "make"} & screen
    assert {"plate", "face_comparison"} <= await labels(at(text, "validate damage", offset=9))
    assert {"round", "price", "inputs"} <= await labels(at(text, "set price to ", offset=13))
    assert {"template", "verdict", "input"} <= await labels(types.Position(line=0, character=0))


async def test_definition_references_and_rename(editor: Editor) -> None:
    uri = EXAMPLE.as_uri()
    text = EXAMPLE.read_text()
    await editor.open(uri, text)
    use = at(text, "inputs.imei", offset=8)
    location = await editor.client.text_document_definition_async(
        types.DefinitionParams(text_document=doc(uri), position=use)
    )
    assert isinstance(location, types.Location)
    assert location.range.start == at(text, "input imei", offset=6)

    references = await editor.client.text_document_references_async(
        types.ReferenceParams(
            text_document=doc(uri),
            position=use,
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    assert references is not None and len(references) == text.count("inputs.imei") + 1

    renamed = await editor.client.text_document_rename_async(
        types.RenameParams(text_document=doc(uri), position=use, new_name="serial")
    )
    assert renamed is not None and renamed.changes is not None
    edits = renamed.changes[uri]
    lines = text.split("\n")
    ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))
    for edit in reversed(ordered):  # from the end, so earlier offsets stay right
        row = lines[edit.range.start.line]
        lines[edit.range.start.line] = (
            row[: edit.range.start.character] + "serial" + row[edit.range.end.character :]
        )
    after = "\n".join(lines)
    assert "inputs.imei" not in after and "input serial" in after
    assert not await editor.change(uri, after, version=2)  # still compiles, nothing dangling

    with pytest.raises(JsonRpcException, match="not a name") as refused:
        await editor.client.text_document_rename_async(
            types.RenameParams(text_document=doc(uri), position=use, new_name="2bad")
        )
    # the protocol's RequestFailed with a message for the person, no Python traceback
    assert refused.value.code == types.LSPErrorCodes.RequestFailed
    assert refused.value.data is None


async def test_formatting_is_inspectlang_fmt(editor: Editor) -> None:
    uri = "file:///tmp/messy.insp"
    messy = 'template "Messy"\n    type: car\nverdict\n    approve when   true\n'
    await editor.open(uri, messy)
    edits = await editor.client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=doc(uri), options=types.FormattingOptions(tab_size=4, insert_spaces=True)
        )
    )
    assert edits is not None and len(edits) == 1
    from inspectlang.formatter import format_source

    assert edits[0].new_text == format_source(messy)

    broken = 'template "Broken"\n    type: car\nverdict\n    approve when (\n'
    await editor.change(uri, broken, version=2)
    assert not await editor.client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=doc(uri), options=types.FormattingOptions(tab_size=4, insert_spaces=True)
        )
    )


async def test_a_syntax_error_still_leaves_hover_and_completion(editor: Editor) -> None:
    uri = "file:///tmp/half.insp"
    text = TYPO.replace(
        "verdict\n    approve when deduction < 10\n", "verdict\n    approve when (\n"
    )
    found = await editor.open(uri, text)
    assert any(d.code == "E001" for d in found)
    result = await editor.client.text_document_hover_async(
        types.HoverParams(text_document=doc(uri), position=at(text, "inputs.km", offset=8))
    )
    assert result is not None and "numeric" in result.contents.value  # type: ignore[union-attr]


LETS = """template "Lets"
    type: people

input km
    type: numeric
    ask when: defined(consumer.email)

let thousands = round(inputs.km / 1000)

verdict
    disapprove "Too far: {thousands}" when thousands > 100
"""


async def test_a_let_has_hover_and_definition_like_a_variable(editor: Editor) -> None:
    uri = "file:///tmp/lets.insp"
    assert not await editor.open(uri, LETS)
    result = await editor.client.text_document_hover_async(
        types.HoverParams(text_document=doc(uri), position=at(LETS, "thousands > 100", offset=2))
    )
    assert result is not None
    assert "derived value" in result.contents.value  # type: ignore[union-attr]
    found = await editor.client.text_document_hover_async(
        types.HoverParams(text_document=doc(uri), position=at(LETS, "ask when", offset=2))
    )
    assert found is not None and "required" in found.contents.value  # type: ignore[union-attr]


async def test_formatting_a_huge_number_or_an_unknown_document_answers_without_traceback(
    editor: Editor,
) -> None:
    uri = "file:///tmp/huge.insp"
    huge = (
        'template "Huge"\n    type: car\n\ninput km\n    type: numeric\n'
        f"    minimum: 1{'0' * 309}\n\nverdict\n    approve when inputs.km > 1\n"
    )
    found = await editor.open(uri, huge)
    assert [d.code for d in found] == ["E019"]
    options = types.FormattingOptions(tab_size=4, insert_spaces=True)
    # left as it is, its error shown: no edit, no error
    assert (
        await editor.client.text_document_formatting_async(
            types.DocumentFormattingParams(text_document=doc(uri), options=options)
        )
        is None
    )

    with pytest.raises(JsonRpcException, match="is not open") as refused:
        await editor.client.text_document_formatting_async(
            types.DocumentFormattingParams(
                text_document=doc("file:///tmp/never-opened.insp"), options=options
            )
        )
    assert refused.value.code == -32602  # InvalidParams
    assert refused.value.data is None
    with pytest.raises(JsonRpcException, match="is not open"):
        await editor.client.text_document_hover_async(
            types.HoverParams(
                text_document=doc("file:///tmp/never-opened.insp"), position=types.Position(0, 0)
            )
        )


async def test_a_very_deep_let_chain_publishes_diagnostics(editor: Editor) -> None:
    lets = "\n".join(f"let a{i} = a{i - 1} + 1" for i in range(1, 250))
    verdict = "verdict\n    approve when a249 > 0\n"
    text = f'template "Deep"\n    type: car\n\nlet a0 = 1\n{lets}\n\n{verdict}'
    found = await editor.open("file:///tmp/deep.insp", text)
    assert found and {d.code for d in found} == {"E004"}


async def test_rapid_changes_publish_once_for_the_last_text(editor: Editor) -> None:
    uri = EXAMPLE.as_uri()
    text = EXAMPLE.read_text()
    assert not await editor.open(uri, text)
    editor.log.clear()
    editor.event.clear()
    for version in range(2, 12):  # ten edits, the last one leaves a typo
        edited = text if version < 11 else text.replace("inputs.imei", "inputs.imie", 1)
        editor.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
            )
        )
    await editor.diagnostics(uri)
    await asyncio.sleep(0.5)  # nothing else comes
    assert editor.log == [(uri, 11)]
    assert [d.code for d in editor.published[uri]] == ["E020"]


def test_a_check_that_fails_is_published_as_a_diagnostic(monkeypatch: pytest.MonkeyPatch) -> None:
    from inspectlang.lsp import server

    def boom(source: str, filename: str) -> list[object]:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(server, "diagnostics", boom)
    (found,) = server.safe_diagnostics("template", "x.insp")
    assert found.code == "internal" and "RecursionError" in found.message
    assert (found.span.line, found.span.column) == (1, 1)


def _message(payload: dict[str, object]) -> bytes:
    body = json.dumps(payload).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.parametrize(("shutdown", "status"), [(True, 0), (False, 1)])
def test_exit_status_follows_the_protocol(shutdown: bool, status: int) -> None:
    """`shutdown` then `exit` ends with 0 (and nothing on stderr); `exit` alone with 1."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": None, "capabilities": {}},
        },
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    ]
    if shutdown:
        messages.append({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
    messages.append({"jsonrpc": "2.0", "method": "exit"})
    done = subprocess.run(
        [sys.executable, "-m", "inspectlang", "lsp"],
        input=b"".join(_message(m) for m in messages),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == status, done.stderr.decode()
    assert b"Traceback" not in done.stderr


async def test_an_include_has_completion_hover_definition_and_its_files_diagnostics(
    editor: Editor, tmp_path: Path
) -> None:
    """`include "NAME"` resolves in the document's folder, as `inspectlang check` does."""
    fleet = ROOT / "examples" / "fleet"
    shared = (fleet / "vehicle-common.insp").read_text(encoding="utf-8")
    (tmp_path / "vehicle-common.insp").write_text(shared, encoding="utf-8")
    (tmp_path / "other-shared.insp").write_text("let x = 1\n", encoding="utf-8")
    text = (fleet / "fleet_check.insp").read_text(encoding="utf-8")
    path = tmp_path / "fleet_check.insp"
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    assert not await editor.open(uri, text)

    hover = await editor.client.text_document_hover_async(
        types.HoverParams(text_document=doc(uri), position=at(text, '"vehicle-common"', offset=3))
    )
    assert hover is not None
    value = hover.contents.value  # type: ignore[union-attr]
    assert "input `odometer`" in value and "check `plausible_mileage`" in value
    assert "let `high_mileage`" in value

    used = await editor.client.text_document_hover_async(
        types.HoverParams(text_document=doc(uri), position=at(text, "high_mileage", offset=3))
    )
    assert used is not None and "included file" in used.contents.value  # type: ignore[union-attr]

    definition = await editor.client.text_document_definition_async(
        types.DefinitionParams(
            text_document=doc(uri), position=at(text, "checks.plausible_mileage", offset=9)
        )
    )
    assert isinstance(definition, types.Location)
    assert definition.uri == (tmp_path / "vehicle-common.insp").as_uri()
    assert definition.range.start == at(shared, "check plausible_mileage", offset=6)
    into = await editor.client.text_document_definition_async(
        types.DefinitionParams(text_document=doc(uri), position=at(text, '"vehicle-common"'))
    )
    assert isinstance(into, types.Location) and into.uri.endswith("/vehicle-common.insp")

    writing = 'include "\n' + text
    await editor.change(uri, writing, version=2)
    completion = await editor.client.text_document_completion_async(
        types.CompletionParams(text_document=doc(uri), position=types.Position(0, 9))
    )
    assert isinstance(completion, types.CompletionList)
    labels = {item.label for item in completion.items}
    assert labels == {"vehicle-common", "other-shared"}  # not the document itself

    # A mistake in the included file: shown on the include line, naming the file; no crash.
    (tmp_path / "vehicle-common.insp").write_text(
        shared.replace("inputs.odometer > 250000", "inputs.odometr > 250000"), encoding="utf-8"
    )
    found = await editor.change(uri, text, version=3)
    assert [d.code for d in found] == ["E020"]
    assert "vehicle-common.insp:" in found[0].message and "odometr" in found[0].message
    assert found[0].range.start == at(text, '"vehicle-common"', offset=0)

    # The shared file itself, opened and edited: checked through the template that includes
    # it (its names too), never as a template missing its header.
    broken = (tmp_path / "vehicle-common.insp").read_text(encoding="utf-8")
    own = await editor.open((tmp_path / "vehicle-common.insp").as_uri(), broken)
    assert [(d.code, d.range.start) for d in own] == [("E020", at(broken, "odometr >", offset=0))]
    fixed = await editor.change((tmp_path / "vehicle-common.insp").as_uri(), shared, version=2)
    assert not fixed  # the unsaved text is what is checked
