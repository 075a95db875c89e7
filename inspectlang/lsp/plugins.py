"""Diagnostic providers: what other packages add to the language server's diagnostics.

The language knows nothing of the runtime (the layers contract), yet an editor should show what
the runtime finds, such as a failing template test (`runtime.proofs.editor`). A package offers
a provider as an entry point of the group `inspectlang.diagnostics` (pyproject.toml):

    [project.entry-points."inspectlang.diagnostics"]
    template-tests = "runtime.proofs.editor:diagnostics"

A provider is `provider(path, source) -> list[Diagnostic]`: given a saved template's path and
its text, the diagnostics it finds, each naming its file in `filename` (the template, or a file
beside it such as `NAME.tests.json`). The server runs providers when a template is opened or
saved (they may read other files from disk and take longer than the checker), never on each
keystroke, and publishes their diagnostics under each file's URI. A provider that fails is
logged and skipped: the editor keeps the checker's diagnostics.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from functools import cache
from importlib.metadata import entry_points

from inspectlang.diagnostics import Diagnostic

#: The entry point group providers are declared in.
GROUP = "inspectlang.diagnostics"

Provider = Callable[[str, str], Sequence[Diagnostic]]

logger = logging.getLogger(__name__)


@cache
def providers() -> tuple[Provider, ...]:
    """The installed providers, loaded once; one that cannot be loaded is logged and left out."""
    found: list[Provider] = []
    for point in sorted(entry_points(group=GROUP), key=lambda p: p.name):
        try:
            loaded = point.load()
        except Exception:  # a broken plug-in must not stop the language server
            logger.exception("diagnostic provider %s could not be loaded", point.name)
            continue
        if callable(loaded):
            found.append(loaded)
    return tuple(found)


def provided(path: str, source: str) -> list[Diagnostic]:
    """Every provider's diagnostics for the template at `path` with text `source`."""
    found: list[Diagnostic] = []
    for provider in providers():
        try:
            found.extend(provider(path, source))
        except Exception:  # the editor keeps working whatever a plug-in does
            logger.exception("diagnostic provider %r failed on %s", provider, path)
    return found
