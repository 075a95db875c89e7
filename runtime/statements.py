"""What each statement of a rule body means to the runtime: one class per statement, its every
stage beside the others.

A statement's meaning is four things that must agree: how the verifier checks it against the
manifest (`verify`), the code the compiled path writes for it (`emit`), what the reference path
does (`run`), and the variables it may set (`sets`, for the explanation). The two evaluation
paths must agree exactly: charge the same steps (`runtime.cost.static_cost`) and record the
same rule errors; here they sit a screen apart instead of in four modules. The walkers
(`runtime.verify.Verifier`, `runtime.codegen.CodeGenerator`,
`runtime.reference.ReferenceEvaluator`, `runtime.explain`) keep their expressions and hand each
statement to its class through `semantics_of`, which refuses a statement with none
(`ir.UnknownNode`), so a forgotten one fails the first test that reaches it.

A new statement is its IR node (`inspectlang.ir`) and one class here, listed in `SEMANTICS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from inspectlang import ir
from runtime.cost import static_cost
from runtime.errors import InvalidProgram
from runtime.values import record

# What a statement needs of each walker, as protocols: the walkers import this module to hand
# statements over (`semantics_of`), so this one names what it uses instead of importing them
# (no import circle, not even for the type checker).

#: The inspection data on the reference path (`runtime.reference.Env`).
Env = dict[str, Any]


class Scope(Protocol):
    """What names mean where a statement stands (`runtime.verify.Scope`)."""

    variables: dict[str, str]


class Verifier(Protocol):
    """The checker of IR against a manifest (`runtime.verify.Verifier`)."""

    def identifier(self, name: Any, where: str) -> str: ...

    def verify(self, node: ir.Expression, scope: Any, where: str, loops: int) -> ir.Expression: ...

    def verify_statements(
        self, nodes: tuple[ir.Statement, ...], scope: Any, where: str
    ) -> tuple[ir.Statement, ...]: ...


class CodeGenerator(Protocol):
    """The compiled path's writer (`runtime.codegen.CodeGenerator`)."""

    sources: set[str]

    def charge(self, cost: int) -> None: ...

    def expression(self, node: ir.Expression) -> tuple[str, bool]: ...

    def emit(self, line: str) -> None: ...

    def indented(self) -> AbstractContextManager[None]: ...

    def statements(self, nodes: Sequence[ir.Statement]) -> None: ...


class ReferenceEvaluator(Protocol):
    """The reference path (`runtime.reference.ReferenceEvaluator`)."""

    trace: list[dict[str, Any]] | None

    def charge(self, env: Env, cost: int) -> None: ...

    def evaluate(self, node: ir.Expression, env: Env) -> Any: ...

    def statements(self, nodes: Sequence[ir.Statement], env: Env) -> None: ...


__all__ = ["SEMANTICS", "IfSemantics", "SetSemantics", "StatementSemantics", "semantics_of"]

Node = TypeVar("Node", bound=ir.Statement)


class StatementSemantics(Generic[Node]):
    """The runtime's meaning of one statement class (`node`)."""

    node: ClassVar[type[ir.Statement]]

    def verify(self, verifier: Verifier, node: Node, scope: Scope, where: str) -> ir.Statement:
        """The statement with its names and types checked against the manifest."""
        raise NotImplementedError

    def emit(self, generator: CodeGenerator, node: Node) -> None:
        """Write the compiled path's code for the statement."""
        raise NotImplementedError

    def run(self, evaluator: ReferenceEvaluator, node: Node, env: Env) -> None:
        """Do what the statement does, on the reference path."""
        raise NotImplementedError

    def sets(self, node: Node) -> list[str]:
        """The variables the statement may set."""
        raise NotImplementedError


class SetSemantics(StatementSemantics[ir.SetStatement]):
    """`set NAME to VALUE`: a missing value leaves the variable as it was and records the rule
    error `missing_value`."""

    node = ir.SetStatement

    def verify(
        self, verifier: Verifier, node: ir.SetStatement, scope: Scope, where: str
    ) -> ir.Statement:
        name = verifier.identifier(node.name, where)
        if name not in scope.variables:
            raise InvalidProgram(f"set of unknown variable {name!r}", where)
        value = verifier.verify(node.value, scope, f"{where}.value", 0)
        if value.type != scope.variables[name]:
            raise InvalidProgram(f"set {name} to a {value.type}", where)
        return ir.SetStatement(name, value, node.span)

    def emit(self, generator: CodeGenerator, node: ir.SetStatement) -> None:
        generator.charge(1 + static_cost(node.value))
        value, missing = generator.expression(node.value)
        store = f"d_vars[{node.name!r}] = {value}"
        generator.sources.add("var")
        if missing:
            generator.emit(
                f"if {value} is None: _record(env['errors'], 'missing_value', {node.span!r})"
            )
            generator.emit(f"else: {store}")
        else:
            generator.emit(store)

    def run(self, evaluator: ReferenceEvaluator, node: ir.SetStatement, env: Env) -> None:
        evaluator.charge(env, 1 + static_cost(node.value))
        value = evaluator.evaluate(node.value, env)
        if value is None:
            record(env["errors"], "missing_value", node.span)
        else:
            env["vars"][node.name] = value
        if evaluator.trace is not None:
            evaluator.trace.append(
                {"op": "set", "span": list(node.span), "value": value, "name": node.name}
            )

    def sets(self, node: ir.SetStatement) -> list[str]:
        return [node.name]


class IfSemantics(StatementSemantics[ir.IfStatement]):
    """`if CONDITION` with its two branches: the `else` branch runs unless the condition is
    true (a missing condition takes it)."""

    node = ir.IfStatement

    def verify(
        self, verifier: Verifier, node: ir.IfStatement, scope: Scope, where: str
    ) -> ir.Statement:
        condition = verifier.verify(node.condition, scope, f"{where}.cond", 0)
        if condition.type != "boolean":
            raise InvalidProgram("an if condition must be boolean", where)
        return ir.IfStatement(
            condition,
            verifier.verify_statements(node.then, scope, f"{where}.then"),
            verifier.verify_statements(node.otherwise, scope, f"{where}.else"),
            node.span,
        )

    def emit(self, generator: CodeGenerator, node: ir.IfStatement) -> None:
        generator.charge(1 + static_cost(node.condition))
        cond, _ = generator.expression(node.condition)
        generator.emit(f"if {cond} is True:")
        with generator.indented():
            generator.statements(node.then)
        if node.otherwise:
            generator.emit("else:")
            with generator.indented():
                generator.statements(node.otherwise)

    def run(self, evaluator: ReferenceEvaluator, node: ir.IfStatement, env: Env) -> None:
        evaluator.charge(env, 1 + static_cost(node.condition))
        cond = evaluator.evaluate(node.condition, env)
        evaluator.statements(node.then if cond is True else node.otherwise, env)

    def sets(self, node: ir.IfStatement) -> list[str]:
        return [
            name
            for branch in (node.then, node.otherwise)
            for statement in branch
            for name in semantics_of(statement, "explanation").sets(statement)
        ]


#: Statement class -> its meaning.
SEMANTICS: dict[type, StatementSemantics[Any]] = {
    semantics.node: semantics for semantics in (SetSemantics(), IfSemantics())
}


def semantics_of(node: object, walker: str) -> StatementSemantics[Any]:
    """The meaning of statement `node`; `walker` names the walker that asks when there is none."""
    found = SEMANTICS.get(type(node))
    if found is None:
        raise ir.UnknownNode(node, walker)
    return found
