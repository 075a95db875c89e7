"""inspectlang: the template language for inspections.

Data flows one way: source text -> AST (`inspectlang.ast`) -> checked AST (`inspectlang.checker`)
-> Template manifest with its compiled logic (`inspectlang.compiler`, `inspectlang.manifest`).
This package knows nothing of HTTP, databases or evaluation; `runtime` runs what it produces.

The public names below are imported on first use, so `import inspectlang` stays cheap (no Lark,
no pydantic) until something is compiled.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inspectlang.compiler import check_source, compile_expression, compile_source
    from inspectlang.decompiler import decompile
    from inspectlang.diagnostics import Diagnostic, TemplateError
    from inspectlang.errors import InspectlangError
    from inspectlang.formatter import format_source
    from inspectlang.manifest import Template
    from inspectlang.parser import parse

__all__ = [
    "Diagnostic",
    "InspectlangError",
    "Template",
    "TemplateError",
    "__version__",
    "check_source",
    "compile_expression",
    "compile_source",
    "decompile",
    "format_source",
    "parse",
]

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_LAZY: dict[str, str] = {
    "compile_source": "inspectlang.compiler",
    "check_source": "inspectlang.compiler",
    "compile_expression": "inspectlang.compiler",
    "parse": "inspectlang.parser",
    "format_source": "inspectlang.formatter",
    "decompile": "inspectlang.decompiler",
    "Template": "inspectlang.manifest",
    "Diagnostic": "inspectlang.diagnostics",
    "TemplateError": "inspectlang.diagnostics",
    "InspectlangError": "inspectlang.errors",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'inspectlang' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
