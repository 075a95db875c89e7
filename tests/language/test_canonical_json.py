"""`manifest.canonical_json`, the text a revision hashes, is written by pydantic_core's encoder
(issue 26) but must stay byte for byte what `json.dumps(data, ensure_ascii=False,
separators=(",", ":"))` wrote before, for every value a manifest can hold: a different byte is
a different revision for an unchanged template (the golden corpus in test_golden_revisions.py
checks real manifests; this checks the values one by one and mixed)."""

from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from pydantic_core import to_json

from inspectlang import manifest
from inspectlang.compiler import compile_source
from inspectlang.manifest import (
    Parameters,
    Template,
    _may_differ,
    _plain,
    _revision_serializer,
    canonical_json,
    revision_of,
)

ROOT = Path(__file__).resolve().parents[2]


def _reference(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


#: Floats around every place two float writers could part: pydantic_core writes 1e-9 <= x <
#: 1e-4 otherwise than `repr` (`canonical_json` then falls back), the `repr` switch to an
#: exponent at 1e16, subnormals, the extremes, negative zero, whole floats.
EDGE_FLOATS = (
    1e-07,
    0.1,
    123456789.5,
    -0.0,
    0.0,
    1e-05,
    -1e-05,
    1.5e-05,
    1e-06,
    1e-09,
    9.999999999999999e-05,
    0.0001,
    0.00012,
    1e-10,
    1e-100,
    1e15,
    1e16,
    9999999999999998.0,
    1.2345678901234567e17,
    1e22,
    100.0,
    80.0,
    0.30000000000000004,
    5e-324,
    2.2250738585072014e-308,
    sys.float_info.max,
    -sys.float_info.max,
    math.inf,
    -math.inf,
)

EDGE_TEXTS = (
    "",
    "Foto del vehículo",
    "ação ñ ü 漢字 🚗",
    '"quoted" \\ back/slash',
    "\x00\x01\x08\t\n\x0b\x0c\r\x1f\x7f\x80\x9f",
    "\u2028\u2029\ufeff\uffff",
    "1e-5 0.00001 e-7",
)

EDGE_INTS = (0, -1, 2**31, 2**53 + 1, 2**63 - 1, 2**63, -(2**63) - 1, 2**64, 10**30, -(10**40))

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(EDGE_INTS),
    st.floats(allow_nan=False),
    st.floats(min_value=1e-11, max_value=1e-3),
    st.sampled_from(EDGE_FLOATS),
    st.text(),
    st.sampled_from(EDGE_TEXTS),
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.one_of(st.text(), st.sampled_from(EDGE_TEXTS)), children, max_size=5),
    ),
    max_leaves=30,
)


@pytest.mark.parametrize("value", [*EDGE_FLOATS, *EDGE_TEXTS, *EDGE_INTS, None, True, False])
def test_each_edge_value_is_written_as_json_writes_it(value: Any) -> None:
    assert canonical_json(value) == _reference(value)
    assert canonical_json({"minConfidence": value, "v": [value]}) == _reference(
        {"minConfidence": value, "v": [value]}
    )


def test_nan_is_written_as_json_writes_it() -> None:
    assert canonical_json([math.nan]) == _reference([math.nan]) == b"[NaN]"


@settings(max_examples=400, deadline=None)
@given(values)
def test_any_json_value_is_written_as_json_writes_it(value: Any) -> None:
    assert canonical_json(value) == _reference(value)


def test_a_value_pydantic_core_cannot_write_fails_as_json_fails() -> None:
    """A lone surrogate: `json` writes it and UTF-8 refuses it, as before."""
    with pytest.raises(UnicodeEncodeError):
        canonical_json({"label": "\ud800"})


def test_a_compiled_manifest_is_written_by_pydantic_core_alone() -> None:
    """The fast path is taken for real manifests: their UUIDs hold `e-` and a hex digit, which
    must not be taken for a small float (a fallback is the same text, three times slower)."""
    source = (ROOT / "inspectlang" / "builtins" / "car_easy.insp").read_text(encoding="utf-8")
    data = _plain(compile_source(source, "car_easy.insp"))
    content = to_json(data)
    assert b"e-" in content
    assert not _may_differ(content)
    assert canonical_json(data) == content == _reference(data)


@pytest.mark.parametrize("depth", [50, 400])
def test_deep_logic_is_written_as_json_writes_it(depth: int) -> None:
    """pydantic_core refuses data nested past its own limit (a few hundred levels, more than
    MAX_NESTING's expressions in a manifest, but a limit of another library): `json` then
    writes it, the same text."""
    node: Any = {"op": "literal", "value": 1, "type": "number", "span": [1, 2, 1, 3]}
    for _ in range(depth):
        node = {"op": "unary", "operator": "-", "operand": node, "span": [1, 1, 1, 3]}
    assert canonical_json({"logic": {"rules": [{"body": [node]}]}}) == _reference(
        {"logic": {"rules": [{"body": [node]}]}}
    )


# -- revision_of: pydantic_core writes the manifest's models directly ----------------------------


def _reference_revision(template: Template) -> str:
    """`revision_of` by its definition: `json`'s text of `_plain` minus the three keys."""
    data = _plain(template)
    del data["createdAt"], data["updatedAt"], data["logic"]["revision"]
    return hashlib.sha256(_reference(data)).hexdigest()


def _shipped() -> list[Path]:
    return sorted(
        [*(ROOT / "examples").glob("*.insp"), *(ROOT / "inspectlang" / "builtins").glob("*.insp")]
    )


@pytest.mark.parametrize("path", _shipped(), ids=lambda path: path.name)
def test_a_compiled_manifests_revision_is_written_from_its_models_alone(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`_revision_serializer` writes a real manifest without `_plain` (the fallback) and gives
    the revision its definition gives, also once pydantic has built the models' own schemas
    (`to_api`), which must not take the place of the revision's."""
    template = compile_source(path.read_text(encoding="utf-8"), path.name)
    expected = _reference_revision(template)
    template.to_api()
    _revision_serializer.cache_clear()
    with monkeypatch.context() as patched:
        patched.setattr(manifest, "_plain", None)  # any call to it fails
        assert revision_of(template) == expected == template.logic.revision
        assert revision_of(Template.from_api(template.to_api())) == expected


def test_a_revision_falls_back_to_json_for_a_small_float() -> None:
    source = (ROOT / "inspectlang" / "builtins" / "car_easy.insp").read_text(encoding="utf-8")
    template = compile_source(source, "car_easy.insp")
    for value in (1e-05, 1.5e-07, 1e-09):
        changed = template.model_copy(
            update={"parameters": template.parameters.model_copy(update={"minConfidence": value})}
        )
        assert revision_of(changed) == _reference_revision(changed) != template.logic.revision


def test_a_revision_of_values_that_are_not_the_declared_models_is_plains() -> None:
    """A value that is not the model its field declares (a subclass, a dict): `_plain`'s text,
    as before (pydantic_core's serializer is refused it)."""

    class Wider(Parameters):
        note: str = "extra"

    source = (ROOT / "inspectlang" / "builtins" / "car_easy.insp").read_text(encoding="utf-8")
    template = compile_source(source, "car_easy.insp")
    for parameters in (Wider(), {"maxAttempts": 3}):
        changed = template.model_copy(update={"parameters": parameters})
        assert revision_of(changed) == _reference_revision(changed)


def test_a_revision_of_deep_logic_is_jsons() -> None:
    source = (ROOT / "inspectlang" / "builtins" / "car_easy.insp").read_text(encoding="utf-8")
    template = compile_source(source, "car_easy.insp")
    node: Any = {"op": "literal", "value": 1, "type": "number", "span": [1, 2, 1, 3]}
    for _ in range(400):
        node = {"op": "unary", "operator": "-", "operand": node, "span": [1, 1, 1, 3]}
    check = template.logic.checks[0].model_copy(update={"valid": node})
    changed = template.model_copy(
        update={"logic": template.logic.model_copy(update={"checks": [check]})}
    )
    assert revision_of(changed) == _reference_revision(changed)


def test_a_field_holding_models_in_an_unknown_shape_is_refused_when_the_serializer_is_built() -> (
    None
):
    """Written as data, such a model would be written by pydantic's own serializer: the
    revision's serializer refuses the shape instead of writing another text."""

    class Either(BaseModel):
        choice: Parameters | Template | None = None

    with pytest.raises(TypeError, match="holds models"):
        manifest._state_schema(Either, set())
