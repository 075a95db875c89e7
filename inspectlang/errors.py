"""The base of every exception the inspectlang package defines.

`TemplateError` (a template that does not compile, with all its diagnostics) derives from it,
and so does every internal exception, so an embedder catches the language's failures with one
`except InspectlangError`. This module imports nothing, so any module of the package may use it.
"""

from __future__ import annotations


class InspectlangError(Exception):
    """The base of every exception of the inspectlang package."""
