"""docs/tutorial.md Part 4 shows real runs of verify and test on examples/motor_insurance.insp."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from server.main import main

ROOT = Path(__file__).resolve().parents[2]
PART_4 = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8").split("## Part 4:", 1)[1]


def shown(command: str) -> list[str]:
    """The output lines the tutorial shows after `$ inspectlang COMMAND`, without `...`."""
    found = re.findall(r"^```\n(.*?)^```", PART_4, re.DOTALL | re.MULTILINE)
    (block,) = [b for b in found if b.startswith(f"$ inspectlang {command}")]
    return [line for line in block.splitlines()[1:] if line.strip() != "..."]


@pytest.mark.parametrize(
    ("command", "argv"),
    [
        ("verify", ["verify", str(ROOT / "examples" / "motor_insurance.insp")]),
        (
            "test",
            ["test", str(ROOT / "examples" / "motor_insurance.insp"), "--min-coverage", "100"],
        ),
    ],
)
def test_the_shown_output_is_real(
    command: str, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 0
    actual = capsys.readouterr().out.splitlines()
    for line in shown(command):
        # the time of a run is the machine's
        pattern = re.escape(line).replace(r"0\.84\ s", r"[0-9.]+\ s")
        assert any(re.fullmatch(pattern, real) for real in actual), line
