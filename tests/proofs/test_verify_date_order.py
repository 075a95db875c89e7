"""`verify` reads a declared date order (`not before: OTHER`): the solver constrains the two
dates as the runtime does when both are given, so it finds no counterexample the runtime would
refuse, and a branch only a broken order reaches is proven unreachable. Every events file the
answers carry is replayed by the real `inspectlang simulate`, none refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from runtime.proofs.properties import Result, verify
from tests.proofs.test_verify import by_name, program_of, replays

SOURCE = """template "Parcel"
    type: goods

variable early: numeric = 0

image packages
    label: "Packages"
    validate object

input promised
    type: date
    label: "Promised"
    asked at: create
    required

input delivered
    type: date
    label: "Delivered"
    asked at: create
    required
ORDER
on inspection created
    if days_between(inputs.promised, inputs.delivered) < 0
        set early to 1

verdict
    disapprove "Delivered before the promise" when early = 1
    approve when images.packages.approved
"""


def answers(source: str) -> dict[str, Result]:
    return by_name(verify(program_of(source)))  # type: ignore[arg-type]


def test_without_the_order_an_early_delivery_is_reachable() -> None:
    results = answers(SOURCE.replace("ORDER\n", ""))
    early = next(r for n, r in results.items() if n.endswith("_then"))
    assert early.answer == "holds"
    line = next(r for n, r in results.items() if n.startswith("disapprove_line"))
    assert line.answer == "holds"


@pytest.mark.parametrize(
    "order",
    ["    not before: promised\n", "    not before: inputs.promised\n"],
)
def test_with_the_order_the_early_branch_is_unreachable_and_every_answer_replays(
    order: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = SOURCE.replace("ORDER\n", order)
    results = answers(source)
    early = next(r for n, r in results.items() if n.endswith("_then"))
    assert early.answer == "fails"
    line = next(r for n, r in results.items() if n.startswith("disapprove_line"))
    assert line.answer == "fails"  # only a delivery before the promise reaches it
    assert results["approval_reachable"].answer == "holds"
    template = tmp_path / "parcel.insp"
    template.write_text(source)
    assert replays(template, list(results.values()), tmp_path, capsys) > 0


def test_the_order_said_from_the_other_side_is_the_same_fact() -> None:
    source = SOURCE.replace("ORDER\n", "").replace(
        '    label: "Promised"\n', '    label: "Promised"\n    not after: delivered\n'
    )
    early = next(r for n, r in answers(source).items() if n.endswith("_then"))
    assert early.answer == "fails"
