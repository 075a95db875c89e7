"""Golden IR: the logic's JSON nodes (`inspectlang.ir`) exactly as they were written when
`golden_ir.json` was recorded, before the IR's nodes became dataclasses with one generic writer
and decoder (issue 38). The IR JSON is stored data: it is in every saved template's manifest and
every compiled program, hashed into `logic.revision`, so a key, its order or a value's JSON kind
never changes by accident.

What the file holds, each IR part as `[where, node]` in manifest order:

- `templates`: the IR of the frozen sources of `golden_revisions.json` (every example and
  built-in template when recorded; the compile benchmark's large template is left out, its
  manifest's bytes are pinned there), compiled;
- `vectors`: the IR of every conformance vector that holds IR: a template vector's compiled
  logic, an expression vector's compiled expression, and for a hand-written `ir` vector what
  the decoder and the writer made of it (or the decoder's refusal, `MalformedIR`'s text).

The tests: a frozen source compiles to exactly the recorded bytes; every recorded node read back
with `ir.Decoder` and written with `ir.to_json` gives the same bytes (a program stored before
still loads, and loads as the same program); every kind of node is in the file; and a manifest
stored whole loads into a runtime program.

A deliberate change of the IR's JSON (which needs a migration of stored data) re-records the
file: `python -m tests.language.test_golden_ir`, then review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from inspectlang import ir
from inspectlang.compiler import compile_source
from inspectlang.manifest import Template
from runtime.program import build_program
from tests.conformance.vectors import Vector, all_vectors
from tests.language.test_golden_revisions import GOLDEN_ENTRIES, NOW, _compile

GOLDEN = Path(__file__).with_name("golden_ir.json")
#: The large generated template: its manifest's bytes are pinned by golden_revisions.json.
LEFT_OUT = "benchmarks/bench_compile.py:generate()"
#: The template whose whole manifest the file keeps, as a stored template keeps it.
WHOLE = "inspectlang/builtins/car_easy.insp"

Part = list[Any]  # [where, node]


def _bytes(node: Any) -> str:
    """A node as JSON text, its keys in their order (what the stored bytes depend on: key
    order, keys, and each value's JSON kind; `1` and `1.0` and `true` all differ)."""
    return json.dumps(node, ensure_ascii=False, separators=(",", ":"), allow_nan=True)


def ir_parts(data: Any, where: str = "") -> list[Part]:
    """Every IR node of a manifest's JSON (an object with an `op`), outermost only."""
    found: list[Part] = []
    if isinstance(data, dict):
        if "op" in data:
            return [[where, data]]
        for key, value in data.items():
            found += ir_parts(value, f"{where}.{key}")
    elif isinstance(data, list):
        for index, value in enumerate(data):
            found += ir_parts(value, f"{where}[{index}]")
    return found


def _is_statement(where: str) -> bool:
    """A rule body's item is a statement (`.logic.rules[0].body[1]`); any other part is an
    expression."""
    return where.rsplit(".", 1)[-1].startswith("body[")


def read_back(where: str, node: Any) -> Any:
    """The node decoded and written again."""
    if _is_statement(where):
        (statement,) = ir.Decoder().statements([node], where)
        return ir.to_json(statement)
    return ir.to_json(ir.Decoder().expression(node, where))


def _template_ir(template: Template) -> list[Part]:
    return ir_parts(template.to_api()["logic"], "logic")


def _holds_ir(data: Any) -> bool:
    if isinstance(data, dict):
        return "op" in data or any(_holds_ir(value) for value in data.values())
    return isinstance(data, list) and any(_holds_ir(value) for value in data)


def _vector_ir(vector: Vector) -> list[Part] | dict[str, Any]:
    """A manifest vector's compiled IR; an `ir` vector's IR decoded and written (or refused)."""
    test = vector.test
    if "ir" not in test:
        kind = test.get("templateKind", "created")
        template = compile_source(
            test["source"], "t.insp", template_kind=kind, now=NOW, includes=test.get("includes")
        )
        return _template_ir(template)
    try:
        return {"ir": test["ir"], "written": read_back("ir", test["ir"])}
    except ir.MalformedIR as refusal:
        return {"ir": test["ir"], "refused": str(refusal)}


#: Nodes only the program makes, never the compiler (the verifier's `today()` as `now`).
MADE = [["made", {"op": "now", "type": "date", "span": [3, 5, 3, 12]}]]


def record() -> dict[str, Any]:
    templates = {
        name: _template_ir(_compile(name, entry["source"], entry.get("includes", {})))
        for name, entry in sorted(GOLDEN_ENTRIES.items())
        if name != LEFT_OUT
    }
    vectors = {
        vector.id: _vector_ir(vector)
        for vector in all_vectors()
        if "ir" in vector.test or (vector.kind == "manifest" and _holds_ir(vector.test["expect"]))
    }
    entry = GOLDEN_ENTRIES[WHOLE]
    whole = _compile(WHOLE, entry["source"], entry.get("includes", {})).to_api()
    made = {"made": [[where, read_back(where, node)] for where, node in MADE]}
    return {"templates": templates, "made": made, "vectors": vectors, "whole": {WHOLE: whole}}


def write(data: dict[str, Any]) -> str:
    """The file's text: one IR part a line, so a change shows as the parts it changed."""
    lines = ["{"]
    for group_index, (group, entries) in enumerate(data.items()):
        lines.append(f"{json.dumps(group)}: {{")
        for index, (name, parts) in enumerate(entries.items()):
            end = "," if index < len(entries) - 1 else ""
            if isinstance(parts, list):
                rows = [_bytes(part) for part in parts]
                body = ",\n  ".join(rows)
                lines.append(f" {json.dumps(name, ensure_ascii=False)}: [\n  {body}\n ]{end}")
            else:
                lines.append(f" {json.dumps(name, ensure_ascii=False)}: {_bytes(parts)}{end}")
        lines.append("}" + ("," if group_index < len(data) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def _golden() -> dict[str, Any]:
    if not GOLDEN.exists() and __name__ == "__main__":  # recording it for the first time
        return {"templates": {}, "made": {}, "vectors": {}, "whole": {}}
    data: dict[str, Any] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return data


RECORDED = _golden()
TEMPLATES: dict[str, list[Part]] = RECORDED["templates"]
MADE_PARTS: dict[str, list[Part]] = RECORDED["made"]
VECTORS: dict[str, Any] = RECORDED["vectors"]


def _stored_parts() -> list[Any]:
    """Every recorded node that was written by the writer, as a test parameter."""
    params = []
    for group, entries in (("templates", TEMPLATES), ("made", MADE_PARTS), ("vectors", VECTORS)):
        for name, parts in entries.items():
            if isinstance(parts, dict):
                if "written" in parts:
                    params.append(pytest.param("ir", parts["written"], id=f"{name}: written"))
                continue
            params.append(pytest.param(None, parts, id=f"{group}: {name}"))
    return params


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_a_template_compiles_to_the_recorded_ir(name: str) -> None:
    entry = GOLDEN_ENTRIES[name]
    compiled = _template_ir(_compile(name, entry["source"], entry.get("includes", {})))
    assert [w for w, _ in compiled] == [w for w, _ in TEMPLATES[name]]
    for (where, node), (_, recorded) in zip(compiled, TEMPLATES[name], strict=True):
        assert _bytes(node) == _bytes(recorded), where


@pytest.mark.parametrize(("where", "parts"), _stored_parts())
def test_recorded_ir_reads_back_to_the_same_bytes(where: str | None, parts: Any) -> None:
    pairs = [[where, parts]] if where is not None else parts
    for place, node in pairs:
        assert _bytes(read_back(place, node)) == _bytes(node), place


def test_hand_written_ir_vectors_decode_as_recorded() -> None:
    """An `ir` vector decodes and is written as when recorded, or is refused with the same
    message (`MalformedIR`: where and what)."""
    hand_written = {name: entry for name, entry in VECTORS.items() if isinstance(entry, dict)}
    assert hand_written
    for name, entry in hand_written.items():
        try:
            written = read_back("ir", entry["ir"])
        except ir.MalformedIR as refusal:
            assert entry.get("refused") == str(refusal), name
        else:
            assert "written" in entry, f"{name}: refused when recorded, read now"
            assert _bytes(written) == _bytes(entry["written"]), name


def _ops(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        if "op" in node:
            found.add(node["op"])
        for value in node.values():
            _ops(value, found)
    elif isinstance(node, list):
        for value in node:
            _ops(value, found)


def test_every_kind_of_node_is_recorded() -> None:
    """Every op the decoder reads appears in a node the writer wrote, so the byte tests above
    cover every node kind (a new kind re-records the file)."""
    found: set[str] = set()
    _ops([TEMPLATES, MADE_PARTS, [e for e in VECTORS.values() if not isinstance(e, dict)]], found)
    for entry in VECTORS.values():
        if isinstance(entry, dict) and "written" in entry:
            _ops(entry["written"], found)
    known = set(ir.EXPRESSION_CLASSES) | set(ir.STATEMENT_CLASSES)
    assert known <= found, sorted(known - found)


def test_a_stored_manifest_loads_as_the_same_program() -> None:
    """A manifest stored before (car_easy's, whole) loads, and its logic written again from the
    program's nodes gives the stored bytes and revision."""
    stored = RECORDED["whole"][WHOLE]
    manifest = Template.from_api(stored)
    program = build_program(manifest)
    assert program.revision == stored["logic"]["revision"]
    for where, node in _template_ir(manifest):
        assert _bytes(read_back(where, node)) == _bytes(node), where
    assert _bytes(manifest.to_api()["logic"]) == _bytes(stored["logic"])


if __name__ == "__main__":
    GOLDEN.write_text(write(record()), encoding="utf-8")
    print(f"wrote the recorded IR to {GOLDEN}")
