"""The magic link: who may open an inspection with its access code, and what a consumer reads.

`open_with_code` compares the SHA-256 of the code with the stored hash in constant time
(`hmac.compare_digest`), and does the same work for an unknown id (against a dummy hash), so
neither the answer nor its timing tells a wrong code from an unknown inspection. A consumer acts
through the same services as the API, as an `AuthContext` of the inspection's company and key
mode whose `scope` is `consumer:<inspectionId>`.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from inspectlang.manifest import Template
from runtime import InspectionState, Program
from runtime.api_view import Inspection
from server.auth import AuthContext
from server.common import not_found_inspection
from server.db import Database
from server.delivery import service as deliveries
from server.inspections import service
from server.inspections.tables import InspectionRecord
from server.settings import Settings
from server.tables import Company
from server.tokens import hash_token as code_hash

#: Compared against when the id is unknown, so that path costs the same as a wrong code.
_DUMMY_HASH = code_hash("no inspection has this code")
#: Longest code accepted (creation makes 32 characters); longer ones are simply wrong.
MAX_CODE_CHARS = 128


@dataclass(frozen=True, slots=True)
class LinkHolder:
    """Who opened a valid link: the consumer's identity for the services."""

    auth: AuthContext
    inspection_id: str
    created_at: datetime


def consumer_auth(company_id: str, testing: bool, inspection_id: str) -> AuthContext:
    """The consumer of one inspection, as the services' caller."""
    return AuthContext(
        company_id=company_id,
        mode="test" if testing else "live",
        key_id="consumer",
        scope=f"consumer:{inspection_id}",
    )


def open_with_code(db: Database, inspection_id: str, code: str | None) -> LinkHolder | None:
    """The link's holder when `code` is the inspection's access code; None otherwise (wrong
    code, unknown id, malformed input: one answer)."""
    candidate = code_hash(code) if code and len(code) <= MAX_CODE_CHARS else ""
    record = None
    if 0 < len(inspection_id) <= 24:
        with db.session() as session:
            record = session.get(InspectionRecord, inspection_id)
    stored = record.access_code_hash if record is not None else _DUMMY_HASH
    matches = hmac.compare_digest(candidate.encode(), stored.encode())
    if record is None or not matches or not candidate:
        return None
    return LinkHolder(
        auth=consumer_auth(record.company_id, record.testing, record.id),
        inspection_id=record.id,
        created_at=record.created_at,
    )


@dataclass(frozen=True, slots=True)
class ConsumerView:
    """What the consumer's pages show: the template, the state, the API's Inspection object."""

    manifest: Template
    program: Program
    state: InspectionState
    document: Inspection
    created_at: datetime
    company_name: str
    #: When the link that opened these pages stops working (None: never on its own).
    link_expires_at: datetime | None


def read_for_consumer(
    db: Database, settings: Settings, auth: AuthContext, inspection_id: str
) -> ConsumerView:
    """The inspection as its consumer sees it (404 `inspection_not_found` when not theirs)."""
    if auth.scope != f"consumer:{inspection_id}":
        raise not_found_inspection()
    with db.session() as session:
        record = service.find_inspection(session, auth, inspection_id, lock=False)
        loaded = service.load(session, record)
        company = session.get(Company, record.company_id)
        delivered = deliveries.latest(session, inspection_id)
    document = service.to_document(loaded.program, loaded.state, record, settings)
    hours = loaded.manifest.parameters.linkExpiresInHours
    if delivered is not None:  # a resend's link has its own window, counted from the resend
        link_expires_at = delivered.expires_at
    else:
        link_expires_at = record.created_at + timedelta(hours=hours) if hours else None
    return ConsumerView(
        manifest=loaded.manifest,
        program=loaded.program,
        state=loaded.state,
        document=cast(Inspection, document),  # the object just rendered
        created_at=record.created_at,
        company_name=company.name if company is not None else "",
        link_expires_at=link_expires_at,
    )


def link_expired(view: ConsumerView, now: datetime) -> bool:
    """Past the window of the link that was last sent: the template's `link expires after`
    from its delivery (creation or resend), or from creation when it was handed out."""
    return view.link_expires_at is not None and now >= view.link_expires_at
