"""The report renderer interface: plain data in, PDF bytes out.

`ReportData` (`server.reports.data`) carries everything a report shows as plain Python data
(the inspection API object, the template manifest in its JSON form, the verdict explanation,
the company name and the image bytes), so a renderer needs no database and a different PDF
library can replace borb by implementing `ReportRenderer`. borb (AGPL) is imported only by
`server.reports.borb_renderer`, and only when a report is actually rendered: `default_renderer`
imports it then. The borb renderer imports the data module, not this one, so no cycle.
"""

from __future__ import annotations

import importlib.util
from typing import Protocol

from server.errors import ServerError
from server.reports.data import ReportData, ReportImage

__all__ = [
    "ReportData",
    "ReportImage",
    "ReportRenderer",
    "ReportsUnavailableError",
    "default_renderer",
    "reports_available",
]


class ReportRenderer(Protocol):
    """Turns `ReportData` into the bytes of a PDF document."""

    def render(self, report: ReportData) -> bytes: ...


class ReportsUnavailableError(ServerError, RuntimeError):
    """The PDF library (the `reports` extra, borb) is not installed."""

    code = "reports_unavailable"


def reports_available() -> bool:
    """True when borb can be imported (the `inspectlang[reports]` extra is installed)."""
    return importlib.util.find_spec("borb") is not None


def default_renderer() -> ReportRenderer:
    """The borb renderer; raise `ReportsUnavailableError` without the `reports` extra."""
    if not reports_available():
        raise ReportsUnavailableError(
            "PDF reports need the optional extra: pip install 'inspectlang[reports]'."
        )
    from server.reports.borb_renderer import BorbRenderer  # borb (optional) only to render

    return BorbRenderer()
