"""`inspectlang simulate` on every example template with its events file, and its failures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rt_support import ROOT

from server.main import main

EXAMPLES = ROOT / "examples"
EXPECTED = {
    "motor_insurance": ("approved", []),
    "goods_delivery": ("approved", []),
    "machinery_rental": ("approved", []),
    "person_onboarding": ("approved", []),
    "used_phone_resale": ("disapproved", ["The screen has cracks that were not declared"]),
}


def test_every_events_file_has_its_template() -> None:
    templates = {path.stem for path in EXAMPLES.glob("*.insp")}
    events = {path.name.removesuffix(".events.json") for path in EXAMPLES.glob("*.events.json")}
    assert events <= templates
    assert events == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_simulate_examples_as_json(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "simulate",
            str(EXAMPLES / f"{name}.insp"),
            str(EXAMPLES / f"{name}.events.json"),
            "--format",
            "json",
        ]
    )
    output = json.loads(capsys.readouterr().out)
    assert code == 0
    veredict, reasons = EXPECTED[name]
    assert output["inspection"]["veredict"] == veredict
    assert output["explanation"]["reasons"] == reasons
    assert output["inspection"]["status"] == "completed"
    assert output["steps"][-1]["status"] == "completed"
    assert output["explanation"]["ruleErrors"] == []


def test_simulate_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "simulate",
            str(EXAMPLES / "motor_insurance.insp"),
            str(EXAMPLES / "motor_insurance.events.json"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "#1   create          status=created veredict=not_defined" in out
    assert "REFUSED inspection_not_editable" in out
    assert "Verdict: approved (status completed)" in out
    assert "Plate matches [line 150]: True" in out


def test_simulate_refusals_are_reported_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "events.json"
    events.write_text(
        json.dumps(
            {
                "events": [
                    {"event": "create", "body": {"locale": "en", "delivery": {}}},
                    {
                        "event": "create",
                        "body": {
                            "locale": "en_US",
                            "delivery": {"channel": "e", "destination": "d"},
                            "car": {"plate": "AB1", "year": 2001},
                            "consumer": {"email": "a@b.co"},
                            "inputs": [
                                {"input": "mileage", "value": 1},
                                {"input": "use", "value": "private"},
                            ],
                        },
                    },
                    {"event": "start"},
                    {"event": "start"},
                    {"event": "finish"},
                ]
            }
        )
    )
    code = main(["simulate", str(EXAMPLES / "motor_insurance.insp"), str(events)])
    out = capsys.readouterr().out
    assert code == 0
    assert "#1   create          REFUSED invalid_locale" in out
    assert "#4   start           REFUSED invalid_status_transition" in out
    assert "Verdict: disapproved (status completed)" in out


def test_simulate_bad_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    template = tmp_path / "bad.insp"
    template.write_text('template "Bad"\n    type: spaceship\n')
    code = main(["simulate", str(template), str(EXAMPLES / "motor_insurance.events.json")])
    assert code == 1
    assert "error[E016]" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not an events file"),
        ('{"events": 5}', "not an events file"),
        ('{"events": [{"event": "start"}]}', "the first event must be create"),
        ('{"events": [{"event": "fly"}]}', "the first event must be create"),
    ],
)
def test_simulate_bad_events_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    events = tmp_path / "events.json"
    events.write_text(content)
    assert main(["simulate", str(EXAMPLES / "motor_insurance.insp"), str(events)]) == 1
    assert message in capsys.readouterr().err


AGE_CHECK = """\
template "Age check"
    type: people
    locales: es_AR, en_US

image id_front
    side: "dni"
    label: "Front of your ID"
    validate age, minimum age 18

verdict
    approve when images.id_front.age.valid
    otherwise "Too young"
"""


def _age_events(age: str) -> dict[str, object]:
    return {
        "events": [
            # no locale: the template's default (es_AR) is used
            {
                "event": "create",
                "body": {"delivery": {"channel": "email", "destination": "a@example.com"}},
            },
            {"event": "start"},
            {
                "event": "image",
                "image": "id_front",
                "validations": [{"validation": "age", "confidence": 95, "result": age}],
            },
            {"event": "finish"},
        ]
    }


@pytest.mark.parametrize(
    ("age", "shown", "veredict"), [("16", "NOT valid", "disapproved"), ("18", "valid", "approved")]
)
def test_simulate_a_create_without_locale_and_an_age_under_the_minimum(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], age: str, shown: str, veredict: str
) -> None:
    """A `create` without `locale` uses the template's default (it was refused with
    invalid_locale); an `age` of 16 under `minimum age 18` is not valid, however confident the
    reader (it showed as valid)."""
    template = tmp_path / "age.insp"
    template.write_text(AGE_CHECK, encoding="utf-8")
    events = tmp_path / "age.events.json"
    events.write_text(json.dumps(_age_events(age)), encoding="utf-8")
    assert main(["simulate", str(template), str(events), "--format", "json"]) == 0
    output = json.loads(capsys.readouterr().out)
    assert "refused" not in output["steps"][0]
    assert output["inspection"]["locale"] == "es_AR"
    assert output["inspection"]["veredict"] == veredict
    assert main(["simulate", str(template), str(events)]) == 0
    assert f"dni.age: {shown} (confidence 95.0" in capsys.readouterr().out


NEVER_NONE = """\
template "Pending"
    type: car

image front
    label: "Front"
    validate plate

input notes
    type: text
    label: "Notes"
    asked at: update

check noted
    valid when: length(inputs.notes) > 0

verdict
    disapprove "No notes: {inputs.notes}" when not defined(inputs.notes)
    approve when images.front.plate.valid
"""


def test_simulate_explanations_never_print_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing value, a check without a value and a validation without a result read
    `missing` or leave the confidence out; Python's `None` never shows (it did)."""
    template = tmp_path / "pending.insp"
    template.write_text(NEVER_NONE, encoding="utf-8")
    events = tmp_path / "pending.events.json"
    script = {
        "events": [
            {
                "event": "create",
                "body": {"delivery": {"channel": "email", "destination": "a@b.co"}},
            },
            {"event": "start"},
            {"event": "image", "image": "front"},
        ]
    }
    events.write_text(json.dumps(script), encoding="utf-8")
    assert main(["simulate", str(template), str(events)]) == 0
    out = capsys.readouterr().out
    assert "None" not in out
    assert "inputs.notes = missing" in out
    assert "front.plate: pending (threshold 80.0, required)" in out


@pytest.mark.parametrize(("confidence", "status"), [(87, "review"), (93, "completed")])
def test_review_below_confidence_sends_an_uncertain_plate_to_a_person(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], confidence: int, status: str
) -> None:
    """motor_insurance.insp reads the front plate with `minimum confidence 85, review below
    confidence 90`: 87 is valid but a person decides first (low_confidence); 93 is not."""
    script = json.loads((EXAMPLES / "motor_insurance.events.json").read_text(encoding="utf-8"))
    front = next(e for e in script["events"] if e.get("image") == "front")
    plate = next(v for v in front["validations"] if v["validation"] == "plate")
    plate["confidence"] = confidence
    events = tmp_path / "events.json"
    events.write_text(json.dumps(script), encoding="utf-8")
    template = str(EXAMPLES / "motor_insurance.insp")
    assert main(["simulate", template, str(events), "--format", "json"]) == 0
    inspection = json.loads(capsys.readouterr().out)["inspection"]
    assert inspection["status"] == status
    if status == "review":
        (reason,) = inspection["review"]["reasons"]
        assert reason["code"] == "low_confidence" and "plate" in reason["message"]


def test_simulate_reads_an_include_beside_the_template(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 25: `include "vehicle-common"` is `vehicle-common.insp` beside the template; the
    explanation says which values came from the included file."""
    events = tmp_path / "fleet.events.json"
    create = {
        "locale": "en_US",
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "inputs": [{"input": "odometer", "value": 3000000}],
    }
    script = {"events": [{"event": "create", "body": create}, {"event": "start"}]}
    script["events"].append({"event": "finish"})
    events.write_text(json.dumps(script), encoding="utf-8")
    code = main(["simulate", str(EXAMPLES / "fleet" / "fleet_check.insp"), str(events)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "'The odometer reading is not plausible' -> True" in out
    assert "Plausible mileage [line 5]: False" in out
    assert 'input from include "vehicle-common" = 3000000' in out


#: A clear refusal (17 years old) that a `review` line also matches: review outranks
#: disapprove (docs/language.md, "Which line wins"), and simulate says why a person decides.
UNDER_AGE = """template "Young drivers"
    type: people

input age
    type: numeric
    minimum: 0
    maximum: 120
    required

verdict
    review "Drivers under 21: an underwriter decides" when inputs.age < 21
    disapprove "Drivers under 18 are not insured" when inputs.age < 18
"""


def test_simulate_says_why_an_inspection_went_to_review(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    template = tmp_path / "young.insp"
    template.write_text(UNDER_AGE, encoding="utf-8")
    events = tmp_path / "young.events.json"
    script = {
        "start": "2024-05-03T15:00:00Z",
        "events": [
            {"event": "create", "body": {"inputs": [{"input": "age", "value": 17}]}},
            {"event": "start"},
            {"event": "finish"},
        ],
    }
    events.write_text(json.dumps(script), encoding="utf-8")
    assert main(["simulate", str(template), str(events)]) == 0
    text = capsys.readouterr().out
    assert "Verdict: not_defined (status review)" in text
    waits = "waits for a person because:\n    [rule] Drivers under 21: an underwriter decides"
    assert waits in text
    assert "the machine's suggestion: disapproved (Drivers under 18 are not insured)" in text
    assert main(["simulate", str(template), str(events), "--format", "json"]) == 0
    explanation = json.loads(capsys.readouterr().out)["explanation"]
    assert [r["code"] for r in explanation["reviewReasons"]] == ["rule"]
    assert explanation["machine"]["veredict"] == "disapproved"


def test_simulate_names_a_low_confidence_review_in_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = json.loads((EXAMPLES / "motor_insurance.events.json").read_text(encoding="utf-8"))
    front = next(e for e in script["events"] if e.get("image") == "front")
    next(v for v in front["validations"] if v["validation"] == "plate")["confidence"] = 87
    events = tmp_path / "events.json"
    events.write_text(json.dumps(script), encoding="utf-8")
    assert main(["simulate", str(EXAMPLES / "motor_insurance.insp"), str(events)]) == 0
    text = capsys.readouterr().out
    assert "(status review)\n  waits for a person because:\n    [low_confidence] " in text
