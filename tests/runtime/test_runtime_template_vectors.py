"""Template-level conformance vectors, on the compiled path and on the reference path.

Vectors live in tests/conformance/templates/<area>.json: each test has a name, a `source`
(a whole template), `create` (input values by input name, sent at creation; `locale` optional),
optional `update` (input values by name, sent after start), optional `includes` (`{name:
source}`: the files the source's `include` lines name) and exactly one of
`expect` (`{"veredict", "reasons"?, "localizedReasons"?, "variables"?, "status"?, "review"?,
"checkNames"?}` after finish; `localizedReasons` the reasons in the other locales, `review`
lists the `{code, message}` of the reasons a person decides) or `refused` (the runtime
error code a creation or update answers with). Features whose meaning spans a template (select
keys, reasons with values, conditional inputs) are pinned here, expression semantics in
tests/conformance/evaluation.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

import runtime as rt
from inspectlang.compiler import compile_source
from runtime.program import Program, load_program

VECTORS = Path(__file__).resolve().parents[1] / "conformance" / "templates"
PATHS = ("compiled", "reference")
NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)


def load_vectors() -> list[Any]:
    cases = []
    for path in sorted(VECTORS.glob("*.json")):
        area = json.loads(path.read_text(encoding="utf-8"))
        for test in area["tests"]:
            outcomes = [key for key in ("expect", "refused") if key in test]
            assert len(outcomes) == 1, f"{path.name}:{test['name']} needs exactly one outcome"
            for evaluation_path in PATHS:
                cases.append(
                    pytest.param(
                        test, evaluation_path, id=f"{area['area']}-{test['name']}-{evaluation_path}"
                    )
                )
    return cases


def _inputs(program: Program, values: dict[str, Any]) -> list[dict[str, Any]]:
    by_name = {i.name: identifier for identifier, i in program.manifest.logic.inputs.items()}
    return [{"identifier": by_name[name], "value": value} for name, value in values.items()]


def run(test: dict[str, Any], path: str) -> rt.InspectionState:
    manifest = compile_source(test["source"], "t.insp", includes=test.get("includes"))
    program = load_program(manifest).with_path(path)  # type: ignore[arg-type]
    kind = program.manifest.inspectionType
    body = {
        "locale": test.get("locale", "en_US"),
        "delivery": {"channel": "email", "destination": "a@example.com"},
        "consumer": {"email": "c@example.com"},
        "inputs": _inputs(program, test.get("create", {})),
        **test.get("body", {}),
    }
    state = rt.create(program, body, inspection_type=kind, now=NOW)
    state = rt.start(program, state, now=NOW)
    if "update" in test:
        state = rt.update(program, state, {"inputs": _inputs(program, test["update"])}, now=NOW)
    return rt.finish(program, state, completed_by="client", now=NOW)


@pytest.mark.parametrize(("test", "path"), load_vectors())
def test_template_vector(test: dict[str, Any], path: str) -> None:
    if "refused" in test:
        with pytest.raises(rt.InspectionError) as raised:
            run(test, path)
        assert raised.value.code == test["refused"]
        return
    state = run(test, path)
    expect = test["expect"]
    assert state.veredict == expect["veredict"]
    if "reasons" in expect:
        assert state.reasons == expect["reasons"]
    if "localizedReasons" in expect:  # the reasons as pages in the other locales read them
        assert state.localizedReasons == expect["localizedReasons"]
    for name, value in expect.get("variables", {}).items():
        assert state.variables[name] == value
    if "checkNames" in expect:  # the checks' names as the inspection's locale reads them
        assert [g.name for g in state.globalValidations] == expect["checkNames"]
    if "status" in expect:
        assert state.status == expect["status"]
    if "review" in expect:  # why a person decides: [{code, message}] of review.reasons
        assert state.review is not None
        found = [{"code": r["code"], "message": r["message"]} for r in state.review.reasons]
        assert found == expect["review"]
