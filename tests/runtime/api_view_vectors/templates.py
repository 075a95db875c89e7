"""The templates of the Inspection object vectors: a built-in, an example, or a source kept
here (`REVIEW_SOURCE`), named in each vector file's `template`."""

from __future__ import annotations

from typing import Any

from rt_support import ROOT

from inspectlang.builtins import get_builtin
from inspectlang.compiler import compile_source
from inspectlang.includes import DirectoryResolver
from runtime.program import Program, load_program

#: A car in two locales with a person in the loop: `recaptured` has no machine in a bare
#: install, so a finished inspection waits in review; labels and options in both locales.
REVIEW_SOURCE = """
template "Vectors car"
    type: car
    id: "65a1f0c2b3d4e5f6012345ac"
    locales: en_US, es_AR

settings
    max attempts: 1
    minimum confidence: 80
    photo age limit: 24 hours
    minimum photo size: 64 x 48

variable score: numeric = 100

product
    require plate

image front
    label: "Front"
    label es_AR: "Frente"
    validate recaptured
    validate complete
    validate plate, optional
    feature damage_declaration

image back
    validate complete

input use
    type: select
    label: "Use"
    label es_AR: "Uso"
    option private: "Private"
    option private es_AR: "Particular"
    option commercial: "Commercial"
    option commercial es_AR: "Comercial"

feature damage_declaration: on

on damage declared
    set score to score - 10

check live_photos
    name: "Live photos"
    description: "No recaptured photo"
    valid when: not any(i in images where i.recaptured.ran and not i.recaptured.valid)

verdict
    disapprove "A photo was taken from a screen" when not checks.live_photos
    approve when all(i in images where i.approved)
    otherwise "Some photos were not approved"
"""


def program_of(template: dict[str, Any]) -> Program:
    """`{"builtin": [alias, type]}`, `{"example": "NAME.insp"}` or `{"source": TEXT}`."""
    if "builtin" in template:
        alias, kind = template["builtin"]
        manifest = get_builtin(alias, kind)
        assert manifest is not None, template
        return load_program(manifest)
    if "example" in template:
        path = ROOT / "examples" / template["example"]
        source = path.read_text(encoding="utf-8")
        return load_program(
            compile_source(source, str(path), includes=DirectoryResolver(path.parent))
        )
    return load_program(compile_source(template["source"], "vectors.insp"))
