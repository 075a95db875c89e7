"""The built-in templates: the `.insp` files shipped in `inspectlang/builtins/`, compiled once.

Every company may use them, by id or by alias (`easy`, `deep`, `damage`): a creation request may
send `templateId: "deep"` for a car and the service maps it to the built-in template's id with
`get_builtin`. Their ids are fixed in the files and listed in `ALIAS_TABLE`, so the id a client
stored never changes; their timestamps are a constant, so a built-in manifest is the same in
every process and on every machine.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from importlib import resources

from inspectlang.compiler import compile_source
from inspectlang.manifest import ALIASES, Template

#: `createdAt` and `updatedAt` of every built-in template: the date this set was published. A
#: constant (not the compile time) so that every process serves byte-identical manifests.
BUILTIN_DATE = datetime(2024, 6, 1, tzinfo=UTC)
#: `BUILTIN_DATE` as the manifest writes it.
BUILTIN_TIMESTAMP = "2024-06-01T00:00:00.000Z"

#: alias -> inspection type -> id of the built-in template (the `id:` written in its file).
#: Mirrors `inspectlang.manifest.ALIASES`: `easy` for every type, `deep` for car and moto,
#: `damage` for car.
ALIAS_TABLE: dict[str, dict[str, str]] = {
    "easy": {
        "car": "5f0c0a000000000000000001",
        "moto": "5f0c0a000000000000000002",
        "bike": "5f0c0a000000000000000003",
        "machinery": "5f0c0a000000000000000004",
        "goods": "5f0c0a000000000000000005",
        "people": "5f0c0a000000000000000006",
        "custom": "5f0c0a000000000000000007",
        "cellphone": "5f0c0a000000000000000008",
    },
    "deep": {
        "car": "5f0c0a000000000000000009",
        "moto": "5f0c0a00000000000000000a",
    },
    "damage": {
        "car": "5f0c0a00000000000000000b",
    },
}

_lock = threading.Lock()
_templates: tuple[Template, ...] | None = None


def builtin_filename(alias: str, inspection_type: str) -> str:
    """The package data file of a built-in: `<type>_<alias>.insp`."""
    return f"{inspection_type}_{alias}.insp"


def builtin_source(alias: str, inspection_type: str) -> str:
    """The `.insp` text of a built-in template (for `inspectlang` docs, tests and decompiling)."""
    folder = resources.files("inspectlang").joinpath("builtins")
    return folder.joinpath(builtin_filename(alias, inspection_type)).read_text(encoding="utf-8")


def _compile_all() -> tuple[Template, ...]:
    compiled: list[Template] = []
    for alias, by_type in ALIAS_TABLE.items():
        for inspection_type in by_type:
            filename = builtin_filename(alias, inspection_type)
            compiled.append(
                compile_source(
                    builtin_source(alias, inspection_type),
                    f"builtins/{filename}",
                    template_kind="built-in",
                    now=BUILTIN_DATE,
                )
            )
    return tuple(compiled)


def builtin_templates() -> list[Template]:
    """Every built-in template, compiled on first use and cached for the life of the process.

    A built-in that does not compile raises `inspectlang.diagnostics.TemplateError`: that is a
    bug of this package, which its tests catch.
    """
    global _templates
    if _templates is None:
        with _lock:
            if _templates is None:
                _templates = _compile_all()
    return list(_templates)


def is_alias(value: str) -> bool:
    """Whether a creation request's `templateId` is an alias rather than an id."""
    return value in ALIASES


def get_builtin(alias: str, inspection_type: str) -> Template | None:
    """The built-in template an alias names for an inspection type, or None when the alias does
    not exist or is not available for that type (e.g. `damage` for a moto)."""
    template_id = ALIAS_TABLE.get(alias, {}).get(inspection_type)
    if template_id is None:
        return None
    return get_builtin_by_id(template_id)


def get_builtin_by_id(template_id: str) -> Template | None:
    """The built-in template with this `_id`, or None when it is not a built-in."""
    for template in builtin_templates():
        if template.id == template_id:
            return template
    return None
