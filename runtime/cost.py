"""What evaluating a node costs, in steps: one definition both evaluation paths charge from
(`runtime.codegen` emits it, `runtime.reference` counts it), so the step limit trips at the same
place on both."""

from __future__ import annotations

from inspectlang import ir


def static_cost(node: ir.Expression | None) -> int:
    """Steps charged for evaluating a normalized expression once, not counting quantifier bodies.

    A quantifier's body is charged when the quantifier runs: items x `static_cost(body)`. Both
    evaluation paths charge exactly this, so the step limit trips at the same place on both.
    """
    if node is None:
        return 0
    if isinstance(node, ir.Quantifier):
        return 1 + static_cost(node.collection)
    cost = 1
    for child in ir.child_nodes(node):
        cost += static_cost(child)  # type: ignore[arg-type]
    return cost


def body_cost(node: ir.Quantifier) -> int:
    """Steps one item of a quantifier costs (its `where` or `value`, at least 1)."""
    return max(1, static_cost(node.body))
