"""Publishing reads subscriptions from the database on every event (no cache across
processes): a subscription made just now gets the very next event, a disabled one none."""

from __future__ import annotations

from typing import Any

import httpx

from server.blobs import LocalBlobStore
from server.db import Database
from server.inspections import events
from server.tables import utcnow
from server.webhooks.tables import WebhookSubscriptionRecord

from .conftest import Receiver
from .inspections import insert_inspection


def _publish(db: Database, company_id: str, inspection_id: str) -> int:
    with db.session() as session:
        queued = events.publish(
            session,
            company_id=company_id,
            testing=True,
            event="inspection_completed",
            payload={"inspectionId": inspection_id},
        )
        session.commit()
    return queued


def test_new_subscription_gets_the_next_event_and_a_disabled_one_none(
    client: httpx.Client,
    db: Database,
    blobs: LocalBlobStore,
    company: dict[str, Any],
    headers: dict[str, str],
    receiver: Receiver,
) -> None:
    company_id = company["companyId"]
    inspection_id = insert_inspection(db, blobs, company_id)["inspectionId"]
    assert _publish(db, company_id, inspection_id) == 0  # no subscriptions yet

    def subscribe(event: str) -> str:
        response = client.post(
            "/v1/notification/webhook",
            json={"events": [event], "endpoint": receiver.url},
            headers=headers,
        )
        assert response.status_code in (200, 201), response.text
        return str(response.json()["_id"])

    first = subscribe("inspection_completed")
    assert _publish(db, company_id, inspection_id) == 1
    second = subscribe("inspection_completed")
    subscribe("inspection_created")  # another event: not counted
    assert _publish(db, company_id, inspection_id) == 2

    with db.session() as session:
        record = session.get(WebhookSubscriptionRecord, first)
        assert record is not None
        record.disabled_at = utcnow()
        session.add(record)
        session.commit()
    assert _publish(db, company_id, inspection_id) == 1
    with db.session() as session:
        record = session.get(WebhookSubscriptionRecord, second)
        assert record is not None
        record.disabled_at = utcnow()
        session.add(record)
        session.commit()
    assert _publish(db, company_id, inspection_id) == 0
