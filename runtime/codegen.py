"""The compiled evaluation path: normalized IR -> Python source -> one code object per template.

Like Jinja's compiler, this writes Python source from the verified IR only. Every value lives in a
mangled local (`l_0`, `l_1`, ...), literals are emitted with `repr`, identifiers from the IR are
emitted only as `repr` string keys of dict lookups, and the functions run with
`{"__builtins__": {}}` plus a few helpers, taking a single argument: the inspection data (a
dict, see `runtime.evaldata`). Expressions become three-address code, so missing-value checks
are plain `is None` tests, emitted only where the operand can be missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from inspectlang import ir
from inspectlang.vocabulary import (
    CHAIN_OPERATORS,
    EQUALITY_OPERATORS,
    MAX_NUMBER,
    PRESENT_FIELDS,
)
from inspectlang.vocabulary import (
    MAX_TEXT_LENGTH as MAX_TEXT,
)
from runtime.cost import body_cost, static_cost
from runtime.errors import StepLimitExceeded
from runtime.statements import semantics_of
from runtime.values import (
    FUNCTIONS,
    MAX_STEPS,
    division_by_zero,
    record,
    too_large,
    too_long,
    typed,
)

#: A verdict reason: its text, or (text, text-typed node) when it shows values.
Reason = str | tuple[str, ir.Expression]

#: Where each data source lives in the inspection data, and the local that holds it.
SOURCES: dict[str, tuple[str, str]] = {
    "var": ("vars", "d_vars"),
    "input": ("inputs", "d_inputs"),
    "product": ("product", "d_product"),
    "consumer": ("consumer", "d_consumer"),
    "image": ("images", "d_images"),
    "images": ("image_list", "d_image_list"),
    "damages": ("damages", "d_damages"),
    "validations": ("validations", "d_validations"),
    "check": ("checks", "d_checks"),
    "event": ("event", "d_event"),
    "now": ("now", "d_now"),
}

#: The only names generated code can reach besides its locals.
HELPERS: dict[str, Any] = {
    "__builtins__": {},
    "_len": len,
    "_record": record,
    "_too_large": too_large,
    "_too_long": too_long,
    "_division_by_zero": division_by_zero,
    "_typed": typed,
    "_StepLimit": StepLimitExceeded,
    **{f"_fn_{name}": function for name, function in FUNCTIONS.items()},
}


COMPARE = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
ARITHMETIC = {"+": "+", "-": "-", "*": "*", "/": "/"}


class CodeGenerator(ir.NodeVisitor):
    """Writes the Python source of one function from normalized IR (one `visit_` method per
    node kind; an expression's returns (a local or literal, whether it may be missing))."""

    walker = "codegen"

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.level = 1
        self.counter = 0
        self.locals: dict[str, str] = {}
        self.sources: set[str] = set()
        #: Reads of data that no generated code changes, done once in the prologue.
        self.hoisted: dict[tuple[str, str], str] = {}
        self.prologue: list[str] = []
        #: A static bound on the magnitude of a number held by a local or literal (see `bound`).
        self.bounds: dict[str, float] = {}

    # -- output --------------------------------------------------------------------------------

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.level + line)

    @contextmanager
    def indented(self) -> Iterator[None]:
        self.level += 1
        try:
            yield
        finally:
            self.level -= 1

    def temp(self) -> str:
        name = f"l_{self.counter}"
        self.counter += 1
        return name

    def function(self, name: str, body: list[str]) -> str:
        prologue = [f"def {name}(env):"]
        # error helpers (rare paths) read env['errors'] where they run; library calls get d_err
        if any("d_err" in line for line in [*body, *self.prologue]):
            prologue.append("    d_err = env['errors']")
        prologue.append("    d_steps = env['steps']")
        for source in sorted(self.sources):
            key, local = SOURCES[source]
            prologue.append(f"    {local} = env[{key!r}]")
        return "\n".join([*prologue, *self.prologue, *body, ""])

    def charge(self, cost: int) -> None:
        """Count `cost` steps; past MAX_STEPS the event's evaluation stops."""
        self.emit(f"d_steps += {cost!r}")
        self.emit(f"if d_steps > {MAX_STEPS!r}: raise _StepLimit()")

    def leave(self, value: str | None = None) -> None:
        """Store the step count back, then return `value` (or fall off the end)."""
        self.emit("env['steps'] = d_steps")
        if value is not None:
            self.emit(f"return {value}")

    # -- expressions ---------------------------------------------------------------------------

    def expression(self, node: ir.Expression) -> tuple[str, bool]:
        """Emit code computing `node`; return (a local or literal, whether it may be missing)."""
        result: tuple[str, bool] = self.visit(node)
        return result

    def visit_Literal(self, node: ir.Literal) -> tuple[str, bool]:
        code = repr(node.value)
        value = node.value
        if isinstance(value, int | float) and not isinstance(value, bool):
            self.bounds[code] = abs(value)
        return code, False

    def source(self, node: ir.Expression) -> str:
        """The local holding the data source `node` reads (read once in the prologue)."""
        self.sources.add(node.op)
        return SOURCES[node.op][1]

    def whole(self, node: ir.Images | ir.Damages | ir.Validations | ir.Now) -> tuple[str, bool]:
        return self.source(node), False

    visit_Images = visit_Damages = visit_Validations = visit_Now = whole

    def hoisted_read(
        self,
        node: ir.InputValue | ir.ProductField | ir.ConsumerField | ir.ImageValue | ir.CheckValue,
    ) -> tuple[str, bool]:
        """Read once per call, in the prologue: nothing a generated function does changes these
        (rules change only variables; check results change between calls, never during one)."""
        local = self.source(node)
        found = self.hoisted.get((node.op, node.name))
        present = isinstance(node, ir.ImageValue | ir.CheckValue)
        if found is None:
            found = self.hoisted[(node.op, node.name)] = self.temp()
            read = "[{!r}]" if present else ".get({!r})"
            self.prologue.append(f"    {found} = {local}{read.format(node.name)}")
        return found, not present

    visit_InputValue = visit_ProductField = visit_ConsumerField = hoisted_read
    visit_ImageValue = visit_CheckValue = hoisted_read

    def visit_Variable(self, node: ir.Variable) -> tuple[str, bool]:
        local = self.source(node)
        target = self.temp()
        self.emit(f"{target} = {local}[{node.name!r}]")
        return target, False

    def visit_EventSubject(self, node: ir.EventSubject) -> tuple[str, bool]:
        local = self.source(node)
        target = self.temp()
        self.emit(f"{target} = {local}.get({node.name!r})")
        if node.name == "value":
            self.emit(f"{target} = _typed({target}, {node.type!r})")
        return target, True

    def visit_Local(self, node: ir.Local) -> tuple[str, bool]:
        return self.locals[node.name], False

    def visit_ListLiteral(self, node: ir.ListLiteral) -> tuple[str, bool]:
        target = self.temp()
        items = [self.expression(item)[0] for item in node.items]
        self.emit(f"{target} = [{', '.join(items)}]")
        return target, False

    def visit_RecordField(self, node: ir.RecordField) -> tuple[str, bool]:
        target = self.temp()
        record_code, missing = self.expression(node.value)
        present = (node.value.type, node.name) in PRESENT_FIELDS
        # Records are built by runtime.evaldata with every key; present fields never hold
        # None on an existing record, so they are read by subscription.
        lookup = f"{record_code}[{node.name!r}]" if present else f"{record_code}.get({node.name!r})"
        if missing:
            self.emit(f"{target} = None if {record_code} is None else {lookup}")
        elif present:
            return lookup, False  # pure and never missing: used in place, no temporary
        else:
            self.emit(f"{target} = {lookup}")
        return target, missing or not present

    def visit_Unary(self, node: ir.Unary) -> tuple[str, bool]:
        target = self.temp()
        operand, missing = self.expression(node.operand)
        value = f"(not {operand})" if node.operator == "not" else f"(-{operand})"
        guard = f"None if {operand} is None else " if missing else ""
        self.emit(f"{target} = {guard}{value}")
        return target, missing

    def visit_Binary(self, node: ir.Binary) -> tuple[str, bool]:
        target = self.temp()
        operator = node.operator
        if operator in CHAIN_OPERATORS:
            return self.logical(node, target)
        span = repr(node.span)
        left, left_missing = self.expression(node.left)
        right, right_missing = self.expression(node.right)
        missing_test = " or ".join(
            f"{code} is None"
            for code, missing in ((left, left_missing), (right, right_missing))
            if missing
        )
        if operator in COMPARE or operator == "in":
            python = COMPARE.get(operator, "in")
            if operator in EQUALITY_OPERATORS or not missing_test:
                # a comparison of present values is pure and never missing: used in place
                return f"({left} {python} {right})", False
            self.emit(f"{target} = None if {missing_test} else {left} {python} {right}")
            return target, True
        # arithmetic (+ on numbers or texts, - * / on numbers)
        bound = self.bound(operator, left, right) if not missing_test else None
        if bound is not None:
            # present operands whose result is provably in range: no check, never missing
            self.emit(f"{target} = {left} {ARITHMETIC[operator]} {right}")
            self.bounds[target] = bound
            return target, False
        block = False
        if missing_test:
            self.emit(f"if {missing_test}: {target} = None")
            self.emit("else:")
            block = True
        with self.indented() if block else _nothing():
            if operator == "/":
                self.emit(f"if {right} == 0: {target} = _division_by_zero(env['errors'], {span})")
                self.emit(f"else: {target} = {left} / {right}")
            else:
                self.emit(f"{target} = {left} {ARITHMETIC[operator]} {right}")
            if node.type == "text":
                self.emit(
                    f"if _len({target}) > {MAX_TEXT!r}: {target} = _too_long(env['errors'], {span})"
                )
            else:
                maybe = f"{target} is not None and " if operator == "/" else ""
                self.emit(
                    f"if {maybe}not -{MAX_NUMBER!r} <= {target} <= "
                    f"{MAX_NUMBER!r}: {target} = _too_large(env['errors'], {span})"
                )
        return target, True

    def bound(self, operator: str, left: str, right: str) -> float | None:
        """A bound on |left op right| when both bounds are known and it is within MAX_NUMBER.

        Literals are bounded by their value and `count` by the step limit (each counted item
        costs a step), so e.g. `100 - 10 * count(...)` needs no range check.
        """
        if operator not in ("+", "-", "*") or left not in self.bounds or right not in self.bounds:
            return None
        a, b = self.bounds[left], self.bounds[right]
        result = a * b if operator == "*" else a + b
        return result if result <= MAX_NUMBER else None

    def logical(self, node: ir.Binary, target: str) -> tuple[str, bool]:
        """Kleene and/or with short-circuit: the right side runs only when the left can't decide."""
        left, left_missing = self.expression(node.left)
        decided = "False" if node.operator == "and" else "True"
        other = "True" if decided == "False" else "False"
        self.emit(f"if {left} is {decided}: {target} = {decided}")
        self.emit("else:")
        with self.indented():
            right, right_missing = self.expression(node.right)
            if not left_missing:
                # here the left side is the neutral element: the right side decides
                self.emit(f"{target} = {right}")
            else:
                if not right.isidentifier():
                    # an expression used in place: evaluate it once
                    self.emit(f"{target} = {right}")
                    right = target
                self.emit(
                    f"{target} = {right} if {left} is {other} else "
                    f"({decided} if {right} is {decided} else None)"
                )
        return target, left_missing or right_missing

    def visit_Conditional(self, node: ir.Conditional) -> tuple[str, bool]:
        """Only the chosen side runs (missing counts as false, as in every condition)."""
        target = self.temp()
        condition, _ = self.expression(node.condition)
        self.emit(f"if {condition} is True:")
        with self.indented():
            then, then_missing = self.expression(node.then)
            self.emit(f"{target} = {then}")
        self.emit("else:")
        with self.indented():
            otherwise, otherwise_missing = self.expression(node.otherwise)
            self.emit(f"{target} = {otherwise}")
        return target, then_missing or otherwise_missing

    def visit_Call(self, node: ir.Call) -> tuple[str, bool]:
        target = self.temp()
        span = repr(node.span)
        name = node.function
        if name == "today":
            self.sources.add("now")
            return "d_now", False
        args = [self.expression(arg) for arg in node.arguments]
        codes = [code for code, _ in args]
        if name == "defined":
            present = f"{codes[0]} is not None" if args[0][1] else "True"
            self.emit(f"{target} = {present}")
            return target, False
        if name in ("lower", "upper"):
            text, missing = args[0]
            guard = f"None if {text} is None else " if missing else ""
            self.emit(f"{target} = {guard}{text}.{name}()")
            self.emit(
                f"if {target} is not None and _len({target}) > {MAX_TEXT!r}: "
                f"{target} = _too_long(env['errors'], {span})"
            )
            return target, True
        self.emit(f"{target} = _fn_{name}(d_err, {span}, {', '.join(codes)})")
        return target, True

    def quantifier(self, node: ir.Quantifier) -> tuple[str, bool]:
        target = self.temp()
        span = repr(node.span)
        op = node.op
        items, missing = self.expression(node.collection)
        body = node.body
        item = self.temp()
        block = False
        if missing:
            self.emit(f"if {items} is None: {target} = None")
            self.emit("else:")
            block = True
        with self.indented() if block else _nothing():
            self.emit(f"d_steps += _len({items}) * {body_cost(node)!r}")
            self.emit(f"if d_steps > {MAX_STEPS!r}: raise _StepLimit()")
            start = {"count": "0", "sum": "0", "any": "False", "all": "True"}.get(op, "[]")
            self.emit(f"{target} = {start}")
            self.emit(f"for {item} in {items}:")
            with self.indented():
                if isinstance(node.collection, ir.ListLiteral):
                    # only list literals can hold missing items; data lists never do
                    self.emit(f"if {item} is None: continue")
                saved = dict(self.locals)
                if node.variable is not None:
                    self.locals[node.variable] = item
                value, value_missing = (item, False) if body is None else self.expression(body)
                self.locals = saved
                if op == "sum":
                    if value_missing:
                        self.emit(f"if {value} is not None: {target} += {value}")
                    else:
                        self.emit(f"{target} += {value}")
                elif op == "count":
                    if body is None:
                        self.emit(f"{target} += 1")
                    else:
                        holds = f"{value} is True" if value_missing else value
                        self.emit(f"if {holds}: {target} += 1")
                elif op == "any":
                    if body is None:
                        self.emit(f"{target} = True")
                        self.emit("break")
                    else:
                        holds = f"{value} is True" if value_missing else value
                        self.emit(f"if {holds}: {target} = True; break")
                elif op == "filter":  # the items that hold, in order
                    holds = f"{value} is True" if value_missing else value
                    self.emit(f"if {holds}: {target}.append({item})")
                elif op == "map":  # the values, missing ones left out
                    guard = f"if {value} is not None: " if value_missing else ""
                    self.emit(f"{guard}{target}.append({value})")
                elif body is not None:
                    fails = f"{value} is not True" if value_missing else f"not {value}"
                    self.emit(f"if {fails}: {target} = False; break")
            if op == "sum":
                self.emit(
                    f"if not -{MAX_NUMBER!r} <= {target} <= {MAX_NUMBER!r}: "
                    f"{target} = _too_large(env['errors'], {span})"
                )
        if op == "count":
            # each item costs at least one step, so a count never exceeds the step limit
            self.bounds[target] = float(MAX_STEPS)
        return target, missing or op == "sum"

    visit_CountOf = visit_AnyOf = visit_AllOf = visit_SumOf = quantifier
    visit_FilterOf = visit_MapOf = quantifier

    # -- statements ----------------------------------------------------------------------------

    def statements(self, nodes: Sequence[ir.Statement]) -> None:
        """Each statement's code, written by its class of `runtime.statements`."""
        if not nodes:
            self.emit("pass")
        for node in nodes:
            semantics_of(node, self.walker).emit(self, node)

    def reason(self, reason: tuple[str, ir.Expression]) -> str:
        """Emit a reason with values; the code of its text (the written text if missing)."""
        text, node = reason
        code = self.condition(node)
        if not code.isidentifier():
            target = self.temp()
            self.emit(f"{target} = {code}")
            code = target
        return f"({text!r} if {code} is None else {code})"

    def condition(self, node: ir.Expression) -> str:
        """Emit a condition (charged as one root); the returned code is True/False/None."""
        self.charge(static_cost(node))
        code, _ = self.expression(node)
        return code


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def generate_rule(name: str, body: Sequence[ir.Statement]) -> str:
    generator = CodeGenerator()
    generator.statements(body)
    generator.leave()
    return generator.function(name, generator.lines)


def generate_check(name: str, valid: ir.Expression) -> str:
    generator = CodeGenerator()
    cond = generator.condition(valid)
    generator.leave(f"{cond} is True")
    return generator.function(name, generator.lines)


def generate_verdict(
    name: str,
    disapprovals: list[tuple[Reason, ir.Expression]],
    approve_when: ir.Expression | None,
    otherwise: Reason,
) -> str:
    """A function returning (approved, reasons): reasons a list or a tuple of texts. A reason
    is a text, or (text, node) when it has values: the node's text, or the text if missing."""
    generator = CodeGenerator()
    if disapprovals:
        reasons = generator.temp()
        generator.emit(f"{reasons} = []")
        for reason, when in disapprovals:
            cond = generator.condition(when)
            if isinstance(reason, str):
                generator.emit(f"if {cond} is True: {reasons}.append({reason!r})")
                continue
            generator.emit(f"if {cond} is True:")
            with generator.indented():
                generator.emit(f"{reasons}.append({generator.reason(reason)})")
        generator.emit(f"if {reasons}:")
        with generator.indented():
            generator.leave(f"(False, {reasons})")
    if approve_when is not None:
        cond = generator.condition(approve_when)
        generator.emit(f"if {cond} is not True:")
        with generator.indented():
            if isinstance(otherwise, str):
                generator.leave(f"(False, ({otherwise!r},))")
            else:
                generator.leave(f"(False, ({generator.reason(otherwise)},))")
    # constant tuples (no allocation per call); Program.run_verdict turns reasons into a list
    generator.leave("(True, ())")
    return generator.function(name, generator.lines)


def generate_expression(name: str, node: ir.Expression, free_locals: Iterable[str] = ()) -> str:
    """A function returning the value of one expression (tests, conformance vectors, CLI).

    Names in `free_locals` are bound items read from `env["locals"]` (an expression checked
    with bound names, as the body of a `where` is).
    """
    generator = CodeGenerator()
    for local in free_locals:
        target = generator.temp()
        generator.locals[local] = target
        generator.emit(f"{target} = env['locals'][{local!r}]")
    generator.charge(static_cost(node))
    code, _ = generator.expression(node)
    generator.leave(code)
    return generator.function(name, generator.lines)


def compile_functions(source: str, filename: str) -> dict[str, Callable[..., Any]]:
    """`compile()` generated source once and return its functions by name."""
    namespace: dict[str, Any] = dict(HELPERS)
    code = compile(source, filename, "exec")
    exec(code, namespace)  # the source is generated from verified IR only
    return {
        name: value for name, value in namespace.items() if name not in HELPERS and callable(value)
    }
