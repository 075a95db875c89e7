"""`ask when: CONDITION` of inputs (XLSForm's `relevant`): checked once every input is declared.

The condition decides, from the values known when the inspection is created or updated, whether
the input is asked at all; a required input is required only while its condition holds. So it
may read other inputs, product and consumer fields and `today()`, but nothing that only exists
later (variables, images, damages, validations, checks: E036), and an input's condition must not
depend on itself through other inputs' conditions (E041). An input asked only at creation
may not read an input asked only later (E042): its condition could never be known while it can
be answered, and a required one could never be filled.
"""

from __future__ import annotations

from inspectlang import ast, ir
from inspectlang.checker.checked import CheckedInput
from inspectlang.checker.context import Run

#: IR nodes an `ask when` condition may not read (they exist only once the inspection runs).
LATER = (
    ir.Variable,
    ir.Images,
    ir.ImageValue,
    ir.Damages,
    ir.Validations,
    ir.CheckValue,
    ir.EventSubject,
)


def check_ask_when(run: Run) -> None:
    """Check each input's `ask when` and store its IR on the checked input."""
    report, inputs = run.reporter.report, run.template.inputs
    by_identifier = {i.identifier: i for i in inputs}
    for checked in inputs:
        expr = checked.ask_when_source
        if expr is None:
            continue
        node = run.expressions.condition(expr, "`ask when`")
        later = next((n for n in ir.walk(node) if isinstance(n, LATER)), None)
        if later is not None:
            span = later.span if isinstance(later, ir.Expression) else ir.NO_SPAN
            report(
                "E036",
                "`ask when` reads what is known when the inspection is created or updated: "
                "inputs, product and consumer fields, today()",
                ast.Span(*span) if span[0] else expr.span,
            )
            continue
        checked.ask_when = node
        _asked_too_late(run, checked, node, by_identifier)
    for image in run.template.images:
        if image.ask_when_source is not None:
            image.ask_when = _condition(run, image.ask_when_source)
    depends = {
        i.identifier: {n.name for n in ir.walk(i.ask_when) if isinstance(n, ir.InputValue)}
        for i in inputs
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


def _asked_too_late(
    run: Run, checked: CheckedInput, node: ir.Expression, by_identifier: dict[str, CheckedInput]
) -> None:
    """E042 at the reading, with where the other input is asked: an input asked only at
    `create` whose condition reads one not asked at `create`."""
    if checked.stages != ["create"]:
        return
    for read in ir.walk(node):
        if not isinstance(read, ir.InputValue):
            continue
        other = by_identifier.get(read.name)
        if other is None or "create" in other.stages:
            continue
        where = _asked_at(run, other.name)
        run.reporter.report(
            "E042",
            f"input `{checked.name}` is asked only at create, but its `ask when` reads "
            f"`{other.name}`, asked only at {' and '.join(other.stages) or 'no stage'}: the "
            "condition is unknown when the company creates the inspection, and the consumer "
            f"cannot answer `{checked.name}` later",
            ast.Span(*read.span)
            if read.span[0]
            else checked.ask_when_source.span
            if checked.ask_when_source is not None
            else ast.NO_SPAN,
            notes=(
                f"`{other.name}` is asked at line {where.line}, column {where.column}; ask "
                f"`{checked.name}` at update too (`asked at: create, update`), or ask "
                f"`{other.name}` at create",
            ),
        )


def _asked_at(run: Run, name: str) -> ast.Span:
    """Where input `name` says when it is asked (its `asked at`, else its declaration)."""
    for declaration in run.declared(ast.InputDecl):
        if declaration.name != name:
            continue
        for item in declaration.items:
            if isinstance(item, ast.Property) and item.key == "asked at":
                return item.span
        return declaration.span
    return ast.NO_SPAN


def _condition(run: Run, expr: ast.Expr) -> ir.Expression | None:
    """An `ask when` condition's IR, or None after E036 when it reads what exists later."""
    node = run.expressions.condition(expr, "`ask when`")
    later = next((n for n in ir.walk(node) if isinstance(n, LATER)), None)
    if later is None:
        return node
    span = later.span if isinstance(later, ir.Expression) else ir.NO_SPAN
    run.reporter.report(
        "E036",
        "`ask when` reads what is known when the inspection is created or updated: "
        "inputs, product and consumer fields, today()",
        ast.Span(*span) if span[0] else expr.span,
    )
    return None
