"""The expression checker: AST expression -> (type, IR node) plus diagnostics.

One pass over each expression resolves names against the declared context (`Scope`), checks the
types of operators and library calls, and builds the typed IR node (`inspectlang.ir`) at the
same time, so nothing walks an expression twice. A node that has an error gets the type
`ERROR`, which every operator accepts silently: one mistake gives one diagnostic.

A use of a `let` is resolved here too: the let is checked on its own the first time it is
needed (a use before the declaration works; a let that needs itself is E041), and each use is a
copy of its IR marked with its name, so the runtime needs nothing new. Inlining adds depth,
loops and nodes where the let is used, so those are checked against the vocabulary's limits at
each use (E004, E037), as the runtime's verifier will count them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from inspectlang import ast, ir
from inspectlang.checker import choices
from inspectlang.checker.scope import (
    ANY,
    ERROR,
    EVENT_SUBJECTS,
    LetInfo,
    Scope,
    compatible,
    describe,
    element_of,
    ir_type,
    is_iso_date,
    list_of,
)
from inspectlang.diagnostics import Reporter, did_you_mean
from inspectlang.manifest import CONSUMER_FIELDS
from inspectlang.patterns import pattern_problem
from inspectlang.vocabulary import (
    ARITHMETIC_OPERATORS,
    BOOLEAN,
    CHAIN_OPERATORS,
    DAMAGE,
    DATE,
    EQUALITY_OPERATORS,
    EQUALITY_TYPES,
    FUNCTIONS,
    IMAGE,
    INPUT_VALUE_TYPES,
    MAX_EXPRESSION_DEPTH,
    MAX_LIST_ITEMS,
    MAX_NODES,
    MAX_NUMBER,
    MAX_QUANTIFIER_DEPTH,
    MAX_TEXT_LENGTH,
    NAME,
    NUMBER,
    ORDER_OPERATORS,
    RECORD_FIELDS,
    SIGNATURES,
    TEXT,
    VALIDATION,
    accepts,
    chain_depth,
)

Checked = tuple[str, ir.Expression]


class ExpressionChecker:
    """Types expressions in a `Scope` and emits typed IR; diagnostics go to the `Reporter`."""

    def __init__(self, scope: Scope, reporter: Reporter) -> None:
        self.scope = scope
        self.reporter = reporter
        self.depth = 0
        #: Quantifier bodies the checked expression stands in (each is a loop at run time).
        self.loops = 0

    def error(
        self,
        code: str,
        message: str,
        span: ast.Span,
        suggestion: str | None = None,
        notes: tuple[str, ...] = (),
    ) -> Checked:
        self.reporter.report(code, message, span, suggestion, notes=notes)
        return ERROR, ir.Literal(None, TEXT, span.as_tuple())

    def condition(self, expr: ast.Expr, what: str) -> ir.Expression:
        """Check an expression used as a condition: it must be boolean."""
        type_, node = self.check(expr)
        if type_ not in (BOOLEAN, ERROR):
            self.error("E023", f"{what} must be a boolean, not {describe(type_)}", expr.span)
        return node

    def check(self, expr: ast.Expr) -> Checked:
        self.depth += 1
        try:
            if self.depth > MAX_EXPRESSION_DEPTH:
                return self.error(
                    "E004", f"expression nested deeper than {MAX_EXPRESSION_DEPTH}", expr.span
                )
            method = _DISPATCH.get(type(expr))
            if method is None:
                return self.error("E001", f"not an expression: {type(expr).__name__}", expr.span)
            return method(self, expr)
        finally:
            self.depth -= 1

    # -- leaves ------------------------------------------------------------------------------

    def literal(self, expr: ast.Literal) -> Checked:
        value = expr.value
        if isinstance(value, bool):
            type_ = BOOLEAN
        elif isinstance(value, int | float):
            type_ = NUMBER
            if not abs(value) <= MAX_NUMBER:  # also refuses NaN
                return self.error("E019", f"numbers are limited to {MAX_NUMBER:g}", expr.span)
        else:
            type_ = TEXT
            if len(value) > MAX_TEXT_LENGTH:
                return self.error(
                    "E037", f"text longer than {MAX_TEXT_LENGTH} characters", expr.span
                )
        return type_, ir.Literal(value, type_, expr.span.as_tuple())

    def list_literal(self, expr: ast.ListExpr) -> Checked:
        if len(expr.items) > MAX_LIST_ITEMS:
            return self.error("E037", f"a list has at most {MAX_LIST_ITEMS} items", expr.span)
        element = ANY
        items: list[ir.Expression] = []
        for item in expr.items:
            type_, node = self.check(item)
            items.append(node)
            if element in (ANY, ERROR):
                element = type_
            elif not compatible(element, type_):
                self.error(
                    "E023",
                    f"list items must have one type: {describe(element)} and {describe(type_)}",
                    item.span,
                )
        type_ = list_of(element)
        return type_, ir.ListLiteral(tuple(items), ir_type(type_), expr.span.as_tuple())

    def name(self, expr: ast.Name) -> Checked:
        name, span, scope = expr.name, expr.span.as_tuple(), self.scope
        if name in scope.locals:
            type_ = scope.locals[name]
            return type_, ir.Local(name, ir_type(type_), span)
        if name in EVENT_SUBJECTS:
            subject_type, events = EVENT_SUBJECTS[name]
            if scope.event in events:
                if name == "value":
                    if scope.value_type is None:
                        return self.error(
                            "E036",
                            "`value` needs a specific input: write `on input set NAME`",
                            expr.span,
                        )
                    subject_type = scope.value_type
                return subject_type, ir.EventSubject(name, ir_type(subject_type), span)
            if name not in scope.variables:
                where = " or ".join(f"`on {e.replace('_', ' ')}`" for e in events)
                return self.error("E036", f"`{name}` exists only inside a rule {where}", expr.span)
        if name in scope.let_sources and name not in scope.variables:
            scope.used_lets.add(name)
            return self.let(expr)
        if name in scope.variables:
            scope.used_variables.add(name)
            type_ = NUMBER if scope.variables[name] == "numeric" else TEXT
            return type_, ir.Variable(name, type_, span)
        if name == "images":
            return list_of(IMAGE), ir.Images("list<image>", span)
        if name == "damages":
            return list_of(DAMAGE), ir.Damages("list<damage>", span)
        if name == "validations":
            return list_of(VALIDATION), ir.Validations("list<validation>", span)
        if name in self.namespaces():
            return self.error("E020", f"`{name}` needs a field: `{name}.NAME`", expr.span)
        return self.error(
            "E020",
            f"unknown name `{name}`",
            expr.span,
            did_you_mean(name, self.known_names()),
        )

    def namespaces(self) -> set[str]:
        names = {"inputs", "checks", "consumer"}
        if self.scope.product_fields:
            names.update({self.scope.inspection_type, "product"})
        return names

    def known_names(self) -> list[str]:
        scope = self.scope
        names = [*scope.locals, *scope.variables, *scope.let_sources]
        names += ["images", "damages", "validations"]
        names.extend(self.namespaces())
        names.extend(n for n, (_, events) in EVENT_SUBJECTS.items() if scope.event in events)
        return names

    # -- member access -----------------------------------------------------------------------

    def attribute(self, expr: ast.Attribute) -> Checked:
        scope, span = self.scope, expr.span.as_tuple()
        name_span = expr.name_span if expr.name_span.line else expr.span
        base = expr.value
        if isinstance(base, ast.Name) and base.name not in scope.locals:
            namespace = base.name
            if namespace == "inputs":
                ref = scope.inputs.get(expr.name)
                if ref is None:
                    return self.error(
                        "E020",
                        f"unknown input `{expr.name}`",
                        name_span,
                        did_you_mean(expr.name, scope.inputs),
                    )
                type_ = INPUT_VALUE_TYPES.get(ref.input_type, ERROR)
                return type_, ir.InputValue(ref.identifier, type_, span)
            if namespace == "images" and not (
                expr.name in RECORD_FIELDS[IMAGE] and expr.name not in scope.images
            ):
                image = scope.images.get(expr.name)
                if image is None:
                    return self.error(
                        "E020",
                        f"unknown image `{expr.name}`",
                        name_span,
                        did_you_mean(expr.name, scope.images),
                    )
                return IMAGE, ir.ImageValue(image.identifier, IMAGE, span)
            if namespace == "checks":
                check_id = scope.checks.get(expr.name)
                if check_id is None:
                    return self.error(
                        "E020",
                        f"unknown check `{expr.name}`",
                        name_span,
                        did_you_mean(expr.name, scope.checks),
                    )
                scope.used_checks.setdefault(expr.name, expr.span)
                return BOOLEAN, ir.CheckValue(check_id, BOOLEAN, span)
            if namespace == "consumer":
                field = CONSUMER_FIELDS.get(expr.name)
                if field is None:
                    return self.error(
                        "E021",
                        f"unknown consumer field `{expr.name}`",
                        name_span,
                        did_you_mean(expr.name, CONSUMER_FIELDS),
                    )
                return field, ir.ConsumerField(expr.name, field, span)
            if namespace in (scope.inspection_type, "product") and (
                namespace not in scope.variables
            ):
                if not scope.product_fields:
                    return self.error(
                        "E021",
                        f"a {scope.inspection_type} inspection has no product fields",
                        expr.span,
                    )
                field = scope.product_fields.get(expr.name)
                if field is None:
                    return self.error(
                        "E021",
                        f"unknown {scope.inspection_type} field `{expr.name}`",
                        name_span,
                        did_you_mean(expr.name, scope.product_fields),
                    )
                return field, ir.ProductField(expr.name, field, span)
        base_type, base_node = self.check(base)
        if base_type == ERROR:
            return base_type, base_node
        fields = RECORD_FIELDS.get(base_type)
        if fields is None:
            return self.error(
                "E021", f"a {describe(base_type)} has no field `{expr.name}`", name_span
            )
        field_type = fields.get(expr.name)
        if field_type is None and expr.name in scope.unknown_validations:
            return ERROR, ir.Literal(None, TEXT, span)
        if field_type is None:
            return self.error(
                "E021",
                f"unknown field `{expr.name}` of {base_type}",
                name_span,
                did_you_mean(expr.name, fields),
            )
        if isinstance(base_node, ir.ImageValue) and field_type == VALIDATION:
            image = scope.images_by_identifier.get(base_node.name)
            declared = image.validations if image is not None else frozenset()
            if expr.name not in declared:
                return self.error(
                    "E021",
                    f"the image does not validate `{expr.name}`",
                    name_span,
                    did_you_mean(expr.name, declared),
                )
        return field_type, ir.RecordField(base_node, expr.name, field_type, span)

    # -- operators ---------------------------------------------------------------------------

    def unary(self, expr: ast.Unary) -> Checked:
        type_, operand = self.check(expr.operand)
        wanted = BOOLEAN if expr.operator == "not" else NUMBER
        if type_ not in (wanted, ERROR):
            self.error(
                "E023",
                f"`{expr.operator}` needs a {wanted}, not {describe(type_)}",
                expr.operand.span,
            )
        return wanted, ir.Unary(expr.operator, operand, wanted, expr.span.as_tuple())

    def chain(self, expr: ast.Binary) -> Checked:
        """An `and`/`or` chain (both sides, however grouped): its operands are checked one
        level below `chain_depth(operands)` and joined as a balanced tree, so a flat chain of
        64 conditions is as shallow as the parser and the runtime's verifier count it."""
        op = expr.operator
        operands: list[ast.Expr] = []
        pending: list[ast.Expr] = [expr]
        while pending:  # left to right, without recursion: a chain may be long
            node = pending.pop()
            if isinstance(node, ast.Binary) and node.operator == op:
                pending.extend((node.right, node.left))
            else:
                operands.append(node)
        saved = self.depth
        self.depth += chain_depth(len(operands)) - 1
        try:
            checked = [self.check(operand) for operand in operands]
        finally:
            self.depth = saved
        for (type_, _), operand in zip(checked, operands, strict=True):
            if type_ not in (BOOLEAN, ERROR):
                self.error("E023", f"`{op}` needs booleans, not {describe(type_)}", operand.span)
        return BOOLEAN, _balanced(op, [node for _, node in checked], operands)

    def binary(self, expr: ast.Binary) -> Checked:
        op = expr.operator
        if op in CHAIN_OPERATORS:
            return self.chain(expr)
        left_type, left = self.check(expr.left)
        right_type, right = self.check(expr.right)
        result = self.binary_type(expr, left_type, right_type)
        if op in EQUALITY_OPERATORS or op == "in":
            choices.check_comparison(self.reporter, self.scope, expr, left, right)
        if op == "/" and constant_number(expr.right) == 0:
            self.error("E030", "division by zero", expr.right.span)
        return result, ir.Binary(op, left, right, ir_type(result), expr.span.as_tuple())

    @staticmethod
    def date_hint(expr: ast.Binary, left: str, right: str) -> tuple[str, ...]:
        """A note when a date meets a text that looks like a date: `date("...")` was meant."""
        for type_, other, side in ((left, right, expr.right), (right, left, expr.left)):
            if (
                type_ == DATE
                and other == TEXT
                and isinstance(side, ast.Literal)
                and isinstance(side.value, str)
                and is_iso_date(side.value)
            ):
                return (f'write `date("{side.value}")` for a date',)
        return ()

    def binary_type(self, expr: ast.Binary, left: str, right: str) -> str:
        op = expr.operator
        if op in EQUALITY_OPERATORS:
            if not compatible(left, right) or not (comparable(left) and comparable(right)):
                self.error(
                    "E023",
                    f"cannot compare {_both(left, right)} with `{op}`",
                    expr.span,
                    notes=self.date_hint(expr, left, right),
                )
            return BOOLEAN
        if op in ORDER_OPERATORS:
            if not compatible(left, right) or (
                left not in (NUMBER, DATE, TEXT, ERROR) or right not in (NUMBER, DATE, TEXT, ERROR)
            ):
                self.error(
                    "E023",
                    f"`{op}` compares two numbers, dates or texts, not {_both(left, right)}",
                    expr.span,
                    notes=self.date_hint(expr, left, right),
                )
            return BOOLEAN
        if op == "in":
            element = element_of(right)
            if right != ERROR and element is None:
                self.error(
                    "E023",
                    f"`in` needs a list on its right, not {describe(right)}",
                    expr.right.span,
                )
            elif element is not None and not compatible(left, element):
                self.error(
                    "E023", f"cannot look for a {describe(left)} in a {describe(right)}", expr.span
                )
            return BOOLEAN
        if op == "+":
            if left == ERROR or right == ERROR:
                return right if left == ERROR else left
            if left == right and left in (NUMBER, TEXT):
                return left
            self.error(
                "E023",
                f"`+` adds two numbers or joins two texts, not {_both(left, right)}",
                expr.span,
            )
            return ERROR
        if op in ARITHMETIC_OPERATORS:
            for type_, side in ((left, expr.left), (right, expr.right)):
                if type_ not in (NUMBER, ERROR):
                    self.error("E023", f"`{op}` needs numbers, not {describe(type_)}", side.span)
            return NUMBER
        self.error("E001", f"unknown operator `{op}`", expr.span)
        return ERROR

    def conditional(self, expr: ast.Conditional) -> Checked:
        """`if C then A else B`: C a boolean, A and B of one type (the result's)."""
        condition_type, condition = self.check(expr.condition)
        if condition_type not in (BOOLEAN, ERROR):
            self.error(
                "E023",
                f"`if` needs a boolean condition, not {describe(condition_type)}",
                expr.condition.span,
            )
        then_type, then = self.check(expr.then)
        else_type, otherwise = self.check(expr.otherwise)
        # the side that says more: `error` and `any` (the items of `[]`) say nothing
        result = else_type if then_type == ERROR or ANY in then_type else then_type
        if not compatible(then_type, else_type):
            self.error(
                "E023",
                f"both sides of `if ... then ... else` give one type: "
                f"{describe(then_type)} after `then`, {describe(else_type)} after `else`",
                expr.otherwise.span,
                notes=_branch_hint(then_type, else_type),
            )
            result = ERROR
        # `[]` has the other side's list type
        if isinstance(then, ir.ListLiteral) and not then.items:
            then = dataclasses.replace(then, type=ir_type(result))
        if isinstance(otherwise, ir.ListLiteral) and not otherwise.items:
            otherwise = dataclasses.replace(otherwise, type=ir_type(result))
        node = ir.Conditional(condition, then, otherwise, ir_type(result), expr.span.as_tuple())
        return result, node

    # -- calls -------------------------------------------------------------------------------

    def call(self, expr: ast.Call) -> Checked:
        name, args = expr.function, expr.arguments
        function_span = expr.function_span if expr.function_span.line else expr.span
        if name in ir.QUANTIFIERS:
            if len(args) != 1:
                return self.error(
                    "E022",
                    f"`{name}` takes a list: `{name}(x in LIST "
                    f"{'of VALUE' if name in ir.VALUE_QUANTIFIERS else 'where CONDITION'})`",
                    expr.span,
                )
            return self.quantifier(ast.Quantifier(name, None, args[0], span=expr.span))
        arity = FUNCTIONS.get(name)
        if arity is None:
            return self.error(
                "E022",
                f"unknown function `{name}`",
                function_span,
                did_you_mean(name, [*FUNCTIONS, *ir.QUANTIFIERS]),
            )
        low, high = arity
        if len(args) < low or (high is not None and len(args) > high):
            wanted = (
                str(low)
                if low == high
                else f"{low} or more"
                if high is None
                else f"{low} to {high}"
            )
            return self.error(
                "E022",
                f"`{name}` takes {wanted} argument{'s' if wanted != '1' else ''}, not {len(args)}",
                expr.span,
            )
        if name == "date" and len(args) == 2:
            return self.error(
                "E022",
                '`date` takes a text (`date("2024-01-31")`) or a year, a month and a day '
                "(`date(2024, 1, 31)`), not 2 arguments",
                expr.span,
            )
        if (
            name == "date"
            and len(args) == 1
            and isinstance(args[0], ast.Literal)
            and isinstance(args[0].value, str)
        ):
            if not is_iso_date(args[0].value):
                return self.error(
                    "E019", f"`{args[0].value}` is not a date of the form YYYY-MM-DD", args[0].span
                )
            return DATE, ir.Literal(args[0].value, DATE, expr.span.as_tuple())
        typed = [self.check(arg) for arg in args]
        result = self.call_type(expr, [t for t, _ in typed])
        nodes = tuple(node for _, node in typed)
        choices.check_call(self.reporter, self.scope, expr, nodes)
        if (
            name in ("matches", "extract")
            and isinstance(args[1], ast.Literal)
            and isinstance(args[1].value, str)
        ):
            problem = pattern_problem(args[1].value)
            if problem is not None:
                self.error("E029", problem, args[1].span)
        return result, ir.Call(name, nodes, ir_type(result), expr.span.as_tuple())

    def expect(self, expr: ast.Call, index: int, actual: str, *wanted: str) -> None:
        if (
            actual != ERROR
            and actual not in wanted
            and not (ANY in (element_of(actual) or "") and any(element_of(w) for w in wanted))
        ):
            names = " or ".join(describe(w) for w in wanted)
            self.error(
                "E023",
                f"argument {index + 1} of `{expr.function}` must be a {names}, "
                f"not {describe(actual)}",
                expr.arguments[index].span,
            )

    def call_type(self, expr: ast.Call, types: list[str]) -> str:
        """The result type of a library call, after a diagnostic per ill-typed argument. The
        functions of one signature are `vocabulary.SIGNATURES`; the older ones are checked case
        by case, as `runtime.verify` does."""
        name, expect = expr.function, self.expect
        if name in SIGNATURES:
            wanted, result = SIGNATURES[name]
            for index, (want, actual) in enumerate(zip(wanted, types, strict=False)):
                if actual != ERROR and not accepts(want, actual):
                    what = (
                        "number, text, boolean, date or list"
                        if want == "value"
                        else " or ".join(describe(one) for one in want.split("|"))
                    )
                    argument = expr.arguments[index]
                    notes = (
                        (f'write `date("{argument.value}")` for a date',)
                        if want == DATE
                        and isinstance(argument, ast.Literal)
                        and isinstance(argument.value, str)
                        and is_iso_date(argument.value)
                        else ()
                    )
                    self.error(
                        "E023",
                        f"argument {index + 1} of `{name}` must be a {what}, "
                        f"not {describe(actual)}",
                        argument.span,
                        notes=notes,
                    )
            return result
        if name in ("lower", "upper", "trim"):
            expect(expr, 0, types[0], TEXT)
            return TEXT
        if name == "length":
            if element_of(types[0]) is None:
                expect(expr, 0, types[0], TEXT)
            return NUMBER
        if name == "contains":
            element = element_of(types[0])
            if element is not None:
                if not compatible(element, types[1]):
                    expect(expr, 1, types[1], element)
            else:
                expect(expr, 0, types[0], TEXT)
                expect(expr, 1, types[1], TEXT)
            return BOOLEAN
        if name in ("starts_with", "ends_with", "matches"):
            expect(expr, 0, types[0], TEXT)
            expect(expr, 1, types[1], TEXT)
            return BOOLEAN
        if name in ("round", "abs"):
            for index, type_ in enumerate(types):
                expect(expr, index, type_, NUMBER)
            return NUMBER
        if name in ("min", "max"):
            if len(types) == 1:
                expect(expr, 0, types[0], list_of(NUMBER))
            else:
                for index, type_ in enumerate(types):
                    expect(expr, index, type_, NUMBER)
            return NUMBER
        if name == "defined":
            return BOOLEAN
        if name == "date":
            if len(types) == 3:  # year, month, day
                for index, type_ in enumerate(types):
                    expect(expr, index, type_, NUMBER)
            else:
                expect(expr, 0, types[0], TEXT)
            return DATE
        if name == "today":
            return DATE
        if name == "add_days":
            expect(expr, 0, types[0], DATE)
            expect(expr, 1, types[1], NUMBER)
            return DATE
        # days_between, years_between
        expect(expr, 0, types[0], DATE)
        expect(expr, 1, types[1], DATE)
        return NUMBER

    # -- quantifiers -------------------------------------------------------------------------

    def quantifier(self, expr: ast.Quantifier) -> Checked:
        kind = expr.kind
        if self.loops >= MAX_QUANTIFIER_DEPTH:
            return self.error(
                "E004",
                f"more than {MAX_QUANTIFIER_DEPTH} count/any/all/sum nested in each other",
                expr.span,
            )
        collection_type, over = self.check(expr.collection)
        element = element_of(collection_type)
        if collection_type != ERROR and element is None:
            self.error(
                "E023",
                f"`{kind}` needs a list, not {describe(collection_type)}",
                expr.collection.span,
            )
        element = element or ERROR
        if expr.variable is not None and NAME.fullmatch(expr.variable) is None:
            return self.error(
                "E038",
                f"`{expr.variable}` cannot name an item: a name starts with a letter, then "
                "letters, digits or `_`, at most 64 characters",
                expr.span,
            )
        if expr.variable is None and kind in ("any", "all", "filter"):
            self.error("E022", f"`{kind}` needs `x in LIST where CONDITION`", expr.span)
        if expr.variable is None and kind == "map":
            self.error("E022", "`map` needs `x in LIST of VALUE`", expr.span)
        saved = self.scope.locals.get(expr.variable) if expr.variable else None
        if expr.variable is not None:
            self.scope.locals[expr.variable] = element
        self.loops += 1
        body: ir.Expression | None = None
        try:
            if kind == "sum":
                if expr.value is None:
                    if element not in (NUMBER, ERROR):
                        self.error(
                            "E022",
                            "`sum(LIST)` adds a list of numbers; write `sum(x in LIST of VALUE)`",
                            expr.span,
                        )
                else:
                    value_type, body = self.check(expr.value)
                    if value_type not in (NUMBER, ERROR):
                        self.error(
                            "E023",
                            f"`sum` adds numbers, not {describe(value_type)}",
                            expr.value.span,
                        )
            elif kind == "map":
                value_type = ERROR
                if expr.value is not None:
                    value_type, body = self.check(expr.value)
                    if value_type not in (NUMBER, TEXT, ERROR):
                        self.error(
                            "E023",
                            f"`map` makes a list of numbers or texts, not of "
                            f"{describe(value_type)}",
                            expr.value.span,
                            notes=("`text(x)` writes any value as text",),
                        )
                        value_type = ERROR
            elif expr.condition is not None:
                body = self.condition(expr.condition, f"the condition of `{kind}`")
        finally:
            self.loops -= 1
            if expr.variable is not None:
                if saved is None:
                    del self.scope.locals[expr.variable]
                else:
                    self.scope.locals[expr.variable] = saved
        if kind == "filter":  # a list of the items' type
            result = collection_type if element_of(collection_type) else ERROR
        elif kind == "map":  # a list of the values' type
            result = list_of(value_type) if value_type != ERROR else ERROR
        else:
            result = BOOLEAN if kind in ("any", "all") else NUMBER
        node = ir.QUANTIFIERS[kind](
            expr.variable, over, body, ir_type(result), expr.span.as_tuple()
        )
        return result, node

    # -- lets --------------------------------------------------------------------------------

    def let(self, expr: ast.Name) -> Checked:
        """The IR of a use of a let: a copy of its IR marked with its name."""
        scope, name = self.scope, expr.name
        info = scope.lets.get(name)
        if info is None:
            if name in scope.lets_in_progress:
                return self.error("E041", f"`let {name}` depends on itself", expr.span)
            info = self.check_let(scope.let_sources[name])
            if info is None:
                return ERROR, _nothing(expr.span)
        if info.type == ERROR:
            return ERROR, _nothing(expr.span)
        if self.depth - 1 + info.depth > MAX_EXPRESSION_DEPTH:
            return self.error(
                "E004",
                f"`{name}` here nests its expression deeper than {MAX_EXPRESSION_DEPTH}",
                expr.span,
            )
        if self.loops + info.loops > MAX_QUANTIFIER_DEPTH:
            return self.error(
                "E004",
                f"`{name}` here nests more than {MAX_QUANTIFIER_DEPTH} count/any/all/sum",
                expr.span,
            )
        return info.type, info.node.used_as(name)

    def check_let(self, decl: ast.LetDecl) -> LetInfo | None:
        """Check a let on its own (no event subject, no bound item); None when it has errors
        (its uses then report nothing more)."""
        scope = self.scope
        saved = (self.depth, self.loops, dict(scope.locals))
        saved_event = (scope.event, scope.value_type, scope.value_input)
        self.depth, self.loops = 0, 0
        scope.locals.clear()
        scope.event, scope.value_type, scope.value_input = None, None, None
        scope.lets_in_progress.add(decl.name)
        try:
            type_, node = self.check(decl.value)
        finally:
            scope.lets_in_progress.discard(decl.name)
            self.depth, self.loops = saved[0], saved[1]
            scope.locals.clear()
            scope.locals.update(saved[2])
            scope.event, scope.value_type, scope.value_input = saved_event
        depth, loops, size = measure(node, scope.lets)
        if type_ != ERROR and size > MAX_NODES:
            self.error(
                "E037", f"`let {decl.name}` expands to more than {MAX_NODES} nodes", decl.span
            )
            type_ = ERROR
        if type_ == ERROR:  # reported once: its uses are quiet
            scope.lets[decl.name] = LetInfo(ERROR, _nothing(decl.span), 1, 0, 1)
            return None
        info = LetInfo(type_, node, depth, loops, size)
        scope.lets[decl.name] = info
        return info


def comparable(type_: str) -> bool:
    """Whether `=`/`!=` take a value of this type (`vocabulary.EQUALITY_TYPES`; a type that
    already has a diagnostic, or the element type of `[]`, fits)."""
    return type_ in EQUALITY_TYPES or type_ == ERROR or element_of(type_) in (ANY, ERROR)


def measure(node: ir.Node | None, lets: dict[str, LetInfo]) -> tuple[int, int, int]:
    """(depth, quantifier nesting, nodes) of IR, as `ir.measure`, with a let's copy counted
    as the let was measured (so a let used many times is not walked again at each use)."""
    if node is None:
        return 0, 0, 0
    if isinstance(node, ir.Expression) and node.let is not None and node.let in lets:
        info = lets[node.let]
        return info.depth, info.loops, info.size
    depth = loops = 0
    size = 1
    for child in ir.child_nodes(node):
        d, q, n = measure(child, lets)
        depth, loops, size = max(depth, d), max(loops, q), size + n
    if isinstance(node, ir.Expression):
        depth += 1
        if isinstance(node, ir.Quantifier):
            loops += 1
    return depth, loops, size


def _both(left: str, right: str) -> str:
    """Two operand types in a message (written only when there is one)."""
    return f"{describe(left)} and {describe(right)}"


def _branch_hint(a: str, b: str) -> tuple[str, ...]:
    """A note for the mixes authors write most: a number and a boolean (a score), a number and
    a text (a label)."""
    if {a, b} == {NUMBER, BOOLEAN}:
        return ("`number(b)` turns a boolean into 1 or 0",)
    if {a, b} == {NUMBER, TEXT}:
        return ("`text(n)` writes a number as text",)
    return ()


def _nothing(span: ast.Span) -> ir.Expression:
    return ir.Literal(None, TEXT, span.as_tuple())


def _balanced(op: str, nodes: list[ir.Expression], operands: list[ast.Expr]) -> ir.Expression:
    """`nodes` joined by `op` as a balanced tree (left half, right half), left to right."""
    if len(nodes) == 1:
        return nodes[0]
    middle = len(nodes) // 2
    first, last = operands[0].span, operands[-1].span
    span = (first.line, first.column, last.end_line, last.end_column)
    return ir.Binary(
        op,
        _balanced(op, nodes[:middle], operands[:middle]),
        _balanced(op, nodes[middle:], operands[middle:]),
        BOOLEAN,
        span,
    )


#: Expression node type -> the ExpressionChecker method that checks it (one dict lookup per node).
_DISPATCH: dict[type, Callable[[ExpressionChecker, Any], Checked]] = {
    ast.Literal: ExpressionChecker.literal,
    ast.ListExpr: ExpressionChecker.list_literal,
    ast.Name: ExpressionChecker.name,
    ast.Attribute: ExpressionChecker.attribute,
    ast.Call: ExpressionChecker.call,
    ast.Quantifier: ExpressionChecker.quantifier,
    ast.Unary: ExpressionChecker.unary,
    ast.Binary: ExpressionChecker.binary,
    ast.Conditional: ExpressionChecker.conditional,
}


def constant_boolean(expr: ast.Expr, depth: int = 0) -> bool | None:
    """The value of a condition that does not depend on the inspection, when it has one
    (None past MAX_EXPRESSION_DEPTH: such expressions are refused anyway)."""
    if depth > MAX_EXPRESSION_DEPTH:
        return None
    if isinstance(expr, ast.Literal) and isinstance(expr.value, bool):
        return expr.value
    if isinstance(expr, ast.Unary) and expr.operator == "not":
        inner = constant_boolean(expr.operand, depth + 1)
        return None if inner is None else not inner
    if isinstance(expr, ast.Binary) and expr.operator in CHAIN_OPERATORS:
        left = constant_boolean(expr.left, depth + 1)
        right = constant_boolean(expr.right, depth + 1)
        if expr.operator == "and":
            if left is False or right is False:
                return False
            return True if left is True and right is True else None
        if left is True or right is True:
            return True
        return False if left is False and right is False else None
    return None


def constant_number(expr: ast.Expr) -> float | None:
    """The value of a number written with literals only (`0`, `-0`, `(1 - 1)`, `2 * 0.5`),
    or None when it depends on anything else."""
    if isinstance(expr, ast.Literal):
        value = expr.value
        return (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )
    if isinstance(expr, ast.Unary) and expr.operator == "-":
        inner = constant_number(expr.operand)
        return None if inner is None else -inner
    if isinstance(expr, ast.Binary) and expr.operator in ("+", "-", "*"):
        left, right = constant_number(expr.left), constant_number(expr.right)
        if left is None or right is None:
            return None
        if expr.operator == "+":
            return left + right
        return left - right if expr.operator == "-" else left * right
    return None
