"""`ask when: CONDITION` of inputs (XLSForm's `relevant`): checked once every input is declared.

The condition decides, from the values known when the inspection is created or updated, whether
the input is asked at all; a required input is required only while its condition holds. So it
may read other inputs, product and consumer fields and `today()`, but nothing that only exists
later (variables, images, damages, validations, checks: E036), and an input's condition must not
depend on itself through other inputs' conditions (E041).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from inspectlang.ast import Span
from inspectlang.checked import CheckedInput
from inspectlang.expression_types import ExpressionChecking
from inspectlang.manifest import IRNode

#: IR operations an `ask when` condition may not read (they exist only once the inspection runs).
LATER = frozenset({"var", "images", "image", "damages", "validations", "check", "event"})


def walk(node: Any) -> Iterator[IRNode]:
    """Every IR node under `node` (itself included)."""
    if isinstance(node, dict):
        if "op" in node:
            yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for item in node:
            yield from walk(item)


def check_ask_when(
    inputs: list[CheckedInput],
    expressions: ExpressionChecking,
    report: Callable[[str, str, Span], object],
) -> None:
    """Check each input's `ask when` and store its IR on the checked input."""
    by_identifier = {i.identifier: i for i in inputs}
    for checked in inputs:
        expr = checked.ask_when_source
        if expr is None:
            continue
        node = expressions.condition(expr, "`ask when`")
        later = next((n for n in walk(node) if n["op"] in LATER), None)
        if later is not None:
            span = later.get("span") or []
            report(
                "E036",
                "`ask when` reads what is known when the inspection is created or updated: "
                "inputs, product and consumer fields, today()",
                Span(*span) if len(span) == 4 else expr.span,
            )
            continue
        checked.ask_when = node
    depends = {
        i.identifier: {n["id"] for n in walk(i.ask_when) if n["op"] == "input"} for i in inputs
    }
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(identifier: str) -> bool:
        """True when a cycle passes through `identifier`."""
        if state.get(identifier) == 1:
            return True
        if state.get(identifier) == 2:
            return False
        state[identifier] = 1
        cyclic = any(visit(other) for other in depends.get(identifier, ()))
        state[identifier] = 2
        return cyclic

    for checked in inputs:
        if checked.ask_when is not None and checked.ask_when_source is not None:
            state.clear()
            if visit(checked.identifier):
                names = sorted(
                    by_identifier[d].name for d in depends[checked.identifier] if d in by_identifier
                )
                report(
                    "E041",
                    f"`ask when` of input `{checked.name}` depends on itself "
                    f"(through {', '.join(f'`{n}`' for n in names)})",
                    checked.ask_when_source.span,
                )
