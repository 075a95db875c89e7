"""Which validations a machine decides in this deployment, and what that means for a template.

A validation is decided by a machine here when this runtime validates it itself (`complete`,
`date`, `distance`), a local analyzer of `runtime.vision` runs it (the `vision` extra, on), an
outside provider is configured for it (`INSPECTLANG_VALIDATION_PROVIDERS`), or the company's
own service posts its results (`INSPECTLANG_POSTED_VALIDATIONS`). Every other validation is
routed to a person (`runtime.routing`): it never holds an inspection in `processing`, and when
it is required the finished inspection waits in `review`. The service says so at start-up,
in `GET /v1/capabilities`, and as warning `W900` when a template is saved (docs/review.md).

The analyzers are the app's own (`local_analyzers`, built once by `create_app` and held in its
`Services`, passed to the worker's analysis job): two apps in one process, one with vision on
and one off, each decide with theirs.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from inspectlang.manifest import VALIDATION_NAMES
from runtime.validators import REGISTRY
from server.settings import Settings

if TYPE_CHECKING:
    from runtime.vision import Analyzer

logger = logging.getLogger("server.routing")

#: The code of the save warning for a required validation that goes to a person here.
PERSON_ROUTED_WARNING = "W900"


#: An app's analyzers by validation name (`local_analyzers`).
Analyzers = Mapping[str, "Analyzer"]


def local_analyzers(settings: Settings) -> dict[str, Analyzer]:
    """New analyzers for an app with these settings (none when vision is off or not
    installed); `create_app` and the `worker` command build them once."""
    if not settings.vision:
        return {}
    from runtime import vision

    return vision.load_analyzers()


def analyzable(settings: Settings, analyzers: Analyzers) -> set[str]:
    """Validation names the worker can produce a result for."""
    return set(analyzers) | set(settings.validation_providers)


def machine_validations(settings: Settings, analyzers: Analyzers) -> frozenset[str]:
    """Validation names a machine decides in this deployment; every other goes to a person."""
    return frozenset(REGISTRY) | analyzable(settings, analyzers) | settings.posted_validations


def capabilities(settings: Settings, analyzers: Analyzers) -> dict[str, Any]:
    """`GET /v1/capabilities`: who decides each validation of the language here."""
    local = set(REGISTRY) | set(analyzers)
    providers = set(settings.validation_providers)
    posted = set(settings.posted_validations)
    routes: dict[str, str] = {}
    for name in sorted(set(VALIDATION_NAMES) | local | providers | posted):
        if name in providers:
            routes[name] = "provider"
        elif name in local:
            routes[name] = "local"
        elif name in posted:
            routes[name] = "api"
        else:
            routes[name] = "person"
    return {
        "validations": routes,
        "machine": sorted(name for name, route in routes.items() if route != "person"),
        "person": sorted(name for name, route in routes.items() if route == "person"),
    }


def log_capabilities(settings: Settings, analyzers: Analyzers) -> None:
    """The start-up line saying which validations wait for a person here."""
    found = capabilities(settings, analyzers)
    logger.info(
        "validations decided by a machine here: %s; by a person (status review): %s",
        ", ".join(found["machine"]) or "none",
        ", ".join(found["person"]) or "none",
    )


def person_routed_warnings(
    template: dict[str, Any], machine: frozenset[str]
) -> list[dict[str, Any]]:
    """One `W900` warning per required, run validation of a template (its API object) that no
    machine decides here: inspections from it wait for a person."""
    warnings = []
    for image in template.get("images") or []:
        for validation in image.get("validations") or []:
            name = validation.get("validation")
            if not validation.get("run", True) or not validation.get("required", True):
                continue
            if name in machine:
                continue
            identifier = image.get("side") or image.get("identifier")
            warnings.append(
                {
                    "code": PERSON_ROUTED_WARNING,
                    "severity": "warning",
                    "message": f"image {identifier}: `{name}` is required but no machine of "
                    "this deployment decides it; every inspection from this template will wait "
                    "for a person (status review). Make it optional, configure a provider "
                    "(docs/vision.md) or keep the review (docs/review.md).",
                    "image": identifier,
                    "validation": name,
                }
            )
    return warnings


def locate(source: str, warning: dict[str, Any]) -> dict[str, int]:
    """Where a `W900` warning points in the source: the `validate NAME` line of its image's
    block (`image SIDE`), else the image line, else line 1."""
    lines = source.splitlines()
    image_line = next(
        (
            number
            for number, text in enumerate(lines, start=1)
            if text.split()[:2] == ["image", str(warning.get("image"))]
        ),
        None,
    )
    if image_line is None:
        return {"line": 1, "column": 1}
    for number in range(image_line + 1, len(lines) + 1):
        text = lines[number - 1]
        if text.strip() and not text.startswith((" ", "\t")):
            break  # the next top-level block
        words = text.replace(",", " ").split()
        if words[:2] == ["validate", str(warning.get("validation"))]:
            column = len(text) - len(text.lstrip()) + 1
            return {"line": number, "column": column, "endLine": number, "endColumn": len(text) + 1}
    return {"line": image_line, "column": 1}
