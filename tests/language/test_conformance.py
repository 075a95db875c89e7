"""Runs the manifest and diagnostics vectors of every file of `tests/conformance/` (their
format is tests/conformance/README.md): a manifest vector's compiled manifest must contain its
`expect`, a diagnostics vector's source must give exactly its `diagnostics`. The run vectors of
the same files run in tests/runtime/test_runtime_template_vectors.py.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

import pytest

from inspectlang.compiler import check_source, compile_source
from inspectlang.diagnostics import CODES
from inspectlang.manifest import TemplateKind
from tests.conformance.vectors import (
    InvalidVectorFile,
    Vector,
    all_vectors,
    read_file,
    schema,
    vectors,
)

NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
VECTORS = vectors("manifest") + vectors("diagnostics")


def mismatch(expected: Any, actual: Any, path: str = "$") -> str | None:
    """Where `actual` fails to contain `expected`, or None when it does."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path}: expected an object, got {actual!r}"
        for key, value in expected.items():
            if key not in actual:
                return f"{path}.{key}: missing"
            problem = mismatch(value, actual[key], f"{path}.{key}")
            if problem:
                return problem
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{path}: expected {len(expected)} items, got {actual!r}"
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            problem = mismatch(want, got, f"{path}[{index}]")
            if problem:
                return problem
        return None
    if expected != actual or isinstance(expected, bool) != isinstance(actual, bool):
        return f"{path}: expected {expected!r}, got {actual!r}"
    return None


@pytest.mark.parametrize("case", VECTORS, ids=[case.id for case in VECTORS])
def test_vector(case: Vector) -> None:
    vector = case.test
    kind = vector.get("templateKind", "created")
    includes = vector.get("includes")
    if case.kind == "manifest":
        template = compile_source(
            vector["source"], "t.insp", template_kind=kind, now=NOW, includes=includes
        )
        problem = mismatch(vector["expect"], template.to_api())
        assert problem is None, problem
        # A valid vector compiles without warnings too: warnings have their own vectors.
        assert check_source(vector["source"], "t.insp", template_kind=kind, includes=includes) == []
    else:
        diagnostics = check_source(
            vector["source"], "t.insp", template_kind=kind, includes=includes
        )
        found = [
            {
                **({"file": d.filename} if d.filename != "t.insp" else {}),
                "code": d.code,
                "line": d.span.line,
                "column": d.span.column,
                **({"suggestion": d.suggestion} if d.suggestion else {}),
            }
            for d in diagnostics
        ]
        expected = [
            {k: v for k, v in item.items() if k != "messageIncludes"}
            for item in vector["diagnostics"]
        ]
        assert found == expected
        # `messageIncludes`: words the message (or its notes) must say.
        for item, diagnostic in zip(vector["diagnostics"], diagnostics, strict=True):
            if "messageIncludes" in item:
                said = " ".join([diagnostic.message, *diagnostic.notes])
                assert item["messageIncludes"] in said, said


def test_every_vector_has_a_unique_name_in_its_file() -> None:
    # One kind per vector and only known keys: the schema, checked as the files are read.
    ids = [vector.id for vector in all_vectors()]
    assert len(ids) == len(set(ids))


def test_the_schema_names_the_template_kinds() -> None:
    assert schema()["$defs"]["templateKind"]["enum"] == list(get_args(TemplateKind))


def test_every_diagnostic_code_has_a_vector() -> None:
    covered = {d["code"] for v in vectors("diagnostics") for d in v.test["diagnostics"]}
    # E005 (file larger than 1 MB) is tested in test_compiler.py: a vector would weigh 1 MB.
    # E039 (the runtime refuses what the checker accepted) is the server's, when a template is
    # saved; no template is known to cause it (tests/server/test_templates.py).
    assert set(CODES) - covered == {"E005", "E039"}


@pytest.mark.parametrize(
    ("vector", "said"),
    [
        (
            {"source": "x", "create": {}, "expect": {"veredict": "approved", "varibles": {}}},
            "varibles",
        ),
        (
            {"source": "x", "create": {}, "expect": {"verdict": "approved"}},
            "'veredict' is a required",
        ),
        ({"source": "x", "expect": {"veredict": "approved"}}, "should not be valid"),
        ({"source": "x", "diagnostics": [{"code": "E001", "line": 1, "colum": 1}]}, "colum"),
        (
            {"source": "x", "create": {}, "expect": {"veredict": "approved"}, "refused": "x"},
            "exactly one",
        ),
    ],
)
def test_a_mistyped_vector_is_refused_not_skipped(
    vector: dict[str, Any], said: str, tmp_path: Path
) -> None:
    path = tmp_path / "area.json"
    path.write_text(json.dumps({"area": "a", "tests": [{"name": "n", **vector}]}), "utf-8")
    with pytest.raises(InvalidVectorFile, match=re.escape(said)):
        read_file(path)
