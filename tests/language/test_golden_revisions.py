"""Golden manifests: every example, every built-in template and the compile benchmark's large
template compile to exactly the bytes and `logic.revision` recorded in
`golden_revisions.json`. Speed work on the compiler (issue 26) must not change a single byte of
any manifest or any revision: an inspection keeps the revision it was created with, and the
runtime caches programs by it.

A deliberate change of the manifest's content rewrites the file:
`python -m tests.language.test_golden_revisions` (then review the diff).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from inspectlang.compiler import compile_source
from inspectlang.includes import DirectoryResolver
from inspectlang.manifest import Template, revision_of

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("golden_revisions.json")
NOW = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)


def _bench_source() -> str:
    """The benchmark's generated 2,000-line template (`benchmarks/bench_compile.py`)."""
    spec = importlib.util.spec_from_file_location(
        "bench_compile", ROOT / "benchmarks" / "bench_compile.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return str(bench.generate())


def _sources() -> dict[str, tuple[str, Path | None]]:
    """Name -> (source, the folder its includes resolve in)."""
    files = [
        *sorted((ROOT / "examples").glob("*.insp")),
        ROOT / "examples" / "fleet" / "fleet_check.insp",
        *sorted((ROOT / "inspectlang" / "builtins").glob("*.insp")),
    ]
    sources: dict[str, tuple[str, Path | None]] = {
        str(path.relative_to(ROOT)): (path.read_text(encoding="utf-8"), path.parent)
        for path in files
    }
    sources["benchmarks/bench_compile.py:generate()"] = (_bench_source(), None)
    return sources


def _compile(name: str, source: str, folder: Path | None) -> Template:
    includes = DirectoryResolver(folder) if folder is not None else None
    return compile_source(source, name, now=NOW, includes=includes)


def _fingerprint(template: Template) -> dict[str, str]:
    """The revision, and the sha256 of the manifest's API JSON (timestamps fixed by NOW)."""
    text = json.dumps(template.to_api(), ensure_ascii=False, separators=(",", ":"))
    return {
        "revision": template.logic.revision,
        "manifest_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
    }


def _golden() -> dict[str, dict[str, str]]:
    data: dict[str, dict[str, str]] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return data


SOURCES = _sources()


def test_the_golden_file_covers_every_template() -> None:
    assert sorted(_golden()) == sorted(SOURCES)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_the_manifest_and_its_revision_are_byte_identical(name: str) -> None:
    source, folder = SOURCES[name]
    template = _compile(name, source, folder)
    assert _fingerprint(template) == _golden()[name]
    # The revision is also what a manifest loaded back from its JSON hashes to.
    assert revision_of(Template.from_api(template.to_api())) == template.logic.revision


if __name__ == "__main__":
    golden = {name: _fingerprint(_compile(name, *SOURCES[name])) for name in sorted(SOURCES)}
    GOLDEN.write_text(json.dumps(golden, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {len(golden)} fingerprints to {GOLDEN}")
