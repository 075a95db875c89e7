"""The report renderer interface: plain data in, PDF bytes out.

`ReportData` carries everything a report shows as plain Python data (the inspection API object,
the template manifest in its JSON form, the verdict explanation, the company name and the image
bytes), so a renderer needs no database and a different PDF library can replace borb by
implementing `ReportRenderer`. borb (AGPL) is imported only by `server.reports.borb_renderer`,
and only when a report is actually rendered.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class ReportImage:
    """One image record of the inspection with its bytes (None when the blob is gone)."""

    record: dict[str, Any]
    content: bytes | None = None
    #: "product", "identity" or "custom": where the image belongs.
    target: str = "product"


@dataclass(frozen=True)
class ReportData:
    """Everything one report shows."""

    inspection: dict[str, Any]
    template: dict[str, Any]
    explanation: dict[str, Any]
    company_name: str
    images: list[ReportImage] = field(default_factory=list)
    #: When the report was generated (ISO 8601, UTC).
    generated_at: str = ""
    report_request_id: str = ""


class ReportRenderer(Protocol):
    """Turns `ReportData` into the bytes of a PDF document."""

    def render(self, report: ReportData) -> bytes: ...


class ReportsUnavailableError(RuntimeError):
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
    from server.reports.borb_renderer import BorbRenderer

    return BorbRenderer()
