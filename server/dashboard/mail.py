"""The messages the dashboard sends by email link (invitations, password resets).

They go through the delivery's mail sending (`server.delivery`): over SMTP when
`INSPECTLANG_SMTP_URL` is set, else (development) into the same outbox the magic links use,
which `/dev/outbox` and `inspectlang outbox` show.
"""

from __future__ import annotations

import html
import secrets
from dataclasses import dataclass
from typing import Protocol

from server.db import Database
from server.delivery.messages import Message
from server.delivery.providers.base import Outgoing, PermanentFailure, TransientFailure
from server.delivery.providers.outbox import Outbox
from server.delivery.providers.smtp import Smtp
from server.delivery.service import outbox_messages
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


class ProviderMail:
    """Sends through one of the delivery's providers: SMTP (STARTTLS, smtps, the same sender),
    or in development the outbox the magic links use."""

    def __init__(self, provider: Smtp | Outbox) -> None:
        self.provider = provider

    def __call__(self, mail: Mail) -> None:
        identifier = DASHBOARD_PREFIX + secrets.token_hex(10)
        outgoing = Outgoing(identifier, "email", mail.to, "", "", _message(mail))
        try:
            self.provider.send(outgoing)
        except (TransientFailure, PermanentFailure) as error:
            raise MailNotSent(str(error)) from None


def mail_sender(settings: Settings, db: Database) -> Sender:
    """SMTP when configured, else the development outbox."""
    return ProviderMail(Smtp(settings) if settings.smtp_url else Outbox(db))


def kept_mail(db: Database, to: str | None = None) -> list[Mail]:
    """The dashboard's messages the development outbox kept, oldest first (optionally only
    those sent to `to`)."""
    kept = outbox_messages(db, prefix=DASHBOARD_PREFIX, to=to, oldest_first=True)
    return [Mail(to=row.to, subject=row.subject, text=row.text) for row in kept]
