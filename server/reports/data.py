"""What a report shows, as plain Python data: `ReportData` and its `ReportImage`s.

The inspection API object, the template manifest in its JSON form, the verdict explanation, the
company name and the image bytes, so a renderer needs no database. Both the renderer interface
(`renderer.py`) and the borb renderer import this module, and it imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the renderer imports this module: it starts nothing of the server's
    from runtime.api_view import Image, Inspection
    from server.web.history import Step


@dataclass(frozen=True)
class ReportImage:
    """One image record of the inspection with its bytes (None when the blob is gone)."""

    record: Image
    content: bytes | None = None
    #: "product", "identity" or "custom": where the image belongs.
    target: str = "product"
    #: For a photo a retake replaced (`record["replaced"]`): who asked for the retake and the
    #: message they wrote (the retake event's), so the report says why it was replaced.
    replaced_by: str = ""
    replaced_because: str = ""


@dataclass(frozen=True)
class ReportData:
    """Everything one report shows."""

    #: The Inspection object (`runtime.api_view`'s typed view).
    inspection: Inspection
    template: dict[str, Any]
    explanation: dict[str, Any]
    company_name: str
    images: list[ReportImage] = field(default_factory=list)
    #: When the report was generated (ISO 8601, UTC).
    generated_at: str = ""
    report_request_id: str = ""
    #: The member who asked for the inspection (`producer.userId`), by name or email.
    producer_name: str = ""
    #: The company's time zone (`Settings.time_zone`): the report's moments are shown in it.
    time_zone: str = "UTC"
    #: The inspection's history in the report's language (`server.web.history`).
    history: list[Step] = field(default_factory=list)
