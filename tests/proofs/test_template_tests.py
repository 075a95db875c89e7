"""`inspectlang test`: a template's cases (NAME.tests.json) run through simulate, with the
decision coverage they reach."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspectlang.compiler import compile_source
from runtime.program import load_program
from runtime.proofs.cases import CasesError, read_cases, run_cases
from server.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "motor_insurance.insp"

TEMPLATE = """template "Doors"
    type: car

variable band: text = "none"

image front
    label: "Front"
    validate plate, required

input doors
    type: numeric
    label: "Doors"
    asked at: create
    required
    minimum: 2
    maximum: 5
    whole number

on inspection created
    if inputs.doors < 4
        set band to "small"
    else
        set band to "large"

verdict
    disapprove "Two-door cars are not covered" when inputs.doors = 2
    approve when images.front.approved
"""


def case(name: str, doors: int, expect: dict[str, object], photo: bool = True) -> dict[str, object]:
    events: list[dict[str, object]] = [
        {"event": "create", "body": {"inputs": [{"input": "doors", "value": doors}]}},
        {"event": "start"},
    ]
    if photo:
        events.append(
            {
                "event": "image",
                "image": "front",
                "validations": [{"validation": "plate", "confidence": 95, "result": "AB1"}],
            }
        )
    events.append({"event": "finish"})
    return {"name": name, "events": events, "expect": expect}


def program() -> object:
    return load_program(compile_source(TEMPLATE, "doors.insp"))


def test_the_motor_insurance_cases_pass_with_full_coverage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["test", str(EXAMPLE), "--min-coverage", "100", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and report["coverage"] == 100.0 and report["uncovered"] == []
    assert len(report["cases"]) >= 8


def test_coverage_names_what_the_cases_did_not_exercise() -> None:
    cases = [case("four doors approved", 4, {"status": "completed", "veredict": "approved"})]
    report = run_cases(program(), cases)  # type: ignore[arg-type]
    assert report.passed
    assert "the else branch of the `if` at line 20" in report.covered
    assert "the then branch of the `if` at line 20" in report.uncovered
    assert any(text.startswith("disapprove line") for text in report.uncovered)
    assert 0 < report.coverage < 100
    cases.append(case("two doors refused", 2, {"veredict": "disapproved"}))
    cases.append(case("no photo refused", 3, {"veredict": "disapproved"}, photo=False))
    full = run_cases(program(), cases)  # type: ignore[arg-type]
    assert full.uncovered == [] and full.coverage == 100.0


def test_a_wrong_expectation_fails_and_says_what_happened(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "doors.insp"
    template.write_text(TEMPLATE)
    cases = [case("two doors approved?", 2, {"veredict": "approved", "reasons": []})]
    (tmp_path / "doors.tests.json").write_text(json.dumps({"cases": cases}))
    assert main(["test", str(template)]) == 1
    out = capsys.readouterr().out
    assert "FAIL two doors approved?" in out
    assert "veredict is disapproved, expected approved" in out
    assert "reasons are ['Two-door cars are not covered'], expected []" in out


def test_each_problem_is_also_a_code_with_its_values() -> None:
    """A failing case's `failures` are its `problems` as data (a page words them), in order."""
    cases = [
        case("two doors approved?", 2, {"veredict": "approved", "reasonsInclude": ["Old"]}),
        {
            "name": "events of a script gone wrong",
            "start": "2024-05-01T12:00:00Z",
            "events": [
                {"event": "start"},
                {"event": "create", "body": {"inputs": [{"input": "seats", "value": 4}]}},
                {"event": "create", "body": {"inputs": [{"input": "doors", "value": 4}]}},
                {"event": "validation", "image": "front", "validation": "plate", "confidence": 90},
                {"event": "image", "image": "front", "validations": [{"validation": "face"}]},
                {"event": "paint"},
            ],
            "expect": {"status": "completed"},
        },
    ]
    first, second = run_cases(program(), cases).cases  # type: ignore[arg-type]
    assert [failure["code"] for failure in first.to_json()["failures"]] == [
        "veredict_differs", "reason_missing"
    ]  # fmt: skip
    assert first.to_json()["failures"][1] == {
        "code": "reason_missing", "reason": "Old", "actual": ["Two-door cars are not covered"]
    }  # fmt: skip
    failures = second.to_json()["failures"]
    assert [(f["code"], f.get("reason"), f.get("name"), f.get("error")) for f in failures] == [
        ("event_invalid", "create_first", None, None),
        ("event_invalid", "unknown_input", "seats", None),
        ("event_invalid", "unknown_image", "front", None),
        ("event_refused", None, None, "unknown_validation"),
        ("event_invalid", "unknown_event", "paint", None),
        ("status_differs", None, None, None),
    ]
    assert second.texts == [
        "event 1: the first event must be create",
        "event 2: the template has no input named 'seats'",
        "event 4: no uploaded image 'front'",
        "event 5 (image) refused: unknown_validation",
        "event 6: unknown event 'paint'",
        "status is processing, expected completed",
    ]


def test_min_coverage_fails_under_the_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "doors.insp"
    template.write_text(TEMPLATE)
    cases = [case("four doors approved", 4, {"veredict": "approved"})]
    (tmp_path / "doors.tests.json").write_text(json.dumps({"cases": cases}))
    assert main(["test", str(template)]) == 0
    assert main(["test", str(template), "--min-coverage", "90"]) == 1
    assert "under --min-coverage 90" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], '{"cases": [...]}'),
        (
            {"cases": [{"events": [{"event": "create"}], "expect": {"status": "completed"}}]},
            "needs a name",
        ),
        (
            {"cases": [{"name": "x", "events": [], "expect": {"status": "completed"}}]},
            "events is a non-empty list",
        ),
        (
            {
                "cases": [
                    {
                        "name": "x",
                        "events": [{"event": "create"}],
                        "expect": {"verdict": "approved"},
                    }
                ]
            },
            "unknown expectation 'verdict'",
        ),
    ],
)
def test_a_malformed_tests_file_is_refused_with_where(document: object, message: str) -> None:
    with pytest.raises(
        CasesError,
        match=message.replace("[", r"\[")
        .replace("]", r"\]")
        .replace("{", r"\{")
        .replace("}", r"\}")
        .replace(".", r"\."),
    ):
        read_cases(document)


#: Every built-in and every example template (an included file, which has no `template`
#: header, is no template of its own): each ships its cases. Picking the examples that had a
#: tests file let used_phone_resale go without one.
SHIPPED = [
    *sorted((ROOT / "inspectlang" / "builtins").glob("*.insp")),
    *[
        p
        for p in sorted((ROOT / "examples").rglob("*.insp"))
        if any(line.startswith("template ") for line in p.read_text().splitlines())
    ],
]


@pytest.mark.parametrize("template", SHIPPED, ids=[p.stem for p in SHIPPED])
def test_the_shipped_templates_cases_pass_with_full_coverage(
    template: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["test", str(template), "--min-coverage", "100", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] and report["uncovered"] == []
