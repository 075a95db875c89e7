"""Golden manifests: fixed template sources compile to exactly the bytes and `logic.revision`
recorded beside them in `golden_revisions.json`. Speed work on the compiler (issue 26) must not
change a single byte of any manifest or any revision: an inspection keeps the revision it was
created with, and the runtime caches programs by it.

The sources are frozen in the file (with the files their `include` lines name), as a stored
template's source is: they were every example, every built-in template and the compile
benchmark's large template when recorded. Editing an example or a built-in changes its input,
not the compiler, so it leaves this file alone (the live examples are compiled by
test_examples.py, the built-ins by test_builtins.py).

A deliberate change of what a source compiles to, or a new template for the corpus, rewrites the
file from the live templates: `python -m tests.language.test_golden_revisions` (then review the
diff: a fingerprint that changed for an unchanged source is the compiler's doing).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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


def _live_sources() -> dict[str, tuple[str, dict[str, str]]]:
    """Name -> (source, the files its includes name): the templates the corpus is recorded from."""
    files = [
        *sorted((ROOT / "examples").glob("*.insp")),
        ROOT / "examples" / "fleet" / "fleet_check.insp",
        *sorted((ROOT / "inspectlang" / "builtins").glob("*.insp")),
    ]
    sources: dict[str, tuple[str, dict[str, str]]] = {}
    for path in files:
        source = path.read_text(encoding="utf-8")
        named = DirectoryResolver(path.parent)
        includes: dict[str, str] = {}
        for name in re.findall(r'^include "([^"]+)"', source, re.MULTILINE):
            included = named.source(name)
            assert included is not None, f"{path}: no file for include {name!r}"
            includes[name] = included
        sources[str(path.relative_to(ROOT))] = (source, includes)
    sources["benchmarks/bench_compile.py:generate()"] = (_bench_source(), {})
    return sources


def _compile(name: str, source: str, includes: dict[str, str]) -> Template:
    return compile_source(source, name, now=NOW, includes=includes or None)


def _fingerprint(template: Template) -> dict[str, str]:
    """The revision, and the sha256 of the manifest's API JSON (timestamps fixed by NOW)."""
    text = json.dumps(template.to_api(), ensure_ascii=False, separators=(",", ":"))
    return {
        "revision": template.logic.revision,
        "manifest_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
    }


def _golden() -> dict[str, dict[str, Any]]:
    data: dict[str, dict[str, Any]] = json.loads(GOLDEN.read_text(encoding="utf-8"))
    return data


GOLDEN_ENTRIES = _golden()


@pytest.mark.parametrize("name", sorted(GOLDEN_ENTRIES))
def test_the_manifest_and_its_revision_are_byte_identical(name: str) -> None:
    entry = GOLDEN_ENTRIES[name]
    template = _compile(name, entry["source"], entry.get("includes", {}))
    assert _fingerprint(template) == {k: entry[k] for k in ("revision", "manifest_sha256")}
    # The revision is also what a manifest loaded back from its JSON hashes to.
    assert revision_of(Template.from_api(template.to_api())) == template.logic.revision


if __name__ == "__main__":
    golden = {}
    for name, (source, includes) in sorted(_live_sources().items()):
        golden[name] = {
            **_fingerprint(_compile(name, source, includes)),
            "source": source,
            **({"includes": includes} if includes else {}),
        }
    GOLDEN.write_text(json.dumps(golden, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(golden)} sources and fingerprints to {GOLDEN}")
