"""Every Python code block of docs/runtime.md runs as written, each in a fresh interpreter from
the repository root (a reader copies them into a file and runs it; a block that needs a name it
does not define, or placeholders such as `"input_..."`, fails here)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "runtime.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)


BLOCKS = python_blocks(DOC.read_text(encoding="utf-8"))


def test_the_doc_has_code_blocks() -> None:
    assert len(BLOCKS) >= 2
    assert python_blocks("```python\nx = 1\n```\ntext\n```python\ny = 2\n```\n") == [
        "x = 1\n",
        "y = 2\n",
    ]


@pytest.mark.parametrize("number", range(len(BLOCKS)))
def test_every_block_runs(number: int) -> None:
    result = subprocess.run(
        [sys.executable, "-c", BLOCKS[number]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, f"block {number + 1} of {DOC.name}:\n{result.stderr[-3000:]}"
