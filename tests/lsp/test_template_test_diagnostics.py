"""Failing template tests as diagnostics, through the real language server: `inspectlang lsp`
over stdio finds the provider `runtime.proofs.editor` through its entry point (the language
imports no runtime) and shows each failing case at the case in `NAME.tests.json` and at the
verdict line that decided it in `NAME.insp`; saving a fixed tests file clears both."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from lsprotocol import types

from inspectlang.lsp.plugins import GROUP, providers
from runtime.proofs import editor as proofs_editor
from tests.lsp import test_server
from tests.lsp.test_server import Editor
from tests.server.test_template_tests_api import MILEAGE, case

#: The editor of the server's own tests: `inspectlang lsp` over stdio, driven by pygls's client.
editor = test_server.editor

pytestmark = pytest.mark.anyio

#: The API test's template: disapproves past 100,000 km, else approves.
TEMPLATE = MILEAGE.format(n=1, limit=100000)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _until(
    editor: Editor, uri: str, holds: Callable[[list[types.Diagnostic]], bool]
) -> list[types.Diagnostic]:
    """The diagnostics of `uri` once a publication makes `holds` true."""

    async def wait() -> list[types.Diagnostic]:
        while not holds(editor.published.get(uri, [])):
            editor.event.clear()
            await editor.event.wait()
        return editor.published[uri]

    return await asyncio.wait_for(wait(), 60)


def _tests_failing(found: list[types.Diagnostic]) -> bool:
    return any(d.code == "T001" for d in found)


def _open(editor: Editor, path: Path, text: str) -> None:
    editor.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=path.as_uri(), language_id="insp", version=1, text=text)
        )
    )


def test_the_provider_is_declared_as_an_entry_point() -> None:
    assert GROUP == "inspectlang.diagnostics"
    assert proofs_editor.diagnostics in providers()


async def test_a_failing_case_shows_in_the_tests_file_and_at_the_deciding_line(
    editor: Editor, tmp_path: Path
) -> None:
    template = tmp_path / "gate.insp"
    template.write_text(TEMPLATE, encoding="utf-8")
    tests = tmp_path / "gate.tests.json"
    cases = [
        case("a low mileage is approved", 5000, "approved"),
        case("a high mileage is approved", 200000, "approved"),
    ]
    text = json.dumps({"cases": cases}, indent=2)
    tests.write_text(text, encoding="utf-8")
    second = text.splitlines().index("    {", 10)  # where the second case's object begins

    _open(editor, template, TEMPLATE)
    in_tests = await _until(editor, tests.as_uri(), bool)
    assert [(d.code, d.severity, d.range.start.line) for d in in_tests] == [
        ("T001", types.DiagnosticSeverity.Error, second)
    ]
    assert "'a high mileage is approved' fails" in in_tests[0].message
    assert "veredict is disapproved, expected approved" in in_tests[0].message
    in_template = await _until(editor, template.as_uri(), _tests_failing)
    disapprove = TEMPLATE.splitlines().index(
        '    disapprove "Too many kilometres" when inputs.mileage > 100000'
    )
    failing = [d for d in in_template if d.code == "T001"]
    assert [(d.severity, d.range.start.line) for d in failing] == [
        (types.DiagnosticSeverity.Warning, disapprove)
    ]
    assert failing[0].range.start.character == 4
    assert f"gate.tests.json:{second + 1}" in failing[0].message

    # An edit: the tests ran on the saved text, so their warnings leave the changed template.
    edited = TEMPLATE.replace("100000", "100001")
    assert not _tests_failing(await editor.change(template.as_uri(), edited, version=2))

    # The tests file fixed and saved: both files are clear again.
    cases[1] = case("a high mileage is refused", 200000, "disapproved")
    tests.write_text(json.dumps({"cases": cases}, indent=2), encoding="utf-8")
    editor.client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(tests.as_uri()))
    )
    assert not await _until(editor, tests.as_uri(), lambda found: not found)


async def test_an_unreadable_tests_file_is_one_diagnostic_at_its_top(
    editor: Editor, tmp_path: Path
) -> None:
    template = tmp_path / "gate.insp"
    template.write_text(TEMPLATE, encoding="utf-8")
    tests = tmp_path / "gate.tests.json"
    tests.write_text('{"cases": [{"name": "no events"}]}', encoding="utf-8")
    _open(editor, template, TEMPLATE)
    found = await _until(editor, tests.as_uri(), bool)
    assert [(d.code, d.range.start.line) for d in found] == [("T002", 0)]
    assert "events is a non-empty list" in found[0].message
