"""No import circle between the runtime's modules, counting the imports made only for the type
checker too (import-linter leaves those out: `exclude_type_checking_imports`). A circle hidden
behind `if TYPE_CHECKING:` is still two modules that must be read together (issue 38:
`runtime/statements.py` and the walkers)."""

from __future__ import annotations

import ast
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[2] / "runtime"


def _module(path: Path) -> str:
    parts = path.relative_to(RUNTIME.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, known: set[str]) -> set[str]:
    """The runtime modules `path` imports anywhere in its text (functions and type-only blocks
    included), as dotted names."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found |= {name for name in names if name in known}
    return found


def test_no_module_of_the_runtime_imports_itself_back() -> None:
    paths = {_module(path): path for path in RUNTIME.rglob("*.py")}
    graph = {name: _imports(path, set(paths)) - {name} for name, path in paths.items()}
    circles: list[list[str]] = []

    def walk(name: str, path: list[str]) -> None:
        for target in sorted(graph[name]):
            if target in path:
                circles.append([*path[path.index(target) :], target])
            elif len(path) < 12:
                walk(target, [*path, target])

    for start in sorted(graph):
        if start.count(".") == 1:  # the package's own modules, not its subpackages' parents
            walk(start, [start])
    direct = [c for c in circles if all(m.count(".") == 1 for m in c)]
    assert not direct, "import circles: " + "; ".join(" -> ".join(c) for c in direct[:5])
