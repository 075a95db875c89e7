"""The messages the dashboard sends by email link (invitations, password resets).

They go through the delivery's mail sending (`server.delivery`): over SMTP when
`INSPECTLANG_SMTP_URL` is set, else (development) into the same outbox the magic links use,
which `/dev/outbox` and `inspectlang outbox` show.
"""

from __future__ import annotations

import html
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from sqlmodel import col, select

from server.db import Database
from server.delivery.messages import Message
from server.delivery.providers.base import Outgoing, PermanentFailure, TransientFailure
from server.delivery.providers.smtp import Smtp
from server.delivery.tables import OutboxMessageRecord
from server.errors import ServerError
from server.settings import Settings

#: The outbox's `delivery_id` prefix of the dashboard's messages.
DASHBOARD_PREFIX = "dash"


@dataclass(frozen=True, slots=True)
class Mail:
    to: str
    subject: str
    text: str


class Sender(Protocol):
    def __call__(self, mail: Mail) -> None: ...


class MailNotSent(ServerError):
    """The mail server refused or could not be reached (the page says so; nothing is lost:
    the link can be asked for again)."""


def _message(mail: Mail) -> Message:
    page = f'<!doctype html><html lang="en"><body><pre>{html.escape(mail.text)}</pre></body></html>'
    return Message(locale="en_US", subject=mail.subject, text=mail.text, html=page, short=mail.text)


class SmtpMail:
    """Sends over SMTP with the delivery's provider (STARTTLS, smtps, the same sender)."""

    def __init__(self, settings: Settings) -> None:
        self.smtp = Smtp(settings)

    def __call__(self, mail: Mail) -> None:
        identifier = DASHBOARD_PREFIX + secrets.token_hex(10)
        outgoing = Outgoing(identifier, "email", mail.to, "", "", _message(mail))
        try:
            self.smtp.send(outgoing)
        except (TransientFailure, PermanentFailure) as error:
            raise MailNotSent(str(error)) from None


class DevelopmentOutbox:
    """Keeps each message in the delivery outbox (`outbox_messages`) instead of sending it."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def __call__(self, mail: Mail) -> None:
        message = _message(mail)
        with self.db.session() as session:
            session.add(
                OutboxMessageRecord(
                    delivery_id=DASHBOARD_PREFIX + secrets.token_hex(10),
                    channel="email",
                    to=mail.to,
                    subject=mail.subject,
                    text=mail.text,
                    html=message.html,
                    headers={},
                    created_at=datetime.now(UTC),
                )
            )
            session.commit()

    def messages(self, to: str | None = None) -> list[Mail]:
        """The dashboard's kept messages, oldest first, optionally only those sent to `to`."""
        statement = select(OutboxMessageRecord).where(
            col(OutboxMessageRecord.delivery_id).startswith(DASHBOARD_PREFIX)
        )
        if to is not None:
            statement = statement.where(col(OutboxMessageRecord.to) == to)
        with self.db.session() as session:
            rows = session.execute(statement.order_by(col(OutboxMessageRecord.id))).scalars()
            return [Mail(to=row.to, subject=row.subject, text=row.text) for row in rows]


def mail_sender(settings: Settings, db: Database) -> Sender:
    """SMTP when configured, else the development outbox."""
    return SmtpMail(settings) if settings.smtp_url else DevelopmentOutbox(db)
