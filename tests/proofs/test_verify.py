"""`inspectlang verify`: the properties of runtime.proofs, and every counterexample and example
they produce replayed through `inspectlang simulate` itself (the guarantee that the formula
means what the runtime does)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from inspectlang.compiler import compile_source
from runtime.program import load_program
from runtime.proofs.properties import Result, verify
from server.main import main

ROOT = Path(__file__).resolve().parents[2]
BUILTINS = sorted((ROOT / "inspectlang" / "builtins").glob("*.insp"))

HEADER = """template "Proof probe"
    type: car

variable ratio: numeric = 0

product
    require plate

image front
    label: "Front"
    validate plate, required

input doors
    type: numeric
    label: "Doors"
    asked at: create
    minimum: 0
    maximum: 6
    whole number
"""


def program_of(source: str) -> object:
    return load_program(compile_source(source, "probe.insp"))


def by_name(results: list[Result]) -> dict[str, Result]:
    return {result.name: result for result in results}


def simulate(
    template: Path, events: dict[str, object], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> dict[str, object]:
    """The events file run by the real `inspectlang simulate` command."""
    path = tmp_path / "counterexample.events.json"
    path.write_text(json.dumps(events))
    capsys.readouterr()
    assert main(["simulate", str(template), str(path), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    inspection = document["inspection"]
    return {
        "status": inspection["status"],
        "veredict": inspection["veredict"],
        "steps": document["steps"],
    }


def replays(
    template: Path, results: list[Result], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> int:
    """Every events file the results carry, replayed: simulate ends where verify said."""
    count = 0
    for result in results:
        if result.events is None:
            continue
        shown = simulate(template, result.events, tmp_path, capsys)
        assert result.replayed is not None
        assert (shown["status"], shown["veredict"]) == (
            result.replayed["status"],
            result.replayed["veredict"],
        ), result.name
        steps = shown["steps"]
        assert isinstance(steps, list)
        assert not any("refused" in step for step in steps), result.name
        count += 1
    return count


def test_division_by_zero_is_found_with_a_counterexample_simulate_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (
        HEADER
        + """
on inspection created
    set ratio to 12 / inputs.doors

verdict
    approve when images.front.approved
"""
    )
    template = tmp_path / "probe.insp"
    template.write_text(source)
    results = by_name(verify(program_of(source)))  # type: ignore[arg-type]
    failing = results["no_division_by_zero"]
    assert failing.answer == "fails"
    assert "line" in failing.detail
    body = failing.events["events"][0]["body"]  # type: ignore[index]
    assert {"input": "doors", "value": 0} in body["inputs"]
    replays(template, [failing], tmp_path, capsys)
    assert results["approval_reachable"].answer == "holds"


def test_a_disapproval_skipped_on_a_missing_input_is_an_approval_on_a_missing_value(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = (
        HEADER
        + """
verdict
    disapprove "Two-door cars are not covered" when inputs.doors < 4
    approve when images.front.approved
"""
    )
    template = tmp_path / "probe.insp"
    template.write_text(source)
    results = by_name(verify(program_of(source)))  # type: ignore[arg-type]
    failing = results["no_approval_on_missing_value"]
    assert failing.answer == "fails"
    inputs = failing.events["events"][0]["body"]["inputs"]  # type: ignore[index]
    assert all(item["input"] != "doors" for item in inputs)
    assert failing.replayed == {"status": "completed", "veredict": "approved"}
    replays(template, [failing], tmp_path, capsys)


def test_an_approval_that_can_never_hold_and_an_unreachable_branch_fail(tmp_path: Path) -> None:
    source = (
        HEADER
        + """
input seats
    type: numeric
    label: "Seats"
    asked at: create
    minimum: 1
    maximum: 9

on inspection created
    # Relations between two inputs are beyond the checker's ranges; the solver sees them.
    if inputs.seats < inputs.doors and inputs.doors < inputs.seats
        set ratio to 1

verdict
    approve when inputs.doors > inputs.seats and inputs.seats > inputs.doors
"""
    )
    results = by_name(verify(program_of(source)))  # type: ignore[arg-type]
    assert results["approval_reachable"].answer == "fails"
    assert results["disapproval_reachable"].answer == "holds"
    branch = next(r for n, r in results.items() if n.endswith("_then"))
    assert branch.answer == "fails"
    assert next(r for n, r in results.items() if n.endswith("_else")).answer == "holds"


def test_review_outranks_disapprove_and_both_lines_are_reachable() -> None:
    source = (
        HEADER
        + """
verdict
    review "A person looks at old cars" when car.year < 2000
    disapprove "Too old" when car.year < 1990
    approve when images.front.approved
"""
    )
    results = by_name(verify(program_of(source)))  # type: ignore[arg-type]
    lines = {n: r.answer for n, r in results.items() if "line" in n}
    decides = [n for n in lines if n.endswith("_decides")]
    assert all(answer == "holds" for n, answer in lines.items() if n not in decides)
    assert results["no_approval_without_evidence"].answer == "holds"
    # ...and the refusal never decides: every car under 1990 is under 2000, and goes to a person
    assert decides == ["disapprove_line_23_decides"]
    assert lines["disapprove_line_23_decides"] == "fails"


DIGITS = """template "Digits probe"
    type: cellphone

image imei_screen
    label: "IMEI screen"
    validate object

input imei
    type: text
    label: "IMEI"
    asked at: create
    required
    pattern: "^[0-9]{15}$"

let even = number(substring(inputs.imei, 1, 2)) + number(substring(inputs.imei, 3, 4))
"""


@pytest.mark.parametrize(
    ("verdict", "imei"),
    [
        # The digits the free atom chose serve: the screen's text is drawn to hold them.
        (
            '    disapprove "Odd" when mod(even, 2) = 1\n'
            "    approve when contains(images.imei_screen.object.result, inputs.imei)\n",
            None,
        ),
        # Only one IMEI is in the constant text: the digits the free atom chose fail when
        # fixed, and the question is asked again with the atom exact.
        (
            '    disapprove "Odd" when mod(even, 2) = 1\n'
            '    approve when contains("Serial 490154203237518 seen", inputs.imei)\n',
            "490154203237518",
        ),
    ],
    ids=["free-text", "constant-text"],
)
def test_a_string_atom_over_digits_is_exact_in_every_answer(
    verdict: str, imei: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`contains` of a text of digits is left free while the digits are solved, then made exact
    (runtime.proofs.properties.Prover._check): every model reported satisfies it."""
    source = DIGITS + "\nverdict\n" + verdict
    template = tmp_path / "digits.insp"
    template.write_text(source)
    results = by_name(verify(program_of(source)))  # type: ignore[arg-type]
    approval = results["approval_reachable"]
    assert approval.answer == "holds"
    assert approval.replayed is not None and approval.replayed["veredict"] == "approved"
    given = approval.events["events"][0]["body"]["inputs"]  # type: ignore[index]
    value = next(item["value"] for item in given if item["input"] == "imei")
    if imei is not None:
        assert value == imei
    assert (int(value[1]) + int(value[3])) % 2 == 0
    replays(template, list(results.values()), tmp_path, capsys)


def test_a_string_atom_over_digits_that_no_digits_satisfy_is_unreachable() -> None:
    """Left free, the atom could hold; exact, no IMEI of even digits is in the text: the
    approval is unreachable, never `holds` on the free atom's model."""
    source = (
        DIGITS
        + "\nverdict\n"
        + '    disapprove "Odd" when mod(even, 2) = 1\n'
        + '    approve when contains("Serial 491254203237518 seen", inputs.imei)\n'
    )
    results = by_name(verify(program_of(source)))  # type: ignore[arg-type]
    assert results["approval_reachable"].answer == "fails"


@pytest.mark.parametrize("template", BUILTINS, ids=[p.stem for p in BUILTINS])
def test_every_builtin_verifies_and_its_examples_replay(
    template: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = verify(load_program(compile_source(template.read_text(), str(template))))
    assert [r.name for r in results if r.answer != "holds"] == []
    assert replays(template, results, tmp_path, capsys) >= 2


def test_motor_insurance_example_verifies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = ROOT / "examples" / "motor_insurance.insp"
    results = verify(load_program(compile_source(template.read_text(), str(template))))
    assert [(r.name, r.detail) for r in results if r.answer != "holds"] == []
    replays(template, results, tmp_path, capsys)


def test_the_command_prints_json_and_writes_counterexamples(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "probe.insp"
    template.write_text(
        HEADER
        + "\non inspection created\n    set ratio to 12 / inputs.doors\n\n"
        + "verdict\n    approve when images.front.approved\n"
    )
    out = tmp_path / "found"
    assert main(["verify", str(template), "--format", "json", "--counterexamples", str(out)]) == 1
    document = json.loads(capsys.readouterr().out)
    answers = {p["property"]: p["answer"] for p in document["properties"]}
    assert answers["no_division_by_zero"] == "fails"
    assert (out / "no_division_by_zero.events.json").is_file()
    assert main(["verify", str(template)]) == 1
    text = capsys.readouterr().out
    assert "FAILS   no_division_by_zero" in text and "counterexample" in text


def test_z3_is_not_imported_by_check_or_compile(tmp_path: Path) -> None:
    template = ROOT / "inspectlang" / "builtins" / "car_easy.insp"
    probe = (
        "import sys\n"
        "from server.main import main\n"
        f"main(['check', {str(template)!r}])\n"
        f"main(['compile', {str(template)!r}])\n"
        "print('z3' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip().splitlines()[-1] == "False"
