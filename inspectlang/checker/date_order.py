"""`not before: OTHER` and `not after: OTHER` of date inputs: a declared order of two dates,
checked once every input is declared.

`input delivered` ... `not before: promised` says the delivery is never before the promise:
the runtime refuses a value that breaks it wherever inputs are taken (create and update), and
the proofs (`runtime.proofs.symbolic`) and the checker's meaning analysis (W018) read it as a
fact. Each name must be another declared input (`E020`, with a "did you mean"), a date
(`E050`), and the orders together must not go round (`E051`): `a not before a`, or `a not
before b` with `b not before a`, would force the dates of the round to be one day, which is
never what a template means by an order.

Read here, the written names (kept by `inputs.read_input_checks` with their spans) become the
other inputs' identifiers in the manifest's `validationSchema.notBefore` / `notAfter`.
"""

from __future__ import annotations

from inspectlang import ast
from inspectlang.checker.checked import CheckedInput
from inspectlang.checker.context import Run
from inspectlang.diagnostics import did_you_mean

#: `validationSchema` key -> the property an author writes.
ORDER_KEYS = {"notBefore": "not before", "notAfter": "not after"}


def check_date_order(run: Run) -> None:
    """Resolve each date input's `not before` / `not after` to identifiers; report unknown
    names, other types, self references and rounds."""
    report, inputs = run.reporter.report, run.template.inputs
    by_name = {i.name: i for i in inputs}
    # earlier identifier -> later identifiers, with where each order is written.
    later: dict[str, list[tuple[str, ast.Span]]] = {}
    for checked in inputs:
        for key, written in ORDER_KEYS.items():
            named = checked.checks.pop(key, None)
            if not named:
                continue
            resolved: list[str] = []
            for name, span in named:
                other = by_name.get(name)
                if other is None:
                    report(
                        "E020",
                        f"unknown input `{name}` in `{written}` of input `{checked.name}`",
                        span,
                        did_you_mean(name, [i.name for i in inputs if i.input_type == "date"])
                        or did_you_mean(name, by_name),
                    )
                elif other.input_type != "date":
                    report(
                        "E050",
                        f"`{written}: {name}`: input `{name}` is a {other.input_type} input; "
                        "a date can only be ordered against another date",
                        span,
                    )
                elif other is checked:
                    report(
                        "E051",
                        f"input `{name}` is `{written}` itself: the order says nothing",
                        span,
                    )
                elif other.identifier not in resolved:
                    resolved.append(other.identifier)
                    earlier, after = (other, checked) if key == "notBefore" else (checked, other)
                    later.setdefault(earlier.identifier, []).append((after.identifier, span))
            if resolved:
                checked.checks[key] = resolved
    _report_rounds(run, inputs, later)


def _report_rounds(
    run: Run, inputs: list[CheckedInput], later: dict[str, list[tuple[str, ast.Span]]]
) -> None:
    """E051 for each round of orders (`a` not before `b`, `b` not before `a`), found by an
    iterative depth-first walk (no recursion a long chain could drive past Python's limit)."""
    names = {i.identifier: i.name for i in inputs}
    state: dict[str, int] = {}  # 1 on the path, 2 done
    for start in later:
        if state.get(start):
            continue
        path: list[str] = [start]
        stack = [iter(later.get(start, ()))]
        state[start] = 1
        while stack:
            step = next(stack[-1], None)
            if step is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            target, span = step
            if state.get(target) == 1:
                round_ = [*path[path.index(target) :], target]
                run.reporter.report(
                    "E051",
                    "dates ordered in a round: "
                    + " <= ".join(f"`{names[i]}`" for i in round_)
                    + ": every date of the round would have to be the same day",
                    span,
                )
            elif not state.get(target):
                state[target] = 1
                path.append(target)
                stack.append(iter(later.get(target, ())))
