"""`inspectlang diff OLD NEW`: inspections one revision approves and the other does not, each
with events files simulate replays to the verdicts claimed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspectlang.compiler import compile_source
from runtime.program import load_program
from runtime.proofs.diff import difference
from server.main import main

ROOT = Path(__file__).resolve().parents[2]

OLD = """template "Doors"
    type: car

image front
    label: "Front"
    validate plate, required, minimum confidence 90

input doors
    type: numeric
    label: "Doors"
    asked at: create
    required
    minimum: 2
    maximum: 5
    whole number

verdict
    disapprove "Two-door cars are not covered" when inputs.doors = 2
    approve when images.front.approved
"""


def program(source: str) -> object:
    return load_program(compile_source(source, "doors.insp"))


def ends(
    script: dict[str, object], source: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[str, str]:
    template, events = tmp_path / "t.insp", tmp_path / "e.json"
    template.write_text(source)
    events.write_text(json.dumps(script))
    capsys.readouterr()
    assert main(["simulate", str(template), str(events), "--format", "json"]) == 0
    inspection = json.loads(capsys.readouterr().out)["inspection"]
    return inspection["status"], inspection["veredict"]


def test_a_revision_is_equivalent_to_itself() -> None:
    found = difference(program(OLD), program(OLD))  # type: ignore[arg-type]
    assert found.equivalent
    assert [d.answer for d in found.directions] == ["same", "same"]


def test_covering_two_door_cars_approves_what_the_old_one_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = OLD.replace('    disapprove "Two-door cars are not covered" when inputs.doors = 2\n', "")
    found = difference(program(OLD), program(new))  # type: ignore[arg-type]
    assert not found.equivalent
    by_new, by_old = found.directions
    assert by_new.answer == "differs" and by_old.answer == "same"
    assert by_new.old_events is not None and by_new.new_events is not None
    body = by_new.new_events["events"][0]["body"]
    assert {"input": "doors", "value": 2} in body["inputs"]
    assert ends(by_new.old_events, OLD, tmp_path, capsys) == ("completed", "disapproved")
    assert ends(by_new.new_events, new, tmp_path, capsys) == ("completed", "approved")


def test_a_lower_confidence_differs_in_one_direction_and_the_command_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    new = OLD.replace("minimum confidence 90", "minimum confidence 80")
    old_path, new_path = tmp_path / "old.insp", tmp_path / "new.insp"
    old_path.write_text(OLD)
    new_path.write_text(new)
    assert main(["diff", str(old_path), str(new_path)]) == 1
    out = capsys.readouterr().out
    assert "approved by NEW and not by OLD: for example" in out
    assert "nothing is approved by OLD and not by NEW" in out
    assert main(["diff", str(old_path), str(old_path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["equivalent"] is True
    found = difference(program(OLD), program(new))  # type: ignore[arg-type]
    example = found.directions[0]
    assert example.new_events is not None and example.old_events is not None
    confidence = next(
        v["confidence"]
        for e in example.new_events["events"]
        if e.get("event") == "image"
        for v in e["validations"]
    )
    assert 80 <= confidence < 90
    assert ends(example.new_events, new, tmp_path, capsys) == ("completed", "approved")
    assert ends(example.old_events, OLD, tmp_path, capsys) == ("completed", "disapproved")


DATES = """template "Parcel"
    type: goods

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
verdict
    disapprove "A week late" when days_between(inputs.promised, inputs.delivered) > 7
    approve when images.packages.approved
"""


def test_a_date_order_added_refuses_at_intake_what_the_old_revision_approved(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """NEW declares `not before: promised`: a delivery dated before the promise, approved by
    OLD, is refused by NEW's intake. That is a difference, never `equivalent`; the example's
    NEW events are refused at the create (`invalid_input_value`), OLD's end approved."""
    old = DATES.replace("ORDER\n", "")
    new = DATES.replace("ORDER\n", "    not before: promised\n")
    found = difference(program(old), program(new))  # type: ignore[arg-type]
    by_key = {d.key: d for d in found.directions}
    assert not found.equivalent
    assert by_key["approved_by_new_only"].answer == "same"
    only_old = by_key["approved_by_old_only"]
    assert only_old.answer == "differs", only_old.detail
    assert only_old.old_end is not None and only_old.old_end["veredict"] == "approved"
    assert only_old.new_end is not None
    assert "invalid_input_value" in only_old.new_end["refused"][0]
    body = only_old.old_events["events"][0]["body"]  # type: ignore[index]
    given = {item["input"]: item["value"] for item in body["inputs"]}
    assert given["delivered"] < given["promised"]
    assert ends(only_old.old_events, old, tmp_path, capsys) == ("completed", "approved")  # type: ignore[arg-type]


def test_the_same_date_order_in_both_revisions_is_equivalent() -> None:
    both = DATES.replace("ORDER\n", "    not before: promised\n")
    assert difference(program(both), program(both)).equivalent  # type: ignore[arg-type]
