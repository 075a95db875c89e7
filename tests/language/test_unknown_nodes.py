"""The language's walkers refuse a statement or IR node they do not know, by name
(`inspectlang.ir.UnknownNode`), instead of taking it for another kind. Before, every walker
took whatever was not a `set` for an `if`: the checker and the formatter read its `.then` (an
AttributeError), the decompiler its `"then"` (a KeyError). JSON that is not IR is refused where
it is read, `inspectlang.ir.Decoder`, with its place (`ir.MalformedIR`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from inspectlang import ast, ir
from inspectlang.checker import check_module
from inspectlang.cli import main
from inspectlang.compiler import compile_source
from inspectlang.decompiler import Decompiler, decompile
from inspectlang.formatter import format_module
from inspectlang.ir import MalformedIR, UnknownNode
from inspectlang.parser import parse

SOURCE = (
    'template "Unknown nodes"\n    type: car\n\nvariable s: numeric = 1\n\n'
    "on finish\n    if s > 0\n        set s to s + 1\n\n"
    'verdict\n    disapprove "Low" when s < 1\n'
)


@dataclasses.dataclass(frozen=True)
class WhileStatement:
    """A statement kind no walker knows."""

    condition: ast.Expr
    body: tuple[ast.Statement, ...]


def with_unknown_statement(nested: bool) -> ast.Module:
    """SOURCE parsed, its rule's body replaced by a `WhileStatement` (inside the `if` when
    `nested`: the walkers must refuse it at any depth)."""
    module = parse(SOURCE)
    rule = next(d for d in module.declarations if isinstance(d, ast.RuleDecl))
    unknown: Any = WhileStatement(ast.Literal(True), ())
    first = rule.body[0]
    assert isinstance(first, ast.IfStatement)
    body = (dataclasses.replace(first, then=(unknown,)),) if nested else (unknown,)
    declarations = tuple(
        dataclasses.replace(d, body=body) if d is rule else d for d in module.declarations
    )
    return dataclasses.replace(module, declarations=declarations)


def manifest_with(statement: dict[str, Any]) -> dict[str, Any]:
    """SOURCE's manifest (JSON) whose rule body is `[statement]`."""
    data: dict[str, Any] = compile_source(SOURCE, "unknown.insp").model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    data["logic"]["rules"][0]["body"] = [statement]
    return data


@pytest.mark.parametrize("nested", [False, True])
def test_checker_refuses_an_unknown_statement(nested: bool) -> None:
    with pytest.raises(UnknownNode, match="checker: unknown IR node WhileStatement") as caught:
        check_module(with_unknown_statement(nested))
    assert isinstance(caught.value.node, WhileStatement)


@pytest.mark.parametrize("nested", [False, True])
def test_formatter_refuses_an_unknown_statement(nested: bool) -> None:
    with pytest.raises(UnknownNode, match="formatter: unknown IR node WhileStatement"):
        format_module(with_unknown_statement(nested))


SPAN = [7, 5, 7, 20]
WHILE = {"op": "while", "cond": {"op": "var", "name": "s", "type": "number", "span": SPAN}}


def test_decompiler_refuses_an_unknown_statement_op() -> None:
    """JSON that is not IR is refused where it is read (`ir.Decoder`), with its place."""
    with pytest.raises(MalformedIR, match=r"rule \w+\[0\]: unknown statement op 'while'"):
        decompile(manifest_with({**WHILE, "span": SPAN}))


def test_decompiler_refuses_an_unknown_statement_op_inside_an_if() -> None:
    statement = {
        "op": "if",
        "cond": {"op": "literal", "value": True, "type": "boolean", "span": SPAN},
        "then": [{**WHILE, "span": SPAN}],
        "else": [],
        "span": SPAN,
    }
    with pytest.raises(MalformedIR, match=r"\[0\]\.then\[0\]: unknown statement op 'while'"):
        decompile(manifest_with(statement))


def test_decompiler_refuses_an_unknown_expression_op() -> None:
    statement = {"op": "set", "name": "s", "value": {"op": "random", "span": SPAN}, "span": SPAN}
    with pytest.raises(MalformedIR, match=r"\[0\]\.value: unknown expression op 'random'"):
        decompile(manifest_with(statement))


@dataclasses.dataclass(frozen=True, slots=True)
class Random(ir.Expression):
    """An expression kind no walker knows."""

    type: str = "number"
    span: ir.Span = (1, 1, 1, 2)
    let: str | None = None


@pytest.mark.parametrize(
    "node",
    [
        Random(),
        ir.Binary("+", ir.Literal(1, "number", (1, 1, 1, 2)), Random(), "number", (1, 1, 1, 4)),
        ir.IfStatement(ir.Literal(True, "boolean", (1, 1, 1, 2)), (), (Random(),), (1, 1, 1, 4)),
    ],
)
def test_the_ir_walkers_refuse_a_node_kind_they_do_not_know(node: ir.Node) -> None:
    """Every walker of the language is a `NodeVisitor`: a node without its `visit_` method is
    refused by name, at any depth (the JSON writer and the decompiler here)."""
    with pytest.raises(UnknownNode, match="JSON writer: unknown IR node Random"):
        ir.to_json(node)
    decompiler = Decompiler(compile_source(SOURCE, "unknown.insp"))
    with pytest.raises(UnknownNode, match="decompiler: unknown IR node Random"):
        decompiler.visit(node)


def test_decompile_command_reports_an_unknown_statement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command answers exit code 1 and one line naming the node, not a traceback."""
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest_with({**WHILE, "span": SPAN})), encoding="utf-8")
    assert main(["decompile", str(path)]) == 1
    assert "unknown statement op 'while'" in capsys.readouterr().err
