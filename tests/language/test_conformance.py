"""Runs the language conformance vectors in `tests/conformance/language/*.json`.

Each vector is `{"name", "source", "expect": {manifest fragment}}` (the compiled manifest must
contain the fragment: objects by subset, lists item by item with equal length) or
`{"name", "source", "diagnostics": [{"code", "line", "column", "suggestion"?,
"messageIncludes"?}]}` (exactly these diagnostics, in order; `messageIncludes` is text the
message or its notes must contain). `templateKind` optionally compiles as a built-in.
`includes` (`{name: source}`) are the files the source's `include` lines may name; a
diagnostic in one of them has `"file": NAME` (a diagnostic without `file` is in the source).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from inspectlang.compiler import check_source, compile_source
from inspectlang.diagnostics import CODES

VECTORS_DIR = Path(__file__).resolve().parent.parent / "conformance" / "language"
NOW = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def load_vectors() -> list[tuple[str, dict[str, Any]]]:
    vectors: list[tuple[str, dict[str, Any]]] = []
    for path in sorted(VECTORS_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for test in data["tests"]:
            vectors.append((f"{path.stem}: {test['name']}", test))
    return vectors


VECTORS = load_vectors()


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


@pytest.mark.parametrize(("name", "vector"), VECTORS, ids=[name for name, _ in VECTORS])
def test_vector(name: str, vector: dict[str, Any]) -> None:
    kind = vector.get("templateKind", "created")
    includes = vector.get("includes")
    if "expect" in vector:
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


def test_every_vector_has_one_expectation_and_a_unique_name() -> None:
    names = [name for name, _ in VECTORS]
    assert len(names) == len(set(names))
    for _, vector in VECTORS:
        assert ("expect" in vector) != ("diagnostics" in vector)
        assert vector.get("diagnostics") != []


def test_every_diagnostic_code_has_a_vector() -> None:
    covered = {d["code"] for _, v in VECTORS for d in v.get("diagnostics", [])}
    # E005 (file larger than 1 MB) is tested in test_compiler.py: a vector would weigh 1 MB.
    # E039 (the runtime refuses what the checker accepted) is the server's, when a template is
    # saved; no template is known to cause it (tests/server/test_templates.py).
    assert set(CODES) - covered == {"E005", "E039"}
