"""The simulate panel starts from events that pass: for the starter template, every built-in
template and templates with required inputs at creation and before finishing, required product
and consumer fields, the first script runs to the end with no event refused (a fixed script
missed the required create input and then said "the first event must be create")."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from inspectlang.builtins import ALIAS_TABLE, builtin_source
from server.dashboard.template_pages import DEFAULT_EVENTS, STARTER, simulate_source, starter_script

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
EXAMPLES = Path(__file__).parents[2] / "examples"
#: A template asking at creation (a select, a bounded number), before finishing (a text of a
#: least length), and requiring product and consumer fields.
ASKING = """template "Claims intake"
    type: car
    locales: es_AR, en_US

product
    require plate

consumer
    require email

input overall_condition
    type: select
    label: "Overall condition"
    asked at: create
    required
    option good: "Good"
    option fair: "Fair"
    option bad: "Bad"

input km
    type: numeric
    label: "Kilometers"
    asked at: create
    required
    minimum: 1000
    maximum: 500000

input notes
    type: text
    label: "Notes"
    asked at: update
    required
    minimum length: 12

verdict
    disapprove "Bad condition" when inputs.overall_condition = "bad"
"""


#: A date order whose later date has an `earliest` and the earlier one none: each date's own
#: first sample (its earliest; today) would break the order.
ORDERED = """template "Parcel"
    type: goods

input promised
    type: date
    asked at: create
    required

input delivered
    type: date
    asked at: update
    required
    earliest: date("2024-01-01")
    not before: promised

verdict
    approve when true
"""


def _sources() -> list[tuple[str, str]]:
    found = [("starter", STARTER), ("asking", ASKING), ("ordered", ORDERED)]
    found += [
        (path.stem, path.read_text(encoding="utf-8")) for path in sorted(EXAMPLES.glob("*.insp"))
    ]
    for alias, by_type in sorted(ALIAS_TABLE.items()):
        for inspection_type in sorted(by_type):
            found.append((f"{alias}-{inspection_type}", builtin_source(alias, inspection_type)))
    return found


@pytest.mark.parametrize(("name", "source"), _sources(), ids=[n for n, _ in _sources()])
def test_the_first_script_passes(name: str, source: str) -> None:
    script = starter_script(source, NOW)
    result: dict[str, Any] = simulate_source(source, script, NOW)
    assert "diagnostics" not in result, result.get("diagnostics")
    assert "problem" not in result, result
    refused = [step for step in result["steps"] if "refused" in step]
    assert not refused, refused
    assert result["status"] == "completed", result


def test_the_script_carries_what_the_template_requires() -> None:
    script = starter_script(ASKING, NOW)
    create = script["events"][0]["body"]
    assert create["locale"] == "es_AR"
    assert {item["input"]: item["value"] for item in create["inputs"]} == {
        "overall_condition": "good",
        "km": 1000,
    }
    assert create["car"] == {"plate": "AB123CD"} and create["consumer"] == {
        "email": "ana@example.com"
    }
    assert [event["event"] for event in script["events"]] == ["create", "start", "update", "finish"]


def test_the_fixed_script_would_not_pass() -> None:
    """What the panel used to start from: refused at create for a template that asks."""
    result = simulate_source(ASKING, DEFAULT_EVENTS, NOW)
    assert "problem" in result or any("refused" in step for step in result.get("steps", []))


def test_a_source_that_does_not_compile_gets_the_plain_script() -> None:
    assert starter_script("template", NOW) == DEFAULT_EVENTS
