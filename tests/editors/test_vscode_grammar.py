"""The VS Code extension's TextMate grammar, run by the real engine (vscode-textmate and
vscode-oniguruma from npm, installed by `make editors-deps`) over every example and built-in
template: comments, strings, numbers, declaration keywords, validation names and function calls
get their scopes and nothing is invalid (editors/vscode/test/grammar.test.js)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "editors" / "vscode"
#: Constructs no shipped template uses yet (issue 25's expressions), kept compiling below.
FIXTURE = EXTENSION / "test" / "constructs.insp"


def test_the_grammar_scopes_every_template_we_ship() -> None:
    node = shutil.which("node")
    assert node, "Node.js runs the grammar test (it comes with the machine; see README)"
    assert (EXTENSION / "node_modules" / "vscode-textmate").is_dir(), "run `make editors-deps`"
    files = sorted(ROOT.glob("examples/*.insp")) + sorted(ROOT.glob("inspectlang/builtins/*.insp"))
    files += sorted(ROOT.glob("examples/fleet/*.insp"))  # `include "vehicle-common"`
    files.append(FIXTURE)
    run = subprocess.run(
        [node, "test/grammar.test.js", *map(str, files)],
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads(run.stdout.strip().splitlines()[-1])
    assert summary["files"] == len(files) and summary["problems"] == 0
    assert all(summary["checked"][kind] > 0 for kind in ("comment", "string", "number"))
    # Every statement's first word is a keyword, by the generic pattern (a new one needs no edit).
    assert summary["checked"].get("statement", 0) > 0
    # motor_insurance.insp has a reason with a value (`"{severe_damages} severe damages"`).
    assert summary["checked"].get("interpolation", 0) > 0


def test_the_grammar_fixture_is_a_template_the_checker_accepts() -> None:
    from inspectlang.compiler import check_source

    assert check_source(FIXTURE.read_text(encoding="utf-8"), str(FIXTURE)) == []


def test_the_extension_declares_the_language_and_starts_the_server() -> None:
    manifest = json.loads((EXTENSION / "package.json").read_text())
    (language,) = manifest["contributes"]["languages"]
    assert language["id"] == "insp" and language["extensions"] == [".insp"]
    (grammar,) = manifest["contributes"]["grammars"]
    assert (EXTENSION / grammar["path"]).is_file() and grammar["scopeName"] == "source.insp"
    server = manifest["contributes"]["configuration"]["properties"]["inspectlang.server.command"]
    assert server["default"] == ["inspectlang", "lsp"]
    assert "vscode-languageclient/node" in (EXTENSION / "extension.js").read_text()
