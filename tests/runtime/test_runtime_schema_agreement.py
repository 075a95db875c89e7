"""The runtime checks a creation body once (`runtime.intake`); the template's JSON Schema
(`Template.schema_`, published to clients) describes the same body. Two descriptions of one rule
drift, so this property test keeps them agreeing: whatever input values the runtime accepts,
normalized as it stores them, the published schema accepts too, for every example template.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspectlang.compiler import compile_source
from inspectlang.manifest import InputSpec, Template
from inspectlang.schema import creation_validator
from runtime import InspectionError, intake

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.insp"))


def _template(path: Path) -> Template:
    return compile_source(path.read_text(encoding="utf-8"), path.name)


def _values(spec: InputSpec) -> st.SearchStrategy[Any]:
    """Values a client might send for `spec`: fitting ones and near misses of every kind."""
    options = [o.label for o in spec.options or []]
    junk = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=8))
    by_type: dict[str, st.SearchStrategy[Any]] = {
        "numeric": st.one_of(
            st.integers(-(10**6), 10**6),
            st.floats(-1e6, 1e6, allow_nan=False),
            st.integers(0, 10**5).map(str),
        ),
        "text": st.one_of(st.text(max_size=30), st.from_regex(r"[a-z]{1,8}@[a-z]{1,8}\.com")),
        "textarea": st.text(max_size=30),
        "date": st.dates().map(lambda day: day.isoformat()),
        "select": st.sampled_from(options) if options else junk,
        "multiselect": st.lists(st.sampled_from(options), max_size=4) if options else junk,
        "check": st.one_of(st.booleans(), st.sampled_from(["true", "false"])),
    }
    return st.one_of(by_type.get(spec.type, junk), junk)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_values_the_runtime_accepts_fit_the_published_schema(path: Path) -> None:
    template = _template(path)
    specs = [s for s in template.inputs if "create" in s.stages and s.type not in ("file", "video")]
    if not specs:
        pytest.skip("no create-stage inputs")
    validator = creation_validator(template)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.fixed_dictionaries({spec.identifier: _values(spec) for spec in specs}))
    def agree(sent: dict[str, Any]) -> None:
        try:
            values = intake.check_inputs(template, sent, stage="create", locale="en_US")
        except InspectionError:
            return
        errors = [
            error
            for error in validator.iter_errors({"inputs": values})
            if list(error.absolute_path)[:1] == ["inputs"]
        ]
        assert errors == [], [error.message for error in errors]

    agree()
