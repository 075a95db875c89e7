"""The runtime's walkers of the logic IR refuse a node they do not know, by name
(`inspectlang.ir.UnknownNode`), instead of taking it for another kind.

The manifest's JSON is read into typed nodes (`inspectlang.ir.Decoder`) and an unknown op is
refused there (`InvalidProgram`, through the verifier); the walkers (the verifier, code
generation, the reference evaluator, the explanation) are `ir.NodeVisitor`s dispatching on the
node's class. Before, each took whatever was not a `set` for an `if` (a KeyError on `"cond"`),
and the code generator compiled an expression op it did not know as a quantifier, the reference
evaluator raised an AttributeError for one."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from rt_support import car_program, complete_run

from inspectlang import ir
from inspectlang.ir import IfStatement, SetStatement, UnknownNode
from runtime import codegen
from runtime.errors import InvalidProgram
from runtime.evaldata import empty_env
from runtime.explain import explain
from runtime.expression import Context, context_template
from runtime.reference import ReferenceEvaluator
from runtime.verify import Verifier

SPAN = [3, 5, 3, 20]
TRUE_JSON = {"op": "literal", "value": True, "type": "boolean", "span": SPAN}
ONE_JSON = {"op": "literal", "value": 1, "type": "number", "span": SPAN}
AT = (3, 5, 3, 20)
TRUE = ir.Literal(True, "boolean", AT)
FALSE = ir.Literal(False, "boolean", AT)
ONE = ir.Literal(1, "number", AT)


@dataclasses.dataclass(frozen=True)
class WhileStatement:
    """A statement kind no walker knows."""

    condition: ir.Expression
    body: tuple[Any, ...]
    span: tuple[int, int, int, int]


UNKNOWN: Any = WhileStatement(TRUE, (), AT)
#: Bodies holding the unknown statement at the top and inside each branch of an `if` (the branch
#: the reference evaluator takes).
BODIES = {
    "top": (UNKNOWN,),
    "then": (IfStatement(TRUE, (UNKNOWN,), (), AT),),
    "else": (IfStatement(FALSE, (SetStatement("n", ONE, AT),), (UNKNOWN,), AT),),
}


def verifier() -> Verifier:
    return Verifier(context_template(Context({"n": "numeric"}, {}, (), {})))


def test_verifier_reads_json_statements_into_typed_nodes() -> None:
    check = verifier()
    body = [
        {"op": "set", "name": "n", "value": ONE_JSON, "span": SPAN},
        {"op": "if", "cond": TRUE_JSON, "then": [], "span": SPAN},
    ]
    assert check.statements(body, check.base, "rule") == (
        SetStatement("n", ONE, AT),
        IfStatement(TRUE, (), (), AT),
    )


@pytest.mark.parametrize("where", ["top", "then"])
def test_verifier_refuses_an_unknown_statement_op(where: str) -> None:
    statement = {"op": "while", "cond": TRUE_JSON, "span": SPAN}
    body = [statement] if where == "top" else [{**BODY_IF, "then": [statement]}]
    check = verifier()
    with pytest.raises(InvalidProgram, match="unknown statement op 'while'"):
        check.statements(body, check.base, "rule")


BODY_IF = {"op": "if", "cond": TRUE_JSON, "then": [], "else": [], "span": SPAN}


@pytest.mark.parametrize("where", sorted(BODIES))
def test_code_generator_refuses_an_unknown_statement(where: str) -> None:
    with pytest.raises(UnknownNode, match="codegen: unknown IR node WhileStatement") as caught:
        codegen.generate_rule("rule_0", BODIES[where])
    assert caught.value.node is UNKNOWN


@pytest.mark.parametrize("where", sorted(BODIES))
def test_reference_evaluator_refuses_an_unknown_statement(where: str) -> None:
    with pytest.raises(UnknownNode, match="reference evaluator: unknown IR node WhileStatement"):
        ReferenceEvaluator().statements(BODIES[where], empty_env())


@dataclasses.dataclass(frozen=True, slots=True)
class Random(ir.Expression):
    """An expression kind no walker knows."""

    type: str = "number"
    span: ir.Span = AT
    let: str | None = None


def test_code_generator_refuses_an_unknown_expression() -> None:
    """It was compiled as a quantifier (a KeyError on `"over"`)."""
    with pytest.raises(UnknownNode, match="codegen: unknown IR node Random"):
        codegen.generate_expression("expression", ir.Binary("+", ONE, Random(), "number", AT))


def test_reference_evaluator_refuses_an_unknown_expression() -> None:
    """It was looked up as a method `op_random` (an AttributeError)."""
    with pytest.raises(UnknownNode, match="reference evaluator: unknown IR node Random"):
        ReferenceEvaluator().evaluate(ir.Binary("+", ONE, Random(), "number", AT), empty_env())


def test_verifier_refuses_an_unknown_expression() -> None:
    with pytest.raises(UnknownNode, match="verifier: unknown IR node Random"):
        verifier().verify(Random(), verifier().base, "expression", 0)


def test_verifier_refuses_an_unknown_expression_op() -> None:
    check = verifier()
    with pytest.raises(InvalidProgram, match="unknown expression op 'random'") as caught:
        check.expression({"op": "random", "type": "number", "span": SPAN}, check.base, "here")
    assert caught.value.path == "here"


@pytest.mark.parametrize("where", sorted(BODIES))
def test_explanation_refuses_an_unknown_statement(where: str) -> None:
    program = car_program()
    state = complete_run(program)
    ran = {run["rule"] for run in state.ruleRuns}
    rules = tuple(
        dataclasses.replace(rule, body=BODIES[where]) if rule.id in ran else rule
        for rule in program.rules
    )
    assert rules != program.rules  # some rule ran, so the explanation walks its body
    with pytest.raises(UnknownNode, match="explanation: unknown IR node WhileStatement"):
        explain(dataclasses.replace(program, rules=rules), state)
