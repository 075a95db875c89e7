"""inspectlang: the template language for inspections.

Data flows one way: source text -> AST (`inspectlang.ast`) -> checked AST (`inspectlang.checker`)
-> Template manifest with its compiled logic (`inspectlang.compiler`, `inspectlang.manifest`).
This package knows nothing of HTTP, databases or evaluation; `runtime` runs what it produces.
"""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
