"""One entry per validation (inspectlang.validations) and the code that decides it agree.

Every entry that says it runs at upload has a validator of `runtime.validators` and every such
validator an entry that says so; the same for the worker's analyzers (`runtime.vision`, with
the vision extra); an entry run `OUTSIDE` has neither (a provider, a posted result or a person
decides it). docs/vision.md's table says where each one runs, as its entry does.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import ClassVar

import pytest

from inspectlang.validations import OUTSIDE, UPLOAD, VALIDATIONS, WORKER
from runtime import evidence as _evidence  # noqa: F401  (registers duplicate and edited)
from runtime import vision
from runtime.validators import REGISTRY, register

VISION_DOC = Path(__file__).resolve().parents[2] / "docs" / "vision.md"


def names_run(where: str) -> set[str]:
    return {name for name, entry in VALIDATIONS.items() if entry.where == where}


def test_every_upload_validator_has_an_entry_run_at_upload_and_back() -> None:
    assert set(REGISTRY) == names_run(UPLOAD)


@pytest.mark.skipif(not vision.available(), reason="the vision extra is not installed")
def test_every_analyzer_has_an_entry_run_in_the_worker_and_back() -> None:
    assert set(vision.load_analyzers()) == names_run(WORKER)


def test_a_validator_for_a_name_without_an_entry_is_refused() -> None:
    with pytest.raises(LookupError, match=r"'not_a_validation' in inspectlang\.validations"):

        @register
        class NotAValidator:
            name: ClassVar[str] = "not_a_validation"

    with pytest.raises(LookupError, match="no validation 'not_a_validation'"):

        @vision.register
        class NotAnAnalyzer:
            name: ClassVar[str] = "not_a_validation"

    assert "not_a_validation" not in REGISTRY and "not_a_validation" not in vision.load_analyzers()


def test_docs_vision_says_where_each_validation_runs_as_its_entry_does() -> None:
    """The table of docs/vision.md's "Where each validation runs": each row's names and where."""
    text = VISION_DOC.read_text(encoding="utf-8")
    section = text.split("## Where each validation runs", 1)[1]
    table = section[section.index("| validation | where |") :].split("\n\n", 1)[0]
    documented: dict[str, str] = {}
    for row in table.splitlines()[2:]:
        names_cell, where_cell = row.split("|")[1:3]
        where = where_cell.split()[0]
        for name in re.findall(r"`([A-Za-z_]+)`", names_cell):
            documented[name] = where
    assert set(documented) == set(VALIDATIONS)
    for name, where in documented.items():
        assert where == VALIDATIONS[name].where, name
    assert OUTSIDE in documented.values()
