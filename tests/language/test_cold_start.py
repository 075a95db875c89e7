"""What a fresh process pays to import the compiler and compile its first template (the cold
start of `benchmarks/bench_compile.py`), checked as the modules and work it does, never as a
time: modules the compile path does not need stay unimported, pydantic builds no schema, and
the dataclasses made at import have docstrings."""

from __future__ import annotations

import dataclasses
import importlib
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = ROOT / "inspectlang" / "builtins" / "car_easy.insp"

PROBE = """
import json, sys
from inspectlang.compiler import compile_source
after_import = sorted(sys.modules)
compile_source(open(sys.argv[1], encoding="utf-8").read(), "car_easy.insp")
from inspectlang import manifest
models = [
    name for name, value in vars(manifest).items()
    if isinstance(value, type) and getattr(value, "__pydantic_complete__", False)
]
print(json.dumps({"import": after_import, "compile": sorted(sys.modules), "built": models}))
"""

#: Only needed for mistakes ("did you mean"), creation bodies, other commands or other packages.
NOT_ON_THE_COMPILE_PATH = (
    "difflib",
    "jsonschema",
    "re2",
    "inspectlang.builtins",
    "inspectlang.commands",
    "inspectlang.decompiler",
    "inspectlang.formatter",
    "runtime",
    "server",
    "hypothesis",
)


def _probe() -> dict[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(TEMPLATE)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    result: dict[str, list[str]] = json.loads(done.stdout)
    return result


def _loaded(modules: list[str], name: str) -> bool:
    return any(module == name or module.startswith(name + ".") for module in modules)


def test_compile_path_imports_only_what_it_needs() -> None:
    result = _probe()
    for name in NOT_ON_THE_COMPILE_PATH:
        assert not _loaded(result["compile"], name), name
    # The parser (and Lark) is imported by the first parse, not by importing the compiler.
    assert not _loaded(result["import"], "lark")
    assert _loaded(result["compile"], "lark")
    # The manifest models are made with model_construct: pydantic builds no schema for them.
    assert result["built"] == []


def test_dataclasses_on_the_compile_path_have_docstrings() -> None:
    """`dataclass` gives a class without a docstring one from `inspect.signature`, whose first
    call compiles the tokenizer's regular expressions: part of a millisecond of the cold start."""
    modules = [name for name in _probe()["compile"] if name.startswith("inspectlang.")]
    for name in modules:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and value.__module__ == name
                and dataclasses.is_dataclass(value)
            ):
                doc = value.__doc__ or ""
                assert doc and not doc.startswith(value.__name__ + "("), value
