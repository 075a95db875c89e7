"""What the checker's stages share while checking one module: `Run`.

Each stage is a function of a `Run`: it reads the declarations of its kind, reports through the
one `Reporter`, resolves and declares names in the one `Scope`, checks expressions with the one
`ExpressionChecker`, and fills its part of the `CheckedTemplate` being built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from inspectlang import ast
from inspectlang.checker.checked import CheckedTemplate
from inspectlang.checker.expressions import ExpressionChecker
from inspectlang.checker.properties import PropertyReader
from inspectlang.checker.scope import Scope
from inspectlang.diagnostics import Reporter
from inspectlang.manifest import PRODUCT_FIELDS

Declaration = TypeVar("Declaration")


@dataclass(slots=True)
class Run:
    """One module being checked."""

    module: ast.Module
    reporter: Reporter
    properties: PropertyReader
    scope: Scope
    expressions: ExpressionChecker
    #: The product, filled stage by stage.
    template: CheckedTemplate
    #: The module's declarations by kind, in file order.
    declarations: dict[type, list[Any]]

    @classmethod
    def start(cls, module: ast.Module, template_kind: str) -> Run:
        reporter = Reporter(module.filename)
        scope = Scope(inspection_type="car", product_fields=PRODUCT_FIELDS["car"])
        declarations: dict[type, list[Any]] = {}
        for declaration in module.declarations:
            declarations.setdefault(type(declaration), []).append(declaration)
        properties = PropertyReader(reporter)
        return cls(
            module=module,
            reporter=reporter,
            properties=properties,
            scope=scope,
            expressions=ExpressionChecker(scope, reporter),
            template=CheckedTemplate(
                template_kind=template_kind,
                filename=module.filename,
                locales=properties.locales,
            ),
            declarations=declarations,
        )

    def declared(self, kind: type[Declaration]) -> list[Declaration]:
        """The module's declarations of one kind, in file order."""
        return self.declarations.get(kind, [])

    def last_span(self, declarations: list[Any]) -> ast.Span:
        """Where a limit on a kind of declaration is reported: its last one."""
        return declarations[-1].span if declarations else ast.NO_SPAN
