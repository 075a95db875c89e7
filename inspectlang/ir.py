"""The logic IR's statements as typed nodes, and the error of a walker that meets a node it does
not know.

The manifest keeps the IR as JSON (`{"op": "set", "name", "value", "span"}` and `{"op": "if",
"cond", "then", "else", "span"}`, see docs/design/ir.md): it is a public artifact and its format
does not change. The runtime's verifier reads that JSON once and returns these nodes, checked;
every walker after it (code generation, the reference evaluator, the explanation) dispatches on
the node's class and refuses anything else with `UnknownNode`, instead of taking whatever is not
a `set` for an `if`. Expressions stay JSON objects, normalized by the verifier.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspectlang.errors import InspectlangError

#: An expression of the IR: a JSON object with an `op` (see docs/design/ir.md).
Expression = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SetStatement:
    """`set name to value`."""

    name: str
    value: Expression
    span: list[int]


@dataclass(frozen=True, slots=True)
class IfStatement:
    """`if condition` with its two branches (`otherwise` is empty when there is no `else`)."""

    condition: Expression
    then: tuple[Statement, ...]
    otherwise: tuple[Statement, ...]
    span: list[int]


Statement = SetStatement | IfStatement

#: The statement ops of the JSON form.
STATEMENT_OPS = ("set", "if")


class UnknownNode(InspectlangError, ValueError):
    """A walker met a node that is none of the kinds it knows: a program it must refuse, never
    guess at. `node` is the node met, `walker` names the walker. Also a `ValueError`, as for
    any other malformed input (the `decompile` command reports it as one)."""

    def __init__(self, node: object, walker: str) -> None:
        self.node = node
        self.walker = walker
        super().__init__(f"{walker}: unknown IR node {describe(node)}")


def describe(node: object) -> str:
    """A JSON node by its op, any other value by its class."""
    if isinstance(node, dict):
        return f"op {node.get('op')!r}"
    return type(node).__qualname__
