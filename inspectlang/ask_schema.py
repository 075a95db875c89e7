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

from inspectlang.manifest import InputLogic, InputSpec, IRNode

Schema = dict[str, Any]

_BOUNDS = {"<": "exclusiveMaximum", "<=": "maximum", ">": "exclusiveMinimum", ">=": "minimum"}
_MIRROR = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}


class _Translator:
    def __init__(
        self, inspection_type: str, specs: dict[str, InputSpec], logic: dict[str, InputLogic]
    ) -> None:
        self.inspection_type = inspection_type
        self.specs = specs
        self.logic = logic

    def path(self, node: IRNode) -> tuple[str, str] | None:
        op = node.get("op")
        if op == "input":
            return "inputs", node["id"]
        if op == "product":
            return self.inspection_type, node["field"]
        if op == "consumer":
            return "consumer", node["field"]
        return None

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

    def translate(self, node: IRNode) -> Schema | None:
        op = node.get("op")
        if op == "literal" and node.get("value") is True:
            return {}
        if op == "binary":
            return self.binary(node)
        if op == "unary" and node.get("operator") == "not":
            operand = node["operand"]
            inner = self.translate(operand) if self.total(operand) else None
            return None if inner is None else {"not": inner}
        if op == "call" and node.get("fn") == "defined":
            path = self.path(node["args"][0])
            return None if path is None else self.at(path, None)
        if op == "call" and node.get("fn") == "contains":
            path, literal = self.path(node["args"][0]), node["args"][1]
            if path is None or literal.get("op") != "literal":
                return None
            enum = self.spellings(path, literal["value"])
            return self.at(path, {"contains": {"enum": enum}})
        return None

    def binary(self, node: IRNode) -> Schema | None:
        operator = node["operator"]
        if operator in ("and", "or"):
            left, right = self.translate(node["left"]), self.translate(node["right"])
            if left is None or right is None:
                return None
            return {"allOf" if operator == "and" else "anyOf": [left, right]}
        left, right = node["left"], node["right"]
        if operator == "in":
            path = self.path(left)
            if path is not None and right.get("op") == "list":
                if not all(item.get("op") == "literal" for item in right["items"]):
                    return None
                enum = [v for item in right["items"] for v in self.spellings(path, item["value"])]
                return self.at(path, {"enum": enum})
            path = self.path(right)
            if path is not None and left.get("op") == "literal":
                return self.at(path, {"contains": {"enum": self.spellings(path, left["value"])}})
            return None
        if self.path(left) is None:
            left, right, operator = right, left, _MIRROR.get(operator, operator)
        path = self.path(left)
        if path is None or right.get("op") != "literal" or right.get("type") == "date":
            return None
        value = right["value"]
        if operator == "=":
            return self.at(path, {"enum": self.spellings(path, value)})
        if operator == "!=":
            return {"not": self.at(path, {"enum": self.spellings(path, value)})}
        if operator in _BOUNDS and right.get("type") == "number":
            return self.at(path, {_BOUNDS[operator]: value})
        return None

    def total(self, node: IRNode) -> bool:
        """Never missing, so `not` of it is the complement of its schema."""
        op = node.get("op")
        if op == "binary" and node["operator"] in ("=", "!="):
            return True
        if op == "binary" and node["operator"] in ("and", "or"):
            return self.total(node["left"]) and self.total(node["right"])
        if op == "unary":
            return self.total(node["operand"])
        return op == "call" and node.get("fn") == "defined"


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
        condition = translator.translate(input_logic.askWhen)
        if condition is not None:
            then = {
                "required": ["inputs"],
                "properties": {"inputs": {"required": [spec.identifier]}},
            }
            entries.append({"if": condition, "then": then})
    return conditional, entries
