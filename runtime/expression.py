"""Evaluate one IR expression on either path: for conformance vectors, tests and the CLI.

An expression is verified against a small declared context (variables, inputs, images, bound
names) the same way a template's logic is, then evaluated over inspection data with
`evaluate(..., path="compiled" | "reference")`. Both return `(value, errors)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspectlang import ir
from inspectlang.manifest import ImageSpec, InputSpec, Template, VariableSpec
from runtime.codegen import compile_functions, generate_expression
from runtime.errors import StepLimitExceeded
from runtime.evaldata import empty_env
from runtime.reference import ReferenceEvaluator
from runtime.verify import Scope, Verifier

#: A number or text initial value per variable type, for the synthetic template.
_INITIAL = {"numeric": 0, "text": ""}


@dataclass(frozen=True)
class Context:
    """What names an expression may use."""

    variables: Mapping[str, str]
    inputs: Mapping[str, str]
    images: tuple[str, ...]
    locals: Mapping[str, str]
    inspection_type: str = "car"


def context_template(context: Context) -> Template:
    """A template declaring exactly the context's names (so the verifier knows them)."""
    return Template.model_validate(
        {
            "_id": "000000000000000000000000",
            "inspectionType": context.inspection_type,
            "name": "expression",
            "createdAt": "2024-01-01T00:00:00Z",
            "updatedAt": "2024-01-01T00:00:00Z",
            "schema": {"type": "object"},
            "variables": [
                VariableSpec(name=name, type=kind, initialValue=_INITIAL[kind])
                for name, kind in context.variables.items()
            ],
            "inputs": [
                InputSpec(identifier=ident, label=ident, type=kind)
                for ident, kind in context.inputs.items()
            ],
            "images": [ImageSpec(side=ident, identifier=ident) for ident in context.images],
        }
    )


@dataclass(frozen=True)
class CompiledExpression:
    node: ir.Expression
    function: Any
    free_locals: tuple[str, ...]

    def run(
        self, data: Mapping[str, Any], *, path: str = "compiled", trace: list[Any] | None = None
    ) -> tuple[Any, list[dict[str, Any]]]:
        """(value, rule errors) of the expression over `data` (keys of `empty_env`)."""
        env = empty_env()
        for key, value in data.items():
            env[key] = _copy(value)
        if "image_list" not in data:
            env["image_list"] = list(env["images"].values())
        env.setdefault("locals", {})
        try:
            if path == "compiled":
                value = self.function(env)
            else:
                evaluator = ReferenceEvaluator(trace)
                evaluator.locals = dict(env["locals"])
                value = evaluator.expression(self.node, env)
        except StepLimitExceeded:
            env["errors"].append({"code": "step_limit", "span": list(self.node.span)})
            value = None
        return value, env["errors"]


def compile_ir(
    node: dict[str, Any],
    *,
    variables: Mapping[str, str] | None = None,
    inputs: Mapping[str, str] | None = None,
    images: tuple[str, ...] = (),
    locals: Mapping[str, str] | None = None,
    inspection_type: str = "car",
) -> CompiledExpression:
    """Verify one IR expression in a context and compile it (raises InvalidProgram)."""
    context = Context(
        variables=dict(variables or {}),
        inputs=dict(inputs or {}),
        images=images,
        locals=dict(locals or {}),
        inspection_type=inspection_type,
    )
    verifier = Verifier(context_template(context))
    scope = Scope(**{**verifier.base.__dict__, "locals": dict(context.locals)})
    normalized = verifier.expression(node, scope, "expression")
    free = tuple(context.locals)
    source = generate_expression("expression", normalized, free)
    function = compile_functions(source, "<expression>")["expression"]
    return CompiledExpression(node=normalized, function=function, free_locals=free)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
