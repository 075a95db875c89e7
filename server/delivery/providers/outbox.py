"""The development outbox: with no provider configured (development only), messages are kept in
the database instead of sent; `inspectlang outbox` and `/dev/outbox` show them. Keeping a
message is idempotent per delivery, so a retried job keeps exactly one."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlmodel import Session, col, select

from server.db import Database
from server.delivery.providers.base import Outgoing
from server.delivery.tables import OutboxMessageRecord


class Outbox:
    name = "outbox"

    def __init__(self, db: Database) -> None:
        self.db = db

    def send(self, outgoing: Outgoing) -> str:
        with self.db.session(immediate=True) as session:
            found = _kept(session, outgoing.delivery_id)
            if found is not None:
                return found
            message, email = outgoing.message, outgoing.channel == "email"
            record = OutboxMessageRecord(
                delivery_id=outgoing.delivery_id,
                channel=outgoing.channel,
                to=outgoing.to,
                subject=message.subject,
                text=message.text if email else message.short,
                html=message.html if email else None,
                headers={"Message-ID": outgoing.message_id, "Content-Language": message.locale},
                created_at=datetime.now(UTC),
            )
            session.add(record)
            session.commit()
            return f"outbox-{record.id}"

    def find_sent(self, outgoing: Outgoing) -> str | None:
        with self.db.session() as session:
            return _kept(session, outgoing.delivery_id)


def _kept(session: Session, delivery_id: str) -> str | None:
    found = session.execute(
        select(OutboxMessageRecord.id).where(col(OutboxMessageRecord.delivery_id) == delivery_id)
    ).first()
    return None if found is None else f"outbox-{found[0]}"
