"""The verdict's explanation over the API (`GET /v1/inspection/:id/explanation` and
`?explain=true` on the Inspection GET): `runtime.explain`, the trace that `simulate` prints
and the PDF report shows. Each condition keeps its template span (`[line, column, end line,
end column]`) and gains `line`, the template line it is written on; each value seen does too."""

from __future__ import annotations

from typing import Any

import runtime
from server.auth import AuthContext
from server.db import Database
from server.inspections import service as inspections


def _with_line(item: dict[str, Any]) -> dict[str, Any]:
    span = item.get("span")
    if isinstance(span, list) and span:
        item["line"] = span[0]
    for seen in item.get("values") or ():
        if isinstance(seen, dict):
            _with_line(seen)
    return item


def plain_explanation(loaded: inspections.Loaded) -> dict[str, Any]:
    """The explanation of a loaded inspection as JSON-ready data."""
    explained = runtime.explain(loaded.program, loaded.state)
    document: dict[str, Any] = explained.model_dump(mode="json", by_alias=True)
    for key in ("verdict", "checks", "rules"):
        document[key] = [_with_line(item) for item in document.get(key) or []]
    return document


def explain_inspection(db: Database, auth: AuthContext, inspection_id: str) -> dict[str, Any]:
    """The explanation of the caller's inspection; 404 `inspection_not_found` otherwise."""
    with db.session() as session:
        record = inspections.find_inspection(session, auth, inspection_id, lock=False)
        loaded = inspections.load(session, record)
    return plain_explanation(loaded)
