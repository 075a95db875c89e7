"""The run vectors of every file of `tests/conformance/` (their format is
tests/conformance/README.md), on the compiled path and on the reference path: an inspection of
the vector's template is created with its `create` inputs, started, updated with `update`, and
finished; its `expect` is the state after, or `refused` the error code it answers with. Features
whose meaning spans a template (select keys, reasons with values, conditional inputs, a
statement) are pinned here, expression semantics by the expression vectors
(test_runtime_conformance.py).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, get_args

import pytest

import runtime as rt
from inspectlang.compiler import compile_source
from runtime.program import Program, load_program
from runtime.state import Status, Veredict
from tests.conformance.vectors import schema, vectors

PATHS = ("compiled", "reference")
NOW = dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
CASES = [
    pytest.param(vector.test, path, id=f"{vector.id}-{path}")
    for vector in vectors("run")
    for path in PATHS
]


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


@pytest.mark.parametrize(("test", "path"), CASES)
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


def test_the_schema_names_the_verdicts_and_statuses() -> None:
    expect = schema()["$defs"]["runVector"]["properties"]["expect"]["properties"]
    assert expect["veredict"]["enum"] == list(get_args(Veredict))
    assert expect["status"]["enum"] == list(get_args(Status))
