"""`ask when` conditions as JSON Schema `if`/`then`, so a client can validate a creation body.

A required input with an `ask when` is not `required` in its own property (draft 3 cannot make
it conditional); instead the template's schema gets, at its root, `allOf: [{"if": CONDITION,
"then": {"properties": {"inputs": {"required": [IDENTIFIER]}}, ...}}]` in the draft 7 form,
which draft 3 validators ignore and draft 7 validators apply. Only conditions with an exact JSON
Schema form are translated: comparisons of an input, product or consumer field with a literal
(`=`, `!=`, `<`, `<=`, `>`, `>=`, `in` a list), `defined(...)`, `contains(multiselect, key)`,
`and`, `or`, and `not` of the comparisons that are never missing. Others are left to the server
(which always evaluates the condition itself): the input is then simply optional in the schema.
A select's key is matched in every spelling a client may send (key, label, translated labels).
"""

from __future__ import annotations

from typing import Any

from inspectlang import ir
from inspectlang.manifest import InputLogic, InputSpec

Schema = dict[str, Any]

_BOUNDS = {"<": "exclusiveMaximum", "<=": "maximum", ">": "exclusiveMinimum", ">=": "minimum"}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}


def _path(node: ir.Expression, inspection_type: str) -> tuple[str, str] | None:
    """Where in the creation body the value a node reads is, when it is a body field."""
    if isinstance(node, ir.InputValue):
        return "inputs", node.name
    if isinstance(node, ir.ProductField):
        return inspection_type, node.name
    if isinstance(node, ir.ConsumerField):
        return "consumer", node.name
    return None


class _Translator:
    """A condition -> its JSON Schema, or None when it has no exact one: a partial translation,
    dispatched like `ir.NodeVisitor`, where a kind of node without a `visit_` method here (a
    variable, a quantifier...) has no schema form rather than being an error."""

    def __init__(
        self, inspection_type: str, specs: dict[str, InputSpec], logic: dict[str, InputLogic]
    ) -> None:
        self.inspection_type = inspection_type
        self.specs = specs
        self.logic = logic

    def translate(self, node: ir.Expression) -> Schema | None:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        result: Schema | None = None if method is None else method(node)
        return result

    def path(self, node: ir.Expression) -> tuple[str, str] | None:
        return _path(node, self.inspection_type)

    def spellings(self, path: tuple[str, str], value: Any) -> list[Any]:
        """Every value a client may send for `value` of this field (a select's key: its label
        and translated labels too)."""
        spec = self.specs.get(path[1]) if path[0] == "inputs" else None
        if spec is None or not spec.options or not isinstance(value, str):
            return [value]
        keys = [o.key for o in spec.options]
        if value not in keys:
            return [value]
        index = keys.index(value)
        found = [value, spec.options[index].label]
        logic = self.logic.get(spec.identifier)
        for translation in logic.translations.values() if logic else ():
            if translation.options and len(translation.options) > index:
                found.append(translation.options[index])
        return list(dict.fromkeys(found))

    @staticmethod
    def at(path: tuple[str, str], value: Schema | None) -> Schema:
        root, leaf = path
        inner: Schema = {"required": [leaf]}
        if value is not None:
            inner["properties"] = {leaf: value}
        return {"required": [root], "properties": {root: inner}}

    def visit_Literal(self, node: ir.Literal) -> Schema | None:
        return {} if node.value is True else None

    def visit_Unary(self, node: ir.Unary) -> Schema | None:
        if node.operator != "not" or not _total(node.operand):
            return None
        inner = self.translate(node.operand)
        return None if inner is None else {"not": inner}

    def visit_Call(self, node: ir.Call) -> Schema | None:
        if node.function == "defined":
            path = self.path(node.arguments[0])
            return None if path is None else self.at(path, None)
        if node.function == "contains":
            path, literal = self.path(node.arguments[0]), node.arguments[1]
            if path is None or not isinstance(literal, ir.Literal):
                return None
            return self.at(path, {"contains": {"enum": self.spellings(path, literal.value)}})
        return None

    def visit_Binary(self, node: ir.Binary) -> Schema | None:
        operator = node.operator
        if operator in ("and", "or"):
            left, right = self.translate(node.left), self.translate(node.right)
            if left is None or right is None:
                return None
            return {"allOf" if operator == "and" else "anyOf": [left, right]}
        left_node, right_node = node.left, node.right
        if operator == "in":
            path = self.path(left_node)
            if path is not None and isinstance(right_node, ir.ListLiteral):
                if not all(isinstance(item, ir.Literal) for item in right_node.items):
                    return None
                enum = [
                    v
                    for item in right_node.items
                    if isinstance(item, ir.Literal)
                    for v in self.spellings(path, item.value)
                ]
                return self.at(path, {"enum": enum})
            path = self.path(right_node)
            if path is not None and isinstance(left_node, ir.Literal):
                return self.at(path, {"contains": {"enum": self.spellings(path, left_node.value)}})
            return None
        if self.path(left_node) is None:
            left_node, right_node = right_node, left_node
            operator = _MIRROR.get(operator, operator)
        path = self.path(left_node)
        if path is None or not isinstance(right_node, ir.Literal) or right_node.type == "date":
            return None
        value = right_node.value
        if operator == "=":
            return self.at(path, {"enum": self.spellings(path, value)})
        if operator == "!=":
            return {"not": self.at(path, {"enum": self.spellings(path, value)})}
        if operator in _BOUNDS and right_node.type == "number":
            return self.at(path, {_BOUNDS[operator]: value})
        return None


def _total(node: ir.Expression) -> bool:
    """Never missing, so `not` of it is the complement of its schema."""
    if isinstance(node, ir.Binary) and node.operator in ("=", "!="):
        return True
    if isinstance(node, ir.Binary) and node.operator in ("and", "or"):
        return _total(node.left) and _total(node.right)
    if isinstance(node, ir.Unary):
        return _total(node.operand)
    return isinstance(node, ir.Call) and node.function == "defined"


def ask_when_schemas(
    inspection_type: str, specs: list[InputSpec], logic: dict[str, InputLogic]
) -> tuple[set[str], list[Schema]]:
    """(identifiers whose `required` becomes conditional, the root `allOf` entries)."""
    translator = _Translator(inspection_type, {s.identifier: s for s in specs}, logic)
    conditional: set[str] = set()
    entries: list[Schema] = []
    for spec in specs:
        input_logic = logic.get(spec.identifier)
        if input_logic is None or input_logic.askWhen is None:
            continue
        if not (spec.validationSchema.required and "create" in spec.stages):
            continue
        conditional.add(spec.identifier)
        condition = translator.translate(ir.from_json(input_logic.askWhen, "askWhen"))
        if condition is not None:
            then = {
                "required": ["inputs"],
                "properties": {"inputs": {"required": [spec.identifier]}},
            }
            entries.append({"if": condition, "then": then})
    return conditional, entries
