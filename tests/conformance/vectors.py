"""The conformance vectors of `tests/conformance/*/*.json`: read, checked against their schema,
and sorted by kind, so each runner takes the vectors of its kind from every file.

A file may hold any kind (the format is `tests/conformance/README.md`, the schema
`vectors.schema.json`): the vectors of one concept (a statement's manifest shape, its
diagnostics and its runs on both paths) can sit in one file. The folders only group files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import jsonschema

ROOT = Path(__file__).resolve().parent
SCHEMA_PATH = ROOT / "vectors.schema.json"

Kind = Literal["manifest", "diagnostics", "run", "expression"]


@dataclass(frozen=True)
class Vector:
    #: The file, relative to tests/conformance without `.json` (`language/rules`).
    file: str
    kind: Kind
    #: The vector's own object, as the file holds it.
    test: dict[str, Any]
    #: The file's `context` (what an expression vector's names mean).
    context: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.test["name"])

    @property
    def id(self) -> str:
        return f"{self.file}: {self.name}"


def kind_of(test: dict[str, Any]) -> Kind:
    """A vector's kind, by its keys (the schema makes exactly one kind fit)."""
    if "create" in test:
        return "run"
    if "diagnostics" in test:
        return "diagnostics"
    if "source" in test:
        return "manifest"
    return "expression"


@cache
def schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(data)
    return data


class InvalidVectorFile(Exception):
    """A vector file its schema refuses: a collection error, never a check skipped."""


def read_file(path: Path) -> list[Vector]:
    data = json.loads(path.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        problems = []
        for error in errors:
            where = "".join(
                f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path
            )
            test = _test_at(data, list(error.absolute_path))
            named = f" ({test['name']!r})" if test and "name" in test else ""
            # For a vector fitting no kind, say why it fails the kind its keys name.
            best = jsonschema.exceptions.best_match(_kind_errors(error, test)) or error
            detail = best.message
            if best.validator == "oneOf":  # its message repeats the whole vector
                keys = [", ".join(s.get("required", ["?"])) for s in best.validator_value]
                detail = f"needs exactly one of: {'; '.join(keys)}"
            problems.append(f"{path.name}: ${where}{named}: {detail}")
        raise InvalidVectorFile("\n".join(problems))
    file = f"{path.parent.name}/{path.stem}"
    context = data.get("context", {})
    return [Vector(file, kind_of(test), test, context) for test in data["tests"]]


def _test_at(data: dict[str, Any], path: list[Any]) -> dict[str, Any] | None:
    if len(path) >= 2 and path[0] == "tests" and isinstance(path[1], int):
        test: dict[str, Any] = data["tests"][path[1]]
        return test
    return None


def _kind_errors(
    error: jsonschema.ValidationError, test: dict[str, Any] | None
) -> list[jsonschema.ValidationError]:
    """The errors against the kind the vector's keys name, when it fits none."""
    if test is None or error.validator != "oneOf" or list(error.absolute_path)[2:]:
        return [error]
    kind = kind_of(test)
    definition = schema()["$defs"][f"{kind}Vector"]
    validator = jsonschema.Draft202012Validator(
        {**definition, "$defs": schema()["$defs"]}
    )  # the kind's own schema, its references resolved
    return list(validator.iter_errors(test)) or [error]


@cache
def all_vectors() -> tuple[Vector, ...]:
    vectors: list[Vector] = []
    for path in sorted(ROOT.glob("*/*.json")):
        vectors.extend(read_file(path))
    return tuple(vectors)


def vectors(kind: Kind) -> list[Vector]:
    return [vector for vector in all_vectors() if vector.kind == kind]
