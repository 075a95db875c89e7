"""docs/tutorial.md shows real output: its templates compile, and every `inspectlang simulate`
it shows is what the command prints for the template and events it describes (part 1's file,
then part 2's additions assembled the way the text says)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from rt_support import ROOT

from inspectlang.compiler import check_source
from server.main import main

TUTORIAL = ROOT / "docs" / "tutorial.md"
TEXT = TUTORIAL.read_text(encoding="utf-8")
PART_2 = "## Part 2:"


def blocks(text: str, language: str | None = None) -> list[str]:
    """The fenced blocks of `text`, in order; only those of `language` when given."""
    found = re.findall(r"^ *```([a-z]*)\n(.*?)^ *```", text, re.DOTALL | re.MULTILINE)
    return [body for lang, body in found if language is None or lang == language]


PART_3 = "## Part 3:"
PART_1, PART_2_TEXT = TEXT.split(PART_2, 1)
PART_2_TEXT, PART_3_TEXT = PART_2_TEXT.split(PART_3, 1)


def part_1_template() -> str:
    return blocks(PART_1)[0]


def part_1_events() -> dict[str, Any]:
    events = [b for b in blocks(PART_1, "json") if b.lstrip().startswith('{\n  "start"')]
    (found,) = events
    loaded: dict[str, Any] = json.loads(found)
    return loaded


def part_2_template() -> str:
    """Part 1's template with part 2's declarations after the other inputs and its verdict
    in place of part 1's, as the text says."""
    frame, naming, verdict = blocks(PART_2_TEXT, "insp")
    source = part_1_template()
    rule = source.index("on input set condition")
    source = source[:rule] + frame + "\n" + naming + "\n" + source[rule:]
    return source[: source.index("verdict\n")] + verdict


def shown_runs(text: str) -> list[str]:
    """The output blocks of `inspectlang simulate` in `text`, without the command line."""
    prefix = "$ inspectlang simulate trade_in.insp trade_in.events.json\n"
    return [b.removeprefix(prefix) for b in blocks(text, "") if b.startswith(prefix)]


def simulate(tmp_path: Path, source: str, script: dict[str, Any], capsys: Any) -> str:
    template = tmp_path / "trade_in.insp"
    template.write_text(source, encoding="utf-8")
    events = tmp_path / "trade_in.events.json"
    events.write_text(json.dumps(script), encoding="utf-8")
    assert main(["simulate", str(template), str(events)]) == 0
    out: str = capsys.readouterr().out
    return out


def shown_in(shown: str, actual: str) -> None:
    """Every line shown is in the actual output, in order; `...` stands for lines left out."""
    actual_lines = actual.split("\n")
    position = 0
    for line in shown.rstrip("\n").split("\n"):
        if line.strip() == "...":
            continue
        assert line in actual_lines[position:], f"{line!r} not in:\n{actual}"
        position = actual_lines.index(line, position) + 1


def test_part_2_template_compiles_clean() -> None:
    assert check_source(part_2_template(), "trade_in.insp") == []


def test_part_1_runs_are_real(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, screen = shown_runs(PART_1)
    script = part_1_events()
    assert simulate(tmp_path, part_1_template(), script, capsys) == first
    script["events"][2]["validations"][0]["confidence"] = 30
    shown_in(screen, simulate(tmp_path, part_1_template(), script, capsys))


def test_part_2_runs_are_real(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answered, forgotten = (json.loads(b) for b in blocks(PART_2_TEXT, "json"))
    full, refused, fixed = shown_runs(PART_2_TEXT)
    script = part_1_events()
    script["events"][4] = answered
    assert simulate(tmp_path, part_2_template(), script, capsys) == full
    script["events"][4] = forgotten
    assert simulate(tmp_path, part_2_template(), script, capsys).startswith(refused)
    forgotten["body"]["inputs"].append({"input": "carbon_damage", "value": "none"})
    shown_in(fixed, simulate(tmp_path, part_2_template(), script, capsys))


def test_part_2_uses_each_construct_it_teaches() -> None:
    source = part_2_template()
    for construct in ("ask when:", "let ", "trim(", "replace(", "matches(", "normalize(", '\\"'):
        assert construct in source, construct
    assert re.search(r'disapprove "[^"]*\{', source)  # a reason with a value


def test_part_3_include_output_is_real(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Part 2's template with `include "bike-common"` on top says what the text shows; without
    its own copies of the shared declarations it is clean."""
    (shared,) = blocks(PART_3_TEXT, "insp")
    (tmp_path / "bike-common.insp").write_text(shared, encoding="utf-8")
    source = 'include "bike-common"\n\n' + part_2_template()
    (tmp_path / "trade_in.insp").write_text(source, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "trade_in.insp"]) == 1
    (shown,) = [b for b in blocks(PART_3_TEXT, "") if b.startswith("$ inspectlang check")]
    assert capsys.readouterr().out.rstrip("\n") == shown.removeprefix(
        "$ inspectlang check trade_in.insp\n"
    ).rstrip("\n")
    for declaration in (
        source[source.index("input serial_number") : source.index("# The serial as")],
        'let serial = upper(replace(trim(inputs.serial_number), " ", ""))\n',
        'let serial_ok = matches(serial, "^[A-Z]{2}[0-9]{6}$")\n',
    ):
        source = source.replace(declaration, "", 1)
    source = source.replace("# The serial as the shop files it: upper case, without spaces.\n", "")
    (tmp_path / "trade_in.insp").write_text(source, encoding="utf-8")
    assert main(["check", "trade_in.insp"]) == 0
