"""verify, diff and test over inspections whose inputs come at an update (tests/proofs/vectors/
updates.json): a property that fails only through the update is found, its counterexample
writes the update and `inspectlang simulate` replays it to the same end; so do diff's examples
and the template cases verify writes from them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import z3

from inspectlang.compiler import compile_source
from runtime.program import Program, load_program
from runtime.proofs.cases import run_cases
from runtime.proofs.cli import found_cases
from runtime.proofs.diff import difference
from runtime.proofs.events import replay
from runtime.proofs.properties import Prover, Result, verify
from server.main import main

VECTORS = Path(__file__).resolve().parent / "vectors" / "updates.json"
DOCUMENT: dict[str, Any] = json.loads(VECTORS.read_text(encoding="utf-8"))
CASES = {case["name"]: case for case in DOCUMENT["cases"]}


def program_of(source: str) -> Program:
    return load_program(compile_source(source, "update.insp"))


def updates(events: dict[str, Any]) -> list[dict[str, Any]]:
    return [event for event in events["events"] if event["event"] == "update"]


def simulated(
    source: str, events: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    """The events file run by the real `inspectlang simulate` command: its inspection."""
    template, path = tmp_path / "update.insp", tmp_path / "update.events.json"
    template.write_text(source)
    path.write_text(json.dumps(events))
    capsys.readouterr()
    assert main(["simulate", str(template), str(path), "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert not any("refused" in step for step in document["steps"])
    inspection: dict[str, Any] = document["inspection"]
    return inspection


def replays_each(
    source: str, results: list[Result], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for result in results:
        if result.events is None:
            continue
        assert result.replayed is not None
        shown = simulated(source, result.events, tmp_path, capsys)
        assert (shown["status"], shown["veredict"]) == (
            result.replayed["status"],
            result.replayed["veredict"],
        ), result.name


@pytest.mark.parametrize("name", list(CASES))
def test_verify_over_updates(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES[name]
    results = verify(program_of(case["template"]))
    assert sorted(r.name for r in results if r.answer != "holds") == sorted(case["fails"])
    replays_each(case["template"], results, tmp_path, capsys)
    for prefix in case.get("updateExample", []):
        shown = [r for r in results if r.name.startswith(prefix)]
        assert shown and all(r.events is not None and updates(r.events) for r in shown), prefix


def test_a_property_fails_only_through_the_update(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    case = next(c for c in CASES.values() if "onlyThroughUpdate" in c)
    program = program_of(case["template"])
    failing = next(r for r in verify(program) if r.name == case["onlyThroughUpdate"])
    assert failing.answer == "fails" and failing.events is not None
    assert failing.replayed is not None and "missing_value" in failing.replayed["ruleErrors"]
    # The counterexample gives the input at an update after the photo...
    kinds = [event["event"] for event in failing.events["events"]]
    assert kinds.index("update") > kinds.index("image")
    late = updates(failing.events)[0]["body"]["inputs"]
    shown = simulated(case["template"], failing.events, tmp_path, capsys)
    assert (shown["status"], shown["veredict"]) == (
        failing.replayed["status"],
        failing.replayed["veredict"],
    )
    # ...the same inputs given at the create instead meet no rule error...
    early = json.loads(json.dumps(failing.events))
    early["events"] = [e for e in early["events"] if e["event"] != "update"]
    early["events"][0]["body"]["inputs"] += late
    assert replay(program, early).rule_errors == set()
    # ...and no inspection without an update breaks the property.
    prover = Prover(program)
    no_update = z3.And(*[z3.Not(leaf.late) for leaf in prover.scenario.inputs.values()])
    errors = z3.Or(*[e.when for e in prover.outcome.errors if e.code == "missing_value"])
    found = prover.find(z3.And(errors, no_update), expected=False)
    assert found.unknown == "" and found.events is None


def test_an_outcome_reached_only_through_the_update() -> None:
    case = next(c for c in CASES.values() if "reach" in c)
    program = program_of(case["template"])
    prover = Prover(program)
    goal = getattr(prover.outcome, case["reach"]["outcome"])
    found = prover.find(goal)
    assert found.events is not None and found.replayed is not None
    assert updates(found.events)
    assert found.replayed.state is not None
    assert case["reach"]["reason"] in found.replayed.state.reasons
    no_update = z3.And(*[z3.Not(leaf.late) for leaf in prover.scenario.inputs.values()])
    assert prover.find(z3.And(goal, no_update), expected=False).events is None


def test_the_cases_verify_writes_from_an_update_pass_under_test() -> None:
    for case in CASES.values():
        program = program_of(case["template"])
        cases = found_cases(verify(program))
        assert any(updates(c) for c in cases) or not case["fails"]
        report = run_cases(program, cases)
        assert report.passed, [r.to_json() for r in report.cases if not r.passed]


@pytest.mark.parametrize("pair", DOCUMENT["diffs"], ids=[d["name"] for d in DOCUMENT["diffs"]])
def test_diff_examples_with_an_update_replay(
    pair: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = CASES[pair["old"]]["template"], CASES[pair["new"]]["template"]
    found = difference(program_of(old), program_of(new))
    assert {d.key: d.answer for d in found.directions} == pair["answers"]
    for direction in found.directions:
        if direction.answer != "differs":
            continue
        assert direction.old_events is not None and direction.new_events is not None
        assert direction.old_end is not None and direction.new_end is not None
        for source, events, end in (
            (old, direction.old_events, direction.old_end),
            (new, direction.new_events, direction.new_end),
        ):
            shown = simulated(source, events, tmp_path, capsys)
            assert (shown["status"], shown["veredict"]) == (end["status"], end["veredict"])
            if direction.key == pair.get("throughUpdate"):
                assert updates(events), direction.key
        approved = direction.key == "approved_by_old_only"
        assert (direction.old_end["veredict"] == "approved") is approved
        assert (direction.new_end["veredict"] == "approved") is not approved
